/*
 * test_pat_rel.c - the exact pattern relations the checker relies on.
 *
 * Hand-picked cases pin down the traps (`~/.ssh-backup` is not under
 * `~/.ssh`, a final slash-doublestar also matching the directory itself, '*' not crossing
 * '/'), and a brute-force cross-check compares every answer with an
 * independent backtracking matcher run over every normalised path up to a
 * length bound on a tiny alphabet: a YES must come with a witness that
 * really matches, a NO must survive the enumeration. The same enumeration
 * checks that the evaluator's matcher (path_match) agrees on every pattern
 * the resolver could produce, so checker and evaluator mean the same thing.
 * The paths include a two-byte character ('é'): `?` and `*` match
 * characters, not bytes, in the reference, the checker and the evaluator.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fx_pattern.h"
#include "pat_rel.h"
#include "path.h"

/* ---- an independent reference matcher (backtracking, exponential) ---- */

static size_t star_run(const char *p)
{
	size_t r = 0;
	while (p[r] == '*')
		r++;
	return r;
}

static bool ref_match_text(const char *p, const char *s);

/* Bytes in the UTF-8 character at s (1 for ASCII and stray bytes). */
static size_t ref_char(const char *s)
{
	unsigned char c = (unsigned char)s[0];
	size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1, k = 1;
	while (k < want && ((unsigned char)s[k] & 0xC0) == 0x80)
		k++;
	return k;
}

/* "/" has no components: only all-"**" patterns match it (as the evaluator
 * decides component by component). */
static bool ref_match(const char *p, const char *s)
{
	if (strcmp(s, "/") == 0) {
		char buf[64];
		snprintf(buf, sizeof buf, "%s", p);
		for (char *save = NULL, *c = strtok_r(buf, "/", &save); c;
		     c = strtok_r(NULL, "/", &save))
			if (strspn(c, "*") != strlen(c) || strlen(c) < 2)
				return false;
		return p[0] == '/';
	}
	return ref_match_text(p, s);
}

static bool ref_match_text(const char *p, const char *s)
{
	if (*p == '\0')
		return *s == '\0';
	if (p[0] == '/') {
		size_t r = star_run(p + 1);
		if (r >= 2 && (p[1 + r] == '/' || p[1 + r] == '\0') &&
		    ref_match_text(p + 1 + r, s))
			return true;
	}
	size_t r = star_run(p);
	if (r >= 2) {
		for (const char *t = s;; t += ref_char(t)) {
			if (ref_match_text(p + r, t))
				return true;
			if (*t == '\0')
				return false;
		}
	}
	if (r == 1) {
		for (const char *t = s;; t += ref_char(t)) {
			if (ref_match_text(p + 1, t))
				return true;
			if (*t == '\0' || *t == '/')
				return false;
		}
	}
	if (*p == '?')
		return *s && *s != '/' && ref_match_text(p + 1, s + ref_char(s));
	return *s == *p && ref_match_text(p + 1, s + 1);
}

static bool normalised(const char *s)
{
	if (s[0] != '/')
		return false;
	if (s[1] == '\0')
		return true;
	const char *c = s + 1;
	for (;;) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!e)
			return true;
		c = e + 1;
	}
}

/* ---- helpers ---- */

static enum pat_ans ov(const char *a, const char *b, char *w)
{
	return pat_glob_overlap(a, strlen(a), b, strlen(b), w, PAT_WITNESS_MAX);
}

static enum pat_ans ct(const char *a, const char *b, char *w)
{
	return pat_glob_contains(a, strlen(a), b, strlen(b), w, PAT_WITNESS_MAX);
}

