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
 *
 * Into the cgroup before anything of the sandbox runs: the sandbox's init
 * is moved in before it forks, so every process of the sandbox is born
 * inside, and cagerun itself (its proxy and resolver threads) never is.
 * How it moves matters for the launch's time. A write of a pid to
 * cgroup.procs (or `tasks`) takes the global cgroup_threadgroup_rwsem for
 * writing, and taking it from idle waits for an RCU grace period
 * (percpu_down_write -> rcu_sync_enter -> synchronize_rcu): 1.6 to 29 ms,
 * median 9.6, on the 2-core development VM. A thread that writes "0" to a
 * v1 `tasks` file (or v2 cgroup.threads) moves only itself and skips that
 * lock: it cannot exit or exec while it writes, and other writers are
 * excluded by cgroup_mutex (Linux 5.17, 9a3284fad42f "cgroup: Optimize
 * single thread migration"; cgroup_procs_write_start). init has one
 * thread, so moving it moves the process: about 10 us. On cgroup v2 a
 * thread may only move within its domain, so there init is not moved at
 * all: it is cloned into the cgroup (clone3 with CLONE_INTO_CGROUP, Linux
 * 5.7), which takes the lock for reading as every fork does. Where clone3
 * or the flag is refused (ENOSYS from some container runtimes' seccomp
 * profiles, older kernels), cagerun clones as before and writes init's pid
 * to cgroup.procs, paying the wait (unless the hierarchy is mounted with
 * favordynmods).
 *
 * When the folders are made matters too. Making two v1 cgroups and
 * writing their bounds takes about 0.2 ms, and init's mounts about 0.5:
 * so on v1 cagerun only finds the hierarchies before the clone, and makes
 * the folders while init builds its mounts (lnx_limits_make); init then
 * waits for cagerun's word, moves itself in through the parents cagerun
 * opened before the clone, and only then starts anything (its guard's
 * helper, the command). A v2 cgroup is made before the clone, since init
 * is born in it. init writes as the user cagerun runs as (its ID map is
 * the identity), who made the folders and so owns them and their
 * `tasks`.
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
	int cg_join;               /* open for writing, or -1: its `tasks` (cg_self) or its
	                              cgroup.procs */
	int cg_into;               /* cgroup v2: cg_dir itself (O_PATH), to clone init into,
	                              or -1 */
	bool cg_pids, cg_memory;   /* what the cgroup bounds */
	/* cgroup v1 keeps each controller in a hierarchy of its own: where
	 * the memory bound comes from v1's memory hierarchy, this run's
	 * cgroup there (else NULL). */
	char *mem_dir;
	/* cgroup v1: cg_dir (pids) and mem_dir are made after the clone
	 * (lnx_limits_make; `made` once they are); their parents, open
	 * O_PATH for init to join through, or -1; `child` their last name. */
	int cg_parent, mem_parent;
	bool made;
	char child[32];
};

/* How the sandbox's init joins the run's cgroups before it starts
 * anything: once cagerun has made them (its word 'c', lnx_sandbox.h), init
 * writes "0" to `child`/tasks under each of `later` (v1 parents, see
 * above); init is cloned into `into` (a v2 cgroup's directory) when
 * `has_into`, and else the parent writes init's pid to each `by_pid` (v2
 * cgroup.procs). Counts and a flag, so that a zeroed value joins nothing
 * (a descriptor 0 by default would write into stdin). */
#define LNX_CGROUP_JOINS_MAX 2
struct lnx_cgroup_joins {
	int nlater, later[LNX_CGROUP_JOINS_MAX];
	const char *child;
	int nby_pid, by_pid[LNX_CGROUP_JOINS_MAX];
	bool has_into;
	int into;
};
void lnx_limits_joins(const struct lnx_limits *l, struct lnx_cgroup_joins *j);

/* Decides how each of p's limits is enforced. `nofile_start` is the
 * RLIMIT_NOFILE cagerun was started with, what the command gets without a
 * `limit files`. Creates a v2 cgroup when one is needed, and finds the v1
 * parents a run's cgroups go under (lnx_limits_free removes what was
 * made). False with err set when a cgroup that was found could not be set
 * up; a limit merely unenforceable here is in why[] instead (see
 * run_limits_gate). */
bool lnx_limits_prepare(struct lnx_limits *l, const struct ir_profile *p,
			const struct rlimit *nofile_start, char *err, size_t errlen);
/* After the clone, before init is told to join: makes the v1 cgroups
 * lnx_limits_prepare found parents for and writes their bounds. Nothing to
 * do (true) without them or when they are made already (a second attempt,
 * after a stale kept plan). False with err set: the run must not start. */
bool lnx_limits_make(struct lnx_limits *l, char *err, size_t errlen);
/* Whether init is to wait for lnx_limits_make (cagerun's word 'c'). */
static inline bool lnx_limits_later(const struct lnx_limits *l)
{
	return l->cg_parent >= 0 || l->mem_parent >= 0;
}
/* After the sandbox has ended: which limit stopped something, as far as
 * the mechanism can tell (cgroup events), on out. */
void lnx_limits_report(const struct lnx_limits *l, FILE *out);
/* Removes the cgroup (once the sandbox's processes are gone). */
void lnx_limits_free(struct lnx_limits *l);
/* Removes the cgroups that runs killed before their clean-up left beside
 * this run's own: a `cage-run.PID` under the same parent whose PID is
 * gone, at least LNX_LIMITS_SWEEP_AGE seconds old, and empty (a cgroup
 * with processes cannot be removed), 32 at most per hierarchy. The
 * number removed. Called when the run's lease swept (lease.h), so at most
 * once a minute. */
#define LNX_LIMITS_SWEEP_AGE 2
int lnx_limits_sweep(const struct lnx_limits *l);
/* The directory of a process's own cgroup in the hierarchy of controller
 * `ctl` (cgroup v1), or in the unified hierarchy (ctl NULL), from its
 * mountinfo and cgroup files (/proc/self/...): the mount point joined with
 * the cgroup's path below the mount's root. False when there is no such
 * mount or the cgroup lies outside what it shows. */
bool lnx_cgroup_dir(const char *mountinfo, const char *cgroup, const char *ctl, char *dir,
		    size_t len);
/* In the sandbox's init, single-threaded, before it starts anything:
 * moves itself into the v1 cgroup `child` under `parent` (a `later` of
 * lnx_cgroup_joins) and closes parent. */
bool lnx_limits_join_later(int parent, const char *child, char *err, size_t errlen);
/* In the command, before exec: its rlimits. */
bool lnx_limits_apply_rlimits(rlim_t nproc, const struct rlimit *nofile, char *err,
			      size_t errlen);

#endif
