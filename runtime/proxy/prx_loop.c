/*
 * prx_loop.c - the proxy's event loop: accepting, reading request heads,
 * deciding, connecting upstream, and driving tunnels, all on one thread with
 * level-triggered epoll.
 *
 * A connection is a slot in a fixed array sized by max_conns, so memory and
 * descriptors are bounded up front. Every epoll registration carries the
 * slot, a side and the slot's generation: an event for a connection closed
 * earlier in the same batch (and possibly reused) is recognised and dropped.
 * Time-outs are deadlines on the slots, checked by a scan every tick (a
 * quarter of the shortest time-out), which keeps the hot path free of timer
 * bookkeeping.
 *
 * Listeners are in prx_listen.c; the server and slot structures in
 * prx_server.h.
 *
 * The order of checks for a request: syntax (prx_http.c), the client's
 * secret (TCP listeners), host normalisation (host.h), the policy for
 * (host, port), resolution, and then the class of every resolved address:
 * internal addresses survive only if the name was an IP literal the policy
 * allowed, or `localhost` allowed for this port, or a rule names the address.
 */
#include "prx_http.h"
#include "prx_int.h"
#include "prx_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int64_t real_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void prx_limits_default(struct prx_limits *l)
{
	memset(l, 0, sizeof *l);
	l->max_head = 16384;
	l->max_line = 8192;
	l->max_headers = 100;
	l->header_timeout_ms = 10000;
	l->connect_timeout_ms = 10000;
	l->idle_timeout_ms = 300000;
	l->max_conns = 1024;
	l->pipe_pool = 64;
	l->pipe_size = 1u << 20;
}

static uint64_t tag_of(const struct prx_server *s, const struct conn *c, unsigned side)
{
	return ((uint64_t)c->gen << 32) | ((uint64_t)(c - s->c) << 1) | side;
}

/* ---- epoll interest ---- */

static bool ep_set(struct prx_server *s, struct conn *c, unsigned side, uint32_t mask)
{
	int fd = side == SIDE_CLIENT ? c->cfd : c->ufd;
	uint32_t *cur = side == SIDE_CLIENT ? &c->cmask : &c->umask;
	if (fd < 0 || *cur == mask)
		return true;
	struct epoll_event ev = { .events = mask, .data.u64 = tag_of(s, c, side) };
	/* Interest 0 still reports HUP/ERR; a registration with no interest is
	 * kept as such rather than deleted so that the fd stays known. */
	if (epoll_ctl(s->ep, EPOLL_CTL_MOD, fd, &ev) != 0)
		return false;
	*cur = mask;
	return true;
}

static bool ep_add(struct prx_server *s, struct conn *c, unsigned side, uint32_t mask)
{
	int fd = side == SIDE_CLIENT ? c->cfd : c->ufd;
	struct epoll_event ev = { .events = mask, .data.u64 = tag_of(s, c, side) };
	if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) != 0)
		return false;
	*(side == SIDE_CLIENT ? &c->cmask : &c->umask) = mask;
	return true;
}

/* ---- pipes ---- */

static void dir_get_pipe(struct prx_server *s, struct prx_dir *d)
{
	if (s->npool > 0) {
		s->npool--;
		d->pipe[0] = s->pool[s->npool][0];
		d->pipe[1] = s->pool[s->npool][1];
		return;
	}
	/* Without a pipe the direction falls back to read/write. */
	(void)prx_dir_use_pipe(d);
}

static void dir_release(struct prx_server *s, struct prx_dir *d)
{
	int avail = -1;
	if (d->pipe[0] >= 0 && s->npool < s->cfg.limits.pipe_pool &&
	    ioctl(d->pipe[0], FIONREAD, &avail) == 0 && avail == 0) {
		s->pool[s->npool][0] = d->pipe[0];
		s->pool[s->npool][1] = d->pipe[1];
		s->npool++;
		d->pipe[0] = d->pipe[1] = -1;
	}
	prx_dir_free(d);
}

/* ---- connection life ---- */

