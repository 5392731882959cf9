/*
 * create_bench.c - the cost of one name-making call: creates and removes
 * N files in the current directory (openat O_CREAT|O_EXCL, close,
 * unlink) and prints nanoseconds per round. testsuite/bench/guard.sh runs
 * it inside cagerun with and without the create guard; only the openat is
 * notified, so the difference is the guard's cost per creating call.
 *
 * usage: create_bench N
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		int fd = openat(AT_FDCWD, "bench-file", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || close(fd) != 0 || unlink("bench-file") != 0) {
			perror("bench-file");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("%.0f ns per create+close+unlink\n", ns / (double)n);
	return 0;
}
