/*
 * held.h - a compile kept for a request expected later (docs/launcher.md,
 * "A compile kept ahead"): a launcher's spare compiles, while it waits,
 * the -p request its launcher ran last, and the run it becomes uses that
 * compile instead of its own when the request is the same and nothing
 * the compile read has changed since.
 *
 * The same means: the options before `--` byte for byte but --mode (the
 * command after `--` is not part of a -p compile, and --mode only picks
 * the mode in force afterwards, layers_set_mode), the whole environment, the
 * working directory (its path and its inode), and every file and path
 * the compile looked at on disk answering as it did (cage.h's
 * cage_inputs_unchanged), the private cache folder it was given among
 * them (resolved and checked again, and made again if it went). Only a
 * compile with no diagnostic at all is kept, so the run has nothing to
 * print that the kept one did not. Anything else compiles afresh.
 */
#ifndef CAGE_HELD_H
#define CAGE_HELD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "layers.h"

struct layers_held {
	struct layers L; /* the compile, for the request below */
	char *const *argv; /* argv[1..nopts] are the options it was for */
	int nopts;
	char *const *envp;
	char cwd[PATH_MAX];
	dev_t cwd_dev;
	ino_t cwd_ino;
};

/* The length of argv's options: up to and with the first "--", else all
 * but argv[0]. */
int held_nopts(int argc, char *const *argv);

/* Compiles rq (a -p request without --task or --show) into *h, which
 * keeps pointers to argv and envp: true when it is worth keeping (no
 * diagnostic, nothing refused). Run in the working directory and the
 * environment the request had; prints nothing itself, but the compile
 * writes its diagnostics to stderr, which the caller silences. */
bool held_make(struct layers_held *h, const struct layers_req *rq, int argc, char *const *argv,
	       char *const *envp, const char *cwd);

/* Moves the kept compile into *L when it fits this request, run in the
 * current directory with `envp`, with `mode` (this request's --mode, or
 * NULL) in force: true, with `n` the looks at the disk confirmed; false
 * with the reason in why, and *L untouched. */
bool held_take(struct layers_held *h, struct layers *L, int argc, char *const *argv,
	       char *const *envp, const char *mode, size_t *n, char *why, size_t whylen);

#endif
