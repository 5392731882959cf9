/*
 * test_lplan_check.c - the Linux plan is never wider than the policy.
 *
 * A property test: thousands of policies from a seeded generator (the
 * same ones every run), whose paths are siblings that sort between a
 * directory and its children byte by byte (`X`, `X.json`, `X-old`, `X+1`
 * beside `X/...`), with guards, protects and denies nested inside grants,
 * over a fixture tree made per run. Each plan is compared with the IR by
 * lplan_check on every path the policy or the plan names and their
 * parents: no access the sandbox allows may be one the policy denies.
 * Then the check itself, over a plan made wider by hand, and (on Linux,
 * where the launcher is built) the launcher's refusal of it.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lplan.h"
#include "cage.h"
#include "fx_policy.h"
#include "fx_tree.h"
#include "policy.h"
#include "run.h"
#ifdef __linux__
#include "lnx_plancheck.h"
#endif

static struct fx_tree fx;

static void setup(void)
{
	fx_make(&fx, "lpcheck");
	static const char *const dirs[] = { "X", "X/a", "X/b", "X/b/c", "X-old", "X.d", "w",
					    "w/.git", "w/.git/hooks" };
	static const char *const files[] = { "X.json", "X+1", "X/settings.json", "X/a/f",
					     "X/b/c/g", "X-old/h", "X.d/i", "w/.git/config",
					     "w/.git/hooks/pre-commit", "w/src.c" };
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
		fx_mkdirs(&fx, dirs[i]);
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		fx_file(&fx, files[i], "", 0644);
}

static void teardown(void)
{
	fx_remove(&fx);
}

static cage_policy *load(const char *body)
{
	return fx_policy(&fx, body);
}

/* xorshift64*: the same policies on every run. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static const char *pick(uint64_t *s, const char *const *v, size_t n)
{
	return v[next(s) % n];
}

#define N(v) (sizeof v / sizeof *v)

static const char *const targets[] = {
	"{r}/**",	   "{r}/X",	      "{r}/X/**",	  "{r}/X.json",
	"{r}/X-old/**",	   "{r}/X+1",	      "{r}/X.d/**",	  "{r}/X/settings.json",
	"{r}/X/a/**",	   "{r}/X/b/**",      "{r}/X/b/c/**",	  "{r}/X/b/c/g",
	"{r}/X/*.json",	   "{r}/X/new/**",    "{r}/X/new.json",	  "{r}/X-new",
	"{r}/w/**",	   "{r}/w/.git/**",   "{r}/w/.git/hooks/**", "{r}/w/.git/config",
	"{r}/w/**/.git/config", "{r}/X*/**", "{r}/X/a/f",	  "{r}/w/src.c",
	"{r}/X/",	   "{r}/X-old",	      "{r}/X.json/**",	  "{r}/X+1/**",
};
static const char *const grants[] = { "read", "read write", "read write exec", "read exec",
				      "write", "read create", "read write create delete" };
static const char *const denials[] = { "write", "read", "exec", "create", "", "write exec",
				       "delete" };

/* One policy: a grant or two over the tree, then denials and protects
 * inside, in any order. */
static void gen(uint64_t *s, char *buf, size_t size)
{
	size_t n = 0;
	unsigned rules = 2 + (unsigned)(next(s) % 6);
	for (unsigned i = 0; i < rules; i++) {
		unsigned kind = (unsigned)(next(s) % 10);
		const char *eff, *acc;
		if (i == 0 || kind < 4) {
			eff = "allow";
			acc = pick(s, grants, N(grants));
		} else {
			eff = kind < 7 ? "deny" : "protect";
			acc = pick(s, denials, N(denials));
			if (!*acc && !strcmp(eff, "deny"))
				acc = "write";
		}
		int w = snprintf(buf + n, size - n, "    %s %s \"%s\"\n", eff, acc,
				 pick(s, targets, N(targets)));
		cr_assert(w > 0 && (size_t)w < size - n);
		n += (size_t)w;
	}
}

TestSuite(lplan_check, .init = setup, .fini = teardown);

