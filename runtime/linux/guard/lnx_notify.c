/*
 * lnx_notify.c - the seccomp user-notification core (see lnx_notify.h):
 * the notifying filter, the listener, the dispatch loop, and reading the
 * tracee's memory, descriptors and status.
 */
#include "lnx_notify.h"

#include "lnx_landlock.h"
#include "lnx_tasks.h"
#include "lplan.h"
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__x86_64__)
#define LNX_NOTIFY_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define LNX_NOTIFY_ARCH AUDIT_ARCH_AARCH64
#else
#error "lnx_notify: add this architecture's AUDIT_ARCH value"
#endif

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif

/* Linux 6.6's SECCOMP_IOCTL_NOTIF_SET_FLAGS and its one flag, which
 * older headers lack. */
#define LNX_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#define LNX_NOTIF_SYNC_WAKE_UP 1UL
#define LNX_NOTIFY_MAX_HANDLERS 32
#define LNX_NOTIFY_MAX_OBSERVERS 8

unsigned short lnx_notify_filter(const struct lnx_notify_rule *rules, size_t n,
				 struct sock_filter *f)
{
	if (n > LNX_NOTIFY_MAX_RULES)
		return 0;
	unsigned short k = 0;
	/* Another ABI meets none of these numbers: the main filter kills
	 * it too, this one must not let it through either. */
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, LNX_NOTIFY_ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	/* x32 calls come with this architecture's AUDIT_ARCH and their own
	 * numbers (bit 30 set): they would meet no rule and pass unseen, so
	 * they are killed, as the main filter does under enforce. */
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
#endif
	for (size_t i = 0; i < n; i++) {
		const struct lnx_notify_rule *r = &rules[i];
		if (r->arg < 0) {
			f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							      (uint32_t)r->nr, 0, 1);
			f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
			continue;
		}
		/* The kernel reads flags as an int: the low word only
		 * (little-endian on every architecture above). */
		bool unless = (r->arg & LNX_NOTIFY_UNLESS) != 0;
		unsigned arg = (unsigned)(r->arg & ~LNX_NOTIFY_UNLESS);
		if (arg > 5)
			return 0; /* seccomp_data has six arguments */
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0,
						      4);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      offsetof(struct seccomp_data, args) + 8 * arg);
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, r->mask, unless, !unless);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return k;
}

int lnx_notify_install(const struct sock_filter *insns, unsigned short len, char *err,
		       size_t errlen)
{
	struct sock_fprog prog = { .len = len, .filter = (struct sock_filter *)insns };
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			  SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
			  &prog);
	if (fd < 0 && errno == EINVAL) /* before Linux 5.19 */
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			     &prog);
	if (fd < 0) {
		snprintf(err, errlen, "seccomp: cannot install the notifying filter: %s",
			 strerror(errno));
		return -1;
	}
	return (int)fd;
}

/* One byte of data and room for one descriptor. */
union fd_ctrl {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

static void fd_msg(struct msghdr *msg, struct iovec *iov, char *byte, union fd_ctrl *u)
{
	memset(u, 0, sizeof *u);
	memset(msg, 0, sizeof *msg);
	iov->iov_base = byte;
	iov->iov_len = 1;
	msg->msg_iov = iov;
	msg->msg_iovlen = 1;
	msg->msg_control = u->buf;
	msg->msg_controllen = sizeof u->buf;
}

bool lnx_notify_send_fd(int sock, int fd)
{
	return run_send_fd(sock, "L", 1, fd);
}

int lnx_notify_recv_fd(int sock)
{
	union fd_ctrl u;
	char byte;
	struct iovec iov;
	struct msghdr msg;
	fd_msg(&msg, &iov, &byte, &u);
	ssize_t n;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	struct cmsghdr *cm = n == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(cm), sizeof fd);
	return fd;
}

struct lnx_notify_slot {
	int nr;
	lnx_notify_handler fn;
	void *ctx;
};

struct lnx_notify {
	int listener;
	struct seccomp_notif *req; /* sized as the kernel says */
	size_t req_size;
	struct lnx_notify_slot handlers[LNX_NOTIFY_MAX_HANDLERS];
	size_t nhandlers;
	struct {
		lnx_notify_observer fn;
		void *ctx;
	} observers[LNX_NOTIFY_MAX_OBSERVERS];
	size_t nobservers;
	int status_sock; /* lnx_notify_status_reader's socket, or -1 */
	struct lnx_tasks *tasks; /* tgid and umask kept between calls */
};

