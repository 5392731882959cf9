/*
 * lnx_plancache.c - the plan cache's files (see lnx_plancache.h).
 *
 * Every check here is about the file as opened, never about its name:
 * the descriptor is opened with O_NOFOLLOW (a symlink in the cache is
 * refused, not followed) and O_NONBLOCK (a FIFO cannot hang the launch),
 * and fstat on that descriptor decides. Anything unexpected is a
 * rejection the caller answers by planning afresh and writing over it.
 */
#include "lnx_plancache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cachedir.h"
#include "pf_format.h"

/* The cache's folder below ROOT/cage: cachedir_key never gives a name
 * starting with '.', so no agent's private (writable) cache can be it. */
#define PLANCACHE_KEY ".plans"
/* Plans kept at most (one per policy, user and directory): past it the
 * least recently written go, so the folder cannot grow without bound. */
#define PLANCACHE_MAX 128

bool lnx_plancache_open(struct lnx_plancache *c, char *err, size_t errlen)
{
	return cachedir_resolve(PLANCACHE_KEY, true, c->dir, sizeof c->dir, err, errlen);
}

static int open_dir(const struct lnx_plancache *c)
{
	return open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static enum lnx_plancache_got reject(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum lnx_plancache_got reject(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return PLANCACHE_REJECTED;
}

enum lnx_plancache_got lnx_plancache_load(struct arena *a, const struct lnx_plancache *c,
					  const char *name, struct pf_plan *out, char *err,
					  size_t errlen)
{
	const uint8_t *b;
	size_t n;
	enum lnx_plancache_got got = lnx_plancache_read(a, c, name, &b, &n, err, errlen);
	if (got == PLANCACHE_LOADED && !pf_read(a, b, n, out, err, errlen))
		got = PLANCACHE_REJECTED;
	return got;
}

/* The checked read behind both readers: `alloc` gives the buffer (NULL:
 * out of memory, rejected), which is in *out from then on, read whole or
 * not (then rejected). */
static enum lnx_plancache_got read_checked(const struct lnx_plancache *c, const char *name,
					   void *(*alloc)(void *ctx, size_t n), void *ctx,
					   uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
	int dfd = open_dir(c);
	if (dfd < 0)
		return reject(err, errlen, "%s: %s", c->dir, strerror(errno));
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int oe = errno;
	close(dfd);
	if (fd < 0)
		return oe == ENOENT ? PLANCACHE_ABSENT
				    : reject(err, errlen, "cannot open: %s", strerror(oe));
	struct stat st;
	enum lnx_plancache_got got = PLANCACHE_REJECTED;
	uint8_t *b = NULL;
	if (fstat(fd, &st) != 0)
		reject(err, errlen, "fstat: %s", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		reject(err, errlen, "not a regular file");
	else if (st.st_uid != geteuid())
		reject(err, errlen, "owned by uid %u, not by this user", (unsigned)st.st_uid);
	else if ((st.st_mode & 07777) != 0600)
		reject(err, errlen, "mode %04o, not 0600", (unsigned)(st.st_mode & 07777));
	else if (st.st_nlink != 1)
		reject(err, errlen, "%lu links, not 1", (unsigned long)st.st_nlink);
	else if (st.st_size <= 0 || (uint64_t)st.st_size > PF_MAX_FILE)
		reject(err, errlen, "%lld bytes", (long long)st.st_size);
	else if (!(b = alloc(ctx, (size_t)st.st_size)))
		reject(err, errlen, "out of memory");
	else {
		*out = b; /* the caller's to free, whatever follows */
		size_t n = (size_t)st.st_size, have = 0; /* read whole, or rejected */
		while (have < n) {
			ssize_t k = read(fd, b + have, n - have);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			have += (size_t)k;
		}
		if (have != n) {
			reject(err, errlen, "short read (%zu of %zu bytes)", have, n);
		} else {
			*outlen = n;
			got = PLANCACHE_LOADED;
		}
	}
	close(fd);
	return got;
}

static void *from_arena(void *ctx, size_t n)
{
	return arena_alloc_raw(ctx, n);
}

enum lnx_plancache_got lnx_plancache_read(struct arena *a, const struct lnx_plancache *c,
					  const char *name, const uint8_t **out, size_t *outlen,
					  char *err, size_t errlen)
{
	uint8_t *b = NULL;
	enum lnx_plancache_got got = read_checked(c, name, from_arena, a, &b, outlen, err, errlen);
	if (got == PLANCACHE_LOADED)
		*out = b;
	return got;
}

static void *from_malloc(void *ctx, size_t n)
{
	(void)ctx;
	return malloc(n);
}

enum lnx_plancache_got lnx_plancache_read_owned(const struct lnx_plancache *c, const char *name,
						uint8_t **out, size_t *outlen, char *err,
						size_t errlen)
{
	*out = NULL;
	enum lnx_plancache_got got = read_checked(c, name, from_malloc, NULL, out, outlen, err,
						  errlen);
	if (got != PLANCACHE_LOADED) {
		free(*out);
		*out = NULL;
	}
	return got;
}

static bool write_all(int fd, const uint8_t *b, size_t n)
{
	while (n) {
		ssize_t k = write(fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		b += k;
		n -= (size_t)k;
	}
	return true;
}

/* Removes the oldest files named *SUFFIX while more than PLANCACHE_MAX
 * are kept (plans and walks each count on their own). */
static void prune(int dfd, const char *suffix)
{
	size_t sl = strlen(suffix);
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char names[PLANCACHE_MAX + 1][64];
	time_t when[PLANCACHE_MAX + 1];
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		struct stat st;
		if (len <= sl || len >= sizeof names[0] || strcmp(e->d_name + len - sl, suffix) ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		memcpy(names[n], e->d_name, len + 1);
		when[n++] = st.st_mtime;
		if (n == PLANCACHE_MAX + 1) {
			/* One too many: the oldest goes, its slot is reused. */
			size_t old = 0;
			for (size_t i = 1; i < n; i++)
				if (when[i] < when[old])
					old = i;
			unlinkat(dfd, names[old], 0);
			n--;
			memcpy(names[old], names[n], sizeof names[0]);
			when[old] = when[n];
		}
	}
	closedir(d);
}

bool lnx_plancache_store(const struct lnx_plancache *c, const char *name, const uint8_t *b,
			 size_t n, char *err, size_t errlen)
{
	int dfd = open_dir(c);
	if (dfd < 0) {
		snprintf(err, errlen, "%s: %s", c->dir, strerror(errno));
		return false;
	}
	char tmp[128];
	snprintf(tmp, sizeof tmp, ".tmp.%ld.%s", (long)getpid(), name);
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST && unlinkat(dfd, tmp, 0) == 0)
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s/%s: %s", c->dir, tmp, strerror(errno));
		close(dfd);
		return false;
	}
	/* The umask may have taken bits away; 0600 is what the reader wants. */
	bool ok = fchmod(fd, 0600) == 0 && write_all(fd, b, n);
	int e = errno;
	if (close(fd) != 0 && ok) {
		ok = false;
		e = errno;
	}
	if (ok && renameat(dfd, tmp, dfd, name) != 0) {
		ok = false;
		e = errno;
	}
	if (!ok) {
		unlinkat(dfd, tmp, 0);
		snprintf(err, errlen, "%s/%s: %s", c->dir, name, strerror(e));
	} else {
		const char *dot = strrchr(name, '.');
		if (dot)
			prune(dfd, dot);
	}
	close(dfd);
	return ok;
}
