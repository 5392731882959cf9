/*
 * lch_client_main.c - cage-launch ARGS...: what `cagerun ARGS...` does,
 * run by the user's launcher (`cagerun launcher`, lch_server.h) when one
 * listens and accepts, and by exec'ing cagerun itself otherwise.
 *
 * The client is built without a C library (lch_sys.h says why), so it is
 * small and plain: no allocation (one static buffer), no stdio. Its rule:
 * until its request is sent, every failure ends in execve(cagerun) with
 * the same arguments and environment, and so does a REFUSE after it; the
 * command is sandboxed either way. After ACCEPT it waits for the status,
 * forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT, and if the launcher goes
 * away (which ends the run: the run is its child and dies with it) exits
 * 125. A launcher gone after the request but before its answer may have
 * started the run: 125 too, never a second run.
 *
 * It uses the launcher only where a launch through it is the same as a
 * direct one: never when any of descriptors 0 to 2 is a terminal (a
 * process of another session cannot take it as its controlling terminal),
 * and only with a launcher that is this user's, in this process's
 * namespaces, and not confined more than this process (it could open this
 * process's memfd through /proc: HELLO, docs/security-model.md).
 */
#include "lch_sys.h"
#include "../lch_proto.h"

#include <linux/signalfd.h>

/* gcc and clang may emit calls to these for struct copies and zeroing.
 * The volatile keeps them from turning these loops into calls to themselves. */
void *memcpy(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n)
{
	volatile unsigned char *dp = d;
	const unsigned char *sp = s;
	while (n--)
		*dp++ = *sp++;
	return d;
}
void *memset(void *d, int c, size_t n)
{
	volatile unsigned char *dp = d;
	while (n--)
		*dp++ = (unsigned char)c;
	return d;
}

static size_t slen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

static int prefixed(const char *s, const char *p)
{
	while (*p)
		if (*s++ != *p++)
			return 0;
	return 1;
}

static void say(const char *a, const char *b)
{
	lsys(__NR_write, 2, "cage-launch: ", 13);
	lsys(__NR_write, 2, a, slen(a));
	if (b)
		lsys(__NR_write, 2, b, slen(b));
	lsys(__NR_write, 2, "\n", 1);
}

static _Noreturn void leave(int code)
{
	for (;;)
		lsys(__NR_exit_group, code, 0, 0);
}

/* Appends s to buf (of size cap) at *at; 0 when it does not fit. */
static int put(char *buf, size_t cap, size_t *at, const char *s, size_t n)
{
	if (n > cap - *at)
		return 0;
	for (size_t i = 0; i < n; i++)
		buf[*at + i] = s[i];
	*at += n;
	return 1;
}

static char req_buf[LCH_MAX_REQUEST];
static char path_buf[4200];
/* The signal mask cagerun would have been started with. */
static uint64_t mask_at_start;
static int mask_changed;

/* Starts cagerun, beside this program, with the same arguments. */
static _Noreturn void fallback(char **argv, char **envp)
{
	if (mask_changed)
		lsys6(__NR_rt_sigprocmask, LCH_SIG_SETMASK, (long)&mask_at_start, 0, 8, 0, 0);
	long n = lsys6(__NR_readlinkat, LCH_AT_FDCWD, (long)"/proc/self/exe", (long)path_buf,
		       sizeof path_buf - 16, 0, 0);
	if (n <= 0) {
		say("cannot find where cagerun is: /proc/self/exe unreadable", 0);
		leave(125);
	}
	while (n > 0 && path_buf[n - 1] != '/')
		n--;
	size_t at = (size_t)n;
	put(path_buf, sizeof path_buf, &at, "cagerun", 8);
	argv[0] = path_buf;
	lsys(__NR_execve, path_buf, argv, envp);
	say("cannot run ", path_buf);
	leave(125);
}

static const char *getenv_in(char **envp, const char *name)
{
	size_t n = slen(name);
	for (char **e = envp; *e; e++)
		if (prefixed(*e, name) && (*e)[n] == '=')
			return *e + n + 1;
	return 0;
}

/* Where the launcher listens: $CAGE_LAUNCHER_SOCKET, else
 * $XDG_RUNTIME_DIR/cage/launcher.sock; 0 when neither is set. */
