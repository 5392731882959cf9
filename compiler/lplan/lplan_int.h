/*
 * lplan_int.h - internals shared by the Linux plan's files: the resolved
 * rule list and message helpers. Internal to libcage.
 */
#ifndef CAGE_LPLAN_INT_H
#define CAGE_LPLAN_INT_H

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "lplan.h"
#include "pf.h"

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

/* The build's looks at the disk (lplan_deps.c): the calls they stand
 * for, recorded as the plan's dependencies in the build's cache. */
struct lplan_deps;
struct lplan_deps *lplan_deps_new(struct arena *a);
struct lplan_deps *lplan_rcache_deps(const struct lplan_rcache *c);
int lplan_lstat(struct lplan_rcache *c, const char *path, struct stat *st);
int lplan_stat(struct lplan_rcache *c, const char *path, struct stat *st);
ssize_t lplan_readlink(struct lplan_rcache *c, const char *path, char *buf, size_t size);
/* The entries of the directory at path, read whole and sorted (at most
 * PF_LIST_MAX, more than any caller's budget), recorded as a listing
 * (with the entries when there are at most PF_LIST_KEEP); NULL with
 * errno when it cannot be read. */
const struct pf_listing *lplan_list(struct lplan_rcache *c, const char *path);
/* What the build's lstat found at `path` when it resolved to itself: true
 * with *exists and *mode (st_mode), false when the cache cannot say. */
bool lplan_rcache_known(struct lplan_rcache *c, const char *path, bool *exists, unsigned *mode);
void lplan_rules_add(struct arena *a, struct lplan_rules *v, const struct ir_rule *orig,
		     const char *path, bool subtree);
bool lplan_resolve_rules(struct arena *a, const struct ir_profile *p, struct lplan_rules *out,
			 struct lplan *plan);

/* Whether some path strictly below the path tc[0..m) (from ti on) can
 * match the pattern components pc[pi..n) (lplan_guard.c). */
struct path_comp;
bool lplan_strictly_above(const struct path_comp *pc, size_t pi, size_t n,
			  const struct path_comp *tc, size_t ti, size_t m, unsigned depth);

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

/* Candidate rules (lplan_cand.c). A rule's anchor is the path it names,
 * a subtree's root, or the directory before a glob's first wildcard:
 * every path it matches is at or below it. */
struct lplan_cand {
	uint32_t *v; /* indices into the profile's rules, ascending */
	size_t n;
};
/* Each path rule's anchor, computed once per build or check; all: every
 * path rule. */
struct lplan_anchors {
	const struct ir_profile *p;
	const char **anchor; /* NULL for a rule that is not about paths */
	size_t *alen;
	struct lplan_cand all;
	uint32_t *scratch;
};
const char *lplan_anchor(struct arena *a, const struct ir_path *pp);
/* The anchor's length in pp->text; 0 for the root. */
size_t lplan_anchor_len(const struct ir_path *pp);
/* Whether `path` is at or below pp's anchor: false means pp cannot match
 * it, so the full match need not be tried. */
bool lplan_may_match(const struct ir_path *pp, const char *path);
void lplan_anchors_init(struct arena *a, const struct ir_profile *p, struct lplan_anchors *an);
/* The rules of `from` whose anchor is in line with `dir` (the same, above
 * or below), in from's order: all the rules that can match `dir` or a
 * path below it, when `from` held all those for a directory above it. */
void lplan_cand_filter(struct arena *a, const struct lplan_anchors *an,
		       const struct lplan_cand *from, const char *dir, struct lplan_cand *to);

/* dir + "/" + name[0..n), where dir "/" adds no second slash. */
char *lplan_join(struct arena *a, const char *dir, const char *name, size_t n);
/* The directory holding `path` ("/" for a top-level name). */
char *lplan_parent_dir(struct arena *a, const char *path);
/* True when `anc` is `path` or a directory above it. */
bool lplan_at_or_above(const char *anc, const char *path);

/* Sets each node's parent, its nearest ancestor node (nodes sorted). */
void lplan_link_parents(struct arena *a, struct lplan *plan);

/* Indexes plan->nodes by path (plan->node_slots), after the last change
 * to the set of nodes. */
void lplan_index_nodes(struct arena *a, struct lplan *plan);
/* The node at exactly path[0..len), or NULL. */
const struct lplan_node *lplan_node_at(const struct lplan *plan, const char *path, size_t len);

/* The path `access` acts on, resolved as the kernel resolves it (the last
 * component not followed for create and delete). */
const char *lplan_query_path(struct arena *a, uint32_t access, const char *path);
/* lplan_query for a path already resolved that exists (is_dir) or not. */
bool lplan_answer_at(struct arena *a, const struct lplan *plan, uint32_t access, const char *rp,
		     bool exists, bool is_dir, struct lplan_answer *ans);

/* lplan_answer_at for every access in `bits` (IR_A_FILE bits) at once:
 * out[k] answers the access 1u << k. */
void lplan_answer_bits(struct arena *a, const struct lplan *plan, uint32_t bits, const char *rp,
		       bool exists, bool is_dir, struct lplan_answer out[6]);

/* What the policy says about a name made later, one access: the patterns'
 * verdict g (plan->gprof, globs kept, as the create guard asks) where a
 * rule decides it, else the expanded rules' r (a glob matched through a
 * symlink names its target only there). */
static inline const struct ir_verdict *lplan_later_pick(const struct ir_verdict *g,
							const struct ir_verdict *r)
{
	return g->rule ? g : r;
}

/* The guard profile (plan->gprof) and the guards of glob rules. */
void lplan_guard_prepare(struct arena *a, const struct ir_profile *p, struct lplan *plan);
void lplan_guard_add(struct arena *a, struct lplan *plan, const char *pattern,
		     const struct ir_rule *rule);
/* `region` gives the Landlock rights in effect at a path (grants less
 * what mounts take away). A glob that denies creating its later matches
 * where the command could create them is a guard; one that lets them be
 * created but denies something else about them that Landlock would allow
 * there is an error (a new file gets its directory's rights). */
void lplan_guard_globs(struct arena *a, const struct ir_profile *p, struct lplan *plan,
		       uint64_t (*region)(const struct lplan *, const char *));

void lplan_error(struct arena *a, struct lplan *plan, const struct ir_rule *r, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));
void lplan_note(struct arena *a, struct lplan *plan, const struct ir_rule *r, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));

#endif
