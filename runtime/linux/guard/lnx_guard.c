/*
 * lnx_guard.c - the create guard's handlers (see lnx_guard.h): decode
 * each name-making call into one shape, resolve its paths for the tracee,
 * refuse what the plan guards, perform the rest on pinned directories.
 *
 * Opens are the delicate part. With O_EXCL (or a trailing '/') the kernel
 * never follows the last component and the call is done as asked. Without
 * it an existing last component is opened without O_CREAT (nothing can be
 * created by that), a missing one is created with O_EXCL after the check
 * (a name that appeared meanwhile fails with EEXIST and the loop looks
 * again), and a symlink is followed here, one link at a time, so that its
 * target is checked like any other name. An existing FIFO may block its
 * opener until a peer arrives: that open runs on a thread of its own,
 * which answers the call itself, so the supervisor goes on serving.
 */
#include "lnx_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Opens of FIFOs waiting for a peer at one time; past it, EAGAIN. */
#define LNX_GUARD_MAX_WAITERS 64
/* Times an open looks again after the name changed under it. */
#define LNX_GUARD_RETRIES 16
#define LNX_GUARD_MAX_REFUSED 32

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

struct lnx_guard {
	const struct lplan *plan;
	const char *const *links_ok;
	struct lnx_guard_seen *seen;
	int root_fd;
	pid_t self;
	atomic_int waiters;
	struct {
		char *path;
		const struct ir_rule *rule;
		unsigned long count;
	} refused[LNX_GUARD_MAX_REFUSED];
	size_t nrefused;
	unsigned long more_refused;
};

enum gkind { G_OPEN, G_MKDIR, G_MKNOD, G_SYMLINK, G_LINK, G_RENAME };

/* One name-making call, whatever system call carried it. */
struct gop {
	enum gkind kind;
	int dfd1, dfd2;        /* AT_FDCWD for the non-*at calls */
	uint64_t path1, path2; /* path2: link and rename destinations */
	uint64_t target;       /* symlink: the link's contents */
	int flags;             /* open flags; linkat/renameat2 flags */
	mode_t mode;
	dev_t dev;
};

static int arg_int(uint64_t v)
{
	return (int)(int32_t)(uint32_t)v;
}

static bool decode(const struct seccomp_data *d, struct gop *op)
{
	const __u64 *a = d->args;
	memset(op, 0, sizeof *op);
	op->dfd1 = op->dfd2 = AT_FDCWD;
	switch (d->nr) {
#ifdef SYS_open
	case SYS_open:
		*op = (struct gop){ G_OPEN, AT_FDCWD, AT_FDCWD, a[0], 0, 0, arg_int(a[1]),
				    (mode_t)a[2], 0 };
		return true;
	case SYS_creat:
		*op = (struct gop){ G_OPEN, AT_FDCWD, AT_FDCWD, a[0], 0, 0,
				    O_CREAT | O_WRONLY | O_TRUNC, (mode_t)a[1], 0 };
		return true;
	case SYS_mkdir:
		*op = (struct gop){ G_MKDIR, AT_FDCWD, AT_FDCWD, a[0], 0, 0, 0, (mode_t)a[1], 0 };
		return true;
	case SYS_mknod:
		*op = (struct gop){ G_MKNOD, AT_FDCWD, AT_FDCWD, a[0], 0, 0, 0, (mode_t)a[1],
				    (dev_t)a[2] };
		return true;
	case SYS_symlink:
		*op = (struct gop){ G_SYMLINK, AT_FDCWD, AT_FDCWD, a[1], 0, a[0], 0, 0, 0 };
		return true;
	case SYS_link:
		*op = (struct gop){ G_LINK, AT_FDCWD, AT_FDCWD, a[0], a[1], 0, 0, 0, 0 };
		return true;
	case SYS_rename:
		*op = (struct gop){ G_RENAME, AT_FDCWD, AT_FDCWD, a[0], a[1], 0, 0, 0, 0 };
		return true;
#endif
	case SYS_openat:
		*op = (struct gop){ G_OPEN, arg_int(a[0]), AT_FDCWD, a[1], 0, 0, arg_int(a[2]),
				    (mode_t)a[3], 0 };
		return true;
	case SYS_mkdirat:
		*op = (struct gop){ G_MKDIR, arg_int(a[0]), AT_FDCWD, a[1], 0, 0, 0, (mode_t)a[2],
				    0 };
		return true;
	case SYS_mknodat:
		*op = (struct gop){ G_MKNOD, arg_int(a[0]), AT_FDCWD, a[1], 0, 0, 0, (mode_t)a[2],
				    (dev_t)a[3] };
		return true;
	case SYS_symlinkat:
		*op = (struct gop){ G_SYMLINK, arg_int(a[1]), AT_FDCWD, a[2], 0, a[0], 0, 0, 0 };
		return true;
	case SYS_linkat:
		*op = (struct gop){ G_LINK, arg_int(a[0]), arg_int(a[2]), a[1], a[3], 0,
				    arg_int(a[4]), 0, 0 };
		return true;
	case SYS_renameat:
		*op = (struct gop){ G_RENAME, arg_int(a[0]), arg_int(a[2]), a[1], a[3], 0, 0, 0, 0 };
		return true;
	case SYS_renameat2:
		*op = (struct gop){ G_RENAME, arg_int(a[0]), arg_int(a[2]), a[1], a[3], 0,
				    arg_int(a[4]), 0, 0 };
		return true;
	default:
		return false;
	}
}

