/*
 * gs.h - git discovery at launch: the git directories and the paths git's
 * configuration points at that lie in a tree the session may write, found
 * before the plan is built and added to the selected profile as protect
 * rules (docs/security-model.md, "git discovered at launch").
 *
 * One source for what a git directory allows: the protect rules the policy
 * itself has under `{workspace}/.git` (std/guard's git section). Each git
 * directory found gets those rules re-rooted onto it, target and except
 * patterns alike. A policy without such rules gets no discovery at all
 * (`-p` runs it as written). Paths the configuration names get a plain
 * `protect write`. Nothing found here ever removes or weakens a rule.
 *
 * The rules point at a synthetic source file, "<discovered>", whose text
 * is the rules as a person would write them, one per line with the reason
 * beside it: explain, --show and the plan's messages name them by line.
 */
#ifndef CAGE_GS_H
#define CAGE_GS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cage.h"
#include "ir.h"

enum {
	GS_SCAN_DEPTH = 6,        /* directory levels below the workspace */
	GS_SCAN_ENTRIES = 20000,  /* directory entries read by the scan */
	GS_SCAN_MS = 2000,        /* and its time, on a slow filesystem */
	GS_MAX_REPOS = 64,        /* git directories taken */
	GS_MAX_WORKTREES = 64,    /* linked worktrees per repository */
	GS_MAX_MODULES = 256,     /* directories looked at under .git/modules */
};

enum gs_kind {
	GS_GITDIR,   /* a git directory: the re-rooted allowlist */
	GS_GITFILE,  /* a `.git` file (gitdir: pointer): protected whole */
	GS_CONFIG,   /* a path the configuration names: protect write */
};

struct gs_item {
	enum gs_kind kind;
	char *path;    /* absolute, normalised */
	bool subtree;  /* GS_CONFIG: the directory and all below it */
	char *why;     /* for --show and the synthetic source */
};

struct arena;

/* Where the discovery's walk of the workspace, and what it found, are
 * kept between launches (gs_keep.h): the launcher's protected cache.
 * Bytes in `a`. */
struct gs_keep {
	void *ctx;
	/* The bytes kept as `name`, or false when there are none usable. */
	bool (*load)(void *ctx, struct arena *a, const char *name, const uint8_t **b, size_t *n);
	void (*store)(void *ctx, const char *name, const uint8_t *b, size_t n);
	/* Also keep what a discovery found, for gs_assume: only where a
	 * launch will assume it (each record kept is a file written). */
	bool found;
};

struct gs_result {
	bool active;      /* the policy has a git section to extend */
	char *workspace;
	struct gs_item *v;
	size_t n;
	size_t scanned;   /* directory entries the scan read */
	bool truncated;   /* the scan stopped at a bound */
	/* With a gs_keep: whether the kept walk was reused, the walk kept,
	 * or why not, for --verbose; else NULL. */
	const char *walk_note;
	size_t nrules;    /* rules added to the profile */
};

/* Finds, and adds the rules to pol's selected profile (pins rebuilt).
 * False with a message in err when a configuration file cannot be read
 * as git would read it, or a path cannot be named: the caller refuses
 * the run (fail closed). */
bool gs_extend(cage_policy *pol, struct gs_result *res, const struct gs_keep *keep, char *err,
	       size_t errlen);

/*
 * Discovery assumed, then confirmed (docs/security-model.md, "git
 * discovered at launch"): gs_assume adds the rules of what the last
 * discovery with the same inputs found, kept by gs_extend through the
 * keep as a record of its own, without looking at the disk; gs_confirm
 * then looks, as gs_extend would, and says whether it finds the same.
 * The record is only a guess: whatever it holds, a run whose command
 * starts has the rules the disk gives at its launch, because the caller
 * starts nothing before gs_confirm said GS_SAME or, having found
 * otherwise, put the rules found in place of the ones assumed.
 */
struct gs_ctx;
struct gs_assumed {
	bool on;                 /* rules assumed, not yet confirmed */
	struct gs_result res;    /* what was assumed */
	struct gs_ctx *ctx;      /* what discovery takes from the policy (arena) */
	struct ir_rule *rules;   /* the profile's rules before the assumed ones */
	size_t nrules;
};

/* Adds the rules the kept record gives for these inputs, and keeps what
 * gs_confirm needs in as. False, with nothing changed, when there is no
 * usable record (none, another workspace or other inputs, malformed) or
 * the policy has no git section: the caller runs gs_extend. */
bool gs_assume(cage_policy *pol, struct gs_assumed *as, const struct gs_keep *keep);

enum gs_confirmed {
	GS_SAME,     /* the disk gives what was assumed */
	GS_CHANGED,  /* it gives something else, now the profile's rules instead */
	GS_FAILED,   /* it cannot be read as gs_extend requires: err, as gs_extend's */
};

/* Looks at the disk as gs_extend does (with keep, which may store the
 * record anew), into now (freed by the caller). as->on is false after. */
enum gs_confirmed gs_confirm(cage_policy *pol, struct gs_assumed *as, const struct gs_keep *keep,
			     struct gs_result *now, char *err, size_t errlen);

/* The "discovered:" section of --show. */
void gs_print(const struct gs_result *res, FILE *out);

void gs_result_free(struct gs_result *res);

#endif
