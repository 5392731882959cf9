/*
 * lplan_guard.c - the names the Linux plan cannot deny with Landlock or a
 * mount, and the one question the create guard asks about them (see
 * lplan_guard in lplan.h). The answer comes from the IR evaluator over
 * the profile's own rules (literal parts resolved, globs kept), so a name
 * created during the run gets the same answer `cagec explain` gives.
 */
#include "lplan_int.h"

#include <string.h>

#include "path.h"

/* The pattern with the directories before its first glob resolved
 * through symlinks, like the nodes of the plan. */
const char *lplan_resolve_pattern(struct arena *a, struct lplan_rcache *rc,
				  const struct ir_path *pp)
{
	if (pp->kind == IR_PAT_EXACT)
		return lplan_resolve_cached(rc, pp->text);
	size_t cut = pp->lit_prefix;
	while (cut > 0 && pp->text[cut] != '/')
		cut--;
	const char *dir = cut ? lplan_resolve_cached(rc, arena_strndup(a, pp->text, cut)) : "";
	if (!strcmp(dir, "/"))
		dir = "";
	return arena_concat(a, dir, pp->text + cut);
}

void lplan_guard_add(struct arena *a, struct lplan *plan, const char *pattern,
		     const struct ir_rule *rule)
{
	for (size_t i = 0; i < plan->nguards; i++)
		if (!strcmp(plan->guards[i].pat.text, pattern))
			return;
	struct lplan_guard *v = arena_alloc(a, (plan->nguards + 1) * sizeof *v);
	if (plan->nguards)
		memcpy(v, plan->guards, plan->nguards * sizeof *v);
	memset(&v[plan->nguards], 0, sizeof *v);
	v[plan->nguards].pat.text = arena_strdup(a, pattern);
	path_classify(&v[plan->nguards].pat);
	v[plan->nguards].rule = rule;
	plan->guards = v;
	plan->nguards++;
}

/* The glob directory a glob rule's matches live under. */
static const char *glob_dir(struct arena *a, const char *resolved)
{
	size_t cut = strcspn(resolved, "*?");
	while (cut > 0 && resolved[cut] != '/')
		cut--;
	return cut ? arena_strndup(a, resolved, cut) : "/";
}

void lplan_guard_prepare(struct arena *a, const struct ir_profile *p, struct lplan *plan)
{
	struct lplan_rules rs = { 0 };
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->tkind == IR_T_PATH && (r->access & IR_A_FILE)) {
			lplan_rules_add(a, &rs, r, lplan_resolve_pattern(a, plan->rcache, &r->t.path), false);
			lplan_except_resolve(a, plan->rcache, r, &rs.rules[rs.n - 1]);
		}
	}
	plan->gprof.name = p->name;
	plan->gprof.rules = rs.rules;
	plan->gprof.nrules = rs.n;
}

/* A name the pattern matches, its wildcards taken by a character no rule
 * names: what the policy says about a match made later. */
static const char *later_match(struct arena *a, const char *pat)
{
	char *m = arena_strdup(a, pat);
	for (char *c = m; *c; c++)
		if (*c == '*' || *c == '?')
			*c = '\x01';
	/* "**" became two characters: one name is enough. */
	char *w = m;
	for (const char *c = m; *c; c++)
		if (!(c[0] == '\x01' && c[1] == '\x01'))
			*w++ = *c;
	*w = '\0';
	return m;
}

void lplan_guard_globs(struct arena *a, const struct ir_profile *p, struct lplan *plan,
		       uint64_t (*region)(const struct lplan *, const char *))
{
	static const struct {
		uint32_t acc;
		uint64_t right;
	} later[] = { { IR_A_READ, LP_READ_FILE }, { IR_A_WRITE, LP_WRITE_FILE },
		      { IR_A_DELETE, LP_REMOVE_FILE }, { IR_A_EXEC, LP_EXECUTE } };
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		/* A protect with excepts is planned as its existing entries
		 * (lplan_except.c): every name made in its tree is the guard's. */
		if (r->tkind != IR_T_PATH || (r->t.path.kind != IR_PAT_GLOB && !r->nexcept) ||
		    r->effect == IR_ALLOW)
			continue;
		const char *pat = lplan_resolve_pattern(a, plan->rcache, &r->t.path);
		const char *dir = glob_dir(a, pat);
		uint64_t eff = region(plan, dir);
		if (!(eff & LP_MAKE))
			continue;
		if (r->access & IR_A_CREATE) {
			lplan_guard_add(a, plan, pat, r);
			continue;
		}
		/* Created later (the policy lets it be), a match has its
		 * directory's rights: what this rule denies must not be one. */
		const char *m = later_match(a, pat);
		struct ir_verdict vs[6];
		ir_eval_path_bits(&plan->gprof, IR_A_FILE, m, vs);
		if (!vs[__builtin_ctz(IR_A_CREATE)].allowed)
			continue;
		for (size_t k = 0; k < sizeof later / sizeof *later; k++) {
			const struct ir_verdict *v = &vs[__builtin_ctz(later[k].acc)];
			/* The guard profile's copy of r decides it. */
			bool by_r = v->rule && v->rule->loc.file == r->loc.file &&
				    v->rule->loc.off == r->loc.off;
			if (!v->allowed && by_r && (eff & later[k].right)) {
				lplan_error(a, plan, r,
					    "a name made later that matches %s would get what its "
					    "directory grants: Linux cannot deny it less than its "
					    "directory (Landlock grants paths that exist). Deny "
					    "creating it too (cagerun's create guard then keeps it "
					    "from being made), or name the paths",
					    pat);
				break;
			}
		}
	}
}