static struct ir_path mkpath(const char *text, uint32_t home_len)
{
	struct ir_path p = { .text = text, .len = (uint32_t)strlen(text), .home_len = home_len };
	size_t l = 0;
	while (text[l] && text[l] != '*' && text[l] != '?')
		l++;
	p.lit_prefix = (uint32_t)l;
	size_t n = strlen(text);
	if (l == n)
		p.kind = IR_PAT_EXACT;
	else if (l + 2 == n && l >= 1 && strcmp(text + l - 1, "/**") == 0)
		p.kind = IR_PAT_SUBTREE;
	else
		p.kind = IR_PAT_GLOB;
	return p;
}

/* ---- hand-picked cases ---- */

Test(pat_rel, sibling_with_shared_prefix_is_not_inside)
{
	char w[PAT_WITNESS_MAX];
	cr_expect_eq(ov("/h/.ssh/**", "/h/.ssh-backup", w), PAT_NO);
	cr_expect_eq(ov("/h/.ssh/**", "/h/.ssh-backup/**", w), PAT_NO);
	cr_expect_eq(ov("/h/.ssh/**", "/h/.sshx/*", w), PAT_NO);
	cr_expect_eq(ct("/h/.ssh/**", "/h/.ssh-backup/id", w), PAT_NO);
	cr_expect_str_eq(w, "/h/.ssh-backup/id");
}

Test(pat_rel, doublestar_glob_reaches_nested_key)
{
	char w[PAT_WITNESS_MAX];
	cr_expect_eq(ov("/h/**/id_*", "/h/.ssh/id_rsa", w), PAT_YES);
	cr_expect_str_eq(w, "/h/.ssh/id_rsa");
	cr_expect_eq(ov("/h/**/id_*", "/h/.ssh/**", w), PAT_YES);
	cr_expect_str_eq(w, "/h/.ssh/id_");
	/* a slash-doublestar-slash also matches a single "/" */
	cr_expect_eq(ov("/h/**/id_*", "/h/id_x", w), PAT_YES);
	cr_expect_eq(ct("/h/**", "/h/**/id_*", w), PAT_YES);
	cr_expect_eq(ct("/h/**/id_*", "/h/.ssh/**", w), PAT_NO);
	cr_expect_str_eq(w, "/h/.ssh");
}

Test(pat_rel, subtree_includes_the_directory_itself)
{
	char w[PAT_WITNESS_MAX];
	cr_expect_eq(ov("/h/.ssh/**", "/h/.ssh", w), PAT_YES);
	cr_expect_eq(ct("/h/.ssh/**", "/h/.ssh", w), PAT_YES);
	cr_expect_eq(ct("/h/**", "/h/.ssh/**", w), PAT_YES);
	cr_expect_eq(ct("/h/.ssh/**", "/h/**", w), PAT_NO);
	cr_expect_str_eq(w, "/h");
	cr_expect(pat_glob_match("/**", 3, "/", 1));
	cr_expect_eq(ct("/**", "/h/**/x?y*", w), PAT_YES);
	cr_expect_eq(ct("/**", "/", w), PAT_YES);
}

Test(pat_rel, single_star_does_not_cross_slash)
{
	char w[PAT_WITNESS_MAX];
	cr_expect_eq(ov("/h/*", "/h/a/b", w), PAT_NO);
	cr_expect_eq(ov("/h/*", "/h/a/**", w), PAT_YES);
	cr_expect_str_eq(w, "/h/a");
	cr_expect_eq(ct("/h/**", "/h/*", w), PAT_YES);
	cr_expect_eq(ct("/h/*", "/h/**", w), PAT_NO);
	cr_expect_eq(ov("/h/?", "/h/ab", w), PAT_NO);
	cr_expect_eq(ov("/h/?b", "/h/a?", w), PAT_YES);
	cr_expect_str_eq(w, "/h/ab");
}

