/*
 * prx_testproxy.c - runs the proxy library with rules given on the command
 * line instead of a compiled policy, so the proxy's integration tests and
 * benchmarks exercise exactly libcage's prx_* code without depending on the
 * compiler. (cagerun --proxy-only is the same server with a real table.)
 *
 *   prx_testproxy [--rule allow|deny:PATTERN:PORTS]... [--listen A:P]
 *                 [--socket PATH] [--secret S] [--resolve h:p:a]...
 *                 [--log FILE] [--limit name=value]... [--no-splice]
 *
 * PATTERN: exact name, *.suffix, *, an IPv4 literal or [IPv6]; PORTS: N,
 * N-M or *. Last matching rule wins, nothing matching denies; name rules
 * never match IP literals. On start it prints "listening ADDR SECRET" (or
 * "listening unix PATH") on stdout, then serves until SIGTERM/SIGINT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prx.h"
#include "prx_ev.h"

#define MAX_RULES 64

struct rule {
	bool allow;
	struct host_norm h;
	bool any, suffix;
	unsigned lo, hi;
	char where[32];
};

struct rules {
	struct rule r[MAX_RULES];
	int n;
};

static bool name_match(const struct rule *r, const struct host_norm *h)
{
	if (r->h.kind != HOST_NAME || h->kind != HOST_NAME)
		return r->h.kind == h->kind && r->h.kind != HOST_NAME &&
		       memcmp(r->h.addr, h->addr, r->h.kind == HOST_IPV4 ? 4 : 16) == 0;
	if (r->any) /* as in the language: every name but localhost */
		return strcmp(h->name, "localhost") != 0;
	if (r->suffix)
		return h->len > r->h.len && h->name[h->len - r->h.len - 1] == '.' &&
		       strcmp(h->name + h->len - r->h.len, r->h.name) == 0;
	return strcmp(r->h.name, h->name) == 0;
}

static void decide(const struct rules *rs, const struct host_norm *h, unsigned port, bool loopback,
		   struct prx_verdict *v)
{
	v->allowed = false;
	v->rule[0] = 0;
	for (int i = 0; i < rs->n; i++) {
		const struct rule *r = &rs->r[i];
		if (port < r->lo || port > r->hi)
			continue;
		bool m = loopback ? (r->h.kind == HOST_NAME && !r->any && !r->suffix &&
				     strcmp(r->h.name, "localhost") == 0) || name_match(r, h)
				  : name_match(r, h);
		if (m) {
			v->allowed = r->allow;
			snprintf(v->rule, sizeof v->rule, "%s", r->where);
		}
	}
}

static void cb_host(void *ctx, const struct host_norm *h, unsigned port, struct prx_verdict *v)
{
	decide(ctx, h, port, false, v);
}

