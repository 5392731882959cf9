/*
 * lplan_check.c - the launch-time check that the Linux plan is never wider
 * than the policy (lplan_check in lplan.h).
 *
 * The plan is built by a walk over sorted nodes with working state (the
 * rights each node inherits); a mistake there (the byte order that once
 * separated `~/.claude` from `~/.claude/settings.json`) silently widens the
 * sandbox. This check does not trust that walk. For every path the policy
 * or the plan names, it asks the IR evaluator what the policy allows and
 * asks the plan, the way lplan_query (and so `cagec explain --target
 * linux`) computes what the kernel will do from the grants and mounts
 * alone, what the sandbox allows; an access the second allows and the
 * first denies is a widening, and cagerun refuses to start.
 *
 * The policy here is its rules as the plan resolves them (literal parts
 * through symlinks, as the kernel reaches them; globs expanded into what
 * exists, and kept as patterns for names made later): what a path means on
 * this machine. Reading metadata is not compared: Landlock does not confine
 * stat(2), which docs/security-model.md states.
 */
#include "lplan_int.h"

#include <assert.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct ck_path {
	const char *path;
	bool probe; /* a name no rule names, standing for any other name there */
};

/* The paths to ask about, each once: a hash set over an array. */
struct ck_set {
	struct arena *a;
	struct ck_path *v;
	size_t n, cap;
	size_t *slots; /* index + 1 into v; 0 is empty */
	size_t nslots;
};

static size_t ck_hash(const char *s)
{
	size_t h = 14695981039346656037u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static size_t *ck_slot(const struct ck_set *s, const char *path)
{
	size_t i = ck_hash(path) & (s->nslots - 1);
	while (s->slots[i] && strcmp(s->v[s->slots[i] - 1].path, path))
		i = (i + 1) & (s->nslots - 1);
	return &s->slots[i];
}

/* False when the path was there already. */
static bool ck_add1(struct ck_set *s, const char *path, bool probe)
{
	if ((s->n + 1) * 2 > s->nslots) {
		size_t ns = s->nslots ? s->nslots * 2 : 512;
		s->slots = arena_alloc(s->a, ns * sizeof *s->slots);
		memset(s->slots, 0, ns * sizeof *s->slots);
		s->nslots = ns;
		for (size_t i = 0; i < s->n; i++)
			*ck_slot(s, s->v[i].path) = i + 1;
	}
	size_t *slot = ck_slot(s, path);
	if (*slot)
		return false;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct ck_path *nv = arena_alloc(s->a, cap * sizeof *nv);
		if (s->n)
			memcpy(nv, s->v, s->n * sizeof *nv);
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n].path = path;
	s->v[s->n].probe = probe;
	*slot = ++s->n;
	return true;
}

/* `path` and every directory above it; with `below`, a name below it too.
 * The walk up stops at a directory already there: what is above it is. */
static void ck_add(struct ck_set *s, const char *path, bool below)
{
	if (below)
		ck_add1(s, arena_printf(s->a, "%s/\x01", strcmp(path, "/") ? path : ""), true);
	if (!ck_add1(s, path, false))
		return;
	for (const char *d = path; strcmp(d, "/");) {
		d = lplan_parent_dir(s->a, d);
		if (!ck_add1(s, d, false))
			return;
	}
}

/* A pattern's anchor: the path it names, a subtree's root, or the
 * directory before a glob's first wildcard; every match is at or below. */
static const char *ck_anchor(struct arena *a, const struct ir_path *pp)
{
	if (pp->kind == IR_PAT_EXACT)
		return pp->text;
	size_t cut = pp->kind == IR_PAT_SUBTREE ? pp->len - 3 : pp->lit_prefix;
	while (pp->kind == IR_PAT_GLOB && cut > 0 && pp->text[cut] != '/')
		cut--;
	return cut ? arena_strndup(a, pp->text, cut) : "/";
}

static void ck_add_pattern(struct ck_set *s, const struct ir_path *pp)
{
	ck_add(s, ck_anchor(s->a, pp), pp->kind != IR_PAT_EXACT);
}

static void ck_add_profile(struct ck_set *s, const struct ir_profile *p)
{
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].tkind == IR_T_PATH && (p->rules[i].access & IR_A_FILE))
			ck_add_pattern(s, &p->rules[i].t.path);
}