Test(lplan_check, components_sort_before_siblings)
{
	/* The byte order this replaced put X.json between X and X/a. */
	cr_expect_lt(lplan_path_cmp("/r/X", "/r/X/a"), 0);
	cr_expect_lt(lplan_path_cmp("/r/X/a", "/r/X.json"), 0);
	cr_expect_lt(lplan_path_cmp("/r/X/zzz", "/r/X+1"), 0);
	cr_expect_lt(lplan_path_cmp("/r/X/zzz", "/r/X-old"), 0);
	cr_expect_lt(lplan_path_cmp("/", "/a"), 0);
	cr_expect_eq(lplan_path_cmp("/r/X", "/r/X"), 0);
	cr_expect_gt(strcmp("/r/X/a", "/r/X.json"), 0, "the old order, for the record");
}

Test(lplan_check, the_guard_of_a_file_beside_a_sibling_is_planned)
{
	/* examples/claude-code.cage's ~/.claude, ~/.claude.json and
	 * ~/.claude/settings.json, in miniature. */
	cage_policy *pol = load("    allow read write \"{r}/X/**\"\n"
				"    allow read write \"{r}/X.json\"\n"
				"    protect write \"{r}/X/settings.json\"\n");
	cr_assert_eq(cage_error_count(pol), 0);
	struct lplan plan;
	const char *err = NULL;
	cr_assert(lplan_build(&pol->arena, pol->ir->selected, &plan, &err));
	char want[512];
	snprintf(want, sizeof want, "%s/X/settings.json", fx.root);
	bool ro = false;
	for (size_t i = 0; i < plan.nnodes; i++)
		if (!strcmp(plan.nodes[i].path, want))
			ro = plan.nodes[i].mount & LPM_RDONLY;
	cr_expect(ro, "the protected file is a read-only mount");
	struct lplan_widening *w;
	size_t nw;
	lplan_check(&pol->arena, &plan, &w, &nw, NULL);
	cr_expect_eq(nw, 0);
	cage_policy_free(pol);
}

Test(lplan_check, thousands_of_policies_have_no_widening, .timeout = 240)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	size_t planned = 0, refused = 0, paths = 0;
	enum { COUNT = 10000 };
	for (unsigned k = 0; k < COUNT; k++) {
		char body[4096];
		gen(&seed, body, sizeof body);
		cage_policy *pol = load(body);
		if (cage_error_count(pol)) {
			/* the generator's mistakes (a protect that beats an allow is a
			 * lint matter, not a compile error) */
			cage_policy_free(pol);
			continue;
		}
		struct lplan plan;
		const char *err = NULL;
		cr_assert(lplan_build(&pol->arena, pol->ir->selected, &plan, &err));
		if (plan.nerrors) {
			/* refused as inexpressible: nothing runs */
			refused++;
			cage_policy_free(pol);
			continue;
		}
		struct lplan_widening *w;
		size_t nw;
		struct lplan_check_stats st;
		lplan_check(&pol->arena, &plan, &w, &nw, &st);
		paths += st.paths;
		if (nw) {
			char text[2400];
			lplan_widening_text(&w[0], text, sizeof text);
			cr_assert_fail("policy %u is planned wider than written:\n%s%s", k, body, text);
		}
		planned++;
		cage_policy_free(pol);
	}
	cr_log_info("%zu plans checked (%zu paths), %zu refused", planned, paths, refused);
	cr_expect_gt(planned, COUNT / 4, "the generator makes plans that run");
}

/* A plan made wider than its policy by hand: the grant on X is widened
 * to writing, which the policy does not allow. */
static void widened(cage_policy **polp, struct lplan *plan)
{
	cage_policy *pol = load("    allow read \"{r}/X/**\"\n");
	cr_assert_eq(cage_error_count(pol), 0);
	const char *err = NULL;
	cr_assert(lplan_build(&pol->arena, pol->ir->selected, plan, &err));
	struct lplan_widening *w;
	size_t nw;
	lplan_check(&pol->arena, plan, &w, &nw, NULL);
	cr_assert_eq(nw, 0, "as built, the plan is exact");
	bool found = false;
	for (size_t i = 0; i < plan->nnodes; i++)
		if (plan->nodes[i].grant) {
			plan->nodes[i].grant |= LP_WRITE_FILE;
			found = true;
		}
	cr_assert(found);
	*polp = pol;
}

