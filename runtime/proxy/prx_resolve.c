/*
 * prx_resolve.c - how the proxy turns an allowed name into addresses.
 *
 * Overrides (--resolve host:port:addr, as curl has) come first: tests and
 * people pinning a name use them, and they never touch DNS. Everything else
 * goes to getaddrinfo() in the cage-lookup helper (runtime/lookup/lookup.h:
 * cagerun is static, and NSS must not be loaded into it), asked from a
 * small pool of threads, because a lookup blocks and the event loop must
 * not; each thread has a helper of its own. The pool's queues are fixed-size
 * arrays: a flood of lookups is refused (the loop answers 503), never
 * buffered without bound.
 *
 * The addresses found here are only candidates: the loop classifies each one
 * (host.h) and drops internal ones that no rule names.
 */
#include "prx_int.h"
#include "prx_ev.h"
#include "lookup.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- overrides ---- */

#define MAX_OVERRIDES 1024

struct prx_override {
	char name[HOST_NAME_MAX_LEN + 1];
	unsigned port;
	struct prx_addrs addrs;
};

struct prx_resolver {
	struct prx_override *v;
	size_t n, cap;
};

struct prx_resolver *prx_resolver_new(void)
{
	return calloc(1, sizeof(struct prx_resolver));
}

void prx_resolver_free(struct prx_resolver *r)
{
	if (r) {
		free(r->v);
		free(r);
	}
}

static bool parse_addr(const char *s, size_t n, unsigned port, struct prx_addrs *out)
{
	char tmp[64];
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (n == 0 || n >= sizeof tmp || out->n >= PRX_MAX_ADDRS)
		return false;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	struct sockaddr_storage *ss = &out->a[out->n];
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, tmp, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		out->len[out->n++] = sizeof *v4;
		return true;
	}
	if (inet_pton(AF_INET6, tmp, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		out->len[out->n++] = sizeof *v6;
		return true;
	}
	return false;
}

bool prx_resolver_add(struct prx_resolver *r, const char *spec, char *err, size_t errlen)
{
	const char *c1 = strchr(spec, ':');
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c1 || !c2) {
		snprintf(err, errlen, "--resolve %s: expected HOST:PORT:ADDR[,ADDR...]", spec);
		return false;
	}
	struct host_norm h;
	enum host_err he = host_normalize(spec, (size_t)(c1 - spec), &h);
	if (he != HOST_OK || h.kind != HOST_NAME) {
		snprintf(err, errlen, "--resolve %s: %s", spec,
			 he != HOST_OK ? host_err_str(he) : "the host must be a name");
		return false;
	}
	unsigned port = 0;
	const char *p = c1 + 1;
	if (p == c2 || c2 - p > 5) {
		snprintf(err, errlen, "--resolve %s: bad port", spec);
		return false;
	}
	for (; p < c2; p++) {
		if (*p < '0' || *p > '9') {
			snprintf(err, errlen, "--resolve %s: bad port", spec);
			return false;
		}
		port = port * 10 + (unsigned)(*p - '0');
	}
	if (port == 0 || port > 65535) {
		snprintf(err, errlen, "--resolve %s: port out of range", spec);
		return false;
	}
	if (r->n >= MAX_OVERRIDES) {
		snprintf(err, errlen, "--resolve: more than %d entries", MAX_OVERRIDES);
		return false;
	}
	struct prx_override o;
	memset(&o, 0, sizeof o);
	memcpy(o.name, h.name, h.len + 1);
	o.port = port;
	for (const char *a = c2 + 1;;) {
		const char *e = strchr(a, ',');
		size_t n = e ? (size_t)(e - a) : strlen(a);
		if (!parse_addr(a, n, port, &o.addrs)) {
			snprintf(err, errlen, "--resolve %s: bad address (or more than %d)", spec,
				 PRX_MAX_ADDRS);
			return false;
		}
		if (!e)
			break;
		a = e + 1;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 8;
		struct prx_override *nv = realloc(r->v, cap * sizeof *nv);
		if (!nv) {
			snprintf(err, errlen, "out of memory");
			return false;
		}
		r->v = nv;
		r->cap = cap;
	}
	r->v[r->n++] = o;
	return true;
}

bool prx_resolver_find(const struct prx_resolver *r, const char *name, unsigned port,
		       struct prx_addrs *out)
{
	if (!r)
		return false;
	/* Later entries win, as a later command-line option should. */
	for (size_t i = r->n; i-- > 0;) {
		if (r->v[i].port == port && strcmp(r->v[i].name, name) == 0) {
			*out = r->v[i].addrs;
			return true;
		}
	}
	return false;
}

/* ---- the DNS thread pool ---- */

#define DNS_SLOTS 64
#define DNS_THREADS 2

struct dns_job {
	uint64_t tag;
	char name[HOST_NAME_MAX_LEN + 1];
	unsigned port;
	struct prx_addrs res;
	int err;
	char why[sizeof ((struct lookup *)0)->why]; /* err == EAI_SYSTEM: why the helper could not answer */
};

struct prx_dns {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* pending + in flight + done never exceeds DNS_SLOTS, so a finished job
	 * always has a place to go. */
	struct dns_job q[DNS_SLOTS];
	size_t qh, qn;
	struct dns_job d[DNS_SLOTS];
	size_t dh, dn;
	size_t busy;
	/* Workers are started by the first lookups that find none idle, so a
	 * session that never asks DNS (overrides, IP literals, no network at
	 * all) never pays for a thread; never more than DNS_THREADS. */
	size_t nthreads;
	bool stop;
	int efd[2]; /* prx_notify_open */
	/* The loop and each worker hold a reference; the last one out frees.
	 * Workers are detached so that stopping the proxy never waits for a
	 * lookup stuck on an unreachable DNS server. */
	int refs;
};

