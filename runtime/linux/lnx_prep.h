/*
 * lnx_prep.h - set-up work cagerun hands to helper threads while its main
 * thread compiles the policy and builds the plan, each joined before the
 * sandbox is cloned:
 *
 * - the seccomp filter: libseccomp needs about a millisecond of CPU to turn
 *   its rules into BPF (lnx_seccomp_build);
 * - the lease directory: a mkdir on a journalled /tmp can wait milliseconds
 *   for the journal while other jobs write to the same disk.
 *
 * A job that cannot get a thread runs at once on the caller's. Nothing here
 * decides anything: the results are exactly what the same calls made in
 * line would give.
 */
#ifndef CAGE_LNX_PREP_H
#define CAGE_LNX_PREP_H

#include <pthread.h>
#include <stdbool.h>

#include "lease.h"
#include "lnx_seccomp.h"

struct lnx_job {
	pthread_t thread;
	bool running, ok;
	void (*fn)(struct lnx_job *);
	char err[512]; /* why it failed, once finished */
};

struct lnx_sc_job {
	struct lnx_job job; /* first: the job is the container */
	struct lnx_seccomp_opts opts;
	struct lnx_seccomp_prog prog; /* the caller frees it */
};

struct lnx_lease_job {
	struct lnx_job job;
	struct lease *lease; /* untouched by the caller until finished */
	bool private_home;
};

void lnx_sc_job_start(struct lnx_sc_job *j, const struct lnx_seccomp_opts *o);
void lnx_lease_job_start(struct lnx_lease_job *j, struct lease *l, bool private_home);
/* Waits for the job (if it was started and not yet joined); its result. */
bool lnx_job_finish(struct lnx_job *j);

#endif
