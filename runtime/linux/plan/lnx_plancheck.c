/*
 * lnx_plancheck.c - refuses to start a sandbox wider than its policy (see
 * lnx_plancheck.h). The comparison is the compiler's (lplan_check, over
 * the same answers `cagec explain --target linux` gives); this file only
 * turns its findings into the refusal.
 */
#include "lnx_plancheck.h"

#include "run.h"

int lnx_plan_refuse_wider(struct arena *a, const struct lplan *plan, FILE *err, bool verbose)
{
	struct lplan_widening *w;
	size_t nw;
	struct lplan_check_stats st;
	lplan_check(a, plan, &w, &nw, &st);
	if (verbose)
		fprintf(err, "cagerun: plan check: %zu paths, %zu evaluations, %zu answers from the "
			     "plan; %zu wider than the policy\n",
			st.paths, st.evals, st.queries, nw);
	if (!nw)
		return 0;
	char text[2400];
	for (size_t i = 0; i < nw; i++) {
		lplan_widening_text(&w[i], text, sizeof text);
		fprintf(err, "cagerun: error: %s\n", text);
	}
	fprintf(err, "cagerun: the Linux plan would allow %zu access%s the policy denies (a bug "
		     "in cage's plan, please report it); nothing was run\n",
		nw, nw == 1 ? "" : "es");
	return RUN_SETUP_FAILED;
}