static int ck_cmp(const void *x, const void *y)
{
	const struct ck_path *a = x, *b = y;
	return lplan_path_cmp(a->path, b->path);
}

/* The rules that can match a name in a directory: those whose anchor is
 * at or above it, or below it. Filtered level by level down from the
 * root, so that a path is matched against a handful of rules rather than
 * the whole profile (what keeps the check within launch time). */
struct ck_cand {
	uint32_t *v; /* indices into the profile's rules, ascending */
	size_t n;
};

struct ck_level {
	const char *dir;
	struct ck_cand r, g; /* candidates in plan->rprof and plan->gprof */
};

/* Each rule's anchor, computed once per check. */
struct ck_rules {
	const struct ir_profile *p;
	const char **anchor;
	struct ck_cand all;
};

static void ck_rules_init(struct arena *a, const struct ir_profile *p, struct ck_rules *cr)
{
	cr->p = p;
	cr->anchor = arena_alloc(a, (p->nrules + 1) * sizeof *cr->anchor);
	cr->all.v = arena_alloc(a, (p->nrules + 1) * sizeof *cr->all.v);
	cr->all.n = 0;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		cr->anchor[i] = r->tkind == IR_T_PATH ? ck_anchor(a, &r->t.path) : NULL;
		if (cr->anchor[i])
			cr->all.v[cr->all.n++] = (uint32_t)i;
	}
}

static void ck_filter(struct arena *a, const struct ck_rules *cr, const struct ck_cand *from,
		      const char *dir, struct ck_cand *to)
{
	to->v = arena_alloc(a, (from->n + 1) * sizeof *to->v);
	to->n = 0;
	for (size_t k = 0; k < from->n; k++) {
		const char *an = cr->anchor[from->v[k]];
		if (lplan_at_or_above(an, dir) || lplan_at_or_above(dir, an))
			to->v[to->n++] = from->v[k];
	}
}

struct ck_levels {
	struct ck_rules rr, gr;
	struct ck_level *v;
	size_t n, cap;
};

static struct ck_level *ck_push(struct arena *a, struct ck_levels *L, const char *dir)
{
	if (L->n == L->cap) {
		size_t cap = L->cap ? L->cap * 2 : 32;
		struct ck_level *nv = arena_alloc(a, cap * sizeof *nv);
		if (L->n)
			memcpy(nv, L->v, L->n * sizeof *nv);
		L->v = nv;
		L->cap = cap;
	}
	struct ck_level *lv = &L->v[L->n];
	lv->dir = dir;
	ck_filter(a, &L->rr, L->n ? &L->v[L->n - 1].r : &L->rr.all, dir, &lv->r);
	ck_filter(a, &L->gr, L->n ? &L->v[L->n - 1].g : &L->gr.all, dir, &lv->g);
	L->n++;
	return lv;
}

/* The level for `dir`. The stack is the chain of directories from the
 * root down to the last one asked about; in sorted order each directory
 * is filtered once, from its parent's few candidates. */
static const struct ck_level *ck_level_for(struct arena *a, struct ck_levels *L, const char *dir)
{
	while (L->n && !lplan_at_or_above(L->v[L->n - 1].dir, dir))
		L->n--;
	if (!L->n)
		ck_push(a, L, "/");
	size_t len = strlen(dir), k = strlen(L->v[L->n - 1].dir);
	/* Push every directory between the top and dir. */
	while (k < len) {
		size_t e = k + 1;
		while (e < len && dir[e] != '/')
			e++;
		ck_push(a, L, e == len ? dir : arena_strndup(a, dir, e));
		k = e;
	}
	assert(!strcmp(L->v[L->n - 1].dir, dir));
	return &L->v[L->n - 1];
}

static const uint32_t ck_bits[] = { IR_A_READ, IR_A_WRITE, IR_A_CREATE, IR_A_DELETE, IR_A_EXEC };

struct ck_out {
	struct arena *a;
	struct lplan_widening *v;
	size_t n;
};

