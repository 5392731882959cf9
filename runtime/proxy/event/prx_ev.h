/*
 * prx_ev.h - the proxy's platform layer: the one place that knows which
 * kernel interfaces the proxy runs on.
 *
 *   Linux (default):  epoll, eventfd, signalfd, accept4, getrandom, and
 *                     splice(2) through pipes in the relay;
 *   portable:         poll(2), a pipe for wake-ups, a self-pipe for
 *                     signals, accept + fcntl, getentropy, and the
 *                     read/write relay. Used on macOS, and on Linux when
 *                     built with -DCAGE_PORTABLE_PROXY=ON (so the tests run
 *                     it here too).
 *
 * The event set is level-triggered on both, reports ERR and HUP whatever
 * the interest, and carries a 64-bit tag per descriptor. epoll forgets a
 * descriptor when it is closed; poll does not, so every close of a
 * registered descriptor goes through prx_ev_close().
 */
#ifndef CAGE_PRX_EV_H
#define CAGE_PRX_EV_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#if defined(__linux__) && !defined(CAGE_PORTABLE_PROXY)
#define PRX_EV_EPOLL 1
#include <sys/epoll.h>
#define PRX_EV_IN EPOLLIN
#define PRX_EV_OUT EPOLLOUT
#define PRX_EV_ERR EPOLLERR
#define PRX_EV_HUP EPOLLHUP
#else
#include <poll.h>
#define PRX_EV_IN POLLIN
#define PRX_EV_OUT POLLOUT
#define PRX_EV_ERR POLLERR
#define PRX_EV_HUP POLLHUP
#endif

/* SIGPIPE is ignored by contract (prx.h); where the flag is missing the
 * send simply goes without it. */
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

struct prx_ev;

struct prx_ev_event {
	uint32_t events;
	uint64_t tag;
};

/* "epoll" or "poll": what this build runs on (for messages and tests). */
const char *prx_ev_backend(void);

struct prx_ev *prx_ev_new(char *err, size_t errlen);
void prx_ev_free(struct prx_ev *ev);
/* 0 or -1 with errno, as epoll_ctl. */
int prx_ev_add(struct prx_ev *ev, int fd, uint32_t mask, uint64_t tag);
int prx_ev_mod(struct prx_ev *ev, int fd, uint32_t mask, uint64_t tag);
int prx_ev_del(struct prx_ev *ev, int fd);
/* Forgets fd if registered, then closes it. */
void prx_ev_close(struct prx_ev *ev, int fd);
/* Up to max events, waiting at most timeout_ms; -1 with errno. */
int prx_ev_wait(struct prx_ev *ev, struct prx_ev_event *out, int max, int timeout_ms);

/* ---- descriptors ---- */

/* A non-blocking, close-on-exec socket / accepted connection. */
int prx_socket_nb(int domain, int type, int protocol);
int prx_accept_nb(int fd, struct sockaddr *sa, socklen_t *len);

/* A wake-up channel for worker threads: post from any thread, drain in
 * the loop. fds[0] is polled for reading. An eventfd (fds[0] == fds[1])
 * or a non-blocking pipe. */
bool prx_notify_open(int fds[2], char *err, size_t errlen);
void prx_notify_post(const int fds[2]);
void prx_notify_drain(const int fds[2]);
void prx_notify_close(int fds[2]);

/* Random bytes from the kernel; false on failure. */
bool prx_random(void *buf, size_t n);

/* ---- signals ---- */

/* A descriptor that becomes readable when one of sigs arrives (signalfd
 * with the signals blocked, or a self-pipe written by a handler). One per
 * process. */
int prx_sigfd_open(const int *sigs, size_t n, char *err, size_t errlen);
/* The next pending signal, or 0 when none is left. */
int prx_sigfd_read(int fd);

#endif