struct lnx_notify *lnx_notify_new(int listener)
{
	struct seccomp_notif_sizes sz;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) != 0) {
		close(listener);
		return NULL;
	}
	struct lnx_notify *nt = calloc(1, sizeof *nt);
	size_t rs = sz.seccomp_notif > sizeof(struct seccomp_notif) ? sz.seccomp_notif
								     : sizeof(struct seccomp_notif);
	if (nt) {
		nt->req = calloc(1, rs);
		nt->tasks = lnx_tasks_new();
	}
	if (!nt || !nt->req || !nt->tasks) {
		if (nt) {
			free(nt->req);
			lnx_tasks_free(nt->tasks);
			free(nt);
		}
		close(listener);
		return NULL;
	}
	nt->req_size = rs;
	nt->listener = listener;
	/* Each notification is a hand-off: the tracee sleeps until we answer
	 * and we sleep until it calls again. Linux 6.6 can do that hand-off
	 * on the waker's CPU instead of waking the other side wherever the
	 * scheduler puts it, which on a busy machine is most of a watched
	 * call's latency. Only a scheduling hint: older kernels refuse it
	 * (EINVAL) and work as before. */
	(void)ioctl(listener, LNX_NOTIF_SET_FLAGS, LNX_NOTIF_SYNC_WAKE_UP);
	nt->status_sock = -1;
	return nt;
}

void lnx_notify_free(struct lnx_notify *nt)
{
	if (!nt)
		return;
	close(nt->listener);
	if (nt->status_sock >= 0)
		close(nt->status_sock);
	lnx_tasks_free(nt->tasks);
	free(nt->req);
	free(nt);
}

int lnx_notify_fd(const struct lnx_notify *nt)
{
	return nt->listener;
}

bool lnx_notify_on(struct lnx_notify *nt, int nr, lnx_notify_handler fn, void *ctx)
{
	for (size_t i = 0; i < nt->nhandlers; i++)
		if (nt->handlers[i].nr == nr) {
			nt->handlers[i].fn = fn;
			nt->handlers[i].ctx = ctx;
			return true;
		}
	if (nt->nhandlers == LNX_NOTIFY_MAX_HANDLERS)
		return false;
	nt->handlers[nt->nhandlers++] = (struct lnx_notify_slot){ nr, fn, ctx };
	return true;
}

bool lnx_notify_observe(struct lnx_notify *nt, lnx_notify_observer fn, void *ctx)
{
	if (nt->nobservers == LNX_NOTIFY_MAX_OBSERVERS)
		return false;
	nt->observers[nt->nobservers].fn = fn;
	nt->observers[nt->nobservers].ctx = ctx;
	nt->nobservers++;
	return true;
}

static void send_resp(int listener, uint64_t id, int err, int64_t val, uint32_t flags)
{
	struct seccomp_notif_resp r;
	memset(&r, 0, sizeof r);
	r.id = id;
	r.error = err ? -err : 0;
	r.val = err ? 0 : val;
	r.flags = flags;
	/* ENOENT: the tracee went away meanwhile; nothing to answer. */
	while (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r) != 0 && errno == EINTR)
		;
}

int lnx_notify_handle(struct lnx_notify *nt)
{
	memset(nt->req, 0, nt->req_size);
	if (ioctl(nt->listener, SECCOMP_IOCTL_NOTIF_RECV, nt->req) != 0)
		return -errno;
	struct lnx_notify_call c;
	memset(&c, 0, sizeof c);
	c.nt = nt;
	c.req = nt->req;
	c.tid = (pid_t)nt->req->pid;
	lnx_tasks_seen(nt->tasks, c.tid);
	for (size_t i = 0; i < nt->nobservers; i++)
		nt->observers[i].fn(nt->observers[i].ctx, &c);
	const struct lnx_notify_slot *h = NULL;
	for (size_t i = 0; i < nt->nhandlers && !h; i++)
		if (nt->handlers[i].nr == nt->req->data.nr)
			h = &nt->handlers[i];
	if (!h)
		lnx_notify_reply_continue(&c);
	else
		h->fn(h->ctx, &c);
	if (!c.answered && !c.deferred)
		lnx_notify_reply_errno(&c, ENOSYS);
	return 0;
}

void lnx_notify_reply_errno(struct lnx_notify_call *c, int err)
{
	send_resp(c->nt->listener, c->req->id, err ? err : EIO, 0, 0);
	c->answered = true;
}

void lnx_notify_reply_value(struct lnx_notify_call *c, int64_t val)
{
	send_resp(c->nt->listener, c->req->id, 0, val, 0);
	c->answered = true;
}

