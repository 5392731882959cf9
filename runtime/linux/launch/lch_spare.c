/*
 * lch_spare.c - the launcher's spares (see lch_spare.h).
 *
 * The memory a spare faults in is what a run forked from the launcher
 * would first touch one page at a time, each a trap into the kernel
 * (about 1 us here for a fresh page, 2 us for a copy of the launcher's):
 * the heap malloc will serve from, the stack below the spare's loop, and
 * the program's own pages, which a fork does not map into the child. One
 * MADV_POPULATE_* call per range does it in the kernel at a third of the
 * cost, and off the launch's path. Without MADV_POPULATE_* (before Linux
 * 5.14) the calls fail and the spare only saves the fork.
 */
#include "lch_spare.h"

#include <errno.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* What a launch of examples/claude-code.cage touched (docs/launcher.md,
 * "Spares"), with room: 181 pages of heap and 29 of stack below the
 * spare's loop. A larger run faults in the rest itself. Each page costs
 * the spare about a microsecond, so this is not the whole heap. */
#define SPARE_HEAP (896u * 1024u)
#define SPARE_STEP (128u * 1024u)
#define SPARE_STACK (192u * 1024u)
/* The channel's descriptor in the spare. */
#define SPARE_CHAN 3

void lch_spare_init(struct lch_spare *sp)
{
	sp->pid = 0;
	sp->pidfd = sp->chan = -1;
	sp->cg.len = -1;
}

/* [lo, hi) widened to whole pages; failure leaves the pages to be
 * faulted in by the run, as without a spare. */
static void populate(uintptr_t lo, uintptr_t hi, int advice)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	lo &= ~(page - 1);
	hi = (hi + page - 1) & ~(page - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, advice);
}

/* The program's loaded segments: read-only ones mapped, writable ones
 * copied (past the part made read-only after relocation). */
static int populate_object(struct dl_phdr_info *info, size_t size, void *first)
{
	(void)size;
	uintptr_t relro_lo = 0, relro_hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_GNU_RELRO) {
			relro_lo = info->dlpi_addr + ph->p_vaddr;
			relro_hi = relro_lo + ph->p_memsz;
		}
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (!(ph->p_flags & PF_W)) {
			populate(lo, hi, MADV_POPULATE_READ);
			continue;
		}
		if (relro_hi > lo && relro_lo < hi)
			lo = relro_hi; /* before it: none, or part of its first page */
		populate(lo, hi, MADV_POPULATE_WRITE);
	}
	*(bool *)first = false;
	return 1; /* the program only: the first object listed */
}

/* volatile: the writes are the point, and must reach each page. */
static __attribute__((noinline)) void touch_stack(void)
{
	volatile char pad[SPARE_STACK];
	for (size_t i = 0; i < sizeof pad; i += 4096)
		pad[i] = 0;
}

/* Whether the launcher has handed the spare its request already: then
 * what is not faulted in yet is left to the run, which is waiting. */
static bool asked(int chan)
{
	struct pollfd p = { chan, POLLIN, 0 };
	return poll(&p, 1, 0) != 0;
}

static void prefault(int chan)
{
#ifdef __GLIBC__
	/* The main arena is the heap below the break, nearly all of it free
	 * to the run: malloc serves from its lowest free chunks first. In
	 * steps of SPARE_STEP, each about 30 us here. */
	struct mallinfo2 mi = mallinfo2();
	uintptr_t top = (uintptr_t)sbrk(0);
	if (top != (uintptr_t)-1 && mi.arena > 0 && mi.arena < top) {
		uintptr_t lo = top - mi.arena;
		uintptr_t hi = top - lo > SPARE_HEAP ? lo + SPARE_HEAP : top;
		for (uintptr_t at = lo; at < hi; at += SPARE_STEP) {
			if (asked(chan))
				return;
			populate(at, hi - at > SPARE_STEP ? at + SPARE_STEP : hi, MADV_POPULATE_WRITE);
		}
	}
#endif
	if (asked(chan))
		return;
	touch_stack();
	bool first = true;
	dl_iterate_phdr(populate_object, &first);
}

static _Noreturn void spare_main(int chan, pid_t launcher, size_t bufsize,
				 lch_spare_run_fn run, void *ctx)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != launcher)
		_exit(0);
	/* Out of the launcher's session and group: a ^C at its terminal is
	 * not for a run that starts later. Every signal unblocked, so that
	 * one sent to the spare acts now, not on that run. */
	if (setsid() < 0)
		_exit(125);
	sigset_t none;
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) != 0)
		_exit(125);
	if (chan != SPARE_CHAN && dup2(chan, SPARE_CHAN) != SPARE_CHAN)
		_exit(125);
	/* Nothing of the launcher's: its socket, other clients' connections,
	 * its runs' pidfds and its memfd. */
	if (syscall(SYS_close_range, SPARE_CHAN + 1u, ~0u, 0u) != 0)
		_exit(125);
	uint8_t *buf = malloc(bufsize);
	if (!buf)
		_exit(125);
	prefault(SPARE_CHAN);
	union {
		char buf[CMSG_SPACE(sizeof(int) * LCH_SPARE_NFDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf, bufsize };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	ssize_t n;
	while ((n = recvmsg(SPARE_CHAN, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		_exit(0); /* ended by the launcher */
	int fds[LCH_SPARE_NFDS];
	size_t nfds = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k && nfds < LCH_SPARE_NFDS; i++)
			memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	/* The launcher sends exactly this; anything else is not a run. */
	if (nfds != LCH_SPARE_NFDS || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		_exit(125);
	close(SPARE_CHAN);
	run(ctx, buf, (size_t)n, fds);
	_exit(125);
}

bool lch_spare_start(struct lch_spare *sp, size_t bufsize, lch_spare_run_fn run, void *ctx)
{
	lch_spare_init(sp);
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
		return false;
	(void)lch_cgroup_read(&sp->cg); /* unread: the spare is never given */
	pid_t launcher = getpid();
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		close(pair[0]);
		spare_main(pair[1], launcher, bufsize, run, ctx);
	}
	close(pair[1]);
	int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
	if (pidfd < 0) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
		close(pair[0]);
		sp->cg.len = -1;
		return false;
	}
	sp->pid = pid;
	sp->pidfd = pidfd;
	sp->chan = pair[0];
	return true;
}

bool lch_spare_give(struct lch_spare *sp, const uint8_t *req, size_t n,
		    const int fds[LCH_SPARE_NFDS], pid_t *pid, int *pidfd)
{
	if (!sp->pid)
		return false;
	union {
		char buf[CMSG_SPACE(sizeof(int) * LCH_SPARE_NFDS)];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct iovec iov = { (void *)req, n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * LCH_SPARE_NFDS);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * LCH_SPARE_NFDS);
	/* The spare's queue is empty and the request fits it: a send that
	 * would wait, or fails (EPIPE: the spare is gone), is a spare lost. */
	ssize_t k;
	while ((k = sendmsg(sp->chan, &mh, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (k != (ssize_t)n) {
		lch_spare_end(sp);
		return false;
	}
	/* What was sent stays queued for the spare after this end closes. */
	close(sp->chan);
	*pid = sp->pid;
	*pidfd = sp->pidfd;
	lch_spare_init(sp);
	return true;
}

void lch_spare_end(struct lch_spare *sp)
{
	if (!sp->pid)
		return;
	close(sp->chan);
	(void)syscall(SYS_pidfd_send_signal, sp->pidfd, SIGKILL, NULL, 0);
	while (waitpid(sp->pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(sp->pidfd);
	lch_spare_init(sp);
}
