/*
 * lch_peer.c - the launcher's check of a caller (see lch_peer.h).
 *
 * Everything is compared for equality with the launcher's own state, read
 * the same way from /proc/self once (lch_peer_self). The Landlock proof
 * is the memfd exchange of lch_peer.h.
 *
 * The peer is pinned by the pidfd the socket gives (SO_PEERPIDFD, Linux
 * 6.5). Its /proc/PID directory is opened first and the pidfd asked
 * afterwards whether the process still lives: if it does, no other
 * process can have had that pid in between, and every file read through
 * that directory descriptor is the peer's (or fails with ESRCH).
 */
#include "lch_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif

static bool refuse(char *why, size_t whylen, const char *what)
{
	snprintf(why, whylen, "%s", what);
	return false;
}

/* A small /proc file, whole, NUL-ended; its length, or -1. */
static ssize_t read_small(int dirfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	size_t got = 0;
	for (;;) {
		ssize_t n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == len - 1)
			break;
	}
	int e = errno;
	close(fd);
	buf[got] = '\0';
	errno = e;
	return got == len - 1 ? -1 : (ssize_t)got; /* too long: refused */
}

/* The line of /proc/PID/status starting with key (up to its newline). */
static bool status_line(const char *status, const char *key, const char **line, size_t *len)
{
	size_t kl = strlen(key);
	for (const char *p = status; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		if (l >= kl && !memcmp(p, key, kl)) {
			*line = p;
			*len = l;
			return true;
		}
		p += l + (nl != NULL);
	}
	return false;
}

/* The fields of status that say how a process is confined. */
static const char *const status_keys[] = {
	"Uid:", "Gid:", "Groups:", "NoNewPrivs:", "Seccomp:", "Seccomp_filters:",
	"CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:",
};

static bool same_status(int proc_fd, const char *mine, char *why, size_t whylen)
{
	char theirs[4096];
	if (read_small(proc_fd, "status", theirs, sizeof theirs) < 0)
		return refuse(why, whylen, "cannot read its /proc/PID/status");
	for (size_t i = 0; i < sizeof status_keys / sizeof *status_keys; i++) {
		const char *a, *b;
		size_t al, bl;
		bool ha = status_line(mine, status_keys[i], &a, &al);
		bool hb = status_line(theirs, status_keys[i], &b, &bl);
		if (ha != hb || (ha && (al != bl || memcmp(a, b, al)))) {
			snprintf(why, whylen, "its %.*s differs from the launcher's",
				 (int)strlen(status_keys[i]) - 1, status_keys[i]);
			return false;
		}
	}
	return true;
}

static const char *const ns_names[] = {
	"cgroup", "ipc", "mnt", "net", "pid", "pid_for_children",
	"time", "time_for_children", "user", "uts",
};

#define NNS (sizeof ns_names / sizeof *ns_names)
_Static_assert(NNS == sizeof ((struct lch_self *)0)->ns / sizeof *((struct lch_self *)0)->ns,
	       "one slot per namespace");

/* A namespace's link text, or -1 with ENOENT where the kernel has none. */
static ssize_t ns_link(int dirfd, size_t i, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "ns/%s", ns_names[i]);
	return readlinkat(dirfd, path, buf, len);
}

static bool same_namespaces(int proc_fd, const struct lch_self *self, char *why, size_t whylen)
{
	for (size_t i = 0; i < NNS; i++) {
		char b[128];
		ssize_t la = self->nslen[i];
		ssize_t lb = ns_link(proc_fd, i, b, sizeof b);
		if (la < 0 && lb < 0 && errno == ENOENT)
			continue; /* this kernel has no such namespace */
		if (la < 0 || lb < 0 || la != lb || memcmp(self->ns[i], b, (size_t)la)) {
			snprintf(why, whylen, "its %s namespace is not the launcher's", ns_names[i]);
			return false;
		}
	}
	return true;
}

/* A file whose text must be the same: la bytes of mine (-1: the launcher
 * has none, because the kernel has no such file or LSM). */
static bool same_file(int proc_fd, const char *name, const char *mine, ssize_t la,
		      const char *what, char *why, size_t whylen)
{
	char b[4096];
	ssize_t lb = read_small(proc_fd, name, b, sizeof b);
	if (la < 0 && lb < 0 && (errno == ENOENT || errno == EINVAL))
		return true;
	if (la < 0 || lb < 0 || la != lb || memcmp(mine, b, (size_t)la)) {
		snprintf(why, whylen, "its %s differs from the launcher's", what);
		return false;
	}
	return true;
}

