/*
 * lch_spare.h - the launcher's spares: children forked before any client
 * comes, which fault in the memory a run touches first and then wait on
 * the listening socket for one client. The spare that accepts a client
 * checks it, takes its request and becomes its run (lch_conn.h), so a
 * launch waits neither for a fork nor for the first touch of about a
 * megabyte of heap, stack and program, nor for the launcher itself,
 * which only forks spares, relays signals and reaps (docs/launcher.md,
 * "Spares").
 *
 * A spare holds nothing of any client but its own: right after the fork
 * it leaves the launcher's session (so its terminal's signals do not
 * reach it), unblocks every signal (so none waits for a later run) and
 * closes every descriptor but 0 to 2, its socket pair and the listening
 * socket. It stays in the cgroup it was forked in, and so checks a
 * client against that one (lch_peer_check reads its own).
 */
#ifndef CAGE_LCH_SPARE_H
#define CAGE_LCH_SPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct lch_ctx;
struct lch_nsset;

struct lch_spare {
	pid_t pid; /* 0: none */
	int pidfd;
	int chan; /* the launcher's end of the spare's socket pair (lch_wire.h's notes) */
};

void lch_spare_init(struct lch_spare *sp);
/* Forks a spare into the empty *sp, waiting on listen_fd; bufsize is the
 * largest request it takes; *set (closed here) is a namespace set no
 * sandbox used, for the spare to take instead of making its own
 * (lch_ahead.h), or all -1. False (and *sp empty) when it cannot. */
bool lch_spare_start(struct lch_spare *sp, const struct lch_ctx *cx, int listen_fd,
		     size_t bufsize, struct lch_nsset *set);
/* Ends a spare (or a run) that is still there, reaps it, and forgets it. */
void lch_spare_end(struct lch_spare *sp);
/* Forgets one already reaped: closes its pidfd and pair. */
void lch_spare_forget(struct lch_spare *sp);

#endif
