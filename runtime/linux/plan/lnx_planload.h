/*
 * lnx_planload.h - the plan a launch enforces: one kept from an earlier
 * run when its key matches and nothing it depends on has changed, else
 * one built and checked now (and then kept). docs/plan-format.md says
 * what is kept and compared; docs/security-model.md why it is safe.
 */
#ifndef CAGE_LNX_PLANLOAD_H
#define CAGE_LNX_PLANLOAD_H

#include <stdbool.h>

#include "lnx_plancache.h"
#include "lplan.h"

struct lnx_planload {
	bool have_cache; /* cache.dir is the cache (protect it in the sandbox) */
	bool tried;      /* the cache was looked for (lnx_planload_cache) */
	bool reused;     /* the plan came from the cache */
	struct lnx_plancache cache;
};

/* The cache folder, found (and made) on the first call: git discovery's
 * walk asks for it before the plan does, and both use the one found.
 * False when there is none usable (said once, with `verbose`). `pl`
 * starts zeroed. */
bool lnx_planload_cache(struct lnx_planload *pl, bool verbose);

/* Fills *plan for profile `prof` of `pol`: 0, or RUN_SETUP_FAILED (with
 * the reasons on stderr) when the plan has rules it cannot enforce or is
 * wider than the policy. `policy` names the policy in messages; with
 * `verbose`, whether the plan was reused and why not is said. */
int lnx_plan_get(struct arena *a, const struct ir_policy *pol, const struct ir_profile *prof,
		 const char *policy, bool verbose, struct lplan *plan, struct lnx_planload *pl);

#endif
