/*
 * load.c - policy file reading (see load.h).
 */
#include "load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool load_read(struct arena *a, const char *path, char **text, size_t *len, const char **err)
{
	/* O_NONBLOCK: opening a FIFO must not hang us; we refuse it below. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		*err = arena_printf(a, "cannot open '%s': %s", path, strerror(errno));
		return false;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		*err = arena_printf(a, "cannot stat '%s': %s", path, strerror(errno));
		close(fd);
		return false;
	}
	if (S_ISDIR(st.st_mode)) {
		*err = arena_printf(a, "'%s' is a directory, not a policy file", path);
		close(fd);
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		*err = arena_printf(a, "'%s' is not a regular file", path);
		close(fd);
		return false;
	}
	if (st.st_size > LOAD_MAX_BYTES) {
		*err = arena_printf(a, "'%s' is %lld bytes; policy files are limited to %d MiB",
				    path, (long long)st.st_size, LOAD_MAX_BYTES / (1024 * 1024));
		close(fd);
		return false;
	}
	size_t cap = (size_t)st.st_size;
	char *buf = arena_alloc_raw(a, cap + 1);
	size_t n = 0;
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*err = arena_printf(a, "cannot read '%s': %s", path, strerror(errno));
			close(fd);
			return false;
		}
		if (r == 0)
			break; /* shrank while we read: use what is there */
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return true;
}

char *load_dirname(struct arena *a, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return arena_strdup(a, ".");
	if (slash == path)
		return arena_strdup(a, "/");
	return arena_strndup(a, path, (size_t)(slash - path));
}

char *load_join(struct arena *a, const char *dir, const char *rel)
{
	char *joined = rel[0] == '/' || strcmp(dir, ".") == 0 ? arena_strdup(a, rel)
								: arena_concat3(a, dir, "/", rel);
	/* Lexical clean-up: drop "./" components and fold "x/.." pairs that do
	 * not climb above the start (leading ".." stay). */
	size_t len = strlen(joined);
	char *out = arena_alloc_raw(a, len + 2);
	size_t n = 0, kept = 0; /* kept: components that can be folded */
	bool abs = joined[0] == '/';
	size_t i = 0;
	if (abs)
		out[n++] = '/';
	while (i < len) {
		while (i < len && joined[i] == '/')
			i++;
		size_t s = i;
		while (i < len && joined[i] != '/')
			i++;
		size_t cl = i - s;
		if (cl == 0 || (cl == 1 && joined[s] == '.'))
			continue;
		if (cl == 2 && joined[s] == '.' && joined[s + 1] == '.' && kept > 0) {
			/* remove the last component */
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > (abs ? 1u : 0u))
				n--;
			kept--;
			continue;
		}
		if (n > 0 && out[n - 1] != '/')
			out[n++] = '/';
		memcpy(out + n, joined + s, cl);
		n += cl;
		if (!(cl == 2 && joined[s] == '.' && joined[s + 1] == '.'))
			kept++;
	}
	if (n == 0)
		out[n++] = '.';
	out[n] = '\0';
	return out;
}

static bool realpath_at(struct load_realdirs *c, const char *path, char real[PATH_MAX],
			size_t depth);

static const char *real_dir(struct load_realdirs *c, const char *dir, size_t depth)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].dir, dir))
			return c->v[i].real;
	char real[PATH_MAX];
	if (!realpath_at(c, dir, real, depth + 1))
		return NULL;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 8;
		struct load_realdir *nv = realloc(c->v, ncap * sizeof *nv);
		if (!nv) {
			errno = ENOMEM;
			return NULL;
		}
		c->v = nv;
		c->cap = ncap;
	}
	struct load_realdir d = { arena_strdup(c->a, dir), arena_strdup(c->a, real) };
	c->v[c->n++] = d;
	return d.real;
}

static bool realpath_at(struct load_realdirs *c, const char *path, char real[PATH_MAX],
			size_t depth)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!slash || slash == path || depth > PATH_MAX / 2 || !*base || !strcmp(base, ".") ||
	    !strcmp(base, ".."))
		return realpath(path, real) != NULL;
	const char *rdir = real_dir(c, arena_strndup(c->a, path, (size_t)(slash - path)), depth);
	if (!rdir)
		return false;
	int n = snprintf(real, PATH_MAX, "%s/%s", strcmp(rdir, "/") ? rdir : "", base);
	if (n < 0 || n >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return false;
	}
	struct stat st;
	if (lstat(real, &st) != 0)
		return false;
	return S_ISLNK(st.st_mode) ? realpath(path, real) != NULL : true;
}

bool load_realpath(struct load_realdirs *c, const char *path, char real[PATH_MAX])
{
	return realpath_at(c, path, real, 0);
}

void load_realdirs_free(struct load_realdirs *c)
{
	free(c->v);
	c->v = NULL;
	c->n = c->cap = 0;
}
