/*
 * test_lnx_seccomp.c - the sandbox's system-call filter (runtime/linux/
 * sandbox/lnx_seccomp.c). Every refusal is shown twice in one forked child: first
 * the call is made without the filter and must not fail with the filter's
 * errno (most succeed outright: we run as root with user namespaces), then
 * the filter is loaded and the same call must fail with it. Calls the
 * sandbox needs are shown to keep working under the filter.
 *
 * The filter stays in the forked child; children leave with _exit() so no
 * exit handler (LeakSanitizer's uses ptrace) runs under it.
 */
#include <criterion/criterion.h>
#include <linux/filter.h>
#include <sys/stat.h>
#include <linux/openat2.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/futex.h>
#include <linux/kcmp.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <net/ethernet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "lnx_seccomp.h"

static const struct lnx_seccomp_opts opts_default = {.allow_unix_sockets = true, .allow_inet = true};

/* A call under test: returns >= 0 on success or -errno. Its argument is
 * what the case's setup returned (a pty descriptor) or else the case's own
 * arg (clone flags, a persona, an index in sc_socks, a system call number). */
struct sc_case {
	const char *what;
	long (*setup)(void); /* optional, run once before the control call */
	long (*call)(long arg);
	long arg;
	int want;     /* the errno the filter gives */
	bool must_ok; /* the control call must succeed, not only fail otherwise */
};

static long sc_ret(long r)
{
	return r < 0 ? -(long)errno : r;
}

/* For calls that return a descriptor: success is 0, the fd is closed. */
static long sc_fd(long fd)
{
	if (fd < 0)
		return -(long)errno;
	close((int)fd);
	return 0;
}

static bool sc_load(const struct lnx_seccomp_opts *o)
{
	char err[256];
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		fprintf(stderr, "PR_SET_NO_NEW_PRIVS: %s\n", strerror(errno));
		return false;
	}
	if (!lnx_seccomp_load(o, err, sizeof err)) {
		fprintf(stderr, "%s\n", err);
		return false;
	}
	return true;
}

static int sc_wait(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

/* A scratch file some cases make; the child removes it before it exits. */
static char sc_scratch[64];

/* The child's side of one case; its exit status is the verdict. */
static int sc_child(const struct sc_case *c, const struct lnx_seccomp_opts *o)
{
	long arg = c->arg;
	if (c->setup && (arg = c->setup()) < 0) {
		fprintf(stderr, "%s: setup failed: %s\n", c->what, strerror((int)-arg));
		return 10;
	}
	long r = c->call(arg);
	if (r == -c->want || (c->must_ok && r < 0)) {
		fprintf(stderr, "%s: control without the filter failed: %s\n", c->what,
			strerror((int)-r));
		return 11;
	}
	if (!sc_load(o))
		return 12;
	r = c->call(arg);
	if (sc_scratch[0])
		unlink(sc_scratch);
	if (r != -c->want) {
		fprintf(stderr, "%s under the filter: got %ld (%s), want %s\n", c->what, r,
			r < 0 ? strerror((int)-r) : "success", strerror(c->want));
		return 13;
	}
	return 0;
}

static void sc_check_with(const struct sc_case *cases, size_t n, const struct lnx_seccomp_opts *o)
{
	for (size_t i = 0; i < n; i++) {
		fflush(NULL);
		pid_t pid = fork();
		cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
		if (pid == 0)
			_exit(sc_child(&cases[i], o));
		int st = sc_wait(pid);
		cr_expect(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "%s: child status %#x (see stderr)", cases[i].what, (unsigned)st);
	}
}

/* ---- processes ---- */

static long c_ptrace_traceme(long a)
{
	(void)a;
	return sc_ret(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
}

static long c_process_vm(long write)
{
	char src[8] = "cage", dst[8] = "";
	struct iovec l = {write ? src : dst, sizeof src}, r = {write ? dst : src, sizeof src};
	ssize_t n = write ? process_vm_writev(getpid(), &l, 1, &r, 1, 0)
			  : process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	return sc_ret(n);
}

static long c_kcmp(long a)
{
	(void)a;
	return sc_ret(syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, 0, 0));
}

static long c_pidfd_getfd(long a)
{
	(void)a;
	long pfd = syscall(SYS_pidfd_open, getpid(), 0);
	if (pfd < 0)
		return -(long)errno;
	long r = sc_fd(syscall(SYS_pidfd_getfd, pfd, 0, 0));
	close((int)pfd);
	return r;
}

/* ---- kernel attack surface ---- */

static long c_io_uring_setup(long a)
{
	(void)a;
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	return sc_fd(syscall(SYS_io_uring_setup, 1, &p));
}

static long c_bpf_map(long a)
{
	(void)a;
	union bpf_attr at;
	memset(&at, 0, sizeof at);
	at.map_type = BPF_MAP_TYPE_ARRAY;
	at.key_size = 4;
	at.value_size = 4;
	at.max_entries = 1;
	return sc_fd(syscall(SYS_bpf, BPF_MAP_CREATE, &at, sizeof at));
}

static long c_perf_event_open(long a)
{
	(void)a;
	struct perf_event_attr at;
	memset(&at, 0, sizeof at);
	at.size = sizeof at;
	at.type = PERF_TYPE_SOFTWARE;
	at.config = PERF_COUNT_SW_TASK_CLOCK;
	at.exclude_kernel = 1;
	return sc_fd(syscall(SYS_perf_event_open, &at, 0, -1, -1, 0));
}

static long c_userfaultfd(long a)
{
	(void)a;
	return sc_fd(syscall(SYS_userfaultfd, O_CLOEXEC));
}

/* ---- keyrings ---- */

static long c_keyctl(long a)
{
	(void)a;
	return sc_ret(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 1));
}

