/*
 * lnx_hog.c - a bounded resource hog for the limit tests (limits.sh). Each
 * mode stops itself after a count or a time, so that it cannot harm the
 * machine even where no limit holds:
 *
 *   fork N HOLD [MARK]  fork up to N children that wait (at most 30 s),
 *                       print "forked=K err=E", create MARK (when given)
 *                       and keep them HOLD seconds, then end them all
 *   fill MIB PATH       write PATH 1 MiB at a time up to MIB MiB, print
 *                       "wrote=K err=E"
 *   files N             open /dev/null up to N times, print "opened=K err=E"
 *   alloc MIB           allocate and touch MIB MiB, 1 MiB at a time, print
 *                       "allocated=K"
 *   nproc-rlimit N CMD  set RLIMIT_NPROC to N (soft and hard), exec CMD: the
 *                       control, a process limit without a namespace
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "none";
	case EAGAIN: return "EAGAIN";
	case ENOSPC: return "ENOSPC";
	case EMFILE: return "EMFILE";
	case ENOMEM: return "ENOMEM";
	default: return strerror(e);
	}
}

static int do_fork(long n, unsigned hold, const char *mark)
{
	long ok = 0;
	int err = 0;
	if (n > 100000)
		n = 100000;
	/* Each child by its pid at the end: never the process group, which
	 * outside a cage holds the shell that started us. */
	pid_t *kids = malloc((size_t)(n > 0 ? n : 1) * sizeof *kids);
	if (!kids)
		return 2;
	for (long i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0) {
			err = errno;
			break;
		}
		if (p == 0) {
			alarm(30);
			pause();
			_exit(0);
		}
		kids[ok++] = p;
	}
	printf("forked=%ld err=%s\n", ok, err_name(err));
	fflush(stdout);
	if (mark) {
		int fd = open(mark, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0)
			close(fd);
	}
	sleep(hold > 30 ? 30 : hold);
	for (long i = 0; i < ok; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	free(kids);
	return 0;
}

static int do_fill(long mib, const char *path)
{
	static char buf[1 << 20];
	memset(buf, 'x', sizeof buf);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		printf("wrote=0 err=%s\n", err_name(errno));
		return 1;
	}
	long k = 0;
	int err = 0;
	for (; k < mib; k++) {
		ssize_t w = write(fd, buf, sizeof buf);
		if (w != (ssize_t)sizeof buf) {
			err = w < 0 ? errno : ENOSPC;
			break;
		}
	}
	if (!err && fsync(fd) != 0)
		err = errno;
	close(fd);
	printf("wrote=%ld err=%s\n", k, err_name(err));
	return 0;
}

static int do_files(long n)
{
	long k = 0;
	int err = 0;
	for (; k < n; k++)
		if (open("/dev/null", O_RDONLY) < 0) {
			err = errno;
			break;
		}
	printf("opened=%ld err=%s\n", k, err_name(err));
	return 0;
}

static int do_alloc(long mib)
{
	long k = 0;
	for (; k < mib; k++) {
		char *p = malloc(1 << 20);
		if (!p)
			break;
		memset(p, 1, 1 << 20);
		if ((k + 1) % 16 == 0) {
			printf("allocated=%ld\n", k + 1);
			fflush(stdout);
		}
	}
	printf("allocated=%ld\n", k);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "fork"))
		return do_fork(atol(argv[2]), (unsigned)atoi(argv[3]), argc > 4 ? argv[4] : NULL);
	if (argc == 4 && !strcmp(argv[1], "fill"))
		return do_fill(atol(argv[2]), argv[3]);
	if (argc == 3 && !strcmp(argv[1], "files"))
		return do_files(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "alloc"))
		return do_alloc(atol(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "nproc-rlimit")) {
		struct rlimit rl = { (rlim_t)atol(argv[2]), (rlim_t)atol(argv[2]) };
		if (setrlimit(RLIMIT_NPROC, &rl) != 0) {
			perror("setrlimit");
			return 2;
		}
		execv(argv[3], argv + 3);
		perror(argv[3]);
		return 2;
	}
	fprintf(stderr, "usage: lnx_hog fork N HOLD [MARK] | fill MIB PATH | files N | alloc MIB "
			"| nproc-rlimit N CMD...\n");
	return 2;
}
