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

static size_t ck_hash(const char *s, size_t n)
{
	size_t h = 14695981039346656037u; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211u;
	return h;
}

static size_t *ck_slot(const struct ck_set *s, const char *path, size_t n)
{
	size_t i = ck_hash(path, n) & (s->nslots - 1);
	for (size_t k; (k = s->slots[i]); i = (i + 1) & (s->nslots - 1)) {
		const char *q = s->v[k - 1].path;
		if (!strncmp(q, path, n) && !q[n])
			break;
	}
	return &s->slots[i];
}

/* path[0..n) into the set (copied when new); false when it was there. */
static bool ck_add1(struct ck_set *s, const char *path, size_t n, bool probe)
{
	if ((s->n + 1) * 2 > s->nslots) {
		size_t ns = s->nslots ? s->nslots * 2 : 512;
		s->slots = arena_alloc(s->a, ns * sizeof *s->slots);
		memset(s->slots, 0, ns * sizeof *s->slots);
		s->nslots = ns;
		for (size_t i = 0; i < s->n; i++)
			*ck_slot(s, s->v[i].path, strlen(s->v[i].path)) = i + 1;
	}
	size_t *slot = ck_slot(s, path, n);
	if (*slot)
		return false;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->v = arena_grow(s->a, s->v, s->n, s->cap, sizeof *s->v);
	}
	s->v[s->n].path = path[n] ? arena_strndup(s->a, path, n) : path;
	s->v[s->n].probe = probe;
	*slot = ++s->n;
	return true;
}

/* `path` and every directory above it; with `below`, a name below it too.
 * The walk up stops at a directory already there: what is above it is. */
static void ck_add(struct ck_set *s, const char *path, bool below)
{
	size_t n = strlen(path);
	if (below) {
		char *pr = lplan_join(s->a, path, "\x01", 1);
		ck_add1(s, pr, strlen(pr), true);
	}
	while (ck_add1(s, path, n, false) && n > 1) {
		while (n > 0 && path[n - 1] != '/')
			n--;
		n = n > 1 ? n - 1 : 1; /* the parent, or "/" */
	}
}

static void ck_add_pattern(struct ck_set *s, const struct ir_path *pp)
{
	ck_add(s, lplan_anchor(s->a, pp), pp->kind != IR_PAT_EXACT);
}

static int ck_cmp(const void *x, const void *y)
{
	/* Any order with a directory before what is below it serves the
	 * level stack; bytes are the cheapest. */
	const struct ck_path *a = x, *b = y;
	return strcmp(a->path, b->path);
}

/* A level of the directory stack: the rules that can match a name in
 * its directory (lplan_cand.c), so that a path is matched against a
 * handful of rules rather than the whole profile (what keeps the check
 * within launch time). */
struct ck_level {
	const char *dir;
	struct lplan_cand r, g; /* candidates in plan->rprof and plan->gprof */
	bool have_g;		/* g is filtered only for a level that needs it */
};

/* Every path rule's anchor, with a name below it unless the rule names
 * one path. */
static void ck_add_rules(struct ck_set *s, const struct lplan_anchors *cr)
{
	for (size_t k = 0; k < cr->all.n; k++) {
		const struct ir_rule *r = &cr->p->rules[cr->all.v[k]];
		if (r->access & IR_A_FILE)
			ck_add(s, cr->anchor[cr->all.v[k]], r->t.path.kind != IR_PAT_EXACT);
	}
}

struct ck_levels {
	struct lplan_anchors rr, gr;
	struct ck_level *v;
	size_t n, cap;
};

static struct ck_level *ck_push(struct arena *a, struct ck_levels *L, const char *dir)
{
	if (L->n == L->cap) {
		L->cap = L->cap ? L->cap * 2 : 32;
		L->v = arena_grow(a, L->v, L->n, L->cap, sizeof *L->v);
	}
	struct ck_level *lv = &L->v[L->n];
	lv->dir = dir;
	lplan_cand_filter(a, &L->rr, L->n ? &L->v[L->n - 1].r : &L->rr.all, dir, &lv->r);
	lv->have_g = false;
	L->n++;
	return lv;
}

