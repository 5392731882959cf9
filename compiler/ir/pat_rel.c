/*
 * pat_rel.c - exact overlap and containment of path globs, host patterns
 * and Mach service names (see pat_rel.h for the contract).
 *
 * A glob compiles to a tiny NFA: one state per token position, a character
 * edge to the next position for a literal or '?', a self-loop plus an
 * epsilon edge for '*' and '**', and an epsilon edge over slash-doublestar where that
 * unit may also match nothing (at the end) or a lone "/" (in the middle).
 * Every NFA state has at most one character successor, which keeps the
 * products small.
 *
 * A character is a UTF-8 sequence (path_char_len: a lead byte and its
 * continuation bytes; any other byte alone), as for the evaluator, so `?`
 * matches 'ü' (two bytes) as one character. Characters are coded as their
 * bytes packed into a uint32_t, which is unique per sequence.
 *
 * Characters that appear literally in neither pattern behave alike, so the
 * searches run over an alphabet of those literals plus '/', '.' and one
 * "other" representative. A third automaton, a 7-state DFA, accepts only
 * normalised absolute paths other than the root, so "/a/" + star and
 * "/a/." never "overlap" through a path the resolver could never hand the
 * evaluator; the root, which has no components, is decided apart.
 *
 * overlap: breadth-first search of the product (NFA a) x (NFA b) x (DFA
 * normal) for an accepting state; the BFS tree gives a shortest witness.
 * contains(a, b): the same search over (NFA b) x (subset of NFA a) x normal
 * for a state where b accepts and a does not; the subset construction is
 * done lazily and bounded by a state budget (PAT_UNKNOWN beyond it).
 *
 * The common literal prefix of both patterns is skipped up front (minus one
 * character, so that a slash-doublestar right after it keeps its epsilon edge), which
 * makes typical comparisons between `~/...` patterns tiny. The skip is
 * counted twice: in bytes (kb, for the texts) and in characters (kt, for
 * the automata's states, one per character token).
 */
#include "pat_rel.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"

/* Product states for overlap, subset states for containment. Realistic
 * patterns need a few hundred; these bounds only stop adversarial ones. */
enum { OVERLAP_BUDGET = 1u << 22, CONTAIN_BUDGET = 1u << 16 };

/* ---- glob NFA ---- */

enum { T_LIT, T_ANY1, T_STAR, T_DSTAR };

struct tok {
	uint8_t kind;
	uint32_t c; /* T_LIT: the character's code (ch_code) */
};

/* The character at s[0..n) as a code, and its length in *adv. */
static uint32_t ch_code(const char *s, size_t n, size_t *adv)
{
	size_t k = path_char_len(s, n);
	uint32_t c = 0;
	for (size_t i = 0; i < k; i++)
		c = c << 8 | (uint8_t)s[i];
	*adv = k;
	return c;
}

/* Writes the bytes of code c; returns how many (at most 4). */
static size_t ch_bytes(uint32_t c, char *out)
{
	size_t n = c > 0xFFFFFF ? 4 : c > 0xFFFF ? 3 : c > 0xFF ? 2 : 1;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)(c >> (8 * (n - 1 - i)));
	return n;
}

struct glob {
	struct tok *t;
	uint8_t *skip; /* skip[i]: epsilon edge i -> i+2 over "/" "**" */
	uint32_t n;    /* tokens; state n accepts */
};

static void glob_free(struct glob *g)
{
	free(g->t);
	free(g->skip);
}

static bool glob_compile(struct glob *g, const char *s, size_t len)
{
	g->t = malloc((len + 1) * sizeof *g->t);
	g->skip = calloc(len + 2, 1);
	g->n = 0;
	if (!g->t || !g->skip) {
		glob_free(g);
		return false;
	}
	uint32_t n = 0;
	for (size_t i = 0; i < len;) {
		if (s[i] == '*') {
			size_t j = i;
			while (j < len && s[j] == '*')
				j++;
			/* "***" matches what "**" matches: ** followed by * adds nothing */
			g->t[n++] = (struct tok){ j - i >= 2 ? T_DSTAR : T_STAR, 0 };
			i = j;
		} else if (s[i] == '?') {
			g->t[n++] = (struct tok){ T_ANY1, 0 };
			i++;
		} else {
			size_t adv;
			uint32_t c = ch_code(s + i, len - i, &adv);
			g->t[n++] = (struct tok){ T_LIT, c };
			i += adv;
		}
	}
	g->n = n;
	for (uint32_t i = 0; i + 1 < n; i++)
		if (g->t[i].kind == T_LIT && g->t[i].c == '/' && g->t[i + 1].kind == T_DSTAR &&
		    (i + 2 == n || (g->t[i + 2].kind == T_LIT && g->t[i + 2].c == '/')))
			g->skip[i] = 1;
	return true;
}