static long c_add_key(long a)
{
	(void)a;
	return sc_ret(syscall(SYS_add_key, "user", "cage-test", "x", 1, KEY_SPEC_PROCESS_KEYRING));
}

static long c_request_key(long a)
{
	(void)a;
	return sc_ret(syscall(SYS_request_key, "user", "cage-test-absent", NULL,
			      KEY_SPEC_PROCESS_KEYRING));
}

/* ---- mounts and namespaces ---- */

/* A private mount namespace, so the control mounts touch only the child. */
static long s_private_mounts(void)
{
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return -(long)errno;
	return 0;
}

static long c_mount_tmpfs(long a)
{
	(void)a;
	if (mount("cage-test", "/tmp", "tmpfs", 0, NULL) != 0)
		return -(long)errno;
	return sc_ret(umount2("/tmp", 0));
}

static long s_private_tmpfs(void)
{
	long r = s_private_mounts();
	if (r == 0 && mount("cage-test", "/tmp", "tmpfs", 0, NULL) != 0)
		r = -(long)errno;
	return r;
}

static long c_umount2(long a)
{
	(void)a;
	return sc_ret(umount2("/tmp", 0));
}

static long c_chroot(long a)
{
	(void)a;
	return sc_ret(chroot("/"));
}

static long c_open_tree(long a)
{
	(void)a;
	return sc_fd(syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLOEXEC));
}

