/*
 * test_lplan_cand.c - the candidate rules of the plan's build and check
 * (lplan_cand.c) hold every rule that can match a path.
 *
 * Both the build and the launch-time check match a path only against the
 * rules filtered for its directories, level by level from the root; a
 * rule left out there would be a rule the plan never applies, and the
 * check would not see it either. So this is checked by brute force: every
 * pattern of up to five tokens over a small alphabet, against every
 * normalised path of up to eight characters, with the evaluator's own
 * matcher as the reference.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fx_pattern.h"
#include "ir.h"
#include "lplan_int.h"
#include "path.h"

enum { MAXP = 8, NTOKS = 6, MAXTOK = 5 };
static const char *const toks[NTOKS] = { "a", "b", "/", "*", "**", "?" };

struct paths {
	char (*v)[2 * MAXP + 2];
	size_t n, cap;
};

static bool normalised(const char *p)
{
	struct arena a;
	arena_init(&a);
	struct ir_path ip;
	bool ok = fx_resolver_form(&a, p, &ip) && ip.kind == IR_PAT_EXACT;
	arena_free(&a);
	return ok;
}

static void gen_paths(struct paths *P, char *buf, size_t len, size_t nch)
{
	static const char *const al[] = { "a", "b", "/", "." };
	if (normalised(buf)) {
		cr_assert_lt(P->n, P->cap);
		memcpy(P->v[P->n++], buf, len + 1);
	}
	if (nch == MAXP)
		return;
	for (size_t i = 0; i < sizeof al / sizeof *al; i++) {
		buf[len] = al[i][0];
		buf[len + 1] = '\0';
		gen_paths(P, buf, len + 1, nch + 1);
	}
	buf[len] = '\0';
}

/* "/" then the tokens of `code`, when that is a pattern in the
 * resolver's form. */
static bool pattern(struct arena *a, unsigned code, int ntok, struct ir_path *out)
{
	char text[64] = "/";
	for (int i = 0; i < ntok; i++) {
		strcat(text, toks[code % NTOKS]);
		code /= NTOKS;
	}
	return fx_resolver_form(a, text, out);
}

Test(lplan_cand, every_match_is_at_or_below_the_anchor_and_stays_a_candidate)
{
	struct paths P = { .cap = 100000 };
	P.v = calloc(P.cap, sizeof *P.v);
	cr_assert(P.v);
	char buf[2 * MAXP + 2] = "/";
	gen_paths(&P, buf, 1, 1);
	cr_assert_gt(P.n, 1000);

	struct arena a;
	arena_init(&a);
	/* One profile of every pattern, each an allow rule of its own. */
	size_t cap = 1, count = 1;
	for (int len = 1; len <= MAXTOK; len++)
		cap += count *= NTOKS;
	struct ir_rule *rules = arena_alloc(&a, cap * sizeof *rules);
	size_t nr = 0;
	for (int len = 0; len <= MAXTOK; len++) {
		unsigned count = 1;
		for (int i = 0; i < len; i++)
			count *= NTOKS;
		for (unsigned code = 0; code < count; code++) {
			struct ir_rule *r = &rules[nr];
			memset(r, 0, sizeof *r);
			if (!pattern(&a, code, len, &r->t.path))
				continue;
			r->effect = IR_ALLOW;
			r->tkind = IR_T_PATH;
			r->access = IR_A_READ;
			r->index = (uint32_t)nr;
			nr++;
		}
	}
	struct ir_profile prof = { .name = "brute", .rules = rules, .nrules = nr };
	struct lplan_anchors an;
	lplan_anchors_init(&a, &prof, &an);
	cr_assert_eq(an.all.n, nr);

	unsigned long matches = 0, kept_out = 0;
	uint32_t *seen = calloc(nr + 1, sizeof *seen);
	cr_assert(seen);
	for (size_t p = 0; p < P.n; p++) {
		const char *path = P.v[p];
		/* The path's directories from the root down, then the path. */
		struct lplan_cand c = an.all;
		size_t len = strlen(path);
		for (size_t e = 1; e <= len; e++) {
			if (e < len && path[e] != '/')
				continue;
			char *dir = arena_strndup(&a, path, e);
			struct lplan_cand next;
			lplan_cand_filter(&a, &an, &c, dir, &next);
			for (size_t k = 1; k < next.n; k++)
				cr_assert_lt(next.v[k - 1], next.v[k], "candidates out of order");
			c = next;
		}
		for (size_t k = 0; k < c.n; k++)
			seen[c.v[k]] = (uint32_t)p + 1;
		for (size_t i = 0; i < nr; i++) {
			const struct ir_path *pp = &rules[i].t.path;
			if (!ir_path_match(pp, path)) {
				kept_out += seen[i] != (uint32_t)p + 1;
				continue;
			}
			matches++;
			cr_assert(lplan_at_or_above(an.anchor[i], path),
				  "%s matches %s, but its anchor %s is not at or above it", pp->text,
				  path, an.anchor[i]);
			cr_assert(lplan_may_match(pp, path), "%s matches %s, but may_match says no",
				  pp->text, path);
			cr_assert_eq(seen[i], (uint32_t)p + 1,
				     "%s matches %s but was filtered out of its candidates", pp->text,
				     path);
		}
	}
	/* Both must happen often, or the test proves nothing: rules that
	 * match, and rules the filter turns away. */
	cr_expect_gt(matches, 100000);
	cr_expect_gt(kept_out, 1000000, "%lu rules filtered out, %lu matches, %zu paths, %zu rules", kept_out, matches, P.n, nr);
	free(seen);
	free(P.v);
	arena_free(&a);
}