Test(pat_rel, only_normalised_paths_count)
{
	char w[PAT_WITNESS_MAX];
	/* "/a/." and "/a/.." are not paths the evaluator ever sees */
	cr_expect_eq(ov("/a/*", "/a/.", w), PAT_NO);
	cr_expect_eq(ov("/a/?", "/a/.", w), PAT_NO);
	cr_expect_eq(ov("/a/*", "/a/.?", w), PAT_YES);
	cr_expect(normalised(w));
	/* star contains question mark */
	cr_expect_eq(ct("/a/*", "/a/?", w), PAT_YES);
	/* the subtree pattern can produce "/a/" only as text, never as a
	 * normalised path */
	cr_expect_eq(ov("/a/**", "/a/", w), PAT_NO);
}

Test(pat_rel, exact_patterns)
{
	char w[PAT_WITNESS_MAX];
	cr_expect_eq(ov("/a/b", "/a/b", w), PAT_YES);
	cr_expect_eq(ov("/a/b", "/a/bc", w), PAT_NO);
	cr_expect_eq(ov("/a/bc", "/a/b", w), PAT_NO);
	cr_expect_eq(ct("/a/b", "/a/?", w), PAT_NO);
	cr_expect_eq(ct("/a/?", "/a/b", w), PAT_YES);
}

Test(pat_rel, ir_wrappers_and_cover)
{
	struct ir_path ssh = mkpath("/home/u/.ssh/**", 7);
	struct ir_path home = mkpath("/home/u/**", 7);
	struct ir_path key = mkpath("/home/u/.ssh/id_rsa", 7);
	struct ir_path ids = mkpath("/home/u/**/id_*", 7);
	struct ir_path bak = mkpath("/home/u/.ssh-backup/**", 7);
	cr_assert_eq(ssh.kind, IR_PAT_SUBTREE);
	cr_assert_eq(key.kind, IR_PAT_EXACT);
	cr_assert_eq(ids.kind, IR_PAT_GLOB);

	struct pat_cover c;
	pat_path_cover(&home, &ssh, &c);
	cr_expect_eq(c.kind, PAT_COVER_ALL);
	pat_path_cover(&key, &ssh, &c);
	cr_expect_eq(c.kind, PAT_COVER_INSIDE);
	cr_expect_str_eq(c.example, "/home/u/.ssh/id_rsa");
	pat_path_cover(&ids, &ssh, &c);
	cr_expect_eq(c.kind, PAT_COVER_SOME);
	cr_expect(ref_match("/home/u/**/id_*", c.example));
	cr_expect(ref_match("/home/u/.ssh/**", c.example));
	pat_path_cover(&bak, &ssh, &c);
	cr_expect_eq(c.kind, PAT_COVER_NONE);

	char buf[256];
	pat_display(&ssh, "/home/u/.ssh/id_", buf, sizeof buf);
	cr_expect_str_eq(buf, "~/.ssh/id_");
	pat_display(&ssh, "/home/uv/x", buf, sizeof buf);
	cr_expect_str_eq(buf, "/home/uv/x");
	cr_expect_eq(pat_path_overlap(&key, &ids, buf, sizeof buf), PAT_YES);
	cr_expect_eq(pat_path_contains(&ids, &key, buf, sizeof buf), PAT_YES);
	cr_expect_eq(pat_path_contains(&key, &ids, buf, sizeof buf), PAT_NO);
}

