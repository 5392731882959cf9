/*
 * lnx_planload.c - reuse or build the plan (see lnx_planload.h).
 *
 * Reuse takes three agreements, each of which alone falls back to a
 * fresh build: the artifact is sound (owner, mode, checksum, bounds:
 * lnx_plancache_load, pf_read); its key is the key of the profile just
 * compiled (the sources' fingerprint, the profile's own digest, params,
 * uid, home, cwd); and every path the build and its check looked at
 * answers as it did then (pf_deps_check). The plan is a function of
 * the profile and those answers, so the kept plan is the plan a fresh
 * build would make, which passed the plan check when it was made. The
 * third may be asked later (lnx_plan_confirm), while the sandbox is
 * built from the plan and before anything runs in it.
 */
#include "lnx_planload.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lnx_plancheck.h"
#include "pf.h"
#include "run.h"

static void print_rule_msgs(const struct lplan_msg *m, size_t n, const char *kind)
{
	char rule[1200];
	for (size_t i = 0; i < n; i++) {
		if (m[i].rule) {
			lplan_rule_text(m[i].rule, rule, sizeof rule);
			fprintf(stderr, "cagerun: %s: %s: %s\n", kind, rule, m[i].text);
		} else {
			fprintf(stderr, "cagerun: %s: %s\n", kind, m[i].text);
		}
	}
}

/* Said when a kept plan is used, or (*pl deferred) when it is confirmed. */
static void say_reused(const struct lnx_planload *pl, size_t ndeps)
{
	fprintf(stderr, "cagerun: plan: reused %s/%s (%zu paths unchanged)\n", pl->cache.dir,
		pl->name, ndeps);
}

static void say_changed(const struct pf_dep *d)
{
	fprintf(stderr, "cagerun: plan: %s changed since the kept plan was built; planning again\n",
		d->path);
}

/* True when a kept plan was bound into *plan: with `defer`, before its
 * dependencies are asked (lnx_plan_confirm), else after. */
static bool try_reuse(struct arena *a, const struct ir_profile *prof, const struct pf_key *key,
		      bool verbose, bool defer, struct lplan *plan, struct lnx_planload *pl)
{
	char why[512];
	struct pf_plan pf;
	enum lnx_plancache_got got = lnx_plancache_load(a, &pl->cache, pl->name, &pf, why,
							sizeof why);
	if (got == PLANCACHE_ABSENT)
		return false;
	size_t bad;
	if (got == PLANCACHE_REJECTED) {
		/* reason in why */
	} else if (!pf_key_same(&pf.key, key)) {
		snprintf(why, sizeof why, "built for another policy, user or directory");
	} else if (!defer && !pf_deps_check(a, pf.deps, pf.ndeps, &bad)) {
		if (verbose)
			say_changed(&pf.deps[bad]);
		return false;
	} else if (lplan_from_pf(a, &pf, prof, false, plan, why, sizeof why)) {
		pl->unconfirmed = defer;
		pl->deps = pf.deps;
		pl->ndeps = pf.ndeps;
		if (verbose && !defer)
			say_reused(pl, pf.ndeps);
		return true;
	}
	if (verbose)
		fprintf(stderr, "cagerun: plan: %s/%s: %s; discarded, planning again\n",
			pl->cache.dir, pl->name, why);
	return false;
}

bool lnx_plan_confirm(struct arena *a, struct lnx_planload *pl, bool verbose)
{
	assert(pl->unconfirmed && pl->reused);
	size_t bad;
	if (!pf_deps_check(a, pl->deps, pl->ndeps, &bad)) {
		if (verbose)
			say_changed(&pl->deps[bad]);
		pl->stale = true;
		return false;
	}
	pl->unconfirmed = false;
	if (verbose)
		say_reused(pl, pl->ndeps);
	return true;
}

static void keep(struct arena *a, const struct lplan *plan, const struct ir_policy *pol,
		 const struct ir_profile *prof, const char *cwd, const char *name, bool verbose,
		 const struct lnx_planload *pl)
{
	size_t ndeps;
	bool unstable;
	lplan_deps(plan, &ndeps, &unstable);
	(void)ndeps;
	if (unstable) {
		if (verbose)
			fprintf(stderr, "cagerun: plan: the files it depends on changed while it was "
					"built; not kept\n");
		return;
	}
	struct pf_plan pf;
	lplan_artifact(a, plan, pol, prof, (uint32_t)geteuid(), cwd, &pf);
	uint8_t *b;
	size_t n;
	pf_write(a, &pf, &b, &n);
	char err[600];
	if (!lnx_plancache_store(&pl->cache, name, b, n, err, sizeof err)) {
		if (verbose)
			fprintf(stderr, "cagerun: plan: not kept: %s\n", err);
	} else if (verbose) {
		fprintf(stderr, "cagerun: plan: kept as %s/%s (%zu bytes, %zu paths it depends on)\n",
			pl->cache.dir, name, n, pf.ndeps);
	}
}

