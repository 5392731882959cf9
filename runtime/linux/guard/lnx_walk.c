/*
 * lnx_walk.c - resolves a path for a traced process the way the kernel
 * would, up to its last component (see lnx_notify.h, lnx_walk_parent).
 *
 * The supervisor walks one component at a time with O_PATH|O_NOFOLLOW
 * descriptors, so each step is pinned: a component replaced after it was
 * passed changes nothing for this walk. Symlinks are read and their
 * targets walked in place, like the kernel (at most 40 per walk). Two
 * things mean something else for the supervisor than for the tracee and
 * are handled here: /proc/self and /proc/thread-self (rewritten to the
 * tracee's ids), and the supervisor's own /proc/PID, which the tracee
 * cannot open and so may not reach through the supervisor either. Magic
 * links below /proc/PID (cwd, root, fd/N) are opened through the kernel,
 * which jumps to what they denote with the supervisor's own ptrace
 * rights over the tracee.
 */
#include "lnx_notify.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define LNX_WALK_MAX_LINKS 40

int lnx_walk_fd_path(int fd, char *buf, size_t size)
{
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, size - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	if (buf[0] != '/')
		return -ENOENT;
	return 0;
}

static bool is_proc(int fd, bool *root);

bool lnx_walk_is_self(const struct lnx_walk *w, const char *name)
{
	char *e;
	long pid = strtol(name, &e, 10);
	if (*e != '\0' || e == name || w->self <= 0)
		return false;
	if (pid == (long)w->self)
		return true;
	/* One of its threads (a waiting open, say): /proc/TID is there too,
	 * unlisted. */
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/task/%ld", (int)w->self, pid);
	return access(p, F_OK) == 0;
}

int lnx_walk_proc(int fd)
{
	bool root;
	return is_proc(fd, &root) ? (root ? 2 : 1) : 0;
}

static bool is_proc(int fd, bool *root)
{
	struct statfs sf;
	struct stat st;
	if (fstatfs(fd, &sf) != 0 || sf.f_type != PROC_SUPER_MAGIC || fstat(fd, &st) != 0) {
		*root = false;
		return false;
	}
	*root = st.st_ino == 1; /* procfs's root directory */
	return true;
}

/* A name procfs's root gives a meaning of its own: self, thread-self,
 * or a process id (the supervisor's own is refused). */
