/*
 * held.h - a compile kept for a request expected later (docs/launcher.md,
 * "A compile kept ahead"): a launcher's spare compiles, while it waits,
 * the -p request its launcher ran last, and the run it becomes uses that
 * compile instead of its own when the request is the same and nothing
 * the compile read has changed since.
 *
 * The same means: what the compile was asked, as parsed (the same policy
 * path, the same compile options, cage.h's cage_options_same: -D, -I,
 * --stdlib, --home, --profile, target; neither --task nor --show), the
 * whole environment, the working directory (its path and its inode), and
 * every file and path the compile looked at on disk answering as it did
 * (cage_inputs_unchanged), the private cache folder it was given among
 * them (resolved and checked again, and made again if it went). --mode
 * is not part of it: it picks the mode in force after the compile
 * (layers_set_mode), and is applied again. Only a compile with no
 * diagnostic at all is kept, so the run has nothing to print that the
 * kept one did not. Anything else compiles afresh.
 */
#ifndef CAGE_HELD_H
#define CAGE_HELD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "layers.h"

struct layers_held {
	struct layers L;          /* the compile, for the request below */
	const char *policy;       /* its -p */
	const cage_options *opts; /* its compile options as parsed (not the ones the compile
	                             added the cache folder to) */
	char *const *envp;
	char cwd[PATH_MAX];
	dev_t cwd_dev;
	ino_t cwd_ino;
};

/* Whether rq's compile may be kept for a later run, here or on disk
 * (kept.h): a -p request without --task or --show. */
bool held_request_ok(const struct layers_req *rq);

/* Whether the compile in L, kept for a request like this one, still
 * holds: everything it looked at on disk answers as it did (`looks` the
 * questions asked), its private cache folder resolves to the same path
 * (made again if it went), and this request's --mode applies to it (then
 * set in L). False with the reason in why; L's policy is left as it was
 * but for the mode. */
bool held_still(struct layers *L, const char *mode, size_t *looks, char *why, size_t whylen);
/* held_still in two: everything L's compile looked at on disk answers as
 * it did; and the cache folder and the mode. */
bool held_inputs_still(const struct layers *L, size_t *looks, char *why, size_t whylen);
bool held_setup_still(struct layers *L, const char *mode, char *why, size_t whylen);

/* Compiles rq (a -p request without --task or --show) into *h, which
 * keeps pointers to `opts` (rq's options as parsed, which rq->copts may
 * not stay: the compile adds to them) and envp: true when it is worth
 * keeping (no diagnostic, nothing refused). Run in the working directory
 * and the environment the request had; prints nothing itself, but the
 * compile writes its diagnostics to stderr, which the caller silences. */
bool held_make(struct layers_held *h, const struct layers_req *rq, const cage_options *opts,
	       char *const *envp, const char *cwd);

/* Moves the kept compile into *L when it fits rq (this run's request, run
 * in the current directory with `envp`): true, with `n` the looks at the
 * disk confirmed; false with the reason in why, and *L untouched. */
bool held_take(struct layers_held *h, struct layers *L, const struct layers_req *rq,
	       char *const *envp, size_t *n, char *why, size_t whylen);

#endif
