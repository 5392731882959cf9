/*
 * lplan_cand.c - the rules that can match a path, found by each pattern's
 * anchor, so that the plan's build and its check match a path against a
 * handful of rules rather than the whole profile.
 *
 * Every path a pattern matches is its anchor or below it, so a rule can
 * match a path only when its anchor is at or above the path. Filtering a
 * directory's candidates keeps the rules in line with it (anchors above
 * it or below it); a path below that directory then finds all its
 * candidates among them, which is why both callers filter level by level
 * down from the root. The build cross-checks every filtered answer
 * against the whole profile in debug and sanitizer builds (lplan.c).
 */
#include "lplan_int.h"

#include <string.h>

size_t lplan_anchor_len(const struct ir_path *pp)
{
	if (pp->kind == IR_PAT_EXACT)
		return pp->len;
	size_t cut = pp->kind == IR_PAT_SUBTREE ? pp->len - 3 : pp->lit_prefix;
	while (pp->kind == IR_PAT_GLOB && cut > 0 && pp->text[cut] != '/')
		cut--;
	return cut;
}

const char *lplan_anchor(struct arena *a, const struct ir_path *pp)
{
	if (pp->kind == IR_PAT_EXACT)
		return pp->text;
	size_t cut = lplan_anchor_len(pp);
	return cut ? arena_strndup(a, pp->text, cut) : "/";
}

bool lplan_may_match(const struct ir_path *pp, const char *path)
{
	size_t k = lplan_anchor_len(pp);
	return k == 0 || (strncmp(path, pp->text, k) == 0 && (path[k] == '/' || path[k] == '\0'));
}

void lplan_anchors_init(struct arena *a, const struct ir_profile *p, struct lplan_anchors *an)
{
	an->p = p;
	an->anchor = arena_alloc(a, (p->nrules + 1) * sizeof *an->anchor);
	an->alen = arena_alloc(a, (p->nrules + 1) * sizeof *an->alen);
	an->all.v = arena_alloc(a, (p->nrules + 1) * sizeof *an->all.v);
	an->scratch = arena_alloc(a, (p->nrules + 1) * sizeof *an->scratch);
	an->all.n = 0;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		an->anchor[i] = r->tkind == IR_T_PATH ? lplan_anchor(a, &r->t.path) : NULL;
		if (an->anchor[i]) {
			an->alen[i] = strlen(an->anchor[i]);
			an->all.v[an->all.n++] = (uint32_t)i;
		}
	}
}

/* Whether one of x[0..xn) and y[0..yn) is the other or a directory
 * above it. */
static bool in_line(const char *x, size_t xn, const char *y, size_t yn)
{
	if (xn == 1 || yn == 1)
		return true; /* "/" is above everything */
	/* The longer one must have a '/' where the shorter ends: a cheap
	 * test that turns most candidates away before the memcmp. */
	if (xn < yn ? y[xn] != '/' : xn > yn && x[yn] != '/')
		return false;
	return !memcmp(x, y, xn < yn ? xn : yn);
}

void lplan_cand_filter(struct arena *a, const struct lplan_anchors *an,
		       const struct lplan_cand *from, const char *dir, struct lplan_cand *to)
{
	size_t dn = strlen(dir), n = 0;
	for (size_t k = 0; k < from->n; k++) {
		uint32_t i = from->v[k];
		if (in_line(an->anchor[i], an->alen[i], dir, dn))
			an->scratch[n++] = i;
	}
	/* Only what was kept is copied out: a build filters once per node. */
	to->v = arena_alloc(a, (n + 1) * sizeof *to->v);
	memcpy(to->v, an->scratch, n * sizeof *to->v);
	to->n = n;
}
