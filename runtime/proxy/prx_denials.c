/*
 * prx_denials.c - the summary of denied destinations, for the user at the
 * end of a run: which (host, port) were refused, how often, by which rule.
 *
 * A caged program can ask for any number of names, so the summary is
 * bounded: the first DENY_MAX distinct keys are counted one by one, every
 * later key only in one "other" count. Denials are rare next to the bytes
 * a tunnel moves, so a linear search over at most DENY_MAX keys is cheap
 * enough and needs no hashing.
 */
#include "prx_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