static void log_conn(struct prx_server *s, struct conn *c)
{
	struct prx_logrec r = {
		.start_real_ms = c->t0_real,
		.duration_ms = s->now - c->t0,
		.client = c->client,
		.method = c->method[0] ? c->method : NULL,
		.host = c->have_host ? c->host.name : NULL,
		.port = c->port,
		.decision = c->decision ? c->decision : "error",
		.status = c->status,
		.rule = c->rule,
		.reason = c->reason,
		.bytes_up = c->up.bytes,
		.bytes_down = c->down.bytes,
	};
	if (!prx_log_write(s->cfg.log_fd, &r) && !s->log_failed) {
		s->log_failed = true;
		fprintf(stderr, "cage proxy: warning: cannot write the access log: %s\n",
			strerror(errno));
	}
}

static void conn_close(struct prx_server *s, struct conn *c)
{
	if (c->st == ST_FREE)
		return;
	log_conn(s, c);
	if (c->cfd >= 0)
		close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	dir_release(s, &c->up);
	dir_release(s, &c->down);
	free(c->head);
	uint32_t gen = c->gen + 1;
	memset(c, 0, sizeof *c);
	c->gen = gen;
	c->cfd = c->ufd = -1;
	c->st = ST_FREE;
	prx_dir_init(&c->up);
	prx_dir_init(&c->down);
	s->freelist[s->nfree++] = (unsigned)(c - s->c);
	s->nactive--;
}

/* Answers the client with status and closes gently: the response is
 * written, our side shut, and the client's remaining bytes read and dropped
 * for a short while, so that the kernel does not reset the connection and
 * destroy the answer before the client has read it. */
static void respond(struct prx_server *s, struct conn *c, int status, const char *decision,
		    const char *reason, const char *extra, const char *body)
{
	char resp[2048];
	size_t n = prx_http_response(resp, sizeof resp, status, extra, body);
	c->status = status;
	c->decision = decision;
	c->reason = reason;
	if (c->ufd >= 0) {
		close(c->ufd);
		c->ufd = -1;
		c->umask = 0;
	}
	dir_release(s, &c->up);
	dir_release(s, &c->down);
	if (n == 0 || !prx_dir_queue(&c->down, resp, n)) {
		conn_close(s, c);
		return;
	}
	c->down.bytes = 0;
	c->st = ST_LINGER;
	c->deadline = s->now + LINGER_MS;
	c->lingered = 0;
	/* Push the answer now; most of the time it fits in the socket buffer. */
	enum prx_pump r = prx_dir_flush(&c->down, c->cfd);
	if (r == PRX_PUMP_ERROR) {
		conn_close(s, c);
		return;
	}
	if (r == PRX_PUMP_DONE)
		(void)shutdown(c->cfd, SHUT_WR);
	if (!ep_set(s, c, SIDE_CLIENT, r == PRX_PUMP_DONE ? EPOLLIN : EPOLLOUT))
		conn_close(s, c);
}

static void respond_text(struct prx_server *s, struct conn *c, int status, const char *decision,
			 const char *reason)
{
	char body[1024];
	snprintf(body, sizeof body, "cage proxy: %d %s: %s\n", status, prx_http_reason(status),
		 reason);
	respond(s, c, status, decision, reason, NULL, body);
}

static void linger_event(struct prx_server *s, struct conn *c)
{
	if (c->down.off < c->down.len) {
		enum prx_pump r = prx_dir_flush(&c->down, c->cfd);
		if (r == PRX_PUMP_ERROR) {
			conn_close(s, c);
			return;
		}
		if (r == PRX_PUMP_BLOCKED)
			return;
		(void)shutdown(c->cfd, SHUT_WR);
		if (!ep_set(s, c, SIDE_CLIENT, EPOLLIN))
			conn_close(s, c);
		return;
	}
	char sink[4096];
	for (int i = 0; i < 16; i++) {
		ssize_t n = recv(c->cfd, sink, sizeof sink, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0 || (c->lingered += (size_t)n) > LINGER_BYTES) {
			conn_close(s, c);
			return;
		}
	}
}

