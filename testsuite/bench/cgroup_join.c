/*
 * cgroup_join.c - what putting the sandbox's init into a cgroup v2 costs,
 * by each way lnx_sandbox_clone has (runtime/linux/sandbox/lnx_sandbox.h):
 *
 *   cgroup_join [-g GAP_MS] RUNS
 *
 * Three rows, interleaved round by round, each timed from before the clone
 * to its return in the parent (init's namespaces as cagerun makes them,
 * without the network's): the clone alone (the anchor), the clone and then
 * init's pid written to the cgroup's cgroup.procs (where clone3 is
 * refused), and clone3 into the cgroup (CLONE_INTO_CGROUP). The child is
 * killed and reaped after each, untimed, and GAP_MS (default 20) pass
 * before the next: a move by pid waits for an RCU grace period only when
 * the cgroup lock has been idle, as it is between launches. Needs a cgroup2
 * hierarchy this process may make a child in (root on a hybrid host, or a
 * delegated subtree); exits 77 without one.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lnx_sandbox.h"

#define FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | SIGCHLD)
#define MAX_RUNS 10000

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One clone by `cj`'s way, timed; the child is gone when this returns. */
static double one(const struct lnx_cgroup_joins *cj)
{
	char err[512];
	double t0 = now_ms();
	pid_t pid = lnx_sandbox_clone(FLAGS, cj, err, sizeof err);
	double t = now_ms() - t0;
	if (pid == 0) {
		pause();
		_exit(0);
	}
	if (pid < 0) {
		fprintf(stderr, "cgroup_join: %s\n", err);
		exit(1);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return t;
}

int main(int argc, char **argv)
{
	long gap = 20;
	int i = 1;
	if (argc > 2 && !strcmp(argv[1], "-g")) {
		gap = strtol(argv[2], NULL, 10);
		i = 3;
	}
	long runs = i < argc ? strtol(argv[i], NULL, 10) : 0;
	if (runs < 1 || runs > MAX_RUNS || gap < 0 || gap > 10000 || i + 1 != argc) {
		fprintf(stderr, "usage: cgroup_join [-g GAP_MS] RUNS (1..%d)\n", MAX_RUNS);
		return 2;
	}
	char base[4096], dir[4200], procs[4300];
	if (!lnx_cgroup_dir("/proc/self/mountinfo", "/proc/self/cgroup", NULL, base, sizeof base)) {
		fprintf(stderr, "cgroup_join: no cgroup2 hierarchy here\n");
		return 77;
	}
	snprintf(dir, sizeof dir, "%s/cage-bench-join.%d", base, (int)getpid());
	if (mkdir(dir, 0755) != 0) {
		fprintf(stderr, "cgroup_join: cannot make %s: %s\n", dir, strerror(errno));
		return 77;
	}
	snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
	struct lnx_cgroup_joins none = { 0 }, by_pid = { .nby_pid = 1 }, into = { .has_into = true };
	by_pid.by_pid[0] = open(procs, O_WRONLY | O_CLOEXEC);
	into.into = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	double *t[3];
	for (int r = 0; r < 3; r++)
		t[r] = calloc((size_t)runs, sizeof(double));
	if (by_pid.by_pid[0] < 0 || into.into < 0 || !t[0] || !t[1] || !t[2]) {
		fprintf(stderr, "cgroup_join: cannot open %s: %s\n", dir, strerror(errno));
		rmdir(dir);
		return 1;
	}
	const struct lnx_cgroup_joins *way[3] = { &none, &by_pid, &into };
	struct timespec pause_ts = { gap / 1000, (gap % 1000) * 1000000L };
	for (long n = 0; n < runs; n++)
		for (int r = 0; r < 3; r++) {
			t[r][n] = one(way[r]);
			nanosleep(&pause_ts, NULL);
		}
	static const char *name[3] = { "clone (anchor)", "clone, then pid to cgroup.procs",
				       "clone3 into the cgroup" };
	printf("cgroup %s, %ld rounds, %ld ms apart\n", dir, runs, gap);
	printf("%-34s %10s %10s %10s\n", "way", "median_ms", "p90_ms", "max_ms");
	for (int r = 0; r < 3; r++) {
		qsort(t[r], (size_t)runs, sizeof(double), cmp_double);
		printf("%-34s %10.3f %10.3f %10.3f\n", name[r], t[r][runs / 2],
		       t[r][(runs * 9) / 10 < runs ? (runs * 9) / 10 : runs - 1], t[r][runs - 1]);
		free(t[r]);
	}
	close(by_pid.by_pid[0]);
	close(into.into);
	for (int k = 0; k < 100 && rmdir(dir) != 0 && errno == EBUSY; k++)
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	return 0;
}
