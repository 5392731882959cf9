/*
 * bench_run.c - times whole processes:
 *   bench_run [-w WARMUP] [-g GAP_MS] RUNS -- COMMAND [ARGS...] [::: COMMAND [ARGS...]]...
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
 * say) then does not fall on the next run.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BR_MAX_CMDS 16

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

/* Runs argv once; its wall time in ms, or a negative value on failure;
 * its CPU time in *cpu_ms. */
static double br_once(char **argv, long *maxrss, double *cpu_ms)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid < 0) {
		perror("bench_run: fork");
		return -1;
	}
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, STDOUT_FILENO);
		execvp(argv[0], argv);
		perror("bench_run: exec");
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("bench_run: wait4");
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench_run: %s failed (status %d)\n", argv[0], status);
		return -1;
	}
	if (ru.ru_maxrss > *maxrss)
		*maxrss = ru.ru_maxrss;
	*cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		  (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
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
	int warm = 0, gap_ms = 0, ai = 1;
	for (; argc > ai + 1; ai += 2) {
		if (!strcmp(argv[ai], "-w"))
			warm = atoi(argv[ai + 1]);
		else if (!strcmp(argv[ai], "-g"))
			gap_ms = atoi(argv[ai + 1]);
		else
			break;
	}
	struct br_cmd cmds[BR_MAX_CMDS];
	memset(cmds, 0, sizeof cmds);
	int ncmds = -1;
	if (argc >= ai + 3 && !strcmp(argv[ai + 1], "--"))
		ncmds = br_split(argv + ai + 2, cmds);
	if (ncmds < 1) {
		fprintf(stderr, "usage: bench_run [-w WARMUP] [-g GAP_MS] RUNS -- COMMAND [ARGS...] "
				"[::: COMMAND [ARGS...]]...\n");
		return 2;
	}
	int runs = atoi(argv[ai]);
	if (runs < 1 || runs > 100000 || warm < 0 || warm > 1000 || gap_ms < 0 || gap_ms > 10000) {
		fprintf(stderr, "bench_run: RUNS must be 1..100000, WARMUP 0..1000, GAP_MS 0..10000\n");
		return 2;
	}
	const struct timespec gap = { gap_ms / 1000, (long)(gap_ms % 1000) * 1000000L };
	for (int c = 0; c < ncmds; c++)
		if (!(cmds[c].ms = calloc((size_t)runs, sizeof(double))) ||
		    !(cmds[c].cpu = calloc((size_t)runs, sizeof(double))))
			return 2;
	long ignored = 0;
	for (int i = -warm; i < runs; i++)
		for (int c = 0; c < ncmds; c++) {
			double cpu = 0;
			if (gap_ms > 0)
				nanosleep(&gap, NULL);
			double ms = br_once(cmds[c].argv, i < 0 ? &ignored : &cmds[c].maxrss, &cpu);
			if (ms < 0)
				return 1;
			if (i >= 0) {
				cmds[c].ms[i] = ms;
				cmds[c].cpu[i] = cpu;
			}
		}
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