/* `?` is one character: 'ü' (two bytes) is one, as the evaluator decides. */
Test(pat_rel, wildcards_match_utf8_characters)
{
	char w[PAT_WITNESS_MAX];
	cr_expect_eq(ov("/U?ers", "/U\xc3\xbc" "ers", w), PAT_YES);
	cr_expect_str_eq(w, "/U\xc3\xbc" "ers");
	cr_expect_eq(ct("/U?ers", "/U\xc3\xbc" "ers", w), PAT_YES);
	cr_expect_eq(ct("/U??ers", "/U\xc3\xbc" "ers", w), PAT_NO);
	cr_expect_eq(ov("/U??ers", "/U\xc3\xbc" "ers", w), PAT_NO);
	cr_expect(pat_glob_match("/U?ers", 6, "/U\xc3\xbc" "ers", 7));
	cr_expect(!pat_glob_match("/U??ers", 7, "/U\xc3\xbc" "ers", 7));
	/* a witness never ends in half a character */
	cr_expect_eq(ov("/d/?", "/d/\xe2\x82\xac", w), PAT_YES);
	cr_expect_str_eq(w, "/d/\xe2\x82\xac");
	cr_expect_eq(ct("/d/\xe2\x82\xac*", "/d/?", w), PAT_NO);
	cr_expect_eq(ct("/*\xc3\xa9", "/?\xc3\xa9", w), PAT_YES);
	cr_expect_eq(ov("/?/x", "/\xf0\x9f\x98\x80/*", w), PAT_YES);
	cr_expect_str_eq(w, "/\xf0\x9f\x98\x80/x");
	struct ir_path p = { .text = "/U?ers" };
	path_classify(&p);
	cr_expect(path_match(&p, "/U\xc3\xbc" "ers"));
	struct ir_path p2 = { .text = "/U??ers" };
	path_classify(&p2);
	cr_expect(!path_match(&p2, "/U\xc3\xbc" "ers"));
}

Test(pat_rel, pathological_glob_reports_unknown_not_a_guess)
{
	/* "an 'a' 20 characters before the end": subsets blow up */
	char a[64] = "/**a", b[64] = "/**";
	for (int i = 0; i < 20; i++)
		strcat(a, "?");
	strcat(b, "b");
	enum pat_ans r = ct(a, b, NULL);
	cr_expect(r == PAT_UNKNOWN || r == PAT_NO);
	/* the opposite direction is cheap and exact */
	cr_expect_eq(ct("/**", a, NULL), PAT_YES);
}

/* ---- brute force ---- */

#define MAXP 7 /* path length bound, in characters */
static char (*paths)[2 * MAXP + 1];
static size_t npaths;

/* "\xc3\xa9" is 'é': one character of two bytes, which no pattern names */
static void gen_paths(char *buf, size_t len, size_t nch)
{
	static const char *const al[] = { "a", "b", ".", "/", "\xc3\xa9" };
	if (normalised(buf)) {
		memcpy(paths[npaths++], buf, len + 1);
	}
	if (nch == MAXP)
		return;
	for (size_t i = 0; i < sizeof al / sizeof al[0]; i++) {
		size_t n = strlen(al[i]);
		memcpy(buf + len, al[i], n + 1);
		gen_paths(buf, len + n, nch + 1);
	}
	buf[len] = '\0';
}

static void setup_paths(void)
{
	size_t cap = 1;
	for (int i = 0; i < MAXP; i++)
		cap *= 5;
	cap = cap * 5 / 4 + 8;
	paths = malloc(cap * sizeof *paths);
	cr_assert(paths);
	char buf[2 * MAXP + 2] = "/";
	npaths = 0;
	gen_paths(buf, 1, 1);
}

static const char *toks[] = { "a", "b", ".", "/", "*", "**", "?" };
#define NTOKS 7

static size_t make_pattern(char *out, unsigned code, int ntok)
{
	strcpy(out, "/");
	for (int i = 0; i < ntok; i++) {
		strcat(out, toks[code % NTOKS]);
		code /= NTOKS;
	}
	return strlen(out);
}

struct pat_vec {
	char text[32];
	uint64_t *m;
	bool canon; /* the resolver's normal form: ip describes it */
	struct ir_path ip;
};

static unsigned long inside_checked, path_contains_checked;

