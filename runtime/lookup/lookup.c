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
#include "stdlib_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


#ifndef CAGE_LOOKUP_REL
#define CAGE_LOOKUP_REL "../libexec/cage/" LOOKUP_PROGRAM
#endif

extern char **environ;

/* Messages are cut to their buffer; a path too long for one is refused
 * where it is built. */
static void say(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

void lookup_init(struct lookup *l)
{
	l->sock = -1;
	l->pid = -1;
	l->why[0] = '\0';
}

static bool program_dir(char out[PATH_MAX])
{
	if (!stdlib_program_path(out, PATH_MAX))
		return false;
	char *slash = strrchr(out, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

/* Trusted as the standard library is (stdlib_dir.c): a regular file in a
 * directory, neither writable by group or others, so that only their
 * owner, who could as well change cagerun itself, can have put it there.
 * Owners are not compared: in a user namespace the installed files are
 * owned by an unmapped user. */
static bool trusted(const char *path, char *why, size_t whylen)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		say(why, whylen, "%s: %s", path, strerror(errno));
		return false;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		say(why, whylen, "%s: not a regular file writable by its owner only", path);
		return false;
	}
	char dir[PATH_MAX];
	size_t len = strlen(path);
	if (len >= sizeof dir)
		return false;
	memcpy(dir, path, len + 1);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (stat(dir, &st) != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		say(why, whylen, "%s: its directory is writable by group or others", path);
		return false;
	}
	return true;
}

bool lookup_helper_path(char *out, size_t cap, char *why, size_t whylen)
{
	char dir[PATH_MAX];
	if (!program_dir(dir)) {
		say(why, whylen, "cannot find the running program: %s", strerror(errno));
		return false;
	}
	char cand[PATH_MAX], real[PATH_MAX];
	int k = snprintf(cand, sizeof cand, "%s/%s", dir, LOOKUP_PROGRAM);
	if (k >= 0 && (size_t)k < sizeof cand && access(cand, F_OK) != 0)
		k = snprintf(cand, sizeof cand, "%s/%s", dir, CAGE_LOOKUP_REL);
	if (k < 0 || (size_t)k >= sizeof cand) {
		say(why, whylen, "%s: the program's directory is too long a path", LOOKUP_PROGRAM);
		return false;
	}
	if (!realpath(cand, real)) {
		say(why, whylen, "%s (%s): %s", LOOKUP_PROGRAM, cand, strerror(errno));
		return false;
	}
	if (!trusted(real, why, whylen))
		return false;
	if (strlen(real) >= cap) {
		say(why, whylen, "%s: path too long", real);
		return false;
	}
	memcpy(out, real, strlen(real) + 1);
	return true;
}

/* A close-on-exec pair: atomically where the system can (Linux); on
 * Darwin, which cannot, set just after, where a fork by another thread in
 * between would give its child a copy it does not use. */
static bool cloexec_pair(int sp[2])
{
#ifdef SOCK_CLOEXEC
	return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0;
#else
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp) != 0)
		return false;
	if (fcntl(sp[0], F_SETFD, FD_CLOEXEC) == 0 && fcntl(sp[1], F_SETFD, FD_CLOEXEC) == 0)
		return true;
	int e = errno;
	close(sp[0]);
	close(sp[1]);
	errno = e;
	return false;
#endif
}

static bool start(struct lookup *l)
{
	char path[PATH_MAX];
	if (!lookup_helper_path(path, sizeof path, l->why, sizeof l->why))
		return false;
	int sp[2];
	if (!cloexec_pair(sp)) {
		say(l->why, sizeof l->why, "socketpair: %s", strerror(errno));
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
		say(l->why, sizeof l->why, "cannot start %s: %s", path, strerror(e));
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
		say(l->why, sizeof l->why, "'%s': empty or longer than %d bytes", name,
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
	say(l->why, sizeof l->why, "%s: %s", LOOKUP_PROGRAM,
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