/* ---- tunnels ---- */

static bool pump_up(struct conn *c)
{
	return prx_dir_pump(&c->up, c->cfd, c->ufd, PUMP_BUDGET) != PRX_PUMP_ERROR;
}

static bool pump_down(struct conn *c)
{
	return prx_dir_pump(&c->down, c->ufd, c->cfd, PUMP_BUDGET) != PRX_PUMP_ERROR;
}

static void tunnel_update(struct prx_server *s, struct conn *c)
{
	/* A socket that hung up is out of epoll: no event will say it has
	 * more to read. What it sent before is all in our receive buffer
	 * (bounded by the kernel), so a direction stopped only by the byte
	 * budget goes on now; one waiting for bytes that cannot come is over. */
	for (int i = 0; i < 64 && c->udead && c->down.rd_wait && c->down.budget; i++)
		if (!pump_down(c)) {
			conn_close(s, c);
			return;
		}
	for (int i = 0; i < 64 && c->cdead && c->up.rd_wait && c->up.budget; i++)
		if (!pump_up(c)) {
			conn_close(s, c);
			return;
		}
	bool up_done = c->up.eof && c->up.shut && !c->up.inpipe && c->up.off == c->up.len;
	bool down_done = c->down.eof && c->down.shut && !c->down.inpipe &&
			 c->down.off == c->down.len;
	if (up_done && down_done) {
		conn_close(s, c);
		return;
	}
	if ((c->cdead && c->up.rd_wait) || (c->udead && c->down.rd_wait)) {
		conn_close(s, c);
		return;
	}
	uint32_t cm = (c->up.rd_wait ? EPOLLIN : 0) | (c->down.wr_wait ? EPOLLOUT : 0);
	uint32_t um = (c->down.rd_wait ? EPOLLIN : 0) | (c->up.wr_wait ? EPOLLOUT : 0);
	if ((!c->cdead && !ep_set(s, c, SIDE_CLIENT, cm)) ||
	    (!c->udead && !ep_set(s, c, SIDE_UP, um)))
		conn_close(s, c);
}

static void tunnel_event(struct prx_server *s, struct conn *c, unsigned side, uint32_t ev)
{
	c->deadline = s->now + s->cfg.limits.idle_timeout_ms;
	if (ev & EPOLLERR) {
		conn_close(s, c);
		return;
	}
	if (ev & EPOLLHUP) {
		/* The peer is gone for good (reset, or a unix socket closed):
		 * nothing more can be written to it, but what it sent before
		 * still sits in our receive buffer and is relayed. Reads from a
		 * dead socket never block, so it leaves epoll (HUP cannot be
		 * masked and would spin the loop). */
		struct prx_dir *into = side == SIDE_CLIENT ? &c->down : &c->up;
		int fd = side == SIDE_CLIENT ? c->cfd : c->ufd;
		(void)epoll_ctl(s->ep, EPOLL_CTL_DEL, fd, NULL);
		*(side == SIDE_CLIENT ? &c->cdead : &c->udead) = true;
		if (!into->eof || into->inpipe || into->off < into->len) {
			into->eof = into->shut = true;
			into->inpipe = 0;
			into->off = into->len = 0;
		}
		ev |= EPOLLIN;
	}
	bool ok = true;
	if (side == SIDE_CLIENT) {
		if (ev & (EPOLLIN | EPOLLHUP))
			ok = pump_up(c);
		if (ok && (ev & EPOLLOUT))
			ok = pump_down(c);
	} else {
		if (ev & (EPOLLIN | EPOLLHUP))
			ok = pump_down(c);
		if (ok && (ev & EPOLLOUT))
			ok = pump_up(c);
	}
	if (!ok) {
		conn_close(s, c);
		return;
	}
	tunnel_update(s, c);
}

