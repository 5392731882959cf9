/*
 * prx_ev_epoll.c - the platform layer on Linux (see prx_ev.h): epoll,
 * eventfd, signalfd, accept4, getrandom. Empty in portable builds.
 */
#include "prx_ev.h"

#ifdef PRX_EV_EPOLL

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <unistd.h>

struct prx_ev {
	int fd;
};

const char *prx_ev_backend(void)
{
	return "epoll";
}

struct prx_ev *prx_ev_new(char *err, size_t errlen)
{
	struct prx_ev *ev = malloc(sizeof *ev);
	if (!ev) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ev->fd = epoll_create1(EPOLL_CLOEXEC);
	if (ev->fd < 0) {
		snprintf(err, errlen, "epoll_create1: %s", strerror(errno));
		free(ev);
		return NULL;
	}
	return ev;
}

void prx_ev_free(struct prx_ev *ev)
{
	if (!ev)
		return;
	close(ev->fd);
	free(ev);
}

static int ctl(struct prx_ev *ev, int op, int fd, uint32_t mask, uint64_t tag)
{
	struct epoll_event e = { .events = mask, .data.u64 = tag };
	return epoll_ctl(ev->fd, op, fd, &e);
}

int prx_ev_add(struct prx_ev *ev, int fd, uint32_t mask, uint64_t tag)
{
	return ctl(ev, EPOLL_CTL_ADD, fd, mask, tag);
}

int prx_ev_mod(struct prx_ev *ev, int fd, uint32_t mask, uint64_t tag)
{
	return ctl(ev, EPOLL_CTL_MOD, fd, mask, tag);
}

int prx_ev_del(struct prx_ev *ev, int fd)
{
	return epoll_ctl(ev->fd, EPOLL_CTL_DEL, fd, NULL);
}

void prx_ev_close(struct prx_ev *ev, int fd)
{
	(void)ev; /* epoll forgets a closed descriptor by itself */
	close(fd);
}

int prx_ev_wait(struct prx_ev *ev, struct prx_ev_event *out, int max, int timeout_ms)
{
	struct epoll_event evs[128];
	if (max > 128)
		max = 128;
	int n = epoll_wait(ev->fd, evs, max, timeout_ms);
	for (int i = 0; i < n; i++) {
		out[i].events = evs[i].events;
		out[i].tag = evs[i].data.u64;
	}
	return n;
}

int prx_socket_nb(int domain, int type, int protocol)
{
	return socket(domain, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
}

int prx_accept_nb(int fd, struct sockaddr *sa, socklen_t *len)
{
	return accept4(fd, sa, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

bool prx_notify_open(int fds[2], char *err, size_t errlen)
{
	fds[0] = fds[1] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (fds[0] < 0)
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
	return fds[0] >= 0;
}

void prx_notify_post(const int fds[2])
{
	uint64_t one = 1;
	/* An eventfd counter cannot be full at one per job. */
	if (write(fds[1], &one, sizeof one) < 0)
		(void)0;
}

void prx_notify_drain(const int fds[2])
{
	uint64_t cnt;
	if (read(fds[0], &cnt, sizeof cnt) < 0)
		(void)0; /* EAGAIN: already drained */
}

void prx_notify_close(int fds[2])
{
	if (fds[0] >= 0)
		close(fds[0]);
	fds[0] = fds[1] = -1;
}

bool prx_random(void *buf, size_t n)
{
	return getrandom(buf, n, 0) == (ssize_t)n;
}

int prx_sigfd_open(const int *sigs, size_t n, char *err, size_t errlen)
{
	sigset_t ss;
	sigemptyset(&ss);
	for (size_t i = 0; i < n; i++)
		sigaddset(&ss, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) != 0) {
		snprintf(err, errlen, "sigprocmask: %s", strerror(errno));
		return -1;
	}
	int fd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		snprintf(err, errlen, "signalfd: %s", strerror(errno));
	return fd;
}

int prx_sigfd_read(int fd)
{
	struct signalfd_siginfo si;
	if (read(fd, &si, sizeof si) != (ssize_t)sizeof si)
		return 0;
	return (int)si.ssi_signo;
}

#endif