size_t lnx_guard_rules(struct lnx_notify_rule *out, size_t max)
{
	const struct lnx_notify_rule all[] = {
#ifdef SYS_open
		{ SYS_open, 1, O_CREAT },
		{ SYS_creat, -1, 0 },
		{ SYS_mkdir, -1, 0 },
		{ SYS_mknod, -1, 0 },
		{ SYS_symlink, -1, 0 },
		{ SYS_link, -1, 0 },
		{ SYS_rename, -1, 0 },
#endif
		{ SYS_openat, 2, O_CREAT },
		{ SYS_mkdirat, -1, 0 },
		{ SYS_mknodat, -1, 0 },
		{ SYS_symlinkat, -1, 0 },
		{ SYS_linkat, -1, 0 },
		{ SYS_renameat, -1, 0 },
		{ SYS_renameat2, -1, 0 },
		/* Not a name: the supervisor keeps each process's umask
		 * between calls and must see it change (lnx_tasks.h). */
		{ SYS_umask, -1, 0 },
	};
	size_t n = sizeof all / sizeof *all;
	if (n > max)
		return 0;
	memcpy(out, all, sizeof all);
	return n;
}

struct lnx_guard *lnx_guard_new(const struct lplan *plan, const char *const *links_ok,
				struct lnx_guard_seen *seen)
{
	struct lnx_guard *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->plan = plan;
	g->links_ok = links_ok;
	g->seen = seen;
	g->self = getpid();
	g->root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (g->root_fd < 0) {
		free(g);
		return NULL;
	}
	return g;
}

void lnx_guard_free(struct lnx_guard *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nrefused; i++)
		free(g->refused[i].path);
	close(g->root_fd);
	free(g);
}

static void note_refusal(struct lnx_guard *g, const char *path, const struct ir_rule *rule)
{
	for (size_t i = 0; i < g->nrefused; i++)
		if (!strcmp(g->refused[i].path, path)) {
			g->refused[i].count++;
			return;
		}
	char *dup = g->nrefused < LNX_GUARD_MAX_REFUSED ? strdup(path) : NULL;
	if (!dup) {
		g->more_refused++;
		return;
	}
	g->refused[g->nrefused].path = dup;
	g->refused[g->nrefused].rule = rule;
	g->refused[g->nrefused].count = 1;
	g->nrefused++;
}

void lnx_guard_report(const struct lnx_guard *g, FILE *out)
{
	char rule[1200];
	if (g->nrefused)
		fprintf(out, "cagerun: names the create guard refused to create:\n");
	for (size_t i = 0; i < g->nrefused; i++) {
		rule[0] = '\0';
		if (g->refused[i].rule)
			lplan_rule_text(g->refused[i].rule, rule, sizeof rule);
		fprintf(out, "cagerun:   %s  %lu time%s  (%s)\n", g->refused[i].path,
			g->refused[i].count, g->refused[i].count == 1 ? "" : "s", rule);
	}
	if (g->more_refused)
		fprintf(out, "cagerun:   %lu more refusal%s\n", g->more_refused,
			g->more_refused == 1 ? "" : "s");
}

