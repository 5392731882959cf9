/*
 * prx_accept.c - accepting: a new connection gets a slot, a name for the
 * log, and its first step. Accepting is batched, and paused for a tick when
 * descriptors run out instead of spinning on a readable listener.
 *
 * A connection on a forward listener skips HTTP: it is connected to the
 * listener's destination and relayed as a raw tunnel.
 */
#include "prx_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include "prx_ev.h"
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

/* A forwarded connection has no head: it goes straight to its one
 * destination, which the caller chose when it made the forward. */
static void forward_start(struct prx_server *s, struct conn *c, const struct listener *l)
{
	c->forward = true;
	snprintf(c->method, sizeof c->method, "FORWARD");
	const struct sockaddr *dst = (const struct sockaddr *)&l->dst;
	char ip[INET6_ADDRSTRLEN];
	prx_fmt_addr(dst, ip, sizeof ip);
	c->have_host = host_normalize(ip, strlen(ip), &c->host) == HOST_OK;
	c->port = prx_addr_port(dst);
	c->addrs.n = 1;
	memcpy(&c->addrs.a[0], &l->dst, l->dstlen);
	c->addrs.len[0] = l->dstlen;
	c->ai = 0;
	c->decision = "allow";
	prx_connect_next(s, c);
}

void prx_accept_event(struct prx_server *s, struct listener *l)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		int fd = prx_accept_nb(l->fd, (struct sockaddr *)&ss, &sl);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* Out of descriptors: stop accepting for a tick
				 * instead of spinning on a readable listener. */
				for (int k = 0; k < s->nl; k++) {
					(void)prx_ev_mod(s->ev, s->l[k].fd, 0,
							 TAG_LISTEN + (uint64_t)k);
				}
				s->accept_paused = true;
				s->accept_resume = s->now + s->tick;
			}
			return;
		}
		struct conn *c = prx_slot_take(s);
		if (!c) {
			if (l->forward)
				close(fd); /* no HTTP on a raw tunnel: a close says it */
			else
				reject_busy(fd);
			continue;
		}
		s->nactive++;
		c->st = ST_HEAD;
		c->cfd = fd;
		c->ufd = -1;
		c->need_auth = l->need_auth;
		c->t0 = s->now;
		c->t0_real = prx_real_ms();
		c->deadline = s->now + s->cfg.limits.header_timeout_ms;
		if (l->inet && (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)) {
			char ip[INET6_ADDRSTRLEN];
			prx_fmt_addr((struct sockaddr *)&ss, ip, sizeof ip);
			snprintf(c->client, sizeof c->client, "%s:%u", ip,
				 prx_addr_port((struct sockaddr *)&ss));
			int one = 1;
			(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		} else {
			snprintf(c->client, sizeof c->client, "unix");
		}
		if (!prx_ep_add(s, c, SIDE_CLIENT, PRX_EV_IN)) {
			prx_conn_close(s, c);
			continue;
		}
		if (l->forward)
			forward_start(s, c, l);
		else
			prx_head_event(s, c); /* the request is often here already */
	}
}