static long c_fsopen(long a)
{
	(void)a;
	return sc_fd(syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
}

static long c_fspick(long a)
{
	(void)a;
	return sc_fd(syscall(SYS_fspick, AT_FDCWD, "/", FSPICK_CLOEXEC));
}

static long c_unshare(long flag)
{
	return sc_ret(unshare((int)flag));
}

static long c_setns_own(long a)
{
	(void)a;
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -(long)errno;
	long r = sc_ret(setns(fd, CLONE_NEWNET));
	close(fd);
	return r;
}

/* The result of a raw fork-like call: the child leaves at once, the parent
 * reaps it and returns 0 or -errno. */
static long sc_forked(long pid)
{
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return -(long)errno;
	int st = sc_wait((pid_t)pid);
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -ECHILD;
}

/* A fork through the raw clone system call with extra flags. */
static long c_clone(long flags)
{
	return sc_forked(syscall(SYS_clone, (unsigned long)flags | SIGCHLD, 0, 0, 0, 0));
}

/* The first fields of struct clone_args (CLONE_ARGS_SIZE_VER0). */
struct sc_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static long c_clone3(long a)
{
	(void)a;
	struct sc_clone_args ca = {.exit_signal = SIGCHLD};
	return sc_forked(syscall(SYS_clone3, &ca, sizeof ca));
}

/* A thread (CLONE_THREAD) without CLONE_FS, through glibc's clone(),
 * which runs the function on the new stack. The thread leaves at once;
 * CLONE_CHILD_CLEARTID clears `tid` and wakes its futex when it is gone.
 * The wait is bounded (5 s), and a thread still running after it is
 * reported, not left to touch a freed stack (the stack is static). */
static int sc_thread_exit(void *arg)
{
	(void)arg;
	syscall(SYS_exit, 0); /* this thread only */
	return 0;
}

static long c_thread_own_fs(long a)
{
	(void)a;
	static char stack[64 * 1024] __attribute__((aligned(16)));
	static pid_t tid;
	__atomic_store_n(&tid, 1, __ATOMIC_SEQ_CST);
	long r = clone(sc_thread_exit, stack + sizeof stack,
		       CLONE_VM | CLONE_SIGHAND | CLONE_THREAD | CLONE_FILES | CLONE_SYSVSEM |
			       CLONE_CHILD_CLEARTID,
		       NULL, NULL, NULL, &tid);
	if (r < 0)
		return -(long)errno;
	for (int i = 0; i < 50; i++) {
		pid_t v = __atomic_load_n(&tid, __ATOMIC_SEQ_CST);
		if (v == 0)
			return 0;
		struct timespec ts = {0, 100 * 1000 * 1000};
		syscall(SYS_futex, &tid, FUTEX_WAIT, v, &ts, NULL, 0);
	}
	return -ETIMEDOUT;
}

/* ---- terminals and personality ---- */

/* The slave side of a new pty: TIOCSTI works on it for root. */
static long s_pty(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return -(long)errno;
	const char *name = grantpt(m) == 0 && unlockpt(m) == 0 ? ptsname(m) : NULL;
	int s = name ? open(name, O_RDWR | O_NOCTTY | O_CLOEXEC) : -1;
	return s < 0 ? -(long)errno : s;
}

static long c_tiocsti(long fd)
{
	char ch = 'x';
	return sc_ret(ioctl((int)fd, TIOCSTI, &ch));
}

/* The request with bits above 32 set, which the kernel drops. */
static long c_tiocsti_wide(long fd)
{
	char ch = 'x';
	return sc_ret(syscall(SYS_ioctl, fd, (1UL << 32) | TIOCSTI, &ch));
}

static long c_tioclinux(long fd)
{
	char sub = 0; /* TIOCL subcode; a pty answers it with an error of its own */
	return sc_ret(ioctl((int)fd, TIOCLINUX, &sub));
}

/* Set-id bits: each call first works on a scratch file (the control),
 * then is refused; plain modes keep working (ordinary_calls_keep_working). */

static long s_scratch(void)
{
	snprintf(sc_scratch, sizeof sc_scratch, "/tmp/cage-sc-setid.%d", (int)getpid());
	unlink(sc_scratch);
	int fd = open(sc_scratch, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -(long)errno;
	close(fd);
	return 0;
}

static long c_chmod_setuid(long a)
{
	(void)a;
	return sc_ret(chmod(sc_scratch, 04755));
}

static long c_chmod_setgid(long a)
{
	(void)a;
	return sc_ret(chmod(sc_scratch, 02755));
}

static long c_create_setuid(long a)
{
	(void)a;
	unlink(sc_scratch);
	return sc_fd(open(sc_scratch, O_WRONLY | O_CREAT | O_CLOEXEC, 04755));
}

static long c_openat2(long a)
{
	(void)a;
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC};
	return sc_fd(syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof how));
}

static long c_personality(long persona)
{
	return sc_ret(syscall(SYS_personality, (unsigned long)persona));
}

/* ---- sockets ---- */

struct sc_sock {
	unsigned long family, type, proto;
};

/* The sockets the cases make; a case's arg is an index here. */
enum {
	SK_PACKET,
	SK_RAW,
	SK_RAW6,
	SK_PING,
	SK_SEQPACKET,
	SK_SCTP,
	SK_NL_DIAG,
	SK_NL_AUDIT,
	SK_WIDE_FAMILY,
	SK_WIDE_TYPE,
	SK_WIDE_PROTO,
	SK_UNIX,
	SK_TCP,
	SK_UDP6,
};

