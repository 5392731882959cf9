/*
 * test_lint.c - the checker's shortcuts must not change its answers.
 *
 * The rule indexes (lint_index.c) skip every pair of rules whose literal
 * prefixes (or reversed host names) rule out a shared target. These tests
 * generate random policies and compare against doing it the slow way: the
 * indexed evaluator against ir_eval_path on every path, and the candidate
 * lists against all pairs that really overlap. Plus findings through the
 * library: one report per rule pair however many profiles copy it, and
 * suppressions matched by line.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint_int.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static const char *const comps[] = { "a", "b", "ab", ".x", "*", "?", "**", "a*", "*b" };
static const char *const words[] = { "a", "b", "ab", ".x", "c" };

static void random_pattern(char *out, size_t size, bool glob)
{
	size_t n = 0;
	unsigned depth = 1 + rnd(4);
	for (unsigned i = 0; i < depth; i++) {
		const char *c = glob ? comps[rnd(9)] : words[rnd(5)];
		n += (size_t)snprintf(out + n, size - n, "/%s", c);
	}
}

static struct cage_policy *random_policy(size_t nrules)
{
	size_t cap = nrules * 64 + 256, n = 0;
	char *text = malloc(cap);
	cr_assert(text);
	n += (size_t)snprintf(text + n, cap - n, "cage 1\nprofile p {\n");
	static const char *const eff[] = { "allow", "deny", "protect" };
	static const char *const acc[] = { "read", "write", "read write", "exec" };
	for (size_t i = 0; i < nrules; i++) {
		char pat[128];
		random_pattern(pat, sizeof pat, rnd(2));
		n += (size_t)snprintf(text + n, cap - n, "    %s %s \"%s\"\n", eff[rnd(10) < 6 ? 0 : rnd(10) < 8 ? 1 : 2],
				      acc[rnd(4)], pat);
	}
	static const char *const hosts[] = { "a.com", "*.a.com", "b.a.com", "*.b.a.com", "*",
					     "a.org", "*.org", "x.b.a.com:443", "*.com:80,443",
					     "10.0.0.1", "[::1]:8080", "localhost:3000" };
	for (size_t i = 0; i < nrules / 4; i++)
		n += (size_t)snprintf(text + n, cap - n, "    %s connect \"%s\"\n",
				      rnd(2) ? "allow" : "deny", hosts[rnd(12)]);
	snprintf(text + n, cap - n, "}\n");
	cage_options *o = cage_options_new();
	cage_options_home(o, "/home/u");
	struct cage_policy *pol = cage_load_string("rand.cage", text, strlen(text), o);
	cage_options_free(o);
	free(text);
	cr_assert(pol);
	cr_assert_eq(pol->diags.errors, 0, "generated policy does not compile");
	return pol;
}

Test(lint_index, indexed_evaluator_matches_ir_eval_path)
{
	for (int round = 0; round < 20; round++) {
		struct cage_policy *pol = random_policy(60);
		struct lint_opts o = { 0 };
		struct lint_ctx c = { .pol = pol, .ir = pol->ir, .o = &o, .prof = pol->ir->selected };
		lint_ix_build(&c);
		unsigned allowed = 0, decided = 0;
		for (int k = 0; k < 400; k++) {
			char path[128];
			random_pattern(path, sizeof path, false);
			static const uint32_t bits[] = { IR_A_READ, IR_A_WRITE, IR_A_EXEC, IR_A_DELETE };
			uint32_t bit = bits[rnd(4)];
			struct ir_verdict a, b;
			ir_eval_path(c.prof, bit, path, &a);
			lint_eval_path(&c, bit, IR_T_PATH, path, &b);
			if (bit == IR_A_DELETE && !a.allowed && a.rule &&
			    (a.pin || ir_is_guard(c.prof, a.rule))) {
				/* a pin or a guard (ir_pins.c) took a delete away;
				 * lint's evaluator asks the rules alone */
				continue;
			}
			cr_assert_eq(a.allowed, b.allowed, "verdicts differ on %s", path);
			cr_assert_eq(a.rule, b.rule, "deciding rules differ on %s", path);
			allowed += a.allowed;
			decided += a.rule != NULL;
		}
		/* the comparison must have seen both answers */
		cr_assert_gt(allowed, 0);
		cr_assert_lt(allowed, 400);
		cr_assert_gt(decided, allowed);
		lint_ix_free(&c);
		free(c.cand);
		cage_policy_free(pol);
	}
}

