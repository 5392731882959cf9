/*
 * lint_order.c - findings about rule order: unsafe-order (a later allow
 * re-opens a deny), protect-violation (an allow overlapping a protect, in
 * any order), dead-rule and redundant-rule (rules that never decide).
 *
 * All of them rest on exact overlap and containment (pat_rel.c) and name
 * the part involved, so a message says "re-opens ~/.ssh (and below) that line 4
 * denies" or gives a concrete path in both, not "these might interact".
 */
#include "lint_int.h"

#include <stdlib.h>
#include <string.h>

/* A copy of ids[0..k) the caller frees; NULL when memory runs out. */
static uint32_t *copy_ids(const uint32_t *ids, size_t k, size_t *n)
{
	uint32_t *v = malloc((k + 1) * sizeof *v);
	*n = v ? k : 0;
	if (v && k)
		memcpy(v, ids, k * sizeof *v);
	return v;
}

/* Candidates that can share a target with `r`, copied out of c->cand
 * (which later queries reuse). Caller frees. */
static uint32_t *candidates(struct lint_ctx *c, const struct ir_rule *r, size_t *n)
{
	if (r->tkind == IR_T_PATH || r->tkind == IR_T_UNIX) {
		lint_ix_comparable(c, r->t.path.text, r->t.path.lit_prefix, r->tkind);
		return copy_ids(c->cand, c->ncand, n);
	}
	if (r->tkind == IR_T_HOST) {
		lint_ix_hosts(c, r);
		return copy_ids(c->cand, c->ncand, n);
	}
	return copy_ids(c->machs, c->nmachs, n);
}

/* The part of b that a covers, with an example written for messages. */
static enum pat_cover_kind cover(const struct ir_rule *a, const struct ir_rule *b, char *ex,
				 size_t size)
{
	ex[0] = '\0';
	if (a->tkind == IR_T_PATH || a->tkind == IR_T_UNIX) {
		struct pat_cover *pc = malloc(sizeof *pc);
		if (!pc)
			return PAT_COVER_UNKNOWN;
		pat_path_cover(&a->t.path, &b->t.path, pc);
		enum pat_cover_kind k = pc->kind;
		/* b's excepts leave part of its target out: the part a covers
		 * is then none when a lies inside one, and its example must be
		 * a path b holds */
		if (b->nexcept && k != PAT_COVER_NONE) {
			if (lint_path_overlap(b, &a->t.path, pc->example, sizeof pc->example) == PAT_NO)
				k = PAT_COVER_NONE;
			else if (k == PAT_COVER_ALL && lint_path_contains(a, &b->t.path) != PAT_YES)
				k = PAT_COVER_SOME;
			else if (k == PAT_COVER_INSIDE && lint_path_contains(b, &a->t.path) != PAT_YES)
				k = PAT_COVER_SOME; /* a reaches into an except too */
			else if (!pc->example[0])
				k = PAT_COVER_UNKNOWN;
		}
		if (pc->example[0])
			lint_show_path(&b->t.path, pc->example, ex, size);
		free(pc);
		return k;
	}
	if (a->tkind == IR_T_HOST) {
		if (!pat_host_overlap(&a->t.host, &b->t.host, ex, size))
			return PAT_COVER_NONE;
		if (pat_host_contains(&a->t.host, &b->t.host))
			return PAT_COVER_ALL;
		if (pat_host_contains(&b->t.host, &a->t.host))
			return PAT_COVER_INSIDE;
		return PAT_COVER_SOME;
	}
	if (!pat_mach_overlap(&a->t.mach, &b->t.mach))
		return PAT_COVER_NONE;
	snprintf(ex, size, "%s", strlen(a->t.mach.name) > strlen(b->t.mach.name)
		 ? a->t.mach.name : b->t.mach.name);
	if (pat_mach_contains(&a->t.mach, &b->t.mach))
		return PAT_COVER_ALL;
	if (pat_mach_contains(&b->t.mach, &a->t.mach))
		return PAT_COVER_INSIDE;
	return PAT_COVER_SOME;
}

