/*
 * ir_pins.c - what may not be deleted, renamed away or hard-linked, and
 * the rule for renames and links.
 *
 * A deny or protect holds a file only while the file stays under its name.
 * Where the session can create names elsewhere, renaming the file (or a
 * directory above it) or linking it carries it out of the rule: `mv
 * secret/k k; cat k`, `mv .git .git-old` and a fresh `.git/hooks`. So each
 * such rule (a guard)
 *   - also denies deleting (and hard-linking) what it matches, in its own
 *     place in the rule order, so a later allow that re-opens the path
 *     re-opens that too (eval.c counts a guard as denying delete);
 *   - pins every directory above what it names (each component prefix of
 *     its pattern, up to but not including "/"), whatever comes later.
 * Deleting and renaming away are one operation to Seatbelt, and on Linux
 * the denied path sits behind a mount. The SBPL backend writes the same
 * (sbpl_emit.c); the Linux plan pins ancestors with mount points.
 *
 * A deny is a guard when some allow lets the session create names outside
 * it (otherwise nothing can be carried anywhere) and no later allow
 * re-opens all of it for all of its accesses (a dead deny holds nothing).
 * So `deny exec` on a whole workspace granted read write pins nothing:
 * there is nowhere its files could gain exec.
 *
 * A protect's `except` patterns are left out of what it matches, so what
 * they name may be deleted and renamed (by the rules after it); the pins
 * stay those of its target: the directories above it are held whatever
 * the excepts say.
 */
#include "ir.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "pat_rel.h"
#include "path.h"

/* Can `a` contain `b` at all? Every path of b starts with b's literal
 * prefix and may differ right after it, so a's literal prefix must be a
 * prefix of b's. A cheap necessary condition before the automata. */
static bool may_contain(const struct ir_path *a, const struct ir_path *b)
{
	if (a->kind == IR_PAT_EXACT)
		return b->kind == IR_PAT_EXACT && a->len == b->len && memcmp(a->text, b->text, a->len) == 0;
	return a->lit_prefix <= b->lit_prefix && memcmp(a->text, b->text, a->lit_prefix) == 0;
}

static bool contains(const struct ir_path *a, const struct ir_path *b)
{
	return may_contain(a, b) && pat_path_contains(a, b, NULL, 0) == PAT_YES;
}

/* The allows of a profile, for the guard test: those that create (any
 * one outside a deny makes it escapable), and every allow sorted by its
 * literal prefix, so the later allows that may re-open a deny are found
 * by the prefixes of the deny's own literal part, not by a scan. */
struct allows {
	const struct ir_rule **create;
	size_t ncreate;
	const struct ir_rule **by_lit;
	size_t nlit;
};

static int key_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);
	return c ? c : (an > bn) - (an < bn);
}

static int lit_cmp(const void *x, const void *y)
{
	const struct ir_rule *a = *(const struct ir_rule *const *)x, *b = *(const struct ir_rule *const *)y;
	return key_cmp(a->t.path.text, a->t.path.lit_prefix, b->t.path.text, b->t.path.lit_prefix);
}

static void allows_build(struct arena *a, const struct ir_profile *p, struct allows *al)
{
	size_t n = p->nrules ? p->nrules : 1;
	al->create = arena_alloc(a, n * sizeof *al->create);
	al->by_lit = arena_alloc(a, n * sizeof *al->by_lit);
	al->ncreate = al->nlit = 0;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->effect != IR_ALLOW || r->tkind != IR_T_PATH)
			continue;
		al->by_lit[al->nlit++] = r;
		if (r->access & IR_A_CREATE)
			al->create[al->ncreate++] = r;
	}
	qsort(al->by_lit, al->nlit, sizeof *al->by_lit, lit_cmp);
}

/* Does a later allow re-open all of deny g, for all of its accesses? */
static bool reopened(const struct allows *al, const struct ir_rule *g, uint32_t bits)
{
	const struct ir_path *t = &g->t.path;
	for (size_t l = 0; l <= t->lit_prefix; l++) {
		size_t lo = 0, hi = al->nlit;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct ir_path *m = &al->by_lit[mid]->t.path;
			if (key_cmp(m->text, m->lit_prefix, t->text, l) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo; k < al->nlit; k++) {
			const struct ir_rule *a = al->by_lit[k];
			if (key_cmp(a->t.path.text, a->t.path.lit_prefix, t->text, l) != 0)
				break;
			if (a->index > g->index && (a->access & bits) == bits &&
			    contains(&a->t.path, t))
				return true;
		}
	}
	return false;
}

