/*
 * lint_target.c - unsupported-on-target: rules a backend cannot express
 * as written, each reported with what happens instead. Which targets are
 * considered comes from --target: the platform the policy was compiled for
 * (default: the host), or both with --target all.
 *
 * Only limits that follow from the platform are listed here, not guesses
 * about backends: Seatbelt names loopback hosts port by port (the SBPL
 * backend refuses more than 1024 loopback ports), and Linux has no Mach
 * services at all.
 */
#include "lint_int.h"

#include <string.h>

#include "lplan.h"

enum { SBPL_LOOPBACK_PORT_LIMIT = 1024 };

static bool loopback(const struct ir_host *h)
{
	static const uint8_t one[16] = { [15] = 1 };
	if (h->kind == IR_H_NAME)
		return strcmp(h->name, "localhost") == 0;
	if (h->kind == IR_H_IPV4)
		return h->addr[0] == 127 && h->addr[1] == 0 && h->addr[2] == 0 && h->addr[3] == 1;
	if (h->kind == IR_H_IPV6)
		return memcmp(h->addr, one, 16) == 0;
	return false;
}

void lint_check_target(struct lint_ctx *c)
{
	unsigned targets = lint_targets(c);
	const struct ir_profile *p = c->prof;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (lint_is_std(r->loc.file))
			continue;
		char t[512];
		lint_target_text(r, t, sizeof t);
		if (r->tkind == IR_T_MACH && (targets & LINT_T_LINUX)) {
			lint_report(c, "unsupported-on-target", r, NULL,
				    "%s mach %s: Linux has no Mach services; on Linux this rule is "
				    "ignored", ir_effect_name(r->effect), t);
			continue;
		}
		if (r->tkind == IR_T_HOST && (targets & LINT_T_MACOS) && loopback(&r->t.host) &&
		    p->mode != IR_MODE_ENFORCE_FS) {
			size_t n = 0;
			for (size_t k = 0; k < r->t.host.nports; k++)
				n += (size_t)r->t.host.ports[k].hi - r->t.host.ports[k].lo + 1;
			if (n > SBPL_LOOPBACK_PORT_LIMIT)
				lint_report(c, "unsupported-on-target", r, NULL,
					    "connect %s: Seatbelt names loopback ports one by one and "
					    "%zu ports is more than the SBPL backend writes (%d); it "
					    "refuses to compile this profile for macOS",
					    t, n, SBPL_LOOPBACK_PORT_LIMIT);
		}
	}
}

/* linux-inexact: what cagerun would refuse, because the Linux plan
 * (Landlock and mounts) cannot enforce it exactly. Without --resolve the
 * plan is static (what no machine can enforce); with it, the plan is made
 * against this machine's files, as cagerun makes it. Reported at the rule,
 * with the plan's reason. */
void lint_check_linux_plan(struct lint_ctx *c)
{
	if (!(lint_targets(c) & LINT_T_LINUX))
		return;
	struct lplan plan;
	const char *err = NULL;
	bool here = c->o->resolve || (c->o->root && c->o->root[0]);
	if (!(here ? lplan_build : lplan_build_static)(c->a, c->prof, &plan, &err))
		return;
	for (size_t i = 0; i < plan.nerrors; i++) {
		const struct lplan_msg *m = &plan.errors[i];
		if (m->rule)
			lint_report(c, "linux-inexact", m->rule, NULL, "%s", m->text);
	}
}