bool lch_peer_self(struct lch_self *self, char *why, size_t whylen)
{
	int fd = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	self->proof_fd = memfd_create("cage-launcher", MFD_CLOEXEC);
	bool ok = fd >= 0 && read_small(fd, "status", self->status, sizeof self->status) >= 0 &&
		  self->proof_fd >= 0 && fstat(self->proof_fd, &st) == 0;
	if (!ok) {
		if (fd >= 0)
			close(fd);
		if (self->proof_fd >= 0)
			close(self->proof_fd);
		self->proof_fd = -1;
		return refuse(why, whylen, "cannot read the launcher's own /proc/self or make its memfd");
	}
	self->proof_dev = st.st_dev;
	self->proof_ino = st.st_ino;
	for (size_t i = 0; i < NNS; i++) {
		ssize_t n = ns_link(fd, i, self->ns[i], sizeof self->ns[i]);
		self->nslen[i] = n < 0 || (size_t)n == sizeof self->ns[i] ? -1 : (int)n;
	}
	ssize_t n = read_small(fd, "attr/current", self->attr, sizeof self->attr);
	self->attrlen = n < 0 ? -1 : (int)n;
	close(fd);
	return true;
}

bool lch_peer_alive(const struct lch_peer *p)
{
	return syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0) == 0;
}

void lch_peer_close(struct lch_peer *p)
{
	int *fds[] = { &p->pidfd, &p->proc_fd };
	for (size_t i = 0; i < 2; i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

bool lch_cgroup_read(struct lch_cgroup *cg)
{
	ssize_t n = read_small(AT_FDCWD, "/proc/self/cgroup", cg->text, sizeof cg->text);
	cg->len = n < 0 ? -1 : (int)n;
	return n >= 0;
}

bool lch_peer_check(const struct lch_self *self, int conn, struct lch_peer *p,
		    struct lch_cgroup *cg, char *why, size_t whylen)
{
	p->pidfd = p->proc_fd = -1;
	struct ucred uc;
	socklen_t l = sizeof uc;
	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &uc, &l) != 0 || l != sizeof uc)
		return refuse(why, whylen, "no peer credentials");
	if (uc.uid != geteuid() || uc.gid != getegid())
		return refuse(why, whylen, "another user");
	p->pid = uc.pid;
	l = sizeof p->pidfd;
	if (getsockopt(conn, SOL_SOCKET, SO_PEERPIDFD, &p->pidfd, &l) != 0) {
		p->pidfd = -1;
		return refuse(why, whylen, "this kernel gives no peer pidfd (Linux 6.5)");
	}
	char path[32];
	snprintf(path, sizeof path, "/proc/%d", (int)uc.pid);
	p->proc_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool ok = p->proc_fd >= 0 || refuse(why, whylen, "cannot open its /proc directory");
	if (ok && !lch_peer_alive(p))
		ok = refuse(why, whylen, "it is gone");
	cg->len = -1;
	if (ok && !lch_cgroup_read(cg))
		ok = refuse(why, whylen, "cannot read the launcher's cgroup");
	ok = ok && same_status(p->proc_fd, self->status, why, whylen) &&
	     same_namespaces(p->proc_fd, self, why, whylen) &&
	     same_file(p->proc_fd, "cgroup", cg->text, cg->len, "cgroup", why, whylen) &&
	     same_file(p->proc_fd, "attr/current", self->attr, self->attrlen, "LSM label", why,
		       whylen);
	/* Read while it lived: all of the above was the peer's. */
	if (ok && !lch_peer_alive(p))
		ok = refuse(why, whylen, "it is gone");
	if (!ok)
		lch_peer_close(p);
	return ok;
}

int lch_peer_open_fd(const struct lch_peer *p, int fdnum, char *why, size_t whylen)
{
	char name[32];
	snprintf(name, sizeof name, "fd/%d", fdnum);
	int fd = fdnum >= 0 ? openat(p->proc_fd, name, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0) {
		refuse(why, whylen, "the launcher cannot look at it");
		return -1;
	}
	if (!lch_peer_alive(p)) {
		close(fd);
		refuse(why, whylen, "it is gone");
		return -1;
	}
	return fd;
}

bool lch_peer_proof(const struct lch_self *self, int fd, char *why, size_t whylen)
{
	struct stat theirs;
	if (fd < 0 || fstat(fd, &theirs) != 0 || theirs.st_dev != self->proof_dev ||
	    theirs.st_ino != self->proof_ino)
		return refuse(why, whylen, "it could not look at the launcher (a Landlock domain, "
					   "or another LSM's ptrace rule)");
	return true;
}
