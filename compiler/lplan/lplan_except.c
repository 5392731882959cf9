/*
 * lplan_except.c - a protect with excepts in the Linux plan.
 *
 * A mount holds a whole tree, and a protect of everything in {ws}/.git
 * except its objects, index, refs, ... must not hold all of .git: git creates
 * lock files next to the index and renames them over it. So the rule is
 * planned as the existing entries of its tree it protects, found by a
 * bounded walk that never descends into what an except covers: an entry
 * no except reaches becomes a plain protect of that entry and all below
 * it (a read-only, pinned mount), one wholly excepted is left to the
 * other rules, and a directory that holds both is protected itself (so
 * pinned) and walked. Names that do not exist yet are the create guard's:
 * it asks the IR evaluator over the profile with the excepts resolved
 * like their targets (lplan_guard.c), so a new `.git/commondir` is
 * refused and a new `.git/index.lock` is not.
 */
#include "lplan_int.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "pat_rel.h"
#include "path.h"

/* The directory a pattern's matches live in or below: text[0..*cut). */
static size_t lit_dir_len(const struct ir_path *pp)
{
	if (pp->kind == IR_PAT_EXACT)
		return pp->len;
	size_t cut = pp->lit_prefix;
	while (cut > 0 && pp->text[cut] != '/')
		cut--;
	return cut;
}

void lplan_except_resolve(struct arena *a, struct lplan_rcache *rc, const struct ir_rule *orig,
			  struct ir_rule *res)
{
	if (!orig->nexcept) {
		res->except = NULL;
		res->nexcept = 0;
		return;
	}
	/* An except lies inside its target, so it moves with the target's
	 * literal directory: a workspace reached through a symlink keeps its
	 * excepts inside it, whatever lies below is resolved as the kernel
	 * meets it (an `objects` that is itself a link is excepted as the
	 * name it is in the tree). */
	size_t ln = lit_dir_len(&orig->t.path);
	const char *ldir = ln ? arena_strndup(a, orig->t.path.text, ln) : "/";
	const char *rdir = lplan_resolve_cached(rc, ldir);
	if (!strcmp(rdir, "/"))
		rdir = "";
	struct ir_except *v = arena_alloc(a, orig->nexcept * sizeof *v);
	for (uint32_t i = 0; i < orig->nexcept; i++) {
		const struct ir_except *e = &orig->except[i];
		v[i] = *e;
		const char *t = e->path.text;
		const char *text;
		if (ln && !strncmp(t, ldir, ln) && (t[ln] == '/' || t[ln] == '\0'))
			text = arena_concat(a, rdir, t + ln);
		else
			text = lplan_resolve_pattern(a, rc, &e->path);
		if (!*text)
			text = "/";
		memset(&v[i].path, 0, sizeof v[i].path);
		v[i].path.text = text;
		path_classify(&v[i].path);
	}
	res->except = v;
	res->nexcept = orig->nexcept;
}

struct xwalk {
	struct arena *a;
	struct lplan_rcache *rc;
	const struct ir_rule *orig;
	struct ir_rule full; /* target and excepts resolved */
	struct lplan_rules *out;
	size_t visited, held;
	bool too_big;
};

enum xpart { X_NONE, X_ALL, X_MIXED };

/* Can the except pattern reach `sub` (P and below) at all? Its literal part
 * and P must agree as far as both go: a cheap test before the automata. */
static bool may_meet(const struct ir_path *e, const char *p, size_t pn)
{
	size_t n = e->lit_prefix < pn ? e->lit_prefix : pn;
	return !strncmp(e->text, p, n);
}

/* Is P at or below the directory D[0..dn)? */
static bool at_or_below(const char *p, size_t pn, const char *d, size_t dn)
{
	if (dn == 1 && d[0] == '/')
		return true;
	return pn >= dn && !strncmp(p, d, dn) && (p[dn] == '/' || p[dn] == '\0');
}

/* The relations of pattern e to P and all below it that part_of needs,
 * without the automata where the pattern's shape decides them: exact
 * paths and subtrees by prefix, globs without a double-star component
 * one component at a time (they match paths of one depth only, never all below P).
 * Anything else goes to pat_rel. */
static void rel_to_sub(struct xwalk *w, const struct ir_path *e, const char *p,
		       const struct ir_path *sub, enum pat_ans *overlap, enum pat_ans *contains)
{
	size_t pn = strlen(p);
	if (e->kind == IR_PAT_EXACT) {
		*overlap = at_or_below(e->text, e->len, p, pn) ? PAT_YES : PAT_NO;
		*contains = PAT_NO;
		return;
	}
	if (e->kind == IR_PAT_SUBTREE) {
		size_t dn = e->len > 3 ? e->len - 3 : 1;
		bool below = at_or_below(p, pn, e->text, dn);
		*contains = below ? PAT_YES : PAT_NO;
		*overlap = below || at_or_below(e->text, dn, p, pn) ? PAT_YES : PAT_NO;
		return;
	}
	enum { MAXC = 256 };
	struct path_comp ec[MAXC], pc[MAXC];
	size_t en = path_split(e->text, ec, MAXC), m = path_split(p, pc, MAXC);
	bool dstar = en == (size_t)-1;
	for (size_t i = 0; !dstar && i < en; i++)
		dstar = ec[i].n == 2 && ec[i].s[0] == '*' && ec[i].s[1] == '*';
	if (en == (size_t)-1 || m == (size_t)-1) {
		*overlap = pat_path_overlap(e, sub, NULL, 0);
		*contains = *overlap == PAT_NO ? PAT_NO : pat_path_contains(e, sub, NULL, 0);
		return;
	}
	if (dstar) {
		/* P itself, or a path below it, component by component */
		*overlap = path_match(e, p) || lplan_strictly_above(ec, 0, en, pc, 0, m, 0)
				   ? PAT_YES : PAT_NO;
		/* all of it when e is X/ followed by a final double star and X
		 * matches P or a directory above it; otherwise asked exactly */
		*contains = PAT_NO;
		if (*overlap == PAT_YES && en > 1 && ec[en - 1].n == 2 && ec[en - 1].s[0] == '*' &&
		    ec[en - 1].s[1] == '*') {
			char *x = arena_strndup(w->a, e->text, e->len - 3);
			struct ir_path xp = { .text = x };
			path_classify(&xp);
			for (size_t k = m + 1; k-- > 1 && *contains == PAT_NO;) {
				const char *end = pc[k - 1].s + pc[k - 1].n;
				if (path_match(&xp, arena_strndup(w->a, p, (size_t)(end - p))))
					*contains = PAT_YES;
			}
		}
		return;
	}
	*contains = PAT_NO;
	*overlap = PAT_NO;
	if (en < m)
		return;
	for (size_t i = 0; i < m; i++)
		if (!path_component_match(ec[i].s, ec[i].n, pc[i].s, pc[i].n))
			return;
	*overlap = PAT_YES;
}

