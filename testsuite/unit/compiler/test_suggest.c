/*
 * test_suggest.c - the collapse logic of `cagec suggest` (sg_collapse) and
 * the monitor record's JSON round trip and summary bound.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "ir.h"
#include "mon_record.h"
#include "mon_summary.h"
#include "sg.h"

static struct arena a;

static void setup(void)
{
	arena_init(&a);
}

static void teardown(void)
{
	arena_free(&a);
}

TestSuite(collapse, .init = setup, .fini = teardown);

#define T(p) ((struct sg_target){ p, false })
#define TREE(p) ((struct sg_target){ p, true })

static bool has(const struct sg_target *t, size_t n, const char *p, bool tree)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].path, p) && t[i].tree == tree)
			return true;
	return false;
}

Test(collapse, three_files_in_one_folder_become_the_folder)
{
	struct sg_target t[] = { T("/opt/x/a"), T("/opt/x/b"), T("/opt/x/c"), T("/opt/y/d") };
	size_t n = sg_collapse(&a, t, 4, 3, 2, "/home/u", NULL);
	cr_assert_eq(n, 2);
	cr_assert(has(t, n, "/opt/x", true));
	cr_assert(has(t, n, "/opt/y/d", false));
}

Test(collapse, two_files_stay_exact)
{
	struct sg_target t[] = { T("/opt/x/a"), T("/opt/x/b") };
	size_t n = sg_collapse(&a, t, 2, 3, 2, "/home/u", NULL);
	cr_assert_eq(n, 2);
	cr_assert(has(t, n, "/opt/x/a", false));
}

Test(collapse, duplicates_and_paths_below_a_tree_drop)
{
	struct sg_target t[] = { T("/opt/x/a"), T("/opt/x/a"), TREE("/opt/x"), T("/opt/x/sub/b") };
	size_t n = sg_collapse(&a, t, 4, 3, 2, "/home/u", NULL);
	cr_assert_eq(n, 1);
	cr_assert(has(t, n, "/opt/x", true));
}

Test(collapse, climbs_when_trees_share_a_folder)
{
	struct sg_target t[] = { T("/opt/p/a/1"), T("/opt/p/a/2"), T("/opt/p/a/3"),
				 T("/opt/p/b/1"), T("/opt/p/b/2"), T("/opt/p/b/3"),
				 T("/opt/p/c/1"), T("/opt/p/c/2"), T("/opt/p/c/3") };
	size_t n = sg_collapse(&a, t, 9, 3, 2, "/home/u", NULL);
	cr_assert_eq(n, 1);
	cr_assert(has(t, n, "/opt/p", true));
}

Test(collapse, never_shallower_than_min_depth)
{
	struct sg_target t[] = { T("/opt/a"), T("/opt/b"), T("/opt/c") };
	size_t n = sg_collapse(&a, t, 3, 3, 2, "/home/u", NULL);
	cr_assert_eq(n, 3);
}

Test(collapse, never_home_itself)
{
	struct sg_target t[] = { T("/home/u/.a"), T("/home/u/.b"), T("/home/u/.c") };
	size_t n = sg_collapse(&a, t, 3, 3, 2, "/home/u", NULL);
	cr_assert_eq(n, 3);
}

Test(collapse, never_over_a_fence)
{
	/* ~/.config holds a secret below it: three grants there stay exact */
	const char *dirs[] = { "/home/u/.config/gh/hosts.yml" };
	struct sg_fence f = { dirs, 1 };
	struct sg_target t[] = { T("/home/u/.config/a"), T("/home/u/.config/b"),
				 T("/home/u/.config/c") };
	size_t n = sg_collapse(&a, t, 3, 3, 2, "/home/u", &f);
	cr_assert_eq(n, 3);
	/* a neighbour without a fence below still collapses */
	struct sg_target u[] = { T("/home/u/.cache/a"), T("/home/u/.cache/b"),
				 T("/home/u/.cache/c") };
	n = sg_collapse(&a, u, 3, 3, 2, "/home/u", &f);
	cr_assert_eq(n, 1);
	cr_assert(has(u, n, "/home/u/.cache", true));
}