static const struct sc_sock sc_socks[] = {
	[SK_PACKET] = {AF_PACKET, SOCK_RAW, 0x0300 /* htons(ETH_P_ALL) */},
	[SK_RAW] = {AF_INET, SOCK_RAW, IPPROTO_ICMP},
	[SK_RAW6] = {AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6},
	[SK_PING] = {AF_INET, SOCK_DGRAM, IPPROTO_ICMP},
	[SK_SEQPACKET] = {AF_INET, SOCK_SEQPACKET, 0},
	[SK_SCTP] = {AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, IPPROTO_SCTP},
	[SK_NL_DIAG] = {AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG},
	[SK_NL_AUDIT] = {AF_NETLINK, SOCK_RAW, NETLINK_AUDIT},
	[SK_WIDE_FAMILY] = {(1UL << 32) | AF_INET, SOCK_RAW, IPPROTO_ICMP},
	[SK_WIDE_TYPE] = {AF_INET, (1UL << 32) | SOCK_RAW, IPPROTO_ICMP},
	[SK_WIDE_PROTO] = {AF_INET, SOCK_STREAM, (1UL << 32) | IPPROTO_TCP},
	[SK_UNIX] = {AF_UNIX, SOCK_STREAM, 0},
	[SK_TCP] = {AF_INET, SOCK_STREAM, 0},
	[SK_UDP6] = {AF_INET6, SOCK_DGRAM, 0},
};

static long sc_socket(const struct sc_sock *s)
{
	return sc_fd(syscall(SYS_socket, s->family, s->type, s->proto));
}

static long c_socket(long i)
{
	return sc_socket(&sc_socks[i]);
}