/* Whether some path strictly below t (components tc[ti..m) still to
 * match) matches the pattern's components pc[pi..n). */
bool lplan_strictly_above(const struct path_comp *pc, size_t pi, size_t n,
			   const struct path_comp *tc, size_t ti, size_t m, unsigned depth)
{
	if (depth > 512)
		return true; /* absurd patterns: refuse rather than recurse on */
	if (ti == m)
		return pi < n;
	if (pi == n)
		return false;
	if (pc[pi].n == 2 && pc[pi].s[0] == '*' && pc[pi].s[1] == '*')
		return lplan_strictly_above(pc, pi + 1, n, tc, ti, m, depth + 1) ||
		       lplan_strictly_above(pc, pi, n, tc, ti + 1, m, depth + 1);
	return path_component_match(pc[pi].s, pc[pi].n, tc[ti].s, tc[ti].n) &&
	       lplan_strictly_above(pc, pi + 1, n, tc, ti + 1, m, depth + 1);
}

/* Whether t is dir[0..dn) or above it (dn 0 stands for the root, as
 * lplan_anchor_len gives it). */
static bool at_or_above(const char *t, const char *dir, size_t dn)
{
	size_t n = strlen(t);
	if (n == 1)
		return true;
	return n <= dn && memcmp(t, dir, n) == 0 && (n == dn || dir[n] == '/');
}

bool lplan_guard_denies(const struct lplan *plan, const char *path, enum lplan_mk kind,
			const struct ir_rule **why)
{
	enum { MAXC = 256 };
	struct path_comp tc[MAXC], pc[MAXC];
	size_t m = (size_t)-1;
	for (size_t i = 0; i < plan->nguards; i++) {
		const struct lplan_guard *g = &plan->guards[i];
		const struct ir_rule *deny = g->rule;
		if (path_match(&g->pat, path)) {
			struct ir_verdict v;
			ir_eval_path(&plan->gprof, IR_A_CREATE, path, &v);
			if (v.allowed)
				continue;
			deny = v.rule ? v.rule : g->rule;
		} else if (kind == LPLAN_MK_DIR) {
			continue;
		} else {
			/* The directory every match lies in or below: the
			 * pattern's anchor, t[0..cut). */
			const char *t = g->pat.text;
			size_t cut = lplan_anchor_len(&g->pat);
			bool definite = g->pat.kind == IR_PAT_GLOB
						? at_or_above(path, cut ? t : "/", cut ? cut : 1)
						: at_or_above(path, t, cut) &&
							  !(strlen(path) == cut && !memcmp(path, t, cut));
			if (!definite) {
				if (kind != LPLAN_MK_TREE)
					continue;
				if (m == (size_t)-1 && (m = path_split(path, tc, MAXC)) == (size_t)-1)
					continue; /* deeper than any pattern */
				size_t n = path_split(t, pc, MAXC);
				if (n == (size_t)-1 || !lplan_strictly_above(pc, 0, n, tc, 0, m, 0))
					continue;
			}
		}
		if (why)
			*why = deny;
		return true;
	}
	return false;
}

bool lplan_guard_in_protect(const struct lplan *plan, const char *path,
			    const struct ir_rule **why)
{
	for (size_t i = 0; i < plan->nguards; i++) {
		const struct lplan_guard *g = &plan->guards[i];
		if (g->rule && g->rule->effect == IR_PROTECT && path_match(&g->pat, path)) {
			if (why)
				*why = g->rule;
			return true;
		}
	}
	return false;
}