void lnx_notify_reply_continue(struct lnx_notify_call *c)
{
	send_resp(c->nt->listener, c->req->id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
	c->answered = true;
}

static void addfd_send(int listener, uint64_t id, int fd, bool cloexec)
{
	struct seccomp_notif_addfd a;
	memset(&a, 0, sizeof a);
	a.id = id;
	a.flags = SECCOMP_ADDFD_FLAG_SEND;
	a.srcfd = (uint32_t)fd;
	a.newfd_flags = cloexec ? O_CLOEXEC : 0;
	int rc;
	while ((rc = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a)) < 0 && errno == EINTR)
		;
	/* On success the call is answered with the new number. On failure
	 * (EMFILE in the tracee, say) it is not: answer the error. */
	if (rc < 0 && errno != ENOENT)
		send_resp(listener, id, errno, 0, 0);
}

void lnx_notify_reply_fd(struct lnx_notify_call *c, int fd, bool cloexec)
{
	addfd_send(c->nt->listener, c->req->id, fd, cloexec);
	c->answered = true;
}

void lnx_notify_defer(struct lnx_notify_call *c, struct lnx_notify_later *l)
{
	l->listener = c->nt->listener;
	l->id = c->req->id;
	c->deferred = true;
}

void lnx_notify_answer(const struct lnx_notify_later *l, int err, int fd, bool cloexec,
		       int64_t val)
{
	if (err)
		send_resp(l->listener, l->id, err, 0, 0);
	else if (fd >= 0)
		addfd_send(l->listener, l->id, fd, cloexec);
	else
		send_resp(l->listener, l->id, 0, val, 0);
}