/* The one character successor of state i on c, or -1. */
static int64_t glob_succ(const struct glob *g, uint32_t i, uint32_t c)
{
	if (i >= g->n)
		return -1;
	const struct tok *t = &g->t[i];
	switch (t->kind) {
	case T_LIT:
		return t->c == c ? (int64_t)i + 1 : -1;
	case T_ANY1:
		return c != '/' ? (int64_t)i + 1 : -1;
	case T_STAR:
		return c != '/' ? (int64_t)i : -1;
	default:
		return i;
	}
}

static bool glob_has_eps1(const struct glob *g, uint32_t i)
{
	return i < g->n && (g->t[i].kind == T_STAR || g->t[i].kind == T_DSTAR);
}

/* Bit sets over states k..n (bit r = state k + r). */
static inline bool bs_get(const uint64_t *b, uint32_t r)
{
	return (b[r >> 6] >> (r & 63)) & 1;
}
static inline void bs_set(uint64_t *b, uint32_t r)
{
	b[r >> 6] |= (uint64_t)1 << (r & 63);
}

/* Epsilon edges only go forward, so one ascending pass closes the set. */
static void glob_close(const struct glob *g, uint32_t k, uint64_t *b)
{
	for (uint32_t i = k; i < g->n; i++) {
		if (!bs_get(b, i - k))
			continue;
		if (glob_has_eps1(g, i))
			bs_set(b, i + 1 - k);
		if (g->skip[i])
			bs_set(b, i + 2 - k);
	}
}

static void glob_step(const struct glob *g, uint32_t k, const uint64_t *from,
		      uint64_t *to, size_t words, uint32_t c)
{
	memset(to, 0, words * sizeof *to);
	for (uint32_t i = k; i < g->n; i++) {
		if (!bs_get(from, i - k))
			continue;
		int64_t s = glob_succ(g, i, c);
		if (s >= 0)
			bs_set(to, (uint32_t)s - k);
	}
	glob_close(g, k, to);
}

static bool root_match(const char *p, size_t n);

static size_t lit_len(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len && s[i] != '*' && s[i] != '?')
		i++;
	return i;
}

/* Where to start the automata in a literal prefix s[0..m): at its last
 * character (kb bytes, kt characters in), so an edge out of that character
 * into what follows stays in the search. */
static void skip_point(const char *s, size_t m, size_t *kb, size_t *kt)
{
	size_t last = 0, n = 0;
	for (size_t i = 0; i < m; i += path_char_len(s + i, m - i)) {
		last = i;
		n++;
	}
	*kb = last;
	*kt = n ? n - 1 : 0;
}

bool pat_glob_match(const char *pat, size_t plen, const char *path, size_t len)
{
	if (len == 1 && path[0] == '/')
		return root_match(pat, plen);
	size_t l = lit_len(pat, plen);
	if (l == plen)
		return len == plen && memcmp(pat, path, len) == 0;
	size_t kb, kt;
	skip_point(pat, l, &kb, &kt);
	if (len < kb || memcmp(pat, path, kb) != 0)
		return false;
	struct glob g;
	if (!glob_compile(&g, pat, plen))
		return false; /* out of memory: matching nothing is the safe answer for a grant */
	size_t words = (g.n - kt + 1 + 63) / 64;
	uint64_t *base = calloc(words * 2, sizeof *base);
	bool ok = false;
	if (base) {
		uint64_t *cur = base, *nxt = base + words;
		bs_set(cur, 0);
		glob_close(&g, (uint32_t)kt, cur);
		for (size_t i = kb, adv; i < len; i += adv) {
			glob_step(&g, (uint32_t)kt, cur, nxt, words, ch_code(path + i, len - i, &adv));
			uint64_t *t = cur;
			cur = nxt;
			nxt = t;
		}
		ok = bs_get(cur, g.n - (uint32_t)kt);
		free(base);
	}
	glob_free(&g);
	return ok;
}

/* ---- normalised absolute paths ---- */

enum { N_START, N_ROOT, N_SLASH, N_DOT1, N_DOT2, N_COMP, N_DEAD, N_STATES };

static uint8_t norm_step(uint8_t q, uint32_t c)
{
	switch (q) {
	case N_START:
		return c == '/' ? N_ROOT : N_DEAD;
	case N_ROOT:
	case N_SLASH:
		return c == '/' ? N_DEAD : c == '.' ? N_DOT1 : N_COMP;
	case N_DOT1:
		return c == '/' ? N_DEAD : c == '.' ? N_DOT2 : N_COMP;
	case N_DOT2:
		return c == '/' ? N_DEAD : N_COMP;
	case N_COMP:
		return c == '/' ? N_SLASH : N_COMP;
	default:
		return N_DEAD;
	}
}

/* The root is handled apart (root_match), so the DFA accepts only paths
 * with at least one component. */
