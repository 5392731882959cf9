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
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "lch_ahead.h"
#include "lch_conn.h"
#include "lch_wire.h"

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
/* The socket pair's and the listening socket's descriptors in a spare;
 * those of the namespace set it was given (lch_ahead.h) come next. */
#define SPARE_CHAN 3
#define SPARE_LISTEN 4

void lch_spare_init(struct lch_spare *sp)
{
	sp->pid = 0;
	sp->pidfd = sp->chan = -1;
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

/* Whether a client is waiting: then what is not faulted in yet is left
 * to the run, which is waiting too. */
static bool asked(int listen_fd)
{
	struct pollfd p = { listen_fd, POLLIN, 0 };
	return poll(&p, 1, 0) != 0;
}

static void prefault(int listen_fd)
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
			if (asked(listen_fd))
				return;
			populate(at, hi - at > SPARE_STEP ? at + SPARE_STEP : hi, MADV_POPULATE_WRITE);
		}
	}
#endif
	if (asked(listen_fd))
		return;
	touch_stack();
	bool first = true;
	dl_iterate_phdr(populate_object, &first);
}

/* Waits for a client and accepts it; never returns without one (the
 * launcher closing the socket pair ends the spare). Spares wait on one
 * listening socket each with EPOLLEXCLUSIVE, so a client wakes one. */
static int take_client(int listen_fd)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event lev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.fd = listen_fd };
	struct epoll_event cev = { .events = EPOLLIN | EPOLLRDHUP, .data.fd = SPARE_CHAN };
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &lev) != 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, SPARE_CHAN, &cev) != 0)
		_exit(125);
	for (;;) {
		int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (c >= 0) {
			close(ep);
			return c;
		}
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			_exit(125);
		struct epoll_event ev;
		int n = epoll_wait(ep, &ev, 1, -1);
		if (n < 0 && errno != EINTR)
			_exit(125);
		if (n > 0 && ev.data.fd == SPARE_CHAN)
			_exit(0); /* ended by the launcher (EOF on the pair) */
	}
}

/* fd to `at` through a number above every other, or -1 when fd is -1. */
static int move_fd(int fd, int at)
{
	if (fd < 0)
		return -1;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, 16);
	if (hi < 0 || dup3(hi, at, O_CLOEXEC) != at)
		_exit(125);
	return at;
}

static _Noreturn void spare_main(const struct lch_ctx *cx, int chan, int listen_fd,
				 size_t bufsize, const struct lch_nsset *given)
{
	/* The launcher gone, the spare ends (the signal's default action),
	 * or, once it is a run and has blocked it, stops its sandbox at once
	 * and cleans up before it ends, as when its client leaves. */
	prctl(PR_SET_PDEATHSIG, LCH_ABORT_SIG);
	if (getppid() != cx->launcher)
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
	/* The pair to 3, the listening socket to 4 and the set given to 5
	 * on, each through numbers above all; then nothing else of the
	 * launcher's: other clients' connections, its runs' pidfds and
	 * pairs, its memfd, its signalfd, the sets it keeps for others. */
	int fds[] = { chan, listen_fd, given->user, given->net, given->listen };
	enum { N = sizeof fds / sizeof *fds };
	int hi[N];
	for (int i = 0; i < N; i++)
		if ((hi[i] = fds[i] >= 0 ? fcntl(fds[i], F_DUPFD_CLOEXEC, 16) : -1) < 0 && fds[i] >= 0)
			_exit(125);
	int at = SPARE_CHAN;
	for (int i = 0; i < N; i++)
		fds[i] = hi[i] >= 0 ? move_fd(hi[i], at++) : -1;
	if (syscall(SYS_close_range, (unsigned)at, ~0u, 0u) != 0)
		_exit(125);
	struct lch_nsset set = { fds[2], fds[3], fds[4] };
	uint8_t *buf = malloc(bufsize);
	if (!buf)
		_exit(125);
	prefault(SPARE_LISTEN);
	/* The sandbox's user and network namespaces (with the proxy's
	 * listener), made or taken from the set given, even when a client
	 * is waiting: another spare is likely ready for it, and one that
	 * rushed to take it without them would make its run the slower. */
	struct run_ahead *ahead = lch_ahead_make(&set);
	lch_nsset_close(&set);
	/* The compile of the request the launcher ran last comes with the
	 * fork (lch_kept): a run takes its copy of it for the same request
	 * (held.h). */
	int conn = take_client(SPARE_LISTEN);
	close(SPARE_LISTEN); /* one client per spare */
	if (!lch_note_send(SPARE_CHAN, LCH_NOTE_TAKEN, 0, -1)) {
		close(conn);
		_exit(0);
	}
	lch_conn_serve(cx, conn, SPARE_CHAN, buf, bufsize, ahead, cx->held);
}

bool lch_spare_start(struct lch_spare *sp, const struct lch_ctx *cx, int listen_fd,
		     size_t bufsize, struct lch_nsset *set)
{
	lch_spare_init(sp);
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
		lch_nsset_close(set);
		return false;
	}
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		close(pair[0]);
		spare_main(cx, pair[1], listen_fd, bufsize, set);
	}
	close(pair[1]);
	lch_nsset_close(set); /* the spare's now, or lost with a failed fork */
	int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
	if (pidfd < 0) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
		close(pair[0]);
		return false;
	}
	sp->pid = pid;
	sp->pidfd = pidfd;
	sp->chan = pair[0];
	return true;
}

void lch_spare_forget(struct lch_spare *sp)
{
	if (sp->chan >= 0)
		close(sp->chan);
	if (sp->pidfd >= 0)
		close(sp->pidfd);
	lch_spare_init(sp);
}

void lch_spare_end(struct lch_spare *sp)
{
	if (!sp->pid)
		return;
	(void)syscall(SYS_pidfd_send_signal, sp->pidfd, SIGKILL, NULL, 0);
	while (waitpid(sp->pid, NULL, 0) < 0 && errno == EINTR)
		;
	lch_spare_forget(sp);
}
