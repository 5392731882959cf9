/*
 * test_prx_dns.c - the proxy's resolver pool (runtime/proxy/prx_resolve.c):
 * it starts no thread until a name needs DNS, never more than its bound,
 * and every submitted lookup comes back exactly once with its tag.
 *
 * The name looked up is "localhost", which the C library answers from
 * /etc/hosts: no DNS server is asked. The lookups go to the cage-lookup
 * helper (runtime/lookup/), found beside this program, one per thread. Every wait is bounded by poll(2)
 * time-outs, every loop by a count; nothing depends on timing.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "prx_int.h"

#define WAIT_MS 10000

/* Threads of this process, or -1 where /proc cannot tell. */
static int thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL && n < 100000;)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Takes answers until WANT have come or WAIT_MS passed; counts per tag. */
static int take_answers(struct prx_dns *d, int want, int *seen, int nseen)
{
	int got = 0;
	for (int round = 0; round < 1000 && got < want; round++) {
		struct pollfd p = { prx_dns_fd(d), POLLIN, 0 };
		if (poll(&p, 1, WAIT_MS) <= 0)
			break;
		uint64_t tag;
		struct prx_addrs res;
		int gerr;
		char why[192];
		while (got < want && prx_dns_take(d, &tag, &res, &gerr, why, sizeof why)) {
			cr_expect_eq(gerr, 0, "localhost: %s", why[0] ? why : gai_strerror(gerr));
			cr_expect_gt(res.n, 0);
			if (res.n > 0 && res.a[0].ss_family == AF_INET)
				cr_expect_eq(ntohs(((struct sockaddr_in *)&res.a[0])->sin_port), 8443);
			if (tag < (uint64_t)nseen)
				seen[tag]++;
			got++;
		}
	}
	return got;
}

Test(prx_dns, starts_no_thread_until_a_name_needs_dns)
{
	char err[256];
	int before = thread_count();
	struct prx_dns *d = prx_dns_new(err, sizeof err);
	cr_assert(d, "%s", err);
	if (before > 0)
		cr_expect_eq(thread_count(), before, "a pool that resolved nothing started threads");
	cr_assert_eq(prx_dns_submit(d, 0, "localhost", 8443), 0);
	int seen[1] = { 0 };
	cr_expect_eq(take_answers(d, 1, seen, 1), 1);
	cr_expect_eq(seen[0], 1);
	if (before > 0)
		cr_expect_eq(thread_count(), before + 1, "one lookup, one thread");
	prx_dns_free(d);
}

Test(prx_dns, many_lookups_share_a_bounded_pool)
{
	enum { N = 40 };
	char err[256];
	int before = thread_count();
	struct prx_dns *d = prx_dns_new(err, sizeof err);
	cr_assert(d, "%s", err);
	for (int i = 0; i < N; i++)
		cr_assert_eq(prx_dns_submit(d, (uint64_t)i, "localhost", 8443), 0, "job %d", i);
	if (before > 0) {
		int now = thread_count();
		cr_expect(now > before && now <= before + 2, "%d threads for the pool (bound 2)",
			  now - before);
	}
	int seen[N] = { 0 };
	cr_expect_eq(take_answers(d, N, seen, N), N);
	for (int i = 0; i < N; i++)
		cr_expect_eq(seen[i], 1, "job %d answered %d times", i, seen[i]);
	prx_dns_free(d);
}

Test(prx_dns, refuses_a_name_longer_than_dns_allows)
{
	char err[256], name[300];
	memset(name, 'a', sizeof name - 1);
	name[sizeof name - 1] = 0;
	struct prx_dns *d = prx_dns_new(err, sizeof err);
	cr_assert(d, "%s", err);
	cr_expect_eq(prx_dns_submit(d, 0, name, 443), EINVAL);
	prx_dns_free(d);
}