static bool norm_accept(uint8_t q)
{
	return q == N_COMP;
}

/* Does the pattern match "/"? The evaluator matches component by component
 * and "/" has no components, so only patterns made of "**" components (or
 * "/" itself) do; character semantics would also let a leading `*` match
 * the empty name, which no real path has. */
static bool root_match(const char *p, size_t n)
{
	if (n == 0 || p[0] != '/')
		return false;
	size_t i = 0;
	while (i < n) {
		while (i < n && p[i] == '/')
			i++;
		size_t s = i;
		while (i < n && p[i] != '/')
			i++;
		if (i == s)
			continue;
		for (size_t k = s; k < i; k++)
			if (p[k] != '*')
				return false;
		if (i - s < 2)
			return false;
	}
	return true;
}

/* ---- alphabet ---- */

struct alpha {
	uint32_t *c;
	int n;
};

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

static void alpha_add_text(uint32_t *c, int *n, const char *s, size_t len)
{
	for (size_t i = 0, adv; i < len; i += adv) {
		uint32_t x = ch_code(s + i, len - i, &adv);
		if (x != '*' && x != '?') /* glob syntax, not literals */
			c[(*n)++] = x;
	}
}

/* The literal characters of both texts, '/', '.', and one character that
 * is none of them. False when out of memory. */
static bool alpha_build(struct alpha *al, const char *a, size_t alen, const char *b,
			size_t blen)
{
	al->c = malloc((alen + blen + 3) * sizeof *al->c);
	al->n = 0;
	if (!al->c)
		return false;
	al->c[al->n++] = '/';
	al->c[al->n++] = '.';
	alpha_add_text(al->c, &al->n, a, alen);
	alpha_add_text(al->c, &al->n, b, blen);
	qsort(al->c, (size_t)al->n, sizeof *al->c, cmp_u32);
	int k = 0;
	for (int i = 0; i < al->n; i++)
		if (k == 0 || al->c[k - 1] != al->c[i])
			al->c[k++] = al->c[i];
	al->n = k;
	/* One representative for every other character; prefer a readable one
	 * since it ends up in messages. */
	static const char nice[] = "xyzqjkwvabcdefghilmnoprstu0123456789_-";
	for (size_t i = 0; i + 1 < sizeof nice; i++) {
		uint32_t x = (uint8_t)nice[i];
		if (!bsearch(&x, al->c, (size_t)k, sizeof *al->c, cmp_u32)) {
			al->c[al->n++] = x;
			return true;
		}
	}
	for (uint32_t x = 1; x < 128; x++)
		if (x != '/' && x != '*' && x != '?' &&
		    !bsearch(&x, al->c, (size_t)k, sizeof *al->c, cmp_u32)) {
			al->c[al->n++] = x;
			return true;
		}
	/* every ASCII character is literal: the other class is a byte no
	 * UTF-8 text has, still a character the evaluator would accept */
	al->c[al->n++] = 0xFF;
	return true;
}

static void put_witness(char *out, size_t size, const char *prefix, size_t k,
			const uint32_t *rev, size_t depth)
{
	if (!out || size == 0)
		return;
	size_t o = 0;
	for (size_t i = 0; i < k && o + 1 < size; i++)
		out[o++] = prefix[i];
	for (size_t i = depth; i > 0; i--) {
		char b[4];
		size_t n = ch_bytes(rev[i - 1], b);
		if (o + n >= size)
			break; /* never a character cut in half */
		memcpy(out + o, b, n);
		o += n;
	}
	out[o] = '\0';
}

/* Shared set-up: compare literal prefixes, pick the skip point k, and run
 * the normalisation DFA over the skipped part. Returns false when the
 * prefixes already disagree (no common path). */
static bool common_start(const char *a, size_t alen, const char *b, size_t blen,
			 size_t *kb, size_t *kt, uint8_t *q)
{
	size_t la = lit_len(a, alen), lb = lit_len(b, blen);
	size_t m = la < lb ? la : lb;
	if (memcmp(a, b, m) != 0)
		return false;
	skip_point(a, m, kb, kt);
	uint8_t s = N_START;
	for (size_t i = 0, adv; i < *kb; i += adv)
		s = norm_step(s, ch_code(a + i, *kb - i, &adv));
	*q = s;
	return true;
}

/* Both globs, or neither (nothing to free) when memory runs out. */
static bool glob_compile_both(struct glob *ga, const char *a, size_t alen, struct glob *gb,
			      const char *b, size_t blen)
{
	if (!glob_compile(ga, a, alen))
		return false;
	if (!glob_compile(gb, b, blen)) {
		glob_free(ga);
		return false;
	}
	return true;
}

/* ---- overlap ---- */

