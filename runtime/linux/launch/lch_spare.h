/*
 * lch_spare.h - the launcher's spares: children forked before any request
 * comes, which fault in the memory a run touches first and then wait for
 * one request on a channel of their own. A launch handed to a spare does
 * not wait for the fork, nor for the first touch of about a megabyte of
 * heap, stack and program (docs/launcher.md, "Spares").
 *
 * A spare holds nothing of any client before it is handed one: right
 * after the fork it leaves the launcher's session (so its terminal's
 * signals do not reach it), unblocks every signal (so none waits for a
 * later run) and closes every descriptor but 0 to 2 and its channel.
 * What it is handed is what a child forked for the request would have:
 * the request as the launcher checked it, and the client's descriptors.
 */
#ifndef CAGE_LCH_SPARE_H
#define CAGE_LCH_SPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lch_peer.h"

/* The descriptors a spare is handed: the client's 0, 1, 2 and cwd, its
 * connection, and the pipe on which the run says it sent its status. */
#define LCH_SPARE_NFDS 6

struct lch_spare {
	pid_t pid; /* 0: no spare here */
	int pidfd;
	int chan; /* the launcher's end */
	/* The launcher's when the spare was forked: a spare stays in it. */
	struct lch_cgroup cg;
};

/* What a spare does with its request (n bytes in req, descriptors in
 * fds); it does not return. ctx is the spare's copy of what the launcher
 * passed to lch_spare_start. */
typedef void (*lch_spare_run_fn)(void *ctx, uint8_t *req, size_t n,
				 const int fds[LCH_SPARE_NFDS]);

void lch_spare_init(struct lch_spare *sp);
/* Forks a spare into the empty *sp; false (and *sp empty) when it cannot.
 * bufsize is the largest request it will be handed. */
bool lch_spare_start(struct lch_spare *sp, size_t bufsize, lch_spare_run_fn run, void *ctx);
/* Hands the request to the spare. True: it is the run's process now, and
 * its pid and pidfd are the caller's (*sp is empty). False: the spare is
 * gone or could not take it, and has been ended. */
bool lch_spare_give(struct lch_spare *sp, const uint8_t *req, size_t n,
		    const int fds[LCH_SPARE_NFDS], pid_t *pid, int *pidfd);
/* Ends an unused spare and reaps it. */
void lch_spare_end(struct lch_spare *sp);

#endif
