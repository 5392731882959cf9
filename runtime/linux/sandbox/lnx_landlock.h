/*
 * lnx_landlock.h - Landlock, the filesystem half of the Linux sandbox:
 * probe the kernel's ABI, build a ruleset from the plan's grants, enforce
 * it on the calling process. Constants come from lplan.h (rights) and are
 * defined here for what the system header may be too old to have.
 */
#ifndef CAGE_LNX_LANDLOCK_H
#define CAGE_LNX_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The ABI the running kernel offers: 0 when Landlock is absent or disabled
 * (then *why says so). */
int lnx_landlock_abi(const char **why);

/* Every filesystem right the given ABI knows. */
uint64_t lnx_landlock_fs_rights(int abi);

struct lnx_landlock {
	int fd;
	int abi;
	uint64_t handled;
};

/* A ruleset handling every filesystem right of the ABI, and (ABI 6) the
 * signal and abstract-unix-socket scopes. */
bool lnx_landlock_open(struct lnx_landlock *ll, int abi, char *err, size_t errlen);
/* Grants `rights` (restricted to what the ABI handles) beneath `path`,
 * opened without following any symlink. */
bool lnx_landlock_grant(struct lnx_landlock *ll, const char *path, uint64_t rights, bool is_dir,
			char *err, size_t errlen);
/* Enforces the ruleset on the calling thread (no_new_privs must be set)
 * and closes it. */
bool lnx_landlock_enforce(struct lnx_landlock *ll, char *err, size_t errlen);
/* Enforces the ruleset open as `fd` on the calling thread, which keeps fd:
 * each call adds a layer (a domain nested below the caller's), so one
 * ruleset serves a process and, once more, a child it forks. */
bool lnx_landlock_restrict(int fd, char *err, size_t errlen);
void lnx_landlock_close(struct lnx_landlock *ll);

#endif
