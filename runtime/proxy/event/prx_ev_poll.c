/*
 * prx_ev_poll.c - the portable platform layer (see prx_ev.h): poll(2)
 * over an array of registrations, a pipe for wake-ups, a self-pipe for
 * signals, accept + fcntl, getentropy. Built on macOS, and on Linux with
 * CAGE_PORTABLE_PROXY; empty otherwise.
 *
 * poll is O(registrations) per wait where epoll is O(ready): fine for one
 * agent's connections, and the price of running everywhere.
 */
#include "prx_ev.h"

#ifndef PRX_EV_EPOLL

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __APPLE__
#include <sys/random.h> /* getentropy */
#endif

struct prx_ev {
	struct pollfd *pfd;
	uint64_t *tag;
	size_t n, cap;
	int *at;      /* fd -> index in pfd, or -1 */
	size_t atcap;
	size_t start; /* where the next wait starts reporting: no fd starves */
};

const char *prx_ev_backend(void)
{
	return "poll";
}

struct prx_ev *prx_ev_new(char *err, size_t errlen)
{
	struct prx_ev *ev = calloc(1, sizeof *ev);
	if (!ev)
		snprintf(err, errlen, "out of memory");
	return ev;
}

void prx_ev_free(struct prx_ev *ev)
{
	if (!ev)
		return;
	free(ev->pfd);
	free(ev->tag);
	free(ev->at);
	free(ev);
}

static int index_of(const struct prx_ev *ev, int fd)
{
	return fd >= 0 && (size_t)fd < ev->atcap ? ev->at[fd] : -1;
}

int prx_ev_add(struct prx_ev *ev, int fd, uint32_t mask, uint64_t tag)
{
	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	if (index_of(ev, fd) >= 0) {
		errno = EEXIST;
		return -1;
	}
	if ((size_t)fd >= ev->atcap) {
		size_t cap = ev->atcap ? ev->atcap : 64;
		while (cap <= (size_t)fd)
			cap *= 2;
		int *at = realloc(ev->at, cap * sizeof *at);
		if (!at)
			return errno = ENOMEM, -1;
		for (size_t i = ev->atcap; i < cap; i++)
			at[i] = -1;
		ev->at = at;
		ev->atcap = cap;
	}
	if (ev->n == ev->cap) {
		size_t cap = ev->cap ? ev->cap * 2 : 64;
		struct pollfd *p = realloc(ev->pfd, cap * sizeof *p);
		if (!p)
			return errno = ENOMEM, -1;
		ev->pfd = p;
		uint64_t *t = realloc(ev->tag, cap * sizeof *t);
		if (!t)
			return errno = ENOMEM, -1;
		ev->tag = t;
		ev->cap = cap;
	}
	ev->pfd[ev->n] = (struct pollfd){ .fd = fd, .events = (short)mask };
	ev->tag[ev->n] = tag;
	ev->at[fd] = (int)ev->n++;
	return 0;
}

int prx_ev_mod(struct prx_ev *ev, int fd, uint32_t mask, uint64_t tag)
{
	int i = index_of(ev, fd);
	if (i < 0)
		return errno = ENOENT, -1;
	ev->pfd[i].events = (short)mask;
	ev->tag[i] = tag;
	return 0;
}

int prx_ev_del(struct prx_ev *ev, int fd)
{
	int i = index_of(ev, fd);
	if (i < 0)
		return errno = ENOENT, -1;
	size_t last = --ev->n;
	if ((size_t)i != last) {
		ev->pfd[i] = ev->pfd[last];
		ev->tag[i] = ev->tag[last];
		ev->at[ev->pfd[i].fd] = i;
	}
	ev->at[fd] = -1;
	return 0;
}

void prx_ev_close(struct prx_ev *ev, int fd)
{
	if (ev)
		(void)prx_ev_del(ev, fd);
	close(fd);
}

