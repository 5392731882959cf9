/*
 * lplan_resolve.c - the first step of the Linux plan: rewrite a profile's
 * path rules into the form the kernel will see. Patterns are written
 * lexically (`/lib/` and everything below), but Landlock and mounts act on inodes reached by
 * following symlinks (`/usr/lib`). Every rule's literal part is resolved
 * through the real filesystem; globs are expanded into the existing paths
 * they match (with a bound), since Landlock has no patterns. The resolved
 * rules keep their original's location, so every message names what the
 * user wrote.
 */
#include "lplan_int.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "path.h"

struct walk {
	struct arena *a;
	struct lplan_rcache *rc;
	const struct ir_rule *orig;
	struct lplan_rules *out;
	size_t visited;
	bool too_big;
};

static void emit(struct walk *w, const char *path, bool subtree)
{
	const char *res = lplan_resolve_cached(w->rc, path);
	lplan_rules_add(w->a, w->out, w->orig, res, subtree);
}

/* Components of the pattern after the walk's position: comps[i..n). */
static void walk(struct walk *w, const char *dir, const struct path_comp *comps, size_t i,
		 size_t n, unsigned depth)
{
	if (w->too_big)
		return;
	if (i == n) {
		emit(w, dir, false);
		return;
	}
	const char *c = comps[i].s;
	size_t cl = comps[i].n;
	bool dstar = cl == 2 && c[0] == '*' && c[1] == '*';
	if (dstar && i + 1 == n) {
		emit(w, dir, true);
		return;
	}
	if (!path_has_glob(c, cl)) {
		char *next = lplan_join(w->a, dir, c, cl);
		struct stat st;
		if (lplan_lstat(w->rc, next, &st) == 0)
			walk(w, next, comps, i + 1, n, depth);
		return;
	}
	if (dstar)
		walk(w, dir, comps, i + 1, n, depth); /* zero components */
	if (depth > 64) {
		w->too_big = true;
		return;
	}
	const struct pf_listing *l = lplan_list(w->rc, dir);
	if (!l)
		return;
	for (size_t k = 0; k < l->n; k++) {
		const char *name = l->names[k];
		if (++w->visited > LPLAN_GLOB_BUDGET) {
			w->too_big = true;
			break;
		}
		char *next = lplan_join(w->a, dir, name, strlen(name));
		if (dstar) {
			/* Descend through real directories only: a symlink loop must
			 * not make the walk endless. */
			struct stat st;
			if (lplan_lstat(w->rc, next, &st) == 0 && S_ISDIR(st.st_mode))
				walk(w, next, comps, i, n, depth + 1);
		} else if (path_component_match(c, cl, name, strlen(name))) {
			walk(w, next, comps, i + 1, n, depth + 1);
		}
	}
}

/* Expands a glob rule into the existing paths it matches. */
static bool expand_glob(struct arena *a, struct lplan_rcache *rc, const struct ir_rule *r,
			struct lplan_rules *out)
{
	enum { MAXC = 256 };
	struct path_comp comps[MAXC];
	size_t n = path_split(r->t.path.text, comps, MAXC);
	if (n == (size_t)-1)
		return false;
	struct walk w = { a, rc, r, out, 0, false };
	walk(&w, "/", comps, 0, n, 0);
	return !w.too_big;
}

void lplan_rules_add(struct arena *a, struct lplan_rules *v, const struct ir_rule *orig,
		     const char *path, bool subtree)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 64;
		v->rules = arena_grow(a, v->rules, v->n, v->cap, sizeof *v->rules);
		v->orig = arena_grow(a, v->orig, v->n, v->cap, sizeof *v->orig);
	}
	struct ir_rule *r = &v->rules[v->n];
	*r = *orig;
	r->index = (uint32_t)v->n;
	const char *text = subtree ? lplan_join(a, path, "**", 2) : path;
	r->t.path.text = text;
	r->t.path.len = (uint32_t)strlen(text);
	r->t.path.home_len = 0;
	path_classify(&r->t.path);
	v->orig[v->n++] = orig;
}

bool lplan_resolve_rules(struct arena *a, const struct ir_profile *p, struct lplan_rules *out,
			 struct lplan *plan)
{
	struct lplan_rcache *rc = plan->rcache;
	struct ir_rule *full = arena_alloc(a, (p->nrules ? p->nrules : 1) * sizeof *full);
	size_t nfull = 0;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->tkind != IR_T_PATH || !(r->access & IR_A_FILE))
			continue;
		const struct ir_path *pp = &r->t.path;
		if (r->nexcept) {
			/* No machine's files are known to the static plan: what it
			 * holds is the create guard's and the walk's, here. */
			if (plan->is_static)
				continue;
			if (!lplan_except_expand(a, rc, r, out, &full[nfull++]))
				lplan_error(a, plan, r,
					    "the tree this protect holds is too big to plan entry by "
					    "entry (more than %d entries to look at outside its "
					    "excepts, more than 4096 to mount, or deeper than 64); "
					    "protect a smaller tree",
					    LPLAN_GLOB_BUDGET);
			continue;
		}
		if (plan->is_static) {
			/* As written; a glob names no path until it is expanded. */
			if (pp->kind != IR_PAT_GLOB)
				lplan_rules_add(a, out, r,
						pp->kind == IR_PAT_EXACT
							? pp->text
							: (pp->len == 3 ? "/"
								       : arena_strndup(a, pp->text,
										       pp->len - 3)),
						pp->kind == IR_PAT_SUBTREE);
		} else if (pp->kind == IR_PAT_EXACT) {
			lplan_rules_add(a, out, r, lplan_resolve_cached(rc, pp->text), false);
		} else if (pp->kind == IR_PAT_SUBTREE) {
			char *dir = arena_strndup(a, pp->text, pp->len - 3);
			lplan_rules_add(a, out, r, lplan_resolve_cached(rc, *dir ? dir : "/"), true);
		} else if (!expand_glob(a, rc, r, out)) {
			lplan_error(a, plan, r,
				    "this pattern matches too much of the filesystem to expand "
				    "(Landlock has no patterns: a glob is granted path by path); "
				    "write a directory `DIR/**` instead");
		}
	}
	/* A name another rule anchors inside a protect's tree that does not
	 * exist is planned from the resolved rules alone (the create guard
	 * then keeps it from coming to exist): give them the protect's own
	 * answer there, which the walk, seeing only existing entries, did not. */
	size_t n0 = out->n;
	for (size_t k = 0; k < nfull; k++)
		for (size_t i = 0; i < n0; i++) {
			const struct ir_path *pp = &out->rules[i].t.path;
			const char *anchor = pp->kind == IR_PAT_SUBTREE
						     ? (pp->len == 3 ? "/" : arena_strndup(a, pp->text, pp->len - 3))
						     : pp->text;
			struct stat st;
			if (pp->kind == IR_PAT_GLOB || lplan_lstat(plan->rcache, anchor, &st) == 0 ||
			    !ir_rule_path_match(&full[k], anchor))
				continue;
			lplan_rules_add(a, out, p->rules + full[k].index, anchor, false);
			out->rules[out->n - 1].except = NULL;
			out->rules[out->n - 1].nexcept = 0;
		}
	return true;
}
