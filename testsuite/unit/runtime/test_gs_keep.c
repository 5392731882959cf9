/*
 * test_gs_keep.c - the bytes of git discovery's kept walk and of what it
 * found (runtime/gitscan/gs_keep.c): what is written reads back the
 * same, and every truncation and every flipped byte is refused (the
 * checksum, or the field it breaks); names differ by workspace and by
 * kind.
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
	static const char *names[] = { ".git", "a b\nc", "src" };
	static bool is_dir[] = { true, true, true };
	static struct gs_entries ents[2];
	ents[0] = (struct gs_entries){ 30, names, is_dir, 3 };
	ents[1] = (struct gs_entries){ 0, NULL, NULL, 0 };
	return (struct gs_walk){ "/w", hits, 1, dirs, ents, 2, 37, true };
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
	for (size_t i = 0; i < 2; i++) {
		cr_expect(pf_dep_same(&w.dirs[i], &r.dirs[i]), "listing %zu", i);
		cr_expect_eq(r.ents[i].count, w.ents[i].count);
		cr_assert_eq(r.ents[i].n, w.ents[i].n);
		for (size_t k = 0; k < r.ents[i].n; k++) {
			cr_expect_str_eq(r.ents[i].names[k], w.ents[i].names[k]);
			cr_expect_eq(r.ents[i].is_dir[k], w.ents[i].is_dir[k]);
		}
	}
	arena_free(&a);
}

/* Entries are names the walk takes, sorted, no more than the count:
 * anything else, sealed with a good checksum, is refused. */
Test(gs_keep, entries_out_of_order_or_not_relevant_are_refused)
{
	struct arena a = { 0 };
	struct gs_walk w = sample(), r;
	uint8_t *b;
	size_t n;
	static const char *swapped[] = { "src", ".git", "a b\nc" };
	static const char *file[] = { ".git", "a b\nc", "notes.txt" };
	static bool kinds[] = { true, true, false };
	struct gs_entries good = w.ents[0];
	w.ents[0].names = swapped;
	gs_keep_write(&a, &w, &b, &n);
	cr_expect(!gs_keep_read(&a, b, n, &r), "entries out of order");
	w.ents[0].names = file;
	w.ents[0].is_dir = kinds;
	gs_keep_write(&a, &w, &b, &n);
	cr_expect(!gs_keep_read(&a, b, n, &r), "a plain file the walk does not take");
	w.ents[0] = good;
	w.ents[0].count = 2;
	gs_keep_write(&a, &w, &b, &n);
	cr_expect(!gs_keep_read(&a, b, n, &r), "more entries than the count");
	w.ents[0] = good;
	gs_keep_write(&a, &w, &b, &n);
	cr_expect(gs_keep_read(&a, b, n, &r));
	arena_free(&a);
}

static bool reads_walk(struct arena *a, const uint8_t *b, size_t n)
{
	struct gs_walk r;
	return gs_keep_read(a, b, n, &r);
}

static bool reads_found(struct arena *a, const uint8_t *b, size_t n)
{
	struct gs_found r;
	return gs_found_read(a, b, n, &r);
}

/* Every shorter prefix and every flipped bit of b refused, b itself read. */
static void refuses_damage(struct arena *a, uint8_t *b, size_t n,
			   bool (*reads)(struct arena *, const uint8_t *, size_t))
{
	for (size_t k = 0; k < n; k++)
		cr_expect(!reads(a, b, k), "%zu of %zu bytes read", k, n);
	for (size_t i = 0; i < n; i++)
		for (int bit = 0; bit < 8; bit++) {
			b[i] ^= (uint8_t)(1u << bit);
			cr_expect(!reads(a, b, n), "byte %zu bit %d", i, bit);
			b[i] ^= (uint8_t)(1u << bit);
		}
	cr_expect(reads(a, b, n));
}

