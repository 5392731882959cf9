/*
 * test_sbx_plan.c - the Seatbelt launch plan (runtime/seatbelt/sbx_plan.c):
 * the exact argv for execve for varied inputs. Linux has no /private, so
 * each test builds a macOS-like tree in a scratch directory (/tmp, /var
 * and /etc relative links into /private) and resolves paths below it (the
 * `root` seam); the mapping of a /tmp that is not a link is tested apart.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx_plan.h"

static char root[64];

static void mk(const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s%s", root, rel);
	cr_assert(mkdir(p, 0700) == 0 || errno == EEXIST, "mkdir %s", p);
}

static void ln(const char *target, const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s%s", root, rel);
	cr_assert(symlink(target, p) == 0, "symlink %s", p);
}

static void touch(const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s%s", root, rel);
	FILE *f = fopen(p, "w");
	cr_assert(f, "create %s", p);
	fclose(f);
}

static void setup(void)
{
	snprintf(root, sizeof root, "/tmp/sbxplan.XXXXXX");
	cr_assert(mkdtemp(root));
	mk("/private");
	mk("/private/tmp");
	mk("/private/var");
	mk("/private/etc");
	ln("private/tmp", "/tmp");
	ln("private/var", "/var");
	ln("private/etc", "/etc");
	mk("/private/var/folders");
	mk("/private/var/folders/T");
	mk("/private/var/folders/T/cage-run.1");
	mk("/private/var/folders/T/cage-run.1/tmp");
	mk("/private/var/folders/T/cage-run.1/home");
	touch("/private/var/folders/T/cage-run.1/profile.sb");
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	cr_assert(system(cmd) == 0);
}

TestSuite(sbx_plan, .init = setup, .fini = teardown);

static const char profile3[] =
	";; sandbox-exec parameters: -D PROXY_PORT, (param \"IN_COMMENT\")\n"
	"(version 1)\n(deny default)\n"
	"(allow file-read-data (literal \"(param \\\"IN_STRING\\\")\"))\n"
	"(allow file* (subpath (param \"PRIVATE_TMP\")))\n"
	"(allow file* (subpath (param  \"PRIVATE_HOME\")))\n"
	"(allow network-outbound (remote tcp (string-append \"localhost:\" (param \"PROXY_PORT\"))))\n"
	"(allow file* (subpath (param \"PRIVATE_TMP\")))\n";

static void expect_argv(const struct sbx_plan *p, const char *const *want)
{
	size_t n = 0;
	while (want[n])
		n++;
	for (size_t i = 0; i < n && i < p->argc; i++)
		cr_expect_str_eq(p->argv[i], want[i], "argv[%zu]", i);
	cr_assert_eq(p->argc, n, "argc %zu, expected %zu", p->argc, n);
	cr_assert_null(p->argv[n]);
}

Test(sbx_plan, params_in_order_skipping_comments_and_strings)
{
	char *names[SBX_MAX_PARAMS];
	int n = sbx_profile_params(profile3, sizeof profile3 - 1, names, SBX_MAX_PARAMS);
	cr_assert_eq(n, 3);
	cr_expect_str_eq(names[0], "PRIVATE_TMP");
	cr_expect_str_eq(names[1], "PRIVATE_HOME");
	cr_expect_str_eq(names[2], "PROXY_PORT");
	for (int i = 0; i < n; i++)
		free(names[i]);
	cr_expect_eq(sbx_profile_params("(version 1)", 11, names, SBX_MAX_PARAMS), 0);
	cr_expect_eq(sbx_profile_params("(param \"A\")(param \"B\")", 22, names, 1), -1);
}

static bool plan(const char *text, const char *profile, const struct sbx_value *vals, size_t nv,
		 char *const *argv, bool map_private, struct sbx_plan *out, char *err, size_t errlen)
{
	struct sbx_canon c = { .root = root, .map_private = map_private };
	char *envp[] = { "TMPDIR=/x", NULL };
	struct sbx_plan_in in = { .profile_text = text, .profile_len = strlen(text),
				  .profile_path = profile, .values = vals, .nvalues = nv,
				  .argv = argv, .envp = envp, .canon = &c };
	bool ok = sbx_plan_build(&in, out, err, errlen);
	if (ok)
		cr_expect_eq(out->envp, envp);
	return ok;
}

Test(sbx_plan, exact_argv_through_var_link)
{
	struct sbx_value vals[] = {
		{ "PROXY_PORT", "51234", SBX_PORT },
		{ "PRIVATE_TMP", "/var/folders/T/cage-run.1/tmp", SBX_PATH },
		{ "PRIVATE_HOME", "/var/folders/T/cage-run.1/home", SBX_PATH },
		{ "UNUSED", "/nonexistent", SBX_PATH }, /* not declared: not passed, not checked */
	};
	char *argv[] = { "git", "commit", "-m", "a message; $(rm -rf ~) \"quoted\" 'x'", "", NULL };
	struct sbx_plan p;
	char err[512];
	cr_assert(plan(profile3, "/var/folders/T/cage-run.1/profile.sb", vals, 4, argv, false, &p,
		       err, sizeof err), "%s", err);
	const char *want[] = { "/usr/bin/sandbox-exec", "-f",
			       "/private/var/folders/T/cage-run.1/profile.sb",
			       "-D", "PRIVATE_TMP=/private/var/folders/T/cage-run.1/tmp",
			       "-D", "PRIVATE_HOME=/private/var/folders/T/cage-run.1/home",
			       "-D", "PROXY_PORT=51234",
			       "--", "git", "commit", "-m",
			       "a message; $(rm -rf ~) \"quoted\" 'x'", "", NULL };
	expect_argv(&p, want);
	sbx_plan_free(&p);
}

