/*
 * lookup.c - the client side of cage-lookup (lookup.h): finds the helper,
 * starts it on the first request, asks and checks the answer.
 *
 * The helper is started with posix_spawn, which is safe from any thread of
 * a threaded program (the proxy's resolver threads call this). It gets its
 * socket as descriptor 3 and a process group of its own, so that a ^C at
 * the terminal, which cagerun forwards to the sandbox, does not end it.
 * It ends when its socket closes: lookup_close, or cagerun's exit.
 */
#include "lookup.h"
#include "helper.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>



extern char **environ;

void lookup_init(struct lookup *l)
{
	l->sock = -1;
	l->pid = -1;
	l->why[0] = '\0';
}

bool lookup_helper_path(char *out, size_t cap, char *why, size_t whylen)
{
	return helper_path(LOOKUP_PROGRAM, out, cap, why, whylen);
}

static bool start(struct lookup *l)
{
	char path[PATH_MAX];
	if (!lookup_helper_path(path, sizeof path, l->why, sizeof l->why))
		return false;
	int sp[2];
	if (!helper_socketpair(SOCK_SEQPACKET, sp)) {
		helper_say(l->why, sizeof l->why, "socketpair: %s", strerror(errno));
		return false;
	}
	/* dup2 onto itself would keep close-on-exec: move the helper's end
	 * off descriptor 3 first. */
	if (sp[1] == 3) {
		int moved = fcntl(sp[1], F_DUPFD_CLOEXEC, 4);
		close(sp[1]);
		sp[1] = moved;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none;
	sigemptyset(&none);
	int e = sp[1] < 0 ? errno : posix_spawn_file_actions_init(&fa);
	if (e == 0) {
		e = posix_spawnattr_init(&at);
		if (e == 0) {
			e = posix_spawn_file_actions_adddup2(&fa, sp[1], 3);
			if (e == 0)
				e = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
								  POSIX_SPAWN_SETSIGMASK);
			if (e == 0)
				e = posix_spawnattr_setpgroup(&at, 0);
			if (e == 0)
				e = posix_spawnattr_setsigmask(&at, &none);
			char *argv[] = { (char *)LOOKUP_PROGRAM, NULL };
			if (e == 0)
				e = posix_spawn(&l->pid, path, &fa, &at, argv, environ);
			posix_spawnattr_destroy(&at);
		}
		posix_spawn_file_actions_destroy(&fa);
	}
	if (sp[1] >= 0)
		close(sp[1]);
	if (e != 0) {
		helper_say(l->why, sizeof l->why, "cannot start %s: %s", path, strerror(e));
		close(sp[0]);
		l->pid = -1;
		return false;
	}
	l->sock = sp[0];
	return true;
}

/* One request, one reply; false (with l->why) when the helper cannot be
 * asked. A helper that stopped answering is let go, and the next request
 * starts another. */
static bool ask(struct lookup *l, enum lookup_kind kind, const char *name,
		struct lookup_reply *rep)
{
	size_t n = strlen(name);
	if (n == 0 || n > LOOKUP_NAME_MAX) {
		helper_say(l->why, sizeof l->why, "'%s': empty or longer than %d bytes", name,
			 LOOKUP_NAME_MAX);
		return false;
	}
	if (l->sock < 0 && !start(l))
		return false;
	char req[1 + LOOKUP_NAME_MAX];
	req[0] = (char)kind;
	memcpy(req + 1, name, n);
	ssize_t w;
	do
		w = send(l->sock, req, 1 + n, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	ssize_t r = -1;
	if (w == (ssize_t)(1 + n)) {
		do
			r = recv(l->sock, rep, sizeof *rep, MSG_TRUNC);
		while (r < 0 && errno == EINTR);
	}
	if (r == (ssize_t)sizeof *rep && rep->naddrs <= LOOKUP_MAX_ADDRS &&
	    memchr(rep->home, '\0', sizeof rep->home))
		return true;
	helper_say(l->why, sizeof l->why, "%s: %s", LOOKUP_PROGRAM,
		 r == 0 || w < 0 ? "it stopped answering" : "a malformed answer");
	lookup_close(l);
	return false;
}

int lookup_host(struct lookup *l, const char *name, struct lookup_addr *out, size_t cap,
		size_t *n)
{
	struct lookup_reply rep;
	*n = 0;
	if (!ask(l, LOOKUP_HOST, name, &rep))
		return EAI_SYSTEM;
	if (rep.err)
		return rep.err;
	for (uint32_t i = 0; i < rep.naddrs && *n < cap; i++) {
		if (rep.addrs[i].family != 4 && rep.addrs[i].family != 6)
			continue;
		out[(*n)++] = rep.addrs[i];
	}
	return *n ? 0 : EAI_NONAME;
}

int lookup_home(struct lookup *l, const char *user, char *out, size_t cap)
{
	struct lookup_reply rep;
	if (!ask(l, LOOKUP_HOME, user, &rep))
		return EIO;
	if (rep.err)
		return rep.err;
	size_t len = strlen(rep.home);
	if (len == 0 || len >= cap)
		return ENAMETOOLONG;
	memcpy(out, rep.home, len + 1);
	return 0;
}

void lookup_close(struct lookup *l)
{
	if (l->sock >= 0)
		close(l->sock);
	l->sock = -1;
	/* Reaped here when it has already gone; otherwise by whoever reaps
	 * cagerun's children (the launcher's SIGCHLD loop), or at exit. */
	if (l->pid > 0)
		(void)waitpid(l->pid, NULL, WNOHANG);
	l->pid = -1;
}
