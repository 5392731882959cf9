/*
 * lch_server.h - the per-user launcher: `cagerun launcher`, a process the
 * user (or an agent host) starts once, that starts each sandbox a client
 * (cage-launch) asks for in a fork of itself, so that no launch pays for
 * cagerun's exec and start-up. What it runs is what `cagerun ARGS...`
 * would run, with the client's descriptors 0 to 2, working directory,
 * environment, umask and resource limits; it refuses any client not
 * confined exactly as it is (lch_peer.h), and the client then starts
 * cagerun itself. docs/launcher.md.
 */
#ifndef CAGE_LCH_SERVER_H
#define CAGE_LCH_SERVER_H

#include <stdbool.h>
#include <stddef.h>

struct run_launcher_fns;

struct lch_opts {
	const char *socket; /* NULL: $XDG_RUNTIME_DIR/cage/launcher.sock */
	bool verbose;       /* a line per run, not only per refusal */
	/* What a request runs, in a fresh child: cagerun's own main, which
	 * tells hook the run's status before it cleans up; and the compile
	 * the launcher keeps for the request it ran last, which every spare
	 * forked after it inherits (run.h; `prepare` NULL: nothing). */
	const struct run_launcher_fns *fns;
};

/* Where the socket is: o_socket, or the default; false when there is no
 * default (no XDG_RUNTIME_DIR) or it does not fit. */
bool lch_socket_path(const char *o_socket, char *out, size_t len);
/* Serves until SIGINT or SIGTERM; the exit status (125 when it cannot
 * start, with the reason on stderr). */
int lch_serve(const struct lch_opts *o);

#endif
