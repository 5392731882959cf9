/*
 * test_lnx_notify.c - the seccomp user-notification core
 * (runtime/linux/lnx_notify.c): a child installs a notifying filter and
 * hands its listener over; the test answers its calls. Shows that only
 * the listed calls (and for openat only with O_CREAT) reach the
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

/* The child's checks, reported by exit status: 0 when all hold. */
static int child(int sock)
{
	struct lnx_notify_rule rules[] = {
		{ SYS_mkdirat, -1, 0 },
		{ SYS_openat, 2, O_CREAT },
		{ SYS_symlinkat, -1, 0 },
		{ SYS_unlinkat, -1, 0 },
	};
	struct sock_filter insns[LNX_NOTIFY_MAX_INSNS];
	unsigned short len = lnx_notify_filter(rules, 4, insns);
	char err[256];
	if (!len || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return 10;
	int l = lnx_notify_install(insns, len, err, sizeof err);
	if (l < 0 || !lnx_notify_send_fd(sock, l))
		return 11;
	close(l);
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

Test(lnx_notify, dispatch_and_answers)
{
	int sp[2];
	cr_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(sp[0]);
		char code = (char)child(sp[1]);
		_exit(write(sp[1], &code, 1) == 1 ? 0 : 1);
	}
	close(sp[1]);
	int l = lnx_notify_recv_fd(sp[0]);
	cr_assert(l >= 0);
	struct lnx_notify *nt = lnx_notify_new(l);
	cr_assert(nt);
	struct seen mk = { "", 0 }, op = { "", 0 };
	cr_assert(lnx_notify_on(nt, SYS_mkdirat, deny_mkdir, &mk));
	cr_assert(lnx_notify_on(nt, SYS_openat, open_null, &op));
	cr_assert(lnx_notify_on(nt, SYS_symlinkat, forget, NULL));
	cr_assert(lnx_notify_on(nt, SYS_unlinkat, cont, NULL));
	cr_assert(lnx_notify_observe(nt, observe, NULL));
	/* The child's verdict comes over the socket: the test runner may
	 * reap children itself. */
	int code = -1;
	for (int i = 0; i < 200 && code < 0; i++) { /* 20 s at most */
		struct pollfd p[2] = { { lnx_notify_fd(nt), POLLIN, 0 }, { sp[0], POLLIN, 0 } };
		if (poll(p, 2, 100) <= 0)
			continue;
		if (p[0].revents & POLLIN)
			cr_assert(lnx_notify_handle(nt) == 0 || errno == ENOENT);
		char c;
		if ((p[1].revents & POLLIN) && read(sp[0], &c, 1) == 1)
			code = c;
	}
	lnx_notify_free(nt);
	close(sp[0]);
	waitpid(pid, NULL, 0);
	cr_expect_eq(code, 0, "child check %d failed", code);
	cr_expect_eq(mk.calls, 2);
	cr_expect_str_eq(mk.path, "other");
	cr_expect_eq(op.calls, 1);
	cr_expect_eq(observed, 5);
}