static bool is_guard(const struct allows *al, const struct ir_rule *g)
{
	uint32_t bits = g->access & IR_A_FILE;
	if (g->effect == IR_ALLOW || g->tkind != IR_T_PATH || !bits)
		return false;
	/* A protect with excepts leaves names inside its target open: any
	 * create may land there, so count every one as outside. */
	bool escapable = g->nexcept > 0 && al->ncreate > 0;
	for (size_t i = 0; i < al->ncreate && !escapable; i++)
		escapable = !contains(&g->t.path, &al->create[i]->t.path);
	return escapable && !(g->effect == IR_DENY && reopened(al, g, bits));
}

/* The pins collected so far, each directory once: a hash set over their
 * texts (open addressing, indices + 1, 0 empty, at most half full) finds
 * a directory many guards share without keeping a copy per guard. Rules
 * are visited in order, so the pin kept for a directory is that of its
 * first guard. */
struct pinv {
	struct ir_pin *v;
	size_t n, cap;
	uint32_t *slot;
	uint32_t *hash; /* parallel to v, for rehashing */
	size_t nslot;   /* a power of two */
};

/* FNV-1a, one byte at a time, so the hash of every prefix of a path
 * comes out of one walk along it. */
enum { PIN_FNV_SEED = 2166136261u, PIN_FNV_PRIME = 16777619u };

static uint32_t pin_hash_step(uint32_t h, unsigned char c)
{
	return (h ^ c) * PIN_FNV_PRIME;
}

static void pins_rehash(struct arena *a, struct pinv *pv, size_t nslot)
{
	pv->nslot = nslot;
	pv->slot = arena_alloc(a, nslot * sizeof *pv->slot);
	for (size_t i = 0; i < pv->n; i++) {
		size_t s = pv->hash[i] & (nslot - 1);
		while (pv->slot[s])
			s = (s + 1) & (nslot - 1);
		pv->slot[s] = (uint32_t)(i + 1);
	}
}

static void add_pin(struct arena *a, struct pinv *pv, const struct ir_rule *g, const char *text,
		    size_t len, uint32_t h)
{
	size_t s = h & (pv->nslot - 1);
	for (; pv->slot[s]; s = (s + 1) & (pv->nslot - 1)) {
		const struct ir_path *q = &pv->v[pv->slot[s] - 1].pat;
		if (q->len == len && memcmp(q->text, text, len) == 0)
			return;
	}
	if (pv->n == pv->cap) {
		pv->cap = pv->cap ? pv->cap * 2 : 32;
		pv->v = arena_grow(a, pv->v, pv->n, pv->cap, sizeof *pv->v);
		pv->hash = arena_grow(a, pv->hash, pv->n, pv->cap, sizeof *pv->hash);
	}
	struct ir_pin *pin = &pv->v[pv->n];
	memset(pin, 0, sizeof *pin);
	pin->pat.text = arena_strndup(a, text, len);
	pin->pat.home_len = g->t.path.home_len <= len ? g->t.path.home_len : 0;
	path_classify(&pin->pat);
	pin->guard = g;
	pv->hash[pv->n++] = h;
	pv->slot[s] = (uint32_t)pv->n;
	if (2 * pv->n >= pv->nslot)
		pins_rehash(a, pv, 2 * pv->nslot);
	assert(2 * pv->n < pv->nslot);
}

/* Every directory above guard g (each component prefix; a glob prefix
 * pins every directory it matches). */
static void add_pins_of(struct arena *a, struct pinv *pv, const struct ir_rule *g)
{
	const struct ir_path *t = &g->t.path;
	uint32_t h = pin_hash_step(PIN_FNV_SEED, (unsigned char)t->text[0]);
	for (size_t k = 1; k < t->len; k++) {
		if (t->text[k] == '/')
			add_pin(a, pv, g, t->text, k, h);
		h = pin_hash_step(h, (unsigned char)t->text[k]);
	}
}

