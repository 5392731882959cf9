/*
 * lnx_mount.h - the sandbox's private mount namespace: a fresh /proc for
 * its PID namespace, a private /dev/shm, and the plan's mounts that take
 * denied paths away from what Landlock grants around them.
 */
#ifndef CAGE_LNX_MOUNT_H
#define CAGE_LNX_MOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lplan.h"

/* An O_PATH descriptor for `path`, opened without following any symlink
 * on the way (the plan resolved them): what every mount and Landlock rule
 * acts on, so a path swapped for a link after planning fails instead of
 * being followed. -1 with errno on failure. */
int lnx_open_nofollow(const char *path);

/* Stops propagation to and from the host, mounts /proc and /dev/shm.
 * Called in the new user, mount and PID namespaces. */
bool lnx_mount_prepare(char *err, size_t errlen);
/* Applies the plan's mounts, deepest first. A denied file is hidden by
 * an empty file of mode 000 mounted read-only over it: `empty_file` (the
 * lease's), or, when NULL, one made in the sandbox's private /dev/shm and
 * unlinked once mounted (no file on the host's disk to create and
 * remove). */
bool lnx_mount_apply(const struct lplan *plan, const char *empty_file, char *err, size_t errlen);
/* Whether the plan hides an existing file, so lnx_mount_apply needs an
 * empty file (a hidden directory gets an empty tmpfs instead). */
bool lnx_mount_hides_file(const struct lplan *plan);
/* Whether /dev/shm is a directory (not a link) here, so that
 * lnx_mount_prepare gives the sandbox a private tmpfs on it, where
 * lnx_mount_apply can make its empty file. */
bool lnx_mount_private_shm(void);

/* Keeps the directory `dir` (cagerun's plan cache) read-only in here
 * whatever the plan grants around it, and every directory above it
 * (but /) a mount point, so that it cannot be renamed away and replaced.
 * Applied after the plan's mounts and before lnx_mount_readonly_rest,
 * whose writable clones then carry it. A dir this namespace cannot reach
 * is left alone. */
bool lnx_mount_keep(const char *dir, char *err, size_t errlen);

/* A tmpfs of at most `bytes` (rounded up to pages), mode 0700, owned by
 * the caller, over the directory `path`: the private TMPDIR, so that
 * filling it fails with ENOSPC inside instead of filling the host's disk. */
bool lnx_mount_tmpfs(const char *path, uint64_t bytes, char *err, size_t errlen);

/* Makes every mount read-only and nosuid except the trees where the plan
 * grants writing and the given private directories, which keep their
 * flags (and become nosuid). Landlock does not mediate chmod, chown,
 * utimes or xattrs; a read-only mount does, so a tree the policy lets the
 * command read cannot have its modes (a setuid bit, say) changed either. */
bool lnx_mount_readonly_rest(const struct lplan *plan, const char *const *rw_dirs, size_t nrw,
			     char *err, size_t errlen);

#endif