static void tunnel_start(struct prx_server *s, struct conn *c)
{
	c->st = ST_TUNNEL;
	c->status = 200;
	c->decision = "allow";
	c->deadline = s->now + s->cfg.limits.idle_timeout_ms;
	const char *left = c->head + c->req.head_len;
	size_t nleft = c->hlen - c->req.head_len;
	bool ok = true;
	if (c->req.kind == PRX_CONNECT) {
		static const char est[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		ok = prx_dir_queue(&c->down, est, sizeof est - 1);
	} else {
		char *rw = malloc(c->req.head_len + 256);
		size_t n = rw ? prx_http_rewrite(c->head, &c->req, rw, c->req.head_len + 256) : 0;
		ok = n > 0 && prx_dir_queue(&c->up, rw, n);
		free(rw);
	}
	ok = ok && prx_dir_queue(&c->up, left, nleft);
	/* What goes upstream from the head on counts as sent; our own "200"
	 * does not count as received. */
	c->up.bytes = c->up.len;
	/* The head buffer is not needed any more: give it back, a thousand idle
	 * tunnels should cost a thousand slots, not a thousand heads. */
	free(c->head);
	c->head = NULL;
	c->hlen = c->hcap = 0;
	memset(&c->req, 0, sizeof c->req);
	if (!ok) {
		respond_text(s, c, 500, "error", "out of memory");
		return;
	}
	if (!s->cfg.limits.no_splice) {
		dir_get_pipe(s, &c->up);
		dir_get_pipe(s, &c->down);
		c->up.grow_to = c->down.grow_to = s->cfg.limits.pipe_size;
	}
	int one = 1;
	(void)setsockopt(c->ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	/* Write what is queued now; for reading, wait for epoll to say so.
	 * It is level-triggered, so bytes already waiting are reported at
	 * once, and the usual case (nothing yet) costs no syscall. */
	enum prx_pump r1 = prx_dir_flush(&c->down, c->cfd);
	enum prx_pump r2 = prx_dir_flush(&c->up, c->ufd);
	if (r1 == PRX_PUMP_ERROR || r2 == PRX_PUMP_ERROR) {
		conn_close(s, c);
		return;
	}
	c->down.rd_wait = r1 == PRX_PUMP_DONE;
	c->up.rd_wait = r2 == PRX_PUMP_DONE;
	tunnel_update(s, c);
}

/* ---- upstream ---- */

static void connect_next(struct prx_server *s, struct conn *c)
{
	for (; c->ai < c->addrs.n; c->ai++) {
		if (c->ufd >= 0) {
			close(c->ufd);
			c->ufd = -1;
			c->umask = 0;
		}
		const struct sockaddr *sa = (const struct sockaddr *)&c->addrs.a[c->ai];
		c->ufd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
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
			if (!ep_add(s, c, SIDE_UP, EPOLLIN))
				break;
			tunnel_start(s, c);
			return;
		}
		if (!ep_add(s, c, SIDE_UP, EPOLLOUT))
			break;
		c->st = ST_CONNECTING;
		c->deadline = s->now + s->cfg.limits.connect_timeout_ms;
		/* The client waits; its bytes stay in the kernel meanwhile. */
		if (!ep_set(s, c, SIDE_CLIENT, 0)) {
			conn_close(s, c);
			return;
		}
		return;
	}
	if (c->last_timeout)
		respond_text(s, c, 504, "error", "upstream connect timed out");
	else
		respond_text(s, c, 502, "error", "cannot connect to upstream");
}

static void connecting_event(struct prx_server *s, struct conn *c, unsigned side, uint32_t ev)
{
	if (side == SIDE_CLIENT) {
		/* Only HUP/ERR arrive here: the client left while we connect. */
		if (ev & (EPOLLHUP | EPOLLERR)) {
			c->reason = "client closed";
			conn_close(s, c);
		}
		return;
	}
	int err = 0;
	socklen_t el = sizeof err;
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
		err = errno;
	if (err == 0 && !(ev & EPOLLERR)) {
		tunnel_start(s, c);
		return;
	}
	c->last_timeout = false;
	c->ai++;
	connect_next(s, c);
}

/* Keeps only the addresses the policy lets us reach. */
static void filter_and_connect(struct prx_server *s, struct conn *c)
{
	struct prx_addrs keep = { .n = 0 };
	char first_bad[INET6_ADDRSTRLEN + 32] = "";
	for (int i = 0; i < c->addrs.n; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&c->addrs.a[i];
		enum host_class cl = host_addr_class(sa);
		bool ok = cl == HOST_CLASS_PUBLIC;
		if (!ok && c->host.kind != HOST_NAME) {
			/* An IP literal the policy allowed by an IP rule: that
			 * rule named this very address. */
			ok = true;
		} else if (!ok && cl == HOST_CLASS_LOOPBACK && strcmp(c->host.name, "localhost") == 0) {
			ok = true; /* a `localhost` rule for this port allowed it */
		} else if (!ok && s->cfg.policy.addr) {
			struct prx_verdict v = { .allowed = false };
			s->cfg.policy.addr(s->cfg.policy.ctx, sa, c->port, &v);
			ok = v.allowed;
		}
		if (ok) {
			keep.a[keep.n] = c->addrs.a[i];
			keep.len[keep.n++] = c->addrs.len[i];
		} else if (!first_bad[0]) {
			char ip[INET6_ADDRSTRLEN];
			prx_fmt_addr(sa, ip, sizeof ip);
			snprintf(first_bad, sizeof first_bad, "%s (%s)", ip, host_class_name(cl));
		}
	}
	if (keep.n == 0) {
		snprintf(c->why, sizeof c->why,
			 "%s resolves to %s, an internal address no rule allows", c->host.name,
			 first_bad);
		char body[1024];
		snprintf(body, sizeof body, "cage proxy: connection to %s:%u denied: %s\n",
			 c->host.name, c->port, c->why);
		respond(s, c, 403, "deny", c->why, NULL, body);
		return;
	}
	c->addrs = keep;
	c->ai = 0;
	c->decision = "allow";
	connect_next(s, c);
}

/* ---- requests ---- */

static void handle_request(struct prx_server *s, struct conn *c)
{
	struct prx_req *q = &c->req;
	snprintf(c->method, sizeof c->method, "%s", q->method);
	c->port = q->port;
	if (c->need_auth && !prx_http_auth_ok(q->auth, q->auth_len, s->secret)) {
		respond(s, c, 407, "deny", "missing or wrong proxy credentials",
			"Proxy-Authenticate: Basic realm=\"cage\"\r\n",
			"cage proxy: 407: this proxy needs its per-run secret in "
			"Proxy-Authorization (Basic, any user)\n");
		return;
	}
	enum host_err he = host_normalize(q->host, q->host_len, &c->host);
	if (he != HOST_OK) {
		snprintf(c->why, sizeof c->why, "bad host: %s", host_err_str(he));
		respond_text(s, c, 400, "error", c->why);
		return;
	}
	c->have_host = true;

	struct prx_verdict v = { .allowed = false };
	s->cfg.policy.host(s->cfg.policy.ctx, &c->host, c->port, &v);
	snprintf(c->rule, sizeof c->rule, "%s", v.rule);
	if (!v.allowed) {
		char body[1024];
		if (v.rule[0])
			snprintf(body, sizeof body,
				 "cage proxy: connection to %s:%u denied by the rule at %s\n",
				 c->host.name, c->port, v.rule);
		else
			snprintf(body, sizeof body,
				 "cage proxy: connection to %s:%u denied: no rule allows it "
				 "(default deny)\n",
				 c->host.name, c->port);
		respond(s, c, 403, "deny", v.rule[0] ? "denied by rule" : "no rule allows it",
			NULL, body);
		return;
	}

	c->addrs.n = 0;
	if (c->host.kind != HOST_NAME) {
		if (host_norm_sockaddr(&c->host, c->port, &c->addrs.a[0], &c->addrs.len[0]))
			c->addrs.n = 1;
	} else if (strcmp(c->host.name, "localhost") == 0) {
		/* Never asked of DNS or /etc/hosts: localhost is loopback. */
		struct sockaddr_in *a4 = (struct sockaddr_in *)&c->addrs.a[0];
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&c->addrs.a[1];
		memset(a4, 0, sizeof *a4);
		memset(a6, 0, sizeof *a6);
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)c->port);
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)c->port);
		a6->sin6_addr = in6addr_loopback;
		c->addrs.len[0] = sizeof *a4;
		c->addrs.len[1] = sizeof *a6;
		c->addrs.n = 2;
	} else if (!prx_resolver_find(s->cfg.overrides, c->host.name, c->port, &c->addrs)) {
		if (!prx_dns_submit(s->dns, tag_of(s, c, 0), c->host.name, c->port)) {
			respond_text(s, c, 503, "error", "too many name lookups in flight");
			return;
		}
		c->st = ST_RESOLVING;
		c->deadline = s->now + s->cfg.limits.connect_timeout_ms;
		if (!ep_set(s, c, SIDE_CLIENT, 0))
			conn_close(s, c);
		return;
	}
	filter_and_connect(s, c);
}

