/*
 * lch_ahead.c - namespaces made ahead by a spare (see lch_ahead.h).
 *
 * The helper shares the spare's memory, and so its C library's thread
 * state (errno, locks): it must never call into the C library while the
 * spare runs, so every call it makes is a raw system call here, and it
 * only runs while the spare waits for it (at its start, and at the
 * launch's clone). Its memory is one mapping: the shared state, then its
 * stack (which init, cloned from it, keeps using in its own copy of the
 * memory for its whole life), then a small stack for the moment it takes
 * to make the network namespace. The helper and the spare speak through
 * `state` (a futex word: the spare's requests) and an eventfd (the
 * helper's answers), which the spare polls beside the helper's pidfd, so
 * a helper that dies is seen, not waited for.
 */
#include "lch_ahead.h"
#include "lch_rawsys.h"
#include "lch_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AH_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define AH_ASAN 1
#endif
#ifdef AH_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL /* Linux 5.7 */
#endif

static bool write_file(pid_t pid, const char *name, const char *text, char *err,
		       size_t errlen)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);
	bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (!ok) {
		errno = e;
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
	}
	return ok;
}

/* The command keeps its own user and group ids inside: files it creates
 * belong to the user, and nothing else is mapped. */
bool lch_idmap_write(pid_t pid, char *err, size_t errlen)
{
	char m[64];
	snprintf(m, sizeof m, "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
	if (!write_file(pid, "uid_map", m, err, errlen))
		return false;
	if (!write_file(pid, "setgroups", "deny", err, errlen))
		return false;
	snprintf(m, sizeof m, "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
	return write_file(pid, "gid_map", m, err, errlen);
}

void lch_nsset_close(struct lch_nsset *set)
{
	if (!set)
		return;
	int *fds[] = { &set->user, &set->net, &set->listen };
	for (int i = 0; i < 3; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

#if defined(LCH_RAWSYS)

/* The helper's stack: init runs on (its copy of) it until it exits, as it
 * would on the spare's own. Reserved, not committed: pages are touched as
 * init uses them. */
#define AH_STACK (2u << 20)
#define AH_NETSTACK (64u << 10)
#define AH_GUARD 4096u
/* How long the spare waits for the helper's answer: each is a few system
 * calls, so only a helper stopped from outside takes this long. */
#define AH_WAIT_MS 5000

enum ah_state {
	AH_STARTING, /* the helper waits for its ID maps */
	AH_MAPPED,   /* written: it makes the network namespace */
	AH_READY,    /* waiting for the launch */
	AH_ASKED,    /* the request is filled in: clone init */
	AH_ANSWERED, /* answer holds init's pid, or -errno */
	AH_FAILED,   /* answer holds -errno; the helper has left */
};

struct run_ahead {
	int state; /* enum ah_state; a futex word */
	pid_t spare, helper;
	int pidfd, evfd;
	int userfd;   /* the user namespace; with `adopt`, the helper enters it */
	bool adopt;   /* the namespaces came from the launcher's pool, made earlier */
	int return_chan; /* where an unused set goes back (lch_ahead_return_to), or -1 */
	int netfd;    /* the network namespace made, or -1 */
	int listenfd; /* in it: the proxy's listener on LCH_AHEAD_PROXY_PORT, or -1 */
	dev_t user_dev, net_dev;
	ino_t user_ino, net_ino;
	/* the launch's request, read by the helper at AH_ASKED */
	unsigned long flags;
	int into_fd, cwd_fd;
	unsigned umask;
	uint64_t sigmask; /* the kernel's sigset_t */
	int (*entry)(void *);
	void *arg;
	/* the helper's answer */
	long answer;
	bool born_in;
	size_t maplen;
	char *netstack_top, *stack_top;
};

#define AH_RAW __attribute__((no_sanitize("address", "undefined"), noinline))
#define AH_INLINE __attribute__((no_sanitize("address", "undefined"), always_inline)) inline

/* clone(2) onto a stack of its own, the child running fn(arg) and
 * exiting with its result: the child cannot return through the caller's
 * frames, which are on another stack. */
static AH_RAW long ah_clone_on(unsigned long flags, char *stack_top, int (*fn)(void *),
			       void *arg)
{
	void **sp = (void **)((uintptr_t)stack_top & ~(uintptr_t)15);
	*--sp = arg;
	*--sp = (void *)fn;
	register long r10 __asm__("r10") = 0;
	register long r8 __asm__("r8") = 0;
	long ret;
	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "pop %%rax\n\t"
			 "pop %%rdi\n\t"
			 "call *%%rax\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov $60, %%eax\n\t" /* exit */
			 "syscall\n\t"
			 "hlt\n"
			 "1:"
			 : "=a"(ret)
			 : "a"((long)SYS_clone), "D"(flags), "S"(sp), "d"(0L), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return ret;
}

/* The helper waits while state is `st`. */
static AH_INLINE int ah_wait(struct run_ahead *ah, int st)
{
	int now;
	while ((now = __atomic_load_n(&ah->state, __ATOMIC_SEQ_CST)) == st)
		lsys6(SYS_futex, (long)&ah->state, FUTEX_WAIT, st, 0, 0, 0);
	return now;
}

/* The helper's word to the spare: state first, then the eventfd. */
static AH_INLINE void ah_tell(struct run_ahead *ah, int st, long answer)
{
	uint64_t one = 1;
	ah->answer = answer;
	__atomic_store_n(&ah->state, st, __ATOMIC_SEQ_CST);
	lsys(SYS_write, ah->evfd, &one, sizeof one);
}

/* The network namespace's maker: a child of the helper's, in the new
 * user namespace, born in a new network namespace. It brings the
 * loopback up and makes the proxy's listener there (as init would),
 * then leaves descriptors of both in the shared table. */
static AH_RAW int net_main(void *p)
{
	struct run_ahead *ah = p;
	static const char path[] = "/proc/self/ns/net";
	long fd = lsys6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return 0;
	struct ifreq ifr;
	for (size_t i = 0; i < sizeof ifr; i++)
		((volatile char *)&ifr)[i] = 0;
	ifr.ifr_name[0] = 'l';
	ifr.ifr_name[1] = 'o';
	long s = lsys(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	long r = s < 0 ? s : lsys(SYS_ioctl, s, SIOCGIFFLAGS, &ifr);
	if (r == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		r = lsys(SYS_ioctl, s, SIOCSIFFLAGS, &ifr);
	}
	if (s >= 0)
		lsys(SYS_close, s, 0, 0);
	long l = r < 0 ? r : lsys(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l >= 0) {
		int one = 1;
		struct sockaddr_in a;
		for (size_t i = 0; i < sizeof a; i++)
			((volatile char *)&a)[i] = 0;
		a.sin_family = AF_INET;
		a.sin_port = (uint16_t)((LCH_AHEAD_PROXY_PORT >> 8) | ((LCH_AHEAD_PROXY_PORT & 0xff) << 8));
		a.sin_addr.s_addr = (uint32_t)((127u) | (1u << 24)); /* 127.0.0.1, network order */
		if (lsys6(SYS_setsockopt, l, SOL_SOCKET, SO_REUSEADDR, (long)&one, sizeof one, 0) < 0 ||
		    lsys(SYS_bind, l, &a, sizeof a) < 0 || lsys(SYS_listen, l, 4096, 0) < 0) {
			lsys(SYS_close, l, 0, 0);
			l = -1;
		}
	}
	ah->listenfd = l >= 0 ? (int)l : -1;
	ah->netfd = (int)fd;
	return 0;
}

static AH_RAW int helper_main(void *p)
{
	struct run_ahead *ah = p;
	/* Dies with the spare; and if the spare is already gone, leaves. */
	lsys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0);
	if (lsys(SYS_getppid, 0, 0, 0) != ah->spare)
		return 0;
	if (ah->adopt) {
		/* Made by another spare's helper and never used: its owner's
		 * uid may enter it with every capability there. */
		long r = lsys(SYS_setns, ah->userfd, CLONE_NEWUSER, 0);
		if (r < 0) {
			ah_tell(ah, AH_FAILED, r);
			return 0;
		}
	} else if (ah_wait(ah, AH_STARTING) != AH_MAPPED) {
		return 0;
	}
	if (ah->netfd < 0) {
		long c = ah_clone_on(CLONE_VM | CLONE_FILES | CLONE_VFORK | CLONE_NEWNET,
				     ah->netstack_top, net_main, ah);
		if (c < 0) {
			ah_tell(ah, AH_FAILED, c);
			return 0;
		}
		lsys6(SYS_wait4, c, 0, __WALL, 0, 0, 0);
		if (ah->netfd < 0) {
			ah_tell(ah, AH_FAILED, -EIO);
			return 0;
		}
	}
	ah_tell(ah, AH_READY, 0);
	if (ah_wait(ah, AH_READY) != AH_ASKED)
		return 0;
	/* What init would have inherited from the run, cloned by it: its
	 * working directory, umask and signal mask (the resource limits the
	 * spare set with prlimit; the descriptors and the signal dispositions
	 * are shared). */
	unsigned long flags = ah->flags & ~(unsigned long)(CLONE_NEWUSER | CLONE_NEWNET | CSIGNAL);
	long r = lsys(SYS_fchdir, ah->cwd_fd, 0, 0);
	if (r == 0)
		lsys(SYS_umask, ah->umask, 0, 0);
	if (r == 0)
		r = lsys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&ah->sigmask, 0, 8, 0, 0);
	if (r == 0 && (ah->flags & CLONE_NEWNET))
		r = lsys(SYS_setns, ah->netfd, CLONE_NEWNET, 0);
	if (r < 0) {
		ah_tell(ah, AH_FAILED, r);
		return 0;
	}
	/* CLONE_PARENT: init is the run's child, and its exit signal is the
	 * helper's own (SIGCHLD). */
	long pid = -ENOSYS;
	bool born_in = false;
	if (ah->into_fd >= 0) {
		struct clone_args ca;
		for (size_t i = 0; i < sizeof ca; i++)
			((volatile char *)&ca)[i] = 0;
		ca.flags = flags | CLONE_PARENT | CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)ah->into_fd;
		pid = lsys(SYS_clone3, &ca, sizeof ca, 0);
		born_in = pid > 0;
	}
	if (pid < 0)
		pid = lsys6(SYS_clone, (long)(flags | CLONE_PARENT), 0, 0, 0, 0, 0);
	if (pid == 0) {
		/* init, in its own copy of the memory: the C library is its own
		 * from here on, as in any child cloned from the run. It lives
		 * on this stack, which AddressSanitizer must be told of. */
#ifdef AH_ASAN
		__sanitizer_start_switch_fiber(NULL, ah->stack_top - AH_STACK, AH_STACK);
		__sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
		ah->entry(ah->arg);
		lsys(SYS_exit, 125, 0, 0);
	}
	ah->born_in = born_in;
	ah_tell(ah, pid > 0 ? AH_ANSWERED : AH_FAILED, pid);
	return 0;
}

/* Waits for the helper to leave `st`; false when it died, failed or
 * took too long (then it is killed). */
static bool await_helper(struct run_ahead *ah, int st)
{
	struct pollfd p[2] = { { ah->evfd, POLLIN, 0 }, { ah->pidfd, POLLIN, 0 } };
	for (;;) {
		if (__atomic_load_n(&ah->state, __ATOMIC_SEQ_CST) != st)
			break;
		int n = poll(p, 2, AH_WAIT_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (p[1].revents && !p[0].revents)) {
			if (__atomic_load_n(&ah->state, __ATOMIC_SEQ_CST) != st)
				break;
			(void)syscall(SYS_pidfd_send_signal, ah->pidfd, SIGKILL, NULL, 0);
			return false;
		}
		uint64_t v;
		if (read(ah->evfd, &v, sizeof v) < 0 && errno != EAGAIN && errno != EINTR)
			return false;
	}
	int now = __atomic_load_n(&ah->state, __ATOMIC_SEQ_CST);
	return now != AH_FAILED;
}

/* The namespace at path, or (path NULL) the one fd holds. */
static bool ns_of(const char *path, int fd, dev_t *dev, ino_t *ino)
{
	struct stat st;
	if ((path ? stat(path, &st) : fstat(fd, &st)) != 0)
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

/* The listener of a set from the pool, checked before it is trusted:
 * a listening socket on 127.0.0.1:LCH_AHEAD_PROXY_PORT. */
static bool listener_ok(int fd)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof a;
	int on = 0;
	socklen_t olen = sizeof on;
	return getsockname(fd, (struct sockaddr *)&a, &alen) == 0 && alen == sizeof a &&
	       a.sin_family == AF_INET && a.sin_port == htons(LCH_AHEAD_PROXY_PORT) &&
	       a.sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
	       getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &olen) == 0 && on == 1;
}

struct run_ahead *lch_ahead_make(struct lch_nsset *reuse)
{
	size_t len = sizeof(struct run_ahead) + 4095 + AH_GUARD + AH_STACK + AH_GUARD + AH_NETSTACK;
	len &= ~(size_t)4095;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (m == MAP_FAILED) {
		lch_nsset_close(reuse);
		return NULL;
	}
	struct run_ahead *ah = (struct run_ahead *)m;
	memset(ah, 0, sizeof *ah);
	ah->maplen = len;
	ah->pidfd = ah->evfd = ah->userfd = ah->netfd = ah->listenfd = -1;
	ah->into_fd = ah->cwd_fd = ah->return_chan = -1;
	ah->spare = getpid();
	if (reuse && reuse->user >= 0 && reuse->net >= 0) {
		ah->adopt = true;
		ah->userfd = reuse->user;
		ah->netfd = reuse->net;
		ah->listenfd = reuse->listen >= 0 && listener_ok(reuse->listen) ? reuse->listen : -1;
		if (reuse->listen >= 0 && ah->listenfd < 0)
			close(reuse->listen);
		*reuse = (struct lch_nsset){ -1, -1, -1 };
	}
	lch_nsset_close(reuse);
	/* [state][guard][stack][guard][net stack], each stack growing down to
	 * a page no access may touch. */
	char *g1 = m + ((sizeof *ah + 4095) & ~(size_t)4095);
	char *g2 = g1 + AH_GUARD + AH_STACK;
	ah->stack_top = g2;
	ah->netstack_top = g2 + AH_GUARD + AH_NETSTACK;
	if (mprotect(g1, AH_GUARD, PROT_NONE) != 0 || mprotect(g2, AH_GUARD, PROT_NONE) != 0 ||
	    (ah->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (ah->adopt && (!ns_of(NULL, ah->userfd, &ah->user_dev, &ah->user_ino) ||
			   !ns_of(NULL, ah->netfd, &ah->net_dev, &ah->net_ino)))) {
		lch_ahead_drop(ah);
		return NULL;
	}
	/* Sharing memory, descriptors and dispositions; in a new user
	 * namespace unless it enters the one adopted. Its exit signal
	 * (SIGCHLD) is init's too (CLONE_PARENT). */
	unsigned long flags = CLONE_VM | CLONE_FILES | CLONE_SIGHAND | SIGCHLD;
	long h = ah_clone_on(ah->adopt ? flags : flags | CLONE_NEWUSER, ah->stack_top, helper_main,
			     ah);
	if (h < 0) {
		lch_ahead_drop(ah);
		return NULL;
	}
	ah->helper = (pid_t)h;
	ah->pidfd = (int)syscall(SYS_pidfd_open, ah->helper, 0);
	if (ah->pidfd < 0) {
		lch_ahead_drop(ah);
		return NULL;
	}
	if (!ah->adopt) {
		char err[256], path[64];
		snprintf(path, sizeof path, "/proc/%d/ns/user", (int)ah->helper);
		ah->userfd = open(path, O_RDONLY | O_CLOEXEC);
		if (ah->userfd < 0 || !ns_of(NULL, ah->userfd, &ah->user_dev, &ah->user_ino) ||
		    !lch_idmap_write(ah->helper, err, sizeof err)) {
			lch_ahead_drop(ah);
			return NULL;
		}
		__atomic_store_n(&ah->state, AH_MAPPED, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &ah->state, FUTEX_WAKE, 1, NULL, NULL, 0);
	}
	if (!await_helper(ah, ah->adopt ? AH_STARTING : AH_MAPPED) ||
	    (!ah->adopt && !ns_of(NULL, ah->netfd, &ah->net_dev, &ah->net_ino))) {
		lch_ahead_drop(ah);
		return NULL;
	}
	return ah;
}

void lch_ahead_return_to(struct run_ahead *ah, int chan)
{
	if (ah)
		ah->return_chan = chan;
}

bool lch_ahead_fits(const struct run_ahead *ah, bool net)
{
	return ah && __atomic_load_n(&ah->state, __ATOMIC_SEQ_CST) == AH_READY && net &&
	       ah->netfd >= 0;
}

/* Whether pid's namespace `name` is the one recorded. */
static bool in_ns(pid_t pid, const char *name, dev_t dev, ino_t ino)
{
	char path[64];
	dev_t d;
	ino_t i;
	snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, name);
	return ns_of(path, -1, &d, &i) && d == dev && i == ino;
}

/* The helper takes the run's resource limits: it was made with the
 * launcher's, and the run has the client's. Lowering is allowed to the
 * same user; raising a hard limit to root alone, as for the run itself. */
static bool copy_limits(pid_t to)
{
	for (int r = 0; r < RLIM_NLIMITS; r++) {
		struct rlimit mine, its;
		if (prlimit(0, (enum __rlimit_resource)r, NULL, &mine) != 0 ||
		    prlimit(to, (enum __rlimit_resource)r, NULL, &its) != 0)
			return false;
		if ((mine.rlim_cur != its.rlim_cur || mine.rlim_max != its.rlim_max) &&
		    prlimit(to, (enum __rlimit_resource)r, &mine, NULL) != 0)
			return false;
	}
	return true;
}

pid_t lch_ahead_clone(struct run_ahead *ah, unsigned long flags, int into_fd,
		      int (*entry)(void *), void *arg, bool *born_in, char *err,
		      size_t errlen)
{
	*born_in = false;
	bool net = (flags & CLONE_NEWNET) != 0;
	sigset_t mask;
	mode_t um = umask(0);
	umask(um);
	int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (!lch_ahead_fits(ah, net) || cwd < 0 || sigprocmask(SIG_SETMASK, NULL, &mask) != 0 ||
	    getpgid(ah->helper) != getpgrp() || getsid(ah->helper) != getsid(0) ||
	    !copy_limits(ah->helper)) {
		/* Not asked: the pair is untouched (and goes back at the drop). */
		if (cwd >= 0)
			close(cwd);
		return 0;
	}
	ah->flags = flags;
	ah->into_fd = into_fd;
	ah->cwd_fd = cwd;
	ah->umask = (unsigned)um;
	memcpy(&ah->sigmask, &mask, sizeof ah->sigmask);
	ah->entry = entry;
	ah->arg = arg;
	__atomic_store_n(&ah->state, AH_ASKED, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &ah->state, FUTEX_WAKE, 1, NULL, NULL, 0);
	bool answered = await_helper(ah, AH_ASKED);
	close(cwd);
	ah->cwd_fd = -1;
	if (!answered) {
		/* It failed before it could clone init (the reason in answer):
		 * the caller makes its own. Or it died or hung (and was
		 * killed), and an init it may have cloned shares the caller's
		 * pipes: nothing may start then. */
		if (__atomic_load_n(&ah->state, __ATOMIC_SEQ_CST) == AH_FAILED)
			return 0;
		snprintf(err, errlen, "the namespaces made ahead: the helper went away");
		return -1;
	}
	pid_t pid = (pid_t)ah->answer;
	*born_in = ah->born_in;
	/* Nothing starts unless init is in the namespaces made for it. */
	if (!in_ns(pid, "user", ah->user_dev, ah->user_ino) ||
	    !in_ns(pid, "net", ah->net_dev, ah->net_ino)) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		snprintf(err, errlen, "the sandbox's init is not in the namespaces made for it");
		return -1;
	}
	return pid;
}

