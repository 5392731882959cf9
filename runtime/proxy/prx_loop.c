/*
 * prx_loop.c - the proxy's event loop: one thread, level-triggered events
 * (epoll, or poll in portable builds: event/prx_ev.h),
 * and time-outs.
 *
 * Every registration carries the slot, a side and the slot's
 * generation: an event for a connection closed earlier in the same batch
 * (and possibly reused) is recognised and dropped. Time-outs are deadlines
 * on the slots, checked by a scan every tick (a quarter of the shortest
 * time-out), which keeps the hot path free of timer bookkeeping.
 */
#include "prx_server.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "prx_ev.h"
#include <time.h>

uint64_t prx_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int64_t prx_real_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
			prx_respond_text(s, c, 408, "error", "request head not received in time");
			break;
		case ST_RESOLVING:
			prx_respond_text(s, c, 504, "error", "name resolution timed out");
			break;
		case ST_CONNECTING:
			c->last_timeout = true;
			c->ai++;
			prx_connect_next(s, c);
			break;
		case ST_TUNNEL:
			c->reason = "idle time-out";
			prx_conn_close(s, c);
			break;
		default:
			prx_conn_close(s, c);
			break;
		}
	}
	if (s->accept_paused && s->now >= s->accept_resume) {
		for (int k = 0; k < s->nl; k++) {
			(void)prx_ev_mod(s->ev, s->l[k].fd, PRX_EV_IN, TAG_LISTEN + (uint64_t)k);
		}
		s->accept_paused = false;
	}
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
		if (ev & (PRX_EV_ERR | PRX_EV_HUP) && !(ev & PRX_EV_IN)) {
			c->reason = "client closed before a complete request";
			prx_conn_close(s, c);
		} else {
			prx_head_event(s, c);
		}
		break;
	case ST_RESOLVING:
		if (ev & (PRX_EV_ERR | PRX_EV_HUP)) {
			c->reason = "client closed";
			prx_conn_close(s, c);
		}
		break;
	case ST_CONNECTING:
		prx_connecting_event(s, c, side, ev);
		break;
	case ST_TUNNEL:
		prx_tunnel_event(s, c, side, ev);
		break;
	case ST_LINGER:
		if (side == SIDE_CLIENT)
			prx_linger_event(s, c);
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
	if (prx_ev_add(s->ev, stop_fd, PRX_EV_IN, TAG_STOP) != 0) {
		snprintf(err, errlen, "%s(stop): %s", prx_ev_backend(), strerror(errno));
		return false;
	}
	struct prx_ev_event evs[128];
	s->now = prx_mono_ms();
	s->next_scan = s->now + s->tick;
	bool stop = false;
	while (!stop) {
		int n = prx_ev_wait(s->ev, evs, 128, (int)s->tick);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: %s", prx_ev_backend(), strerror(errno));
			(void)prx_ev_del(s->ev, stop_fd);
			return false;
		}
		s->now = prx_mono_ms();
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].tag;
			if (tag == TAG_STOP) {
				/* The hook decides: a signal to forward is no
				 * reason to stop. */
				if (!s->cfg.on_stop_fd || s->cfg.on_stop_fd(s->cfg.stop_ctx))
					stop = true;
			}
			else if (tag == TAG_DNS)
				prx_dns_event(s);
			else if (tag >= TAG_LISTEN && tag < TAG_LISTEN + MAX_LISTEN)
				prx_accept_event(s, &s->l[tag - TAG_LISTEN]);
			else
				dispatch(s, tag, evs[i].events);
		}
		if (s->now >= s->next_scan) {
			scan_deadlines(s);
			s->next_scan = s->now + s->tick;
		}
	}
	(void)prx_ev_del(s->ev, stop_fd);
	return true;
}