/* Overlap among paths other than "/". */
static enum pat_ans overlap_below_root(const char *a, size_t alen, const char *b, size_t blen,
				       char *wit, size_t size)
{
	size_t kb, k;
	uint8_t q0;
	if (!common_start(a, alen, b, blen, &kb, &k, &q0) || q0 == N_DEAD)
		return PAT_NO;
	struct glob ga, gb;
	if (!glob_compile_both(&ga, a, alen, &gb, b, blen))
		return PAT_UNKNOWN;
	enum pat_ans ans = PAT_UNKNOWN;
	uint64_t na = ga.n - k + 1, nb = gb.n - k + 1;
	uint64_t total = na * nb * N_STATES;
	uint32_t *par = NULL, *queue = NULL, *pch = NULL, *rev = NULL;
	struct alpha al = { 0 };
	if (total > OVERLAP_BUDGET)
		goto out;
	par = malloc(total * sizeof *par);
	pch = malloc(total * sizeof *pch);
	queue = malloc(total * sizeof *queue);
	if (!par || !pch || !queue || !alpha_build(&al, a + kb, alen - kb, b + kb, blen - kb))
		goto out;
	memset(par, 0xff, total * sizeof *par);

#define ENC(i, j, q) ((uint32_t)((((uint64_t)((i) - k) * nb) + ((j) - k)) * N_STATES + (q)))
	size_t head = 0, tail = 0;
	uint32_t s0 = ENC(k, k, q0);
	par[s0] = s0;
	pch[s0] = 0;
	queue[tail++] = s0;
	int64_t found = -1;
	while (head < tail) {
		uint32_t s = queue[head++];
		uint8_t q = (uint8_t)(s % N_STATES);
		uint32_t ij = s / N_STATES;
		uint32_t i = (uint32_t)(ij / nb + k), j = (uint32_t)(ij % nb + k);
		if (i == ga.n && j == gb.n && norm_accept(q)) {
			found = s;
			break;
		}
		uint32_t nx[4];
		int nn = 0;
		if (glob_has_eps1(&ga, i))
			nx[nn++] = ENC(i + 1, j, q);
		if (i < ga.n && ga.skip[i])
			nx[nn++] = ENC(i + 2, j, q);
		if (glob_has_eps1(&gb, j))
			nx[nn++] = ENC(i, j + 1, q);
		if (j < gb.n && gb.skip[j])
			nx[nn++] = ENC(i, j + 2, q);
		for (int e = 0; e < nn; e++)
			if (par[nx[e]] == UINT32_MAX) {
				par[nx[e]] = s;
				pch[nx[e]] = 0;
				queue[tail++] = nx[e];
			}
		for (int x = 0; x < al.n; x++) {
			uint32_t c = al.c[x];
			int64_t i2 = glob_succ(&ga, i, c), j2 = glob_succ(&gb, j, c);
			uint8_t q2 = norm_step(q, c);
			if (i2 < 0 || j2 < 0 || q2 == N_DEAD)
				continue;
			uint32_t t = ENC((uint32_t)i2, (uint32_t)j2, q2);
			if (par[t] != UINT32_MAX)
				continue;
			par[t] = s;
			pch[t] = c;
			queue[tail++] = t;
		}
	}
#undef ENC
	if (found < 0) {
		ans = PAT_NO;
		goto out;
	}
	ans = PAT_YES;
	if (wit && size) {
		size_t depth = 0;
		for (uint32_t s = (uint32_t)found; par[s] != s; s = par[s])
			if (pch[s])
				depth++;
		rev = malloc((depth + 1) * sizeof *rev);
		if (!rev) {
			wit[0] = '\0';
			goto out;
		}
		size_t d = 0;
		for (uint32_t s = (uint32_t)found; par[s] != s; s = par[s])
			if (pch[s])
				rev[d++] = pch[s];
		put_witness(wit, size, a, kb, rev, depth);
	}
out:
	free(al.c);
	free(par);
	free(pch);
	free(queue);
	free(rev);
	glob_free(&ga);
	glob_free(&gb);
	return ans;
}

enum pat_ans pat_glob_overlap(const char *a, size_t alen, const char *b, size_t blen,
			      char *wit, size_t size)
{
	if (root_match(a, alen) && root_match(b, blen)) {
		if (wit && size)
			snprintf(wit, size, "/");
		return PAT_YES;
	}
	return overlap_below_root(a, alen, b, blen, wit, size);
}

/* ---- containment ---- */

struct cstates {
	size_t words;          /* per subset */
	size_t n, cap;
	uint32_t *j, *par, *ch;
	uint8_t *q;
	uint64_t *bits;
	uint32_t *hash; /* open addressing, index+1; 0 = empty */
	size_t hcap;
};

static uint64_t cs_hash(const struct cstates *cs, uint32_t j, uint8_t q, const uint64_t *b)
{
	uint64_t h = 1469598103934665603ull ^ ((uint64_t)j << 8) ^ q;
	for (size_t w = 0; w < cs->words; w++) {
		h ^= b[w];
		h *= 1099511628211ull;
		h ^= h >> 29;
	}
	return h;
}