static bool is_denying(const struct ir_rule *r)
{
	return r->effect != IR_ALLOW;
}

static bool same_outcome(const struct ir_rule *a, const struct ir_rule *b)
{
	return is_denying(a) == is_denying(b);
}

/* Is the re-opening of D by A (at index j) undone everywhere it happens:
 * a protect, or a deny after A, that covers all of A or all of D for
 * every access in `common`? */
static bool reopening_undone(const struct lint_ctx *c, const uint32_t *cand, size_t n,
			     const struct ir_rule *A, const struct ir_rule *D, uint32_t common)
{
	for (size_t k = 0; k < n; k++) {
		const struct ir_rule *L = &c->prof->rules[cand[k]];
		if (!is_denying(L) || (L->access & common) != common)
			continue;
		if (L->effect != IR_PROTECT && L->index <= A->index)
			continue;
		if (lint_contains(L, A) == PAT_YES || lint_contains(L, D) == PAT_YES)
			return true;
	}
	return false;
}

static void unsafe_order(struct lint_ctx *c, const uint32_t *cand, size_t n,
			 const struct ir_rule *A, const struct ir_rule *D, uint32_t common)
{
	char ex[1024], at[1024], dt[1024], acc[128], where[512];
	enum pat_cover_kind k = cover(A, D, ex, sizeof ex);
	if (k == PAT_COVER_NONE || reopening_undone(c, cand, n, A, D, common))
		return;
	lint_target_text(A, at, sizeof at);
	lint_target_text(D, dt, sizeof dt);
	lint_access_text(common, acc, sizeof acc);
	lint_where(c, A, D, where, sizeof where);
	struct diag *d;
	switch (k) {
	case PAT_COVER_ALL:
		d = lint_report(c, "unsafe-order", A, D, "allow %s re-opens %s that %s denies", acc,
				dt, where);
		break;
	case PAT_COVER_INSIDE:
		d = lint_report(c, "unsafe-order", A, D,
				"allow %s re-opens %s, part of %s that %s denies", acc, at, dt, where);
		break;
	case PAT_COVER_SOME:
		d = lint_report(c, "unsafe-order", A, D,
				"allow %s re-opens part of %s that %s denies (e.g. %s)", acc, dt, where,
				ex);
		break;
	default:
		d = lint_report(c, "unsafe-order", A, D,
				"allow %s may re-open part of %s that %s denies (too complex to "
				"decide exactly)", acc, dt, where);
		break;
	}
	lint_note_rule(c, d, D, "%s is denied here; the later allow wins because the last "
		       "matching rule decides", dt);
}

/* Protects an allow covers entirely: reported together, since a broad
 * grant over std/secrets would otherwise make one error per secret. */
struct covered {
	const struct ir_rule *first;
	uint32_t access;
	size_t n;
	char list[1024];
	size_t len;
};

static void protect_violation(struct lint_ctx *c, const struct ir_rule *A,
			      const struct ir_rule *P, uint32_t common, struct covered *cv)
{
	char ex[1024], at[1024], pt[1024], acc[128], where[512];
	enum pat_cover_kind k = cover(A, P, ex, sizeof ex);
	if (k == PAT_COVER_NONE)
		return;
	/* A grant around a guard entry is what the guard is written for. */
	if (k == PAT_COVER_ALL && lint_is_guard(P->loc.file))
		return;
	if (k == PAT_COVER_ALL) {
		if (!cv->first)
			cv->first = P;
		cv->access |= common;
		if (cv->n++ < 3) {
			lint_target_text(P, pt, sizeof pt);
			int w = snprintf(cv->list + cv->len, sizeof cv->list - cv->len, "%s%s",
					 cv->n > 1 ? ", " : "", pt);
			if (w > 0 && (size_t)w < sizeof cv->list - cv->len)
				cv->len += (size_t)w;
		}
		return;
	}
	lint_target_text(A, at, sizeof at);
	lint_target_text(P, pt, sizeof pt);
	lint_access_text(common, acc, sizeof acc);
	lint_where(c, A, P, where, sizeof where);
	struct diag *d;
	switch (k) {
	case PAT_COVER_INSIDE:
		d = lint_report(c, "protect-violation", A, P,
				"allow %s %s lies inside %s, which %s protects; this grant has no "
				"effect", acc, at, pt, where);
		break;
	default:
		d = lint_report(c, "protect-violation", A, P,
				"allow %s %s overlaps %s, which %s protects (e.g. %s); the protect "
				"wins there", acc, at, pt, where, ex[0] ? ex : "?");
		break;
	}
	lint_note_rule(c, d, P, "protected here; no allow can re-open it, in any order");
	if (d && lint_is_guard(P->loc.file))
		diag_note(c->dl, d, A->loc, "std/guard keeps this from the session because it runs code "
				     "outside the cage; to let the agent change it, see docs/stdlib.md "
				     "(\"Opening a guarded file\")");
}