bool lnx_notify_later_valid(const struct lnx_notify_later *l)
{
	uint64_t id = l->id;
	return ioctl(l->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

bool lnx_notify_valid(const struct lnx_notify_call *c)
{
	uint64_t id = c->req->id;
	return ioctl(c->nt->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* Reads from the tracee without crossing a page it may not have. */
static ssize_t read_mem(pid_t tid, uint64_t addr, char *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (n >= 0 || (errno != ENOSYS && errno != EPERM))
		return n;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, buf, len, (off_t)addr);
	int e = errno;
	close(fd);
	errno = e;
	return n;
}

int lnx_notify_read_string(struct lnx_notify_call *c, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	while (got < size) {
		uint64_t at = addr + got;
		size_t chunk = (size_t)page - (size_t)(at % (uint64_t)page);
		if (chunk > size - got)
			chunk = size - got;
		ssize_t n = read_mem(c->tid, at, buf + got, chunk);
		if (n <= 0)
			return lnx_notify_valid(c) ? -EFAULT : -ESRCH;
		char *nul = memchr(buf + got, '\0', (size_t)n);
		got += (size_t)n;
		if (nul)
			return lnx_notify_valid(c) ? 0 : -ESRCH;
	}
	return lnx_notify_valid(c) ? -ENAMETOOLONG : -ESRCH;
}

/* The text of /proc/TID/status into buf (NUL-terminated): its length, or
 * -errno. */
static ssize_t status_text(pid_t tid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int e = errno;
	close(fd);
	if (n <= 0)
		return n < 0 ? -e : -EIO;
	buf[n] = '\0';
	return n;
}

/* The reader's request is a pid_t; its answer an int32 (0 or -errno)
 * followed by the text. SOCK_SEQPACKET keeps each one whole. */
enum { STATUS_MAX = 4096 };

static ssize_t status_ask(int sock, pid_t tid, char *buf, size_t size)
{
	char msg[sizeof(int32_t) + STATUS_MAX];
	ssize_t n;
	while ((n = send(sock, &tid, sizeof tid, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof tid)
		return -EIO;
	while ((n = recv(sock, msg, sizeof msg, 0)) < 0 && errno == EINTR)
		;
	int32_t rc;
	if (n < (ssize_t)sizeof rc)
		return -EIO; /* the reader is gone: fail closed */
	memcpy(&rc, msg, sizeof rc);
	if (rc < 0)
		return rc;
	size_t len = (size_t)n - sizeof rc;
	if (len == 0 || len >= size)
		return -EIO;
	memcpy(buf, msg + sizeof rc, len);
	buf[len] = '\0';
	return (ssize_t)len;
}

static _Noreturn void status_serve(int sock)
{
	for (;;) {
		pid_t tid;
		ssize_t n = recv(sock, &tid, sizeof tid, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof tid)
			_exit(0); /* the supervisor closed its end */
		char msg[sizeof(int32_t) + STATUS_MAX];
		int32_t rc = 0;
		size_t len = 0;
		if (tid <= 0) {
			rc = -EINVAL;
		} else {
			ssize_t t = status_text(tid, msg + sizeof rc, STATUS_MAX);
			if (t < 0)
				rc = (int32_t)t;
			else
				len = (size_t)t;
		}
		memcpy(msg, &rc, sizeof rc);
		if (send(sock, msg, sizeof rc + len, MSG_NOSIGNAL) < 0 && errno != EINTR)
			_exit(0);
	}
}

int lnx_notify_status_reader(int abi, pid_t *reader, char *err, size_t errlen)
{
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) != 0) {
		snprintf(err, errlen, "cannot start the status reader: %s", strerror(errno));
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot start the status reader: %s", strerror(errno));
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	if (pid == 0) {
		/* Only its socket, as descriptor 3; nothing but /proc, read;
		 * gone with the supervisor. A failure here closes the socket,
		 * and the supervisor fails closed. */
		if (dup2(sp[1], 3) != 3 || syscall(SYS_close_range, 4, ~0U, 0) != 0)
			_exit(125);
		struct lnx_landlock ll = { .fd = -1 };
		char e[256];
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent ||
		    prctl(PR_SET_DUMPABLE, 0) != 0 || !lnx_landlock_open(&ll, abi, e, sizeof e) ||
		    !lnx_landlock_grant(&ll, "/proc", LP_READ_FILE | LP_READ_DIR, true, e, sizeof e) ||
		    !lnx_landlock_enforce(&ll, e, sizeof e))
			_exit(125);
		status_serve(3);
	}
	close(sp[1]);
	*reader = pid;
	return sp[0];
}

void lnx_notify_use_status_reader(struct lnx_notify *nt, int sock)
{
	if (nt->status_sock >= 0)
		close(nt->status_sock);
	nt->status_sock = sock;
}

/* The status, read afresh; pidfd (the caller's, or -1) was opened
 * before it and is kept with its answers once the request proves live. */
static int status_read(struct lnx_notify_call *c, int pidfd)
{
	char buf[STATUS_MAX];
	ssize_t n = c->nt->status_sock >= 0 ? status_ask(c->nt->status_sock, c->tid, buf, sizeof buf)
					    : status_text(c->tid, buf, sizeof buf);
	if (n < 0)
		return (int)n;
	const char *t = strstr(buf, "\nTgid:");
	const char *u = strstr(buf, "\nUmask:");
	if (!t || !u)
		return -EIO;
	c->tgid = (pid_t)strtol(t + 6, NULL, 10);
	c->umask = (mode_t)strtoul(u + 7, NULL, 8) & 0777;
	if (!lnx_notify_valid(c))
		return -ESRCH;
	c->have_status = true;
	if (pidfd >= 0) {
		lnx_tasks_keep(c->nt->tasks, c->tid, pidfd, c->tgid, c->umask);
		return 1; /* pidfd is kept */
	}
	return 0;
}

int lnx_notify_status(struct lnx_notify_call *c)
{
	if (c->have_status)
		return 0;
	if (lnx_tasks_find(c->nt->tasks, c->tid, &c->tgid, &c->umask)) {
		c->have_status = true;
		return 0;
	}
	int pidfd = lnx_tasks_pin(c->nt->tasks, c->tid);
	int rc = status_read(c, pidfd);
	if (rc == 1)
		return 0;
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}

void lnx_notify_umask_call(struct lnx_notify_call *c)
{
	lnx_tasks_umask_call(c->nt->tasks, c->tid);
}

/* A pidfd whose descriptor table is the caller's: of the calling thread
 * (a thread made without CLONE_FILES has a table of its own), the one
 * kept for it if any (*owned false), else a new one; before Linux 6.9,
 * which has no thread pidfds, of its thread group. -errno on failure. */
static int caller_pidfd(struct lnx_notify_call *c, bool *owned)
{
	int fd = lnx_tasks_pidfd(c->nt->tasks, c->tid);
	*owned = fd < 0;
	if (fd >= 0)
		return fd;
	fd = lnx_tasks_thread_pidfd(c->tid);
	if (fd >= 0)
		return fd;
	if (errno != EINVAL)
		return -errno;
	int rc = lnx_notify_status(c);
	if (rc)
		return rc;
	fd = (int)syscall(SYS_pidfd_open, c->tgid, 0);
	return fd >= 0 ? fd : -errno;
}

int lnx_notify_tracee_fd(struct lnx_notify_call *c, int fd)
{
	bool owned;
	int pfd = caller_pidfd(c, &owned);
	if (pfd < 0)
		return pfd;
	long dup = syscall(SYS_pidfd_getfd, pfd, fd, 0);
	int e = errno;
	if (owned)
		close(pfd);
	if (dup < 0)
		return e == ESRCH ? -ESRCH : -EBADF;
	/* The pid may have been reused before pidfd_open. */
	if (!lnx_notify_valid(c)) {
		close((int)dup);
		return -ESRCH;
	}
	return (int)dup;
}

int lnx_notify_dir(struct lnx_notify_call *c, int dirfd)
{
	if (dirfd != AT_FDCWD)
		return lnx_notify_tracee_fd(c, dirfd);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cwd", (int)c->tid);
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!lnx_notify_valid(c)) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}