static bool cs_grow(struct cstates *cs)
{
	size_t cap = cs->cap ? cs->cap * 2 : 256;
	uint32_t *j = realloc(cs->j, cap * sizeof *j);
	if (!j)
		return false;
	cs->j = j;
	uint32_t *par = realloc(cs->par, cap * sizeof *par);
	if (!par)
		return false;
	cs->par = par;
	uint8_t *q = realloc(cs->q, cap);
	if (!q)
		return false;
	cs->q = q;
	uint32_t *ch = realloc(cs->ch, cap * sizeof *ch);
	if (!ch)
		return false;
	cs->ch = ch;
	uint64_t *bits = realloc(cs->bits, cap * cs->words * sizeof *bits);
	if (!bits)
		return false;
	cs->bits = bits;
	cs->cap = cap;
	/* Rehash into a table twice the state capacity. */
	size_t hcap = cap * 2;
	uint32_t *h = calloc(hcap, sizeof *h);
	if (!h)
		return false;
	for (size_t s = 0; s < cs->n; s++) {
		uint64_t x = cs_hash(cs, cs->j[s], cs->q[s], cs->bits + s * cs->words);
		size_t p = x & (hcap - 1);
		while (h[p])
			p = (p + 1) & (hcap - 1);
		h[p] = (uint32_t)s + 1;
	}
	free(cs->hash);
	cs->hash = h;
	cs->hcap = hcap;
	return true;
}

/* Adds the state unless known. Returns 1 added, 0 known, -1 out of memory
 * or budget. */
static int cs_add(struct cstates *cs, uint32_t j, uint8_t q, const uint64_t *b,
		  uint32_t par, uint32_t ch)
{
	if (cs->n == cs->cap) {
		if (cs->n >= CONTAIN_BUDGET || !cs_grow(cs))
			return -1;
	}
	uint64_t x = cs_hash(cs, j, q, b);
	size_t p = x & (cs->hcap - 1);
	while (cs->hash[p]) {
		size_t s = cs->hash[p] - 1;
		if (cs->j[s] == j && cs->q[s] == q &&
		    memcmp(cs->bits + s * cs->words, b, cs->words * sizeof *b) == 0)
			return 0;
		p = (p + 1) & (cs->hcap - 1);
	}
	size_t s = cs->n++;
	cs->j[s] = j;
	cs->q[s] = q;
	cs->par[s] = par;
	cs->ch[s] = ch;
	memcpy(cs->bits + s * cs->words, b, cs->words * sizeof *b);
	cs->hash[p] = (uint32_t)s + 1;
	return 1;
}

static void cs_free(struct cstates *cs)
{
	free(cs->j);
	free(cs->par);
	free(cs->q);
	free(cs->ch);
	free(cs->bits);
	free(cs->hash);
}

