/*
 * prx_cpt.c - the proxy's policy answered by a compiled rule table: the
 * adapter both cagerun modes (--proxy-only and the sandbox's exit) use.
 */
#include "prx.h"

#include <stdio.h>

#include "cpt.h"

static void on_host(void *ctx, const struct host_norm *h, unsigned port, struct prx_verdict *v)
{
	struct cpt_result r;
	cpt_lookup(ctx, h, port, &r);
	v->allowed = r.allowed;
	snprintf(v->rule, sizeof v->rule, "%s", r.by_default ? "" : r.loc);
}

static void on_addr(void *ctx, const struct sockaddr *sa, unsigned port, struct prx_verdict *v)
{
	(void)port; /* the port travels inside sa */
	struct cpt_result r;
	cpt_lookup_addr(ctx, sa, &r);
	v->allowed = r.allowed;
	snprintf(v->rule, sizeof v->rule, "%s", r.by_default ? "" : r.loc);
}

struct prx_policy prx_policy_of_table(const struct cpt_table *t)
{
	return (struct prx_policy){ (void *)t, on_host, on_addr };
}
