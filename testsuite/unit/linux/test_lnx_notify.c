/*
 * test_lnx_notify.c - the seccomp user-notification core
 * (runtime/linux/guard/lnx_notify.c): a child installs a notifying filter and
 * hands its listener over; the test answers its calls. Shows that only
 * the listed calls (for openat only with O_CREAT, or only without O_PATH
 * with LNX_NOTIFY_UNLESS) reach the
 * supervisor, that errno, value, descriptor and "continue" answers arrive,
 * that strings are read from the tracee, and that a call with a handler
 * that does not answer fails closed (ENOSYS).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lnx_notify.h"

struct seen {
	char path[PATH_MAX];
	int calls;
};

static void deny_mkdir(void *ctx, struct lnx_notify_call *c)
{
	struct seen *s = ctx;
	s->calls++;
	int rc = lnx_notify_read_string(c, c->req->data.args[1], s->path, sizeof s->path);
	if (rc)
		lnx_notify_reply_errno(c, -rc);
	else
		lnx_notify_reply_errno(c, strcmp(s->path, "guarded") ? EXDEV : EACCES);
}

static void open_null(void *ctx, struct lnx_notify_call *c)
{
	struct seen *s = ctx;
	s->calls++;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	lnx_notify_reply_fd(c, fd, false);
	close(fd);
}

static void forget(void *ctx, struct lnx_notify_call *c)
{
	(void)ctx;
	(void)c; /* answers nothing: the core must fail the call */
}

static void cont(void *ctx, struct lnx_notify_call *c)
{
	(void)ctx;
	lnx_notify_reply_continue(c);
}

static int observed;
static void observe(void *ctx, const struct lnx_notify_call *c)
{
	(void)ctx;
	(void)c;
	observed++;
}

/* In the tracee: installs a filter of the n rules and hands its listener
 * over sock. 0, or the child's failure code (10, 11). */
static int install(const struct lnx_notify_rule *rules, size_t n, int sock)
{
	struct sock_filter insns[LNX_NOTIFY_MAX_INSNS];
	unsigned short len = lnx_notify_filter(rules, n, insns);
	char err[256];
	if (!len || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return 10;
	int l = lnx_notify_install(insns, len, err, sizeof err);
	if (l < 0 || !lnx_notify_send_fd(sock, l))
		return 11;
	close(l);
	return 0;
}

/* The child's checks, reported by exit status: 0 when all hold. */
static int child(int sock)
{
	struct lnx_notify_rule rules[] = {
		{ SYS_mkdirat, -1, 0 },
		{ SYS_openat, 2, O_CREAT },
		{ SYS_symlinkat, -1, 0 },
		{ SYS_unlinkat, -1, 0 },
	};
	int rc = install(rules, 4, sock);
	if (rc)
		return rc;
	if (syscall(SYS_mkdirat, AT_FDCWD, "guarded", 0700) != -1 || errno != EACCES)
		return 12;
	if (syscall(SYS_mkdirat, AT_FDCWD, "other", 0700) != -1 || errno != EXDEV)
		return 13;
	int fd = openat(AT_FDCWD, "/nonexistent/dir/f", O_WRONLY | O_CREAT, 0600);
	if (fd < 0 || write(fd, "x", 1) != 1 || (fcntl(fd, F_GETFD) & FD_CLOEXEC))
		return 14;
	close(fd);
	/* No O_CREAT: the kernel answers, the supervisor never sees it. */
	fd = openat(AT_FDCWD, "/dev/null", O_RDONLY);
	if (fd < 0)
		return 15;
	close(fd);
	if (symlinkat("x", AT_FDCWD, "/nonexistent/l") != -1 || errno != ENOSYS)
		return 16;
	if (unlinkat(AT_FDCWD, "/nonexistent/u", 0) != -1 || errno != ENOENT)
		return 17; /* continued: the kernel's own answer */
	return 0;
}

/* Forks `fn` as the tracee; returns its pid and the supervisor's end of
 * the socket in *sock, the listener it handed over in *listener. */
static pid_t start_child(int (*fn)(int), int *sock, int *listener)
{
	int sp[2];
	cr_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(sp[0]);
		char code = (char)fn(sp[1]);
		_exit(write(sp[1], &code, 1) == 1 ? 0 : 1);
	}
	close(sp[1]);
	*listener = lnx_notify_recv_fd(sp[0]);
	cr_assert(*listener >= 0);
	*sock = sp[0];
	return pid;
}

/* Serves nt until the child's verdict arrives over sock (the test runner
 * may reap children itself, so not by its status); frees nt, closes
 * sock, reaps the child and returns its verdict (-1: none in 20 s). */
