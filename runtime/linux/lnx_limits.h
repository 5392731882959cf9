/*
 * lnx_limits.h - the policy's resource limits on Linux (docs/cagerun.md,
 * "Resource limits"): how each one is enforced on this machine, or why it
 * cannot be.
 *
 *   processes  a pids cgroup this user may create children in (cgroup v2
 *              with pids delegated; for root also the v2 hierarchy's root
 *              cgroup; a writable cgroup v1 pids hierarchy, as root has);
 *              else RLIMIT_NPROC set in the command, which
 *              since Linux 5.14 counts per user namespace, so only the
 *              sandbox's own processes - but never for root, whom the
 *              kernel exempts from RLIMIT_NPROC.
 *   memory     memory.max of a delegated cgroup v2 memory controller; else
 *              not enforceable.
 *   tmp        the size of the tmpfs mounted on the private TMPDIR inside
 *              the mount namespace (lnx_mount_tmpfs).
 *   files      RLIMIT_NOFILE of the command (soft and hard).
 */
#ifndef CAGE_LNX_LIMITS_H
#define CAGE_LNX_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>

#include "ir.h"

struct lnx_limits {
	const struct ir_profile *prof;
	const char *why[IR_LIM_N]; /* NULL: enforced; else why not (static text) */
	rlim_t nproc;              /* RLIMIT_NPROC for the command, 0 = leave it */
	struct rlimit nofile;      /* RLIMIT_NOFILE for the command */
	uint64_t tmp_bytes;        /* size of the private tmpfs, 0 = none */
	char tmp_text[64];         /* "64 MiB", for the report at exit */
	char *cg_dir;              /* this run's cgroup, or NULL */
	int cg_procs;              /* its cgroup.procs, open for writing, or -1 */
	bool cg_pids, cg_memory;   /* what the cgroup bounds */
	/* cgroup v1 keeps each controller in a hierarchy of its own: where
	 * the memory bound comes from v1's memory hierarchy, this run's
	 * cgroup there (else NULL and -1). */
	char *mem_dir;
	int mem_procs;
};

/* The cgroup.procs files the sandbox's init must be written into before
 * it starts anything (at most two: v2's one, or v1's pids and memory). */
#define LNX_LIMITS_MAX_CGROUPS 2
/* They, in fds, as the launcher's spec carries them; returns how many. */
int lnx_limits_procs(const struct lnx_limits *l, int fds[LNX_LIMITS_MAX_CGROUPS]);

/* Decides how each of p's limits is enforced. `nofile_start` is the
 * RLIMIT_NOFILE cagerun was started with, what the command gets without a
 * `limit files`. Creates the cgroup when one is needed (lnx_limits_free
 * removes it). False with err set when a cgroup that was found could not
 * be set up; a limit merely unenforceable here is in why[] instead (see
 * run_limits_gate). */
bool lnx_limits_prepare(struct lnx_limits *l, const struct ir_profile *p,
			const struct rlimit *nofile_start, char *err, size_t errlen);
/* After the sandbox has ended: which limit stopped something, as far as
 * the mechanism can tell (cgroup events), on out. */
void lnx_limits_report(const struct lnx_limits *l, FILE *out);
/* Removes the cgroup (once the sandbox's processes are gone). */
void lnx_limits_free(struct lnx_limits *l);
/* The directory of a process's own cgroup in the hierarchy of controller
 * `ctl` (cgroup v1), or in the unified hierarchy (ctl NULL), from its
 * mountinfo and cgroup files (/proc/self/...): the mount point joined with
 * the cgroup's path below the mount's root. False when there is no such
 * mount or the cgroup lies outside what it shows. */
bool lnx_cgroup_dir(const char *mountinfo, const char *cgroup, const char *ctl, char *dir,
		    size_t len);
/* In the command, before exec: its rlimits. */
bool lnx_limits_apply_rlimits(rlim_t nproc, const struct rlimit *nofile, char *err,
			      size_t errlen);

#endif