int lch_ahead_take_listener(struct run_ahead *ah)
{
	int fd = ah ? ah->listenfd : -1;
	if (ah)
		ah->listenfd = -1;
	return fd;
}

int lch_ahead_renumber(struct run_ahead **pah, int at)
{
	struct run_ahead *ah = *pah;
	if (!ah)
		return at;
	int *fds[] = { &ah->pidfd, &ah->evfd, &ah->userfd, &ah->netfd, &ah->listenfd };
	enum { N = sizeof fds / sizeof *fds };
	int hi[N];
	bool ok = true;
	for (int i = 0; i < N; i++) {
		hi[i] = *fds[i] >= 0 ? fcntl(*fds[i], F_DUPFD_CLOEXEC, 64) : -1;
		ok = ok && (*fds[i] < 0 || hi[i] >= 0);
	}
	/* Through numbers above all of them, so that none overwrites another
	 * before it is copied; what is left above is the caller's to close. */
	for (int i = 0; i < N && ok; i++)
		if (hi[i] >= 0) {
			ok = dup3(hi[i], at, O_CLOEXEC) == at;
			*fds[i] = at++;
		}
	if (!ok) {
		lch_ahead_drop(ah);
		*pah = NULL;
	}
	return at;
}

/* An unused set back to the launcher, for its next spare: never
 * entered by a sandbox, it is as new. The network namespace goes last
 * and completes the set (lch_wire.h). */
