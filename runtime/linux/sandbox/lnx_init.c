/*
 * lnx_init.c - process 1 of the sandbox's PID namespace. It builds the
 * mount view and the loopback listeners while it still holds capabilities
 * in its user namespace, starts the command, then forwards signals and
 * reaps; when the plan has guards, it gives up its capabilities before the
 * command starts and serves the create guard as well (lnx_super.c). When
 * the command exits it ends every process left in the namespace (daemons,
 * orphans) before exiting itself with the command's status, so nothing
 * outlives a run.
 */
#include "lnx_sandbox.h"

#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lnx_limits.h"
#include "lnx_mount.h"
#include "lnx_super.h"

_Noreturn void lnx_child_fail(struct lnx_child *c, int code, const char *msg)
{
	char buf[1024];
	buf[0] = (char)code;
	int n = snprintf(buf + 1, sizeof buf - 1, "%s", msg);
	size_t len = 1 + (n < 0 ? 0 : (size_t)n >= sizeof buf - 1 ? sizeof buf - 2 : (size_t)n);
	if (write(c->err_fd, buf, len) < 0) {
		/* The parent is gone: nothing left to tell. */
	}
	_exit(code);
}

static bool loopback_up(char *err, size_t errlen)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	bool ok = s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
	if (ok) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		ok = ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
	}
	if (!ok)
		snprintf(err, errlen, "cannot bring up the sandbox's loopback: %s", strerror(errno));
	if (s >= 0)
		close(s);
	return ok;
}

static int listen_loopback(uint16_t port, char *err, size_t errlen)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	int one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 4096) != 0) {
		snprintf(err, errlen, "cannot listen on 127.0.0.1:%u inside the sandbox: %s",
			 (unsigned)port, strerror(errno));
		close(s);
		return -1;
	}
	return s;
}

/* The proxy's listener first (unless the parent has it already), then
 * one per forwarded port, sent to the parent in one message; none when
 * there is nothing to send. */
static void make_listeners(struct lnx_child *c)
{
	char err[512];
	const struct lnx_spec *s = c->s;
	if (!c->proxy_made && !loopback_up(err, sizeof err))
		lnx_child_fail(c, 125, err);
	int fds[LNX_MAX_LISTENERS];
	uint16_t ports[LNX_MAX_LISTENERS];
	size_t n = 0;
	if (!c->proxy_made) {
		ports[n] = s->proxy_port;
		if ((fds[n++] = listen_loopback(s->proxy_port, err, sizeof err)) < 0)
			lnx_child_fail(c, 125, err);
	}
	for (size_t i = 0; i < s->plan->nports && n < LNX_MAX_LISTENERS; i++) {
		ports[n] = s->plan->ports[i].port;
		fds[n] = listen_loopback(ports[n], err, sizeof err);
		if (fds[n++] < 0)
			lnx_child_fail(c, 125, err);
	}
	if (n == 0)
		return;
	union {
		char buf[CMSG_SPACE(sizeof(int) * LNX_MAX_LISTENERS)];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct iovec iov = { ports, n * sizeof(uint16_t) };
	struct msghdr msg = { 0 };
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	if (sendmsg(c->fd_sock, &msg, MSG_NOSIGNAL) < 0) {
		snprintf(err, sizeof err, "cannot hand the listeners to the proxy: %s",
			 strerror(errno));
		lnx_child_fail(c, 125, err);
	}
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
}

void lnx_block_forwarded(sigset_t *ss)
{
	sigemptyset(ss);
	int sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaddset(ss, sigs[i]);
	sigprocmask(SIG_BLOCK, ss, NULL);
}

/* At the command's end: a private tmp with no room left is the likely
 * cause of its failure, and the command may not have said so. */
static void report_tmp_full(const struct lnx_spec *s)
{
	struct statfs st;
	if (!s->tmp_bytes || s->quiet || statfs(s->tmp_dir, &st) != 0)
		return;
	if (st.f_bavail == 0 || (st.f_files > 0 && st.f_ffree == 0))
		fprintf(stderr, "cagerun: the private tmp was full at the end (limit tmp %s): writes "
				"there failed with ENOSPC\n", s->tmp_text);
}

/* The command is done: nothing it started may go on running. */
static _Noreturn void end_run(const struct lnx_spec *s, int code, struct lnx_super *guard)
{
	kill(-1, SIGKILL);
	if (guard)
		lnx_super_report(s, guard);
	report_tmp_full(s);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	/* Nothing of the sandbox is left but this process: answer, if this
	 * run's answer may come from here, then say so. */
	if (s->word_fd >= 0) {
		unsigned char w[2] = { (unsigned char)code,
				       s->answer && run_status_send(s->answer, code) };
		(void)write(s->word_fd, w, 2);
	}
	_exit(code);
}

/* Forward signals to the command's process group, reap everything. */
static _Noreturn void supervise(const struct lnx_spec *s, pid_t cmd)
{
	sigset_t ss;
	lnx_block_forwarded(&ss);
	int code = -1;
	while (code < 0) {
		int sig = sigwaitinfo(&ss, NULL);
		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			if (kill(-cmd, sig) != 0)
				kill(cmd, sig);
			continue;
		}
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			if (p == cmd)
				code = run_wait_code(st);
		}
	}
	end_run(s, code, NULL);
}

