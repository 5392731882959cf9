/*
 * cage_lookup_main.c - cage-lookup, the program that does cagerun's
 * name-service lookups (lookup.h says why they are not done in cagerun).
 *
 * It reads requests from descriptor 3, a SOCK_SEQPACKET socket, and writes
 * one fixed-size reply per request, until the socket closes. It runs with
 * cagerun's privileges and outside any sandbox, as cagerun's own lookups
 * did; it is told nothing but names and answers nothing but addresses and
 * home directories, which the proxy still filters by the policy.
 */
#include "lookup.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/syscall.h>
#endif

static void answer_host(const char *name, struct lookup_reply *rep)
{
	struct addrinfo hints, *ai = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rep->err = getaddrinfo(name, NULL, &hints, &ai);
	if (rep->err)
		return;
	for (struct addrinfo *a = ai; a && rep->naddrs < LOOKUP_MAX_ADDRS; a = a->ai_next) {
		struct lookup_addr *o = &rep->addrs[rep->naddrs];
		if (a->ai_family == AF_INET && a->ai_addrlen >= sizeof(struct sockaddr_in)) {
			o->family = 4;
			memcpy(o->addr, &((struct sockaddr_in *)a->ai_addr)->sin_addr, 4);
		} else if (a->ai_family == AF_INET6 &&
			   a->ai_addrlen >= sizeof(struct sockaddr_in6)) {
			o->family = 6;
			memcpy(o->addr, &((struct sockaddr_in6 *)a->ai_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		rep->naddrs++;
	}
	freeaddrinfo(ai);
}

static void answer_home(const char *name, struct lookup_reply *rep)
{
	errno = 0;
	struct passwd *pw = getpwnam(name);
	if (!pw || !pw->pw_dir) {
		rep->err = errno && errno != ENOENT && errno != ESRCH ? errno : ENOENT;
		return;
	}
	if (strlen(pw->pw_dir) >= sizeof rep->home) {
		rep->err = ENAMETOOLONG;
		return;
	}
	snprintf(rep->home, sizeof rep->home, "%s", pw->pw_dir);
}

int main(void)
{
	/* Nothing of cagerun's but the socket. */
#ifdef __linux__
	(void)syscall(SYS_close_range, 4, ~0U, 0);
#endif
	for (;;) {
		char req[1 + LOOKUP_NAME_MAX + 1];
		ssize_t n = recv(3, req, sizeof req, MSG_TRUNC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0; /* cagerun closed its end, or is gone */
		struct lookup_reply rep;
		memset(&rep, 0, sizeof rep);
		if (n < 2 || n > 1 + LOOKUP_NAME_MAX || memchr(req + 1, '\0', (size_t)n - 1)) {
			rep.err = EINVAL;
		} else {
			req[n] = '\0';
			if (req[0] == LOOKUP_HOST)
				answer_host(req + 1, &rep);
			else if (req[0] == LOOKUP_HOME)
				answer_home(req + 1, &rep);
			else
				rep.err = EINVAL;
		}
		ssize_t w;
		do
			w = send(3, &rep, sizeof rep, MSG_NOSIGNAL);
		while (w < 0 && errno == EINTR);
		if (w != (ssize_t)sizeof rep)
			return 0;
	}
}
