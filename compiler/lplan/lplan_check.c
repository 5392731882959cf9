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

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct ck_path {
	const char *path;
	bool probe; /* a name no rule names, standing for any other name there */
};

struct ck_set {
	struct arena *a;
	struct ck_path *v;
	size_t n, cap;
};

static void ck_add1(struct ck_set *s, const char *path, bool probe)
{
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
	s->n++;
}

/* `path` and every directory above it; with `below`, a name below it too. */
static void ck_add(struct ck_set *s, const char *path, bool below)
{
	if (below)
		ck_add1(s, arena_printf(s->a, "%s/\x01", strcmp(path, "/") ? path : ""), true);
	ck_add1(s, path, false);
	for (const char *d = path; strcmp(d, "/");) {
		d = lplan_parent_dir(s->a, d);
		ck_add1(s, d, false);
	}
}

/* A pattern's anchor: the path it names, a subtree's root, or the
 * directory before a glob's first wildcard. */
static void ck_add_pattern(struct ck_set *s, const struct ir_path *pp)
{
	if (pp->kind == IR_PAT_EXACT) {
		ck_add(s, pp->text, false);
		return;
	}
	size_t cut = pp->kind == IR_PAT_SUBTREE ? pp->len - 3 : pp->lit_prefix;
	while (pp->kind == IR_PAT_GLOB && cut > 0 && pp->text[cut] != '/')
		cut--;
	ck_add(s, cut ? arena_strndup(s->a, pp->text, cut) : "/", true);
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

static void ck_one(struct arena *a, const struct lplan *plan, const char *path, bool exists,
		   bool is_dir, bool is_link, bool future, struct ck_out *o,
		   struct lplan_check_stats *st)
{
	uint32_t all = 0;
	for (size_t i = 0; i < sizeof ck_bits / sizeof *ck_bits; i++)
		all |= ck_bits[i];
	struct ir_verdict rv[6], gv[6];
	ir_eval_path_bits(&plan->rprof, all, path, rv);
	st->evals++;
	/* Names made later are matched by the patterns, not by what the
	 * globs found: the guard answers from the patterns. Only their
	 * denials count here; an allow glob matched through a symlink names
	 * its target in the expanded rules. */
	if (future) {
		ir_eval_path_bits(&plan->gprof, all, path, gv);
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

void lplan_check(struct arena *a, const struct lplan *plan, struct lplan_widening **out,
		 size_t *nout, struct lplan_check_stats *st)
{
	struct lplan_check_stats dummy;
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof *st);
	struct ck_set s = { a, NULL, 0, 0 };
	ck_add_profile(&s, &plan->gprof);
	ck_add_profile(&s, &plan->rprof);
	for (size_t i = 0; i < plan->nnodes; i++)
		ck_add(&s, plan->nodes[i].path, plan->nodes[i].is_dir);
	for (size_t i = 0; i < plan->nguards; i++)
		ck_add_pattern(&s, &plan->guards[i].pat);
	for (size_t i = 0; i < plan->nmkdirs; i++)
		ck_add(&s, plan->mkdirs[i], true);
	if (s.n)
		qsort(s.v, s.n, sizeof *s.v, ck_cmp);
	struct ck_out o = { a, NULL, 0 };
	for (size_t i = 0; i < s.n; i++) {
		if (i && !strcmp(s.v[i].path, s.v[i - 1].path))
			continue;
		st->paths++;
		const char *p = s.v[i].path;
		if (s.v[i].probe && ck_dir_there(plan, lplan_parent_dir(a, p))) {
			/* Any other name here: one that exists, file or
			 * directory, and one made later. */
			ck_one(a, plan, p, true, false, false, true, &o, st);
			ck_one(a, plan, p, true, true, false, true, &o, st);
			continue;
		}
		struct stat sb;
		bool exists = lstat(p, &sb) == 0;
		ck_one(a, plan, p, exists, exists && S_ISDIR(sb.st_mode),
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
