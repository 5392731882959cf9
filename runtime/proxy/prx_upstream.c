/*
 * prx_upstream.c - connecting upstream: each allowed address in turn, each
 * within the connect time-out, non-blocking; the first that answers carries
 * the tunnel.
 */
#include "prx_server.h"

#include <errno.h>
#include <poll.h>
#include "prx_ev.h"
#include <sys/socket.h>
#include <unistd.h>

void prx_connect_next(struct prx_server *s, struct conn *c)
{
	for (; c->ai < c->addrs.n; c->ai++) {
		if (c->ufd >= 0) {
			prx_ev_close(s->ev, c->ufd);
			c->ufd = -1;
			c->umask = 0;
		}
		const struct sockaddr *sa = (const struct sockaddr *)&c->addrs.a[c->ai];
		c->ufd = prx_socket_nb(sa->sa_family, SOCK_STREAM, 0);
		if (c->ufd < 0)
			break;
		int r = connect(c->ufd, sa, c->addrs.len[c->ai]);
		if (r != 0 && errno != EINPROGRESS) {
			c->last_timeout = false;
			continue;
		}
		if (r != 0) {
			/* On loopback the handshake is usually done by now;
			 * looking costs one syscall and saves a loop pass. */
			struct pollfd pf = { .fd = c->ufd, .events = POLLOUT };
			if (poll(&pf, 1, 0) == 1 && pf.revents == POLLOUT)
				r = 0;
		}
		if (r == 0) {
			int err = 0;
			socklen_t el = sizeof err;
			if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err) {
				c->last_timeout = false;
				continue;
			}
			/* Registered with the interest a fresh tunnel has. */
			if (!prx_ep_add(s, c, SIDE_UP, PRX_EV_IN))
				break;
			prx_tunnel_start(s, c);
			return;
		}
		if (!prx_ep_add(s, c, SIDE_UP, PRX_EV_OUT))
			break;
		c->st = ST_CONNECTING;
		c->deadline = s->now + s->cfg.limits.connect_timeout_ms;
		/* The client waits; its bytes stay in the kernel meanwhile. */
		if (!prx_ep_set(s, c, SIDE_CLIENT, 0)) {
			prx_conn_close(s, c);
			return;
		}
		return;
	}
	if (c->last_timeout)
		prx_conn_fail(s, c, 504, "upstream connect timed out");
	else
		prx_conn_fail(s, c, 502, "cannot connect to upstream");
}

void prx_connecting_event(struct prx_server *s, struct conn *c, unsigned side, uint32_t ev)
{
	if (side == SIDE_CLIENT) {
		/* Only HUP/ERR arrive here: the client left while we connect. */
		if (ev & (PRX_EV_HUP | PRX_EV_ERR)) {
			c->reason = "client closed";
			prx_conn_close(s, c);
		}
		return;
	}
	int err = 0;
	socklen_t el = sizeof err;
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
		err = errno;
	if (err == 0 && !(ev & PRX_EV_ERR)) {
		prx_tunnel_start(s, c);
		return;
	}
	c->last_timeout = false;
	c->ai++;
	prx_connect_next(s, c);
}
