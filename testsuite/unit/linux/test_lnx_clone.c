/*
 * test_lnx_clone.c - init's clone into the run's cgroup v2
 * (lnx_sandbox_clone): born inside with clone3 and CLONE_INTO_CGROUP, moved
 * by its pid where clone3 is refused (as some container runtimes' seccomp
 * profiles refuse it), and no child left behind when the move fails. Needs
 * a cgroup2 hierarchy this process may make a child in (root on this
 * project's CI machine, where it is the unified mount of a hybrid host);
 * skipped elsewhere.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lnx_sandbox.h"

#define INIT_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | SIGCHLD)

static char own[4096];   /* our cgroup v2 path, as /proc/PID/cgroup says it */
static char child[4200]; /* the test's cgroup, as /proc/PID/cgroup will say it */
static char dir[8300];   /* its directory, "" until made */

/* The "0::" line of /proc/PID/cgroup (pid 0: ours) into out. */
static void v2_path(pid_t pid, char *out, size_t n)
{
	char p[64], line[4200];
	if (pid)
		snprintf(p, sizeof p, "/proc/%d/cgroup", (int)pid);
	else
		snprintf(p, sizeof p, "/proc/self/cgroup");
	FILE *f = fopen(p, "re");
	cr_assert(f, "%s: %s", p, strerror(errno));
	out[0] = '\0';
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, n, "%s", line + 3);
		}
	fclose(f);
	cr_assert(out[0], "%s has no cgroup v2 line", p);
}

/* Makes the test's cgroup, or skips the test. */
static void make_cgroup(void)
{
	char base[4096];
	if (!lnx_cgroup_dir("/proc/self/mountinfo", "/proc/self/cgroup", NULL, base, sizeof base))
		cr_skip_test("no cgroup2 hierarchy here");
	v2_path(0, own, sizeof own);
	snprintf(child, sizeof child, "%s/cage-test-clone.%d", strcmp(own, "/") ? own : "",
		 (int)getpid());
	char made[sizeof dir];
	snprintf(made, sizeof made, "%s/cage-test-clone.%d", base, (int)getpid());
	if (mkdir(made, 0755) != 0)
		cr_skip_test("cannot make a cgroup in %s: %s", base, strerror(errno));
	memcpy(dir, made, sizeof dir);
}

/* .fini: runs after a failed assertion too. */
static void remove_cgroup(void)
{
	/* The killed child may take a moment to leave. */
	for (int i = 0; dir[0] && i < 100 && rmdir(dir) != 0 && errno == EBUSY; i++)
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
}

/* Clones as init is cloned, records where the child is, ends it. */
static pid_t clone_and_look(const struct lnx_cgroup_joins *cj, char *where, size_t n,
			    char *err, size_t errlen)
{
	pid_t pid = lnx_sandbox_clone(INIT_FLAGS, cj, err, errlen);
	if (pid == 0) {
		pause(); /* until the parent has looked */
		_exit(0);
	}
	if (pid > 0) {
		v2_path(pid, where, n);
		kill(pid, SIGKILL);
		cr_assert_eq(waitpid(pid, NULL, 0), pid);
	}
	return pid;
}

Test(lnx_clone, born_into_the_cgroup, .fini = remove_cgroup)
{
	make_cgroup();
	/* The fixture: a child lands in its parent's cgroup by itself. */
	pid_t plain = fork();
	if (plain == 0) {
		pause();
		_exit(0);
	}
	char where[4200];
	v2_path(plain, where, sizeof where);
	kill(plain, SIGKILL);
	waitpid(plain, NULL, 0);
	cr_assert_str_eq(where, own);
	/* With no pid to write, only the clone can have put it there. */
	struct lnx_cgroup_joins cj = { .has_into = true };
	cj.into = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert(cj.into >= 0);
	char err[512] = "";
	cr_assert(clone_and_look(&cj, where, sizeof where, err, sizeof err) > 0, "%s", err);
	cr_expect_str_eq(where, child);
	close(cj.into);
}

Test(lnx_clone, moved_by_pid_where_clone3_is_refused, .fini = remove_cgroup)
{
	make_cgroup();
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
	cr_assert(f);
	cr_assert_eq(seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0), 0);
	cr_assert_eq(seccomp_load(f), 0);
	seccomp_release(f);
	struct clone_args ca;
	memset(&ca, 0, sizeof ca);
	ca.exit_signal = SIGCHLD;
	errno = 0;
	cr_assert_eq(syscall(SYS_clone3, &ca, sizeof ca), -1, "the filter must refuse clone3");
	cr_assert_eq(errno, ENOSYS);

	struct lnx_cgroup_joins cj = { .has_into = true };
	cj.into = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert(cj.into >= 0);
	char where[4200], err[512] = "";
	/* Without a pid to write, the refused clone3 leaves it outside... */
	cr_assert(clone_and_look(&cj, where, sizeof where, err, sizeof err) > 0, "%s", err);
	cr_assert_str_eq(where, own);
	/* ...and with one, the plain clone's child is moved in. */
	char procs[8400];
	snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
	cj.by_pid[0] = open(procs, O_WRONLY | O_CLOEXEC);
	cr_assert(cj.by_pid[0] >= 0);
	cj.nby_pid = 1;
	cr_assert(clone_and_look(&cj, where, sizeof where, err, sizeof err) > 0, "%s", err);
	cr_expect_str_eq(where, child);
	close(cj.by_pid[0]);
	close(cj.into);
}

Test(lnx_clone, a_failed_move_leaves_no_child, .fini = remove_cgroup)
{
	make_cgroup();
	/* No clone3 to be born inside, and a move that cannot be written. */
	char procs[8400];
	snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
	struct lnx_cgroup_joins cj = { .nby_pid = 1 };
	cj.by_pid[0] = open(procs, O_RDONLY | O_CLOEXEC);
	cr_assert(cj.by_pid[0] >= 0);
	char where[4200], err[512] = "";
	cr_assert_eq(clone_and_look(&cj, where, sizeof where, err, sizeof err), -1);
	cr_expect(strstr(err, "cannot move the sandbox into its cgroup"), "%s", err);
	errno = 0;
	cr_expect_eq(waitpid(-1, NULL, WNOHANG), -1, "a child was left behind");
	cr_expect_eq(errno, ECHILD);
	close(cj.by_pid[0]);
}
