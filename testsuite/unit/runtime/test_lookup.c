/*
 * test_lookup.c - the cage-lookup helper and its client (runtime/lookup/):
 * its answers are the C library's own, asked in this process; a name the
 * protocol cannot carry is refused before anything is sent; the helper is
 * started once per client, and a client whose helper has gone reports it
 * and starts another.
 *
 * The names asked are "localhost" (answered from /etc/hosts, no DNS
 * server) and the user running the test. The helper is found beside the
 * test program (the build links it into testsuite/).
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lookup.h"

Test(lookup, finds_the_helper_beside_the_program)
{
	char path[4096], why[256];
	cr_assert(lookup_helper_path(path, sizeof path, why, sizeof why), "%s", why);
	cr_expect(strstr(path, "/" LOOKUP_PROGRAM) != NULL, "%s", path);
}

Test(lookup, host_answers_are_the_c_library_s)
{
	struct addrinfo hints, *ai = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	cr_assert_eq(getaddrinfo("localhost", NULL, &hints, &ai), 0);
	struct lookup l;
	lookup_init(&l);
	struct lookup_addr a[LOOKUP_MAX_ADDRS];
	size_t n = 0;
	cr_assert_eq(lookup_host(&l, "localhost", a, LOOKUP_MAX_ADDRS, &n), 0, "%s", l.why);
	size_t i = 0;
	for (struct addrinfo *p = ai; p && i < LOOKUP_MAX_ADDRS; p = p->ai_next, i++) {
		cr_assert_lt(i, n, "the helper gave %zu addresses, the library more", n);
		if (p->ai_family == AF_INET) {
			cr_expect_eq(a[i].family, 4);
			cr_expect(!memcmp(a[i].addr, &((struct sockaddr_in *)p->ai_addr)->sin_addr, 4));
		} else {
			cr_expect_eq(a[i].family, 6);
			cr_expect(!memcmp(a[i].addr, &((struct sockaddr_in6 *)p->ai_addr)->sin6_addr,
					  16));
		}
	}
	cr_expect_eq(i, n, "the library gave %zu addresses, the helper %zu", i, n);
	freeaddrinfo(ai);
	pid_t first = l.pid;
	cr_expect_eq(lookup_host(&l, "localhost", a, LOOKUP_MAX_ADDRS, &n), 0, "%s", l.why);
	cr_expect_eq(l.pid, first, "a second lookup started a second helper");
	cr_expect_neq(lookup_host(&l, "no-such-name.invalid", a, LOOKUP_MAX_ADDRS, &n), 0);
	lookup_close(&l);
}

Test(lookup, home_answers_are_the_c_library_s)
{
	struct passwd *pw = getpwuid(geteuid());
	cr_assert(pw && pw->pw_name && pw->pw_dir);
	char name[256], want[1024];
	snprintf(name, sizeof name, "%s", pw->pw_name);
	snprintf(want, sizeof want, "%s", pw->pw_dir);
	struct lookup l;
	lookup_init(&l);
	char home[LOOKUP_HOME_MAX];
	cr_assert_eq(lookup_home(&l, name, home, sizeof home), 0, "%s", l.why);
	cr_expect_str_eq(home, want);
	cr_expect_eq(lookup_home(&l, "cage-no-such-user-here", home, sizeof home), ENOENT);
	lookup_close(&l);
}

Test(lookup, refuses_what_the_protocol_cannot_carry)
{
	char name[LOOKUP_NAME_MAX + 2];
	memset(name, 'a', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	struct lookup l;
	lookup_init(&l);
	struct lookup_addr a[1];
	size_t n = 9;
	cr_expect_eq(lookup_host(&l, name, a, 1, &n), EAI_SYSTEM);
	cr_expect_eq(n, 0);
	cr_expect_eq(lookup_host(&l, "", a, 1, &n), EAI_SYSTEM);
	cr_expect_eq(l.pid, -1, "a helper was started for a name that was never sent");
	lookup_close(&l);
}

Test(lookup, a_helper_that_is_gone_is_reported_and_replaced)
{
	struct lookup l;
	lookup_init(&l);
	struct lookup_addr a[LOOKUP_MAX_ADDRS];
	size_t n = 0;
	cr_assert_eq(lookup_host(&l, "localhost", a, LOOKUP_MAX_ADDRS, &n), 0, "%s", l.why);
	pid_t first = l.pid;
	cr_assert_gt(first, 0);
	cr_assert_eq(kill(first, SIGKILL), 0);
	cr_assert_eq(waitpid(first, NULL, 0), first);
	cr_expect_eq(lookup_host(&l, "localhost", a, LOOKUP_MAX_ADDRS, &n), EAI_SYSTEM);
	cr_expect(strstr(l.why, "stopped answering") != NULL, "%s", l.why);
	cr_expect_eq(lookup_host(&l, "localhost", a, LOOKUP_MAX_ADDRS, &n), 0, "%s", l.why);
	cr_expect(l.pid > 0 && l.pid != first);
	lookup_close(&l);
}
