/*
 * bench_run.c - times whole processes: bench_run RUNS -- COMMAND [ARGS...]
 * Runs COMMAND RUNS times (stdout to /dev/null), and prints one line:
 *   median_ms=… min_ms=… max_ms=… maxrss_kb=… runs=…
 * Wall time from CLOCK_MONOTONIC around fork..wait4; peak memory from
 * wait4's rusage. Any failing run aborts the measurement (a benchmark of a
 * command that fails measures nothing).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: bench_run RUNS -- COMMAND [ARGS...]\n");
		return 2;
	}
	int runs = atoi(argv[1]);
	if (runs < 1 || runs > 100000) {
		fprintf(stderr, "bench_run: RUNS must be 1..100000\n");
		return 2;
	}
	double *ms = calloc((size_t)runs, sizeof(*ms));
	if (!ms)
		return 2;
	long maxrss = 0;
	for (int i = 0; i < runs; i++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		pid_t pid = fork();
		if (pid < 0) {
			perror("bench_run: fork");
			return 2;
		}
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0)
				dup2(fd, STDOUT_FILENO);
			execvp(argv[3], argv + 3);
			perror("bench_run: exec");
			_exit(127);
		}
		int status;
		struct rusage ru;
		if (wait4(pid, &status, 0, &ru) < 0) {
			perror("bench_run: wait4");
			return 2;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "bench_run: %s failed (status %d)\n", argv[3], status);
			return 1;
		}
		ms[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		if (ru.ru_maxrss > maxrss)
			maxrss = ru.ru_maxrss;
	}
	qsort(ms, (size_t)runs, sizeof(*ms), cmp);
	double median = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
	printf("median_ms=%.3f min_ms=%.3f max_ms=%.3f maxrss_kb=%ld runs=%d\n", median, ms[0],
	       ms[runs - 1], maxrss, runs);
	free(ms);
	return 0;
}