static long c_socketpair(long i)
{
	const struct sc_sock *s = &sc_socks[i];
	int sv[2];
	if (syscall(SYS_socketpair, s->family, s->type, s->proto, sv) != 0)
		return -(long)errno;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

#define SK(what, sock, want, ok) {what, NULL, c_socket, sock, want, ok}

/* Every refusal with a control: the whole table runs under one default filter. */
static const struct sc_case sc_refused[] = {
	/* processes */
	{"ptrace(PTRACE_TRACEME)", NULL, c_ptrace_traceme, 0, EPERM, true},
	{"process_vm_readv(self)", NULL, c_process_vm, 0, EPERM, true},
	{"process_vm_writev(self)", NULL, c_process_vm, 1, EPERM, true},
	{"kcmp(self, self, KCMP_FILE)", NULL, c_kcmp, 0, EPERM, true},
	{"pidfd_getfd(self, 0)", NULL, c_pidfd_getfd, 0, EPERM, true},
	/* kernel attack surface */
	{"io_uring_setup", NULL, c_io_uring_setup, 0, EPERM, true},
	{"bpf(BPF_MAP_CREATE)", NULL, c_bpf_map, 0, EPERM, true},
	{"perf_event_open(task clock)", NULL, c_perf_event_open, 0, EPERM, true},
	{"userfaultfd", NULL, c_userfaultfd, 0, EPERM, true},
	/* keyrings */
	{"keyctl(KEYCTL_GET_KEYRING_ID)", NULL, c_keyctl, 0, EPERM, true},
	{"add_key(user)", NULL, c_add_key, 0, EPERM, true},
	{"request_key(absent)", NULL, c_request_key, 0, EPERM, false},
	/* mounts */
	{"mount(tmpfs)", s_private_mounts, c_mount_tmpfs, 0, EPERM, true},
	{"umount2", s_private_tmpfs, c_umount2, 0, EPERM, true},
	{"chroot(/)", NULL, c_chroot, 0, EPERM, true},
	{"open_tree(/)", NULL, c_open_tree, 0, EPERM, true},
	{"fsopen(tmpfs)", NULL, c_fsopen, 0, EPERM, true},
	{"fspick(/)", NULL, c_fspick, 0, EPERM, true},
	/* namespaces */
	{"unshare(CLONE_NEWUSER)", NULL, c_unshare, CLONE_NEWUSER, EPERM, true},
	{"unshare(CLONE_NEWNET)", NULL, c_unshare, CLONE_NEWNET, EPERM, true},
	{"setns(own netns)", NULL, c_setns_own, 0, EPERM, true},
	{"clone(CLONE_NEWNS)", NULL, c_clone, CLONE_NEWNS, EPERM, true},
	{"clone(CLONE_NEWCGROUP)", NULL, c_clone, CLONE_NEWCGROUP, EPERM, true},
	{"clone(CLONE_NEWUTS)", NULL, c_clone, CLONE_NEWUTS, EPERM, true},
	{"clone(CLONE_NEWIPC)", NULL, c_clone, CLONE_NEWIPC, EPERM, true},
	{"clone(CLONE_NEWUSER)", NULL, c_clone, CLONE_NEWUSER, EPERM, true},
	{"clone(CLONE_NEWPID)", NULL, c_clone, CLONE_NEWPID, EPERM, true},
	{"clone(CLONE_NEWNET)", NULL, c_clone, CLONE_NEWNET, EPERM, true},
	{"clone(CLONE_NEWUSER|CLONE_NEWNET)", NULL, c_clone, CLONE_NEWUSER | CLONE_NEWNET,
	 EPERM, true},
	{"clone3(fork)", NULL, c_clone3, 0, ENOSYS, true},
	{"clone(CLONE_THREAD without CLONE_FS)", NULL, c_thread_own_fs, 0, EPERM, true},
	/* terminals and personality */
	{"ioctl(TIOCSTI)", s_pty, c_tiocsti, 0, EPERM, true},
	{"chmod(04755)", s_scratch, c_chmod_setuid, 0, EPERM, true},
	{"chmod(02755)", s_scratch, c_chmod_setgid, 0, EPERM, true},
	{"open(O_CREAT, 04755)", s_scratch, c_create_setuid, 0, EPERM, true},
	{"openat2", NULL, c_openat2, 0, ENOSYS, true},
	{"ioctl(TIOCSTI | 1<<32)", s_pty, c_tiocsti_wide, 0, EPERM, true},
	{"ioctl(TIOCLINUX)", s_pty, c_tioclinux, 0, EPERM, false},
	{"personality(ADDR_NO_RANDOMIZE)", NULL, c_personality, ADDR_NO_RANDOMIZE, EPERM,
	 true},
	{"personality(READ_IMPLIES_EXEC)", NULL, c_personality, READ_IMPLIES_EXEC, EPERM,
	 true},
	{"personality(PER_LINUX32)", NULL, c_personality, PER_LINUX32, EPERM, true},
	{"personality(1<<32 | ADDR_NO_RANDOMIZE)", NULL, c_personality,
	 (long)((1UL << 32) | ADDR_NO_RANDOMIZE), EPERM, true},
	{"personality(0xfffffffe)", NULL, c_personality, 0xfffffffeL, EPERM, false},
	/* sockets */
	SK("socket(AF_PACKET)", SK_PACKET, EAFNOSUPPORT, true),
	SK("socket(AF_INET, SOCK_RAW)", SK_RAW, EPERM, true),
	SK("socket(AF_INET6, SOCK_RAW)", SK_RAW6, EPERM, true),
	SK("socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)", SK_PING, EPERM, false),
	SK("socket(AF_INET, SOCK_SEQPACKET)", SK_SEQPACKET, EPERM, false),
	SK("socket(AF_INET6, SOCK_STREAM, IPPROTO_SCTP)", SK_SCTP, EPERM, false),
	SK("socket(AF_NETLINK, NETLINK_SOCK_DIAG)", SK_NL_DIAG, EPERM, true),
	SK("socket(AF_NETLINK, NETLINK_AUDIT)", SK_NL_AUDIT, EPERM, true),
	SK("socket(1<<32 | AF_INET, SOCK_RAW)", SK_WIDE_FAMILY, EAFNOSUPPORT, true),
	SK("socket(AF_INET, 1<<32 | SOCK_RAW)", SK_WIDE_TYPE, EPERM, true),
	SK("socket(AF_INET, SOCK_STREAM, 1<<32 | IPPROTO_TCP)", SK_WIDE_PROTO, EPERM, true),
	{"socketpair(AF_INET)", NULL, c_socketpair, SK_TCP, EAFNOSUPPORT, false},
};

Test(lnx_seccomp, refused_calls)
{
	sc_check_with(sc_refused, sizeof sc_refused / sizeof sc_refused[0], &opts_default);
}

Test(lnx_seccomp, unix_sockets_follow_the_option)
{
	const struct lnx_seccomp_opts no_unix = {.allow_unix_sockets = false, .allow_inet = true};
	const struct sc_case refused[] = {SK("socket(AF_UNIX) without unix rules", SK_UNIX,
					     EAFNOSUPPORT, true)};
	sc_check_with(refused, 1, &no_unix);

	/* socketpair stays allowed, and with the option so does socket. */
	for (int allow = 0; allow <= 1; allow++) {
		const struct lnx_seccomp_opts o = {.allow_unix_sockets = allow, .allow_inet = true};
		pid_t pid = fork();
		cr_assert_neq(pid, -1);
		if (pid == 0) {
			if (!sc_load(&o) || c_socketpair(SK_UNIX) != 0)
				_exit(1);
			_exit(allow && c_socket(SK_UNIX) != 0 ? 2 : 0);
		}
		int st = sc_wait(pid);
		cr_expect(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "allow_unix_sockets=%d: child status %#x", allow, (unsigned)st);
	}
}

Test(lnx_seccomp, offline_refuses_ip_families)
{
	const struct lnx_seccomp_opts offline = {.allow_unix_sockets = true, .allow_inet = false};
	const struct sc_case cases[] = {
		SK("socket(AF_INET, SOCK_STREAM) offline", SK_TCP, EAFNOSUPPORT, true),
		SK("socket(AF_INET6, SOCK_DGRAM) offline", SK_UDP6, EAFNOSUPPORT, true),
	};
	sc_check_with(cases, 2, &offline);
}

/* ---- personality: every persona but the query and PER_LINUX ---- */

/* The 32 rules of lnx_sc_deny_personality against the rule they stand
 * for: refused exactly when the low 32 bits are not all equal, whatever
 * the upper 32. Tried on the words a wrong cycle would let through (one
 * bit, all but one, runs of two) and on 20,000 pseudo-random ones. 0 or
 * the number of the first check that failed. */
static int sc_personas(void)
{
	/* Without the filter a persona is set (and set back). */
	if (syscall(SYS_personality, (unsigned long)ADDR_NO_RANDOMIZE) < 0 ||
	    syscall(SYS_personality, (unsigned long)PER_LINUX) < 0 ||
	    syscall(SYS_personality, 0xffffffffUL) != PER_LINUX)
		return 1;
	if (!sc_load(&opts_default))
		return 2;
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (unsigned k = 0; k < 20000 + 4 * 32 + 2; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint32_t lo;
		if (k < 32)
			lo = 1u << k;
		else if (k < 64)
			lo = ~(1u << (k - 32));
		else if (k < 96)
			lo = 3u << (k - 64);
		else if (k < 128)
			lo = ~(3u << (k - 96));
		else if (k < 130)
			lo = k == 128 ? 0 : 0xffffffffu;
		else
			lo = (uint32_t)x;
		unsigned long arg = (unsigned long)(x & 0xffffffff00000000u) | lo;
		bool uniform = lo == 0 || lo == 0xffffffffu;
		errno = 0;
		long r = syscall(SYS_personality, arg);
		if (uniform ? r < 0 : !(r == -1 && errno == EPERM)) {
			fprintf(stderr, "personality(%#lx): %ld (%s)\n", arg, r, strerror(errno));
			return 3;
		}
	}
	return 0;
}

Test(lnx_seccomp, personality_only_query_or_linux)
{
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0)
		_exit(sc_personas());
	int st = sc_wait(pid);
	cr_expect(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x",
		  (unsigned)st);
}