Test(collapse, deepest_folder_first)
{
	/* three in /opt/q/deep, one more in /opt/q: deep collapses, and /opt/q
	 * then holds two items (the tree and a file), too few to collapse */
	struct sg_target t[] = { T("/opt/q/deep/1"), T("/opt/q/deep/2"), T("/opt/q/deep/3"),
				 T("/opt/q/x"), T("/opt/r/y") };
	size_t n = sg_collapse(&a, t, 5, 3, 2, "/home/u", NULL);
	cr_assert_eq(n, 3);
	cr_assert(has(t, n, "/opt/q/deep", true));
	cr_assert(has(t, n, "/opt/q/x", false));
}

Test(records, json_round_trip)
{
	struct mon_record r = { .time_ms = 1700000000123, .pid = 42, .exe = "/bin/c\"at",
				.syscall = "openat", .access = IR_A_READ,
				.path = "/tmp/a\nb\xc3\xa9", .verdict = MON_WOULD_BLOCK };
	int p[2];
	cr_assert_eq(pipe(p), 0);
	cr_assert(mon_record_write(p[1], &r));
	close(p[1]);
	char line[8192];
	ssize_t n = read(p[0], line, sizeof line - 1);
	close(p[0]);
	cr_assert_gt(n, 0);
	line[n] = '\0';
	cr_assert_eq(strchr(line, '\n'), line + n - 1, "one line: %s", line);
	struct mon_record q;
	cr_assert(mon_record_parse(line, &q));
	cr_assert_str_eq(q.path, "/tmp/a\nb\xc3\xa9");
	cr_assert_str_eq(q.exe, "/bin/c\"at");
	cr_assert_eq(q.pid, 42);
	cr_assert_eq(q.access, IR_A_READ);
	cr_assert_eq(q.verdict, MON_WOULD_BLOCK);
	cr_assert_null(q.rule);
}

Test(records, proxy_log_lines_are_not_records)
{
	char line[] = "{\"time\":\"2026-11-29T19:44:40.370Z\",\"client\":\"127.0.0.1:1\","
		      "\"method\":\"CONNECT\",\"host\":\"a.test\",\"port\":443,\"decision\":\"allow\"}";
	struct mon_record q;
	cr_assert_not(mon_record_parse(line, &q));
}

/* Found by fuzz_monitor: a line that ends inside a \u escape. The
 * parser must stop at the line's end (each case in a buffer of exactly
 * its size, so that AddressSanitizer builds see any read past it), and
 * a file record naming a host as well is not one the writer makes. */
Test(records, malformed_lines_are_refused_within_bounds)
{
	static const char *const bad[] = {
		"{\"access\":\"read\",\"verdict\":\"denied\",\"path\":\"/a\\u",
		"{\"access\":\"read\",\"verdict\":\"denied\",\"path\":\"/a\\u0",
		"{\"access\":\"read\",\"verdict\":\"denied\",\"path\":\"/a\\u00",
		"{\"access\":\"read\",\"verdict\":\"denied\",\"path\":\"/a\\u004",
		"{\"access\":\"read\",\"verdict\":\"denied\",\"path\":\"/a\",\"host\":\"h\"}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		size_t n = strlen(bad[i]);
		char *line = malloc(n + 1);
		cr_assert(line);
		memcpy(line, bad[i], n + 1);
		struct mon_record q;
		cr_expect_not(mon_record_parse(line, &q), "accepted: %s", bad[i]);
		free(line);
	}
	char ok[] = "{\"access\":\"read\",\"verdict\":\"denied\",\"path\":\"/a\\u0041\"}";
	struct mon_record q;
	cr_assert(mon_record_parse(ok, &q));
	cr_expect_str_eq(q.path, "/aA");
}

Test(records, summary_is_bounded)
{
	struct mon_summary s;
	mon_summary_init(&s, 8, false);
	char path[64];
	for (int i = 0; i < 1000; i++) {
		snprintf(path, sizeof path, "/d%d/f", i);
		struct mon_record r = { .access = IR_A_READ, .path = path,
					.verdict = MON_WOULD_BLOCK, .count = 1 };
		cr_assert(mon_summary_add(&s, &r));
	}
	cr_assert_eq(s.n, 8);
	cr_assert_eq(s.other[MON_WOULD_BLOCK], 992);
	cr_assert_eq(s.total[MON_WOULD_BLOCK], 1000);
	mon_summary_free(&s);
}