static bool proc_special(const char *name)
{
	if (!strcmp(name, "self") || !strcmp(name, "thread-self"))
		return true;
	if (!*name)
		return false;
	for (const char *c = name; *c; c++)
		if (*c < '0' || *c > '9')
			return false;
	return true;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Replaces buf[0..used) with head + "/" + the rest at buf+rest. */
static int walk_splice(char *buf, size_t size, const char *head, size_t hlen, const char *rest)
{
	size_t rlen = strlen(rest);
	if (hlen + 1 + rlen + 1 > size)
		return -ENAMETOOLONG;
	memmove(buf + hlen + 1, rest, rlen + 1);
	memcpy(buf, head, hlen);
	buf[hlen] = '/';
	return 0;
}

static void set_cur(int *cur, int fd)
{
	if (*cur >= 0)
		close(*cur);
	*cur = fd;
}

int lnx_walk_parent(struct lnx_walk *w, int start_fd, const char *path, struct lnx_walked *out)
{
	if (path[0] == '/')
		return lnx_walk_parent_from(w, -1, path, out);
	int cur = fcntl(start_fd, F_DUPFD_CLOEXEC, 0);
	if (cur < 0)
		return -errno;
	return lnx_walk_parent_from(w, cur, path, out);
}

int lnx_walk_parent_from(struct lnx_walk *w, int start_fd, const char *path,
			 struct lnx_walked *out)
{
	enum { BUF = 2 * PATH_MAX };
	int cur = start_fd;
	if (path[0] == '/') { /* the kernel ignores the start then */
		if (cur >= 0)
			close(cur);
		cur = fcntl(w->root_fd, F_DUPFD_CLOEXEC, 0);
		if (cur < 0)
			return -errno;
	} else if (cur < 0) {
		return -EBADF;
	}
	size_t plen = strlen(path);
	int rc = !plen ? -ENOENT : plen >= PATH_MAX ? -ENAMETOOLONG : 0;
	char *buf = rc ? NULL : malloc(BUF);
	if (!buf) {
		close(cur);
		return rc ? rc : -ENOMEM;
	}
	memcpy(buf, path, plen + 1);
	char *p = buf;
	while (!rc) {
		if (*p == '/') {
			/* A path that restarts from "/" (an absolute link target). */
			if (p == buf && cur >= 0 && !same_file(cur, w->root_fd)) {
				int r = fcntl(w->root_fd, F_DUPFD_CLOEXEC, 0);
				if (r < 0) {
					rc = -errno;
					break;
				}
				set_cur(&cur, r);
			}
			while (*p == '/')
				p++;
		}
		char *end = p;
		while (*end && *end != '/')
			end++;
		char *next = end;
		while (*next == '/')
			next++;
		size_t clen = (size_t)(end - p);
		if (clen > NAME_MAX) {
			rc = -ENAMETOOLONG;
			break;
		}
		if (*next == '\0') { /* the last component */
			if (clen == 0)
				snprintf(out->name, sizeof out->name, ".");
			else
				snprintf(out->name, sizeof out->name, "%.*s", (int)clen, p);
			out->slash = end != next;
			rc = lnx_walk_fd_path(cur, out->dir, sizeof out->dir);
			if (!rc) {
				out->dirfd = cur;
				cur = -1;
			}
			break;
		}
		char comp[NAME_MAX + 1];
		memcpy(comp, p, clen);
		comp[clen] = '\0';
		p = next;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			if (same_file(cur, w->root_fd))
				continue; /* ".." of the root is the root */
			int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (up < 0)
				rc = -errno;
			else
				set_cur(&cur, up);
			continue;
		}
		/* Where cur is procfs matters for the names its root treats
		 * apart (self, thread-self, a process id) and for a symlink
		 * (a magic link below /proc/PID): asked only then, which spares
		 * two calls for every other component. */
		bool proot = false;
		bool asked = proc_special(comp);
		bool inproc = asked && is_proc(cur, &proot);
		if (proot) {
			char repl[64];
			int n = -1;
			if (!strcmp(comp, "self"))
				n = snprintf(repl, sizeof repl, "%d", (int)w->tgid);
			else if (!strcmp(comp, "thread-self"))
				n = snprintf(repl, sizeof repl, "%d/task/%d", (int)w->tgid,
					     (int)w->tid);
			if (n > 0) {
				if (++w->links > LNX_WALK_MAX_LINKS) {
					rc = -ELOOP;
					break;
				}
				/* Relative to /proc, which cur still is. */
				rc = walk_splice(buf, BUF, repl, (size_t)n, p);
				p = buf;
				while (*p == '/')
					p++;
				continue;
			}
			if (lnx_walk_is_self(w, comp)) {
				rc = -EACCES;
				break;
			}
		}
		/* A directory, the common case, in one call; ENOTDIR means a
		 * symlink or another kind of file, looked at below. */
		int nfd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
		if (nfd >= 0) {
			set_cur(&cur, nfd);
			continue;
		}
		if (errno != ENOTDIR) {
			rc = -errno;
			break;
		}
		nfd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (nfd < 0 || fstat(nfd, &st) != 0) {
			rc = -errno;
			if (nfd >= 0)
				close(nfd);
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			set_cur(&cur, nfd);
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			close(nfd);
			rc = -ENOTDIR;
			break;
		}
		if (++w->links > LNX_WALK_MAX_LINKS) {
			close(nfd);
			rc = -ELOOP;
			break;
		}
		if (!asked)
			inproc = is_proc(cur, &proot);
		if (inproc && !proot) {
			/* A magic link (/proc/PID/cwd, fd/N, root): let the kernel
			 * jump to what it denotes. */
			close(nfd);
			nfd = openat(cur, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (nfd < 0) {
				rc = -errno;
				break;
			}
			set_cur(&cur, nfd);
			continue;
		}
		char target[PATH_MAX];
		ssize_t tl = readlinkat(nfd, "", target, sizeof target);
		close(nfd);
		if (tl < 0) {
			rc = -errno;
			break;
		}
		if ((size_t)tl >= sizeof target) {
			rc = -ENAMETOOLONG;
			break;
		}
		/* The target replaces the component; an absolute one restarts
		 * at the root (the loop's head sees the leading '/'). */
		rc = walk_splice(buf, BUF, target, (size_t)tl, p);
		p = buf;
	}
	if (cur >= 0)
		close(cur);
	free(buf);
	return rc;
}