/* ---- every name in the list, with harmless all-ones arguments ---- */

/* All-ones arguments are invalid for each of these calls (bad flags, bad
 * pointers, no such descriptor), so the control fails harmlessly and
 * without EPERM, even as root. */
static long c_all_ones(long nr)
{
	return sc_ret(syscall(nr, -1L, -1L, -1L, -1L, -1L, -1L));
}

Test(lnx_seccomp, every_denied_name)
{
	const char *const *names = lnx_seccomp_denied_names();
	size_t n = 0;
	while (names[n])
		n++;
	cr_assert_gt(n, 40);
	struct sc_case *cases = calloc(n, sizeof *cases);
	cr_assert_not_null(cases);
	for (size_t i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);
		/* Every name exists on x86_64 and aarch64: an unresolved one
		 * means a libseccomp too old to filter it. */
		cr_assert_neq(nr, __NR_SCMP_ERROR, "libseccomp does not know %s", names[i]);
		cr_assert_geq(nr, 0, "%s is not a system call on this architecture", names[i]);
		cases[i] = (struct sc_case){names[i], NULL, c_all_ones, nr,
					    !strcmp(names[i], "clone3") || !strcmp(names[i], "openat2") ? ENOSYS : EPERM, false};
	}
	sc_check_with(cases, n, &opts_default);
	free(cases);
}

