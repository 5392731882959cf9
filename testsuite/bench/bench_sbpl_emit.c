/*
 * bench_sbpl_emit.c - the SBPL emitter alone, in process: loads a policy
 * once, then writes its profile to /dev/null RUNS times and prints the
 * median and minimum time of one emit. testsuite/bench/sbpl_emit.sh runs it
 * next to the whole-process timings.
 *
 *   bench_sbpl_emit POLICY.cage [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cage.h"

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs("usage: bench_sbpl_emit POLICY.cage [RUNS]\n", stderr);
		return 2;
	}
	int runs = argc > 2 ? atoi(argv[2]) : 21;
	if (runs < 1 || runs > 100000) {
		fputs("bench_sbpl_emit: RUNS must be 1..100000\n", stderr);
		return 2;
	}
	cage_options *o = cage_options_new();
	if (!o)
		return 2;
	cage_options_target(o, "macos"); /* a Seatbelt profile is macOS only */
	cage_options_home(o, "/home/u");
	cage_policy *p = cage_load_file(argv[1], o);
	if (!p || cage_error_count(p) > 0) {
		if (p)
			cage_print_diagnostics(p, stderr, false);
		return 1;
	}
	FILE *null = fopen("/dev/null", "w");
	if (!null) {
		perror("/dev/null");
		return 2;
	}
	double *ms = malloc((size_t)runs * sizeof(*ms));
	if (!ms)
		return 2;
	for (int i = 0; i < runs; i++) {
		struct timespec a, b;
		const char *err = NULL;
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (!cage_emit(p, "sbpl", null, &err)) {
			fprintf(stderr, "bench_sbpl_emit: %s\n", err);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		ms[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	}
	qsort(ms, (size_t)runs, sizeof(*ms), cmp_d);
	printf("%.3f %.3f\n", ms[runs / 2], ms[0]);
	free(ms);
	fclose(null);
	cage_policy_free(p);
	cage_options_free(o);
	return 0;
}