bool lnx_planload_cache(struct lnx_planload *pl, bool verbose)
{
	if (!pl->tried) {
		char err[600];
		pl->tried = true;
		pl->have_cache = lnx_plancache_open(&pl->cache, err, sizeof err);
		if (!pl->have_cache && verbose)
			fprintf(stderr, "cagerun: plan cache: %s; planning (and walking the "
					"workspace for git) without it\n", err);
	}
	return pl->have_cache;
}

/* The key of `prof` run from `cwd` by this user, and the name of the
 * file a plan of that key is kept in. */
static void key_of(struct arena *a, const struct ir_policy *pol, const struct ir_profile *prof,
		   const char *cwd, struct pf_key *key, char name[48])
{
	lplan_key(a, pol, prof, (uint32_t)geteuid(), cwd, key);
	char hex[33];
	pf_key_name(key, hex);
	snprintf(name, 48, "%s.plan", hex);
}

bool lnx_plan_hold(struct arena *a, const struct ir_policy *pol, const struct ir_profile *prof,
		   const char *cwd, struct lnx_held_plan *h)
{
	struct lnx_planload pl;
	memset(&pl, 0, sizeof pl);
	memset(h, 0, sizeof *h);
	if (!lnx_planload_cache(&pl, false))
		return false;
	key_of(a, pol, prof, cwd, &h->key, pl.name);
	if (!try_reuse(a, prof, &h->key, false, true, &h->plan, &pl))
		return false;
	h->prof = prof;
	h->deps = pl.deps;
	h->ndeps = pl.ndeps;
	memcpy(h->name, pl.name, sizeof h->name);
	return true;
}

bool lnx_plan_take_held(struct arena *a, const struct ir_policy *pol,
			const struct ir_profile *prof, const char *cwd,
			const struct lnx_held_plan *h, bool verbose, struct lplan *plan,
			struct lnx_planload *pl)
{
	if (!h || h->prof != prof || pl->stale || !lnx_planload_cache(pl, verbose))
		return false;
	struct pf_key key;
	char name[48];
	key_of(a, pol, prof, cwd, &key, name);
	if (!pf_key_same(&key, &h->key) || strcmp(name, h->name))
		return false;
	*plan = h->plan;
	memcpy(pl->name, name, sizeof pl->name);
	pl->deps = h->deps;
	pl->ndeps = h->ndeps;
	pl->reused = pl->unconfirmed = pl->from_held = true;
	if (verbose) {
		fprintf(stderr, "cagerun: plan: %s/%s, bound by the launcher ahead\n", pl->cache.dir,
			name);
		print_rule_msgs(plan->notes, plan->nnotes, "note");
	}
	return true;
}

int lnx_plan_get(struct arena *a, const struct ir_policy *pol, const struct ir_profile *prof,
		 const char *policy, const char *cwd, bool verbose, bool defer, struct lplan *plan,
		 struct lnx_planload *pl)
{
	/* A stale copy of the launcher's leaves the file to be read (it may
	 * have been kept since); a stale file is not read again. */
	bool read_file = !pl->stale || pl->from_held;
	pl->reused = pl->unconfirmed = pl->from_held = false;
	bool can_keep = lnx_planload_cache(pl, verbose);
	if (can_keep) {
		struct pf_key key;
		key_of(a, pol, prof, cwd, &key, pl->name);
		if (read_file && try_reuse(a, prof, &key, verbose, defer, plan, pl)) {
			pl->reused = true;
			if (verbose)
				print_rule_msgs(plan->notes, plan->nnotes, "note");
			return 0;
		}
	}
	const char *perr = NULL;
	if (!lplan_build(a, prof, plan, &perr))
		return run_fail("%s", perr);
	if (verbose || plan->nerrors)
		print_rule_msgs(plan->notes, plan->nnotes, "note");
	if (plan->nerrors) {
		print_rule_msgs(plan->errors, plan->nerrors, "error");
		return run_fail("%s: %zu rule%s cannot be enforced exactly on Linux; nothing was run",
				policy, plan->nerrors, plan->nerrors == 1 ? "" : "s");
	}
	/* Nothing starts on a plan that allows what the policy denies, and
	 * nothing is kept that did not pass. */
	int rc = lnx_plan_refuse_wider(a, plan, stderr, verbose);
	if (rc)
		return rc;
	if (can_keep)
		keep(a, plan, pol, prof, cwd, pl->name, verbose, pl);
	return 0;
}
