/*
 * prx_request.c - a client's request head: reading it, deciding, resolving.
 *
 * The order of checks for a request: syntax (prx_http.c), the client's
 * secret (TCP listeners), host normalisation (host.h), the policy for
 * (host, port), resolution, and then the class of every resolved address:
 * internal addresses survive only if the name was an IP literal the policy
 * allowed, or `localhost` allowed for this port, or a rule names the address.
 */
#include "prx_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prx_ev.h"
#include <sys/socket.h>

/* Keeps only the addresses the policy lets us reach. */
/* NAME is normalized (lowercase, no trailing dot). */
static bool name_is_invalid(const char *name)
{
	static const char tld[] = "invalid";
	size_t n = strlen(name), t = sizeof tld - 1;
	return n >= t && strcmp(name + n - t, tld) == 0 && (n == t || name[n - t - 1] == '.');
}

static void filter_and_connect(struct prx_server *s, struct conn *c)
{
	struct prx_addrs keep = { .n = 0 };
	const struct sockaddr *first_bad = NULL;
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
		} else if (!first_bad) {
			first_bad = sa;
		}
	}
	if (keep.n == 0) {
		prx_deny_internal(s, c, first_bad);
		return;
	}
	c->addrs = keep;
	c->ai = 0;
	c->decision = "allow";
	prx_connect_next(s, c);
}

/* ---- requests ---- */

static void handle_request(struct prx_server *s, struct conn *c)
{
	struct prx_req *q = &c->req;
	snprintf(c->method, sizeof c->method, "%s", q->method);
	c->port = q->port;
	if (c->need_auth && !prx_http_auth_ok(q->auth, q->auth_len, s->secret)) {
		prx_respond(s, c, 407, "deny", "missing or wrong proxy credentials",
			    "Proxy-Authenticate: Basic realm=\"cage\"\r\n",
			    "cage proxy: 407: this proxy needs its per-run secret in "
			    "Proxy-Authorization (Basic, any user)\n");
		return;
	}
	enum host_err he = host_normalize(q->host, q->host_len, &c->host);
	if (he != HOST_OK) {
		snprintf(c->why, sizeof c->why, "bad host: %s", host_err_str(he));
		prx_respond_text(s, c, 400, "error", c->why);
		return;
	}
	c->have_host = true;

	struct prx_verdict v = { .allowed = false };
	s->cfg.policy.host(s->cfg.policy.ctx, &c->host, c->port, &v);
	snprintf(c->rule, sizeof c->rule, "%s", v.rule);
	if (!v.allowed) {
		prx_deny_by_rule(s, c, v.rule);
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
	} else if (name_is_invalid(c->host.name)) {
		/* RFC 6761: a .invalid name never resolves, so it is never asked
		 * of DNS (and a policy naming one cannot leak lookups). */
		snprintf(c->why, sizeof c->why, "cannot resolve %s: a .invalid name (RFC 6761)",
			 c->host.name);
		prx_respond_text(s, c, 502, "error", c->why);
		return;
	} else if (!prx_resolver_find(s->cfg.overrides, c->host.name, c->port, &c->addrs)) {
		int e = prx_dns_submit(s->dns, prx_tag_of(s, c, 0), c->host.name, c->port);
		if (e) {
			snprintf(c->why, sizeof c->why, "%s%s",
				 e == EAGAIN ? "too many name lookups in flight"
					     : "no resolver thread: ",
				 e == EAGAIN ? "" : strerror(e));
			prx_respond_text(s, c, 503, "error", c->why);
			return;
		}
		c->st = ST_RESOLVING;
		c->deadline = s->now + s->cfg.limits.connect_timeout_ms;
		if (!prx_ep_set(s, c, SIDE_CLIENT, 0))
			prx_conn_close(s, c);
		return;
	}
	filter_and_connect(s, c);
}

void prx_dns_event(struct prx_server *s)
{
	uint64_t tag;
	struct prx_addrs res;
	int gerr;
	char why[192];
	/* Bounded by the pool's slot count. */
	for (int i = 0; i < 256 && prx_dns_take(s->dns, &tag, &res, &gerr, why, sizeof why); i++) {
		unsigned slot = (unsigned)(tag & 0xffffffffu) >> 1;
		if (slot >= s->nslots)
			continue;
		struct conn *c = &s->c[slot];
		if (c->gen != (uint32_t)(tag >> 32) || c->st != ST_RESOLVING)
			continue; /* that connection is gone */
		if (gerr) {
			snprintf(c->why, sizeof c->why, "cannot resolve %s: %s", c->host.name,
				 why[0] ? why : gai_strerror(gerr));
			prx_respond_text(s, c, 502, "error", c->why);
			continue;
		}
		c->addrs = res;
		filter_and_connect(s, c);
	}
}

void prx_head_event(struct prx_server *s, struct conn *c)
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
				prx_respond_text(s, c, 503, "error", "out of memory");
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
			prx_conn_close(s, c);
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
			prx_conn_close(s, c);
		}
		return;
	}
	if (r == PRX_PARSE_ERROR) {
		if (c->req.method[0])
			snprintf(c->method, sizeof c->method, "%s", c->req.method);
		prx_respond_text(s, c, status, "error", why);
		return;
	}
	handle_request(s, c);
}
