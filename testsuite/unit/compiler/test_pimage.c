/*
 * test_pimage.c - a compiled policy as bytes and back (cage.h's
 * cage_policy_image, cage_policy_from_image; compiler/resolve/pimage.c):
 * every example and every good corpus case reads back to a policy that
 * emits the same IR, writes the same bytes again and asks the disk the
 * same questions; damaged images are refused, and images damaged behind a
 * recomputed checksum are refused or read into something that holds
 * together (AddressSanitizer watches the reading).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include "cage.h"

static char *emit_ir(cage_policy *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	cr_assert(mem);
	const char *err = NULL;
	bool ok = cage_emit(p, "ir", mem, &err);
	fclose(mem);
	cr_assert(ok, "emit: %s", err ? err : "?");
	return buf;
}

/* The options stay with the policy until it is freed (a source file's
 * stdlib_root points into them). */
static cage_policy *load(const char *file, const char *home, bool workspace, cage_options **op)
{
	cage_options *o = *op = cage_options_new();
	cr_assert(o);
	cage_options_stdlib(o, CAGE_SOURCE_DIR "/stdlib");
	cage_options_home(o, home);
	cr_assert(cage_options_target(o, "linux"));
	if (workspace)
		cr_assert(cage_options_define(o, "workspace=" CAGE_SOURCE_DIR));
	cage_policy *p = cage_load_file(file, o);
	cr_assert(p);
	return p;
}

/* One policy through an image and back; false when it has none (it has
 * diagnostics). */
static bool round_trip(const char *file, bool workspace)
{
	cage_options *o;
	cage_policy *p = load(file, "/home/u", workspace, &o);
	unsigned char *img;
	size_t n;
	if (!cage_policy_image(p, &img, &n)) {
		cr_assert_gt(cage_diagnostic_count(p), 0, "%s: no image, yet no diagnostic", file);
		cage_policy_free(p);
		cage_options_free(o);
		return false;
	}
	const char *why = NULL;
	cage_policy *q = cage_policy_from_image(img, n, &why);
	cr_assert(q, "%s: %s", file, why);
	char *a = emit_ir(p), *b = emit_ir(q);
	cr_assert_str_eq(a, b, "%s: the IR read back differs", file);
	unsigned char *img2;
	size_t n2;
	cr_assert(cage_policy_image(q, &img2, &n2), "%s: no image of the image", file);
	cr_assert(n == n2 && !memcmp(img, img2, n), "%s: written again, other bytes", file);
	const char *changed = NULL;
	size_t asked_p, asked_q;
	cr_assert(cage_inputs_unchanged(p, &changed, &asked_p));
	cr_assert(cage_inputs_unchanged(q, &changed, &asked_q), "%s: %s", file, changed);
	cr_assert_eq(asked_p, asked_q);
	cr_assert_gt(asked_q, 0);
	free(a);
	free(b);
	free(img);
	free(img2);
	cage_policy_free(p);
	cage_policy_free(q);
	cage_options_free(o);
	return true;
}

static int each_cage_file(const char *dir, bool workspace)
{
	DIR *d = opendir(dir);
	cr_assert(d, "%s", dir);
	int imaged = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".cage"))
			continue;
		char file[4096];
		snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
		imaged += round_trip(file, workspace);
	}
	closedir(d);
	return imaged;
}

Test(pimage, examples_and_corpus_read_back_the_same)
{
	int n = each_cage_file(CAGE_SOURCE_DIR "/examples", true);
	cr_assert_geq(n, 3, "only %d examples had an image", n);
	int m = each_cage_file(CAGE_SOURCE_DIR "/testsuite/corpus/ok", false);
	cr_assert_geq(m, 10, "only %d corpus cases had an image", m);
	cr_log_info("%d examples and %d corpus cases read back the same", n, m);
}

Test(pimage, policy_with_diagnostics_has_no_image)
{
	cage_options *o = cage_options_new();
	const char *text = "cage 1\nprofile p {\n    allow read \"/nowhere/**\"\n    bogus\n}\n";
	cage_policy *p = cage_load_string("bad.cage", text, strlen(text), o);
	cr_assert_gt(cage_diagnostic_count(p), 0, "control: the policy has diagnostics");
	unsigned char *img = NULL;
	size_t n = 0;
	cr_assert(!cage_policy_image(p, &img, &n));
	cr_assert_null(img);
	cage_policy_free(p);
	cage_options_free(o);
}

static unsigned char *example_image(size_t *n)
{
	cage_options *o;
	cage_policy *p = load(CAGE_SOURCE_DIR "/examples/claude-code.cage", "/home/u", true, &o);
	unsigned char *img;
	cr_assert(cage_policy_image(p, &img, n));
	cage_policy_free(p);
	cage_options_free(o);
	return img;
}

