/*
 * layers_order.c - layer membership and the task layer's order
 * (layers_order.h).
 */
#include "layers_order.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "ir.h"
#include "policy.h"

const struct src_file *layers_root(const cage_policy *p)
{
	return p->ir && p->ir->nfiles ? p->ir->files[0] : NULL;
}

size_t layers_imported(const cage_policy *p, const struct src_file **out, size_t max)
{
	const struct src_file *root = layers_root(p);
	size_t k = 0;
	for (size_t i = 0; i < p->nimports && k < max; i++)
		if (p->imports[i].from == root)
			out[k++] = p->imports[i].target;
	return k;
}

bool layers_from(const struct src_file *f, const struct src_file *layer)
{
	for (int d = 0; f && d < 64; f = f->importer, d++)
		if (f == layer)
			return true;
	return false;
}

void layers_select(struct ir_policy *ir, bool profile_given, const char *const *kinds,
		   const struct src_file *const *srcs, const bool *untrusted, size_t n)
{
	if (profile_given || !ir->selected)
		return;
	static const char *const order[] = { "task", "project", "policy" };
	for (size_t k = 0; k < 3; k++) {
		size_t i = n;
		while (i > 0 && strcmp(kinds[i - 1], order[k]))
			i--;
		if (i == 0 || !srcs[i - 1] || untrusted[i - 1])
			continue; /* none of this kind, or the last one does not count */
		struct ir_profile *sel = NULL;
		for (size_t p = 0; p < ir->nprofiles; p++)
			if (ir->profiles[p]->loc.file == srcs[i - 1])
				sel = ir->profiles[p];
		if (sel) {
			ir->selected = sel;
			return;
		}
	}
}

/* A profile's own rules come after every module-level rule, the task's
 * included, so that the task decides what it names unless a policy's
 * deny or protect is re-opened, which lint's unsafe-order and
 * protect-violation find and the launcher refuses. The guards
 * (ir_pins.c) are derived again for the new order. */
void layers_task_to_end(cage_policy *pol, const struct src_file *task)
{
	struct ir_profile *p = pol->ir->selected;
	struct ir_rule *rules = arena_alloc(&pol->arena, (p->nrules ? p->nrules : 1) * sizeof *rules);
	struct ir_env_op *env = arena_alloc(&pol->arena, (p->nenv ? p->nenv : 1) * sizeof *env);
	size_t k = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < p->nrules; i++)
			if (layers_from(p->rules[i].loc.file, task) == (pass == 1)) {
				rules[k] = p->rules[i];
				rules[k].index = (uint32_t)k;
				k++;
			}
	assert(k == p->nrules);
	k = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < p->nenv; i++)
			if (layers_from(p->env[i].loc.file, task) == (pass == 1))
				env[k++] = p->env[i];
	assert(k == p->nenv);
	memcpy(p->rules, rules, p->nrules * sizeof *rules);
	memcpy(p->env, env, p->nenv * sizeof *env);
	ir_pins_build(&pol->arena, p);
}