static int socket_path(char **envp, struct lch_sockaddr_un *sa)
{
	const char *p = getenv_in(envp, "CAGE_LAUNCHER_SOCKET");
	size_t at = 0;
	sa->family = LCH_AF_UNIX;
	if (p && *p)
		return put(sa->path, sizeof sa->path - 1, &at, p, slen(p) + 1);
	p = getenv_in(envp, "XDG_RUNTIME_DIR");
	if (!p || p[0] != '/')
		return 0;
	return put(sa->path, sizeof sa->path - 1, &at, p, slen(p)) &&
	       put(sa->path, sizeof sa->path - 1, &at, "/cage/launcher.sock", 20);
}

static int same_inode(int fd, int other)
{
	struct statx a, b;
	if (lsys6(__NR_statx, fd, (long)"", LCH_AT_EMPTY_PATH, STATX_INO, (long)&a, 0) != 0 ||
	    lsys6(__NR_statx, other, (long)"", LCH_AT_EMPTY_PATH, STATX_INO, (long)&b, 0) != 0)
		return 0;
	return a.stx_ino == b.stx_ino && a.stx_dev_major == b.stx_dev_major &&
	       a.stx_dev_minor == b.stx_dev_minor;
}

static void fmt_uint(char *out, unsigned v)
{
	char t[12];
	int n = 0;
	do
		t[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*out++ = t[--n];
	*out = '\0';
}

/* /proc/PID/NAME into out (size 64). */
static void proc_path(char *out, int pid, const char *name)
{
	size_t at = 0;
	char num[12];
	fmt_uint(num, (unsigned)pid);
	put(out, 64, &at, "/proc/", 6);
	put(out, 64, &at, num, slen(num));
	put(out, 64, &at, "/", 1);
	put(out, 64, &at, name, slen(name) + 1);
}

/* The launcher lives in this process's namespaces. */
static int same_namespaces(int pid)
{
	/* Arrays of text, not of pointers: a pointer would need a relocation. */
	static const char ns[][12] = { "ns/cgroup", "ns/ipc", "ns/mnt", "ns/net", "ns/pid",
				       "ns/time", "ns/user", "ns/uts" };
	for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
		char p[64], q[64], a[96], b[96];
		proc_path(p, pid, ns[i]);
		size_t at = 0;
		put(q, sizeof q, &at, "/proc/self/", 11);
		put(q, sizeof q, &at, ns[i], slen(ns[i]) + 1);
		long la = lsys6(__NR_readlinkat, LCH_AT_FDCWD, (long)q, (long)a, sizeof a, 0, 0);
		long lb = lsys6(__NR_readlinkat, LCH_AT_FDCWD, (long)p, (long)b, sizeof b, 0, 0);
		if (la == -2 && lb == -2)
			continue; /* ENOENT both: no such namespace on this kernel */
		if (la <= 0 || la != lb)
			return 0;
		for (long k = 0; k < la; k++)
			if (a[k] != b[k])
				return 0;
	}
	return 1;
}

static long recv_msg(int s, struct lch_msg *m, int *fd)
{
	struct lch_iovec iov = { m, sizeof *m };
	union {
		char buf[64];
		struct lch_cmsghdr align;
	} u;
	struct lch_msghdr mh = { 0, 0, &iov, 1, u.buf, sizeof u.buf, 0 };
	long n;
	do
		n = lsys(__NR_recvmsg, s, &mh, LCH_MSG_CMSG_CLOEXEC);
	while (n == -LCH_EINTR);
	if (fd) {
		*fd = -1;
		struct lch_cmsghdr *c = (struct lch_cmsghdr *)u.buf;
		if (n > 0 && mh.controllen >= sizeof *c + sizeof(int) && c->level == LCH_SOL_SOCKET &&
		    c->type == LCH_SCM_RIGHTS)
			memcpy(fd, u.buf + sizeof *c, sizeof(int));
	}
	return n;
}

/* Waits (at most 5 s) for the launcher's next message. */
static long recv_timed(int s, struct lch_msg *m, int *fd)
{
	struct lch_pollfd p = { s, LCH_POLLIN, 0 };
	struct { long sec, nsec; } t = { 5, 0 };
	if (lsys6(__NR_ppoll, (long)&p, 1, (long)&t, 0, 0, 0) != 1)
		return -1;
	return recv_msg(s, m, fd);
}