int prx_ev_wait(struct prx_ev *ev, struct prx_ev_event *out, int max, int timeout_ms)
{
	int r = poll(ev->pfd, (nfds_t)ev->n, timeout_ms);
	if (r <= 0)
		return r;
	int k = 0, nbad = 0;
	int bad[128];
	size_t n = ev->n;
	for (size_t j = 0; j < n && k < max; j++) {
		size_t i = (ev->start + j) % n;
		short re = ev->pfd[i].revents;
		if (!re)
			continue;
		/* NVAL: closed without prx_ev_close; report it as an error once
		 * and forget it, rather than spin. */
		if ((re & POLLNVAL) && nbad < 128) {
			bad[nbad++] = ev->pfd[i].fd;
			re = PRX_EV_ERR;
		}
		out[k].events = (uint32_t)(unsigned short)re;
		out[k++].tag = ev->tag[i];
	}
	for (int i = 0; i < nbad; i++)
		(void)prx_ev_del(ev, bad[i]);
	ev->start = ev->n ? (ev->start + 1) % ev->n : 0;
	return k;
}

static bool set_flags(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0 &&
	       fcntl(fd, F_SETFD, FD_CLOEXEC) == 0;
}

/* fd with O_NONBLOCK and FD_CLOEXEC set, or closed and -1 (errno kept). */
static int nonblocking(int fd)
{
	if (fd >= 0 && !set_flags(fd)) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int prx_socket_nb(int domain, int type, int protocol)
{
	return nonblocking(socket(domain, type, protocol));
}

int prx_accept_nb(int fd, struct sockaddr *sa, socklen_t *len)
{
	return nonblocking(accept(fd, sa, len));
}

static bool pipe_nb(int fds[2])
{
	if (pipe(fds) != 0)
		return false;
	if (set_flags(fds[0]) && set_flags(fds[1]))
		return true;
	int e = errno;
	close(fds[0]);
	close(fds[1]);
	errno = e;
	return false;
}

bool prx_notify_open(int fds[2], char *err, size_t errlen)
{
	if (pipe_nb(fds))
		return true;
	snprintf(err, errlen, "pipe: %s", strerror(errno));
	fds[0] = fds[1] = -1;
	return false;
}

void prx_notify_post(const int fds[2])
{
	char one = 1;
	/* A full pipe already says "something is ready". */
	if (write(fds[1], &one, 1) < 0)
		(void)0;
}

void prx_notify_drain(const int fds[2])
{
	char buf[256];
	while (read(fds[0], buf, sizeof buf) > 0)
		;
}

void prx_notify_close(int fds[2])
{
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	fds[0] = fds[1] = -1;
}

bool prx_random(void *buf, size_t n)
{
	unsigned char *p = buf;
	while (n > 0) {
		size_t k = n > 256 ? 256 : n; /* getentropy's limit per call */
		if (getentropy(p, k) != 0)
			return false;
		p += k;
		n -= k;
	}
	return true;
}

/* The write end of the signal self-pipe. A signal handler can reach
 * nothing else, so this is the one piece of process-wide state the layer
 * keeps; prx_sigfd_open sets it once. */
static volatile sig_atomic_t sig_wfd = -1;

static void on_signal(int sig)
{
	int e = errno;
	unsigned char b = (unsigned char)sig;
	if (write(sig_wfd, &b, 1) < 0)
		(void)0; /* a full pipe has enough wake-ups queued */
	errno = e;
}

int prx_sigfd_open(const int *sigs, size_t n, char *err, size_t errlen)
{
	int fds[2];
	if (sig_wfd >= 0) {
		snprintf(err, errlen, "signal pipe already open");
		return -1;
	}
	if (!pipe_nb(fds)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	sig_wfd = fds[1];
	sigset_t ss;
	sigemptyset(&ss);
	for (size_t i = 0; i < n; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sa.sa_flags = SA_RESTART | (sigs[i] == SIGCHLD ? SA_NOCLDSTOP : 0);
		sigemptyset(&sa.sa_mask);
		if (sigaction(sigs[i], &sa, NULL) != 0) {
			snprintf(err, errlen, "sigaction: %s", strerror(errno));
			return -1;
		}
		sigaddset(&ss, sigs[i]);
	}
	if (sigprocmask(SIG_UNBLOCK, &ss, NULL) != 0) {
		snprintf(err, errlen, "sigprocmask: %s", strerror(errno));
		return -1;
	}
	return fds[0];
}

int prx_sigfd_read(int fd)
{
	unsigned char b;
	return read(fd, &b, 1) == 1 ? b : 0;
}

#endif