static void ck_found(struct ck_out *o, const char *path, uint32_t access,
		     const struct ir_rule *rule)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].access == access && !strcmp(o->v[i].path, path))
			return;
	struct lplan_widening *nv = arena_alloc(o->a, (o->n + 1) * sizeof *nv);
	if (o->n)
		memcpy(nv, o->v, o->n * sizeof *nv);
	nv[o->n].path = path;
	nv[o->n].resolved = path;
	nv[o->n].access = access;
	nv[o->n].rule = rule;
	o->v = nv;
	o->n++;
}

/* The accesses that mean something for what is at the path: a directory
 * is neither written nor run as a file, and a dangling symlink (kept as
 * the link's own path) leads to nothing to read, write or run. A name
 * that is not there only comes to be by creating it. */
static uint32_t ck_meaningful(bool exists, bool is_dir, bool is_link)
{
	if (!exists)
		return IR_A_CREATE;
	if (is_dir)
		return IR_A_READ | IR_A_CREATE | IR_A_DELETE;
	if (is_link)
		return IR_A_CREATE | IR_A_DELETE;
	return IR_A_READ | IR_A_WRITE | IR_A_CREATE | IR_A_DELETE | IR_A_EXEC;
}

static void ck_one(struct arena *a, const struct lplan *plan, const struct ck_level *lv,
		   const char *path, bool exists, bool is_dir, bool is_link, bool future,
		   struct ck_out *o, struct lplan_check_stats *st)
{
	uint32_t all = 0;
	for (size_t i = 0; i < sizeof ck_bits / sizeof *ck_bits; i++)
		all |= ck_bits[i];
	struct ir_verdict rv[6], gv[6];
	ir_eval_path_among(&plan->rprof, lv->r.v, lv->r.n, all, path, rv);
	st->evals++;
	/* Names made later are matched by the patterns, not by what the
	 * globs found: the guard answers from the patterns. Only their
	 * denials count here; an allow glob matched through a symlink names
	 * its target in the expanded rules. */
	if (future) {
		ir_eval_path_among(&plan->gprof, lv->g.v, lv->g.n, all, path, gv);
		st->evals++;
	}
	uint32_t ask = ck_meaningful(exists, is_dir, is_link);
	for (size_t i = 0; i < sizeof ck_bits / sizeof *ck_bits; i++) {
		uint32_t b = ck_bits[i];
		if (!(ask & b))
			continue;
		const struct ir_verdict *v = &rv[__builtin_ctz(b)];
		const struct ir_rule *denier = v->allowed ? NULL : v->rule;
		bool denied = !v->allowed;
		if (!denied && future) {
			const struct ir_verdict *g = &gv[__builtin_ctz(b)];
			if (!g->allowed && g->rule && g->rule->effect != IR_ALLOW) {
				denied = true;
				denier = g->rule;
			}
		}
		struct lplan_answer ans;
		lplan_answer_at(a, plan, b, path, exists, is_dir, &ans);
		st->queries++;
		if (denied && ans.allowed)
			ck_found(o, path, b, denier);
		/* A name the sandbox lets the command create is then there:
		 * what may be done to it must hold too. */
		if (!exists && b == IR_A_CREATE && ans.allowed)
			ask |= ck_meaningful(true, false, false);
	}
}

/* Whether `dir` is a directory when the sandbox starts (the runtime
 * creates the plan's mkdirs first). Below one that is not, a name comes
 * to be only by creating it and what is above it. */
static bool ck_dir_there(const struct lplan *plan, const char *dir)
{
	struct stat sb;
	if (lstat(dir, &sb) == 0)
		return S_ISDIR(sb.st_mode);
	for (size_t i = 0; i < plan->nmkdirs; i++)
		if (!strcmp(plan->mkdirs[i], dir))
			return true;
	return false;
}

/* The entries of a directory the check names no path in, each asked about
 * as it exists (a protect with excepts holds the existing entries one by
 * one: a name that is there when the sandbox starts is one of them, and a
 * name made later is the guard's). False, and nothing asked, when the
 * directory cannot be listed or holds more than CK_ENTRIES_MAX names: the
 * caller then asks about a hypothetical existing name instead. */