Test(sbx_plan, tmp_and_private_tmp_are_one_path)
{
	mk("/private/tmp/w");
	touch("/private/tmp/w/p.sb");
	struct sbx_value a[] = { { "PRIVATE_TMP", "/tmp/w", SBX_PATH } };
	struct sbx_value b[] = { { "PRIVATE_TMP", "/private/tmp/w", SBX_PATH } };
	char *argv[] = { "true", NULL };
	const char *text = "(allow file* (subpath (param \"PRIVATE_TMP\")))";
	struct sbx_plan p1, p2;
	char err[512];
	cr_assert(plan(text, "/tmp/w/p.sb", a, 1, argv, false, &p1, err, sizeof err), "%s", err);
	cr_assert(plan(text, "/private/tmp/w/p.sb", b, 1, argv, false, &p2, err, sizeof err), "%s",
		  err);
	const char *want[] = { "/usr/bin/sandbox-exec", "-f", "/private/tmp/w/p.sb", "-D",
			       "PRIVATE_TMP=/private/tmp/w", "--", "true", NULL };
	expect_argv(&p1, want);
	expect_argv(&p2, want);
	sbx_plan_free(&p1);
	sbx_plan_free(&p2);
}

Test(sbx_plan, map_private_when_tmp_is_not_a_link)
{
	/* A tree whose /tmpdir is a plain directory: the textual mapping
	 * applies to exactly the components tmp, var and etc. */
	char sub[PATH_MAX];
	snprintf(sub, sizeof sub, "%s/alt", root);
	cr_assert(mkdir(sub, 0700) == 0);
	snprintf(sub, sizeof sub, "%s/alt/tmp", root);
	cr_assert(mkdir(sub, 0700) == 0);
	snprintf(sub, sizeof sub, "%s/alt/tmpx", root);
	cr_assert(mkdir(sub, 0700) == 0);
	char altroot[PATH_MAX];
	snprintf(altroot, sizeof altroot, "%s/alt", root);
	struct sbx_canon c = { .root = altroot, .map_private = true };
	char err[256];
	char *s = sbx_canonical_path("/tmp", &c, err, sizeof err);
	cr_assert(s, "%s", err);
	cr_expect_str_eq(s, "/private/tmp");
	free(s);
	s = sbx_canonical_path("/tmpx", &c, err, sizeof err);
	cr_assert(s, "%s", err);
	cr_expect_str_eq(s, "/tmpx");
	free(s);
	c.map_private = false;
	s = sbx_canonical_path("/tmp", &c, err, sizeof err);
	cr_assert(s, "%s", err);
	cr_expect_str_eq(s, "/tmp");
	free(s);
}