static void dns_event(struct prx_server *s)
{
	uint64_t tag;
	struct prx_addrs res;
	int gerr;
	/* Bounded by the pool's slot count. */
	for (int i = 0; i < 256 && prx_dns_take(s->dns, &tag, &res, &gerr); i++) {
		unsigned slot = (unsigned)(tag & 0xffffffffu) >> 1;
		if (slot >= s->nslots)
			continue;
		struct conn *c = &s->c[slot];
		if (c->gen != (uint32_t)(tag >> 32) || c->st != ST_RESOLVING)
			continue; /* that connection is gone */
		if (gerr) {
			snprintf(c->why, sizeof c->why, "cannot resolve %s: %s", c->host.name,
				 gai_strerror(gerr));
			respond_text(s, c, 502, "error", c->why);
			continue;
		}
		c->addrs = res;
		filter_and_connect(s, c);
	}
}

static void head_event(struct prx_server *s, struct conn *c)
{
	size_t cap = s->cfg.limits.max_head + 1;
	bool eof = false;
	/* Bounded: each pass reads into a buffer that stops at max_head + 1. */
	for (;;) {
		if (c->hlen == c->hcap) {
			if (c->hcap >= cap)
				break;
			size_t nc = c->hcap ? c->hcap * 4 : 1024;
			if (nc > cap)
				nc = cap;
			char *nb = realloc(c->head, nc);
			if (!nb) {
				respond_text(s, c, 503, "error", "out of memory");
				return;
			}
			c->head = nb;
			c->hcap = nc;
		}
		ssize_t n = recv(c->cfd, c->head + c->hlen, c->hcap - c->hlen, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			c->reason = "client connection error";
			conn_close(s, c);
			return;
		}
		if (n == 0) {
			eof = true; /* a complete head before EOF still counts */
			break;
		}
		c->hlen += (size_t)n;
		/* A complete head: stop; anything after it stays in the
		 * kernel until the tunnel reads it, in order. */
		if (memmem(c->head, c->hlen, "\r\n\r\n", 4))
			break;
	}
	struct prx_http_limits hl = { s->cfg.limits.max_head, s->cfg.limits.max_line,
				      s->cfg.limits.max_headers };
	int status;
	const char *why;
	enum prx_parse r = prx_http_parse(c->head, c->hlen, &hl, &c->req, &status, &why);
	if (r == PRX_PARSE_MORE) {
		if (eof) {
			c->reason = "client closed before a complete request";
			conn_close(s, c);
		}
		return;
	}
	if (r == PRX_PARSE_ERROR) {
		if (c->req.method[0])
			snprintf(c->method, sizeof c->method, "%s", c->req.method);
		respond_text(s, c, status, "error", why);
		return;
	}
	handle_request(s, c);
}

