/*
 * shims.h - version managers' shims, resolved for the command layer
 * (cmdres.h) to the program the manager would run, without running the
 * manager or anything else: asdf (a script `asdf exec NAME`), mise (a
 * link to the mise binary) and volta (a link to volta-shim).
 *
 * Each manager is followed from its own documented files, the way it
 * reads them at run time (docs/cagerun.md, "Version managers"): the
 * version from its environment variable, else its project files searched
 * upward from the current directory, else its user default; the program
 * in the install tree of that version. The result says what was chosen
 * and why, and which directories the manager itself would put first on
 * PATH for the program's children.
 */
#ifndef CAGE_SHIMS_H
#define CAGE_SHIMS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "shimcfg.h"

enum shim_kind { SHIM_NONE, SHIM_ASDF, SHIM_MISE, SHIM_VOLTA };
enum { SHIM_MAX_TREES = 3 };

struct shim_res {
	const char *manager;                 /* "asdf", "mise", "volta" */
	char tool[SHC_NAME], version[SHC_NAME + 16];
	char from[2 * PATH_MAX];          /* "FILE:LINE", an environment variable, ... */
	char program[PATH_MAX];              /* what the shim would exec */
	char tree[SHIM_MAX_TREES][PATH_MAX]; /* install trees it runs from */
	const char *tree_why[SHIM_MAX_TREES];
	size_t ntrees;
	char bin[SHIM_MAX_TREES][PATH_MAX];  /* put first on PATH, in order */
	size_t nbins;
};

/* Which shim `real` (a real path whose first bytes are `head`) is, when
 * it was found as `name` and COMMAND was `cmd`; SHIM_NONE for anything
 * else, the manager run by its own name included. */
enum shim_kind shim_detect(const char *real, const char *head, const char *name);

/* Resolves the shim found at `path` (its name is the program's) from the
 * current directory `cwd`. false: err names the file and the line to add
 * or the command to run. */
bool shim_resolve(enum shim_kind k, const char *path, const char *cwd, struct shim_res *out,
		  char *err, size_t errlen);

const char *shim_kind_name(enum shim_kind k);

#endif
