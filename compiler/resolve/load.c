/*
 * load.c - policy file reading (see load.h).
 */
#include "load.h"

#include <errno.h>
#include <fcntl.h>
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
