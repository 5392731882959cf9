/*
 * lint.h - the policy checker behind `cagec lint` and `cagec explain`.
 *
 * Checks read the resolved IR (plus the source text for suppressions and
 * the import records for unused-import) and add findings to the policy's
 * diagnostic list, so they render exactly like compiler errors: gcc-style
 * text, a caret, a note at the second rule of two-rule findings, and the
 * import chain. Every finding has a stable id from lint_checks().
 */
#ifndef CAGE_LINT_H
#define CAGE_LINT_H

#include <stdbool.h>
#include <stdio.h>

#include "cage.h"
#include "policy.h"

/* Which backends' limits the checks consider (noncanonical-path,
 * unsupported-on-target). */
enum { LINT_T_MACOS = 1, LINT_T_LINUX = 2 };

/* A -W override: severity for an id, or off. */
struct lint_override {
	const char *id;
	bool off;
	enum diag_sev sev;
};

struct lint_opts {
	bool resolve;     /* ask the filesystem: symlink-escape, hardlink-alias */
	const char *root; /* with resolve: the tree to check ("" or NULL = /) */
	unsigned targets; /* LINT_T_* bits; 0 = the policy's own target */
	bool werror;      /* warnings become errors */
	const struct lint_override *ov;
	size_t nov;
	/* Where std/guard is loaded from for runs-later-writable (the
	 * policy's --stdlib); NULL: the default standard library. */
	const char *stdlib;
	/* Walk bounds for the filesystem checks. */
	size_t fs_max_entries;
};

struct lint_check {
	const char *id;
	enum diag_sev sev; /* default */
	const char *summary;
};

const struct lint_check *lint_checks(size_t *n);
const struct lint_check *lint_check_find(const char *id);
/* The check id closest to a misspelt `id` ("unsafe_order"), or NULL. */
const char *lint_check_near(const char *id, size_t len);

/* Parses "no-ID", "ID=error|warning|note|off" or "error" (= -Werror).
 * Returns false with the reason in err (with a "did you mean" for a
 * misspelt id) for unknown ids or forms. */
bool lint_parse_w(const char *arg, struct lint_override *out, bool *werror, char *err,
		  size_t errsz);

/* Runs every check on a loaded policy (which must have no front-end
 * errors), then applies suppressions and overrides. Findings land in
 * pol->diags, sorted. */
void lint_policy(struct cage_policy *pol, const struct lint_opts *o);

/* Output of several linted policies. */
void lint_write_json(FILE *out, struct cage_policy *const *pols, size_t n);
void lint_write_sarif(FILE *out, struct cage_policy *const *pols, size_t n);

/* `cagec explain`: prints the verdict for one access, the deciding rule
 * with its location and the earlier matching rules it overrode.
 * `access` is a keyword (read, write, exec, connect, ...); `target` a path
 * ("~/..." allowed) or host[:port]. Returns false with *err on bad input. */
bool lint_explain(FILE *out, struct cage_policy *pol, const char *access, const char *target,
		  bool *allowed, const char **err);

/* `cagec explain FILE rename|link SRC DST`: the rename/link rule of
 * ir_eval_move, with each part's deciding rule. */
bool lint_explain_move(FILE *out, struct cage_policy *pol, const char *op, const char *src,
		       const char *dst, bool *allowed, const char **err);

/* The subcommands, for cagec_main.c. Exit codes as cagec's. */
int lint_main(int argc, char **argv);
int explain_main(int argc, char **argv);

#endif
