/*
 * test_cachedir.c - the private cache folder (runtime/layers/cachedir.c):
 * keys, where the folder goes, and what is refused (a symlink, a folder
 * others may write), each in a scratch XDG_CACHE_HOME with its control.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cachedir.h"

static char root[PATH_MAX];

static void setup(void)
{
	snprintf(root, sizeof root, "/tmp/cage-cachedir-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	char real[PATH_MAX];
	cr_assert_not_null(realpath(root, real));
	snprintf(root, sizeof root, "%s", real);
	cr_assert_eq(setenv("XDG_CACHE_HOME", root, 1), 0);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
	unsetenv("XDG_CACHE_HOME");
}

TestSuite(cachedir, .init = setup, .fini = teardown);

Test(cachedir, keys)
{
	char k[CACHEDIR_KEY_MAX + 1];
	cachedir_key("claude", k);
	cr_assert_str_eq(k, "claude");
	cachedir_key("go-offline_1.2", k);
	cr_assert_str_eq(k, "go-offline_1.2");
	const char *bad[] = { "", ".", "..", ".hidden", "a/b", "a b", "x\n", NULL };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cachedir_key(bad[i], k);
		cr_assert_str_eq(k, "default", "key for %s", bad[i] ? bad[i] : "(null)");
	}
	char longname[CACHEDIR_KEY_MAX + 2];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	cachedir_key(longname, k);
	cr_assert_str_eq(k, "default");
}

Test(cachedir, made_private_and_resolved)
{
	char out[PATH_MAX], err[512], want[PATH_MAX + 32];
	/* Without create: the path, nothing made. */
	cr_assert(cachedir_resolve("claude", false, out, sizeof out, err, sizeof err), "%s", err);
	snprintf(want, sizeof want, "%s/cage/claude", root);
	cr_assert_str_eq(out, want);
	struct stat st;
	cr_assert_neq(stat(want, &st), 0);
	cr_assert(cachedir_resolve("claude", true, out, sizeof out, err, sizeof err), "%s", err);
	cr_assert_str_eq(out, want);
	cr_assert_eq(lstat(want, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 0777, 0700);
	cr_assert_eq(st.st_uid, geteuid());
	/* Again: the same folder, still fine. */
	cr_assert(cachedir_resolve("claude", true, out, sizeof out, err, sizeof err), "%s", err);
}

Test(cachedir, symlink_refused)
{
	char out[PATH_MAX], err[512], p[PATH_MAX + 32], elsewhere[PATH_MAX + 32];
	char dir[PATH_MAX + 32];
	snprintf(dir, sizeof dir, "%s/cage", root);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", root);
	cr_assert_eq(mkdir(elsewhere, 0700), 0);
	/* Control: a real folder of that name is accepted. */
	snprintf(p, sizeof p, "%s/cage/real", root);
	cr_assert_eq(mkdir(p, 0700), 0);
	cr_assert(cachedir_resolve("real", true, out, sizeof out, err, sizeof err), "%s", err);
	snprintf(p, sizeof p, "%s/cage/evil", root);
	cr_assert_eq(symlink(elsewhere, p), 0);
	cr_assert_not(cachedir_resolve("evil", true, out, sizeof out, err, sizeof err));
	cr_assert(strstr(err, "symlink"), "%s", err);
	/* The link at ROOT/cage itself is refused too. */
	char moved[PATH_MAX + 32];
	snprintf(moved, sizeof moved, "%s/moved", root);
	cr_assert_eq(rename(dir, moved), 0);
	cr_assert_eq(symlink(moved, dir), 0);
	cr_assert_not(cachedir_resolve("real", true, out, sizeof out, err, sizeof err));
}

Test(cachedir, writable_by_others_refused_readable_made_private)
{
	char out[PATH_MAX], err[512], p[PATH_MAX + 32];
	snprintf(p, sizeof p, "%s/cage", root);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/cage/open", root);
	cr_assert_eq(mkdir(p, 0700), 0);
	cr_assert_eq(chmod(p, 0777), 0);
	cr_assert_not(cachedir_resolve("open", true, out, sizeof out, err, sizeof err));
	cr_assert(strstr(err, "others may write"), "%s", err);
	/* Readable only (mkdir with a 022 umask): made 0700. */
	cr_assert_eq(chmod(p, 0755), 0);
	cr_assert(cachedir_resolve("open", true, out, sizeof out, err, sizeof err), "%s", err);
	struct stat st;
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0700);
}
