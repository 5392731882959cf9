/*
 * test_gs_keep.c - the bytes of git discovery's kept walk
 * (runtime/gitscan/gs_keep.c): what is written reads back the same, and
 * every truncation and every flipped byte is refused (the checksum, or
 * the field it breaks); names differ by workspace.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "gs_keep.h"

static struct gs_walk sample(void)
{
	static struct pf_dep dirs[2];
	static const char *hits[] = { "/w/a/r1" };
	memset(dirs, 0, sizeof dirs);
	dirs[0] = (struct pf_dep){ .kind = PF_DEP_LIST, .path = "/w", .dev = 2049, .ino = 12,
				   .mode = 040755, .mtime_s = 1764650000, .mtime_ns = 5,
				   .ctime_s = 1764650001, .ctime_ns = 999999999, .target = "" };
	dirs[1] = (struct pf_dep){ .kind = PF_DEP_LIST, .path = "/w/a b\nc", .err = 13,
				   .target = "" };
	return (struct gs_walk){ "/w", hits, 1, dirs, 2, 37, true };
}

/* The sample's bytes, in a. */
static uint8_t *written(struct arena *a, struct gs_walk *w, size_t *n)
{
	uint8_t *b;
	*w = sample();
	gs_keep_write(a, w, &b, n);
	return b;
}

Test(gs_keep, what_is_written_reads_back)
{
	struct arena a = { 0 };
	struct gs_walk w, r;
	size_t n;
	uint8_t *b = written(&a, &w, &n);
	cr_assert(gs_keep_read(&a, b, n, &r));
	cr_expect_str_eq(r.workspace, "/w");
	cr_expect_eq(r.scanned, 37);
	cr_expect(r.truncated);
	cr_assert_eq(r.nhits, 1);
	cr_expect_str_eq(r.hits[0], "/w/a/r1");
	cr_assert_eq(r.ndirs, 2);
	for (size_t i = 0; i < 2; i++)
		cr_expect(pf_dep_same(&w.dirs[i], &r.dirs[i]), "listing %zu", i);
	arena_free(&a);
}

Test(gs_keep, every_truncation_and_flipped_byte_is_refused)
{
	struct arena a = { 0 };
	struct gs_walk w, r;
	size_t n;
	uint8_t *b = written(&a, &w, &n);
	for (size_t k = 0; k < n; k++)
		cr_expect(!gs_keep_read(&a, b, k, &r), "%zu of %zu bytes read", k, n);
	for (size_t i = 0; i < n; i++)
		for (int bit = 0; bit < 8; bit++) {
			b[i] ^= (uint8_t)(1u << bit);
			cr_expect(!gs_keep_read(&a, b, n, &r), "byte %zu bit %d", i, bit);
			b[i] ^= (uint8_t)(1u << bit);
		}
	cr_expect(gs_keep_read(&a, b, n, &r));
	arena_free(&a);
}

Test(gs_keep, names_differ_by_workspace)
{
	char x[48], y[48];
	gs_keep_name("/w", x);
	gs_keep_name("/w2", y);
	cr_expect_str_neq(x, y);
	cr_expect(strstr(x, ".walk") != NULL);
}
