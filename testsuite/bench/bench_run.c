/*
 * bench_run.c - times whole processes:
 *   bench_run [-w WARMUP] [-g GAP_MS] [-j N] RUNS -- COMMAND [ARGS...] [::: COMMAND [ARGS...]]...
 * Runs each COMMAND RUNS times (stdout to /dev/null) and prints one line
 * per command:
 *   median_ms=… p90_ms=… min_ms=… max_ms=… maxrss_kb=… runs=… cpu_median_ms=…
 * With several commands (separated by `:::`, which no command here takes
 * as an argument) the runs are interleaved round by round, so that load
 * from elsewhere falls on all of them alike, and every line after the
 * first also says how far its median and p90 are above the first
 * command's (the anchor): d_median_ms=… d_p90_ms=…. WARMUP rounds (default
 * 0) run first and are not counted. GAP_MS (default 0) is a pause before
 * every run, as between the tool calls of an agent host: work a command
 * leaves behind when it exits (the kernel's teardown of its namespaces,
 * say) then does not fall on the next run. With -j N (default 1, at most
 * 8) each run starts N copies of the command at once, as an agent host
 * running tool calls side by side does, and each copy's own time from its
 * fork to its exit is one sample: RUNS rounds give RUNS * N samples.
 *
 * Wall time from CLOCK_MONOTONIC around fork..wait4; peak memory and CPU
 * time (user + system) from wait4's rusage, which covers the child and
 * every descendant it reaped (for cagerun: the sandbox's init and, through
 * it, the command). CPU time is what load from elsewhere inflates least,
 * so it is the better measure of a change on a shared machine. Any
 * failing run aborts the measurement (a benchmark of a command that fails
 * measures nothing).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BR_MAX_CMDS 16
#define BR_MAX_JOBS 8

struct br_cmd {
	char **argv;   /* NULL-terminated, points into main's argv */
	double *ms;    /* one per counted run */
	double *cpu;   /* CPU ms (user + system of the whole tree), one per counted run */
	long maxrss;   /* KiB */
	double median, p90;
};

static int br_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Runs n copies of argv at once; each copy's wall time in ms[i] and CPU
 * time in cpu_ms[i]. False on any failure (every copy started is reaped). */
static bool br_run(char **argv, int n, long *maxrss, double *ms, double *cpu_ms)
{
	struct timespec t0[BR_MAX_JOBS];
	pid_t pids[BR_MAX_JOBS];
	int started = 0;
	bool ok = true;
	for (; started < n; started++) {
		clock_gettime(CLOCK_MONOTONIC, &t0[started]);
		pid_t pid = fork();
		if (pid < 0) {
			perror("bench_run: fork");
			ok = false;
			break;
		}
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0)
				dup2(fd, STDOUT_FILENO);
			execvp(argv[0], argv);
			perror("bench_run: exec");
			_exit(127);
		}
		pids[started] = pid;
	}
	for (int left = started; left > 0; left--) {
		int status;
		struct rusage ru;
		pid_t pid = wait4(-1, &status, 0, &ru);
		if (pid < 0) {
			perror("bench_run: wait4");
			return false;
		}
		struct timespec t1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		int k = 0;
		while (k < started && pids[k] != pid)
			k++;
		if (k == started) { /* bench_run forks nothing else */
			fprintf(stderr, "bench_run: wait4 returned an unknown child %d\n", (int)pid);
			return false;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "bench_run: %s failed (status %d)\n", argv[0], status);
			ok = false;
		}
		if (ru.ru_maxrss > *maxrss)
			*maxrss = ru.ru_maxrss;
		cpu_ms[k] = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
		ms[k] = (double)(t1.tv_sec - t0[k].tv_sec) * 1e3 +
			(double)(t1.tv_nsec - t0[k].tv_nsec) / 1e6;
	}
	return ok;
}

/* Splits argv (after `--`) at each `:::` into commands; the count, or -1. */
static int br_split(char **argv, struct br_cmd *cmds)
{
	int n = 0;
	char **start = argv;
	for (char **a = argv;; a++) {
		if (*a && strcmp(*a, ":::") != 0)
			continue;
		if (a == start || n == BR_MAX_CMDS)
			return -1;
		cmds[n++].argv = start;
		if (!*a)
			return n;
		*a = NULL; /* terminates this command's argv */
		start = a + 1;
	}
}

