/*
 * prx_tunnel.c - an established tunnel: both directions relayed (prx_relay.c)
 * until both have ended, a side fails, or it stays idle too long.
 *
 * A tunnel starts with the bytes already in user space: the "200" answer to
 * CONNECT, or a rewritten request head for plain HTTP, and whatever the
 * client sent after its head. A forwarded connection (a forward listener's)
 * starts with nothing queued.
 */
#include "prx_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include "prx_ev.h"
#include <sys/socket.h>

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
	/* A socket that hung up is out of the event set: no event will say it has
	 * more to read. What it sent before is all in our receive buffer
	 * (bounded by the kernel), so a direction stopped only by the byte
	 * budget goes on now; one waiting for bytes that cannot come is over. */
	for (int i = 0; i < 64 && c->udead && c->down.rd_wait && c->down.budget; i++)
		if (!pump_down(c)) {
			prx_conn_close(s, c);
			return;
		}
	for (int i = 0; i < 64 && c->cdead && c->up.rd_wait && c->up.budget; i++)
		if (!pump_up(c)) {
			prx_conn_close(s, c);
			return;
		}
	bool up_done = c->up.eof && c->up.shut && !c->up.inpipe && c->up.off == c->up.len;
	bool down_done = c->down.eof && c->down.shut && !c->down.inpipe &&
			 c->down.off == c->down.len;
	if (up_done && down_done) {
		prx_conn_close(s, c);
		return;
	}
	if ((c->cdead && c->up.rd_wait) || (c->udead && c->down.rd_wait)) {
		prx_conn_close(s, c);
		return;
	}
	uint32_t cm = (c->up.rd_wait ? PRX_EV_IN : 0) | (c->down.wr_wait ? PRX_EV_OUT : 0);
	uint32_t um = (c->down.rd_wait ? PRX_EV_IN : 0) | (c->up.wr_wait ? PRX_EV_OUT : 0);
	if ((!c->cdead && !prx_ep_set(s, c, SIDE_CLIENT, cm)) ||
	    (!c->udead && !prx_ep_set(s, c, SIDE_UP, um)))
		prx_conn_close(s, c);
}

void prx_tunnel_event(struct prx_server *s, struct conn *c, unsigned side, uint32_t ev)
{
	c->deadline = s->now + s->cfg.limits.idle_timeout_ms;
	if (ev & PRX_EV_ERR) {
		prx_conn_close(s, c);
		return;
	}
	if (ev & PRX_EV_HUP) {
		/* The peer is gone for good (reset, or a unix socket closed):
		 * nothing more can be written to it, but what it sent before
		 * still sits in our receive buffer and is relayed. Reads from a
		 * dead socket never block, so it leaves the event set (HUP cannot be
		 * masked and would spin the loop). */
		struct prx_dir *into = side == SIDE_CLIENT ? &c->down : &c->up;
		int fd = side == SIDE_CLIENT ? c->cfd : c->ufd;
		(void)prx_ev_del(s->ev, fd);
		*(side == SIDE_CLIENT ? &c->cdead : &c->udead) = true;
		if (!into->eof || into->inpipe || into->off < into->len) {
			into->eof = into->shut = true;
			into->inpipe = 0;
			into->off = into->len = 0;
		}
		ev |= PRX_EV_IN;
	}
	bool ok = true;
	if (side == SIDE_CLIENT) {
		if (ev & (PRX_EV_IN | PRX_EV_HUP))
			ok = pump_up(c);
		if (ok && (ev & PRX_EV_OUT))
			ok = pump_down(c);
	} else {
		if (ev & (PRX_EV_IN | PRX_EV_HUP))
			ok = pump_down(c);
		if (ok && (ev & PRX_EV_OUT))
			ok = pump_up(c);
	}
	if (!ok) {
		prx_conn_close(s, c);
		return;
	}
	tunnel_update(s, c);
}

/* Queues what the head leaves to send: the "200" or the rewritten request,
 * and the client's bytes after the head. Frees the head. */
static bool queue_head(struct conn *c)
{
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
	return ok;
}

void prx_tunnel_start(struct prx_server *s, struct conn *c)
{
	c->st = ST_TUNNEL;
	c->status = 200;
	c->decision = "allow";
	c->deadline = s->now + s->cfg.limits.idle_timeout_ms;
	/* A forwarded connection had no head: nothing is queued. */
	if (!c->forward && !queue_head(c)) {
		prx_respond_text(s, c, 500, "error", "out of memory");
		return;
	}
	if (!s->cfg.limits.no_splice) {
		prx_pipe_get(s, &c->up);
		prx_pipe_get(s, &c->down);
		c->up.grow_to = c->down.grow_to = s->cfg.limits.pipe_size;
	}
	int one = 1;
	(void)setsockopt(c->ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	/* Write what is queued now; for reading, wait for the event loop to say so.
	 * It is level-triggered, so bytes already waiting are reported at
	 * once, and the usual case (nothing yet) costs no syscall. */
	enum prx_pump r1 = prx_dir_flush(&c->down, c->cfd);
	enum prx_pump r2 = prx_dir_flush(&c->up, c->ufd);
	if (r1 == PRX_PUMP_ERROR || r2 == PRX_PUMP_ERROR) {
		prx_conn_close(s, c);
		return;
	}
	c->down.rd_wait = r1 == PRX_PUMP_DONE;
	c->up.rd_wait = r2 == PRX_PUMP_DONE;
	tunnel_update(s, c);
}
