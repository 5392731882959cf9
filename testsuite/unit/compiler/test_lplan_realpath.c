/*
 * test_lplan_realpath.c - the plan's memoised path resolver against
 * realpath(3) on a fixture of awkward symlinks: relative links with `..`
 * after a link, chains, dangling links, loops, links to files with more
 * components after them, and links into /proc (left as written, since the
 * sandbox has its own procfs). For a missing path the expected answer is
 * the one the plan always gave: the longest prefix realpath(3) resolves,
 * then the rest as written.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "lplan_int.h"

static char root[256];

static void at(char *out, const char *rel)
{
	snprintf(out, PATH_MAX, "%s/%s", root, rel);
}

static void mkd(const char *rel)
{
	char p[PATH_MAX];
	at(p, rel);
	cr_assert(mkdir(p, 0755) == 0, "mkdir %s", p);
}

static void lnk(const char *target, const char *rel)
{
	char p[PATH_MAX];
	at(p, rel);
	cr_assert(symlink(target, p) == 0, "symlink %s", p);
}

static void setup(void)
{
	char tmpl[] = "/tmp/cage-rp.XXXXXX";
	cr_assert(mkdtemp(tmpl));
	cr_assert(realpath(tmpl, root));
	mkd("a");
	mkd("a/b");
	mkd("a/b/c");
	mkd("d");
	char f[PATH_MAX];
	at(f, "a/file");
	FILE *fp = fopen(f, "w");
	cr_assert(fp);
	fclose(fp);
	lnk("a/b", "rel");           /* relative */
	lnk("../d", "a/up");         /* `..` from inside a */
	lnk("b/c/../..", "a/back");  /* `..` after real directories */
	lnk("../rel/c", "a/viarel"); /* `..`, then through another link */
	lnk("chain2", "chain1");
	lnk("a/b/c", "chain2");
	lnk("missing/x", "dangling");
	lnk("loop2", "loop1");
	lnk("loop1", "loop2");
	lnk("file", "a/tofile");
	lnk("/proc/self/fd", "procfd");
	lnk("up/../b", "a/upb");     /* d/.. is the root, not a */
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	cr_assert(system(cmd) == 0);
}

/* What the plan gave before it had its own resolver. */
static const char *reference(struct arena *a, const char *path)
{
	char buf[PATH_MAX];
	if (realpath(path, buf))
		return arena_strdup(a, buf);
	size_t cut = strlen(path);
	while (cut > 0) {
		do
			cut--;
		while (cut > 0 && path[cut] != '/');
		char head[PATH_MAX];
		memcpy(head, path, cut);
		head[cut] = '\0';
		if (realpath(cut ? head : "/", buf))
			return arena_printf(a, "%s%s", strcmp(buf, "/") ? buf : "", path + cut);
	}
	return arena_strdup(a, path);
}

TestSuite(lplan_realpath, .init = setup, .fini = teardown);

Test(lplan_realpath, agrees_with_realpath_on_awkward_links)
{
	static const char *rels[] = {
		"a", "a/b/c", "rel", "rel/c", "rel/c/new/deeper", "a/up", "a/up/x",
		"a/back", "a/back/file", "a/viarel", "a/viarel/y", "chain1", "chain1/z",
		"dangling", "dangling/more", "loop1", "loop1/x", "a/tofile", "a/tofile/x",
		"a/file/x", "nothere", "nothere/a/b", "a/upb", "a/upb/q",
	};
	struct arena ar;
	arena_init(&ar);
	struct arena *a = &ar;
	/* One cache for all, in two passes: answers from the memo must equal
	 * first answers. */
	struct lplan_rcache *rc = lplan_rcache_new(a);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < sizeof rels / sizeof *rels; i++) {
			char p[PATH_MAX];
			at(p, rels[i]);
			const char *want = reference(a, p);
			cr_expect_str_eq(lplan_resolve_cached(rc, p), want, "%s (pass %d)",
					 rels[i], pass);
			cr_expect_str_eq(lplan_resolve_path(a, p), want, "%s fresh", rels[i]);
		}
	arena_free(&ar);
}

Test(lplan_realpath, proc_is_left_as_written)
{
	struct arena ar;
	arena_init(&ar);
	struct arena *a = &ar;
	char p[PATH_MAX];
	at(p, "procfd");
	cr_expect_str_eq(lplan_resolve_path(a, p), "/proc/self/fd");
	cr_expect_str_eq(lplan_resolve_path(a, "/proc/self/fd/3"), "/proc/self/fd/3");
	at(p, "procfd/3");
	cr_expect_str_eq(lplan_resolve_path(a, p), "/proc/self/fd/3");
	arena_free(&ar);
}
