/*
 * lnx_mount.c - mounts inside the sandbox's mount namespace (see
 * lnx_mount.h), with the file-descriptor mount API so that every target is
 * opened once, without following symlinks, and acted on through that
 * descriptor.
 *
 * Order matters: the plan's mounts go deepest first, and each is a
 * recursive clone of what is already there, so a deeper mount survives the
 * read-only clone of its ancestor with its own flags. The flags are set on
 * the top of each clone only.
 */
#include "lnx_mount.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int lnx_open_nofollow(const char *path)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

static bool fail(char *err, size_t errlen, const char *what, const char *path)
{
	snprintf(err, errlen, "mount namespace: %s %s: %s", what, path, strerror(errno));
	return false;
}

bool lnx_mount_prepare(char *err, size_t errlen)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return fail(err, errlen, "cannot make private", "/");
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		return fail(err, errlen, "cannot mount a fresh proc on", "/proc");
	struct stat st;
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m") != 0)
		return fail(err, errlen, "cannot mount a private tmpfs on", "/dev/shm");
	return true;
}

static int move_onto(int mfd, int tfd)
{
	return (int)syscall(SYS_move_mount, mfd, "", tfd, "",
			    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

/* An empty, read-only tmpfs with mode 000 over a directory. */
static bool hide_dir(int tfd, const char *path, char *err, size_t errlen)
{
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return fail(err, errlen, "fsopen(tmpfs) for", path);
	bool ok = syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "000", 0) == 0 &&
		  syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "4k", 0) == 0 &&
		  syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0;
	int mfd = ok ? (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
				    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					    MOUNT_ATTR_NOEXEC)
		     : -1;
	close(fs);
	if (mfd < 0)
		return fail(err, errlen, "cannot make the hiding mount for", path);
	ok = move_onto(mfd, tfd) == 0;
	close(mfd);
	return ok ? true : fail(err, errlen, "cannot hide", path);
}