/* The top level's candidates in plan->gprof, filtered down the chain
 * from the deepest level that has them. */
static const struct lplan_cand *ck_top_g(struct arena *a, struct ck_levels *L)
{
	size_t i = L->n;
	while (i > 0 && !L->v[i - 1].have_g)
		i--;
	for (; i < L->n; i++) {
		lplan_cand_filter(a, &L->gr, i ? &L->v[i - 1].g : &L->gr.all, L->v[i].dir, &L->v[i].g);
		L->v[i].have_g = true;
	}
	return &L->v[L->n - 1].g;
}

/* The level for `dir`. The stack is the chain of directories from the
 * root down to the last one asked about; in sorted order each directory
 * is filtered once, from its parent's few candidates. */
static void ck_level_for(struct arena *a, struct ck_levels *L, const char *dir)
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
}

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

/* A dangling symlink is kept as the link's own path: it leads to nothing
 * to read, write or run. */
uint32_t lplan_meaningful(bool exists, bool is_dir, bool is_link)
{
	if (!exists)
		return IR_A_CREATE;
	if (is_dir)
		return IR_A_READ | IR_A_CREATE | IR_A_DELETE;
	if (is_link)
		return IR_A_CREATE | IR_A_DELETE;
	return IR_A_READ | IR_A_WRITE | IR_A_CREATE | IR_A_DELETE | IR_A_EXEC;
}

/* What the policy denies at a path, and the rule for each access. */
struct ck_policy {
	uint32_t denied;
	const struct ir_rule *rule[6];
};

static void ck_policy_at(struct arena *a, const struct lplan *plan, struct ck_levels *L,
			 const char *path, bool future, struct ck_policy *cp,
			 struct lplan_check_stats *st)
{
	const uint32_t all = IR_A_READ | IR_A_WRITE | IR_A_CREATE | IR_A_DELETE | IR_A_EXEC;
	struct ir_verdict rv[6], gv[6];
	memset(cp, 0, sizeof *cp);
	const struct ck_level *lv = &L->v[L->n - 1];
	ir_eval_path_among(&plan->rprof, lv->r.v, lv->r.n, all, path, rv);
	st->evals++;
	/* A name made later is matched by the patterns, as the create guard
	 * matches it, not by what the globs found when the plan was made; so
	 * where a pattern decides, it is the answer. Where none does, the
	 * expanded rules are: a glob matched through a symlink names its
	 * target only there. */
	if (future) {
		const struct lplan_cand *g = ck_top_g(a, L);
		ir_eval_path_among(&plan->gprof, g->v, g->n, all, path, gv);
		st->evals++;
	}
	for (uint32_t m = all; m; m &= m - 1) {
		unsigned k = (unsigned)__builtin_ctz(m);
		const struct ir_verdict *v = future ? lplan_later_pick(&gv[k], &rv[k]) : &rv[k];
		if (!v->allowed) {
			cp->denied |= 1u << k;
			cp->rule[k] = v->rule;
		}
	}
}

/* The sandbox's answers for what the policy denies at the path. */
static void ck_sandbox(struct arena *a, const struct lplan *plan, const char *path, bool exists,
		       bool is_dir, bool is_link, const struct ck_policy *cp, struct ck_out *o,
		       struct lplan_check_stats *st)
{
	/* A name that is not there may be created, and is then there: what
	 * may be done to it must hold too. */
	uint32_t ask = lplan_meaningful(exists, is_dir, is_link);
	uint32_t then = exists ? 0 : lplan_meaningful(true, false, false);
	uint32_t want = (ask | then) & cp->denied;
	if (then & cp->denied)
		want |= IR_A_CREATE;
	if (!want)
		return;
	struct lplan_answer ans[6];
	lplan_answer_bits(a, plan, want, path, exists, is_dir, ans);
	st->queries++;
	if (then && ans[__builtin_ctz(IR_A_CREATE)].allowed)
		ask |= then;
	for (uint32_t m = ask & cp->denied; m; m &= m - 1) {
		unsigned k = (unsigned)__builtin_ctz(m);
		if (ans[k].allowed)
			ck_found(o, path, 1u << k, cp->rule[k]);
	}
}