/* 0, or -EACCES when the plan guards the name `w` ends in. "." and ".."
 * name no new entry: the kernel refuses those by itself. */
static bool is_link(const struct lnx_walked *w)
{
	struct stat st;
	return fstatat(w->dirfd, w->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

/* The absolute path w names. */
static void walked_path(const struct lnx_walked *w, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", strcmp(w->dir, "/") ? w->dir : "", w->name);
}

/* Noted before the call is made, so that one that fails half-way still
 * counts. Any case of `.git`: on a case-folding directory git finds
 * `.GIT` when it looks for `.git`. */
static void note_maybe_repo(struct lnx_guard *g)
{
	if (g->seen)
		__atomic_store_n(&g->seen->maybe_repo, 1, __ATOMIC_SEQ_CST);
}

/* Every name a call may make or move passes here before the call is
 * made (lnx_guard_seen relies on it). */
static int check(struct lnx_guard *g, const struct lnx_walked *w, enum lplan_mk kind)
{
	if (!strcasecmp(w->name, ".git"))
		note_maybe_repo(g);
	if (!strcmp(w->name, ".") || !strcmp(w->name, ".."))
		return 0;
	char path[PATH_MAX + NAME_MAX + 2];
	walked_path(w, path, sizeof path);
	const struct ir_rule *why = NULL;
	if (!lplan_guard_denies(g->plan, path, kind, &why))
		return 0;
	note_refusal(g, path, why);
	return -EACCES;
}

/* Refuses a symbolic link at w inside a protect's tree (see
 * lplan_guard_in_protect), but in a folder only caged runs read. */
static int check_link_name(struct lnx_guard *g, const struct lnx_walked *w)
{
	char path[PATH_MAX + NAME_MAX + 2];
	walked_path(w, path, sizeof path);
	const struct ir_rule *why = NULL;
	if (!lplan_guard_in_protect(g->plan, path, &why))
		return 0;
	for (const char *const *d = g->links_ok; d && *d; d++) {
		size_t n = strlen(*d);
		if (n > 1 && !strncmp(path, *d, n) && path[n] == '/')
			return 0;
	}
	note_refusal(g, path, why);
	return -EACCES;
}

/* check for a call that makes a new name and fails on an existing one
 * (mkdir, mknod, symlink, link, open with O_EXCL): the kernel answers
 * EEXIST before any permission check, guarded name or not, so that
 * `mkdir -p` and a recursive mkdir over an existing protected folder
 * carry on as they do outside the cage. */
static int check_new(struct lnx_guard *g, const struct lnx_walked *w, enum lplan_mk kind)
{
	struct stat st;
	if (strcmp(w->name, ".") && strcmp(w->name, "..") &&
	    fstatat(w->dirfd, w->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	return check(g, w, kind);
}

/* The name as the call passes it on: a trailing '/' kept, since it
 * changes what the kernel accepts. */
static const char *opname(const struct lnx_walked *w, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", w->name, w->slash ? "/" : "");
	return buf;
}

/* Everything one call needs about its tracee. */
struct gctx {
	struct lnx_guard *g;
	struct lnx_notify_call *c;
	struct lnx_walk w;
	char p1[PATH_MAX], p2[PATH_MAX];
};

/* Resolves path (already read) relative to the tracee's dirfd. */
static int resolve(struct gctx *x, int dirfd, const char *path, struct lnx_walked *out)
{
	out->dirfd = -1; /* set only on success */
	int start = -1;
	if (path[0] != '/') { /* the kernel ignores dirfd for an absolute path */
		start = lnx_notify_dir(x->c, dirfd);
		if (start < 0)
			return start;
	}
	return lnx_walk_parent_from(&x->w, start, path, out);
}

/* A symlink in procfs, as the last component: in its root, /proc/self and
 * /proc/thread-self mean the tracee (directories: an O_CREAT open of one
 * fails with EISDIR) and the others (mounts, net) are plain links into
 * them, followed as text; below it, magic links (fd/N, cwd) the kernel
 * follows to the open file. Returns 0 (not in procfs), 1 (magic: open
 * through the kernel), 2 (follow as text), or -errno. */
static int proc_link(const struct lnx_walked *w)
{
	int k = lnx_walk_proc(w->dirfd);
	if (k == 2 && (!strcmp(w->name, "self") || !strcmp(w->name, "thread-self")))
		return -EISDIR;
	return k == 1 ? 1 : k == 2 ? 2 : 0;
}

/* Follows the symlink w names (one step): w becomes where it points. */
static int follow(struct gctx *x, struct lnx_walked *w)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(w->dirfd, w->name, target, sizeof target);
	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof target)
		return -ENAMETOOLONG;
	target[n] = '\0';
	if (++x->w.links > 40)
		return -ELOOP;
	struct lnx_walked next;
	int rc = lnx_walk_parent(&x->w, w->dirfd, target, &next);
	if (rc)
		return rc;
	close(w->dirfd);
	*w = next;
	return 0;
}

struct waiter {
	struct lnx_guard *g;
	struct lnx_notify_later later;
	int opath;
	int flags;
	bool cloexec;
};

static void *wait_open(void *arg)
{
	struct waiter *wt = arg;
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", wt->opath);
	int fd = open(p, wt->flags | O_CLOEXEC);
	lnx_notify_answer(&wt->later, fd < 0 ? errno : 0, fd, wt->cloexec, 0);
	if (fd >= 0)
		close(fd);
	close(wt->opath);
	atomic_fetch_sub(&wt->g->waiters, 1);
	free(wt);
	return NULL;
}

/* An existing FIFO: reopened through its O_PATH descriptor (the same
 * inode that was looked at) on a thread of its own. */
static void open_fifo(struct gctx *x, const struct lnx_walked *w, int flags, bool cloexec)
{
	struct waiter *wt = malloc(sizeof *wt);
	int opath = openat(w->dirfd, w->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (!wt || opath < 0 || atomic_fetch_add(&x->g->waiters, 1) >= LNX_GUARD_MAX_WAITERS) {
		int e = !wt ? ENOMEM : opath < 0 ? errno : EAGAIN;
		if (wt && opath >= 0)
			atomic_fetch_sub(&x->g->waiters, 1);
		free(wt);
		if (opath >= 0)
			close(opath);
		lnx_notify_reply_errno(x->c, e);
		return;
	}
	*wt = (struct waiter){ x->g, { 0, 0 }, opath, flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW),
			       cloexec };
	lnx_notify_defer(x->c, &wt->later);
	pthread_t t;
	pthread_attr_t at;
	bool ok = pthread_attr_init(&at) == 0 &&
		  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0 &&
		  pthread_create(&t, &at, wait_open, wt) == 0;
	pthread_attr_destroy(&at);
	if (!ok) {
		lnx_notify_answer(&wt->later, EAGAIN, -1, false, 0);
		close(opath);
		atomic_fetch_sub(&x->g->waiters, 1);
		free(wt);
	}
}

static void drop(struct lnx_walked *w)
{
	if (w->dirfd >= 0)
		close(w->dirfd);
	w->dirfd = -1;
}

static void reply_fd_or_errno(struct lnx_notify_call *c, int fd, bool cloexec)
{
	if (fd < 0) {
		lnx_notify_reply_errno(c, errno);
		return;
	}
	lnx_notify_reply_fd(c, fd, cloexec);
	close(fd);
}

static void do_open(struct gctx *x, const struct gop *op)
{
	bool cloexec = op->flags & O_CLOEXEC;
	int flags = (op->flags & ~O_CLOEXEC) | O_CLOEXEC | O_NOCTTY;
	mode_t mode = op->mode & 07777 & ~x->c->umask;
	char nb[NAME_MAX + 2];
	if ((op->flags & O_DIRECTORY) && (op->flags & O_CREAT)) {
		lnx_notify_reply_errno(x->c, EINVAL); /* as Linux 6.4 and later */
		return;
	}
	struct lnx_walked w;
	int rc = resolve(x, op->dfd1, x->p1, &w);
	for (int tries = 0; !rc && tries < LNX_GUARD_RETRIES + 40; tries++) {
		if (w.slash || (op->flags & O_EXCL) || !strcmp(w.name, ".") ||
		    !strcmp(w.name, "..")) {
			/* Nothing followed; O_EXCL creates or fails. */
			rc = (op->flags & O_EXCL) ? check_new(x->g, &w, LPLAN_MK_FILE)
						  : check(x->g, &w, LPLAN_MK_FILE);
			if (!rc)
				reply_fd_or_errno(x->c, openat(w.dirfd, opname(&w, nb, sizeof nb), flags, mode),
						  cloexec);
			break;
		}
		struct stat st;
		if (fstatat(w.dirfd, w.name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT) {
				rc = -errno;
				break;
			}
			if ((rc = check(x->g, &w, LPLAN_MK_FILE)))
				break;
			int fd = openat(w.dirfd, w.name, flags | O_EXCL | O_NOFOLLOW, mode);
			if (fd < 0 && errno == EEXIST)
				continue; /* appeared meanwhile: look again */
			reply_fd_or_errno(x->c, fd, cloexec);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			if (op->flags & O_NOFOLLOW) {
				rc = -ELOOP;
				break;
			}
			int k = proc_link(&w);
			if (k < 0) {
				rc = k;
				break;
			}
			if (k == 1) {
				/* A magic link names an open file: nothing is created. */
				reply_fd_or_errno(x->c, openat(w.dirfd, w.name, flags & ~O_CREAT),
						  cloexec);
				break;
			}
			rc = follow(x, &w);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			rc = -EISDIR;
			break;
		}
		if (S_ISFIFO(st.st_mode)) {
			open_fifo(x, &w, flags, cloexec);
			break;
		}
		int fd = openat(w.dirfd, w.name, (flags & ~O_CREAT) | O_NOFOLLOW);
		if (fd < 0 && (errno == ENOENT || errno == ELOOP))
			continue; /* removed or replaced meanwhile */
		reply_fd_or_errno(x->c, fd, cloexec);
		break;
	}
	if (!x->c->answered && !x->c->deferred)
		lnx_notify_reply_errno(x->c, rc ? -rc : ELOOP);
	drop(&w);
}

static void reply_rc(struct lnx_notify_call *c, long r)
{
	if (r < 0)
		lnx_notify_reply_errno(c, errno);
	else
		lnx_notify_reply_value(c, 0);
}

/* The source of a hard link: the pinned directory and name (or, for
 * AT_EMPTY_PATH, the tracee's descriptor itself). */
static int link_source(struct gctx *x, const struct gop *op, struct lnx_walked *w, int *fdp)
{
	*fdp = -1;
	w->dirfd = -1;
	if ((op->flags & AT_EMPTY_PATH) && !x->p1[0]) {
		*fdp = lnx_notify_tracee_fd(x->c, op->dfd1);
		return *fdp < 0 ? *fdp : 0;
	}
	int rc = resolve(x, op->dfd1, x->p1, w);
	if (rc || !(op->flags & AT_SYMLINK_FOLLOW))
		return rc;
	for (;;) {
		struct stat st;
		if (fstatat(w->dirfd, w->name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode))
			return 0; /* linkat reports a missing source itself */
		int k = proc_link(w);
		if (k == 1 || k < 0) {
			*fdp = k < 0 ? -1 : openat(w->dirfd, w->name, O_PATH | O_CLOEXEC);
			rc = k < 0 ? k : *fdp < 0 ? -errno : 0;
			drop(w);
			return rc;
		}
		if ((rc = follow(x, w))) {
			drop(w);
			return rc;
		}
	}
}

static void do_link(struct gctx *x, const struct gop *op)
{
	if (op->flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)) {
		lnx_notify_reply_errno(x->c, EINVAL);
		return;
	}
	struct lnx_walked src, dst = { .dirfd = -1 };
	int sfd;
	int rc = link_source(x, op, &src, &sfd);
	char nb[NAME_MAX + 2], sb[NAME_MAX + 2];
	if (!rc)
		rc = resolve(x, op->dfd2, x->p2, &dst);
	/* A second name inside a protect's tree for a file from outside it,
	 * or for a symbolic link, is a link the agent outside would write
	 * through (check_link_name); a name for a file already in the tree
	 * (git's objects, linked from their temporary name) is not. */
	if (!rc && sfd < 0) {
		char sp[PATH_MAX + NAME_MAX + 2];
		walked_path(&src, sp, sizeof sp);
		if (is_link(&src) || !lplan_guard_in_protect(x->g->plan, sp, NULL))
			rc = check_link_name(x->g, &dst);
	}
	if (!rc && !(rc = check_new(x->g, &dst, LPLAN_MK_FILE))) {
		long r = sfd >= 0 ? linkat(sfd, "", dst.dirfd, opname(&dst, nb, sizeof nb), AT_EMPTY_PATH)
				  : linkat(src.dirfd, opname(&src, sb, sizeof sb), dst.dirfd,
					   opname(&dst, nb, sizeof nb), 0);
		reply_rc(x->c, r);
	}
	if (rc)
		lnx_notify_reply_errno(x->c, -rc);
	if (sfd >= 0)
		close(sfd);
	drop(&src);
	drop(&dst);
}

/* What renaming the name w designates would put elsewhere. */
static enum lplan_mk kind_at(const struct lnx_walked *w)
{
	struct stat st;
	if (fstatat(w->dirfd, w->name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return LPLAN_MK_TREE; /* the rename fails anyway; assume the worst */
	return S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode) ? LPLAN_MK_TREE : LPLAN_MK_FILE;
}

/* Whether renaming the name w designates may move a directory: when it
 * is one, or cannot be looked at (the rename then fails anyway). */
static bool moves_dir(const struct lnx_walked *w)
{
	struct stat st;
	return fstatat(w->dirfd, w->name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode);
}

static void do_rename(struct gctx *x, const struct gop *op)
{
	struct lnx_walked src, dst = { .dirfd = -1 };
	char nb[NAME_MAX + 2], sb[NAME_MAX + 2];
	int rc = resolve(x, op->dfd1, x->p1, &src);
	if (!rc)
		rc = resolve(x, op->dfd2, x->p2, &dst);
	if (!rc) {
		/* A directory moved may carry a repository to a new place. */
		if (moves_dir(&src) || ((op->flags & RENAME_EXCHANGE) && moves_dir(&dst)))
			note_maybe_repo(x->g);
		/* A directory moved in may bring guarded names along; an
		 * exchange makes both names anew. */
		rc = check(x->g, &dst, kind_at(&src));
		if (!rc && is_link(&src))
			rc = check_link_name(x->g, &dst);
		if (!rc && (op->flags & RENAME_EXCHANGE))
			rc = check(x->g, &src, kind_at(&dst));
		if (!rc && (op->flags & RENAME_EXCHANGE) && is_link(&dst))
			rc = check_link_name(x->g, &src);
		if (!rc)
			reply_rc(x->c, syscall(SYS_renameat2, src.dirfd, opname(&src, sb, sizeof sb),
					       dst.dirfd, opname(&dst, nb, sizeof nb),
					       (unsigned)op->flags));
	}
	if (rc)
		lnx_notify_reply_errno(x->c, -rc);
	drop(&src);
	drop(&dst);
}

static void handle(void *ctx, struct lnx_notify_call *c)
{
	struct gop op;
	if (!decode(&c->req->data, &op)) {
		lnx_notify_reply_errno(c, ENOSYS);
		return;
	}
	struct gctx *x = malloc(sizeof *x);
	if (!x) {
		lnx_notify_reply_errno(c, ENOMEM);
		return;
	}
	x->g = ctx;
	x->c = c;
	int rc = lnx_notify_status(c);
	if (!rc)
		rc = lnx_notify_read_string(c, op.kind == G_SYMLINK ? op.target : op.path1, x->p1,
					    sizeof x->p1);
	if (!rc && (op.kind == G_LINK || op.kind == G_RENAME || op.kind == G_SYMLINK))
		rc = lnx_notify_read_string(c, op.kind == G_SYMLINK ? op.path1 : op.path2, x->p2,
					    sizeof x->p2);
	x->w = (struct lnx_walk){ x->g->root_fd, c->tgid, c->tid, x->g->self, 0 };
	if (rc) {
		lnx_notify_reply_errno(c, -rc);
		free(x);
		return;
	}
	struct lnx_walked w;
	mode_t um = c->umask;
	switch (op.kind) {
	case G_OPEN:
		do_open(x, &op);
		break;
	case G_LINK:
		do_link(x, &op);
		break;
	case G_RENAME:
		do_rename(x, &op);
		break;
	case G_MKDIR:
	case G_MKNOD:
	case G_SYMLINK: {
		/* symlink: p1 is the link's contents, p2 where it goes. */
		const char *where = op.kind == G_SYMLINK ? x->p2 : x->p1;
		rc = resolve(x, op.dfd1, where, &w);
		if (!rc && !(rc = check_new(x->g, &w,
						 op.kind == G_MKDIR     ? LPLAN_MK_DIR
						 : op.kind == G_SYMLINK ? LPLAN_MK_TREE
									: LPLAN_MK_FILE)) &&
		    !(op.kind == G_SYMLINK && (rc = check_link_name(x->g, &w)))) {
			char nb[NAME_MAX + 2];
			const char *n = opname(&w, nb, sizeof nb);
			long r = op.kind == G_MKDIR ? mkdirat(w.dirfd, n, op.mode & 07777 & ~um)
				 : op.kind == G_MKNOD
					 ? mknodat(w.dirfd, n,
						   (op.mode & S_IFMT) | (op.mode & 07777 & ~um), op.dev)
					 : symlinkat(x->p1, w.dirfd, n);
			reply_rc(c, r);
		}
		if (rc)
			lnx_notify_reply_errno(c, -rc);
		drop(&w);
		break;
	}
	}
	free(x);
}

/* When the filter also notifies opens that do not create (the denial
 * observer watches every open): those go on unchanged. Answering
 * "continue" is safe here because the decision rests on the flags, which
 * are the call's registers and cannot change, and an open without O_CREAT
 * makes no name (O_TMPFILE's file gets one only through linkat, which the
 * guard decides). */
static void handle_creating(void *ctx, struct lnx_notify_call *c)
{
	const struct seccomp_data *d = &c->req->data;
	int flags = d->nr == SYS_openat ? arg_int(d->args[2]) :
#ifdef SYS_open
		    d->nr == SYS_open ? arg_int(d->args[1]) :
#endif
				      O_CREAT;
	if (!(flags & O_CREAT)) {
		lnx_notify_reply_continue(c);
		return;
	}
	handle(ctx, c);
}

bool lnx_guard_attach_all_opens(struct lnx_guard *g, struct lnx_notify *nt)
{
	if (!lnx_guard_attach(g, nt) || !lnx_notify_on(nt, SYS_openat, handle_creating, g))
		return false;
#ifdef SYS_open
	if (!lnx_notify_on(nt, SYS_open, handle_creating, g))
		return false;
#endif
	return true;
}

/* umask(2) makes no name and reads no memory: it goes on unchanged,
 * once what was kept about umasks is forgotten. */
static void handle_umask(void *ctx, struct lnx_notify_call *c)
{
	(void)ctx;
	lnx_notify_umask_call(c);
	lnx_notify_reply_continue(c);
}

bool lnx_guard_attach(struct lnx_guard *g, struct lnx_notify *nt)
{
	struct lnx_notify_rule r[LNX_NOTIFY_MAX_RULES];
	size_t n = lnx_guard_rules(r, LNX_NOTIFY_MAX_RULES);
	for (size_t i = 0; i < n; i++)
		if (!lnx_notify_on(nt, r[i].nr, r[i].nr == SYS_umask ? handle_umask : handle, g))
			return false;
	return n > 0;
}
