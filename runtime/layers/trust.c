/*
 * trust.c - the store of approved project layers (see trust.h). The store
 * is plain text, "xxh3:HEX PATH" per line, so a user can read and edit it.
 */
#include "trust.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

bool trust_config_dir(char *buf, size_t size, char *err, size_t errlen)
{
	/* XDG Base Directory: a relative XDG_CONFIG_HOME is invalid and ignored. */
	const char *x = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;
	if (x && x[0] == '/')
		n = snprintf(buf, size, "%s/cage", x);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.config/cage", home);
	else {
		snprintf(err, errlen, "neither XDG_CONFIG_HOME nor HOME is an absolute path");
		return false;
	}
	if (n < 0 || (size_t)n >= size) {
		snprintf(err, errlen, "the configuration directory's path is too long");
		return false;
	}
	return true;
}

static bool store_path(const char *cfgdir, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/trust", cfgdir);
	return n > 0 && (size_t)n < size;
}

bool trust_is_approved(const char *cfgdir, const char *realpath, uint64_t fp)
{
	char path[4096], want[40];
	if (!store_path(cfgdir, path, sizeof path))
		return false;
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	snprintf(want, sizeof want, "xxh3:%016" PRIx64 " ", fp);
	size_t wl = strlen(want);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	bool ok = false;
	while (!ok && (n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		ok = (size_t)n > wl && memcmp(line, want, wl) == 0 && strcmp(line + wl, realpath) == 0;
	}
	free(line);
	fclose(f);
	return ok;
}

static bool mkdir_p(char *path, char *err, size_t errlen)
{
	if (path[0] != '/') {
		snprintf(err, errlen, "%s is not absolute", path);
		return false;
	}
	for (char *s = path + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		int r = mkdir(path, 0700);
		int e = errno;
		*s = c;
		if (r != 0 && e != EEXIST) {
			snprintf(err, errlen, "cannot create %.*s: %s", (int)(s - path), path, strerror(e));
			return false;
		}
		if (c == '\0')
			return true;
	}
}

bool trust_make_dir(const char *cfgdir, char *err, size_t errlen)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", cfgdir);
	return mkdir_p(dir, err, errlen);
}

bool trust_approve(const char *cfgdir, const char *realpath, uint64_t fp, char *err,
		   size_t errlen)
{
	char path[4200], tmp[4300];
	if (strchr(realpath, '\n')) {
		snprintf(err, errlen, "a path with a newline cannot be recorded");
		return false;
	}
	if (!trust_make_dir(cfgdir, err, errlen) || !store_path(cfgdir, path, sizeof path))
		return false;
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		return false;
	}
	FILE *out = fdopen(fd, "w");
	if (!out) {
		close(fd);
		unlink(tmp);
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		return false;
	}
	/* Every other path's approval is kept as it was. */
	FILE *in = fopen(path, "re");
	if (in) {
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;
		while ((n = getline(&line, &cap, in)) > 0) {
			const char *sp = strchr(line, ' ');
			size_t rl = strlen(realpath);
			bool same = sp && strncmp(sp + 1, realpath, rl) == 0 &&
				    (sp[1 + rl] == '\n' || sp[1 + rl] == '\0');
			if (!same)
				fputs(line, out);
			if (line[n - 1] != '\n' && !same)
				fputc('\n', out);
		}
		free(line);
		fclose(in);
	}
	fprintf(out, "xxh3:%016" PRIx64 " %s\n", fp, realpath);
	bool ok = fflush(out) == 0 && fsync(fd) == 0;
	ok = (fclose(out) == 0) && ok;
	if (!ok || rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		return false;
	}
	return true;
}

bool trust_hash_file(const char *path, uint64_t *fp, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return false;
	}
	XXH3_state_t *st = XXH3_createState();
	if (!st) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return false;
	}
	XXH3_64bits_reset(st);
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		XXH3_64bits_update(st, buf, (size_t)n);
	int e = errno;
	close(fd);
	*fp = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return false;
	}
	return true;
}
