/*
 * lease.c - one run's private directory (see lease.h).
 *
 * Making and removing a directory under /tmp is the most expensive file
 * operation of a launch on a journalled disk: on ext4 mounted with
 * `discard` (this project's machines) mkdir took 0.13 ms and rmdir 0.5
 * ms, against 0.02 to 0.08 ms for a rename in the same directory. So a
 * run's emptied directory is not removed but kept as the user's spare
 * (`cage-spare.UID` beside the leases), and the next run takes it by
 * renaming it to a fresh random name. The spare is only a saving, never
 * trusted: what a run takes must be a directory of the user's with
 * nothing in it (made 0700 again), or it is removed or put back and a
 * new directory made as before.
 *
 * A run locks its lease (flock) from its making to its removal, so a
 * lease nobody holds locked is one whose run was killed before it could
 * remove it. A run that makes a new directory (no spare to take, which
 * is what follows a run killed: it never gave its directory back) first
 * looks for those, at most once a minute per user (the mark
 * `cage-swept.UID` beside the leases), and removes them. A lease younger
 * than LEASE_SWEEP_AGE seconds is left alone: the run that made it may
 * not have locked it yet. The lock is let go before the emptied lease
 * becomes the spare, and a run takes the spare only if it can lock it:
 * one still locked belongs to a process of the run that gave it back.
 */
#include "lease.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/random.h>
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

static bool rm_at(int dfd, const char *name, unsigned depth, bool dir);

static const char *lease_base(void)
{
	const char *base = getenv("TMPDIR");
	return base && base[0] == '/' ? base : "/tmp";
}

/* The spare's name beside `dir` (a lease in the base directory). */
static bool spare_path(const char *dir, char *out, size_t outlen)
{
	const char *slash = strrchr(dir, '/');
	int n = slash ? snprintf(out, outlen, "%.*s/cage-spare.%lu", (int)(slash - dir), dir,
				 (unsigned long)geteuid())
		      : -1;
	return n > 0 && (size_t)n < outlen;
}

/* Removes every entry of the directory `fd` (closed here), `depth` below
 * the lease, never following a link: true when it is empty. */
static bool empty_dir(int fd, unsigned depth)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	bool ok = true;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			ok &= rm_at(dirfd(d), e->d_name, depth, e->d_type == DT_DIR);
	closedir(d);
	return ok;
}

/* Takes the spare as `name` (the lease template with its XXXXXX replaced
 * here): the directory open and locked when `name` is now an empty
 * directory of this user's, mode 0700, else -1. Anything else the rename
 * brought is put back or removed, except a directory another process
 * holds locked: one of the run that gave it back still shares that run's
 * lock, so it is left to them (a sweep removes it once they are gone). */
static int claim_spare(const char *tmpl, char *name, size_t namelen)
{
	char spare[4096];
	size_t len = strlen(tmpl);
	unsigned char rnd[6];
	if (len + 1 > namelen || len < 6 || !spare_path(tmpl, spare, sizeof spare) ||
	    getentropy(rnd, sizeof rnd) != 0)
		return -1;
	static const char digits[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	memcpy(name, tmpl, len + 1);
	for (size_t i = 0; i < 6; i++)
		name[len - 6 + i] = digits[rnd[i] % (sizeof digits - 1)];
	if (rename(spare, name) != 0)
		return -1;
	int fd = open(name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
		if (fd >= 0)
			close(fd);
		/* A directory of this user's that it cannot read is removed;
		 * anything else is not ours to clean and goes back. */
		struct stat ls;
		if (lstat(name, &ls) == 0 && S_ISDIR(ls.st_mode) && ls.st_uid == geteuid())
			(void)rm_at(AT_FDCWD, name, 0, true);
		else
			(void)rename(name, spare);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return -1;
	}
	if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) != 0) {
		close(fd);
		(void)rm_at(AT_FDCWD, name, 0, true);
		return -1;
	}
	/* The spare left the last run empty; whatever is in it now was put
	 * there since, and a run must not start with it. (empty_dir closes
	 * the copy it is given; the lock stays with fd.) */
	struct stat after;
	int walk = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (walk < 0 || !empty_dir(walk, 1) || lstat(name, &after) != 0 ||
	    after.st_ino != st.st_ino || after.st_dev != st.st_dev) {
		close(fd);
		(void)rm_at(AT_FDCWD, name, 0, true);
		return -1;
	}
	return fd;
}

/* Empties the run's directory, unlocks it (closing *lock) and keeps it
 * as the spare: false when it could not be, and the caller removes it as
 * before. The lock goes first: the next run takes the spare and locks it
 * at once, and finding it still locked it would not use it. */