Test(lplan_check, finds_a_widened_grant_and_names_the_path)
{
	cage_policy *pol;
	struct lplan plan;
	widened(&pol, &plan);
	struct lplan_widening *w;
	size_t nw;
	lplan_check(&pol->arena, &plan, &w, &nw, NULL);
	cr_assert_gt(nw, 0);
	bool below = false;
	char want[512];
	/* Asked about as it exists: the hypothetical other name stands for
	 * the entries that are there (lplan_check.c, ck_real_entries). */
	snprintf(want, sizeof want, "%s/X/settings.json", fx.root);
	for (size_t i = 0; i < nw; i++) {
		cr_expect_eq(w[i].access, IR_A_WRITE);
		below |= !strcmp(w[i].path, want);
	}
	cr_expect(below, "the entry below the grant that no rule names");
	cage_policy_free(pol);
}

#ifdef __linux__
Test(lplan_check, the_launcher_refuses_a_wider_plan_with_125)
{
	cage_policy *pol;
	struct lplan plan;
	widened(&pol, &plan);
	char *buf = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&buf, &len);
	cr_assert(err);
	int rc = lnx_plan_refuse_wider(&pol->arena, &plan, err, false);
	fclose(err);
	cr_expect_eq(rc, RUN_SETUP_FAILED);
	char want[600];
	snprintf(want, sizeof want, "cagerun: error: the sandbox would allow write %s/X/settings.json, "
		 "which no rule allows", fx.root);
	cr_expect(strstr(buf, want), "names the path and access:\n%s", buf);
	cr_expect(strstr(buf, "nothing was run"), "%s", buf);
	free(buf);
	cage_policy_free(pol);
}
#endif

Test(lplan_check, a_denying_rule_is_named_with_its_location)
{
	cage_policy *pol = load("    allow read \"{r}/X/**\"\n    deny read \"{r}/X/a/**\"\n");
	cr_assert_eq(cage_error_count(pol), 0);
	struct lplan plan;
	const char *err = NULL;
	cr_assert(lplan_build(&pol->arena, pol->ir->selected, &plan, &err));
	/* Take the hiding mount away: reading X/a/f is then wider. */
	for (size_t i = 0; i < plan.nnodes; i++)
		plan.nodes[i].mount = 0;
	struct lplan_widening *w;
	size_t nw;
	lplan_check(&pol->arena, &plan, &w, &nw, NULL);
	cr_assert_gt(nw, 0);
	char text[2400];
	lplan_widening_text(&w[0], text, sizeof text);
	cr_expect(strstr(text, "t.cage:5:"), "the rule's line: %s", text);
	cr_expect(strstr(text, "deny read"), "%s", text);
	cr_expect(strstr(text, "would allow read"), "%s", text);
	cage_policy_free(pol);
}

Test(lplan_check, explain_and_the_check_agree_on_a_symlink_delete)
{
	/* delete acts on the link, not where it leads: the answer is the
	 * link's directory's. */
	char link[PATH_MAX], target[PATH_MAX];
	fx_at(&fx, target, "X/a/f");
	fx_at(&fx, link, "w/ln");
	fx_link(&fx, target, "w/ln");
	cage_policy *pol = load("    allow read write \"{r}/w/**\"\n    allow read \"{r}/X/**\"\n");
	cr_assert_eq(cage_error_count(pol), 0);
	struct lplan plan;
	const char *err = NULL;
	cr_assert(lplan_build(&pol->arena, pol->ir->selected, &plan, &err));
	struct lplan_answer ans;
	cr_assert(lplan_query(&pol->arena, &plan, IR_A_DELETE, link, &ans));
	cr_expect(ans.allowed, "deleting a link in a writable tree");
	cr_expect_str_eq(ans.resolved, link);
	cr_assert(lplan_query(&pol->arena, &plan, IR_A_WRITE, link, &ans));
	cr_expect(!ans.allowed, "writing through it reaches a read-only file");
	cr_expect_str_eq(ans.resolved, target);
	/* and the other way: a link to a writable file, in a read-only tree */
	cage_policy_free(pol);
	pol = load("    allow read \"{r}/w/**\"\n    allow read write \"{r}/X/**\"\n");
	cr_assert(lplan_build(&pol->arena, pol->ir->selected, &plan, &err));
	cr_assert(lplan_query(&pol->arena, &plan, IR_A_DELETE, link, &ans));
	cr_expect(!ans.allowed, "deleting a link in a read-only tree, to a writable file");
	cage_policy_free(pol);
}