static void cb_addr(void *ctx, const struct sockaddr *sa, unsigned port, struct prx_verdict *v)
{
	struct host_norm h;
	memset(&h, 0, sizeof h);
	if (sa->sa_family == AF_INET) {
		h.kind = HOST_IPV4;
		memcpy(h.addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else {
		h.kind = HOST_IPV6;
		memcpy(h.addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
	decide(ctx, &h, port, host_addr_class(sa) == HOST_CLASS_LOOPBACK, v);
}

static bool parse_rule(struct rules *rs, const char *spec)
{
	if (rs->n >= MAX_RULES)
		return false;
	struct rule *r = &rs->r[rs->n];
	memset(r, 0, sizeof *r);
	const char *c1 = strchr(spec, ':');
	const char *c2 = c1 ? strrchr(spec, ':') : NULL;
	if (!c1 || c2 == c1)
		return false;
	if (strncmp(spec, "allow:", 6) == 0)
		r->allow = true;
	else if (strncmp(spec, "deny:", 5) != 0)
		return false;
	const char *pat = c1 + 1;
	size_t pl = (size_t)(c2 - pat);
	if (pl == 1 && pat[0] == '*') {
		r->any = true;
		r->h.kind = HOST_NAME;
	} else {
		if (pl > 2 && pat[0] == '*' && pat[1] == '.') {
			r->suffix = true;
			pat += 2;
			pl -= 2;
		}
		if (host_normalize(pat, pl, &r->h) != HOST_OK)
			return false;
	}
	const char *ports = c2 + 1;
	if (strcmp(ports, "*") == 0) {
		r->lo = 1;
		r->hi = 65535;
	} else {
		char *e;
		r->lo = r->hi = (unsigned)strtoul(ports, &e, 10);
		if (*e == '-')
			r->hi = (unsigned)strtoul(e + 1, &e, 10);
		if (*e || r->lo == 0 || r->hi > 65535 || r->lo > r->hi)
			return false;
	}
	snprintf(r->where, sizeof r->where, "rules:%d:1", rs->n + 1);
	rs->n++;
	return true;
}

static bool set_limit(struct prx_limits *l, const char *kv)
{
	const char *eq = strchr(kv, '=');
	if (!eq)
		return false;
	char *e;
	unsigned long v = strtoul(eq + 1, &e, 10);
	if (*e)
		return false;
	size_t n = (size_t)(eq - kv);
#define LIM(name, field)                                                   \
	if (n == strlen(name) && strncmp(kv, name, n) == 0) {              \
		l->field = v;                                              \
		return true;                                               \
	}
	LIM("max_head", max_head)
	LIM("max_line", max_line)
	LIM("max_headers", max_headers)
	LIM("header_timeout_ms", header_timeout_ms)
	LIM("connect_timeout_ms", connect_timeout_ms)
	LIM("idle_timeout_ms", idle_timeout_ms)
	LIM("max_conns", max_conns)
	LIM("pipe_size", pipe_size)
	LIM("pipe_pool", pipe_pool)
#undef LIM
	return false;
}

int main(int argc, char **argv)
{
	static struct rules rules;
	struct prx_config cfg;
	memset(&cfg, 0, sizeof cfg);
	prx_limits_default(&cfg.limits);
	cfg.policy = (struct prx_policy){ &rules, cb_host, cb_addr };
	cfg.log_fd = -1;
	cfg.notice_fd = -1;
	const char *listen = NULL, *sock = NULL, *secret = "test-secret";
	struct prx_resolver *res = prx_resolver_new();
	char err[512];
	if (!res)
		return 125;
	cfg.overrides = res;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = true;
		if (strcmp(a, "--no-splice") == 0) {
			cfg.limits.no_splice = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "prx_testproxy: %s needs a value\n", a);
			prx_resolver_free(res);
			return 125;
		}
		i++;
		if (strcmp(a, "--rule") == 0)
			ok = parse_rule(&rules, v);
		else if (strcmp(a, "--listen") == 0)
			listen = v;
		else if (strcmp(a, "--socket") == 0)
			sock = v;
		else if (strcmp(a, "--secret") == 0)
			secret = v;
		else if (strcmp(a, "--limit") == 0)
			ok = set_limit(&cfg.limits, v);
		else if (strcmp(a, "--resolve") == 0) {
			if (!prx_resolver_add(res, v, err, sizeof err)) {
				fprintf(stderr, "prx_testproxy: %s\n", err);
				prx_resolver_free(res);
				return 125;
			}
		} else if (strcmp(a, "--log") == 0) {
			cfg.log_fd = open(v, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
			ok = cfg.log_fd >= 0;
		} else
			ok = false;
		if (!ok) {
			fprintf(stderr, "prx_testproxy: bad option %s %s\n", a, v);
			prx_resolver_free(res);
			return 125;
		}
	}
	cfg.secret = secret;
	signal(SIGPIPE, SIG_IGN);
	static const int stop_sigs[] = { SIGTERM, SIGINT };
	int sfd = prx_sigfd_open(stop_sigs, 2, err, sizeof err);
	struct prx_server *s = sfd >= 0 ? prx_server_new(&cfg, err, sizeof err) : NULL;
	if (!s) {
		fprintf(stderr, "prx_testproxy: %s\n", err);
		prx_resolver_free(res);
		return 125;
	}
	char bound[80] = "";
	if ((listen && !prx_server_listen_tcp(s, listen, bound, sizeof bound, err, sizeof err)) ||
	    (sock && !prx_server_listen_unix(s, sock, err, sizeof err))) {
		fprintf(stderr, "prx_testproxy: %s\n", err);
		prx_server_free(s);
		prx_resolver_free(res);
		return 125;
	}
	if (listen)
		printf("listening %s %s\n", bound, secret);
	if (sock)
		printf("listening unix %s\n", sock);
	fflush(stdout);
	bool ok = prx_server_run(s, sfd, err, sizeof err);
	if (!ok)
		fprintf(stderr, "prx_testproxy: %s\n", err);
	prx_server_free(s);
	prx_resolver_free(res);
	close(sfd);
	if (cfg.log_fd >= 0)
		close(cfg.log_fd);
	return ok ? 0 : 1;
}
