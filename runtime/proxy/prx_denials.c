/*
 * prx_denials.c - what the user is told about refused destinations: one
 * line per denial as it happens (the 403's body, which curl and most
 * clients hide, also written to cfg.notice_fd), and the summary at the end
 * of a run: which (host, port) were refused, how often, by which rule.
 *
 * A caged program can ask for any number of names, so the summary is
 * bounded: the first DENY_MAX distinct keys are counted one by one, every
 * later key only in one "other" count. Denials are rare next to the bytes
 * a tunnel moves, so a linear search over at most DENY_MAX keys is cheap
 * enough and needs no hashing.
 */
#include "prx_server.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void prx_denial_note(struct prx_server *s, const char *host, unsigned port, const char *rule)
{
	if (!rule)
		rule = "";
	for (unsigned i = 0; i < s->ndeny; i++) {
		struct denial *d = &s->deny[i];
		if (d->port == port && strcmp(d->host, host) == 0 && strcmp(d->rule, rule) == 0) {
			d->count++;
			return;
		}
	}
	if (s->ndeny == DENY_MAX) {
		s->deny_other++;
		return;
	}
	struct denial *d = &s->deny[s->ndeny++];
	d->count = 1;
	d->port = port;
	snprintf(d->host, sizeof d->host, "%s", host);
	snprintf(d->rule, sizeof d->rule, "%s", rule);
}

/* The body goes to the client and, as one write(2) so that it is never
 * interleaved with the caged command's own output, to the user. A
 * notice that cannot be written is dropped: the proxy must not stall on
 * a full terminal or pipe, and the summary still counts the denial. The
 * text is safe for a terminal although the client chose the host: only a
 * name that normalised (letters, digits, '-', '.') or an IP literal gets
 * this far, and the rule is a location from our own table. */
static void deny(struct prx_server *s, struct conn *c, const char *rule, const char *reason,
		 const char *body)
{
	prx_denial_note(s, c->host.name, c->port, rule);
	if (s->cfg.notice_fd >= 0) {
		size_t n = strlen(body);
		ssize_t w;
		do
			w = write(s->cfg.notice_fd, body, n);
		while (w < 0 && errno == EINTR);
	}
	prx_respond(s, c, 403, "deny", reason, NULL, body);
}

void prx_deny_by_rule(struct prx_server *s, struct conn *c, const char *rule)
{
	char body[1024];
	if (rule[0])
		snprintf(body, sizeof body, "cage proxy: connection to %s:%u denied by the rule at %s\n",
			 c->host.name, c->port, rule);
	else
		snprintf(body, sizeof body,
			 "cage proxy: connection to %s:%u denied: no rule allows it (default deny)\n",
			 c->host.name, c->port);
	deny(s, c, rule, rule[0] ? "denied by rule" : "no rule allows it", body);
}

void prx_deny_internal(struct prx_server *s, struct conn *c, const struct sockaddr *addr)
{
	char ip[64] = "?", rule_host[80] = "?";
	const char *cls = "internal";
	if (addr) {
		prx_fmt_addr(addr, ip, sizeof ip);
		cls = host_class_name(host_addr_class(addr));
		snprintf(rule_host, sizeof rule_host, addr->sa_family == AF_INET6 ? "[%s]" : "%s", ip);
	}
	snprintf(c->why, sizeof c->why, "%s resolves to %s (%s), an internal address no rule allows",
		 c->host.name, ip, cls);
	char body[1024];
	/* The fix is an IP rule for that very address and port (prx.h): a
	 * name rule never reaches an internal address by itself. */
	snprintf(body, sizeof body,
		 "cage proxy: connection to %s:%u denied: %s; to allow it, add the rule: "
		 "allow connect \"%s:%u\"\n",
		 c->host.name, c->port, c->why, rule_host, c->port);
	deny(s, c, PRX_DENY_INTERNAL, c->why, body);
}

/* Most frequent first; ties in first-seen order, which is array order. */
static int by_count(const void *a, const void *b)
{
	const struct denial *x = *(const struct denial *const *)a;
	const struct denial *y = *(const struct denial *const *)b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x < y ? -1 : x > y;
}

void prx_server_denials(const struct prx_server *s,
			void (*cb)(void *ctx, const char *host, unsigned port,
				   unsigned long count, const char *rule),
			void *ctx)
{
	const struct denial *order[DENY_MAX];
	for (unsigned i = 0; i < s->ndeny; i++)
		order[i] = &s->deny[i];
	qsort(order, s->ndeny, sizeof order[0], by_count);
	for (unsigned i = 0; i < s->ndeny; i++)
		cb(ctx, order[i]->host, order[i]->port, order[i]->count, order[i]->rule);
	if (s->deny_other)
		cb(ctx, "", 0, s->deny_other, "");
}

struct print_ctx {
	FILE *out;
	const char *prefix;
	unsigned long lines;
};

static void print_one(void *ctx, const char *host, unsigned port, unsigned long count,
		      const char *rule)
{
	struct print_ctx *p = ctx;
	if (p->lines++ == 0)
		fprintf(p->out, "%shosts the policy denied:\n", p->prefix);
	if (!*host) { /* past the bound on distinct hosts */
		fprintf(p->out, "%s  %lu more denial%s of other hosts\n", p->prefix, count,
			count == 1 ? "" : "s");
		return;
	}
	fprintf(p->out, "%s  %s:%u  %lu time%s  (%s)\n", p->prefix, host, port, count,
		count == 1 ? "" : "s", rule && *rule ? rule : "no rule allows it");
}

void prx_server_print_denials(const struct prx_server *s, FILE *out, const char *prefix)
{
	struct print_ctx p = { out, prefix, 0 };
	prx_server_denials(s, print_one, &p);
}