static bool in_cand(const struct lint_ctx *c, uint32_t rule)
{
	for (size_t i = 0; i < c->ncand; i++)
		if (c->cand[i] == rule)
			return true;
	return false;
}

Test(lint_index, candidates_include_every_overlapping_rule)
{
	unsigned pairs = 0;
	for (int round = 0; round < 10; round++) {
		struct cage_policy *pol = random_policy(80);
		struct lint_opts o = { 0 };
		struct lint_ctx c = { .pol = pol, .ir = pol->ir, .o = &o, .prof = pol->ir->selected };
		lint_ix_build(&c);
		const struct ir_profile *p = c.prof;
		for (size_t i = 0; i < p->nrules; i++) {
			const struct ir_rule *a = &p->rules[i];
			if (a->tkind == IR_T_PATH)
				lint_ix_comparable(&c, a->t.path.text, a->t.path.lit_prefix, IR_T_PATH);
			else if (a->tkind == IR_T_HOST)
				lint_ix_hosts(&c, a);
			else
				continue;
			for (size_t j = 0; j < p->nrules; j++) {
				const struct ir_rule *b = &p->rules[j];
				if (b->tkind != a->tkind || lint_overlap(a, b) == PAT_NO)
					continue;
				pairs++;
				cr_assert(in_cand(&c, (uint32_t)j), "rule %zu overlaps rule %zu but is no candidate",
					  j, i);
			}
		}
		lint_ix_free(&c);
		free(c.cand);
		cage_policy_free(pol);
	}
	cr_assert_gt(pairs, 1000);
}

static struct cage_policy *lint_text(const char *text)
{
	cage_options *o = cage_options_new();
	cage_options_home(o, "/home/u");
	struct cage_policy *pol = cage_load_string("t.cage", text, strlen(text), o);
	cage_options_free(o);
	cr_assert(pol);
	struct lint_opts lo = { 0 };
	lint_policy(pol, &lo);
	return pol;
}

static size_t count_id(const struct cage_policy *pol, const char *id, unsigned line)
{
	size_t n = 0;
	for (size_t i = 0; i < pol->diags.n; i++)
		if (strcmp(pol->diags.items[i]->id, id) == 0 &&
		    (!line || pol->diags.items[i]->loc.line == line))
			n++;
	return n;
}

Test(lint_findings, one_report_however_many_profiles_copy_the_rules)
{
	struct cage_policy *pol = lint_text("cage 1\n"
					    "deny read \"~/k/**\"\n"
					    "allow read \"~/k/pub\"\n"
					    "profile a { allow read \"~/x/**\" }\n"
					    "profile b extends a { allow read \"~/y/**\" }\n"
					    "profile c extends b { allow read \"~/z/**\" }\n");
	cr_expect_eq(count_id(pol, "unsafe-order", 3), 1);
	cr_expect_eq(pol->diags.errors, 1);
	cage_policy_free(pol);
}

Test(lint_findings, suppression_applies_to_the_next_code_line_only)
{
	struct cage_policy *pol = lint_text("cage 1\n"
					    "profile p {\n"
					    "    # cage: allow broad-host — crawler\n"
					    "\n"
					    "    allow connect \"*\"\n"
					    "    allow connect \"*.com\"\n"
					    "}\n");
	cr_expect_eq(count_id(pol, "broad-host", 5), 0);
	cr_expect_eq(count_id(pol, "broad-host", 6), 1);
	cr_expect_eq(count_id(pol, "unused-suppression", 0), 0);
	cage_policy_free(pol);
}

Test(lint_findings, near_misses_stay_quiet)
{
	struct cage_policy *pol = lint_text("cage 1\n"
					    "protect \"~/.ssh/**\"\n"
					    "profile p {\n"
					    "    deny read \"~/.ssh/**\"\n"
					    "    allow read \"~/.ssh-backup/**\"\n"
					    "    allow read \"~/src/**\"\n"
					    "    deny write \"~/src/.git/hooks/**\"\n"
					    "    allow connect \"*.githubusercontent.com:443\", \"localhost:3000\"\n"
					    "}\n");
	cr_expect_eq(pol->diags.n, 1, "only the redundant deny under the protect");
	cr_expect_eq(count_id(pol, "redundant-rule", 4), 1);
	cage_policy_free(pol);
}
