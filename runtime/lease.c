/*
 * lease.c - one run's private directory (see lease.h).
 */
#include "lease.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s/%s", a, b);
	return s;
}

/* The directory itself, under $TMPDIR (or /tmp), resolved. */
static bool make_dir(struct lease *l, char *err, size_t errlen)
{
	memset(l, 0, sizeof *l);
	const char *base = getenv("TMPDIR");
	if (!base || base[0] != '/')
		base = "/tmp";
	l->dir = join(base, "cage-run.XXXXXX");
	if (!l->dir || !mkdtemp(l->dir)) {
		snprintf(err, errlen, "cannot create the run's private directory under %s: %s",
			 base, strerror(errno));
		free(l->dir);
		l->dir = NULL;
		return false;
	}
	/* The sandbox sees these paths: resolve the base (e.g. /tmp a link). */
	char real[4096];
	char *resolved = realpath(l->dir, real) ? strdup(real) : NULL;
	if (resolved) {
		free(l->dir);
		l->dir = resolved;
	}
	return true;
}

bool lease_create_flat(struct lease *l, char *err, size_t errlen)
{
	if (!make_dir(l, err, errlen))
		return false;
	l->tmp = strdup(l->dir);
	if (!l->tmp) {
		snprintf(err, errlen, "out of memory");
		lease_remove(l);
		return false;
	}
	return true;
}

bool lease_create(struct lease *l, bool private_home, char *err, size_t errlen)
{
	if (!make_dir(l, err, errlen))
		return false;
	l->tmp = join(l->dir, "tmp");
	if (private_home)
		l->home = join(l->dir, "home");
	bool ok = l->dir && l->tmp && (!private_home || l->home) && mkdir(l->tmp, 0700) == 0 &&
		  (!l->home || mkdir(l->home, 0700) == 0);
	if (!ok) {
		snprintf(err, errlen, "cannot prepare the run's private directory %s: %s",
			 l->dir, strerror(errno));
		lease_remove(l);
	}
	return ok;
}

bool lease_make_empty(struct lease *l, char *err, size_t errlen)
{
	int fd = -1;
	l->empty = join(l->dir, "empty");
	bool ok = l->empty &&
		  (fd = open(l->empty, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0)) >= 0;
	if (fd >= 0)
		close(fd);
	if (!ok) {
		snprintf(err, errlen, "cannot create the empty file in %s: %s", l->dir,
			 strerror(errno));
		free(l->empty);
		l->empty = NULL;
	}
	return ok;
}

/* Removes `name` in `dfd`, a tree if need be, never following a symlink.
 * Directories the command made unreadable are opened up first. `dir`: a
 * directory is expected there, so its removal is tried first (the unlink
 * would only fail with EISDIR). */
static bool rm_at(int dfd, const char *name, unsigned depth, bool dir)
{
	if (dir && (unlinkat(dfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT))
		return true;
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return true;
	/* An empty directory (the usual TMPDIR after a short command) goes
	 * without being opened, read or chmod'ed: on a journalled /tmp each of
	 * those inode updates costs as much as the removal. */
	if (errno == EISDIR && unlinkat(dfd, name, AT_REMOVEDIR) == 0)
		return true;
	if (depth > 256)
		return false;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && fchmodat(dfd, name, 0700, 0) == 0)
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	if (fstat(fd, &st) != 0 || (st.st_mode & 0700) != 0700)
		(void)fchmod(fd, 0700);
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	bool ok = true;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			ok &= rm_at(dirfd(d), e->d_name, depth + 1, e->d_type == DT_DIR);
	closedir(d);
	return unlinkat(dfd, name, AT_REMOVEDIR) == 0 && ok;
}

bool lease_remove(struct lease *l)
{
	bool ok = true;
	/* The known entries first, so that the lease directory is usually
	 * empty by the time it is removed and never needs to be read. */
	const char *known[] = { l->tmp, l->home, l->empty };
	for (size_t i = 0; l->dir && i < sizeof known / sizeof *known; i++)
		if (known[i] && strcmp(known[i], l->dir)) /* what is left, the walk below finds */
			(void)rm_at(AT_FDCWD, known[i], 0, known[i] != l->empty);
	if (l->dir)
		ok = rm_at(AT_FDCWD, l->dir, 0, true);
	free(l->dir);
	free(l->tmp);
	free(l->home);
	free(l->empty);
	memset(l, 0, sizeof *l);
	return ok;
}
