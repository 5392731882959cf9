/*
 * lnx_failinj.c - makes one system call fail, then execs a program: the
 * fail-closed tests use it to break each step of cagerun's set-up from the
 * outside, with no test hook inside cagerun itself.
 *
 * usage: lnx_failinj SYSCALL[,SYSCALL...] ERRNO [clone-flag] -- PROGRAM ARGS...
 *
 * The seccomp filter it installs is inherited by cagerun and everything it
 * starts. With "clone-flag" only clone(2) calls whose flags include
 * CLONE_NEWUSER fail (cagerun's sandbox), so plain forks still work.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int i = 3;
	bool only_newuser = false;
	if (argc > 3 && !strcmp(argv[3], "clone-flag")) {
		only_newuser = true;
		i = 4;
	}
	if (argc < i + 2 || strcmp(argv[i], "--")) {
		fprintf(stderr, "usage: lnx_failinj SYSCALL ERRNO [clone-flag] -- PROGRAM ARGS...\n");
		return 2;
	}
	int err = atoi(argv[2]);
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx || err <= 0)
		return 2;
	int rc = 0;
	for (char *name = strtok(argv[1], ","); name && rc == 0; name = strtok(NULL, ",")) {
		int nr = seccomp_syscall_resolve_name(name);
		if (nr == __NR_SCMP_ERROR) {
			fprintf(stderr, "lnx_failinj: unknown system call %s\n", name);
			return 2;
		}
		rc = only_newuser
			     ? seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)err), nr, 1,
						SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER,
							CLONE_NEWUSER))
			     : seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)err), nr, 0);
	}
	if (rc != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || seccomp_load(ctx) != 0) {
		fprintf(stderr, "lnx_failinj: cannot install the filter\n");
		return 2;
	}
	seccomp_release(ctx);
	execvp(argv[i + 1], argv + i + 1);
	perror(argv[i + 1]);
	return 127;
}