/* What is at `path` when the sandbox starts: false when nothing is, else
 * true with *mode (lstat's st_mode). The plan's node says for itself
 * (nodes are resolved: none is a symlink; a directory the runtime creates
 * first counts), then the build's own lookups, then lstat. */
static bool ck_stat(const struct lplan *plan, const char *path, unsigned *mode)
{
	const struct lplan_node *nd = lplan_node_at(plan, path, strlen(path));
	if (nd && nd->exists) {
		*mode = nd->is_dir ? S_IFDIR : S_IFREG;
		return true;
	}
	bool exists;
	if (plan->rcache && lplan_rcache_known(plan->rcache, path, &exists, mode))
		return exists;
	struct stat sb;
	if ((plan->rcache ? lplan_lstat(plan->rcache, path, &sb) : lstat(path, &sb)) == 0) {
		*mode = sb.st_mode;
		return true;
	}
	*mode = 0;
	return false;
}

/* The entries of `dir` as they are, each asked about as what it is: for
 * a directory where a hypothetical unnamed entry would be a widening. A
 * protect with excepts holds the existing entries of its tree one by one
 * (lplan_except.c), so a name that is there when the sandbox starts is one
 * of them, and one made later is the create guard's: asking about "any
 * existing name" there would report what cannot be. False, with nothing
 * asked, when the directory cannot be listed or holds more than
 * CK_ENTRIES_MAX names; the caller keeps the hypothetical's findings. */
