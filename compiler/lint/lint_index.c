/*
 * lint_index.c - finding the few rules that can matter for a pattern.
 *
 * Two path patterns can share a path only if one's literal prefix (the
 * text before the first glob character) is a prefix of the other's. With
 * the rules sorted by literal prefix, both directions are binary searches:
 * rules whose prefix extends ours form one contiguous range, and rules
 * whose prefix is a shorter piece of ours are found length by length. This
 * keeps a 10,000-rule policy from turning into 10^8 automaton runs.
 */
#include "lint_int.h"

#include <stdlib.h>
#include <string.h>

static int key_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	size_t m = an < bn ? an : bn;
	int r = memcmp(a, b, m);
	if (r)
		return r;
	return an < bn ? -1 : an > bn;
}

static int rx_cmp(const void *x, const void *y)
{
	const struct lint_rx *a = x, *b = y;
	int r = key_cmp(a->key, a->klen, b->key, b->klen);
	if (r)
		return r;
	return a->rule < b->rule ? -1 : a->rule > b->rule;
}

/* A host's key: its labels in reverse order, each followed by '.'
 * ("api.example.com" -> "com.example.api."; "*.example.com" ->
 * "com.example."; "*" -> ""), and IP literals in a namespace of their own.
 * Two hosts can share a name only if one key is a prefix of the other. */
static size_t host_key(const struct ir_host *h, char *out)
{
	if (h->kind == IR_H_ANY) {
		out[0] = '\0';
		return 0;
	}
	const char *name = h->name ? h->name : "";
	size_t n = strlen(name), o = 0;
	if (h->kind == IR_H_IPV4 || h->kind == IR_H_IPV6) {
		out[o++] = '\x01';
		memcpy(out + o, name, n);
		o += n;
		out[o] = '\0';
		return o;
	}
	size_t end = n;
	while (end > 0) {
		size_t start = end;
		while (start > 0 && name[start - 1] != '.')
			start--;
		memcpy(out + o, name + start, end - start);
		o += end - start;
		out[o++] = '.';
		end = start ? start - 1 : 0;
	}
	out[o] = '\0';
	return o;
}

void lint_ix_build(struct lint_ctx *c)
{
	const struct ir_profile *p = c->prof;
	c->ix = malloc((p->nrules + 1) * sizeof *c->ix);
	c->nix = 0;
	if (!c->ix)
		return;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->tkind != IR_T_PATH && r->tkind != IR_T_UNIX)
			continue;
		c->ix[c->nix++] = (struct lint_rx){ r->t.path.text, r->t.path.lit_prefix,
						    (uint32_t)i };
	}
	qsort(c->ix, c->nix, sizeof *c->ix, rx_cmp);

	c->machs = malloc((p->nrules + 1) * sizeof *c->machs);
	c->nmachs = 0;
	size_t keybytes = 0, nh = 0;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->tkind == IR_T_MACH && c->machs)
			c->machs[c->nmachs++] = (uint32_t)i;
		if (r->tkind == IR_T_HOST) {
			nh++;
			keybytes += (r->t.host.name ? strlen(r->t.host.name) : 0) + 3;
		}
	}
	c->hix = malloc((nh + 1) * sizeof *c->hix);
	c->hkeys = malloc(keybytes + 1);
	c->nhix = 0;
	if (!c->hix || !c->hkeys)
		return;
	char *k = c->hkeys;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->tkind != IR_T_HOST)
			continue;
		size_t n = host_key(&r->t.host, k);
		c->hix[c->nhix++] = (struct lint_rx){ k, (uint32_t)n, (uint32_t)i };
		k += n + 1;
	}
	qsort(c->hix, c->nhix, sizeof *c->hix, rx_cmp);
}

void lint_ix_free(struct lint_ctx *c)
{
	free(c->ix);
	free(c->hix);
	free(c->hkeys);
	free(c->machs);
	c->ix = c->hix = NULL;
	c->hkeys = NULL;
	c->machs = NULL;
	c->nix = c->nhix = c->nmachs = 0;
}