#define CK_ENTRIES_MAX 4096
static bool ck_entries(struct arena *a, const struct lplan *plan, const struct ck_level *lv,
		       const struct ck_set *s, const char *dir, struct ck_out *o,
		       struct lplan_check_stats *st)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	const char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	bool ok = true;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == CK_ENTRIES_MAX) {
			ok = false;
			break;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			const char **v = arena_alloc(a, cap * sizeof *v);
			if (n)
				memcpy(v, names, n * sizeof *v);
			names = v;
		}
		names[n++] = arena_printf(a, "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name);
	}
	closedir(d);
	if (!ok)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (*ck_slot(s, names[i]))
			continue; /* asked about on its own */
		struct stat sb;
		if (lstat(names[i], &sb) != 0)
			continue; /* gone meanwhile */
		ck_one(a, plan, lv, names[i], true, S_ISDIR(sb.st_mode), S_ISLNK(sb.st_mode), false,
		       o, st);
	}
	return true;
}

void lplan_check(struct arena *a, const struct lplan *plan, struct lplan_widening **out,
		 size_t *nout, struct lplan_check_stats *st)
{
	struct lplan_check_stats dummy;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof *st);
	struct ck_set s = { a, NULL, 0, 0, NULL, 0 };
	ck_add_profile(&s, &plan->gprof);
	ck_add_profile(&s, &plan->rprof);
	for (size_t i = 0; i < plan->nnodes; i++)
		ck_add(&s, plan->nodes[i].path, plan->nodes[i].is_dir);
	for (size_t i = 0; i < plan->nguards; i++)
		ck_add_pattern(&s, &plan->guards[i].pat);
	for (size_t i = 0; i < plan->nmkdirs; i++)
		ck_add(&s, plan->mkdirs[i], true);
	/* In path order, so that findings come out in the order --emit
	 * linux lists the plan. */
	if (s.n)
		qsort(s.v, s.n, sizeof *s.v, ck_cmp);
	struct ck_out o = { a, NULL, 0 };
	struct ck_levels L = { 0 };
	ck_rules_init(a, &plan->rprof, &L.rr);
	ck_rules_init(a, &plan->gprof, &L.gr);
	/* guard[] is indexed by a rule's index, which is its position. */
	for (size_t i = 0; i < plan->rprof.nrules; i++)
		assert(plan->rprof.rules[i].index == i);
	for (size_t i = 0; i < s.n; i++) {
		st->paths++;
		const char *p = s.v[i].path;
		const struct ck_level *lv = ck_level_for(a, &L, lplan_parent_dir(a, p));
		if (s.v[i].probe && ck_dir_there(plan, lplan_parent_dir(a, p))) {
			/* Any other name here: each that exists now, as it is,
			 * and one made later, file or directory. */
			if (!ck_entries(a, plan, lv, &s, lplan_parent_dir(a, p), &o, st)) {
				ck_one(a, plan, lv, p, true, false, false, true, &o, st);
				ck_one(a, plan, lv, p, true, true, false, true, &o, st);
			} else {
				ck_one(a, plan, lv, p, false, false, false, true, &o, st);
			}
			continue;
		}
		struct stat sb;
		bool exists = lstat(p, &sb) == 0;
		ck_one(a, plan, lv, p, exists, exists && S_ISDIR(sb.st_mode),
		       exists && S_ISLNK(sb.st_mode), !exists, &o, st);
	}
	*out = o.v;
	*nout = o.n;
}

static const char *ck_access_word(uint32_t b)
{
	switch (b) {
	case IR_A_READ:
		return "read";
	case IR_A_WRITE:
		return "write";
	case IR_A_CREATE:
		return "create";
	case IR_A_DELETE:
		return "delete";
	case IR_A_EXEC:
		return "exec";
	default:
		return "access";
	}
}

void lplan_widening_text(const struct lplan_widening *w, char *buf, size_t size)
{
	char rule[1200];
	const char *shown = w->path[0] && strchr(w->path, '\x01') ? NULL : w->path;
	char probe[4200];
	if (!shown) {
		snprintf(probe, sizeof probe, "%.*s/(any other name)",
			 (int)(strchr(w->path, '\x01') - w->path - 1), w->path);
		shown = probe;
	}
	if (w->rule) {
		lplan_rule_text(w->rule, rule, sizeof rule);
		snprintf(buf, size, "%s: the sandbox would allow %s %s, which this rule denies", rule,
			 ck_access_word(w->access), shown);
	} else {
		snprintf(buf, size, "the sandbox would allow %s %s, which no rule allows",
			 ck_access_word(w->access), shown);
	}
}