static int is_tty(int fd)
{
	char t[64];
	return lsys(__NR_ioctl, fd, LCH_TCGETS, t) == 0;
}

/* The launcher's side up to ACCEPT; the connected socket, or -1 to fall
 * back. Signals are blocked (sigfd) once it returns a socket. */
static int ask(int argc, char **argv, char **envp, int *sigfd)
{
	struct lch_sockaddr_un sa;
	for (int i = 0; i < 3; i++)
		if (is_tty(i))
			return -1;
	if (!socket_path(envp, &sa))
		return -1;
	/* Ours alone: the launcher must open it through /proc to show that it
	 * may look at this process (lch_peer.h). */
	int mine = (int)lsys(__NR_memfd_create, "cage-launch", 1 /* MFD_CLOEXEC */, 0);
	int s = (int)lsys(__NR_socket, LCH_AF_UNIX, LCH_SOCK_SEQPACKET | LCH_SOCK_CLOEXEC, 0);
	if (mine < 0 || s < 0)
		return -1;
	if (lsys(__NR_connect, s, &sa, sizeof sa) != 0)
		return -1;
	struct lch_msg m;
	memset(&m, 0, sizeof m);
	m.type = LCH_GREET;
	m.fd = mine;
	if (lsys6(__NR_sendto, s, (long)&m, sizeof m, LCH_MSG_NOSIGNAL, 0, 0) != (long)sizeof m)
		return -1;
	struct lch_ucred uc;
	uint32_t ul = sizeof uc;
	int hello = -1;
	if (lsys6(__NR_getsockopt, s, LCH_SOL_SOCKET, LCH_SO_PEERCRED, (long)&uc, (long)&ul, 0) != 0 ||
	    uc.uid != (uint32_t)lsys(__NR_geteuid, 0, 0, 0) || !same_namespaces(uc.pid))
		return -1;
	/* HELLO: the launcher opened our memfd, so it is confined no more
	 * than we are; we open its, and so show it the same. */
	if (recv_timed(s, &m, &hello) != (long)sizeof m || m.type != LCH_HELLO || hello < 0 ||
	    !same_inode(hello, mine) || m.fd < 0)
		return -1;
	char pp[64], num[12];
	fmt_uint(num, (unsigned)m.fd);
	char name[20];
	size_t pat = 0;
	put(name, sizeof name, &pat, "fd/", 3);
	put(name, sizeof name, &pat, num, slen(num) + 1);
	proc_path(pp, uc.pid, name);
	int proof = (int)lsys6(__NR_openat, LCH_AT_FDCWD, (long)pp, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	int cwd = (int)lsys6(__NR_openat, LCH_AT_FDCWD, (long)".",
			     O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
	if (proof < 0 || cwd < 0)
		return -1;
	struct lch_req *h = (struct lch_req *)req_buf;
	memset(h, 0, sizeof *h);
	h->type = LCH_REQUEST;
	h->magic = LCH_MAGIC;
	h->version = LCH_VERSION;
	h->argc = (uint32_t)argc;
	long um = lsys(__NR_umask, 022, 0, 0);
	lsys(__NR_umask, um, 0, 0);
	h->umask = (uint32_t)um;
	for (int r = 0; r < LCH_NLIMITS; r++)
		if (lsys6(__NR_prlimit64, 0, r, 0, (long)&h->limits[r], 0, 0) != 0)
			return -1;
	size_t at = sizeof *h;
	if (argc > (int)LCH_MAX_ARGS)
		return -1;
	for (int i = 0; i < argc; i++)
		if (!put(req_buf, sizeof req_buf, &at, i ? argv[i] : "cagerun",
			 (i ? slen(argv[i]) : 7) + 1))
			return -1;
	uint32_t envc = 0;
	for (char **e = envp; *e; e++, envc++)
		if (envc == LCH_MAX_ENV || !put(req_buf, sizeof req_buf, &at, *e, slen(*e) + 1))
			return -1;
	h->envc = envc;
	h->strings = (uint32_t)(at - sizeof *h);
	/* Blocked from here: each one is forwarded once the run has started. */
	uint64_t set = (1ull << (2 - 1)) | (1ull << (15 - 1)) | (1ull << (1 - 1)) | (1ull << (3 - 1));
	if (lsys6(__NR_rt_sigprocmask, LCH_SIG_BLOCK, (long)&set, (long)&mask_at_start, 8, 0, 0) != 0)
		return -1;
	mask_changed = 1;
	*sigfd = (int)lsys6(__NR_signalfd4, -1, (long)&set, 8, O_CLOEXEC, 0, 0);
	if (*sigfd < 0)
		return -1;
	int fds[LCH_NFDS] = { 0, 1, 2, cwd, proof };
	union {
		char buf[sizeof(struct lch_cmsghdr) + sizeof fds + 4]; /* CMSG_SPACE: 8-aligned */
		struct lch_cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct lch_cmsghdr *c = (struct lch_cmsghdr *)u.buf;
	c->len = sizeof(struct lch_cmsghdr) + sizeof fds;
	c->level = LCH_SOL_SOCKET;
	c->type = LCH_SCM_RIGHTS;
	memcpy(u.buf + sizeof *c, fds, sizeof fds);
	struct lch_iovec iov = { req_buf, at };
	struct lch_msghdr mh = { 0, 0, &iov, 1, u.buf, sizeof u.buf, 0 };
	long sent;
	do
		sent = lsys(__NR_sendmsg, s, &mh, LCH_MSG_NOSIGNAL);
	while (sent == -LCH_EINTR);
	lsys(__NR_close, proof, 0, 0);
	lsys(__NR_close, cwd, 0, 0);
	if (sent != (long)at)
		return -1;
	/* Once the request is out the launcher may have started the run, so
	 * only its REFUSE lets us run cagerun ourselves: no timeout here, and
	 * a launcher gone without a word means the run is not started again. */
	long got = recv_msg(s, &m, 0);
	if (got == (long)sizeof m && m.type == LCH_REFUSE)
		return -1;
	/* The run answers for itself (run.h): it may have ended before the
	 * launcher said ACCEPT. */
	if (got == (long)sizeof m && m.type == LCH_STATUS)
		leave(m.value);
	if (got != (long)sizeof m || m.type != LCH_ACCEPT) {
		say("the launcher went away before it said whether it started the run; not run again", 0);
		leave(125);
	}
	return s;
}

static _Noreturn void wait_run(int s, int sigfd)
{
	for (;;) {
		struct lch_pollfd p[2] = { { s, LCH_POLLIN, 0 }, { sigfd, LCH_POLLIN, 0 } };
		long n = lsys6(__NR_ppoll, (long)p, 2, 0, 0, 0, 0);
		if (n < 0 && n != -LCH_EINTR)
			break;
		if (p[1].revents) {
			struct signalfd_siginfo si;
			if (lsys(__NR_read, sigfd, &si, sizeof si) == (long)sizeof si) {
				struct lch_msg m;
				memset(&m, 0, sizeof m);
				m.type = LCH_SIGNAL;
				m.value = (uint8_t)si.ssi_signo;
				lsys6(__NR_sendto, s, (long)&m, sizeof m, LCH_MSG_NOSIGNAL, 0, 0);
			}
		}
		if (p[0].revents) {
			struct lch_msg m;
			long got = recv_msg(s, &m, 0);
			if (got == -LCH_EAGAIN)
				continue;
			if (got == (long)sizeof m && m.type == LCH_STATUS)
				leave(m.value);
			break;
		}
	}
	say("the launcher went away; the run was stopped", 0);
	leave(125);
}

int lch_client_start(long *sp);
__attribute__((used)) int lch_client_start(long *sp)
{
	int argc = (int)sp[0];
	char **argv = (char **)(sp + 1);
	char **envp = argv + argc + 1;
	int sigfd = -1;
	int s = argc >= 1 ? ask(argc, argv, envp, &sigfd) : -1;
	if (s < 0)
		fallback(argv, envp);
	wait_run(s, sigfd);
}

#if defined(__x86_64__)
__asm__(".text\n.global _start\n_start:\n\txor %rbp, %rbp\n\tmov %rsp, %rdi\n"
	"\tand $-16, %rsp\n\tcall lch_client_start\n\thlt\n");
#endif
