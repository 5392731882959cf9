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
#include "pf.h"

struct lnx_planload {
	bool have_cache; /* cache.dir is the cache (protect it in the sandbox) */
	bool tried;      /* the cache was looked for (lnx_planload_cache) */
	bool reused;     /* the plan came from the cache */
	struct lnx_plancache cache;
	/* A kept plan bound before its dependencies were asked again
	 * (lnx_plan_get's `defer`): nothing may run under it until
	 * lnx_plan_confirm has passed. */
	bool unconfirmed;
	bool stale; /* lnx_plan_confirm found it changed: not read again */
	/* It was the launcher's (lnx_plan_take_held): found stale, it is the
	 * held copy that is not used again; the kept file may be newer. */
	bool from_held;
	const struct pf_dep *deps;
	size_t ndeps;
	char name[48];
};

/* The cache folder, found (and made) on the first call: git discovery's
 * walk asks for it before the plan does, and both use the one found.
 * False when there is none usable (said once, with `verbose`). `pl`
 * starts zeroed. */
bool lnx_planload_cache(struct lnx_planload *pl, bool verbose);

/* Fills *plan for profile `prof` of `pol`, run from the working directory
 * `cwd` (part of the kept plan's key): 0, or RUN_SETUP_FAILED (with
 * the reasons on stderr) when the plan has rules it cannot enforce or is
 * wider than the policy. `policy` names the policy in messages; with
 * `verbose`, whether the plan was reused and why not is said.
 *
 * With `defer`, a kept plan whose artifact and key agree is bound without
 * asking the disk again about the paths it depends on, and
 * pl->unconfirmed is set: the caller asks with lnx_plan_confirm, before
 * anything runs under the plan, while the sandbox is being built (its
 * mounts are made in a mount namespace of its own, which a plan found
 * stale throws away with its init). */
int lnx_plan_get(struct arena *a, const struct ir_policy *pol, const struct ir_profile *prof,
		 const char *policy, const char *cwd, bool verbose, bool defer, struct lplan *plan,
		 struct lnx_planload *pl);

/* A kept plan bound ahead of the run that will use it: a launcher binds
 * it beside the compile it keeps for its spares (held.h), so that the run
 * reads and binds no file. Its memory is the compile's arena. */
struct lnx_held_plan {
	struct lplan plan;
	const struct ir_profile *prof; /* the profile it is bound to */
	struct pf_key key;             /* the key it was found by */
	const struct pf_dep *deps;
	size_t ndeps;
	char name[48];
};

/* Binds into *h the kept plan of `prof` run from `cwd`, as lnx_plan_get
 * with `defer` would, saying nothing: false when there is none to bind
 * (no cache, none kept for this key, or one discarded). Nothing is built
 * or written. */
bool lnx_plan_hold(struct arena *a, const struct ir_policy *pol, const struct ir_profile *prof,
		   const char *cwd, struct lnx_held_plan *h);

/* lnx_plan_get with `defer`, from h instead of the cache's file: true
 * when h was bound to this very profile and its key is the key this run
 * computes (pl->unconfirmed set: lnx_plan_confirm as after lnx_plan_get);
 * false, with *plan untouched, when the caller must call lnx_plan_get. */
bool lnx_plan_take_held(struct arena *a, const struct ir_policy *pol,
			const struct ir_profile *prof, const char *cwd,
			const struct lnx_held_plan *h, bool verbose, struct lplan *plan,
			struct lnx_planload *pl);

/* A deferred plan's dependencies, asked now: true when each answers as
 * it did when the plan was built (pl->unconfirmed is then cleared), false
 * when one changed (said with `verbose`): the plan must not be used, and
 * lnx_plan_get without `defer` builds the plan afresh. */
bool lnx_plan_confirm(struct arena *a, struct lnx_planload *pl, bool verbose);

#endif