static void check_pair(const struct pat_vec *A, const struct pat_vec *B, size_t words,
		       unsigned long *yes, unsigned long *no)
{
	char w[PAT_WITNESS_MAX];
	bool any = false, sub = true;
	for (size_t i = 0; i < words; i++) {
		if (A->m[i] & B->m[i])
			any = true;
		if (B->m[i] & ~A->m[i])
			sub = false;
	}
	enum pat_ans o = ov(A->text, B->text, w);
	cr_assert_neq(o, PAT_UNKNOWN, "overlap(%s, %s) unknown", A->text, B->text);
	if (o == PAT_YES) {
		(*yes)++;
		cr_assert(normalised(w) && ref_match(A->text, w) && ref_match(B->text, w),
			  "overlap(%s, %s): bad witness %s", A->text, B->text, w);
	} else {
		(*no)++;
		cr_assert(!any, "overlap(%s, %s) said no, brute force found one", A->text,
			  B->text);
	}
	/* The text-only shortcut may only ever say yes where B is inside A. */
	if (A->canon && B->canon && pat_path_inside_tree(&A->ip, &B->ip)) {
		cr_assert(sub, "inside_tree(%s, %s) said yes, brute force disagrees", A->text,
			  B->text);
		inside_checked++;
	}
	enum pat_ans c = ct(A->text, B->text, w);
	cr_assert_neq(c, PAT_UNKNOWN, "contains(%s, %s) unknown", A->text, B->text);
	if (c == PAT_NO)
		cr_assert(normalised(w) && !ref_match(A->text, w) && ref_match(B->text, w),
			  "contains(%s, %s): bad counterexample %s", A->text, B->text, w);
	else
		cr_assert(sub, "contains(%s, %s) said yes, brute force disagrees", A->text,
			  B->text);
	/* The IR's entry, with its shortcuts before the full answer: the full
	 * answer's verdict, with and without a counterexample asked for. */
	if (A->canon && B->canon) {
		enum pat_ans pw = pat_path_contains(&A->ip, &B->ip, w, PAT_WITNESS_MAX);
		enum pat_ans pn = pat_path_contains(&A->ip, &B->ip, NULL, 0);
		cr_assert_eq(pw, c, "path_contains(%s, %s) with an example", A->text, B->text);
		cr_assert_eq(pn, c, "path_contains(%s, %s) without an example", A->text, B->text);
		if (pw == PAT_NO)
			cr_assert(normalised(w) && !ref_match(A->text, w) && ref_match(B->text, w),
				  "path_contains(%s, %s): bad counterexample %s", A->text, B->text,
				  w);
		path_contains_checked++;
	}
}

static unsigned long evaluator_checked;

static struct pat_vec *vectors(const char (*texts)[32], size_t n, size_t words)
{
	struct pat_vec *v = calloc(n, sizeof *v);
	cr_assert(v);
	struct arena a;
	arena_init(&a);
	for (size_t p = 0; p < n; p++) {
		strcpy(v[p].text, texts[p]);
		struct ir_path ip;
		bool canon = fx_resolver_form(&a, texts[p], &ip);
		if (canon) {
			v[p].canon = true;
			v[p].ip = ip;
			v[p].ip.text = v[p].text; /* the same bytes, outliving the arena */
		}
		v[p].m = calloc(words, sizeof(uint64_t));
		cr_assert(v[p].m);
		size_t plen = strlen(texts[p]);
		for (size_t i = 0; i < npaths; i++) {
			bool r = ref_match(texts[p], paths[i]);
			cr_assert_eq(pat_glob_match(texts[p], plen, paths[i], strlen(paths[i])), r,
				     "match(%s, %s)", texts[p], paths[i]);
			if (canon) {
				cr_assert_eq(ir_path_match(&ip, paths[i]), r,
					     "evaluator and checker disagree: %s on %s", texts[p],
					     paths[i]);
				evaluator_checked++;
			}
			if (r)
				v[p].m[i / 64] |= (uint64_t)1 << (i % 64);
		}
	}
	arena_free(&a);
	return v;
}

static void free_vectors(struct pat_vec *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].m);
	free(v);
}

