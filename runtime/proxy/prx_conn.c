/*
 * prx_conn.c - what every connection state needs: its event interest, its
 * relay pipes (pooled), answering the client, and closing with one access
 * log record.
 *
 * An answer is written and the connection then lingers: our side is shut
 * and the client's remaining bytes are read and dropped for a short while,
 * so the kernel does not reset the connection and destroy the answer before
 * the client has read it.
 */
#include "prx_server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prx_ev.h"
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

uint64_t prx_tag_of(const struct prx_server *s, const struct conn *c, unsigned side)
{
	return ((uint64_t)c->gen << 32) | ((uint64_t)(c - s->c) << 1) | side;
}

/* ---- event interest ---- */

bool prx_ep_set(struct prx_server *s, struct conn *c, unsigned side, uint32_t mask)
{
	int fd = side == SIDE_CLIENT ? c->cfd : c->ufd;
	uint32_t *cur = side == SIDE_CLIENT ? &c->cmask : &c->umask;
	if (fd < 0 || *cur == mask)
		return true;
	/* Interest 0 still reports HUP/ERR; a registration with no interest is
	 * kept as such rather than deleted so that the fd stays known. */
	if (prx_ev_mod(s->ev, fd, mask, prx_tag_of(s, c, side)) != 0)
		return false;
	*cur = mask;
	return true;
}

bool prx_ep_add(struct prx_server *s, struct conn *c, unsigned side, uint32_t mask)
{
	int fd = side == SIDE_CLIENT ? c->cfd : c->ufd;
	if (prx_ev_add(s->ev, fd, mask, prx_tag_of(s, c, side)) != 0)
		return false;
	*(side == SIDE_CLIENT ? &c->cmask : &c->umask) = mask;
	return true;
}

/* ---- pipes ---- */

void prx_pipe_get(struct prx_server *s, struct prx_dir *d)
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

void prx_pipe_release(struct prx_server *s, struct prx_dir *d)
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

static void slot_reset(struct conn *c, uint32_t gen)
{
	memset(c, 0, sizeof *c);
	c->gen = gen;
	c->cfd = c->ufd = -1;
	c->st = ST_FREE;
	prx_dir_init(&c->up);
	prx_dir_init(&c->down);
}

void prx_conn_close(struct prx_server *s, struct conn *c)
{
	if (c->st == ST_FREE)
		return;
	log_conn(s, c);
	if (c->cfd >= 0)
		prx_ev_close(s->ev, c->cfd);
	if (c->ufd >= 0)
		prx_ev_close(s->ev, c->ufd);
	prx_pipe_release(s, &c->up);
	prx_pipe_release(s, &c->down);
	free(c->head);
	slot_reset(c, c->gen + 1);
	s->freelist[s->nfree++] = (unsigned)(c - s->c);
	s->nactive--;
}

/* A free slot: a released one first (its memory is warm), else the next
 * never-used one; NULL when all max_conns are in use. */
struct conn *prx_slot_take(struct prx_server *s)
{
	if (s->nfree > 0)
		return &s->c[s->freelist[--s->nfree]];
	if (s->nslots == s->maxslots)
		return NULL;
	struct conn *c = &s->c[s->nslots++];
	slot_reset(c, 0);
	return c;
}

/* Answers the client with status and closes gently: the response is
 * written, our side shut, and the client's remaining bytes read and dropped
 * for a short while, so that the kernel does not reset the connection and
 * destroy the answer before the client has read it. */
void prx_respond(struct prx_server *s, struct conn *c, int status, const char *decision,
		 const char *reason, const char *extra, const char *body)
{
	char resp[2048];
	size_t n = prx_http_response(resp, sizeof resp, status, extra, body);
	c->status = status;
	c->decision = decision;
	c->reason = reason;
	if (c->ufd >= 0) {
		prx_ev_close(s->ev, c->ufd);
		c->ufd = -1;
		c->umask = 0;
	}
	prx_pipe_release(s, &c->up);
	prx_pipe_release(s, &c->down);
	if (n == 0 || !prx_dir_queue(&c->down, resp, n)) {
		prx_conn_close(s, c);
		return;
	}
	c->down.bytes = 0;
	c->st = ST_LINGER;
	c->deadline = s->now + LINGER_MS;
	c->lingered = 0;
	/* Push the answer now; most of the time it fits in the socket buffer. */
	enum prx_pump r = prx_dir_flush(&c->down, c->cfd);
	if (r == PRX_PUMP_ERROR) {
		prx_conn_close(s, c);
		return;
	}
	if (r == PRX_PUMP_DONE)
		(void)shutdown(c->cfd, SHUT_WR);
	if (!prx_ep_set(s, c, SIDE_CLIENT, r == PRX_PUMP_DONE ? PRX_EV_IN : PRX_EV_OUT))
		prx_conn_close(s, c);
}

void prx_respond_text(struct prx_server *s, struct conn *c, int status, const char *decision,
		      const char *reason)
{
	char body[1024];
	snprintf(body, sizeof body, "cage proxy: %d %s: %s\n", status, prx_http_reason(status),
		 reason);
	prx_respond(s, c, status, decision, reason, NULL, body);
}

void prx_conn_fail(struct prx_server *s, struct conn *c, int status, const char *reason)
{
	if (!c->forward) {
		prx_respond_text(s, c, status, "error", reason);
		return;
	}
	c->status = status;
	c->decision = "error";
	c->reason = reason;
	prx_conn_close(s, c);
}

void prx_linger_event(struct prx_server *s, struct conn *c)
{
	if (c->down.off < c->down.len) {
		enum prx_pump r = prx_dir_flush(&c->down, c->cfd);
		if (r == PRX_PUMP_ERROR) {
			prx_conn_close(s, c);
			return;
		}
		if (r == PRX_PUMP_BLOCKED)
			return;
		(void)shutdown(c->cfd, SHUT_WR);
		if (!prx_ep_set(s, c, SIDE_CLIENT, PRX_EV_IN))
			prx_conn_close(s, c);
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
			prx_conn_close(s, c);
			return;
		}
	}
}
