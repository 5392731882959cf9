/*
 * lch_conn.h - one client, in the spare that accepted it: the checks of
 * lch_peer.h, the exchange of lch_proto.h up to ACCEPT, then the spare
 * becomes the client's process and runs cagerun's main. The launcher
 * hears of it through notes on the spare's socket pair (lch_wire.h):
 * when the request passed, with the client's connection, and when the
 * run sent its status.
 */
#ifndef CAGE_LCH_CONN_H
#define CAGE_LCH_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "lch_peer.h"
#include "lch_proto.h"
#include "lch_server.h"

/* What every spare inherits from the launcher, read once at its start. */
struct lch_ctx {
	const struct lch_opts *o;
	struct lch_self me;
	struct rlimit limits[LCH_NLIMITS]; /* the launcher's own, as its children inherit them */
	pid_t launcher;
	/* The compile the launcher keeps for the request it ran last
	 * (lch_kept), or NULL: a spare's run takes its own copy of it. */
	struct run_held *held;
};

struct run_ahead;
struct run_held;

/* The request a run just ran and the directory it ran in, as the run
 * hands them to the launcher (the request's bytes, then the directory
 * and its NUL), and the compile made for it in the launcher, which holds
 * pointers into both. */
struct lch_kept {
	uint8_t *bytes;
	size_t len;
	char **argv, **envp; /* into bytes */
	struct run_held *held;
};

/* In the launcher: takes `bytes` (malloc'd, len of them) into *k and
 * compiles the request (o->fns->prepare) in its directory; k->held is NULL
 * when it is malformed or nothing is to be kept. *k starts zeroed. */
void lch_kept_make(struct lch_kept *k, const struct lch_opts *o, uint8_t *bytes, size_t len);
void lch_kept_free(struct lch_kept *k, const struct lch_opts *o);

/* In a spare: conn was just accepted, chan is the spare's socket pair,
 * buf (bufsize bytes) takes the request, ahead and held are what the
 * spare has for the run (lch_ahead.h, lch_kept; NULL: nothing).
 * Does not return. */
_Noreturn void lch_conn_serve(const struct lch_ctx *cx, int conn, int chan, uint8_t *buf,
			      size_t bufsize, struct run_ahead *ahead, struct run_held *held);

/* True when the file this process runs was removed or replaced (an
 * upgrade): the kernel then names it "PATH (deleted)". */
bool lch_replaced(void);

#endif
