/*
 * lnx_confine.c - lnx_confine HOW -- CMD...: runs CMD confined in one way
 * the launcher must notice (testsuite/linux/launcher.sh):
 *   landlock  a Landlock domain that handles only making sockets, which
 *             leaves the command's files alone; entered without
 *             no_new_privs when the caller may (CAP_SYS_ADMIN), so that
 *             nothing but the domain itself tells it apart
 *   nnp       no_new_privs alone
 *   seccomp   a filter that allows everything (it is there, and counted),
 *             also without no_new_privs where the caller may
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int landlock(void)
{
	struct landlock_ruleset_attr ra = { .handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_SOCK };
	int rs = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof ra, 0);
	if (rs < 0) {
		perror("lnx_confine: landlock_create_ruleset");
		return -1;
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) != 0) {
		if (errno != EPERM) {
			perror("lnx_confine: landlock_restrict_self");
			return -1;
		}
		/* Not privileged: the domain needs no_new_privs first. */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    syscall(SYS_landlock_restrict_self, rs, 0) != 0) {
			perror("lnx_confine: landlock_restrict_self");
			return -1;
		}
	}
	close(rs);
	return 0;
}

static int seccomp_allow_all(void)
{
	struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog p = { 1, f };
	/* Without no_new_privs where the caller may (CAP_SYS_ADMIN), so that
	 * only the filter itself tells it apart. */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p) == 0)
		return 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p) != 0) {
		perror("lnx_confine: seccomp");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: lnx_confine landlock|nnp|seccomp -- CMD...\n");
		return 2;
	}
	int rc = !strcmp(argv[1], "landlock") ? landlock()
		 : !strcmp(argv[1], "nnp")    ? prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
		 : !strcmp(argv[1], "seccomp") ? seccomp_allow_all()
					       : -2;
	if (rc == -2) {
		fprintf(stderr, "lnx_confine: unknown confinement %s\n", argv[1]);
		return 2;
	}
	if (rc != 0)
		return 1;
	execvp(argv[3], argv + 3);
	perror(argv[3]);
	return 127;
}