/* ---- accepting ---- */

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

static void accept_event(struct prx_server *s, struct listener *l)
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
		c->t0_real = real_ms();
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
		if (!ep_add(s, c, SIDE_CLIENT, EPOLLIN)) {
			conn_close(s, c);
			continue;
		}
		/* Clients send the request right after connecting; it is
		 * often here already. */
		head_event(s, c);
	}
}

/* ---- time-outs ---- */

static void scan_deadlines(struct prx_server *s)
{
	for (unsigned i = 0; i < s->nslots; i++) {
		struct conn *c = &s->c[i];
		if (c->st == ST_FREE || s->now < c->deadline)
			continue;
		switch (c->st) {
		case ST_HEAD:
			respond_text(s, c, 408, "error", "request head not received in time");
			break;
		case ST_RESOLVING:
			respond_text(s, c, 504, "error", "name resolution timed out");
			break;
		case ST_CONNECTING:
			c->last_timeout = true;
			c->ai++;
			connect_next(s, c);
			break;
		case ST_TUNNEL:
			c->reason = "idle time-out";
			conn_close(s, c);
			break;
		default:
			conn_close(s, c);
			break;
		}
	}
	if (s->accept_paused && s->now >= s->accept_resume) {
		for (int k = 0; k < s->nl; k++) {
			struct epoll_event e = { .events = EPOLLIN,
						 .data.u64 = TAG_LISTEN + (uint64_t)k };
			(void)epoll_ctl(s->ep, EPOLL_CTL_MOD, s->l[k].fd, &e);
		}
		s->accept_paused = false;
	}
}

