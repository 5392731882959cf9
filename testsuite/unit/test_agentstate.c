/*
 * test_agentstate.c - the agents' own copies of their mixed config files
 * (runtime/agentstate.c): seeded once from the user's file, left alone
 * afterwards, never written through a link, named in the environment, and
 * for Gemini CLI the rest of its folder linked in.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentstate.h"

static char home[512];

static void setup(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(home, sizeof home, "%.200s/cage-agentstate.XXXXXX", t ? t : "/tmp");
	cr_assert(mkdtemp(home));
}

static void teardown(void)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
	cr_expect(system(cmd) == 0);
}

TestSuite(agentstate, .init = setup, .fini = teardown);

static void put_file(const char *rel, const char *text)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", home, rel);
	FILE *f = fopen(p, "w");
	cr_assert(f, "%s", p);
	fputs(text, f);
	fclose(f);
}

static char *get_file(const char *rel)
{
	static char buf[4096];
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", home, rel);
	FILE *f = fopen(p, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static const char *env_of(const struct agentstate *st, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; st->env[i]; i++)
		if (!strncmp(st->env[i], name, n) && st->env[i][n] == '=')
			return st->env[i] + n + 1;
	return NULL;
}

/* A policy that loaded `module` (as the stdlib's file) and its home. */
static bool prepare(const char *module, struct agentstate *st, char *err, size_t len)
{
	char real[PATH_MAX];
	snprintf(real, sizeof real, "/usr/share/cage/stdlib/%s.cage", module);
	struct src_file main = { .name = "policy.cage", .realpath = "/work/policy.cage" };
	struct src_file mod = { .name = "std/agents/x.cage", .realpath = real };
	const struct src_file *files[] = { &main, &mod };
	struct ir_policy ir = { .files = files, .nfiles = module ? 2 : 1, .home = home };
	return agentstate_prepare(&ir, st, err, len);
}

Test(agentstate, claude_copy_is_seeded_once_and_named_in_the_environment)
{
	put_file(".claude.json", "{\"userID\":\"u1\"}\n");
	struct agentstate st;
	char err[512], want[1024];
	cr_assert(prepare("linux/std/agents/claude", &st, err, sizeof err), "%s", err);
	cr_expect(st.seeded);
	cr_expect_str_eq(get_file(".claude/.claude.json"), "{\"userID\":\"u1\"}\n");
	snprintf(want, sizeof want, "%s/.claude", home);
	cr_expect_str_eq(env_of(&st, "CLAUDE_CONFIG_DIR"), want);
	cr_expect_str_eq(env_of(&st, "CLAUDE_SECURESTORAGE_CONFIG_DIR"), "");
	/* The caged runs' state survives; the user's later changes do not
	 * overwrite it. */
	put_file(".claude/.claude.json", "{\"caged\":1}\n");
	put_file(".claude.json", "{\"userID\":\"u2\"}\n");
	cr_assert(prepare("linux/std/agents/claude", &st, err, sizeof err), "%s", err);
	cr_expect(!st.seeded);
	cr_expect_str_eq(get_file(".claude/.claude.json"), "{\"caged\":1}\n");
	cr_expect_str_eq(get_file(".claude.json"), "{\"userID\":\"u2\"}\n");
}

Test(agentstate, no_user_file_no_copy)
{
	struct agentstate st;
	char err[512];
	cr_assert(prepare("macos/std/agents/claude", &st, err, sizeof err), "%s", err);
	cr_expect(!st.seeded);
	cr_expect_null(get_file(".claude/.claude.json"));
	cr_expect_not_null(env_of(&st, "CLAUDE_CONFIG_DIR"));
}

Test(agentstate, never_writes_through_a_link)
{
	char p[1024], q[1024];
	put_file(".claude.json", "{}\n");
	snprintf(p, sizeof p, "%s/elsewhere", home);
	cr_assert(mkdir(p, 0700) == 0);
	snprintf(q, sizeof q, "%s/.claude", home);
	cr_assert(symlink(p, q) == 0);
	struct agentstate st;
	char err[512];
	cr_expect(!prepare("linux/std/agents/claude", &st, err, sizeof err));
	cr_expect(strstr(err, ".claude"), "%s", err);
	cr_expect_null(get_file("elsewhere/.claude.json"));
}

Test(agentstate, other_modules_change_nothing)
{
	put_file(".claude.json", "{}\n");
	struct agentstate st;
	char err[512];
	cr_assert(prepare("std/agents/codex", &st, err, sizeof err), "%s", err);
	cr_expect_null(st.env[0]);
	cr_expect_str_eq(st.copy, "");
	cr_assert(prepare(NULL, &st, err, sizeof err), "%s", err);
	cr_expect_null(st.env[0]);
}

Test(agentstate, gemini_gets_its_settings_copy_and_links_to_the_rest)
{
	char p[1024], t[1024], want[1024];
	snprintf(p, sizeof p, "%s/.gemini", home);
	cr_assert(mkdir(p, 0700) == 0);
	put_file(".gemini/settings.json", "{\"general\":{}}\n");
	put_file(".gemini/oauth_creds.json", "{}\n");
	snprintf(p, sizeof p, "%s/.gemini/tmp", home);
	cr_assert(mkdir(p, 0700) == 0);
	struct agentstate st;
	char err[512];
	cr_assert(prepare("std/agents/gemini", &st, err, sizeof err), "%s", err);
	snprintf(want, sizeof want, "%s/.gemini/.cage-home", home);
	cr_expect_str_eq(env_of(&st, "GEMINI_CLI_HOME"), want);
	cr_expect_str_eq(get_file(".gemini/.cage-home/.gemini/settings.json"), "{\"general\":{}}\n");
	struct stat sb;
	snprintf(p, sizeof p, "%s/.gemini/.cage-home/.gemini/settings.json", home);
	cr_assert(lstat(p, &sb) == 0);
	cr_expect(S_ISREG(sb.st_mode), "the settings are a copy, not a link");
	const char *linked[] = { "oauth_creds.json", "tmp" };
	for (size_t i = 0; i < 2; i++) {
		snprintf(p, sizeof p, "%s/.gemini/.cage-home/.gemini/%s", home, linked[i]);
		ssize_t n = readlink(p, t, sizeof t - 1);
		cr_assert(n > 0, "%s is a link", p);
		t[n] = '\0';
		snprintf(want, sizeof want, "%s/.gemini/%s", home, linked[i]);
		cr_expect_str_eq(t, want);
	}
	snprintf(p, sizeof p, "%s/.gemini/.cage-home/.gemini/.cage-home", home);
	cr_expect(lstat(p, &sb) != 0, "the copy's own folder is not linked into itself");
	/* What the caged agent made in its folder is left as it is. */
	put_file(".gemini/.cage-home/.gemini/GEMINI.md", "caged\n");
	put_file(".gemini/GEMINI.md", "mine\n");
	cr_assert(prepare("std/agents/gemini", &st, err, sizeof err), "%s", err);
	cr_expect_str_eq(get_file(".gemini/.cage-home/.gemini/GEMINI.md"), "caged\n");
	cr_expect_str_eq(get_file(".gemini/GEMINI.md"), "mine\n");
}
