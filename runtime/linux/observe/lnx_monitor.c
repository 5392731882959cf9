/*
 * lnx_monitor.c - the monitored command's process (see lnx_monitor.h).
 */
#include "lnx_monitor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/close_range.h>

#include "lnx_observe.h"
#include "lnx_sandbox.h"
#include "runcommon.h"

extern char **environ;

/* The listener reaches cagerun by number: sendmsg is one of the watched
 * calls, so passing it with SCM_RIGHTS would wait for itself. cagerun
 * takes it with pidfd_getfd (Linux 5.6). */
static int take_fd(pid_t pid, int sock)
{
	int num;
	if (read(sock, &num, sizeof num) != (ssize_t)sizeof num)
		return -1;
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0)
		return -1;
	int fd = (int)syscall(SYS_pidfd_getfd, pfd, num, 0);
	int e = errno;
	close(pfd);
	if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
		close(fd);
		return -1;
	}
	errno = e;
	return fd;
}

static _Noreturn void child_main(char *const *argv, char *const *envp, bool take_terminal,
				 const struct run_nofile *nofile, int sock, int err_fd)
{
	char err[512];
	struct lnx_child lc = { .err_fd = err_fd };
	lnx_reset_signals();
	if (setpgid(0, 0) != 0)
		lnx_child_fail(&lc, 125, "cannot give the command its own process group");
	if (take_terminal)
		run_take_terminal();
	/* Needed to install a filter without privileges; it only keeps
	 * set-id programs from gaining privileges. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		lnx_child_fail(&lc, 125, "cannot set no_new_privs");
	int fd = lnx_observe_install(true, err, sizeof err);
	if (fd < 0)
		lnx_child_fail(&lc, 125, err);
	char ok;
	if (write(sock, &fd, sizeof fd) != (ssize_t)sizeof fd || read(sock, &ok, 1) != 1)
		lnx_child_fail(&lc, 125, "cannot hand the observer's listener to cagerun");
	close(fd);
	close(sock);
	if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0)
		lnx_child_fail(&lc, 125, "cannot close inherited descriptors");
	if (!run_nofile_restore(nofile))
		lnx_child_fail(&lc, 125, "cannot restore the open-files limit");
	environ = (char **)envp;
	execvp(argv[0], argv);
	int e = errno;
	snprintf(err, sizeof err, "%s: %s", argv[0], strerror(e));
	lnx_child_fail(&lc, e == ENOENT ? 127 : 126, err);
}

bool lnx_monitor_spawn(char *const *argv, char *const *envp, bool take_terminal,
		       const struct run_nofile *nofile, struct lnx_monitor_child *c, char *err,
		       size_t errlen)
{
	int sock[2], pipefd[2];
	c->pid = -1;
	c->listen_fd = c->err_fd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) != 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return false;
	}
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(sock[0]);
		close(sock[1]);
		return false;
	}
	/* Orphans of the command's tree come to us, so they can be reaped
	 * and, at the end, ended. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(sock[0]);
		close(pipefd[0]);
		child_main(argv, envp, take_terminal, nofile, sock[1], pipefd[1]);
	}
	close(sock[1]);
	close(pipefd[1]);
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(sock[0]);
		close(pipefd[0]);
		return false;
	}
	c->pid = pid;
	c->err_fd = pipefd[0];
	c->listen_fd = take_fd(pid, sock[0]);
	if (c->listen_fd >= 0 && write(sock[0], "", 1) != 1) {
		close(c->listen_fd);
		c->listen_fd = -1;
	}
	close(sock[0]);
	if (c->listen_fd < 0) {
		/* the child failed before handing it over: its reason follows */
		lnx_monitor_wait_exec(c, err, errlen);
		return false;
	}
	return true;
}

int lnx_monitor_wait_exec(struct lnx_monitor_child *c, char *err, size_t errlen)
{
	char buf[600];
	ssize_t n;
	do
		n = read(c->err_fd, buf, sizeof buf - 1);
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	snprintf(err, errlen, "%s", buf + 1);
	return (unsigned char)buf[0];
}

/* Sends SIGKILL to every child of ours listed in /proc; true if any. */
static bool kill_children(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return false;
	bool any = false;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[300];
		snprintf(p, sizeof p, "/proc/self/task/%s/children", e->d_name);
		FILE *f = fopen(p, "re");
		if (!f)
			continue;
		long pid;
		while (fscanf(f, "%ld", &pid) == 1) {
			kill((pid_t)pid, SIGKILL);
			any = true;
		}
		fclose(f);
	}
	closedir(d);
	return any;
}

void lnx_monitor_reap_leftovers(pid_t pgid)
{
	if (pgid > 0)
		kill(-pgid, SIGKILL);
	/* Each round kills our children; their own children then come to us.
	 * 200 rounds of at most 5 ms: a tree deeper than that is left. */
	for (int round = 0; round < 200; round++) {
		bool any = kill_children();
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!any)
			break;
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}