enum pat_ans pat_glob_contains(const char *a, size_t alen, const char *b, size_t blen,
			       char *cex, size_t size)
{
	if (root_match(b, blen) && !root_match(a, alen)) {
		if (cex && size)
			snprintf(cex, size, "/");
		return PAT_NO;
	}
	size_t kb, k;
	uint8_t q0;
	if (!common_start(a, alen, b, blen, &kb, &k, &q0) || q0 == N_DEAD) {
		/* Nothing in common below the root (which is settled above): a
		 * contains b only when b matches nothing there. */
		enum pat_ans e = overlap_below_root(b, blen, b, blen, cex, size);
		return e == PAT_UNKNOWN ? e : e == PAT_YES ? PAT_NO : PAT_YES;
	}
	struct glob ga, gb;
	if (!glob_compile_both(&ga, a, alen, &gb, b, blen))
		return PAT_UNKNOWN;
	enum pat_ans ans = PAT_UNKNOWN;
	struct cstates cs = { 0 };
	cs.words = (ga.n - k + 1 + 63) / 64;
	uint64_t *tmp = calloc(cs.words * 2, sizeof *tmp);
	uint64_t *from = tmp ? tmp + cs.words : NULL; /* cs.bits moves in cs_add */
	uint32_t *rev = NULL;
	struct alpha al = { 0 };
	if (!tmp || !alpha_build(&al, a + kb, alen - kb, b + kb, blen - kb))
		goto out;
	bs_set(tmp, 0);
	glob_close(&ga, (uint32_t)k, tmp);
	if (cs_add(&cs, (uint32_t)k, q0, tmp, 0, 0) < 0)
		goto out;
	uint32_t acc = ga.n - (uint32_t)k;
	int64_t found = -1;
	for (size_t head = 0; head < cs.n; head++) {
		uint32_t j = cs.j[head];
		uint8_t q = cs.q[head];
		if (j == gb.n && norm_accept(q) && !bs_get(cs.bits + head * cs.words, acc)) {
			found = (int64_t)head;
			break;
		}
		/* b's epsilon edges leave a's subset as it is. */
		uint32_t ej[2];
		int ne = 0;
		if (glob_has_eps1(&gb, j))
			ej[ne++] = j + 1;
		if (j < gb.n && gb.skip[j])
			ej[ne++] = j + 2;
		for (int e = 0; e < ne; e++) {
			memcpy(tmp, cs.bits + head * cs.words, cs.words * sizeof *tmp);
			if (cs_add(&cs, ej[e], q, tmp, (uint32_t)head, 0) < 0)
				goto out;
		}
		for (int x = 0; x < al.n; x++) {
			uint32_t c = al.c[x];
			int64_t j2 = glob_succ(&gb, j, c);
			uint8_t q2 = norm_step(q, c);
			if (j2 < 0 || q2 == N_DEAD)
				continue;
			memcpy(from, cs.bits + head * cs.words, cs.words * sizeof *from);
			glob_step(&ga, (uint32_t)k, from, tmp, cs.words, c);
			if (cs_add(&cs, (uint32_t)j2, q2, tmp, (uint32_t)head, c) < 0)
				goto out;
		}
	}
	if (found < 0) {
		ans = PAT_YES;
		goto out;
	}
	ans = PAT_NO;
	if (cex && size) {
		size_t depth = 0;
		for (size_t s = (size_t)found; s != 0; s = cs.par[s])
			if (cs.ch[s])
				depth++;
		rev = malloc((depth + 1) * sizeof *rev);
		if (!rev) {
			cex[0] = '\0';
			goto out;
		}
		size_t d = 0;
		for (size_t s = (size_t)found; s != 0; s = cs.par[s])
			if (cs.ch[s])
				rev[d++] = cs.ch[s];
		put_witness(cex, size, b, kb, rev, depth);
	}
out:
	free(al.c);
	free(tmp);
	free(rev);
	cs_free(&cs);
	glob_free(&ga);
	glob_free(&gb);
	return ans;
}

/* ---- IR wrappers ---- */