#define CK_ENTRIES_MAX 4096
static bool ck_real_entries(struct arena *a, const struct lplan *plan, struct ck_levels *L,
			    const struct ck_set *s, const char *dir, struct ck_out *o,
			    struct lplan_check_stats *st)
{
	struct pf_listing own;
	const struct pf_listing *l = plan->rcache ? lplan_list(plan->rcache, dir)
				   : pf_list_read(a, dir, &own) >= 0 ? &own : NULL;
	if (!l || l->n > CK_ENTRIES_MAX)
		return false;
	const char **names = arena_alloc(a, (l->n ? l->n : 1) * sizeof *names);
	size_t n = l->n;
	for (size_t i = 0; i < n; i++)
		names[i] = lplan_join(a, dir, l->names[i], strlen(l->names[i]));
	for (size_t i = 0; i < n; i++) {
		struct ck_path key = { names[i], false };
		if (s->n && bsearch(&key, s->v, s->n, sizeof *s->v, ck_cmp))
			continue; /* asked about on its own */
		struct stat sb;
		if ((plan->rcache ? lplan_lstat(plan->rcache, names[i], &sb) : lstat(names[i], &sb)) != 0)
			continue; /* gone meanwhile: a name made later, asked about already */
		ck_level_for(a, L, names[i]);
		struct ck_policy cp;
		ck_policy_at(a, plan, L, names[i], false, &cp, st);
		ck_sandbox(a, plan, names[i], true, S_ISDIR(sb.st_mode), S_ISLNK(sb.st_mode), &cp, o,
			   st);
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
	assert(!plan->no_rprof);
	if (plan->no_rprof) {
		/* Without the rules it was built from there is nothing to check
		 * it against: fail, never pass. */
		struct lplan_widening *w = arena_alloc(a, sizeof *w);
		w->path = w->resolved = "/";
		w->access = IR_A_READ;
		*out = w;
		*nout = 1;
		return;
	}
	struct ck_set s = { a, NULL, 0, 0, NULL, 0 };
	struct ck_levels L = { 0 };
	lplan_anchors_init(a, &plan->rprof, &L.rr);
	lplan_anchors_init(a, &plan->gprof, &L.gr);
	ck_add_rules(&s, &L.gr);
	ck_add_rules(&s, &L.rr);
	for (size_t i = 0; i < plan->nnodes; i++)
		ck_add(&s, plan->nodes[i].path, plan->nodes[i].is_dir);
	for (size_t i = 0; i < plan->nguards; i++)
		ck_add_pattern(&s, &plan->guards[i].pat);
	for (size_t i = 0; i < plan->nmkdirs; i++)
		ck_add(&s, plan->mkdirs[i], true);
	if (s.n)
		qsort(s.v, s.n, sizeof *s.v, ck_cmp);
	struct ck_out o = { a, NULL, 0 };
	/* guard[] is indexed by a rule's index, which is its position. */
	for (size_t i = 0; i < plan->rprof.nrules; i++)
		assert(plan->rprof.rules[i].index == i);
	for (size_t i = 0; i < s.n; i++) {
		st->paths++;
		const char *p = s.v[i].path;
		/* The path's own level: every rule that can match it is in line
		 * with it, and what is below it (next, in this order) uses it.
		 * Filtering first is cheaper than matching every candidate. */
		ck_level_for(a, &L, p);
		unsigned pmode = 0, mode = 0;
		bool pexists = ck_stat(plan, lplan_parent_dir(a, p), &pmode);
		/* Below something that is not a directory nothing can be made
		 * unless it is replaced first, which is asked about there. */
		if (pexists && !S_ISDIR(pmode))
			continue;
		bool exists = !s.v[i].probe && ck_stat(plan, p, &mode);
		struct ck_policy cp;
		ck_policy_at(a, plan, &L, p, s.v[i].probe || !exists, &cp, st);
		if (s.v[i].probe && pexists) {
			/* Any other name in a directory: one that exists, file or
			 * directory, and one made later. */
			size_t before = o.n;
			ck_sandbox(a, plan, p, true, false, false, &cp, &o, st);
			ck_sandbox(a, plan, p, true, true, false, &cp, &o, st);
			/* A widening for a name that may not exist: ask about
			 * the names that do instead, where they can be listed,
			 * and about one made later. */
			if (o.n > before) {
				size_t found = o.n;
				o.n = before;
				if (ck_real_entries(a, plan, &L, &s, lplan_parent_dir(a, p), &o, st))
					ck_sandbox(a, plan, p, false, false, false, &cp, &o, st);
				else
					o.n = found;
			}
		} else {
			ck_sandbox(a, plan, p, exists, exists && S_ISDIR(mode),
				   exists && S_ISLNK(mode), &cp, &o, st);
		}
	}
	*out = o.v;
	*nout = o.n;
}

/* The access as a query names it (cagec explain's words). */
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
	default:
		return "exec";
	}
}

void lplan_widening_text(const struct lplan_widening *w, char *buf, size_t size)
{
	char rule[1200];
	const char *acc = ck_access_word(w->access);
	/* A name no rule names is shown as what it stands for. */
	const char *shown = strchr(w->path, '\x01') ? NULL : w->path;
	char probe[4200];
	if (!shown) {
		snprintf(probe, sizeof probe, "%.*s/(any other name)",
			 (int)(strchr(w->path, '\x01') - w->path - 1), w->path);
		shown = probe;
	}
	if (w->rule) {
		lplan_rule_text(w->rule, rule, sizeof rule);
		snprintf(buf, size, "%s: the sandbox would allow %s %s, which this rule denies", rule,
			 acc, shown);
	} else {
		snprintf(buf, size, "the sandbox would allow %s %s, which no rule allows", acc,
			 shown);
	}
}
