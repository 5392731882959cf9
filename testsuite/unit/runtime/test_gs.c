/*
 * test_gs.c - the launch-time git discovery (runtime/gitscan/): sh word
 * splitting of command-valued settings, and gs_extend on a scratch
 * filesystem: the policy's git protects (excepts included) re-rooted onto
 * a nested repository, configured paths protected, nothing added outside
 * the writable trees, and no discovery without a git section.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs.h"
#include "gs_cmd.h"
#include "ir.h"
#include "cage.h"
#include "policy.h"

static struct gs_words words(const char *cmd, bool *ok, char *why, size_t wl)
{
	struct gs_words w = { 0 };
	*ok = gs_cmd_paths(cmd, "/home/u", &w, why, wl);
	return w;
}

Test(gs_cmd, words_with_a_slash_are_paths)
{
	char why[256];
	bool ok;
	struct gs_words w = words("python3 tools/conv.py --x=1 | less -R", &ok, why, sizeof why);
	cr_assert(ok, "%s", why);
	cr_assert_eq(w.n, 1);
	cr_assert_str_eq(w.v[0], "tools/conv.py");
	gs_words_free(&w);
	w = words("'./my tool' \"a/\"b c\\/d ~/bin/x $HOME/y ${HOME}/z;./e&&./f", &ok, why,
		  sizeof why);
	cr_assert(ok, "%s", why);
	cr_assert_eq(w.n, 8);
	const char *want[] = { "./my tool", "a/b", "c/d", "/home/u/bin/x", "/home/u/y",
			       "/home/u/z", "./e", "./f" };
	for (size_t i = 0; i < 8; i++)
		cr_assert_str_eq(w.v[i], want[i]);
	gs_words_free(&w);
}

Test(gs_cmd, comments_and_positional_parameters)
{
	char why[256];
	bool ok;
	struct gs_words w = words("f() { test \"$1\" = get && echo ok; }; f # ./not", &ok, why,
				  sizeof why);
	cr_assert(ok, "%s", why);
	cr_assert_eq(w.n, 0);
	gs_words_free(&w);
}

Test(gs_cmd, what_cannot_be_known_is_an_error)
{
	const char *bad[] = { "$EDITOR", "\"$(cat x)\"", "`cat x`", "~other/bin/x", "${X}/y",
			      "sh \"$1/x\"", "ls [ab]/c", "'open", "\"open" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char why[256];
		bool ok;
		struct gs_words w = words(bad[i], &ok, why, sizeof why);
		cr_assert(!ok, "accepted: %s", bad[i]);
		cr_assert(why[0]);
		cr_assert_eq(w.n, 0);
	}
}

/* ---- gs_extend ---- */

static char root[256];

static void mk(const char *rel, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	if (!text) {
		char cmd[600];
		snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
		cr_assert_eq(system(cmd), 0);
		return;
	}
	FILE *f = fopen(p, "w");
	cr_assert(f, "%s", p);
	fputs(text, f);
	fclose(f);
}

/* A workspace with its own repository and one nested in sub/. */
static void fixture(void)
{
	snprintf(root, sizeof root, "/tmp/cage-test-gs.XXXXXX");
	cr_assert(mkdtemp(root));
	char real[256];
	cr_assert(realpath(root, real));
	snprintf(root, sizeof root, "%s", real);
	mk("ws/.git/objects", NULL);
	mk("ws/.git/refs", NULL);
	mk("ws/.git/HEAD", "ref: refs/heads/main\n");
	mk("ws/.git/config", "[core]\n\thooksPath = .hooks\n\tpager = ./bin/pg -R\n");
	mk("ws/sub/.git/objects", NULL);
	mk("ws/sub/.git/refs", NULL);
	mk("ws/sub/.git/HEAD", "ref: refs/heads/main\n");
	mk("ws/sub/.git/config", "[core]\n\tfsmonitor = true\n");
	mk("home", NULL);
}

static void cleanup(void)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	(void)system(cmd);
}

static cage_policy *load(const char *rules)
{
	char text[2048], def[512], home[300];
	snprintf(text, sizeof text,
		 "cage 1\nparam workspace : path\nprofile p {\n"
		 "    allow read write \"{workspace}/**\"\n%s}\n", rules);
	cage_options *o = cage_options_new();
	snprintf(def, sizeof def, "workspace=%s/ws", root);
	snprintf(home, sizeof home, "%s/home", root);
	cage_options_define(o, def);
	cage_options_home(o, home);
	cage_policy *p = cage_load_string("t.cage", text, strlen(text), o);
	cage_options_free(o);
	cr_assert(p && cage_error_count(p) == 0);
	return p;
}

static bool writable(const cage_policy *p, const char *rel)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	struct ir_verdict v;
	ir_eval_path(p->ir->selected, IR_A_WRITE, path, &v);
	return v.allowed;
}

Test(gs_extend, reroots_the_git_section_with_its_excepts, .init = fixture, .fini = cleanup)
{
	/* Neither HOME nor the system's files may add anything here. */
	setenv("GIT_CONFIG_SYSTEM", "/nonexistent", 1);
	cage_policy *p = load("    protect write \"{workspace}/.git/**\" except "
			      "\"{workspace}/.git/objects/**\", \"{workspace}/.git/index\"\n");
	cr_assert(writable(p, "ws/sub/.git/config"));
	struct gs_result r;
	char err[2048];
	cr_assert(gs_extend(p, &r, NULL, err, sizeof err), "%s", err);
	cr_assert(r.active);
	cr_assert(!writable(p, "ws/sub/.git/config"));
	cr_assert(!writable(p, "ws/sub/.git/hooks/pre-commit"));
	cr_assert(writable(p, "ws/sub/.git/objects/ab/cdef"));
	cr_assert(writable(p, "ws/sub/.git/index"));
	cr_assert(!writable(p, "ws/.hooks/pre-commit"));
	cr_assert(!writable(p, "ws/bin/pg"));
	cr_assert(writable(p, "ws/bin/other"));
	cr_assert(writable(p, "ws/f"));
	/* The rules name their synthetic source, line by line. */
	const struct ir_profile *pr = p->ir->selected;
	const struct ir_rule *last = &pr->rules[pr->nrules - 1];
	cr_assert_str_eq(last->loc.file->name, "<discovered>");
	cr_assert_eq(last->loc.line, r.nrules);
	cr_assert(strstr(last->loc.file->text, "except \""));
	gs_result_free(&r);
	cage_policy_free(p);
}

Test(gs_extend, nothing_without_a_git_section, .init = fixture, .fini = cleanup)
{
	cage_policy *p = load("");
	size_t n = p->ir->selected->nrules;
	struct gs_result r;
	char err[2048];
	cr_assert(gs_extend(p, &r, NULL, err, sizeof err), "%s", err);
	cr_assert(!r.active);
	cr_assert_eq(p->ir->selected->nrules, n);
	gs_result_free(&r);
	cage_policy_free(p);
}

Test(gs_extend, an_unreadable_config_refuses, .init = fixture, .fini = cleanup)
{
	mk("ws/sub/.git/config", "[core]\n\tpager = \"$(cat x)\"\n");
	cage_policy *p = load("    protect write \"{workspace}/.git/config\"\n");
	struct gs_result r;
	char err[2048];
	cr_assert(!gs_extend(p, &r, NULL, err, sizeof err));
	cr_assert(strstr(err, "core.pager"), "%s", err);
	gs_result_free(&r);
	cage_policy_free(p);
}