static void copy_out(char *out, size_t size, const char *s, size_t len)
{
	if (!out || !size)
		return;
	size_t n = len < size - 1 ? len : size - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

enum pat_ans pat_path_overlap(const struct ir_path *a, const struct ir_path *b,
			      char *wit, size_t size)
{
	if (a->kind == IR_PAT_EXACT && b->kind == IR_PAT_EXACT) {
		bool eq = a->len == b->len && memcmp(a->text, b->text, a->len) == 0;
		if (eq)
			copy_out(wit, size, a->text, a->len);
		return eq ? PAT_YES : PAT_NO;
	}
	if (a->kind == IR_PAT_EXACT || b->kind == IR_PAT_EXACT) {
		const struct ir_path *e = a->kind == IR_PAT_EXACT ? a : b;
		const struct ir_path *g = e == a ? b : a;
		bool m = pat_glob_match(g->text, g->len, e->text, e->len);
		if (m)
			copy_out(wit, size, e->text, e->len);
		return m ? PAT_YES : PAT_NO;
	}
	return pat_glob_overlap(a->text, a->len, b->text, b->len, wit, size);
}

bool pat_path_inside_tree(const struct ir_path *a, const struct ir_path *b)
{
	if (a->kind != IR_PAT_SUBTREE)
		return false;
	size_t d = a->len - 3; /* DIR, without the final slash and "**" */
	if (d == 0)
		return true; /* the tree of the root is every path */
	/* b's first d + 1 characters are literal: any slash b may skip
	 * (the one before a "**") comes at d or later, so every path b
	 * matches is DIR itself or starts with "DIR/". */
	if (b->kind == IR_PAT_EXACT && b->len == d)
		return memcmp(a->text, b->text, d) == 0;
	return b->lit_prefix > d && b->text[d] == '/' && memcmp(a->text, b->text, d) == 0;
}

/* How many bytes of p's text begin every path p matches: all of an exact
 * path; else its literal prefix, less a final slash (the one before a
 * "**" may be skipped: DIR followed by a final "**" matches DIR). */
static size_t sure_prefix(const struct ir_path *p)
{
	if (p->kind == IR_PAT_EXACT)
		return p->len;
	size_t n = p->lit_prefix;
	return n > 0 && p->text[n - 1] == '/' ? n - 1 : n;
}

/* How many bytes of p's text end every path p matches: those after its
 * last wildcard (the slash a "**" may skip comes before it, never
 * after), all of an exact path. */
static size_t sure_suffix(const struct ir_path *p)
{
	size_t n = 0;
	while (n < p->len && p->text[p->len - 1 - n] != '*' && p->text[p->len - 1 - n] != '?')
		n++;
	return n;
}

enum pat_ans pat_path_contains(const struct ir_path *a, const struct ir_path *b,
			       char *cex, size_t size)
{
	if (pat_path_inside_tree(a, b) ||
	    (a->len == b->len && memcmp(a->text, b->text, a->len) == 0))
		return PAT_YES;
	size_t pa = sure_prefix(a), pb = sure_prefix(b);
	/* A subtree pattern matches its directory DIR, shorter than every path a matches
	 * when a's sure prefix is longer: DIR is the counterexample. */
	if (b->kind == IR_PAT_SUBTREE && pb > 0 && pa > pb) {
		copy_out(cex, size, b->text, pb);
		return PAT_NO;
	}
	/* Two patterns whose sure prefixes, or sure suffixes, differ share no
	 * path, so a cannot hold b (every pattern matches some path). Only
	 * where no example is asked for: the full answer below also finds
	 * one. The unit test checks every shortcut against the full answer
	 * (test_pat_rel.c). */
	if (!cex) {
		if (memcmp(a->text, b->text, pa < pb ? pa : pb) != 0)
			return PAT_NO;
		size_t sa = sure_suffix(a), sb = sure_suffix(b), sm = sa < sb ? sa : sb;
		if (memcmp(a->text + a->len - sm, b->text + b->len - sm, sm) != 0)
			return PAT_NO;
	}
	if (b->kind == IR_PAT_EXACT) {
		/* two equal exact paths were answered above */
		bool m = a->kind != IR_PAT_EXACT && pat_glob_match(a->text, a->len, b->text, b->len);
		if (!m)
			copy_out(cex, size, b->text, b->len);
		return m ? PAT_YES : PAT_NO;
	}
	return pat_glob_contains(a->text, a->len, b->text, b->len, cex, size);
}

void pat_path_cover(const struct ir_path *a, const struct ir_path *b, struct pat_cover *out)
{
	out->example[0] = '\0';
	enum pat_ans ov = pat_path_overlap(a, b, out->example, sizeof out->example);
	if (ov == PAT_NO) {
		out->kind = PAT_COVER_NONE;
		return;
	}
	if (ov == PAT_UNKNOWN) {
		out->kind = PAT_COVER_UNKNOWN;
		return;
	}
	if (pat_path_contains(a, b, NULL, 0) == PAT_YES)
		out->kind = PAT_COVER_ALL;
	else if (pat_path_contains(b, a, NULL, 0) == PAT_YES)
		out->kind = PAT_COVER_INSIDE;
	else
		out->kind = PAT_COVER_SOME;
}

void pat_display(const struct ir_path *like, const char *path, char *buf, size_t size)
{
	size_t h = like ? like->home_len : 0;
	if (h && strncmp(path, like->text, h) == 0 && (path[h] == '/' || path[h] == '\0'))
		snprintf(buf, size, "~%s", path + h);
	else
		snprintf(buf, size, "%s", path);
}

/* ---- hosts ---- */

static bool is_ip(const struct ir_host *h)
{
	return h->kind == IR_H_IPV4 || h->kind == IR_H_IPV6;
}

/* name is a strict subdomain of suffix */
static bool under_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);
	return n > s + 1 && name[n - s - 1] == '.' && memcmp(name + n - s, suffix, s) == 0;
}

static bool ip_equal(const struct ir_host *a, const struct ir_host *b)
{
	if (a->kind != b->kind)
		return false;
	return memcmp(a->addr, b->addr, a->kind == IR_H_IPV4 ? 4 : 16) == 0;
}

/* Names `*` never covers: localhost and everything under .localhost
 * (ir_host_match). A suffix rule "*.localhost" names only such names. */
static bool loopback_only(const struct ir_host *h)
{
	return (h->kind == IR_H_NAME || h->kind == IR_H_SUFFIX) && ir_host_is_localhost(h->name);
}

/* Is there a name both match? When buf is not NULL, one is written there. */
static bool names_overlap(const struct ir_host *a, const struct ir_host *b, char *buf,
			  size_t size)
{
	const struct ir_host *shown = a; /* whose name (or "x." + suffix) is the witness */
	bool ok, x = false;
	if (is_ip(a) || is_ip(b)) {
		ok = ip_equal(a, b);
	} else if (a->kind == IR_H_ANY && b->kind == IR_H_ANY) {
		ok = true;
		shown = NULL;
	} else if (a->kind == IR_H_ANY || b->kind == IR_H_ANY) {
		shown = a->kind == IR_H_ANY ? b : a;
		ok = !loopback_only(shown);
		x = shown->kind == IR_H_SUFFIX;
	} else if (a->kind == IR_H_NAME && b->kind == IR_H_NAME) {
		ok = strcmp(a->name, b->name) == 0;
	} else if (a->kind == IR_H_NAME || b->kind == IR_H_NAME) {
		shown = a->kind == IR_H_NAME ? a : b;
		ok = under_suffix(shown->name, (shown == a ? b : a)->name);
	} else {
		/* two suffixes: the longer must lie under (or equal) the shorter */
		const struct ir_host *lo = strlen(a->name) >= strlen(b->name) ? a : b;
		const struct ir_host *sh = lo == a ? b : a;
		ok = strcmp(lo->name, sh->name) == 0 || under_suffix(lo->name, sh->name);
		shown = lo;
		x = true;
	}
	if (!ok || !buf)
		return ok;
	if (!shown)
		snprintf(buf, size, "x.example");
	else if (shown->kind == IR_H_IPV6)
		snprintf(buf, size, "[%s]", shown->name);
	else
		snprintf(buf, size, "%s%s", x ? "x." : "", shown->name);
	return true;
}

