/*
 * kept.h - a compile kept on disk (docs/cagerun.md, "A compile kept on
 * disk"): a request compiled once is written to the kept plans' folder,
 * and a later run of the same request takes it instead of compiling,
 * after asking the disk again everything the compile looked at. It is
 * the launcher's kept compile (held.h), made to last between processes,
 * with the same notion of "the same request": the compile options as
 * parsed (cage_options_key), the whole environment, the working
 * directory (its path and its inode), the user, and the program (its
 * build ID, since another build may compile the same files differently,
 * and its path, which the standard library's default folder depends on);
 * for `-p POLICY`, the policy path as given; without -p, what the layers'
 * discovery found (layers_discover: the layers in order, the command
 * layer's text, the project's root, the config folder) and the command's
 * name, a project layer among them only while it is approved. Only a
 * compile with no diagnostic is kept; --task and --show always compile.
 * --mode is applied again.
 */
#ifndef CAGE_KEPT_H
#define CAGE_KEPT_H

#include <stdbool.h>
#include <stddef.h>

#include "layers.h"

/* Where kept files are read and written: the platform's (run.h). */
struct kept_io {
	/* The bytes of `name` (malloc'd): false when absent (why "") or
	 * refused (why says why). */
	bool (*read)(const char *name, unsigned char **out, size_t *n, char *why, size_t whylen);
	bool (*write)(const char *name, const unsigned char *b, size_t n);
};

struct kept {
	bool on;                 /* the request is one a kept compile may serve */
	bool layered;            /* it has no -p: its layers were discovered */
	bool absent;             /* kept_take found no file for it */
	unsigned char key[16];   /* XXH3-128 of the request */
	char name[40];           /* its file: 32 hex digits and ".cmp" */
};

/* The requests that found nothing kept, latest first: a compile is kept
 * from a request's second run on, so that a caller whose environment
 * differs on every call does not write a file per call that no run will
 * take. One small file beside the kept compiles ("recent"). */
enum { KEPT_RECENT = 16, KEPT_RECENT_BYTES = 8 + 4 + 16 * KEPT_RECENT };
struct kept_recent {
	unsigned char b[KEPT_RECENT_BYTES]; /* the file to write, k's key first */
	size_t n;
};

/* Whether rq, run now in the current directory with envp by the program
 * whose identity is bid (run_program_id), may be served by a kept
 * compile, and its key. Called before any compile (a compile adds to
 * rq->copts); without -p, after layers_discover found L's layers. */
bool kept_prepare(struct kept *k, const struct layers_req *rq, const struct layers *L,
		  char *const *envp, const unsigned char *bid, size_t nbid);

/* The kept compile into *L when there is one for k and all it looked at
 * answers as it did: true, with `looks` the questions asked. Otherwise
 * false with the reason in why ("" when none is kept), and L as it came:
 * zeroed for -p, the discovered layers without -p. With `later`, the
 * looks at the disk and the project layers' approval are left to
 * kept_confirm (looks 0), which must pass before the compile decides
 * anything outside cagerun (docs/cagerun.md, "A compile kept on disk"). */
bool kept_take(struct kept *k, const struct kept_io *io, struct layers *L,
	       const struct layers_req *rq, bool later, size_t *looks, char *why, size_t whylen);
/* What kept_take(later) left: everything the compile in L looked at
 * answers as it did, and each project layer is still approved. */
bool kept_confirm(const struct layers *L, size_t *looks, char *why, size_t whylen);

/* For a request that found nothing kept (k->absent): whether it was among
 * the recent ones, and the list with it first into *r, to write later
 * (kept_recent_write). */
bool kept_seen(const struct kept *k, const struct kept_io *io, struct kept_recent *r);
void kept_recent_write(const struct kept_io *io, const struct kept_recent *r);

/* The file that keeps L, just compiled for k's request, into *out
 * (malloc'd): false when it may not be kept (a diagnostic, a project
 * layer not approved, a command layer in a directory of the run's own)
 * or on OOM. Made before anything adds to L's policy (git
 * discovery does, for its run); written later, off the launch's path. */
bool kept_pack(const struct kept *k, const struct layers *L, unsigned char **out, size_t *n);
/* Writes what kept_pack made; nothing is said either way. */
void kept_write(const struct kept *k, const struct kept_io *io, const unsigned char *b, size_t n);

#endif