static void give_back(struct run_ahead *ah)
{
	if (ah->return_chan < 0 || ah->userfd < 0 || ah->netfd < 0 ||
	    __atomic_load_n(&ah->state, __ATOMIC_SEQ_CST) != AH_READY)
		return;
	if (lch_note_send(ah->return_chan, LCH_NOTE_NS, LCH_NS_USER, ah->userfd) &&
	    (ah->listenfd < 0 ||
	     lch_note_send(ah->return_chan, LCH_NOTE_NS, LCH_NS_LISTEN, ah->listenfd)))
		(void)lch_note_send(ah->return_chan, LCH_NOTE_NS, LCH_NS_NET, ah->netfd);
}

void lch_ahead_drop(struct run_ahead *ah)
{
	if (!ah)
		return;
	give_back(ah);
	if (ah->pidfd >= 0) {
		/* Waiting, or on its way out: it is of no more use either way.
		 * The run's SIGCHLD handling may have reaped it already. */
		(void)syscall(SYS_pidfd_send_signal, ah->pidfd, SIGKILL, NULL, 0);
		siginfo_t si;
		while (syscall(SYS_waitid, 3 /* P_PIDFD */, ah->pidfd, &si, WEXITED | __WALL, NULL) < 0 &&
		       errno == EINTR)
			;
	} else if (ah->helper > 0) {
		kill(ah->helper, SIGKILL);
		while (waitpid(ah->helper, NULL, __WALL) < 0 && errno == EINTR)
			;
	}
	if (ah->pidfd >= 0)
		close(ah->pidfd);
	if (ah->evfd >= 0)
		close(ah->evfd);
	if (ah->userfd >= 0)
		close(ah->userfd);
	if (ah->netfd >= 0)
		close(ah->netfd);
	if (ah->listenfd >= 0)
		close(ah->listenfd);
	munmap(ah, ah->maplen);
}

#else

struct run_ahead *lch_ahead_make(struct lch_nsset *reuse)
{
	lch_nsset_close(reuse);
	return NULL;
}

void lch_ahead_return_to(struct run_ahead *ah, int chan)
{
	(void)ah;
	(void)chan;
}

bool lch_ahead_fits(const struct run_ahead *ah, bool net)
{
	(void)ah;
	(void)net;
	return false;
}

pid_t lch_ahead_clone(struct run_ahead *ah, unsigned long flags, int into_fd,
		      int (*entry)(void *), void *arg, bool *born_in, char *err,
		      size_t errlen)
{
	(void)ah;
	(void)flags;
	(void)into_fd;
	(void)entry;
	(void)arg;
	(void)err;
	(void)errlen;
	*born_in = false;
	return 0;
}

int lch_ahead_take_listener(struct run_ahead *ah)
{
	(void)ah;
	return -1;
}

int lch_ahead_renumber(struct run_ahead **ah, int at)
{
	(void)ah;
	return at;
}

void lch_ahead_drop(struct run_ahead *ah)
{
	(void)ah;
}

#endif