Test(pimage, damaged_images_are_refused)
{
	size_t n;
	unsigned char *img = example_image(&n);
	const char *why;
	cage_policy *ok = cage_policy_from_image(img, n, &why);
	cr_assert(ok, "control: the image reads: %s", why);
	cage_policy_free(ok);
	/* Cut short anywhere. */
	for (size_t k = 0; k < 400; k++) {
		size_t len = k * (n - 1) / 399;
		cr_assert_null(cage_policy_from_image(img, len, &why), "cut at %zu read", len);
		cr_assert(why);
	}
	/* One byte changed anywhere: the header, or the payload under its
	 * checksum. */
	for (size_t k = 0; k < 400; k++) {
		size_t at = k * (n - 1) / 399;
		img[at] ^= 0x5a;
		cr_assert_null(cage_policy_from_image(img, n, &why), "byte %zu changed, read", at);
		img[at] ^= 0x5a;
	}
	free(img);
}

/* The backends on a policy read from an image: each relies on the IR
 * being as the compiler makes it, and must neither crash nor read out of
 * bounds (ASan) on whatever the reader lets through. The Linux plan's
 * (which asks the disk, some milliseconds) on one read in `plan_every`. */
static void run_backends(cage_policy *q, bool with_plans)
{
	FILE *sink = fopen("/dev/null", "w");
	cr_assert(sink);
	const char *name;
	for (size_t i = 0; (name = cage_backend_name(i)); i++) {
		bool plan = strcmp(name, "linux") == 0 || strcmp(name, "plan") == 0;
		const char *err;
		if (with_plans || !plan)
			(void)cage_emit(q, name, sink, &err);
	}
	fclose(sink);
}

/* The checksum recomputed over a changed payload, as someone who can
 * write the cache could: the reader must still refuse what does not hold
 * together, and never read out of bounds (ASan). What it accepts must be
 * a policy that can be written again and that the backends can take. */
Test(pimage, damage_behind_the_checksum_is_read_safely)
{
	size_t n;
	unsigned char *img = example_image(&n);
	const size_t header = 28;
	uint64_t state = 0x9e3779b97f4a7c15ull;
	int refused = 0, read = 0;
	const int plan_every = 8;
	for (int k = 0; k < 3000; k++) {
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		size_t at = header + (size_t)(state % (n - header));
		unsigned char was = img[at];
		static const unsigned char vals[] = { 0x00, 0x01, 0x02, 0x7f, 0x80, 0xff };
		img[at] = (k & 1) ? vals[(state >> 32) % 6] : (unsigned char)(was ^ (1u << (k % 8)));
		uint64_t sum = XXH3_64bits(img + header, n - header);
		unsigned char keep[8];
		memcpy(keep, img + 20, 8);
		memcpy(img + 20, &sum, 8);
		const char *why;
		cage_policy *q = cage_policy_from_image(img, n, &why);
		if (q) {
			unsigned char *again;
			size_t m;
			if (cage_policy_image(q, &again, &m))
				free(again);
			run_backends(q, read % plan_every == 0);
			cage_policy_free(q);
			read++;
		} else {
			cr_assert(why);
			refused++;
		}
		memcpy(img + 20, keep, 8);
		img[at] = was;
	}
	cr_log_info("%d refused, %d read (a changed line number or text reads)", refused, read);
	cr_assert_gt(refused, 100);
	free(img);
}

/* The length of the string at b (u32, then its bytes and NUL; none is
 * four bytes). */
static size_t skip_str(const unsigned char *b)
{
	uint32_t n;
	memcpy(&n, b, 4);
	return n == 0xffffffffu ? 4 : 4 + (size_t)n + 1;
}

/* A file that imports itself, behind a good checksum: the chain of
 * importers would never end, and is refused. */
Test(pimage, importer_circle_is_refused)
{
	size_t n;
	unsigned char *img = example_image(&n);
	size_t at = 28 + 8;    /* the header, the count of files */
	at += skip_str(img + at); /* name */
	at += skip_str(img + at); /* realpath */
	at += skip_str(img + at); /* text */
	at += 4;                  /* id */
	at += skip_str(img + at); /* stdlib_root */
	uint32_t imp;
	memcpy(&imp, img + at, 4);
	cr_assert_eq(imp, 0xffffffffu, "control: the main file has no importer");
	const char *why;
	uint32_t self = 0;
	memcpy(img + at, &self, 4);
	uint64_t sum = XXH3_64bits(img + 28, n - 28);
	memcpy(img + 20, &sum, 8);
	cr_assert_null(cage_policy_from_image(img, n, &why));
	cr_assert_str_eq(why, "files that import each other in a circle");
	free(img);
}
