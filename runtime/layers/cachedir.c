/*
 * cachedir.c - the private cache folder of an agent (see cachedir.h).
 * Each component below ROOT is opened relative to the one before with
 * O_NOFOLLOW, so what is checked is what the path names: a symlink
 * planted at ROOT/cage or ROOT/cage/KEY (by anyone who could write ROOT)
 * is refused, never followed into someone else's tree.
 */
#include "cachedir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cachedir_key(const char *name, char out[CACHEDIR_KEY_MAX + 1])
{
	size_t n = name ? strlen(name) : 0;
	bool ok = n > 0 && n <= CACHEDIR_KEY_MAX && name[0] != '.';
	for (size_t i = 0; ok && i < n; i++) {
		char c = name[i];
		ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		     c == '.' || c == '_' || c == '-';
	}
	snprintf(out, CACHEDIR_KEY_MAX + 1, "%s", ok ? name : "default");
}

/* Opens (making it when `create`) the directory `name` in dirfd and checks
 * it is the user's own, private: -1 with err, or -2 when it is missing and
 * not to be created. */
static int open_private(int dirfd, const char *shown, const char *name, bool create, char *err,
			size_t errlen)
{
	/* Opened first and made only when missing: a mkdir that finds the
	 * name takes the parent's lock to say so, on every launch. */
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot create %s/%s: %s", shown, name,
				 strerror(errno));
			return -1;
		}
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		if (errno == ENOENT && !create)
			return -2;
		snprintf(err, errlen, "%s/%s: %s%s", shown, name, strerror(errno),
			 errno == ELOOP || errno == ENOTDIR ? " (a symlink or not a directory: refused)"
							   : "");
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		snprintf(err, errlen, "%s/%s: %s", shown, name, strerror(errno));
		close(fd);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s/%s is owned by uid %ld, not by you: refused", shown, name,
			 (long)st.st_uid);
		close(fd);
		return -1;
	}
	/* Writable by others: they could have put anything in it. Readable
	 * only (an older mkdir with the umask's 0755): made private now. */
	if (st.st_mode & 022) {
		snprintf(err, errlen, "%s/%s has mode %03o: others may write in it, so it cannot "
				      "be a private cache: refused", shown, name,
			 (unsigned)(st.st_mode & 0777));
		close(fd);
		return -1;
	}
	if (create && (st.st_mode & 077) && fchmod(fd, 0700) != 0) {
		snprintf(err, errlen, "cannot make %s/%s private (chmod 700): %s", shown, name,
			 strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

bool cachedir_resolve(const char *key, bool create, char *out, size_t cap, char *err,
		      size_t errlen)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char root[PATH_MAX], want[PATH_MAX];
	int n;
	/* XDG Base Directory: a relative XDG_CACHE_HOME is invalid and ignored. */
	if (x && x[0] == '/')
		n = snprintf(want, sizeof want, "%s", x);
	else if (home && home[0] == '/')
		n = snprintf(want, sizeof want, "%s/.cache", home);
	else {
		snprintf(err, errlen, "neither XDG_CACHE_HOME nor HOME is an absolute path");
		return false;
	}
	if (n < 0 || (size_t)n >= sizeof want) {
		snprintf(err, errlen, "the cache directory's path is too long");
		return false;
	}
	bool found = realpath(want, root) != NULL;
	if (!found && errno == ENOENT && create) {
		if (mkdir(want, 0700) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot create %s: %s", want, strerror(errno));
			return false;
		}
		found = realpath(want, root) != NULL;
	}
	if (!found) {
		if (errno == ENOENT && !create) {
			n = snprintf(out, cap, "%s/cage/%s", want, key);
			return n > 0 && (size_t)n < cap;
		}
		snprintf(err, errlen, "%s: %s", want, strerror(errno));
		return false;
	}
	n = snprintf(out, cap, "%s/cage/%s", strcmp(root, "/") ? root : "", key);
	if (n < 0 || (size_t)n >= cap) {
		snprintf(err, errlen, "the cache directory's path is too long");
		return false;
	}
	int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0) {
		snprintf(err, errlen, "%s: %s", root, strerror(errno));
		return false;
	}
	int cfd = open_private(rfd, root, "cage", create, err, errlen);
	close(rfd);
	if (cfd == -2)
		return true;
	if (cfd < 0)
		return false;
	char shown[PATH_MAX + 8];
	snprintf(shown, sizeof shown, "%s/cage", strcmp(root, "/") ? root : "");
	int kfd = open_private(cfd, shown, key, create, err, errlen);
	close(cfd);
	if (kfd == -1)
		return false;
	if (kfd >= 0)
		close(kfd);
	return true;
}