static void report_covered(struct lint_ctx *c, const struct ir_rule *A, const struct covered *cv)
{
	char at[1024], acc[128], where[512], more[64] = "";
	lint_target_text(A, at, sizeof at);
	lint_access_text(cv->access, acc, sizeof acc);
	lint_where(c, A, cv->first, where, sizeof where);
	struct diag *d;
	if (cv->n == 1) {
		d = lint_report(c, "protect-violation", A, cv->first,
				"allow %s %s covers %s, which %s protects; the protect wins there",
				acc, at, cv->list, where);
	} else {
		if (cv->n > 3)
			snprintf(more, sizeof more, " and %zu more", cv->n - 3);
		d = lint_report(c, "protect-violation", A, cv->first,
				"allow %s %s covers %zu protected paths (%s%s); the protects win there",
				acc, at, cv->n, cv->list, more);
	}
	lint_note_rule(c, d, cv->first, "protected here; no allow can re-open it, in any order");
}

void lint_check_order(struct lint_ctx *c)
{
	const struct ir_profile *p = c->prof;
	for (size_t j = 0; j < p->nrules; j++) {
		const struct ir_rule *A = &p->rules[j];
		if (A->effect != IR_ALLOW || lint_is_std(A->loc.file))
			continue;
		size_t n;
		uint32_t *cand = candidates(c, A, &n);
		if (!cand)
			continue;
		struct covered cv = { 0 };
		for (size_t k = 0; k < n; k++) {
			const struct ir_rule *D = &p->rules[cand[k]];
			uint32_t common = D->access & A->access;
			if (!common || D->effect == IR_ALLOW)
				continue;
			if (D->effect == IR_PROTECT)
				protect_violation(c, A, D, common, &cv);
			else if (D->index < A->index)
				unsafe_order(c, cand, n, A, D, common);
		}
		free(cand);
		if (cv.first)
			report_covered(c, A, &cv);
	}
}

/* ---- dead and redundant rules ---- */

static bool in_scope(const struct lint_ctx *c, const struct ir_rule *r, bool own_only)
{
	if (r->loc.file != c->main || r->effect == IR_PROTECT)
		return false;
	if (own_only)
		return r->layer && strcmp(r->layer, c->prof->name) == 0;
	return r->layer == NULL;
}

/* R (an allow) overlaps a protect: protect-violation says it all. */
static bool touches_protect(const struct lint_ctx *c, const uint32_t *cand, size_t n,
			    const struct ir_rule *R)
{
	if (R->effect != IR_ALLOW)
		return false;
	for (size_t k = 0; k < n; k++) {
		const struct ir_rule *P = &c->prof->rules[cand[k]];
		if (P->effect == IR_PROTECT && (P->access & R->access) && lint_overlap(P, R) != PAT_NO)
			return true;
	}
	return false;
}

