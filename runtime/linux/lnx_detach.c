/*
 * lnx_detach.c - the cleanup after cagerun has reported the status (see
 * lnx_detach.h).
 */
#include "lnx_detach.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* How long the cleaner waits for init, twice: init has nothing left to do
 * but exit, and is killed after the first wait. */
enum { DETACH_WAIT_MS = 10000 };

static void wait_gone(int pidfd)
{
	struct pollfd p = { pidfd, POLLIN, 0 };
	for (int round = 0; round < 2; round++) {
		int n;
		do
			n = poll(&p, 1, DETACH_WAIT_MS);
		while (n < 0 && errno == EINTR);
		if (n != 0)
			return; /* gone (or poll failed: the cleanup's own retries bound it) */
		(void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	}
}

/* The cleaner's descriptors: 0 and 1 on /dev/null, 2 as it was (or
 * /dev/null, closed), 3 init's pidfd when there is one, and none other:
 * what cagerun still holds must close when cagerun exits. Returns where
 * init's pidfd is now (-1: none). When that cannot be arranged, some may
 * stay open: the cleanup is still done, since holding a caller's pipe a
 * moment longer is better than leaving the lease behind. */
static int settle_fds(int null, int pidfd)
{
	int err = fcntl(STDERR_FILENO, F_GETFD) >= 0 ? STDERR_FILENO : null;
	int want[] = { null, null, err, pidfd };
	int n = pidfd >= 0 ? 4 : 3;
	/* Above every descriptor first, so that no dup2 below overwrites a
	 * source it still needs. */
	int high[4];
	int got = 0;
	while (got < n && (high[got] = fcntl(want[got], F_DUPFD, 100)) >= 0)
		got++;
	if (got < n) {
		for (int i = 0; i < got; i++)
			close(high[i]);
		return pidfd; /* nothing was moved */
	}
	for (int i = 0; i < n; i++)
		if (dup2(high[i], i) != i)
			return pidfd >= 0 ? high[3] : -1; /* the copies stay open */
	(void)syscall(SYS_close_range, (unsigned)n, ~0U, 0);
	return pidfd >= 0 ? 3 : -1;
}

bool lnx_detach_cleanup(pid_t init, void (*clean)(void *ctx), void *ctx)
{
	/* A pidfd, because init is reparented once cagerun exits: the cleaner
	 * cannot wait for it as a child. Taken while init is an unreaped
	 * child, so its pid cannot name another process. */
	int pidfd = -1;
	if (init > 0 && (pidfd = (int)syscall(SYS_pidfd_open, init, 0)) < 0)
		return false;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	pid_t pid = null >= 0 ? fork() : -1;
	if (pid == 0) {
		(void)setsid();
		int gone = settle_fds(null, pidfd);
		if (gone >= 0)
			wait_gone(gone);
		clean(ctx);
		_exit(0);
	}
	if (pidfd >= 0)
		close(pidfd);
	if (null >= 0)
		close(null);
	return pid > 0;
}
