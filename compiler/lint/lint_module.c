/*
 * lint_module.c - findings about the policy's files rather than its rules:
 * unused-param (declared in the main file, referred to nowhere) and
 * unused-import (an import of the main file whose file, with everything it
 * imports, contributes no rule, env setting or mode to a checked profile,
 * no profile that a checked one extends, and no param anyone uses).
 * unknown-param is the resolver's: it is a compile error.
 */
#include "lint_int.h"

#include <stdlib.h>
#include <string.h>

/* Is f the import target t or reached only through it? */
static bool within(const struct src_file *f, const struct src_file *t)
{
	for (int depth = 0; f && depth < 256; depth++, f = f->importer)
		if (f == t)
			return true;
	return false;
}

static bool profile_checked(const struct lint_ctx *c, const struct ir_profile *p)
{
	return p == c->ir->selected || p->loc.file == c->main;
}

static bool import_used(const struct lint_ctx *c, const struct src_file *t)
{
	const struct ir_policy *ir = c->ir;
	for (size_t i = 0; i < ir->nprofiles; i++) {
		const struct ir_profile *p = ir->profiles[i];
		if (!profile_checked(c, p))
			continue;
		for (const struct ir_profile *q = p->parent; q; q = q->parent)
			if (within(q->loc.file, t))
				return true;
		for (size_t k = 0; k < p->nrules; k++)
			if (within(p->rules[k].loc.file, t) || within(p->rules[k].rule_loc.file, t))
				return true;
		for (size_t k = 0; k < p->nenv; k++)
			if (within(p->env[k].loc.file, t))
				return true;
		if (within(p->mode_loc.file, t))
			return true;
		for (int k = 0; k < IR_LIM_N; k++)
			if (p->limits[k].set && within(p->limits[k].loc.file, t))
				return true;
	}
	for (size_t i = 0; i < ir->nparams; i++)
		if (ir->params[i].used && within(ir->params[i].loc.file, t))
			return true;
	return false;
}

void lint_check_module(struct lint_ctx *c)
{
	const struct ir_policy *ir = c->ir;
	for (size_t i = 0; i < ir->nparams; i++) {
		const struct ir_param *p = &ir->params[i];
		if (p->used || p->loc.file != c->main)
			continue;
		lint_report_loc(c, "unused-param", p->loc,
				"param '%s' is declared but nothing refers to it", p->name);
	}
	struct cage_policy *pol = c->pol;
	for (size_t i = 0; i < pol->nimports; i++) {
		const struct policy_import *im = &pol->imports[i];
		if (im->from != c->main || !im->target)
			continue;
		/* the same file imported twice by the main file */
		bool dup = false;
		for (size_t k = 0; k < i; k++)
			if (pol->imports[k].from == c->main && pol->imports[k].target == im->target) {
				struct diag *d = lint_report_loc(c, "unused-import", im->loc,
								 "'%s' is already imported",
								 im->target->name);
				if (d)
					diag_note(c->dl, d, pol->imports[k].loc, "imported here first");
				dup = true;
				break;
			}
		if (dup || import_used(c, im->target))
			continue;
		lint_report_loc(c, "unused-import", im->loc,
				"nothing from '%s' is used: it adds no rule to the checked profiles, "
				"no profile they extend and no param in use", im->target->name);
	}
}
