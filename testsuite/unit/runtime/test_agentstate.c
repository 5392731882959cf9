/*
 * test_agentstate.c - the agents' own copies of their mixed config files
 * (runtime/agentstate.c): seeded once from the user's file, left alone
 * afterwards, never written through a link, named in the environment, and
 * for Gemini CLI and Codex the rest of their folder linked in (for Codex
 * but its helper folders and memories, which are the copy's own).
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

/* Each of names is, in home/dir, a link to home/from/NAME. */
static void expect_links(const char *dir, const char *from, const char *const *names, size_t n)
{
	char p[1024], t[1024], want[1024];
	for (size_t i = 0; i < n; i++) {
		snprintf(p, sizeof p, "%s/%s/%s", home, dir, names[i]);
		ssize_t k = readlink(p, t, sizeof t - 1);
		cr_assert(k > 0, "%s is a link", p);
		t[k] = '\0';
		snprintf(want, sizeof want, "%s/%s/%s", home, from, names[i]);
		cr_expect_str_eq(t, want);
	}
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

/* prepare() for module sets var to home/dir and makes home/copy, a file
 * of its own holding text. */
static void expect_copy(const char *module, const char *var, const char *dir, const char *copy,
			const char *text)
{
	struct agentstate st;
	char err[512], p[1024], want[1024];
	cr_assert(prepare(module, &st, err, sizeof err), "%s", err);
	snprintf(want, sizeof want, "%s/%s", home, dir);
	cr_expect_str_eq(env_of(&st, var), want);
	cr_expect_str_eq(get_file(copy), text);
	struct stat sb;
	snprintf(p, sizeof p, "%s/%s", home, copy);
	cr_assert(lstat(p, &sb) == 0);
	cr_expect(S_ISREG(sb.st_mode), "%s is a copy, not a link", p);
}

Test(agentstate, other_modules_change_nothing)
{
	put_file(".claude.json", "{}\n");
	struct agentstate st;
	char err[512];
	cr_assert(prepare("std/agents/aider", &st, err, sizeof err), "%s", err);
	cr_expect_null(st.env[0]);
	cr_expect_str_eq(st.copy, "");
	cr_assert(prepare(NULL, &st, err, sizeof err), "%s", err);
	cr_expect_null(st.env[0]);
}

Test(agentstate, gemini_gets_its_settings_copy_and_links_to_the_rest)
{
	char p[1024], err[512];
	struct agentstate st;
	struct stat sb;
	snprintf(p, sizeof p, "%s/.gemini", home);
	cr_assert(mkdir(p, 0700) == 0);
	put_file(".gemini/settings.json", "{\"general\":{}}\n");
	put_file(".gemini/oauth_creds.json", "{}\n");
	snprintf(p, sizeof p, "%s/.gemini/tmp", home);
	cr_assert(mkdir(p, 0700) == 0);
	expect_copy("std/agents/gemini", "GEMINI_CLI_HOME", ".gemini/.cage-home",
		    ".gemini/.cage-home/.gemini/settings.json", "{\"general\":{}}\n");
	const char *const linked[] = { "oauth_creds.json", "tmp" };
	expect_links(".gemini/.cage-home/.gemini", ".gemini", linked, 2);
	snprintf(p, sizeof p, "%s/.gemini/.cage-home/.gemini/.cage-home", home);
	cr_expect(lstat(p, &sb) != 0, "the copy's own folder is not linked into itself");
	/* What the caged agent made in its folder is left as it is. */
	put_file(".gemini/.cage-home/.gemini/GEMINI.md", "caged\n");
	put_file(".gemini/GEMINI.md", "mine\n");
	cr_assert(prepare("std/agents/gemini", &st, err, sizeof err), "%s", err);
	cr_expect_str_eq(get_file(".gemini/.cage-home/.gemini/GEMINI.md"), "caged\n");
	cr_expect_str_eq(get_file(".gemini/GEMINI.md"), "mine\n");
}

Test(agentstate, codex_gets_its_config_copy_links_and_folders_of_its_own)
{
	char p[1024], err[512];
	struct agentstate st;
	struct stat sb;
	const char *made[] = { ".codex", ".codex/sessions", ".codex/tmp", ".codex/.tmp",
			       ".codex/skills" };
	for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", home, made[i]);
		cr_assert(mkdir(p, 0700) == 0, "%s", p);
	}
	put_file(".codex/config.toml", "model = \"m\"\n");
	put_file(".codex/auth.json", "{}\n");
	put_file(".codex/memories_1.sqlite", "db\n");
	expect_copy("std/agents/codex", "CODEX_HOME", ".codex/.cage-home", ".codex/.cage-home/config.toml",
		    "model = \"m\"\n");
	const char *const linked[] = { "sessions", "auth.json", "skills" };
	expect_links(".codex/.cage-home", ".codex", linked, 3);
	/* The helper and staging folders are the copy's own, never links to
	 * the ones sessions outside use; the memories database is not linked. */
	const char *own[] = { "tmp", ".tmp" };
	for (size_t i = 0; i < 2; i++) {
		snprintf(p, sizeof p, "%s/.codex/.cage-home/%s", home, own[i]);
		cr_assert(lstat(p, &sb) == 0, "%s", p);
		cr_expect(S_ISDIR(sb.st_mode), "%s is a folder of its own", p);
	}
	snprintf(p, sizeof p, "%s/.codex/.cage-home/memories_1.sqlite", home);
	cr_expect(lstat(p, &sb) != 0, "the memories database is not linked");
	snprintf(p, sizeof p, "%s/.codex/.cage-home/.cage-home", home);
	cr_expect(lstat(p, &sb) != 0, "the copy's own folder is not linked into itself");
	/* A second run keeps the caged copy as it is. */
	put_file(".codex/.cage-home/config.toml", "caged = 1\n");
	cr_assert(prepare("std/agents/codex", &st, err, sizeof err), "%s", err);
	cr_expect_str_eq(get_file(".codex/.cage-home/config.toml"), "caged = 1\n");
	cr_expect_str_eq(get_file(".codex/config.toml"), "model = \"m\"\n");
}
