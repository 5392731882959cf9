/*
 * prx_server.c - the proxy server object: its limits, creation and release.
 *
 * A connection is a slot in a fixed array sized by max_conns, so memory and
 * descriptors are bounded up front; creation checks that the descriptor
 * limit can hold them all rather than failing under load.
 */
#include "prx_server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prx_ev.h"
#include <sys/resource.h>
#include <unistd.h>

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
	    prx_fds_needed(L->max_conns) > rl.rlim_cur) {
		snprintf(err, errlen,
			 "proxy: %u connections need %llu descriptors, the limit is %llu "
			 "(raise it with ulimit -n or lower max connections)",
			 L->max_conns, prx_fds_needed(L->max_conns), (unsigned long long)rl.rlim_cur);
		return NULL;
	}
	struct prx_server *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->cfg = *cfg;
#ifndef PRX_EV_EPOLL
	s->cfg.limits.no_splice = true; /* no splice(2) here: the read/write relay */
#endif
	if (cfg->secret)
		snprintf(s->secret, sizeof s->secret, "%s", cfg->secret);
	s->cfg.secret = NULL;
	s->maxslots = L->max_conns;
	s->c = calloc(s->maxslots, sizeof *s->c);
	s->freelist = calloc(s->maxslots, sizeof *s->freelist);
	s->deny = calloc(DENY_MAX, sizeof *s->deny);
	if (!s->c || !s->freelist || !s->deny) {
		snprintf(err, errlen, "out of memory");
		prx_server_free(s);
		return NULL;
	}
	s->ev = prx_ev_new(err, errlen);
	if (!s->ev) {
		prx_server_free(s);
		return NULL;
	}
	s->dns = prx_dns_new(err, errlen);
	if (!s->dns) {
		prx_server_free(s);
		return NULL;
	}
	if (prx_ev_add(s->ev, prx_dns_fd(s->dns), PRX_EV_IN, TAG_DNS) != 0) {
		snprintf(err, errlen, "%s: %s", prx_ev_backend(), strerror(errno));
		prx_server_free(s);
		return NULL;
	}
	unsigned t = min_u(L->header_timeout_ms, min_u(L->connect_timeout_ms, L->idle_timeout_ms));
	s->tick = t / 4 < 10 ? 10 : t / 4 > 250 ? 250 : t / 4;
	return s;
}

void prx_server_free(struct prx_server *s)
{
	if (!s)
		return;
	s->now = prx_mono_ms();
	for (unsigned i = 0; s->c && i < s->nslots; i++) {
		if (s->c[i].st != ST_FREE) {
			s->c[i].reason = "proxy shutting down";
			prx_conn_close(s, &s->c[i]);
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
	prx_ev_free(s->ev);
	free(s->c);
	free(s->freelist);
	free(s->deny);
	free(s);
}
