/*
 * test_eval.c - the IR evaluator: last match wins, default deny, protect
 * beats any allow in any order, glob and subtree matching, hosts and ports.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "path.h"
#include "cage.h"
#include "policy.h"

static cage_policy *compile(const char *text)
{
	cage_options *o = cage_options_new();
	cage_options_home(o, "/home/u");
	cage_policy *p = cage_load_string("t.cage", text, strlen(text), o);
	cage_options_free(o);
	cage_print_diagnostics(p, stderr, false);
	cr_assert_eq(cage_error_count(p), 0);
	return p;
}

static bool allowed(cage_policy *p, const char *access, const char *path)
{
	struct cage_verdict v;
	const char *err = NULL;
	cr_assert(cage_query_path(p, access, path, &v, &err), "%s", err);
	return v.allowed;
}

static bool host_allowed(cage_policy *p, const char *host, unsigned port)
{
	struct cage_verdict v;
	const char *err = NULL;
	cr_assert(cage_query_host(p, host, port, &v, &err), "%s", err);
	return v.allowed;
}

Test(eval, last_match_wins_and_default_deny)
{
	cage_policy *p = compile("cage 1\n"
				 "allow read write \"/w/**\"\n"
				 "deny write \"/w/.git/**\"\n"
				 "allow write \"/w/.git/COMMIT_EDITMSG\"\n");
	cr_expect(allowed(p, "write", "/w/src/a.c"));
	cr_expect(!allowed(p, "write", "/w/.git/config"), "later deny wins");
	cr_expect(allowed(p, "write", "/w/.git/COMMIT_EDITMSG"), "an even later allow wins");
	cr_expect(allowed(p, "read", "/w/.git/config"), "the deny was for write only");
	cr_expect(allowed(p, "read", "/w"), "a subtree includes its root");
	cr_expect(!allowed(p, "read", "/w2"), "a subtree is not a string prefix");
	cr_expect(!allowed(p, "read", "/etc/passwd"), "nothing matches: deny");
	cr_expect(!allowed(p, "exec", "/w/run.sh"), "exec was never granted");
	cr_expect(allowed(p, "create", "/w/new"), "write includes create");
	cr_expect(allowed(p, "delete", "/w/old"), "write includes delete");
	cr_expect(allowed(p, "read-metadata", "/w/x"), "read includes metadata");

	struct cage_verdict v;
	const char *err;
	cr_assert(cage_query_path(p, "write", "/w/.git/config", &v, &err));
	cr_expect_str_eq(v.rule, "deny write /w/.git/**");
	cr_expect_eq(v.line, 3);
	cr_expect_eq(v.column, 12);
	cr_assert(cage_query_path(p, "read", "/nowhere", &v, &err));
	cr_expect(v.by_default);
	cage_policy_free(p);
}

Test(eval, protect_cannot_be_reopened_in_any_order)
{
	cage_policy *p = compile("cage 1\n"
				 "protect read \"~/.ssh/**\"\n"
				 "allow read \"~/**\"\n"
				 "allow read \"~/.ssh/id_rsa\"\n"
				 "profile later { allow read \"/home/u/.ssh/**\" }\n");
	cr_expect(!allowed(p, "read", "~/.ssh/id_rsa"));
	cr_expect(!allowed(p, "read", "/home/u/.ssh/config"));
	cr_expect(allowed(p, "read", "~/.ssh-backup/key"), "a sibling with a longer name is outside");
	cr_expect(allowed(p, "read", "~/notes.txt"));
	cr_expect(allowed(p, "write", "~/.ssh/x") == false, "write was never granted");
	struct cage_verdict v;
	const char *err;
	cr_assert(cage_query_path(p, "read", "~/.ssh/id_rsa", &v, &err));
	cr_expect_str_eq(v.rule, "protect read ~/.ssh/**");
	cage_policy_free(p);
}

Test(eval, protect_except_leaves_its_excepts_to_the_other_rules)
{
	cage_policy *p = compile("cage 1\n"
				 "protect write \"/w/.git/**\" except \"/w/.git/objects/**\",\n"
				 "    \"/w/.git/*.lock\", \"/w/.git/modules/**/HEAD\"\n"
				 "allow read write \"/w/**\"\n"
				 "deny write \"/w/.git/objects/info/**\"\n");
	cr_expect(!allowed(p, "write", "/w/.git/config"), "the protect holds outside its excepts");
	cr_expect(!allowed(p, "create", "/w/.git/commondir"));
	cr_expect(!allowed(p, "delete", "/w/.git"), "the target's root is held too");
	cr_expect(allowed(p, "write", "/w/.git/objects/ab/cd"), "an except: the allow decides");
	cr_expect(allowed(p, "create", "/w/.git/index.lock"));
	cr_expect(allowed(p, "delete", "/w/.git/objects/ab"));
	cr_expect(!allowed(p, "delete", "/w/.git/objects"), "pinned: the deny below holds it");
	cr_expect(!allowed(p, "create", "/w/.git/hooks/x.lock"), "* is one component");
	cr_expect(allowed(p, "write", "/w/.git/modules/a/b/HEAD"), "** in an except");
	cr_expect(!allowed(p, "write", "/w/.git/modules/a/b/config"));
	cr_expect(!allowed(p, "write", "/w/.git/objects/info/alternates"),
		  "inside an except, the other rules decide, in order");
	cr_expect(allowed(p, "read", "/w/.git/config"), "the protect is for write only");
	cage_policy_free(p);
}