/* How much of P and the tree below it the rule protects. Unknown answers
 * (a pathological glob) count as the mixed case, which walks on. */
static enum xpart part_of(struct xwalk *w, const char *p)
{
	struct ir_path sub = { 0 };
	sub.text = lplan_join(w->a, p, "**", 2);
	path_classify(&sub);
	enum pat_ans o, c;
	rel_to_sub(w, &w->full.t.path, p, &sub, &o, &c);
	if (o == PAT_NO)
		return X_NONE;
	bool all = o == PAT_YES && c == PAT_YES;
	size_t pn = strlen(p);
	for (uint32_t i = 0; i < w->full.nexcept; i++) {
		const struct ir_path *e = &w->full.except[i].path;
		if (!may_meet(e, p, pn))
			continue;
		rel_to_sub(w, e, p, &sub, &o, &c);
		if (c == PAT_YES)
			return X_NONE;
		if (o != PAT_NO)
			all = false;
	}
	return all ? X_ALL : X_MIXED;
}

/* Each entry held is a mount, and a node every other node of the plan is
 * asked about: past this many the plan refuses rather than grow. */
#define XWALK_MAX_HELD 4096

static void emit(struct xwalk *w, const char *path, bool subtree)
{
	if (++w->held > XWALK_MAX_HELD) {
		w->too_big = true;
		return;
	}
	lplan_rules_add(w->a, w->out, w->orig, lplan_resolve_cached(w->rc, path), subtree);
	struct ir_rule *r = &w->out->rules[w->out->n - 1];
	r->except = NULL;
	r->nexcept = 0;
}

static void walk(struct xwalk *w, const char *dir, unsigned depth)
{
	if (depth > 64) {
		w->too_big = true;
		return;
	}
	const struct pf_listing *l = lplan_list(w->rc, dir);
	if (!l)
		return; /* unreadable here: what is in it is the create guard's */
	for (size_t k = 0; !w->too_big && k < l->n; k++) {
		if (++w->visited > LPLAN_GLOB_BUDGET) {
			w->too_big = true;
			break;
		}
		char *e = lplan_join(w->a, dir, l->names[k], strlen(l->names[k]));
		struct stat st;
		if (lplan_lstat(w->rc, e, &st) != 0)
			continue; /* gone since readdir: it no longer needs a mount */
		bool is_dir = S_ISDIR(st.st_mode);
		switch (part_of(w, e)) {
		case X_NONE:
			break;
		case X_ALL:
			emit(w, e, is_dir);
			break;
		case X_MIXED:
			if (ir_rule_path_match(&w->full, e))
				emit(w, e, false);
			if (is_dir)
				walk(w, e, depth + 1);
			break;
		}
	}
}

bool lplan_except_expand(struct arena *a, struct lplan_rcache *rc, const struct ir_rule *r,
			 struct lplan_rules *out, struct ir_rule *full)
{
	struct xwalk w = { .a = a, .rc = rc, .orig = r, .out = out };
	w.full = *r;
	const char *t = lplan_resolve_pattern(a, rc, &r->t.path);
	memset(&w.full.t.path, 0, sizeof w.full.t.path);
	w.full.t.path.text = *t ? t : "/";
	path_classify(&w.full.t.path);
	lplan_except_resolve(a, rc, r, &w.full);
	*full = w.full;

	size_t ln = lit_dir_len(&w.full.t.path);
	const char *anchor = ln ? arena_strndup(a, w.full.t.path.text, ln) : "/";
	if (ir_rule_path_match(&w.full, anchor))
		emit(&w, anchor, false);
	if (w.full.t.path.kind == IR_PAT_EXACT)
		return true;
	struct stat st;
	if (lplan_lstat(rc, anchor, &st) != 0 || !S_ISDIR(st.st_mode))
		return true; /* nothing there yet: the create guard decides */
	switch (part_of(&w, anchor)) {
	case X_NONE:
		return true;
	case X_ALL:
		emit(&w, anchor, true);
		return true;
	case X_MIXED: {
		size_t n0 = out->n - w.held;
		walk(&w, anchor, 0);
		if (w.too_big)
			out->n = n0; /* refused: the entries walked so far plan nothing */
		return !w.too_big;
	}
	}
	return true;
}