Test(pat_rel_brute, all_pairs_up_to_three_tokens)
{
	setup_paths();
	size_t words = (npaths + 63) / 64;
	size_t n = 0;
	static char texts[1 + 7 + 49 + 343][32];
	for (int len = 0; len <= 3; len++) {
		unsigned count = 1;
		for (int i = 0; i < len; i++)
			count *= NTOKS;
		for (unsigned code = 0; code < count; code++)
			make_pattern(texts[n++], code, len);
	}
	struct pat_vec *v = vectors((const char (*)[32])texts, n, words);
	unsigned long yes = 0, no = 0;
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < n; b++)
			check_pair(&v[a], &v[b], words, &yes, &no);
	/* both answers must actually occur, or the check proves nothing */
	cr_expect_gt(yes, 1000);
	cr_expect_gt(no, 1000);
	cr_expect_gt(evaluator_checked, 10000);
	cr_expect_gt(inside_checked, 100);
	cr_expect_gt(path_contains_checked, 10000);
	free_vectors(v, n);
	free(paths);
}

Test(pat_rel_brute, random_longer_pairs)
{
	setup_paths();
	size_t words = (npaths + 63) / 64;
	enum { N = 600 };
	static char texts[N][32];
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		int len = 4 + (int)((seed >> 33) % 3);
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		make_pattern(texts[i], (unsigned)(seed >> 20), len);
	}
	struct pat_vec *v = vectors((const char (*)[32])texts, N, words);
	unsigned long yes = 0, no = 0;
	for (size_t a = 0; a < N; a++)
		for (size_t b = 0; b < N; b += 7)
			check_pair(&v[a], &v[(b + a) % N], words, &yes, &no);
	cr_expect_gt(yes, 100);
	cr_expect_gt(no, 100);
	free_vectors(v, N);
	free(paths);
}

/* ---- hosts ---- */

static struct ir_host host(enum ir_host_kind k, const char *name, const struct ir_port_range *p,
			   size_t np)
{
	struct ir_host h = { .kind = k, .name = name, .nports = np, .ports = p };
	return h;
}

Test(pat_rel_host, names)
{
	char w[128];
	struct ir_host gh = host(IR_H_NAME, "github.com", NULL, 0);
	struct ir_host sgh = host(IR_H_SUFFIX, "github.com", NULL, 0);
	struct ir_host scom = host(IR_H_SUFFIX, "com", NULL, 0);
	struct ir_host api = host(IR_H_NAME, "api.github.com", NULL, 0);
	struct ir_host evil = host(IR_H_NAME, "evilgithub.com", NULL, 0);
	struct ir_host any = host(IR_H_ANY, "*", NULL, 0);
	struct ir_host v4 = host(IR_H_IPV4, "127.0.0.1", NULL, 0);
	v4.addr[0] = 127;
	v4.addr[3] = 1;

	cr_expect(!pat_host_overlap(&gh, &sgh, w, sizeof w)); /* apex is not a subdomain */
	cr_expect(pat_host_overlap(&api, &sgh, w, sizeof w));
	cr_expect_str_eq(w, "api.github.com");
	cr_expect(!pat_host_overlap(&evil, &sgh, w, sizeof w));
	cr_expect(pat_host_overlap(&scom, &sgh, w, sizeof w));
	cr_expect_str_eq(w, "x.github.com");
	cr_expect(pat_host_contains(&scom, &sgh));
	cr_expect(!pat_host_contains(&sgh, &scom));
	cr_expect(pat_host_contains(&sgh, &sgh));
	cr_expect(pat_host_contains(&any, &scom));
	cr_expect(pat_host_contains(&any, &gh));
	cr_expect(!pat_host_overlap(&any, &v4, w, sizeof w)); /* * never matches IPs */
	cr_expect(!pat_host_contains(&any, &v4));
	cr_expect(pat_host_overlap(&v4, &v4, w, sizeof w));
	cr_expect_str_eq(w, "127.0.0.1");
	struct ir_host sorg = host(IR_H_SUFFIX, "org", NULL, 0);
	cr_expect(!pat_host_overlap(&scom, &sorg, w, sizeof w));

	/* `*` never covers localhost or names under .localhost (ir_host_match) */
	struct ir_host lh = host(IR_H_NAME, "localhost", NULL, 0);
	struct ir_host applh = host(IR_H_NAME, "app.localhost", NULL, 0);
	struct ir_host slh = host(IR_H_SUFFIX, "localhost", NULL, 0);
	struct ir_host notlh = host(IR_H_NAME, "notlocalhost", NULL, 0);
	cr_expect(!pat_host_overlap(&any, &lh, w, sizeof w));
	cr_expect(!pat_host_overlap(&lh, &any, w, sizeof w));
	cr_expect(!pat_host_overlap(&any, &applh, w, sizeof w));
	cr_expect(!pat_host_overlap(&any, &slh, w, sizeof w));
	cr_expect(!pat_host_contains(&any, &lh));
	cr_expect(!pat_host_contains(&any, &slh));
	cr_expect(pat_host_overlap(&any, &notlh, w, sizeof w));
	cr_expect(pat_host_contains(&any, &notlh));
	cr_expect(pat_host_overlap(&slh, &applh, w, sizeof w));
	cr_expect(ir_host_match(&any, "example.com", 443) && !ir_host_match(&any, "localhost", 443),
		  "the relation and the evaluator agree");
}