/* Both supported architectures have every call the filter names (a name
 * an architecture lacked would be skipped there, silently). */
Test(lnx_seccomp, names_exist_on_x86_64_and_aarch64)
{
	static const uint32_t arches[] = {SCMP_ARCH_X86_64, SCMP_ARCH_AARCH64};
	static const char *const by_argument[] = {"clone", "ioctl", "personality", "socket",
						  "socketpair"};
	for (size_t a = 0; a < 2; a++) {
		for (const char *const *p = lnx_seccomp_denied_names(); *p; p++)
			cr_expect_geq(seccomp_syscall_resolve_name_arch(arches[a], *p), 0,
				      "%s missing on arch %#x", *p, arches[a]);
		for (size_t i = 0; i < 5; i++)
			cr_expect_geq(seccomp_syscall_resolve_name_arch(arches[a], by_argument[i]), 0,
				      "%s missing on arch %#x", by_argument[i], arches[a]);
	}
}

/* docs/linux-seccomp.md names every refused call. */
Test(lnx_seccomp, docs_name_every_call)
{
	FILE *f = fopen(CAGE_SOURCE_DIR "/docs/linux-seccomp.md", "r");
	cr_assert_not_null(f, "docs/linux-seccomp.md: %s", strerror(errno));
	static char doc[1 << 16];
	size_t len = fread(doc, 1, sizeof doc - 1, f);
	fclose(f);
	doc[len] = '\0';
	for (const char *const *p = lnx_seccomp_denied_names(); *p; p++) {
		char quoted[64];
		snprintf(quoted, sizeof quoted, "`%s`", *p);
		cr_expect_not_null(strstr(doc, quoted), "docs/linux-seccomp.md does not name %s", *p);
	}
}

/* ---- what must keep working ---- */

static void *sc_thread(void *arg)
{
	return arg;
}

/* Returns 0 or the number of the first check that failed. */
static int sc_ordinary_calls(void)
{
	int sv[2], fd;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return 1;
	close(sv[0]);
	close(sv[1]);
	static const struct sc_sock ok[] = {
		{AF_INET, SOCK_STREAM, 0},
		{AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP},
		{AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP},
		{AF_UNIX, SOCK_DGRAM, 0},
		{AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE},
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (sc_socket(&ok[i]) != 0)
			return 2;
	struct ifaddrs *ifa;
	if (getifaddrs(&ifa) != 0)
		return 3;
	freeifaddrs(ifa);

	/* A loopback TCP connection, end to end. */
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof a;
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&a, &alen) != 0)
		return 4;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
		return 5;
	int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0 || write(fd, "k", 1) != 1)
		return 6;
	char b;
	if (read(c, &b, 1) != 1 || b != 'k')
		return 7;
	close(c);
	close(fd);
	close(l);

	pid_t pid = fork(); /* clone without namespace flags */
	if (pid == 0)
		_exit(0);
	if (pid < 0 || sc_wait(pid) != 0)
		return 8;
	pthread_t t; /* clone3 is refused: glibc falls back to clone */
	void *out = NULL;
	if (pthread_create(&t, NULL, sc_thread, &out) != 0 || pthread_join(t, &out) != 0 ||
	    out != &out)
		return 9;

	if ((fd = (int)s_pty()) < 0)
		return 10;
	struct termios tio;
	if (tcgetattr(fd, &tio) != 0 || ioctl(fd, TCGETS, &tio) != 0)
		return 11;
	close(fd);

	if (personality(0xffffffff) < 0 || personality(PER_LINUX) < 0)
		return 12;

	/* A dynamically linked program starts under the filter. */
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
		_exit(99);
	}
	int st = pid < 0 ? -1 : sc_wait(pid);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
		return 13;
	return 0;
}