Test(eval, globs)
{
	cage_policy *p = compile("cage 1\n"
				 "allow read \"/p/*.log\", \"/q/**/id_*\", \"/r/?.txt\", \"/s/**/x/**\"\n");
	cr_expect(allowed(p, "read", "/p/a.log"));
	cr_expect(allowed(p, "read", "/p/.log"));
	cr_expect(!allowed(p, "read", "/p/sub/a.log"), "'*' does not cross '/'");
	cr_expect(allowed(p, "read", "/q/id_rsa"), "'**' matches zero components");
	cr_expect(allowed(p, "read", "/q/a/b/.ssh/id_ed25519"));
	cr_expect(!allowed(p, "read", "/q/a/xid_rsa"));
	cr_expect(allowed(p, "read", "/r/a.txt"));
	cr_expect(!allowed(p, "read", "/r/ab.txt"));
	cr_expect(allowed(p, "read", "/s/x"));
	cr_expect(allowed(p, "read", "/s/a/b/x/c/d"));
	cr_expect(!allowed(p, "read", "/s/a/xx/c"));
	cage_policy_free(p);
}

Test(eval, glob_matcher_truth_table)
{
	/* Every pattern against every path, answers worked out by hand from
	 * the definition in docs/language.md. */
	const char *pats[] = { "/a/*", "/**", "/a/**/b", "/*/b", "/a?", "/**/a*", "/a/*b*/**",
			       "/*/*", "/**/**/b" };
	const char *paths[] = { "/", "/a", "/a/b", "/a/a/b", "/ab", "/b/b", "/a/xbx/c", "/aa/b",
				"/b", "/a/b/b" };
	/* one row per pattern above, one column per path */
	bool expect[9][10] = {
		{ 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 },
		{ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
		{ 0, 0, 1, 1, 0, 0, 0, 0, 0, 1 },
		{ 0, 0, 1, 0, 0, 1, 0, 1, 0, 0 },
		{ 0, 0, 0, 0, 1, 0, 0, 0, 0, 0 },
		{ 0, 1, 0, 0, 1, 0, 0, 0, 0, 0 },
		{ 0, 0, 1, 0, 0, 0, 1, 0, 0, 1 },
		{ 0, 0, 1, 0, 0, 1, 0, 1, 0, 0 },
		{ 0, 0, 1, 1, 0, 1, 0, 1, 1, 1 },
	};
	for (size_t i = 0; i < 9; i++)
		for (size_t j = 0; j < 10; j++) {
			struct ir_path pat = { .text = pats[i] };
			path_classify(&pat);
			cr_expect_eq(path_match(&pat, paths[j]), expect[i][j], "%s vs %s", pats[i],
				     paths[j]);
		}
}

Test(eval, hosts_ports_and_ip_literals)
{
	cage_policy *p = compile("cage 1\n"
				 "allow connect \"github.com\", \"*.githubusercontent.com:443\", "
				 "\"*\" , \"localhost:3000\", \"10.1.2.3:22\", \"[::1]:8080\"\n"
				 "deny connect \"evil.example.com\"\n");
	cr_expect(host_allowed(p, "github.com", 443));
	cr_expect(host_allowed(p, "GitHub.COM.", 22), "case and one trailing dot are normalised");
	cr_expect(host_allowed(p, "raw.githubusercontent.com", 443));
	cr_expect(host_allowed(p, "anything.org", 80), "'*' names every host");
	cr_expect(!host_allowed(p, "evil.example.com", 443), "a later deny wins");
	cr_expect(!host_allowed(p, "93.184.216.34", 443), "'*' never matches an IP literal");
	cr_expect(host_allowed(p, "10.1.2.3", 22));
	cr_expect(!host_allowed(p, "10.1.2.3", 23));
	cr_expect(host_allowed(p, "[::1]", 8080));
	cr_expect(host_allowed(p, "0:0::1", 8080), "IPv6 is compared in canonical form");
	cage_policy_free(p);

	p = compile("cage 1\nallow connect \"*.example.com:443\", \"localhost:3000\"\n");
	cr_expect(!host_allowed(p, "example.com", 443), "a wildcard never matches the apex");
	cr_expect(host_allowed(p, "a.b.example.com", 443));
	cr_expect(!host_allowed(p, "a.example.com", 80));
	cr_expect(!host_allowed(p, "badexample.com", 443));
	cr_expect(host_allowed(p, "localhost", 3000));
	cr_expect(!host_allowed(p, "localhost", 3001), "localhost rules are per port");
	cage_policy_free(p);
}

Test(eval, mach_services)
{
	cage_policy *p = compile("cage 1\nallow mach \"com.apple.trustd.agent\", \"com.example.*\"\n");
	cr_expect(allowed(p, "mach", "com.apple.trustd.agent"));
	cr_expect(allowed(p, "mach", "com.example.helper"));
	cr_expect(!allowed(p, "mach", "com.apple.SecurityServer"));
	cage_policy_free(p);
}

/* Translates a pattern to an anchored POSIX regex by the definition: a
 * `**` component is zero or more whole components, `*` and `?` stay
 * within one component. */
#include <regex.h>
#include <stdlib.h>

static void glob_to_regex(const char *pat, char *out, size_t size)
{
	size_t n = 0;
	out[n++] = '^';
	const char *p = pat;
	while (*p && n + 16 < size) {
		if (p[0] == '/' && p[1] == '*' && p[2] == '*' && (p[3] == '/' || p[3] == '\0')) {
			n += (size_t)snprintf(out + n, size - n, "(/[^/]+)*");
			p += 3;
			continue;
		}
		if (*p == '*')
			n += (size_t)snprintf(out + n, size - n, "[^/]*");
		else if (*p == '?')
			n += (size_t)snprintf(out + n, size - n, "[^/]");
		else
			out[n++] = *p;
		p++;
	}
	out[n++] = '$';
	out[n] = '\0';
}

Test(eval, glob_matcher_agrees_with_regex_translation)
{
	static const char *comps[] = { "a", "b", "ab", "*", "?", "**", "a*", "*b", "?b", "a*b" };
	static const char *pcomps[] = { "a", "b", "ab", "ba", "aab", "bb" };
	unsigned seed = 12345;
	size_t checked = 0;
	for (int i = 0; i < 3000; i++) {
		char pat[128] = "";
		int nc = 1 + (int)(rand_r(&seed) % 4);
		for (int c = 0; c < nc; c++) {
			strcat(pat, "/");
			strcat(pat, comps[rand_r(&seed) % 10]);
		}
		char re[512];
		glob_to_regex(pat, re, sizeof(re));
		regex_t rx;
		cr_assert_eq(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0, "%s", re);
		struct ir_path ip = { .text = pat };
		path_classify(&ip);
		for (int j = 0; j < 40; j++) {
			char path[128] = "";
			int np = (int)(rand_r(&seed) % 5);
			for (int c = 0; c < np; c++) {
				strcat(path, "/");
				strcat(path, pcomps[rand_r(&seed) % 6]);
			}
			if (np == 0)
				continue; /* the root has no components: see the truth table */
			bool want = regexec(&rx, path, 0, NULL, 0) == 0;
			cr_expect_eq(path_match(&ip, path), want, "%s vs %s (regex %s)", pat, path, re);
			checked++;
		}
		regfree(&rx);
	}
	cr_expect_gt(checked, 50000);
}

/* ir_eval_path_bits answers every access in one walk over the rules; it
 * must give exactly one ir_eval_path per access, rule and pin included,
 * on the shipped examples (protects, guards, pins, re-opened denies). */
Test(eval, all_accesses_at_once_agree_with_one_at_a_time)
{
	static const char *const examples[] = { "claude-code", "codex", "gemini", "layered" };
	static const char *const paths[] = {
		"/w", "/w/src/a.c", "/w/.git", "/w/.git/config", "/w/.git/hooks/pre-commit",
		"/w/.git/modules/m/hooks/x", "/w/.envrc", "/w/.vscode/tasks.json",
		"/w/.claude/settings.json", "/h/.ssh/id_rsa", "/h/.claude/x", "/h", "/etc/passwd",
		"/usr/bin/git", "/tmp/x", "/", "/w/.git/index.lock", "/w/.git/objects/ab/cd",
		"/w/.git/commondir", "/w/.git/modules/a/b/config", "/w/.git/modules/a/b/HEAD",
		"/w/.git/worktrees/x/commondir", "/w/.git/worktrees/x/index",
	};
	static const uint32_t bits[] = { IR_A_READ, IR_A_READ_META, IR_A_WRITE, IR_A_CREATE,
					 IR_A_DELETE, IR_A_EXEC };
	for (size_t e = 0; e < sizeof examples / sizeof *examples; e++) {
		char file[512];
		snprintf(file, sizeof file, "%s/examples/%s.cage", CAGE_SOURCE_DIR, examples[e]);
		cage_options *o = cage_options_new();
		cage_options_target(o, "linux");
		cage_options_home(o, "/h");
		cage_options_stdlib(o, CAGE_SOURCE_DIR "/stdlib");
		cr_assert(cage_options_define(o, "workspace=/w"));
		cage_policy *pol = cage_load_file(file, o);
		cage_options_free(o);
		cr_assert(pol && cage_error_count(pol) == 0, "%s does not compile", file);
		const struct ir_profile *p = pol->ir->selected;
		for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
			struct ir_verdict all[6];
			ir_eval_path_bits(p, IR_A_FILE, paths[i], all);
			for (size_t k = 0; k < sizeof bits / sizeof *bits; k++) {
				struct ir_verdict one;
				ir_eval_path(p, bits[k], paths[i], &one);
				const struct ir_verdict *v = &all[__builtin_ctz(bits[k])];
				cr_expect(v->allowed == one.allowed && v->rule == one.rule &&
						  v->pin == one.pin,
					  "%s: %s access %#x", examples[e], paths[i], bits[k]);
			}
		}
		cage_policy_free(pol);
	}
}