_Noreturn void lnx_init_main(struct lnx_child *c)
{
	char err[512];
	/* Die with cagerun: a sandbox must never outlive its supervisor. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	char go;
	if (read(c->sync_fd, &go, 1) != 1 || go != 'g')
		_exit(125);
	/* Every CPU the run may use again (the parent started init beside
	 * itself): what init starts inherits it. */
	if (CPU_COUNT(&c->cpus) > 0)
		(void)sched_setaffinity(0, sizeof c->cpus, &c->cpus);
	const char *rw[2];
	size_t nrw = 0;
	if (c->s->tmp_dir)
		rw[nrw++] = c->s->tmp_dir;
	if (c->s->home_dir)
		rw[nrw++] = c->s->home_dir;
	const struct lnx_cgroup_joins *cj = &c->s->cgroups;
	for (int i = 0; i < cj->nby_pid; i++)
		close(cj->by_pid[i]); /* moved by the parent already */
	if (cj->has_into)
		close(cj->into); /* born there */
	if (!lnx_mount_prepare(err, sizeof err) ||
	    (c->s->tmp_bytes && !lnx_mount_tmpfs(c->s->tmp_dir, c->s->tmp_bytes, err, sizeof err)) ||
	    !lnx_mount_apply(c->s->plan, c->s->empty_file, err, sizeof err) ||
	    (c->s->keep_dir && !lnx_mount_keep(c->s->keep_dir, err, sizeof err)) ||
	    !lnx_mount_readonly_rest(c->s->plan, rw, nrw, err, sizeof err))
		lnx_child_fail(c, 125, err);
	if (c->s->isolate_net)
		make_listeners(c);
	close(c->fd_sock);
	c->fd_sock = -1;
	/* Into the v1 cgroups cagerun made meanwhile before anything else
	 * starts, and the door closed behind: nothing inside may move again
	 * (lnx_limits.h). */
	if (cj->nlater > 0 && (read(c->sync_fd, &go, 1) != 1 || go != 'c'))
		_exit(125);
	for (int i = 0; i < cj->nlater; i++)
		if (!lnx_limits_join_later(cj->later[i], cj->child, err, sizeof err))
			lnx_child_fail(c, 125, err);
	/* With guards, init locks itself in now, while cagerun readies the
	 * proxy: what it does for the command from then on is bounded like
	 * the command. */
	struct lnx_super guard;
	bool guarded = c->s->plan->nguards > 0;
	if (guarded)
		lnx_super_prepare(c, &guard);
	/* The command starts only when cagerun says everything outside is
	 * ready; if cagerun fails first, it kills us before this returns. */
	if (read(c->sync_fd, &go, 1) != 1 || go != 'r')
		_exit(125);
	close(c->sync_fd);
	if (guarded)
		end_run(c->s, lnx_super_serve(c, &guard), &guard);
	/* The command only needs memory until its exec. */
	pid_t cmd = lnx_exec_spawn(c);
	if (cmd < 0) {
		snprintf(err, sizeof err, "cannot fork the command: %s", strerror(errno));
		lnx_child_fail(c, 125, err);
	}
	close(c->err_fd);
	/* Others in the sandbox (same user) must not inspect or trace init,
	 * which still holds capabilities in the sandbox's user namespace. */
	prctl(PR_SET_DUMPABLE, 0);
	supervise(c->s, cmd);
}
