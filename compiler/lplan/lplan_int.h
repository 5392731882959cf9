/*
 * lplan_int.h - internals shared by the Linux plan's files: the resolved
 * rule list and message helpers. Internal to libcage.
 */
#ifndef CAGE_LPLAN_INT_H
#define CAGE_LPLAN_INT_H

#include "lplan.h"

/* Entries a glob may visit while it is expanded. */
#define LPLAN_GLOB_BUDGET 20000

/* The profile's path rules as the kernel will see them (resolved, globs
 * expanded), in the profile's order; orig[i] is what the user wrote. */
struct lplan_rules {
	struct ir_rule *rules;
	const struct ir_rule **orig;
	size_t n, cap;
};

/* Physical resolution (lplan_realpath.c): the longest prefix that exists
 * becomes its physical path, the rest stays as written; /proc is left
 * alone. One cache per plan build remembers every prefix looked at. */
struct lplan_rcache;
struct lplan_rcache *lplan_rcache_new(struct arena *a);
const char *lplan_resolve_cached(struct lplan_rcache *c, const char *path);
const char *lplan_resolve_path(struct arena *a, const char *path);
void lplan_rules_add(struct arena *a, struct lplan_rules *v, const struct ir_rule *orig,
		     const char *path, bool subtree);
bool lplan_resolve_rules(struct arena *a, const struct ir_profile *p, struct lplan_rules *out,
			 struct lplan *plan);

/* A pattern with the directories before its first glob resolved through
 * symlinks, like the nodes of the plan (lplan_guard.c). */
const char *lplan_resolve_pattern(struct arena *a, struct lplan_rcache *rc,
				  const struct ir_path *pp);

/* A protect with excepts (lplan_except.c). _resolve gives `res` the
 * excepts of `orig` resolved as its target is. _expand adds to `out` the
 * plain protects of the existing entries of r's tree that r holds (a
 * bounded walk that stays out of excepted subtrees) and writes r with
 * its target and excepts resolved to *full; false when the tree is too
 * big to walk. */
void lplan_except_resolve(struct arena *a, struct lplan_rcache *rc, const struct ir_rule *orig,
			  struct ir_rule *res);
bool lplan_except_expand(struct arena *a, struct lplan_rcache *rc, const struct ir_rule *r,
			 struct lplan_rules *out, struct ir_rule *full);

/* The directory holding `path` ("/" for a top-level name). */
char *lplan_parent_dir(struct arena *a, const char *path);
/* True when `anc` is `path` or a directory above it. */
bool lplan_at_or_above(const char *anc, const char *path);

/* The path `access` acts on, resolved as the kernel resolves it (the last
 * component not followed for create and delete). */
const char *lplan_query_path(struct arena *a, uint32_t access, const char *path);
/* lplan_query for a path already resolved that exists (is_dir) or not. */
bool lplan_answer_at(struct arena *a, const struct lplan *plan, uint32_t access, const char *rp,
		     bool exists, bool is_dir, struct lplan_answer *ans);

/* The guard profile (plan->gprof) and the guards of glob rules. */
void lplan_guard_prepare(struct arena *a, const struct ir_profile *p, struct lplan *plan);
void lplan_guard_add(struct arena *a, struct lplan *plan, const char *pattern,
		     const struct ir_rule *rule);
void lplan_guard_globs(struct arena *a, const struct ir_profile *p, struct lplan *plan,
		       bool (*can_create)(const struct lplan *, const char *));

void lplan_error(struct arena *a, struct lplan *plan, const struct ir_rule *r, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));
void lplan_note(struct arena *a, struct lplan *plan, const struct ir_rule *r, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));

#endif