Test(sbx_plan, spaces_quotes_unicode_and_a_symlinked_workspace)
{
	mk("/private/tmp/Projekt größe \"q\" 'a'");
	touch("/private/tmp/Projekt größe \"q\" 'a'/c a g e.sb");
	mk("/Users");
	mk("/Users/alice");
	ln("../../private/tmp/Projekt größe \"q\" 'a'", "/Users/alice/ws");
	struct sbx_value vals[] = { { "PRIVATE_HOME", "/Users/alice/ws", SBX_PATH } };
	char *argv[] = { "./run tests.sh", "ünï", NULL };
	struct sbx_plan p;
	char err[512];
	cr_assert(plan("(param \"PRIVATE_HOME\")", "/Users/alice/ws/c a g e.sb", vals, 1, argv,
		       false, &p, err, sizeof err),
		  "%s", err);
	const char *want[] = { "/usr/bin/sandbox-exec", "-f",
			       "/private/tmp/Projekt größe \"q\" 'a'/c a g e.sb", "-D",
			       "PRIVATE_HOME=/private/tmp/Projekt größe \"q\" 'a'", "--",
			       "./run tests.sh", "ünï", NULL };
	expect_argv(&p, want);
	sbx_plan_free(&p);
}

static void expect_refused(const char *text, const char *profile, const struct sbx_value *vals,
			   size_t nv, const char *why)
{
	char *argv[] = { "true", NULL };
	struct sbx_plan p;
	char err[512] = "";
	cr_expect_not(plan(text, profile, vals, nv, argv, false, &p, err, sizeof err),
		      "accepted, expected: %s", why);
	cr_expect(strstr(err, why), "error '%s' does not say '%s'", err, why);
}

Test(sbx_plan, refusals_name_the_cause)
{
	const char *pf = "/var/folders/T/cage-run.1/profile.sb";
	mk("/private/tmp/a\nb");
	struct sbx_value nl[] = { { "PRIVATE_TMP", "/tmp/a\nb", SBX_PATH } };
	expect_refused("(param \"PRIVATE_TMP\")", pf, nl, 1, "newline");
	struct sbx_value rel[] = { { "PRIVATE_TMP", "tmp/x", SBX_PATH } };
	expect_refused("(param \"PRIVATE_TMP\")", pf, rel, 1, "not an absolute path");
	struct sbx_value gone[] = { { "PRIVATE_TMP", "/tmp/nope", SBX_PATH } };
	expect_refused("(param \"PRIVATE_TMP\")", pf, gone, 1, "No such file");
	expect_refused("(param \"PRIVATE_HOME\")", pf, gone, 1,
		       "needs -D PRIVATE_HOME, and cagerun has no value");
	struct sbx_value none[] = { { "PRIVATE_TMP", NULL, SBX_PATH } };
	expect_refused("(param \"PRIVATE_TMP\")", pf, none, 1, "needs -D PRIVATE_TMP");
	struct sbx_value port[] = { { "PROXY_PORT", "70000", SBX_PORT } };
	expect_refused("(param \"PROXY_PORT\")", pf, port, 1, "not a port number");
	struct sbx_value port2[] = { { "PROXY_PORT", "+80", SBX_PORT } };
	expect_refused("(param \"PROXY_PORT\")", pf, port2, 1, "not a port number");
	expect_refused("(param \"X=Y\")", pf, NULL, 0, "unusable name");
	expect_refused("(version 1)", "/tmp/missing.sb", NULL, 0, "profile: /tmp/missing.sb");
	expect_refused("(version 1)", "profile.sb", NULL, 0, "not an absolute path");
	char *argv[] = { NULL };
	struct sbx_plan p;
	char err[256] = "";
	cr_expect_not(plan("(version 1)", pf, NULL, 0, argv, false, &p, err, sizeof err));
	cr_expect_str_eq(err, "no command to run");
}

Test(sbx_plan, check_exec)
{
	char err[512];
	cr_expect(sbx_check_exec("/bin/sh", err, sizeof err), "%s", err);
	cr_expect_not(sbx_check_exec("/nonexistent/sandbox-exec", err, sizeof err));
	cr_expect(strstr(err, "No such file"), "%s", err);
	cr_expect_not(sbx_check_exec(root, err, sizeof err));
	cr_expect(strstr(err, "not a regular file"), "%s", err);
	char f[PATH_MAX];
	snprintf(f, sizeof f, "%s/private/tmp/noexec", root);
	FILE *fp = fopen(f, "w");
	cr_assert(fp);
	fclose(fp);
	chmod(f, 0644);
	/* root may execute anything with an x bit; a file with none fails
	 * for everyone. */
	cr_expect_not(sbx_check_exec(f, err, sizeof err));
}
