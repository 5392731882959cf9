/*
 * lnx_landlock.c - Landlock through raw system calls (glibc has no
 * wrappers). See lnx_landlock.h.
 *
 * Rights beyond what the running ABI handles are dropped from grants: a
 * right the kernel does not handle is not restricted at all, so granting
 * it would be meaningless, and the launcher refuses to run where that
 * would widen the policy (lnx_launch.c checks the ABI first).
 */
#include "lnx_landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lnx_mount.h"
#include "lplan.h"

/* The system header may predate these (ABI 4 and 6). */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1u << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0)
#define LL_SCOPE_SIGNAL (1ull << 1)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

int lnx_landlock_abi(const char **why)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	if (abi < 0) {
		*why = errno == ENOSYS	   ? "the kernel was built without Landlock"
		       : errno == EOPNOTSUPP ? "Landlock is disabled (add landlock to the lsm= boot parameter)"
					   : strerror(errno);
		return 0;
	}
	return (int)abi;
}

uint64_t lnx_landlock_fs_rights(int abi)
{
	uint64_t r = LP_EXECUTE | LP_WRITE_FILE | LP_READ_FILE | LP_READ_DIR | LP_REMOVE_DIR |
		     LP_REMOVE_FILE | LP_MAKE;
	if (abi >= 2)
		r |= LP_REFER;
	if (abi >= 3)
		r |= LP_TRUNCATE;
	if (abi >= 5)
		r |= LP_IOCTL_DEV;
	return r;
}

bool lnx_landlock_open(struct lnx_landlock *ll, int abi, char *err, size_t errlen)
{
	struct ll_ruleset_attr attr = { 0 };
	attr.handled_access_fs = lnx_landlock_fs_rights(abi);
	size_t size = offsetof(struct ll_ruleset_attr, handled_access_net);
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		size = sizeof attr;
	}
	long fd = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (fd < 0) {
		snprintf(err, errlen, "Landlock: cannot create a ruleset: %s", strerror(errno));
		return false;
	}
	ll->fd = (int)fd;
	ll->abi = abi;
	ll->handled = attr.handled_access_fs;
	return true;
}

bool lnx_landlock_grant(struct lnx_landlock *ll, const char *path, uint64_t rights, bool is_dir,
			char *err, size_t errlen)
{
	int fd = lnx_open_nofollow(path);
	if (fd < 0) {
		snprintf(err, errlen, "Landlock: cannot open %s: %s", path, strerror(errno));
		return false;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || (bool)S_ISDIR(st.st_mode) != is_dir) {
		snprintf(err, errlen, "Landlock: %s changed type since the plan was made", path);
		close(fd);
		return false;
	}
	struct ll_path_beneath pb = { rights & ll->handled & (is_dir ? LP_ALL : LP_FILE_RIGHTS),
				      fd };
	bool ok = pb.allowed_access == 0 ||
		  syscall(SYS_landlock_add_rule, ll->fd, LL_RULE_PATH_BENEATH, &pb, 0) == 0;
	if (!ok)
		snprintf(err, errlen, "Landlock refused the rule for %s: %s", path, strerror(errno));
	close(fd);
	return ok;
}

bool lnx_landlock_restrict(int fd, char *err, size_t errlen)
{
	bool ok = syscall(SYS_landlock_restrict_self, fd, 0) == 0;
	if (!ok)
		snprintf(err, errlen, "Landlock: cannot enforce the ruleset: %s", strerror(errno));
	return ok;
}

bool lnx_landlock_enforce(struct lnx_landlock *ll, char *err, size_t errlen)
{
	bool ok = lnx_landlock_restrict(ll->fd, err, errlen);
	lnx_landlock_close(ll);
	return ok;
}

void lnx_landlock_close(struct lnx_landlock *ll)
{
	if (ll->fd >= 0)
		close(ll->fd);
	ll->fd = -1;
}