bool lnx_mount_tmpfs(const char *path, uint64_t bytes, char *err, size_t errlen)
{
	char size[32];
	snprintf(size, sizeof size, "%" PRIu64, bytes);
	int tfd = lnx_open_nofollow(path);
	if (tfd < 0)
		return fail(err, errlen, "cannot open", path);
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	bool ok = fs >= 0 &&
		  syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0700", 0) == 0 &&
		  syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", size, 0) == 0 &&
		  syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0;
	int mfd = ok ? (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
				    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
		     : -1;
	if (fs >= 0)
		close(fs);
	ok = mfd >= 0 ? move_onto(mfd, tfd) == 0 : false;
	if (mfd >= 0)
		close(mfd);
	close(tfd);
	return ok ? true : fail(err, errlen, "cannot mount the size-limited tmpfs on", path);
}

/* A recursive clone of `src` with attributes set on its top, moved onto
 * the target. */
static bool clone_onto(int src, int tfd, const char *path, uint64_t set, char *err,
		       size_t errlen)
{
	int mfd = (int)syscall(SYS_open_tree, src, "",
			       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
	if (mfd < 0)
		return fail(err, errlen, "cannot clone the mount at", path);
	struct mount_attr attr = { .attr_set = set };
	bool ok = (set == 0 || syscall(SYS_mount_setattr, mfd, "", AT_EMPTY_PATH, &attr,
				       sizeof attr) == 0) &&
		  move_onto(mfd, tfd) == 0;
	close(mfd);
	return ok ? true : fail(err, errlen, "cannot mount over", path);
}

static bool apply_one(const struct lplan_node *n, int empty_fd, char *err, size_t errlen)
{
	int tfd = lnx_open_nofollow(n->path);
	if (tfd < 0)
		return fail(err, errlen, "cannot open", n->path);
	struct stat st;
	bool ok = fstat(tfd, &st) == 0;
	if (ok && (bool)S_ISDIR(st.st_mode) != n->is_dir) {
		snprintf(err, errlen, "mount namespace: %s changed type since the plan was made",
			 n->path);
		ok = false;
	} else if (!ok) {
		fail(err, errlen, "cannot stat", n->path);
	} else if ((n->mount & LPM_HIDE) && n->is_dir) {
		ok = hide_dir(tfd, n->path, err, errlen);
	} else if ((n->mount & LPM_HIDE) && empty_fd < 0) {
		errno = ENOENT; /* none was made: refuse rather than leave it visible */
		ok = fail(err, errlen, "no empty file to hide", n->path);
	} else if (n->mount & LPM_HIDE) {
		ok = clone_onto(empty_fd, tfd, n->path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC, err,
				errlen);
	} else {
		uint64_t set = (n->mount & LPM_RDONLY ? MOUNT_ATTR_RDONLY : 0) |
			       (n->mount & LPM_NOEXEC ? MOUNT_ATTR_NOEXEC : 0);
		ok = clone_onto(tfd, tfd, n->path, set, err, errlen);
	}
	close(tfd);
	return ok;
}

/* The order both walks below rely on: every node's parent comes before
 * it, so walking backwards mounts a child before its parent's mount could
 * cover the path to it, and a parent chain ends (lplan.c builds it so and
 * asserts it there; here it is the input of the one step that acts on it). */
static void assert_ancestors_first(const struct lplan *plan)
{
#ifndef NDEBUG
	for (size_t i = 0; i < plan->nnodes; i++)
		assert(plan->nodes[i].parent == SIZE_MAX || plan->nodes[i].parent < i);
#else
	(void)plan;
#endif
}

bool lnx_mount_hides_file(const struct lplan *plan)
{
	for (size_t i = 0; i < plan->nnodes; i++) {
		const struct lplan_node *n = &plan->nodes[i];
		if (n->exists && !n->is_dir && (n->mount & LPM_HIDE))
			return true;
	}
	return false;
}

bool lnx_mount_private_shm(void)
{
	struct stat st;
	return lstat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode);
}

#define EMPTY_NAME ".cage-empty"

/* The empty file made in the sandbox's own /dev/shm (lnx_mount_prepare
 * mounted a fresh tmpfs there): mode 000, created exclusively, opened
 * O_PATH for the hiding mounts; *shm keeps the directory for the unlink. */
static int make_empty(int *shm, char *err, size_t errlen)
{
	*shm = lnx_open_nofollow("/dev/shm");
	if (*shm < 0) {
		fail(err, errlen, "cannot open", "/dev/shm");
		return -1;
	}
	int fd = openat(*shm, EMPTY_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0) {
		fail(err, errlen, "cannot create the empty file in", "/dev/shm");
		return -1;
	}
	close(fd);
	int efd = openat(*shm, EMPTY_NAME, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (efd < 0 || fstat(efd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0) {
		if (efd >= 0)
			close(efd);
		fail(err, errlen, "cannot open the empty file in", "/dev/shm");
		return -1;
	}
	return efd;
}

bool lnx_mount_apply(const struct lplan *plan, const char *empty_file, char *err, size_t errlen)
{
	assert_ancestors_first(plan);
	/* The empty file is opened once, before any mount could cover its
	 * path: the lease's, or one made here (then its name is removed once
	 * the mounts hold it, so nothing in the sandbox can reach it but
	 * through the hidden paths, read-only). */
	int efd = -1, shm = -1;
	if (lnx_mount_hides_file(plan)) {
		efd = empty_file ? lnx_open_nofollow(empty_file) : make_empty(&shm, err, errlen);
		if (efd < 0) {
			if (empty_file)
				fail(err, errlen, "cannot open", empty_file);
			if (shm >= 0)
				close(shm);
			return false;
		}
	}
	bool ok = true;
	/* Nodes are sorted with ancestors first: walk backwards. */
	for (size_t i = plan->nnodes; ok && i-- > 0;) {
		const struct lplan_node *n = &plan->nodes[i];
		if (n->mount && n->exists)
			ok = apply_one(n, efd, err, errlen);
	}
	if (efd >= 0)
		close(efd);
	if (shm >= 0) {
		if (unlinkat(shm, EMPTY_NAME, 0) != 0 && ok)
			ok = fail(err, errlen, "cannot remove the empty file from", "/dev/shm");
		close(shm);
	}
	return ok;
}

/* Where the plan lets the command change files: a node with write rights
 * that no mount takes away, under no other such node. Device files keep
 * working on a read-only mount (writing to a device is not a change to
 * the filesystem), so they need no exception. */
static bool writable_root(const struct lplan *plan, size_t i)
{
	const struct lplan_node *n = &plan->nodes[i];
	uint64_t w = LP_WRITE_FILE | LP_MAKE | LP_REMOVE;
	if (!n->exists || !((n->ll | n->grant) & ~n->block & w))
		return false;
	if (!n->is_dir) {
		struct stat st;
		if (stat(n->path, &st) != 0 || !S_ISREG(st.st_mode))
			return false;
	}
	for (size_t p = n->parent; p != SIZE_MAX; p = plan->nodes[p].parent) {
		const struct lplan_node *a = &plan->nodes[p];
		if (a->exists && a->is_dir && ((a->ll | a->grant) & ~a->block & w))
			return false;
	}
	return true;
}

bool lnx_mount_readonly_rest(const struct lplan *plan, const char *const *rw_dirs, size_t nrw,
			     char *err, size_t errlen)
{
	enum { MAX_RW = 512 };
	assert_ancestors_first(plan);
	int clones[MAX_RW], targets[MAX_RW];
	const char *names[MAX_RW];
	size_t n = 0;
	bool ok = true;
	/* 1. Detached clones of the writable trees, with the plan's mounts
	 *    inside them, taken before anything becomes read-only. */
	for (size_t i = 0; i < plan->nnodes + nrw && ok; i++) {
		const char *path;
		if (i < plan->nnodes) {
			if (!writable_root(plan, i))
				continue;
			path = plan->nodes[i].path;
		} else {
			path = rw_dirs[i - plan->nnodes];
		}
		if (n == MAX_RW) {
			snprintf(err, errlen, "mount namespace: more than %d writable trees", MAX_RW);
			ok = false;
			break;
		}
		targets[n] = lnx_open_nofollow(path);
		if (targets[n] < 0) {
			ok = fail(err, errlen, "cannot open", path);
			break;
		}
		clones[n] = (int)syscall(SYS_open_tree, targets[n], "",
					 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
						 AT_EMPTY_PATH);
		if (clones[n] < 0) {
			ok = fail(err, errlen, "cannot clone the mount at", path);
			close(targets[n]);
			break;
		}
		struct mount_attr nosuid = { .attr_set = MOUNT_ATTR_NOSUID };
		if (syscall(SYS_mount_setattr, clones[n], "", AT_EMPTY_PATH | AT_RECURSIVE, &nosuid,
			    sizeof nosuid) != 0)
			ok = fail(err, errlen, "cannot make nosuid", path);
		names[n++] = path;
	}
	/* 2. Everything read-only and nosuid. */
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID };
	if (ok && syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro) != 0)
		ok = fail(err, errlen, "cannot make read-only", "/");
	/* 3. The writable trees back in place, outermost first (the order they
	 *    were found in), so a later one never lands under an earlier one. */
	for (size_t i = 0; i < n; i++) {
		if (ok && move_onto(clones[i], targets[i]) != 0)
			ok = fail(err, errlen, "cannot mount writable again", names[i]);
		close(clones[i]);
		close(targets[i]);
	}
	return ok;
}

bool lnx_mount_keep(const char *dir, char *err, size_t errlen)
{
	int tfd = lnx_open_nofollow(dir);
	if (tfd < 0) {
		/* Not reachable in here (under a hidden tree): nothing to keep. */
		if (errno == ENOENT || errno == EACCES)
			return true;
		return fail(err, errlen, "cannot open", dir);
	}
	bool ok = clone_onto(tfd, tfd, dir, MOUNT_ATTR_RDONLY, err, errlen);
	close(tfd);
	/* Each directory above, up to the root's children, becomes a mount
	 * point, which cannot be renamed (EBUSY): the tree cannot be moved
	 * aside and a writable one made in its place. Deepest first, so each
	 * recursive clone carries the ones below. */
	char anc[4096];
	size_t n = strlen(dir);
	if (n >= sizeof anc)
		return ok && fail(err, errlen, "path too long:", dir);
	memcpy(anc, dir, n + 1);
	while (ok) {
		char *slash = strrchr(anc, '/');
		if (!slash || slash == anc)
			break;
		*slash = '\0';
		int afd = lnx_open_nofollow(anc);
		if (afd < 0)
			return fail(err, errlen, "cannot open", anc);
		ok = clone_onto(afd, afd, anc, 0, err, errlen);
		close(afd);
	}
	return ok;
}