/* Later rules that cover R entirely, access by access. */
static bool shadowed_later(struct lint_ctx *c, const uint32_t *cand, size_t n, size_t limit,
			   const struct ir_rule *R)
{
	const struct ir_profile *p = c->prof;
	uint32_t left = R->access;
	const struct ir_rule *diff = NULL, *same = NULL;
	for (size_t k = 0; k < n && left; k++) {
		const struct ir_rule *L = &p->rules[cand[k]];
		if (cand[k] >= limit || !(L->access & left) || L->loc.file != c->main)
			continue;
		bool later = L->index > R->index;
		/* a protect decides wherever it matches, whatever its position */
		if (!later && !(L->effect == IR_PROTECT && is_denying(R)))
			continue;
		if (L == R || lint_contains(L, R) != PAT_YES)
			continue;
		if (same_outcome(L, R) && (L->access & R->access) == L->access &&
		    lint_contains(R, L) == PAT_YES && L->effect != IR_PROTECT)
			continue; /* a duplicate: the later copy is reported instead */
		left &= ~L->access;
		if (same_outcome(L, R)) {
			if (!same)
				same = L;
		} else if (!diff) {
			diff = L;
		}
	}
	if (left)
		return false;
	/* A deny that a later allow overrides is unsafe-order's to report. */
	if (diff && is_denying(R))
		return true;
	char rt[1200], ot[1200], where[512];
	lint_rule_text(R, rt, sizeof rt);
	struct diag *d;
	if (diff) {
		lint_rule_text(diff, ot, sizeof ot);
		lint_where(c, R, diff, where, sizeof where);
		d = lint_report(c, "dead-rule", R, diff,
				"%s never decides anything: %s (%s) overrides all of it", rt, ot,
				where);
		lint_note_rule(c, d, diff, "this later rule matches everything the earlier one does");
	} else {
		lint_rule_text(same, ot, sizeof ot);
		lint_where(c, R, same, where, sizeof where);
		d = lint_report(c, "redundant-rule", R, same,
				"%s is redundant: %s (%s) decides the same for all of it", rt, ot,
				where);
		lint_note_rule(c, d, same, "this rule already covers it");
	}
	return true;
}

/* An earlier rule with the same outcome covers R and nothing in between
 * changes the outcome for any part of R. */
static void covered_earlier(struct lint_ctx *c, const uint32_t *cand, size_t n,
			    const struct ir_rule *R)
{
	const struct ir_profile *p = c->prof;
	uint32_t left = R->access;
	const struct ir_rule *first = NULL;
	for (uint32_t bit = 1; bit && left; bit <<= 1) {
		if (!(left & bit))
			continue;
		const struct ir_rule *S = NULL;
		/* nearest earlier rule with this access that overlaps R */
		for (size_t k = n; k-- > 0;) {
			const struct ir_rule *M = &p->rules[cand[k]];
			if (M->index >= R->index || !(M->access & bit))
				continue;
			if (lint_overlap(M, R) == PAT_NO)
				continue;
			if (!same_outcome(M, R) || lint_contains(M, R) != PAT_YES)
				break; /* something in between decides differently */
			S = M;
			break;
		}
		if (!S || S->loc.file != c->main)
			return;
		if (!first)
			first = S;
		left &= ~bit;
	}
	if (left || !first)
		return;
	char rt[1200], ot[1200], where[512];
	lint_rule_text(R, rt, sizeof rt);
	lint_rule_text(first, ot, sizeof ot);
	lint_where(c, R, first, where, sizeof where);
	struct diag *d = lint_report(c, "redundant-rule", R, first,
				     "%s is redundant: %s (%s) already %s all of it", rt, ot, where,
				     is_denying(R) ? "denies" : "allows");
	lint_note_rule(c, d, first, "this earlier rule covers it and nothing in between "
		       "changes that");
}

void lint_check_dead(struct lint_ctx *c, size_t limit, bool own_only)
{
	const struct ir_profile *p = c->prof;
	for (size_t i = 0; i < limit && i < p->nrules; i++) {
		const struct ir_rule *R = &p->rules[i];
		if (!in_scope(c, R, own_only))
			continue;
		size_t n;
		uint32_t *cand = candidates(c, R, &n);
		if (!cand)
			continue;
		size_t k = 0;
		for (size_t j = 0; j < n; j++)
			if (cand[j] < limit)
				cand[k++] = cand[j];
		n = k;
		if (!touches_protect(c, cand, n, R) && !shadowed_later(c, cand, n, limit, R))
			covered_earlier(c, cand, n, R);
		free(cand);
	}
}
