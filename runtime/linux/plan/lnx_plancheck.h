/*
 * lnx_plancheck.h - the launcher's side of the check that the Linux plan
 * is never wider than the policy (lplan_check): cagerun asks it after the
 * plan is built and before anything is started, and refuses on a finding.
 */
#ifndef CAGE_LNX_PLANCHECK_H
#define CAGE_LNX_PLANCHECK_H

#include <stdbool.h>
#include <stdio.h>

#include "lplan.h"

/* 0 when the plan allows nothing the policy denies (reading metadata
 * aside); otherwise each finding on `err` ("cagerun: error: RULE: the
 * sandbox would allow ACCESS PATH, ...") and RUN_SETUP_FAILED. With
 * `verbose`, what was compared is said either way. */
int lnx_plan_refuse_wider(struct arena *a, const struct lplan *plan, FILE *err, bool verbose);

#endif