static void cand_push(struct lint_ctx *c, uint32_t rule)
{
	if (c->ncand == c->capcand) {
		size_t cap = c->capcand ? c->capcand * 2 : 64;
		uint32_t *n = realloc(c->cand, cap * sizeof *n);
		if (!n)
			return;
		c->cand = n;
		c->capcand = cap;
	}
	c->cand[c->ncand++] = rule;
}

/* First index of ix[0..nix) whose key is >= (s, n). */
static size_t lower_in(const struct lint_rx *ix, size_t nix, const char *s, size_t n)
{
	size_t lo = 0, hi = nix;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key_cmp(ix[mid].key, ix[mid].klen, s, n) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t lower(const struct lint_ctx *c, const char *s, size_t n)
{
	return lower_in(c->ix, c->nix, s, n);
}

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

static void keep_kind_sorted(struct lint_ctx *c, enum ir_target_kind tk);

void lint_ix_comparable(struct lint_ctx *c, const char *text, size_t len, enum ir_target_kind tk)
{
	c->ncand = 0;
	/* keys extending text[0..len): one contiguous run */
	for (size_t i = lower(c, text, len); i < c->nix; i++) {
		if (c->ix[i].klen < len || memcmp(c->ix[i].key, text, len) != 0)
			break;
		cand_push(c, c->ix[i].rule);
	}
	/* keys that are proper prefixes of it */
	for (size_t l = 0; l < len; l++) {
		for (size_t i = lower(c, text, l); i < c->nix; i++) {
			if (c->ix[i].klen != l || memcmp(c->ix[i].key, text, l) != 0)
				break;
			cand_push(c, c->ix[i].rule);
		}
	}
	keep_kind_sorted(c, tk);
}

void lint_ix_hosts(struct lint_ctx *c, const struct ir_rule *r)
{
	c->ncand = 0;
	const char *name = r->t.host.name ? r->t.host.name : "";
	char *key = malloc(strlen(name) + 3);
	if (!key)
		return;
	size_t len = host_key(&r->t.host, key);
	const struct lint_rx *ix = c->hix;
	for (size_t i = lower_in(ix, c->nhix, key, len); i < c->nhix; i++) {
		if (ix[i].klen < len || memcmp(ix[i].key, key, len) != 0)
			break;
		cand_push(c, ix[i].rule);
	}
	for (size_t l = 0; l < len; l++) {
		if (l && key[l - 1] != '.')
			continue; /* keys end at label boundaries */
		for (size_t i = lower_in(ix, c->nhix, key, l); i < c->nhix; i++) {
			if (ix[i].klen != l || memcmp(ix[i].key, key, l) != 0)
				break;
			cand_push(c, ix[i].rule);
		}
	}
	free(key);
	keep_kind_sorted(c, IR_T_HOST);
}

/* Rules that may match the concrete path text[0..len): keys that are
 * prefixes of it, or exactly it plus "/". */
static void ix_matching(struct lint_ctx *c, const char *text, size_t len, enum ir_target_kind tk)
{
	c->ncand = 0;
	char *k = malloc(len + 2);
	if (k) {
		/* key == text + "/" */
		memcpy(k, text, len);
		k[len] = '/';
		for (size_t j = lower(c, k, len + 1); j < c->nix; j++) {
			if (c->ix[j].klen != len + 1 || memcmp(c->ix[j].key, k, len + 1) != 0)
				break;
			cand_push(c, c->ix[j].rule);
		}
		free(k);
	}
	for (size_t l = 0; l <= len; l++) {
		for (size_t i = lower(c, text, l); i < c->nix; i++) {
			if (c->ix[i].klen != l || memcmp(c->ix[i].key, text, l) != 0)
				break;
			cand_push(c, c->ix[i].rule);
		}
	}
	keep_kind_sorted(c, tk);
}

static void keep_kind_sorted(struct lint_ctx *c, enum ir_target_kind tk)
{
	size_t k = 0;
	for (size_t i = 0; i < c->ncand; i++)
		if (c->prof->rules[c->cand[i]].tkind == tk)
			c->cand[k++] = c->cand[i];
	c->ncand = k;
	if (k > 1)
		qsort(c->cand, c->ncand, sizeof *c->cand, u32_cmp);
}

void lint_eval_path(struct lint_ctx *c, uint32_t access, enum ir_target_kind tk,
		    const char *path, struct ir_verdict *v)
{
	v->allowed = false;
	v->rule = NULL;
	size_t len = strlen(path);
	/* A pattern can match `path` only if its literal prefix is a prefix of
	 * path, or is path + "/" (a subtree pattern matches its directory). */
	ix_matching(c, path, len, tk);
	const struct ir_rule *last = NULL;
	for (size_t i = 0; i < c->ncand; i++) {
		const struct ir_rule *r = &c->prof->rules[c->cand[i]];
		if (!(r->access & access) || !ir_rule_path_match(r, path))
			continue;
		if (r->effect == IR_PROTECT) {
			v->rule = r;
			return;
		}
		last = r;
	}
	if (last) {
		v->rule = last;
		v->allowed = last->effect == IR_ALLOW;
	}
}

/* ---- a protect's excepts: what it holds is its target less them ---- */

/* Does one except of r hold all of b (so r holds none of it)? */
static bool except_all(const struct ir_rule *r, const struct ir_path *b)
{
	for (uint32_t i = 0; i < r->nexcept; i++)
		if (pat_path_contains(&r->except[i].path, b, NULL, 0) == PAT_YES)
			return true;
	return false;
}

/* Does some except of r share a path with b? */
static enum pat_ans except_meets(const struct ir_rule *r, const struct ir_path *b)
{
	enum pat_ans ans = PAT_NO;
	for (uint32_t i = 0; i < r->nexcept && ans != PAT_YES; i++) {
		enum pat_ans o = pat_path_overlap(&r->except[i].path, b, NULL, 0);
		if (o != PAT_NO)
			ans = o;
	}
	return ans;
}

enum pat_ans lint_path_overlap(const struct ir_rule *a, const struct ir_path *b, char *wit,
			       size_t size)
{
	char *w = malloc(PAT_WITNESS_MAX);
	if (!w)
		return PAT_UNKNOWN;
	enum pat_ans o = pat_path_overlap(&a->t.path, b, w, PAT_WITNESS_MAX);
	if (o == PAT_YES && a->nexcept) {
		/* The shortest shared path may be excepted and a longer one
		 * not: only "inside one except" is a sure no. */
		if (except_all(a, b))
			o = PAT_NO;
		else if (ir_rule_excepted(a, w))
			o = except_meets(a, b) == PAT_NO ? PAT_YES : PAT_UNKNOWN;
	}
	if (wit && size)
		snprintf(wit, size, "%s", o == PAT_YES ? w : "");
	free(w);
	return o;
}

enum pat_ans lint_path_contains(const struct ir_rule *a, const struct ir_path *b)
{
	enum pat_ans c = pat_path_contains(&a->t.path, b, NULL, 0);
	if (c != PAT_YES || !a->nexcept)
		return c;
	enum pat_ans m = except_meets(a, b);
	return m == PAT_NO ? PAT_YES : m == PAT_YES ? PAT_NO : PAT_UNKNOWN;
}

enum pat_ans lint_overlap(const struct ir_rule *a, const struct ir_rule *b)
{
	switch (a->tkind) {
	case IR_T_HOST:
		return pat_host_overlap(&a->t.host, &b->t.host, NULL, 0) ? PAT_YES : PAT_NO;
	case IR_T_MACH:
		return pat_mach_overlap(&a->t.mach, &b->t.mach) ? PAT_YES : PAT_NO;
	default:
		/* overlap is symmetric: ask the rule with excepts */
		if (b->nexcept && !a->nexcept)
			return lint_path_overlap(b, &a->t.path, NULL, 0);
		return lint_path_overlap(a, &b->t.path, NULL, 0);
	}
}

enum pat_ans lint_contains(const struct ir_rule *a, const struct ir_rule *b)
{
	switch (a->tkind) {
	case IR_T_HOST:
		return pat_host_contains(&a->t.host, &b->t.host) ? PAT_YES : PAT_NO;
	case IR_T_MACH:
		return pat_mach_contains(&a->t.mach, &b->t.mach) ? PAT_YES : PAT_NO;
	default:
		/* b's own excepts only make it smaller: containing its target
		 * is enough, and not containing it is taken as a no */
		return lint_path_contains(a, &b->t.path);
	}
}
