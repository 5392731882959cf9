/*
 * lnx_sandbox.c - the parent's side of starting the sandbox (see
 * lnx_sandbox.h): clone init into its namespaces, write its user and group
 * maps, receive its listeners, and learn whether the command started.
 */
#include "lnx_sandbox.h"

#include "lch_ahead.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL /* Linux 5.7 */
#endif

/* Appends init's listeners to sb's. */
static bool recv_listeners(int sock, struct lnx_sandbox *sb)
{
	/* One message: the ports, then as many descriptors. */
	size_t room = LNX_MAX_LISTENERS - sb->nfds;
	uint16_t ports[LNX_MAX_LISTENERS];
	union {
		char buf[CMSG_SPACE(sizeof(int) * LNX_MAX_LISTENERS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { ports, room * sizeof(uint16_t) };
	struct msghdr msg = { 0 };
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = CMSG_SPACE(sizeof(int) * room);
	ssize_t n;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0 || (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC)))
		return false;
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return false;
	size_t nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	assert(nfds <= room);
	memcpy(sb->fds + sb->nfds, CMSG_DATA(c), nfds * sizeof(int));
	sb->nfds += nfds;
	if ((size_t)n != nfds * sizeof(uint16_t))
		return false;
	memcpy(sb->ports + sb->nfds - nfds, ports, nfds * sizeof(uint16_t));
	return nfds > 0;
}

pid_t lnx_sandbox_clone(unsigned long flags, const struct lnx_cgroup_joins *cj, char *err,
			size_t errlen)
{
	assert((flags & CSIGNAL) == SIGCHLD);
	if (cj->has_into) {
		struct clone_args ca;
		memset(&ca, 0, sizeof ca);
		ca.flags = (flags & ~(unsigned long)CSIGNAL) | CLONE_INTO_CGROUP;
		ca.exit_signal = SIGCHLD;
		ca.cgroup = (uint64_t)cj->into;
		pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
		if (pid >= 0)
			return pid; /* born in the cgroup: nothing to move */
		/* Refused for whatever reason: the way that works everywhere,
		 * which names its own failure if it has one. */
	}
	pid_t pid = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
	if (pid < 0) {
		snprintf(err, errlen,
			 "cannot create the sandbox's namespaces: %s%s", strerror(errno),
			 errno == EPERM || errno == ENOSPC || errno == EUSERS
				 ? " (user namespaces are restricted here: see docs/cagerun.md, "
				   "\"Kernel requirements\", for the sysctl or AppArmor setting)"
				 : "");
		return -1;
	}
	if (pid == 0)
		return 0;
	if (!lnx_sandbox_join_by_pid(pid, cj, err, errlen))
		return -1;
	return pid;
}

bool lnx_sandbox_join_by_pid(pid_t pid, const struct lnx_cgroup_joins *cj, char *err,
			     size_t errlen)
{
	char pidtext[24];
	int plen = snprintf(pidtext, sizeof pidtext, "%d\n", (int)pid);
	for (int i = 0; i < cj->nby_pid; i++)
		if (write(cj->by_pid[i], pidtext, (size_t)plen) != plen) {
			snprintf(err, errlen, "cannot move the sandbox into its cgroup: %s",
				 strerror(errno));
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			return false;
		}
	return true;
}

/* What init starts with, whichever process clones it. */
struct init_start {
	struct lnx_child c;
	int parent_ends[3]; /* the caller's ends of the pipes, closed in init */
};

static int init_entry(void *arg)
{
	struct init_start *st = arg;
	for (int i = 0; i < 3; i++)
		close(st->parent_ends[i]);
	lnx_init_main(&st->c);
}

/* Init, cloned into the namespaces the spare made ahead (lch_ahead.h),
 * with its ID maps already written; 0 when there are none to use (the
 * caller clones its own), -1 when the run must not start. */
static pid_t clone_ahead(const struct lnx_spec *s, unsigned long flags, struct init_start *st,
			 struct lnx_sandbox *sb, char *err, size_t errlen)
{
	/* Only the network namespace is worth the helper's round trip: a
	 * user namespace alone costs about what asking for it does. */
	if (!(flags & CLONE_NEWNET) || !lch_ahead_fits(s->ahead, true))
		return 0;
	/* The proxy's listener, when its port is the one made (a forwarded
	 * port may take it: then init makes both, and the one made must not
	 * hold the port). */
	int l = lch_ahead_take_listener(s->ahead);
	if (l >= 0 && s->proxy_port != LCH_AHEAD_PROXY_PORT) {
		close(l);
		l = -1;
	}
	st->c.proxy_made = l >= 0;
	const struct lnx_cgroup_joins *cj = &s->cgroups;
	bool born_in;
	pid_t pid = lch_ahead_clone(s->ahead, flags, cj->has_into ? cj->into : -1, init_entry, st,
				    &born_in, err, errlen);
	if (pid > 0 && !born_in && !lnx_sandbox_join_by_pid(pid, cj, err, errlen))
		pid = -1;
	if (pid <= 0) {
		if (l >= 0)
			close(l);
		st->c.proxy_made = false;
		return pid;
	}
	if (l >= 0) {
		sb->fds[0] = l;
		sb->ports[0] = LCH_AHEAD_PROXY_PORT;
		sb->nfds = 1;
	}
	return pid;
}

/* The scheduler puts a new process on its parent's CPU, where it waits
 * until the parent sleeps, however idle the other CPUs are: init would
 * build its mounts only after cagerun had confirmed the kept plan and
 * started the proxy, not beside them (a trace showed init's first
 * instruction 0.3 ms after its clone, once cagerun blocked). So init is
 * moved to the run's other CPUs, and takes back the whole set before it
 * starts anything (lnx_init_main). Only a hint: a failure leaves init
 * where it is. */
static void start_beside(pid_t pid, const cpu_set_t *cpus)
{
	int here = sched_getcpu();
	if (here < 0 || here >= CPU_SETSIZE || CPU_COUNT(cpus) < 2 || !CPU_ISSET(here, cpus))
		return;
	cpu_set_t others = *cpus;
	CPU_CLR(here, &others);
	(void)sched_setaffinity(pid, sizeof others, &others);
}

bool lnx_sandbox_start(const struct lnx_spec *s, struct lnx_sandbox *sb, char *err,
		       size_t errlen)
{
	memset(sb, 0, sizeof *sb);
	sb->init = -1;
	sb->err_fd = -1;
	sb->go_fd = -1;
	sb->lsock = -1;
	int sync[2] = { -1, -1 }, errp[2] = { -1, -1 }, sock[2] = { -1, -1 };
	bool ok = false;
	if (pipe2(sync, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) != 0) {
		snprintf(err, errlen, "cannot create pipes: %s", strerror(errno));
		goto out;
	}
	unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | SIGCHLD;
	if (s->isolate_net)
		flags |= CLONE_NEWNET;
	struct init_start st = { .c = { .s = s, .sync_fd = sync[0], .fd_sock = sock[1],
					.err_fd = errp[1], .notify_sock = -1, .ruleset_fd = -1 },
				 .parent_ends = { sync[1], errp[0], sock[0] } };
	if (sched_getaffinity(0, sizeof st.c.cpus, &st.c.cpus) != 0)
		CPU_ZERO(&st.c.cpus);
	pid_t pid = clone_ahead(s, flags, &st, sb, err, errlen);
	bool mapped = sb->ahead = pid > 0;
	if (pid == 0)
		pid = lnx_sandbox_clone(flags, &s->cgroups, err, errlen);
	if (pid < 0)
		goto out;
	if (pid == 0)
		init_entry(&st);
	sb->init = pid;
	start_beside(pid, &st.c.cpus);
	close(sync[0]);
	sync[0] = -1;
	close(errp[1]);
	errp[1] = -1;
	close(sock[1]);
	sock[1] = -1;
	sb->err_fd = errp[0];
	errp[0] = -1;
	if (!mapped && !lch_idmap_write(pid, err, errlen))
		goto out;
	if (write(sync[1], "g", 1) != 1) {
		snprintf(err, errlen, "cannot start the sandbox: %s", strerror(errno));
		goto out;
	}
	/* init sends listeners unless it has none to make */
	if (s->isolate_net && (!st.c.proxy_made || s->plan->nports > 0)) {
		sb->lsock = sock[0];
		sock[0] = -1;
	}
	sb->go_fd = sync[1];
	sync[1] = -1;
	sb->join_wait = s->cgroups.nlater > 0;
	ok = true;
out:
	for (int i = 0; i < 2; i++) {
		if (sync[i] >= 0)
			close(sync[i]);
		if (errp[i] >= 0)
			close(errp[i]);
		if (sock[i] >= 0)
			close(sock[i]);
	}
	if (!ok)
		lnx_sandbox_kill(sb);
	return ok;
}

bool lnx_sandbox_listeners(struct lnx_sandbox *sb, char *err, size_t errlen)
{
	if (sb->lsock < 0 && sb->nfds > 0)
		return true; /* the proxy's was made ahead, and there are no others */
	bool ok = recv_listeners(sb->lsock, sb);
	close(sb->lsock);
	sb->lsock = -1;
	if (ok)
		return true;
	/* init failed before handing them over: its reason is on err_fd. */
	char why[512] = "";
	ssize_t n = read(sb->err_fd, why, sizeof why - 1);
	if (n > 1) {
		why[n] = '\0';
		snprintf(err, errlen, "%s", why + 1);
	} else {
		snprintf(err, errlen, "the sandbox's listeners did not arrive");
	}
	return false;
}

bool lnx_sandbox_cgroups_made(struct lnx_sandbox *sb, char *err, size_t errlen)
{
	if (!sb->join_wait)
		return true;
	bool ok = write(sb->go_fd, "c", 1) == 1;
	if (!ok)
		snprintf(err, errlen, "cannot let the sandbox join its cgroups: %s", strerror(errno));
	sb->join_wait = false;
	return ok;
}

bool lnx_sandbox_release(struct lnx_sandbox *sb, char *err, size_t errlen)
{
	/* init would take the 'r' for the 'c' it waits for, and fail. */
	assert(!sb->join_wait);
	bool ok = write(sb->go_fd, "r", 1) == 1;
	if (!ok)
		snprintf(err, errlen, "cannot start the command: %s", strerror(errno));
	close(sb->go_fd);
	sb->go_fd = -1;
	return ok;
}

int lnx_sandbox_wait_exec(struct lnx_sandbox *sb, char *err, size_t errlen)
{
	char buf[1024];
	size_t got = 0;
	for (;;) {
		ssize_t n = read(sb->err_fd, buf + got, sizeof buf - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof buf - 1)
			break;
	}
	close(sb->err_fd);
	sb->err_fd = -1;
	if (got == 0)
		return 0;
	buf[got] = '\0';
	snprintf(err, errlen, "%s", buf + 1);
	int code = (unsigned char)buf[0];
	return code == 126 || code == 127 ? code : 125;
}

void lnx_sandbox_kill(struct lnx_sandbox *sb)
{
	for (size_t i = 0; i < sb->nfds; i++)
		if (sb->fds[i] >= 0)
			close(sb->fds[i]);
	sb->nfds = 0;
	if (sb->err_fd >= 0)
		close(sb->err_fd);
	sb->err_fd = -1;
	if (sb->go_fd >= 0)
		close(sb->go_fd);
	sb->go_fd = -1;
	if (sb->lsock >= 0)
		close(sb->lsock);
	sb->lsock = -1;
	if (sb->init > 0) {
		kill(sb->init, SIGKILL);
		while (waitpid(sb->init, NULL, 0) < 0 && errno == EINTR)
			;
	}
	sb->init = -1;
}