Test(gs_keep, every_truncation_and_flipped_byte_is_refused)
{
	struct arena a = { 0 };
	struct gs_walk w;
	size_t n;
	uint8_t *b = written(&a, &w, &n);
	refuses_damage(&a, b, n, reads_walk);
	arena_free(&a);
}


static struct gs_found found_sample(void)
{
	static struct gs_item v[3];
	v[0] = (struct gs_item){ GS_GITDIR, "/w/a/r1/.git", false, "a repository nested in /w" };
	v[1] = (struct gs_item){ GS_GITFILE, "/w/m/.git", false, "the .git file of /w/m" };
	v[2] = (struct gs_item){ GS_CONFIG, "/s/hooks", true, "core.hooksPath in ~/.gitconfig" };
	return (struct gs_found){ "/w", 0x0123456789abcdefULL, 0xfedcba9876543210ULL, v, 3, 41,
				  false };
}

Test(gs_found, what_is_written_reads_back)
{
	struct arena a = { 0 };
	struct gs_found f = found_sample(), r;
	uint8_t *b;
	size_t n;
	gs_found_write(&a, &f, &b, &n);
	cr_assert(gs_found_read(&a, b, n, &r));
	cr_expect_str_eq(r.workspace, "/w");
	cr_expect_eq(r.key_hi, f.key_hi);
	cr_expect_eq(r.key_lo, f.key_lo);
	cr_expect_eq(r.scanned, 41);
	cr_expect(!r.truncated);
	cr_assert_eq(r.n, 3);
	for (size_t i = 0; i < 3; i++) {
		cr_expect_eq(r.v[i].kind, f.v[i].kind);
		cr_expect_eq(r.v[i].subtree, f.v[i].subtree);
		cr_expect_str_eq(r.v[i].path, f.v[i].path);
		cr_expect_str_eq(r.v[i].why, f.v[i].why);
	}
	f.n = 0; /* nothing found is a record too */
	gs_found_write(&a, &f, &b, &n);
	cr_assert(gs_found_read(&a, b, n, &r));
	cr_expect_eq(r.n, 0);
	arena_free(&a);
}

Test(gs_found, every_truncation_and_flipped_byte_is_refused)
{
	struct arena a = { 0 };
	struct gs_found f = found_sample();
	uint8_t *b;
	size_t n;
	gs_found_write(&a, &f, &b, &n);
	refuses_damage(&a, b, n, reads_found);
	arena_free(&a);
}

/* Sealed with a good checksum and still refused: a walk's record read as
 * a found one, a kind past the last, a relative path. */
Test(gs_found, other_records_and_bad_items_are_refused)
{
	struct arena a = { 0 };
	struct gs_found f = found_sample(), r;
	struct gs_walk w;
	uint8_t *b;
	size_t n;
	uint8_t *wb = written(&a, &w, &n);
	cr_expect(!gs_found_read(&a, wb, n, &r), "a walk's record");
	struct gs_item bad = f.v[0];
	bad.kind = (enum gs_kind)(GS_CONFIG + 1);
	f.v = &bad;
	f.n = 1;
	gs_found_write(&a, &f, &b, &n);
	cr_expect(!gs_found_read(&a, b, n, &r), "an unknown kind");
	bad = found_sample().v[0];
	bad.path = "w/a/r1/.git";
	gs_found_write(&a, &f, &b, &n);
	cr_expect(!gs_found_read(&a, b, n, &r), "a relative path");
	arena_free(&a);
}

/* A walk's by workspace, a found record's by its inputs' digest. */
Test(gs_keep, names_differ_by_workspace_and_key)
{
	char x[48], y[48], z[48], k[48];
	gs_keep_name("/w", x);
	gs_keep_name("/w2", y);
	gs_found_name(1, 2, z);
	gs_found_name(1, 3, k);
	cr_expect_str_neq(x, y);
	cr_expect_str_neq(z, k);
	cr_expect(strstr(x, ".walk") != NULL);
	cr_expect(strstr(z, ".found") != NULL);
	cr_expect(strlen(z) < 48);
}
