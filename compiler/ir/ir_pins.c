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
 */
#include "ir.h"

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

static bool is_guard(const struct ir_profile *p, const struct ir_rule *g)
{
	uint32_t bits = g->access & IR_A_FILE;
	if (g->effect == IR_ALLOW || g->tkind != IR_T_PATH || !bits)
		return false;
	bool escapable = false;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *a = &p->rules[i];
		if (a->effect != IR_ALLOW || a->tkind != IR_T_PATH)
			continue;
		if (g->effect == IR_DENY && a->index > g->index && (a->access & bits) == bits &&
		    contains(&a->t.path, &g->t.path))
			return false;
		if (!escapable && (a->access & IR_A_CREATE) && !contains(&g->t.path, &a->t.path))
			escapable = true;
	}
	return escapable;
}

struct pinv {
	struct ir_pin *v;
	size_t n, cap;
};

static void add_pin(struct arena *a, struct pinv *pv, const struct ir_rule *g, const char *text,
		    size_t len)
{
	char *t = arena_strndup(a, text, len);
	bool exact = !path_has_glob(t, len);
	for (size_t i = 0; i < pv->n; i++)
		if ((pv->v[i].pat.len == len && memcmp(pv->v[i].pat.text, t, len) == 0) ||
		    (exact && path_match(&pv->v[i].pat, t)))
			return; /* already covered */
	if (pv->n == pv->cap) {
		size_t nc = pv->cap ? pv->cap * 2 : 32;
		struct ir_pin *nv = arena_alloc(a, nc * sizeof *nv);
		if (pv->n)
			memcpy(nv, pv->v, pv->n * sizeof *nv);
		pv->v = nv;
		pv->cap = nc;
	}
	struct ir_pin *pin = &pv->v[pv->n++];
	memset(pin, 0, sizeof *pin);
	pin->pat.text = t;
	pin->pat.home_len = g->t.path.home_len <= len ? g->t.path.home_len : 0;
	path_classify(&pin->pat);
	pin->guard = g;
}

void ir_pins_build(struct arena *a, struct ir_profile *p)
{
	struct pinv pv = { 0 };
	bool *guard = arena_alloc(a, (p->nrules ? p->nrules : 1) * sizeof *guard);
	memset(guard, 0, (p->nrules ? p->nrules : 1) * sizeof *guard);
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *g = &p->rules[i];
		if (!is_guard(p, g))
			continue;
		guard[i] = true;
		/* every directory above it (each component prefix; a glob
		 * prefix pins every directory it matches) */
		const struct ir_path *t = &g->t.path;
		for (size_t k = 1; k < t->len; k++)
			if (t->text[k] == '/')
				add_pin(a, &pv, g, t->text, k);
	}
	p->pins = pv.v;
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