/* ---- the server object ---- */

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

struct prx_server *prx_server_new(const struct prx_config *cfg, char *err, size_t errlen)
{
	const struct prx_limits *L = &cfg->limits;
	if (!cfg->policy.host) {
		snprintf(err, errlen, "proxy: no policy");
		return NULL;
	}
	if (L->max_conns == 0 || L->max_conns > (1u << 20) || L->max_head < 64 ||
	    L->max_head > (1u << 20) || L->max_line == 0 || L->max_headers == 0 ||
	    L->header_timeout_ms == 0 || L->connect_timeout_ms == 0 || L->idle_timeout_ms == 0 ||
	    L->pipe_pool > PIPE_POOL || L->pipe_size > (64u << 20)) {
		snprintf(err, errlen, "proxy: a limit is zero or out of range");
		return NULL;
	}
	if (cfg->secret && strlen(cfg->secret) >= sizeof(((struct prx_server *)0)->secret)) {
		snprintf(err, errlen, "proxy: secret too long");
		return NULL;
	}
	/* Each tunnel holds two sockets and two pipes. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)L->max_conns * 6 + 32 > rl.rlim_cur) {
		snprintf(err, errlen,
			 "proxy: %u connections need %llu descriptors, the limit is %llu "
			 "(raise it with ulimit -n or lower max connections)",
			 L->max_conns, (unsigned long long)L->max_conns * 6 + 32,
			 (unsigned long long)rl.rlim_cur);
		return NULL;
	}
	struct prx_server *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->cfg = *cfg;
	s->ep = -1;
	if (cfg->secret)
		snprintf(s->secret, sizeof s->secret, "%s", cfg->secret);
	s->cfg.secret = NULL;
	s->nslots = L->max_conns;
	s->c = calloc(s->nslots, sizeof *s->c);
	s->freelist = calloc(s->nslots, sizeof *s->freelist);
	if (!s->c || !s->freelist) {
		snprintf(err, errlen, "out of memory");
		prx_server_free(s);
		return NULL;
	}
	for (unsigned i = 0; i < s->nslots; i++) {
		s->c[i].cfd = s->c[i].ufd = -1;
		prx_dir_init(&s->c[i].up);
		prx_dir_init(&s->c[i].down);
		s->freelist[s->nfree++] = s->nslots - 1 - i;
	}
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->ep < 0) {
		snprintf(err, errlen, "epoll_create1: %s", strerror(errno));
		prx_server_free(s);
		return NULL;
	}
	s->dns = prx_dns_new(err, errlen);
	if (!s->dns) {
		prx_server_free(s);
		return NULL;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TAG_DNS };
	if (epoll_ctl(s->ep, EPOLL_CTL_ADD, prx_dns_fd(s->dns), &ev) != 0) {
		snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
		prx_server_free(s);
		return NULL;
	}
	unsigned t = min_u(L->header_timeout_ms, min_u(L->connect_timeout_ms, L->idle_timeout_ms));
	s->tick = t / 4 < 10 ? 10 : t / 4 > 250 ? 250 : t / 4;
	return s;
}

static void dispatch(struct prx_server *s, uint64_t tag, uint32_t ev)
{
	unsigned slot = (unsigned)(tag & 0xffffffffu) >> 1, side = (unsigned)tag & 1u;
	if (slot >= s->nslots)
		return;
	struct conn *c = &s->c[slot];
	if (c->st == ST_FREE || c->gen != (uint32_t)(tag >> 32))
		return; /* closed earlier in this batch */
	switch (c->st) {
	case ST_HEAD:
		if (ev & (EPOLLERR | EPOLLHUP) && !(ev & EPOLLIN)) {
			c->reason = "client closed before a complete request";
			conn_close(s, c);
		} else {
			head_event(s, c);
		}
		break;
	case ST_RESOLVING:
		if (ev & (EPOLLERR | EPOLLHUP)) {
			c->reason = "client closed";
			conn_close(s, c);
		}
		break;
	case ST_CONNECTING:
		connecting_event(s, c, side, ev);
		break;
	case ST_TUNNEL:
		tunnel_event(s, c, side, ev);
		break;
	case ST_LINGER:
		if (side == SIDE_CLIENT)
			linger_event(s, c);
		break;
	case ST_FREE:
		break;
	}
}