static void dns_unref_locked(struct prx_dns *d)
{
	if (--d->refs > 0) {
		pthread_mutex_unlock(&d->mu);
		return;
	}
	pthread_mutex_unlock(&d->mu);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	prx_notify_close(d->efd);
	free(d);
}

static void run_job(struct lookup *l, struct dns_job *j)
{
	struct lookup_addr a[PRX_MAX_ADDRS];
	size_t n = 0;
	j->res.n = 0;
	j->why[0] = '\0';
	j->err = lookup_host(l, j->name, a, PRX_MAX_ADDRS, &n);
	if (j->err) {
		if (j->err == EAI_SYSTEM)
			snprintf(j->why, sizeof j->why, "%s", l->why);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct sockaddr_storage *ss = &j->res.a[j->res.n];
		memset(ss, 0, sizeof *ss);
		if (a[i].family == 4) {
			struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
			v4->sin_family = AF_INET;
			v4->sin_port = htons((uint16_t)j->port);
			memcpy(&v4->sin_addr, a[i].addr, 4);
			j->res.len[j->res.n++] = sizeof *v4;
		} else {
			struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
			v6->sin6_family = AF_INET6;
			v6->sin6_port = htons((uint16_t)j->port);
			memcpy(&v6->sin6_addr, a[i].addr, 16);
			j->res.len[j->res.n++] = sizeof *v6;
		}
	}
}

static void *worker(void *arg)
{
	struct prx_dns *d = arg;
	struct dns_job j;
	struct lookup l;
	lookup_init(&l);
	pthread_mutex_lock(&d->mu);
	for (;;) {
		while (!d->stop && d->qn == 0)
			pthread_cond_wait(&d->cv, &d->mu);
		if (d->stop)
			break;
		j = d->q[d->qh];
		d->qh = (d->qh + 1) % DNS_SLOTS;
		d->qn--;
		d->busy++;
		pthread_mutex_unlock(&d->mu);

		run_job(&l, &j);

		pthread_mutex_lock(&d->mu);
		if (d->stop)
			break;
		d->d[(d->dh + d->dn) % DNS_SLOTS] = j;
		d->dn++;
		d->busy--;
		prx_notify_post(d->efd);
	}
	dns_unref_locked(d);
	lookup_close(&l);
	return NULL;
}

struct prx_dns *prx_dns_new(char *err, size_t errlen)
{
	struct prx_dns *d = calloc(1, sizeof *d);
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (!prx_notify_open(d->efd, err, errlen)) {
		free(d);
		return NULL;
	}
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	d->refs = 1;
	return d;
}

/* With d->mu held: one more worker, holding its own reference. */
static int start_worker_locked(struct prx_dns *d)
{
	pthread_attr_t attr;
	if (pthread_attr_init(&attr) != 0)
		return ENOMEM;
	pthread_t th;
	int e = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (e == 0)
		e = pthread_create(&th, &attr, worker, d);
	pthread_attr_destroy(&attr);
	if (e == 0) {
		d->refs++;
		d->nthreads++;
	}
	return e;
}

int prx_dns_fd(const struct prx_dns *d)
{
	return d->efd[0];
}

int prx_dns_submit(struct prx_dns *d, uint64_t tag, const char *name, unsigned port)
{
	size_t n = strlen(name);
	if (n > HOST_NAME_MAX_LEN)
		return EINVAL;
	pthread_mutex_lock(&d->mu);
	int e = d->qn + d->busy + d->dn < DNS_SLOTS ? 0 : EAGAIN;
	/* A job waits for a thread only where every thread is busy. */
	if (e == 0 && d->nthreads < DNS_THREADS && d->qn + d->busy >= d->nthreads) {
		e = start_worker_locked(d);
		if (e && d->nthreads > 0)
			e = 0; /* a running worker takes it */
	}
	if (e == 0) {
		struct dns_job *j = &d->q[(d->qh + d->qn) % DNS_SLOTS];
		j->tag = tag;
		memcpy(j->name, name, n + 1);
		j->port = port;
		d->qn++;
		pthread_cond_signal(&d->cv);
	}
	pthread_mutex_unlock(&d->mu);
	return e;
}

bool prx_dns_take(struct prx_dns *d, uint64_t *tag, struct prx_addrs *out, int *gai_err,
		  char *why, size_t whylen)
{
	pthread_mutex_lock(&d->mu);
	bool ok = d->dn > 0;
	if (ok) {
		struct dns_job *j = &d->d[d->dh];
		*tag = j->tag;
		*out = j->res;
		*gai_err = j->err;
		snprintf(why, whylen, "%s", j->err == EAI_SYSTEM ? j->why : "");
		d->dh = (d->dh + 1) % DNS_SLOTS;
		d->dn--;
	} else {
		prx_notify_drain(d->efd);
	}
	pthread_mutex_unlock(&d->mu);
	return ok;
}

void prx_dns_free(struct prx_dns *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	d->stop = true;
	pthread_cond_broadcast(&d->cv);
	/* A worker waiting for its helper drops its reference when that
	 * lookup returns; its answer is thrown away. */
	dns_unref_locked(d);
}