Test(pat_rel_host, ports)
{
	char w[128];
	struct ir_port_range p443[] = { { 443, 443 } };
	struct ir_port_range p80_443[] = { { 80, 80 }, { 443, 443 } };
	struct ir_port_range r8000[] = { { 8000, 8100 } };
	struct ir_port_range split[] = { { 8050, 8100 }, { 8000, 8049 } };
	struct ir_host a = host(IR_H_NAME, "x.org", p443, 1);
	struct ir_host b = host(IR_H_NAME, "x.org", p80_443, 2);
	struct ir_host c = host(IR_H_NAME, "x.org", r8000, 1);
	struct ir_host d = host(IR_H_NAME, "x.org", split, 2);
	struct ir_host all = host(IR_H_NAME, "x.org", NULL, 0);
	cr_expect(pat_host_overlap(&a, &b, w, sizeof w));
	cr_expect_str_eq(w, "x.org:443");
	cr_expect(pat_host_contains(&b, &a));
	cr_expect(!pat_host_contains(&a, &b));
	cr_expect(!pat_host_overlap(&a, &c, w, sizeof w));
	cr_expect(pat_host_contains(&d, &c)); /* two ranges together cover it */
	cr_expect(pat_host_contains(&c, &d));
	cr_expect(pat_host_contains(&all, &c));
	cr_expect(!pat_host_contains(&c, &all));
	cr_expect(pat_host_overlap(&all, &c, w, sizeof w));
	cr_expect_str_eq(w, "x.org:8000");
	struct ir_port_range gap[] = { { 8000, 8010 }, { 8012, 8100 } };
	struct ir_host e = host(IR_H_NAME, "x.org", gap, 2);
	cr_expect(!pat_host_contains(&e, &c));
}

Test(pat_rel_mach, prefixes)
{
	struct ir_mach trustd = { "com.apple.trustd.agent", false };
	struct ir_mach apple = { "com.apple.", true };
	struct ir_mach applet = { "com.apple.trustd", true };
	struct ir_mach other = { "com.example.x", false };
	cr_expect(pat_mach_overlap(&trustd, &apple));
	cr_expect(pat_mach_contains(&apple, &trustd));
	cr_expect(pat_mach_contains(&apple, &applet));
	cr_expect(!pat_mach_contains(&applet, &apple));
	cr_expect(pat_mach_overlap(&applet, &apple));
	cr_expect(!pat_mach_overlap(&other, &apple));
	cr_expect(!pat_mach_contains(&trustd, &apple));
}