/* By text: the pins are unique, so no two compare equal. Pointers are
 * sorted, not the pins: a sort moves each element many times. */
static int pin_cmp(const void *x, const void *y)
{
	const struct ir_pin *a = *(const struct ir_pin *const *)x, *b = *(const struct ir_pin *const *)y;
	return strcmp(a->pat.text, b->pat.text);
}

static void assert_pins_sorted(const struct ir_pin *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		assert(strcmp(v[i - 1].pat.text, v[i].pat.text) < 0);
	(void)v;
	(void)n;
}

/* pv's pins by text, in a new array of the arena. */
static struct ir_pin *pins_sorted(struct arena *a, const struct pinv *pv)
{
	const struct ir_pin **by = arena_alloc(a, (pv->n + 1) * sizeof *by);
	for (size_t i = 0; i < pv->n; i++)
		by[i] = &pv->v[i];
	qsort(by, pv->n, sizeof *by, pin_cmp);
	struct ir_pin *out = arena_alloc(a, (pv->n + 1) * sizeof *out);
	for (size_t i = 0; i < pv->n; i++)
		out[i] = *by[i];
	assert_pins_sorted(out, pv->n);
	return out;
}

void ir_pins_build(struct arena *a, struct ir_profile *p)
{
	bool *guard = arena_alloc(a, (p->nrules ? p->nrules : 1) * sizeof *guard);
	struct allows al;
	allows_build(a, p, &al);
	struct pinv pv = { 0 };
	pins_rehash(a, &pv, 256);
	for (size_t i = 0; i < p->nrules; i++)
		if ((guard[i] = is_guard(&al, &p->rules[i])))
			add_pins_of(a, &pv, &p->rules[i]);
	p->pins = pv.n > 1 ? pins_sorted(a, &pv) : pv.v;
	p->npins = pv.n;
	p->guard = guard;
}

bool ir_is_guard(const struct ir_profile *p, const struct ir_rule *r)
{
	return p->guard && r->tkind == IR_T_PATH && r->index < p->nrules &&
	       &p->rules[r->index] == r && p->guard[r->index];
}

bool ir_held(const struct ir_profile *p, const char *path, struct ir_verdict *v)
{
	ir_eval_path(p, IR_A_DELETE, path, v);
	return !v->allowed && v->rule && (v->pin || ir_is_guard(p, v->rule));
}

const struct ir_pin *ir_pinned(const struct ir_profile *p, const char *path)
{
	for (size_t i = 0; i < p->npins; i++)
		if (path_match(&p->pins[i].pat, path))
			return &p->pins[i];
	return NULL;
}

void ir_eval_move(const struct ir_profile *p, enum ir_move_kind kind, const char *src,
		  const char *dst, struct ir_move_verdict *v)
{
	/* Delete is left out: where a file may leave from is the pins'
	 * business (the source's own delete, above). */
	static const uint32_t bits[] = { IR_A_READ, IR_A_READ_META, IR_A_WRITE,
					 IR_A_CREATE, IR_A_EXEC };
	memset(v, 0, sizeof *v);
	if (kind == IR_MOVE_RENAME) {
		ir_eval_path(p, IR_A_DELETE, src, &v->src);
	} else {
		struct ir_verdict h;
		bool held = ir_held(p, src, &h);
		v->src.allowed = !held;
		v->src.pin = held ? h.pin : NULL;
		v->src.rule = held ? h.rule : NULL;
	}
	ir_eval_path(p, IR_A_CREATE, dst, &v->dst);
	/* Landlock's rule: the new name may not grant more than the old. */
	for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
		struct ir_verdict d, s;
		ir_eval_path(p, bits[i], dst, &d);
		if (!d.allowed)
			continue;
		ir_eval_path(p, bits[i], src, &s);
		if (s.allowed)
			continue;
		if (!v->gained) {
			v->gain_src = s;
			v->gain_dst = d;
		}
		v->gained |= bits[i];
	}
	v->allowed = v->src.allowed && v->dst.allowed && !v->gained;
}