Test(lnx_seccomp, ordinary_calls_keep_working)
{
	/* Control: the checks pass without the filter too. */
	for (int filtered = 0; filtered <= 1; filtered++) {
		fflush(NULL);
		pid_t pid = fork();
		cr_assert_neq(pid, -1);
		if (pid == 0)
			_exit(filtered && !sc_load(&opts_default) ? 100 : sc_ordinary_calls());
		int st = sc_wait(pid);
		cr_expect(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
			  "%s: child status %#x (check number in the high byte)",
			  filtered ? "filtered" : "control", (unsigned)st);
	}
}

Test(lnx_seccomp, needs_no_new_privs)
{
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		char err[256] = "";
		bool ok = lnx_seccomp_load(&opts_default, err, sizeof err);
		_exit(!ok && strstr(err, "no_new_privs") && c_ptrace_traceme(0) == 0 ? 0 : 1);
	}
	int st = sc_wait(pid);
	cr_expect(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "load without no_new_privs: status %#x", (unsigned)st);
}

/* ---- other ABIs kill the process ---- */

/* Runs call once as a control (it must return), then under the filter,
 * where it must end the process with SIGSYS. */
static void sc_expect_killed(const char *what, long (*call)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		if (call() < -1)
			_exit(1);
		if (!sc_load(&opts_default))
			_exit(2);
		call();
		_exit(3);
	}
	int st = sc_wait(pid);
	cr_expect(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
		  "%s: child status %#x, want killed by SIGSYS", what, (unsigned)st);
}

#ifdef __x86_64__
/* getpid through the i386 entry point: returns the pid without the filter. */
static long c_i386_getpid(void)
{
	long r = 20; /* __NR_getpid on i386 */
	__asm__ volatile("int $0x80" : "+a"(r) : : "r8", "r9", "r10", "r11", "memory");
	return r == getpid() ? 0 : -2;
}

/* getpid with the x32 bit: ENOSYS from a kernel without x32 support. */
static long c_x32_getpid(void)
{
	long r = syscall(0x40000000L | SYS_getpid);
	return r == getpid() || (r == -1 && errno == ENOSYS) ? 0 : -2;
}

/* A kernel built or booted without IA-32 emulation (ia32_emulation=0)
 * has no i386 entry point: int 0x80 is a general protection fault
 * (SIGSEGV) with or without a filter, and there is nothing to close. The
 * control is run alone first so that only this case is skipped; any
 * other outcome of it goes on to sc_expect_killed, which fails on it. */
Test(lnx_seccomp, i386_abi_killed)
{
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would make it SIGABRT */
		_exit(c_i386_getpid() == 0 ? 0 : 1);
	}
	int st = sc_wait(pid);
	if (st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV)
		cr_skip_test("this kernel has no i386 entry point (int 0x80 faults without a filter)");
	sc_expect_killed("int 0x80 getpid", c_i386_getpid);
}

Test(lnx_seccomp, x32_abi_killed)
{
	sc_expect_killed("x32 getpid", c_x32_getpid);
}
#endif

/* The program generated at build time is what libseccomp builds now: a
 * stale generated filter (libseccomp or the rules changed) fails here. */
Test(lnx_seccomp, prebuilt_program_is_current)
{
	for (int unix_ok = 0; unix_ok < 2; unix_ok++) {
		struct lnx_seccomp_opts o = {.allow_unix_sockets = unix_ok, .allow_inet = true};
		struct lnx_seccomp_prog built, pre;
		char err[256];
		cr_assert(lnx_seccomp_build(&o, &built, err, sizeof err), "%s", err);
		cr_assert(lnx_seccomp_prebuilt(&o, &pre));
		cr_expect_eq(pre.len, built.len, "unix %d: %u vs %u instructions", unix_ok,
			     (unsigned)pre.len, (unsigned)built.len);
		cr_expect(pre.len == built.len &&
				  memcmp(pre.insns, built.insns, built.len * sizeof *built.insns) == 0,
			  "unix %d: the generated program differs", unix_ok);
		lnx_seccomp_prog_free(&built);
		lnx_seccomp_prog_free(&pre);
	}
	struct lnx_seccomp_opts offline = {.allow_unix_sockets = false, .allow_inet = false};
	struct lnx_seccomp_prog none;
	cr_expect(!lnx_seccomp_prebuilt(&offline, &none), "no program was generated for it");
}
