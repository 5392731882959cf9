/*
 * prx_accept.c - accepting: a new connection gets a slot, a name for the
 * log, and its first step. Accepting is batched, and paused for a tick when
 * descriptors run out instead of spinning on a readable listener.
 */
#include "prx_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static void reject_busy(int fd)
{
	static const char busy[] =
		"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
		"Content-Length: 46\r\nConnection: close\r\n\r\n"
		"cage proxy: 503: too many connections, retry\n";
	/* A fresh socket's send buffer takes this whole; if not, the client
	 * sees a close, which is what it would see anyway. */
	ssize_t n = send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)n;
	(void)shutdown(fd, SHUT_WR);
	close(fd);
}

void prx_accept_event(struct prx_server *s, struct listener *l)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* Out of descriptors: stop accepting for a tick
				 * instead of spinning on a readable listener. */
				for (int k = 0; k < s->nl; k++) {
					struct epoll_event e = { .events = 0,
								 .data.u64 = TAG_LISTEN + (uint64_t)k };
					(void)epoll_ctl(s->ep, EPOLL_CTL_MOD, s->l[k].fd, &e);
				}
				s->accept_paused = true;
				s->accept_resume = s->now + s->tick;
			}
			return;
		}
		if (s->nfree == 0) {
			reject_busy(fd);
			continue;
		}
		struct conn *c = &s->c[s->freelist[--s->nfree]];
		s->nactive++;
		c->st = ST_HEAD;
		c->cfd = fd;
		c->ufd = -1;
		c->need_auth = l->tcp;
		c->t0 = s->now;
		c->t0_real = prx_real_ms();
		c->deadline = s->now + s->cfg.limits.header_timeout_ms;
		if (l->tcp) {
			char ip[INET6_ADDRSTRLEN];
			prx_fmt_addr((struct sockaddr *)&ss, ip, sizeof ip);
			unsigned port = ss.ss_family == AF_INET6
						? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
						: ntohs(((struct sockaddr_in *)&ss)->sin_port);
			snprintf(c->client, sizeof c->client, "%s:%u", ip, port);
			int one = 1;
			(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		} else {
			snprintf(c->client, sizeof c->client, "unix");
		}
		if (!prx_ep_add(s, c, SIDE_CLIENT, EPOLLIN)) {
			prx_conn_close(s, c);
			continue;
		}
		/* Clients send the request right after connecting; it is
		 * often here already. */
		prx_head_event(s, c);
	}
}