static int serve_child(struct lnx_notify *nt, int sock, pid_t pid)
{
	int code = -1;
	for (int i = 0; i < 200 && code < 0; i++) { /* 20 s at most */
		struct pollfd p[2] = { { lnx_notify_fd(nt), POLLIN, 0 }, { sock, POLLIN, 0 } };
		if (poll(p, 2, 100) <= 0)
			continue;
		if (p[0].revents & POLLIN)
			cr_assert(lnx_notify_handle(nt) == 0 || errno == ENOENT);
		char c;
		if ((p[1].revents & POLLIN) && read(sock, &c, 1) == 1)
			code = c;
	}
	lnx_notify_free(nt);
	close(sock);
	waitpid(pid, NULL, 0);
	return code;
}

Test(lnx_notify, dispatch_and_answers)
{
	int sock, l;
	pid_t pid = start_child(child, &sock, &l);
	struct lnx_notify *nt = lnx_notify_new(l);
	cr_assert(nt);
	struct seen mk = { "", 0 }, op = { "", 0 };
	cr_assert(lnx_notify_on(nt, SYS_mkdirat, deny_mkdir, &mk));
	cr_assert(lnx_notify_on(nt, SYS_openat, open_null, &op));
	cr_assert(lnx_notify_on(nt, SYS_symlinkat, forget, NULL));
	cr_assert(lnx_notify_on(nt, SYS_unlinkat, cont, NULL));
	cr_assert(lnx_notify_observe(nt, observe, NULL));
	int code = serve_child(nt, sock, pid);
	cr_expect_eq(code, 0, "child check %d failed", code);
	cr_expect_eq(mk.calls, 2);
	cr_expect_str_eq(mk.path, "other");
	cr_expect_eq(op.calls, 1);
	cr_expect_eq(observed, 5);
}

static void refuse(void *ctx, struct lnx_notify_call *c)
{
	int *calls = ctx;
	(*calls)++;
	lnx_notify_reply_errno(c, EPERM);
}

/* A rule with LNX_NOTIFY_UNLESS: openat notifies only without O_PATH.
 * Every notified call is refused (EPERM), so the child tells the two
 * apart by the answer: the kernel's own, or the supervisor's. */
static int child_unless(int sock)
{
	struct lnx_notify_rule rules[] = { { SYS_openat, 2 | LNX_NOTIFY_UNLESS, O_PATH } };
	int rc = install(rules, 1, sock);
	if (rc)
		return rc;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_PATH);
	if (fd < 0)
		return 12; /* O_PATH reached the supervisor */
	close(fd);
	/* O_PATH drops O_CREAT: the kernel's ENOENT, nothing made */
	if (syscall(SYS_openat, AT_FDCWD, "/nonexistent-cage-test", O_PATH | O_CREAT, 0600) != -1 ||
	    errno != ENOENT)
		return 13;
	if (syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY) != -1 || errno != EPERM)
		return 14; /* a plain open must be notified */
	if (syscall(SYS_openat, AT_FDCWD, "/dev/null", O_WRONLY | O_CREAT, 0600) != -1 ||
	    errno != EPERM)
		return 15;
	return 0;
}

Test(lnx_notify, unless_rule)
{
	struct lnx_notify_rule bad[] = { { SYS_openat, 6, 1 } };
	struct sock_filter insns[LNX_NOTIFY_MAX_INSNS];
	cr_expect_eq(lnx_notify_filter(bad, 1, insns), 0, "a seventh argument was accepted");
	int sock, l;
	pid_t pid = start_child(child_unless, &sock, &l);
	struct lnx_notify *nt = lnx_notify_new(l);
	cr_assert(nt);
	int calls = 0;
	cr_assert(lnx_notify_on(nt, SYS_openat, refuse, &calls));
	int code = serve_child(nt, sock, pid);
	cr_expect_eq(code, 0, "child check %d failed", code);
	cr_expect_eq(calls, 2);
}

#if defined(__x86_64__)
/* Makes an x32 call (getpid with bit 30 set), with the notifying filter
 * installed or not; exits 0 if it survives it. */
static void x32_child(bool filtered)
{
	if (filtered) {
		struct lnx_notify_rule rules[] = { { SYS_openat, -1, 0 } };
		struct sock_filter insns[LNX_NOTIFY_MAX_INSNS];
		unsigned short len = lnx_notify_filter(rules, 1, insns);
		char err[256];
		if (!len || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    lnx_notify_install(insns, len, err, sizeof err) < 0)
			_exit(10);
	}
	syscall(0x40000000L | SYS_getpid); /* ENOSYS where x32 is off */
	_exit(0);
}

static int x32_status(bool filtered)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0)
		x32_child(filtered);
	int st = 0;
	cr_assert(waitpid(pid, &st, 0) == pid);
	return st;
}

/* An x32 call carries x86_64's AUDIT_ARCH and meets none of the rules'
 * numbers: the filter kills it rather than let it pass unseen. */
Test(lnx_notify, x32_killed)
{
	int st = x32_status(false);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the x32 call killed the control");
	st = x32_status(true);
	cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS, "the x32 call was let through (status %#x)",
		  st);
}
#endif
