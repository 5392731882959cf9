/*
 * helper.c - finding cagerun's helper programs (helper.h).
 */
#include "helper.h"
#include "stdlib_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* bin/ to libexec/cage/, set by the build from the install layout. */
#ifndef CAGE_LIBEXEC_REL
#define CAGE_LIBEXEC_REL "../libexec/cage"
#endif

bool helper_say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return false;
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
		helper_say(why, whylen, "%s: %s", path, strerror(errno));
		return false;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		helper_say(why, whylen, "%s: not a regular file writable by its owner only", path);
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
		helper_say(why, whylen, "%s: its directory is writable by group or others", path);
		return false;
	}
	return true;
}

bool helper_path(const char *program, char *out, size_t cap, char *why, size_t whylen)
{
	char dir[PATH_MAX];
	if (!program_dir(dir)) {
		helper_say(why, whylen, "cannot find the running program: %s", strerror(errno));
		return false;
	}
	char cand[PATH_MAX], real[PATH_MAX];
	int k = snprintf(cand, sizeof cand, "%s/%s", dir, program);
	if (k >= 0 && (size_t)k < sizeof cand && access(cand, F_OK) != 0)
		k = snprintf(cand, sizeof cand, "%s/%s/%s", dir, CAGE_LIBEXEC_REL, program);
	if (k < 0 || (size_t)k >= sizeof cand) {
		helper_say(why, whylen, "%s: the program's directory is too long a path", program);
		return false;
	}
	if (!realpath(cand, real)) {
		helper_say(why, whylen, "%s (%s): %s", program, cand, strerror(errno));
		return false;
	}
	if (!trusted(real, why, whylen))
		return false;
	if (strlen(real) >= cap) {
		helper_say(why, whylen, "%s: path too long", real);
		return false;
	}
	memcpy(out, real, strlen(real) + 1);
	return true;
}

bool helper_socketpair(int type, int sp[2])
{
#ifdef SOCK_CLOEXEC
	return socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sp) == 0;
#else
	if (socketpair(AF_UNIX, type, 0, sp) != 0)
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