int main(int argc, char **argv)
{
	int warm = 0, gap_ms = 0, jobs = 1, ai = 1;
	for (; argc > ai + 1; ai += 2) {
		if (!strcmp(argv[ai], "-w"))
			warm = atoi(argv[ai + 1]);
		else if (!strcmp(argv[ai], "-g"))
			gap_ms = atoi(argv[ai + 1]);
		else if (!strcmp(argv[ai], "-j"))
			jobs = atoi(argv[ai + 1]);
		else
			break;
	}
	struct br_cmd cmds[BR_MAX_CMDS];
	memset(cmds, 0, sizeof cmds);
	int ncmds = -1;
	if (argc >= ai + 3 && !strcmp(argv[ai + 1], "--"))
		ncmds = br_split(argv + ai + 2, cmds);
	if (ncmds < 1) {
		fprintf(stderr, "usage: bench_run [-w WARMUP] [-g GAP_MS] [-j N] RUNS -- COMMAND [ARGS...] "
				"[::: COMMAND [ARGS...]]...\n");
		return 2;
	}
	int runs = atoi(argv[ai]);
	if (runs < 1 || runs > 100000 || warm < 0 || warm > 1000 || gap_ms < 0 || gap_ms > 10000 ||
	    jobs < 1 || jobs > BR_MAX_JOBS) {
		fprintf(stderr, "bench_run: RUNS must be 1..100000, WARMUP 0..1000, GAP_MS 0..10000, "
				"N 1..%d\n", BR_MAX_JOBS);
		return 2;
	}
	const struct timespec gap = { gap_ms / 1000, (long)(gap_ms % 1000) * 1000000L };
	int samples = runs * jobs;
	for (int c = 0; c < ncmds; c++)
		if (!(cmds[c].ms = calloc((size_t)samples, sizeof(double))) ||
		    !(cmds[c].cpu = calloc((size_t)samples, sizeof(double))))
			return 2;
	long ignored = 0;
	double wms[BR_MAX_JOBS], wcpu[BR_MAX_JOBS];
	for (int i = -warm; i < runs; i++)
		for (int c = 0; c < ncmds; c++) {
			if (gap_ms > 0)
				nanosleep(&gap, NULL);
			bool counted = i >= 0;
			if (!br_run(cmds[c].argv, jobs, counted ? &cmds[c].maxrss : &ignored,
				    counted ? cmds[c].ms + (size_t)i * (size_t)jobs : wms,
				    counted ? cmds[c].cpu + (size_t)i * (size_t)jobs : wcpu))
				return 1;
		}
	runs = samples; /* from here on, every copy's time is one sample */
	for (int c = 0; c < ncmds; c++) {
		struct br_cmd *k = &cmds[c];
		qsort(k->ms, (size_t)runs, sizeof(double), br_cmp);
		k->median = runs % 2 ? k->ms[runs / 2] : (k->ms[runs / 2 - 1] + k->ms[runs / 2]) / 2;
		/* Nearest rank: the smallest time that at least 90% of runs reach. */
		int r90 = (9 * runs + 9) / 10;
		k->p90 = k->ms[r90 - 1];
		qsort(k->cpu, (size_t)runs, sizeof(double), br_cmp);
		double cpu = runs % 2 ? k->cpu[runs / 2]
				      : (k->cpu[runs / 2 - 1] + k->cpu[runs / 2]) / 2;
		printf("median_ms=%.3f p90_ms=%.3f min_ms=%.3f max_ms=%.3f maxrss_kb=%ld runs=%d "
		       "cpu_median_ms=%.3f",
		       k->median, k->p90, k->ms[0], k->ms[runs - 1], k->maxrss, runs, cpu);
		if (c > 0)
			printf(" d_median_ms=%+.3f d_p90_ms=%+.3f", k->median - cmds[0].median,
			       k->p90 - cmds[0].p90);
		putchar('\n');
		free(k->ms);
		free(k->cpu);
	}
	return 0;
}
