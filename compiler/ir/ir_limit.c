/*
 * ir_limit.c - resource limits in the IR: their names, their text form and
 * how two layers' limits combine (ir.h, docs/language.md "limit").
 */
#include <inttypes.h>
#include <stdio.h>

#include "ir.h"

static const char *const lim_names[IR_LIM_N] = { "processes", "memory", "tmp", "files" };

const char *ir_limit_name(enum ir_limit_kind k)
{
	return (unsigned)k < IR_LIM_N ? lim_names[k] : "?";
}

bool ir_limit_sized(enum ir_limit_kind k)
{
	return k == IR_LIM_MEMORY || k == IR_LIM_TMP;
}

static const char *unit_name(uint64_t unit)
{
	switch (unit) {
	case 1ull << 10: return "KiB";
	case 1ull << 20: return "MiB";
	case 1ull << 30: return "GiB";
	case 1ull << 40: return "TiB";
	default: return NULL;
	}
}

void ir_limit_display(const struct ir_limit *l, bool mark, char *buf, size_t size)
{
	const char *u = unit_name(l->unit);
	const char *be = mark && l->best_effort ? " best-effort" : "";
	if (u && l->value % l->unit == 0)
		snprintf(buf, size, "%" PRIu64 " %s%s", l->value / l->unit, u, be);
	else
		snprintf(buf, size, "%" PRIu64 "%s", l->value, be);
}

void ir_limit_merge(struct ir_limit *dst, const struct ir_limit *src)
{
	if (!src->set)
		return;
	if (!dst->set || src->value < dst->value ||
	    (src->value == dst->value && dst->best_effort && !src->best_effort))
		*dst = *src;
}