bool prx_server_run(struct prx_server *s, int stop_fd, char *err, size_t errlen)
{
	struct sigaction sa;
	if (sigaction(SIGPIPE, NULL, &sa) != 0 || sa.sa_handler != SIG_IGN) {
		snprintf(err, errlen, "proxy: SIGPIPE must be ignored by the caller");
		return false;
	}
	if (s->nl == 0) {
		snprintf(err, errlen, "proxy: nothing to listen on");
		return false;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TAG_STOP };
	if (epoll_ctl(s->ep, EPOLL_CTL_ADD, stop_fd, &ev) != 0) {
		snprintf(err, errlen, "epoll_ctl(stop): %s", strerror(errno));
		return false;
	}
	struct epoll_event evs[128];
	s->now = mono_ms();
	s->next_scan = s->now + s->tick;
	bool stop = false;
	while (!stop) {
		int n = epoll_wait(s->ep, evs, 128, (int)s->tick);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "epoll_wait: %s", strerror(errno));
			(void)epoll_ctl(s->ep, EPOLL_CTL_DEL, stop_fd, NULL);
			return false;
		}
		s->now = mono_ms();
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			if (tag == TAG_STOP)
				stop = true;
			else if (tag == TAG_DNS)
				dns_event(s);
			else if (tag >= TAG_LISTEN && tag < TAG_LISTEN + MAX_LISTEN)
				accept_event(s, &s->l[tag - TAG_LISTEN]);
			else
				dispatch(s, tag, evs[i].events);
		}
		if (s->now >= s->next_scan) {
			scan_deadlines(s);
			s->next_scan = s->now + s->tick;
		}
	}
	(void)epoll_ctl(s->ep, EPOLL_CTL_DEL, stop_fd, NULL);
	return true;
}

void prx_server_free(struct prx_server *s)
{
	if (!s)
		return;
	s->now = mono_ms();
	for (unsigned i = 0; s->c && i < s->nslots; i++) {
		if (s->c[i].st != ST_FREE) {
			s->c[i].reason = "proxy shutting down";
			conn_close(s, &s->c[i]);
		}
	}
	for (int i = 0; i < s->nl; i++)
		close(s->l[i].fd);
	for (unsigned i = 0; i < s->npool; i++) {
		close(s->pool[i][0]);
		close(s->pool[i][1]);
	}
	if (s->unix_path[0])
		(void)unlink(s->unix_path);
	prx_dns_free(s->dns);
	if (s->ep >= 0)
		close(s->ep);
	free(s->c);
	free(s->freelist);
	free(s);
}