static bool names_contain(const struct ir_host *a, const struct ir_host *b)
{
	if (is_ip(a) || is_ip(b))
		return ip_equal(a, b);
	switch (a->kind) {
	case IR_H_ANY:
		return !loopback_only(b);
	case IR_H_SUFFIX:
		if (b->kind == IR_H_NAME)
			return under_suffix(b->name, a->name);
		if (b->kind == IR_H_SUFFIX)
			return strcmp(a->name, b->name) == 0 || under_suffix(b->name, a->name);
		return false;
	case IR_H_NAME:
		return b->kind == IR_H_NAME && strcmp(a->name, b->name) == 0;
	default:
		return false;
	}
}

static bool port_in(const struct ir_host *h, unsigned p)
{
	if (h->nports == 0)
		return true;
	for (size_t i = 0; i < h->nports; i++)
		if (p >= h->ports[i].lo && p <= h->ports[i].hi)
			return true;
	return false;
}

/* Smallest port both allow, or -1. Every interesting port is the low end of
 * some range (or 0 when a side allows all). */
static long common_port(const struct ir_host *a, const struct ir_host *b)
{
	long best = -1;
	const struct ir_host *hs[2] = { a, b };
	for (int s = 0; s < 2; s++) {
		const struct ir_host *h = hs[s];
		if (h->nports == 0) {
			if (port_in(a, 0) && port_in(b, 0))
				best = 0;
			continue;
		}
		for (size_t i = 0; i < h->nports; i++) {
			unsigned p = h->ports[i].lo;
			if (port_in(a, p) && port_in(b, p) && (best < 0 || (long)p < best))
				best = p;
		}
	}
	return best;
}

/* Every port of b lies in a: walk each range of b through a's ranges. */
static bool ports_contain(const struct ir_host *a, const struct ir_host *b)
{
	if (a->nports == 0)
		return true;
	struct ir_port_range all = { 0, 65535 };
	const struct ir_port_range *br = b->nports ? b->ports : &all;
	size_t bn = b->nports ? b->nports : 1;
	for (size_t i = 0; i < bn; i++) {
		unsigned p = br[i].lo;
		while (p <= br[i].hi) {
			unsigned reach = 0;
			bool in = false;
			for (size_t r = 0; r < a->nports; r++)
				if (p >= a->ports[r].lo && p <= a->ports[r].hi) {
					in = true;
					if (a->ports[r].hi >= reach)
						reach = a->ports[r].hi;
				}
			if (!in)
				return false;
			if (reach >= br[i].hi)
				break;
			p = reach + 1;
		}
	}
	return true;
}

bool pat_host_overlap(const struct ir_host *a, const struct ir_host *b, char *wit,
		      size_t size)
{
	char name[512];
	if (!names_overlap(a, b, wit && size ? name : NULL, sizeof name))
		return false;
	long p = common_port(a, b);
	if (p < 0)
		return false;
	if (wit && size) {
		if (a->nports || b->nports)
			snprintf(wit, size, "%s:%ld", name, p);
		else
			snprintf(wit, size, "%s", name);
	}
	return true;
}

bool pat_host_contains(const struct ir_host *a, const struct ir_host *b)
{
	return names_contain(a, b) && ports_contain(a, b);
}

/* ---- Mach services ---- */

static bool starts_with(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

bool pat_mach_overlap(const struct ir_mach *a, const struct ir_mach *b)
{
	if (!a->prefix && !b->prefix)
		return strcmp(a->name, b->name) == 0;
	if (a->prefix && b->prefix)
		return starts_with(a->name, b->name) || starts_with(b->name, a->name);
	const struct ir_mach *p = a->prefix ? a : b, *e = p == a ? b : a;
	return starts_with(e->name, p->name);
}

bool pat_mach_contains(const struct ir_mach *a, const struct ir_mach *b)
{
	if (!a->prefix)
		return !b->prefix && strcmp(a->name, b->name) == 0;
	return starts_with(b->name, a->name);
}