static bool keep_spare(const char *dir, int *lock)
{
	char spare[4096];
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	bool emptied = fd >= 0 && empty_dir(fd, 1);
	if (*lock >= 0) {
		close(*lock);
		*lock = -1;
	}
	return emptied && spare_path(dir, spare, sizeof spare) && rename(dir, spare) == 0;
}

#define LEASE_SWEEP_AGE 10   /* seconds */
#define LEASE_SWEEP_EVERY 60 /* seconds */
#define LEASE_SWEEP_MOST 32  /* leases removed at a time */

/* Whether this run should sweep `base` now: the user's mark there is
 * missing or older than LEASE_SWEEP_EVERY, and is touched. A mark that
 * is not a file of this user's means no sweeping here at all. */
static bool sweep_due(const char *base)
{
	char mark[4096];
	int n = snprintf(mark, sizeof mark, "%s/cage-swept.%lu", base, (unsigned long)geteuid());
	if (n <= 0 || (size_t)n >= sizeof mark)
		return false;
	struct stat st;
	time_t now = time(NULL);
	if (lstat(mark, &st) == 0) {
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
			return false;
		if (st.st_mtime <= now && st.st_mtime > now - LEASE_SWEEP_EVERY)
			return false;
	} else if (errno != ENOENT) {
		return false;
	}
	int fd = open(mark, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	bool touched = fstat(fd, &st) == 0 && st.st_uid == geteuid() && futimens(fd, NULL) == 0;
	close(fd);
	return touched;
}

int lease_sweep(const char *base, unsigned min_age_s, int most)
{
	int bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return 0;
	DIR *d = fdopendir(bfd);
	if (!d) {
		close(bfd);
		return 0;
	}
	const size_t plen = strlen(LEASE_PREFIX);
	const time_t now = time(NULL);
	int removed = 0;
	for (struct dirent *e; removed < most && (e = readdir(d));) {
		if (strncmp(e->d_name, LEASE_PREFIX, plen) || strlen(e->d_name) != plen + 6 ||
		    (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
			continue;
		struct stat st, fst;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
		    st.st_ctime > now - (time_t)min_age_s)
			continue;
		int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* The same directory, and no run holds it: its run is gone. */
		if (fstat(fd, &fst) == 0 && fst.st_ino == st.st_ino && fst.st_dev == st.st_dev &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0) {
			int inner = fcntl(fd, F_DUPFD_CLOEXEC, 0);
			if (inner >= 0 && empty_dir(inner, 1) &&
			    unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0)
				removed++;
		}
		close(fd);
	}
	closedir(d);
	return removed;
}

/* The directory itself, under $TMPDIR (or /tmp), locked, resolved. */
static bool make_dir(struct lease *l, char *err, size_t errlen)
{
	memset(l, 0, sizeof *l);
	l->lock = -1;
	const char *base = lease_base();
	l->dir = join(base, LEASE_PREFIX "XXXXXX");
	char claimed[4096];
	int held = l->dir ? claim_spare(l->dir, claimed, sizeof claimed) : -1;
	if (held >= 0) {
		memcpy(l->dir, claimed, strlen(l->dir) + 1);
		l->lock = held;
	} else {
		if (l->dir && sweep_due(base)) {
			(void)lease_sweep(base, LEASE_SWEEP_AGE, LEASE_SWEEP_MOST);
			l->swept = true;
		}
		if (!l->dir || !mkdtemp(l->dir)) {
			snprintf(err, errlen, "cannot create the run's private directory under %s: %s",
				 base, strerror(errno));
			free(l->dir);
			l->dir = NULL;
			return false;
		}
	}
	/* Held until the lease is removed: this run (and its sandbox's init,
	 * which shares it) is alive. The spare taken is locked already. */
	if (l->lock < 0 &&
	    ((l->lock = open(l->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	     flock(l->lock, LOCK_EX | LOCK_NB) != 0)) {
		snprintf(err, errlen, "cannot lock the run's private directory %s: %s", l->dir,
			 strerror(errno));
		(void)rm_at(AT_FDCWD, l->dir, 0, true);
		if (l->lock >= 0)
			close(l->lock);
		l->lock = -1;
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
	bool ok = empty_dir(fd, depth + 1);
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
		ok = keep_spare(l->dir, &l->lock) || rm_at(AT_FDCWD, l->dir, 0, true);
	if (l->dir && l->lock >= 0)
		close(l->lock);
	free(l->dir);
	free(l->tmp);
	free(l->home);
	free(l->empty);
	memset(l, 0, sizeof *l);
	return ok;
}
