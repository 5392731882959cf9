/*
 * lnx_exec.c - the last steps before the command runs, in this order:
 *
 *   1. signals back to defaults, its own process group (and the terminal's
 *      foreground, when cagerun had it), its working directory;
 *   2. no_new_privs, then every capability dropped for good (bounding set,
 *      ambient set, securebits locked, capset to nothing): nothing later
 *      can regain a privilege, not even by exec'ing a setuid program;
 *   3. Landlock: the plan's grants plus this run's private directories;
 *   4. seccomp, last, since it refuses calls the steps before still make
 *      (under the create guard, then its notifying filter, whose
 *      listener goes to init, the guard's supervisor);
 *   5. every descriptor past stderr marked close-on-exec, then execvp.
 *
 * Any failure is reported to cagerun, which exits 125: the command never
 * starts half-confined.
 *
 * lnx_exec_spawn runs these steps as posix_spawn runs its own: in a
 * process that shares its parent's memory until the exec, on a stack of
 * its own, while the parent waits. So nothing here may change memory the
 * parent reads afterwards: the child works on a copy of its lnx_child,
 * allocates nothing, and the one global it sets (environ, for execvp's
 * search of the command's PATH) is put back by the parent. No signal
 * handler can run in it on that memory: init installs none (its
 * dispositions are cagerun's at the clone, default or ignored), and the
 * signals it takes stay blocked until step 1 has set every one back to
 * its default.
 */
#include "lnx_sandbox.h"
#include "lnx_notify.h"
#include "lnx_observe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "lnx_landlock.h"
#include "lnx_limits.h"
#include "lnx_notify.h"
#include "lnx_seccomp.h"
#include "runcommon.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

extern char **environ;

void lnx_reset_signals(void)
{
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

bool lnx_exec_drop_privileges(char *err, size_t errlen)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		snprintf(err, errlen, "cannot set no_new_privs: %s", strerror(errno));
		return false;
	}
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
					     SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
					     SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
					     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) != 0) {
		snprintf(err, errlen, "cannot lock the securebits: %s", strerror(errno));
		return false;
	}
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
			snprintf(err, errlen, "cannot drop capability %d: %s", cap, strerror(errno));
			return false;
		}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
		snprintf(err, errlen, "cannot clear ambient capabilities: %s", strerror(errno));
		return false;
	}
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof d);
	if (syscall(SYS_capset, &h, d) != 0) {
		snprintf(err, errlen, "cannot drop capabilities: %s", strerror(errno));
		return false;
	}
	return true;
}

bool lnx_exec_landlock(const struct lnx_spec *s, int *keep, char *err, size_t errlen)
{
	struct lnx_landlock ll = { .fd = -1 };
	if (!lnx_landlock_open(&ll, s->landlock_abi, err, errlen))
		return false;
	const struct lplan *p = s->plan;
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct lplan_node *n = &p->nodes[i];
		if (n->grant && n->exists &&
		    !lnx_landlock_grant(&ll, n->path, n->grant, n->is_dir, err, errlen)) {
			lnx_landlock_close(&ll);
			return false;
		}
	}
	const char *priv[] = { s->tmp_dir, s->home_dir };
	for (size_t i = 0; i < 2; i++)
		if (priv[i] && !lnx_landlock_grant(&ll, priv[i], LP_ALL, true, err, errlen)) {
			lnx_landlock_close(&ll);
			return false;
		}
	if (!keep)
		return lnx_landlock_enforce(&ll, err, errlen);
	*keep = ll.fd;
	return lnx_landlock_restrict(ll.fd, err, errlen);
}

_Noreturn void lnx_exec_main(struct lnx_child *c)
{
	const struct lnx_spec *s = c->s;
	char err[600];
	lnx_reset_signals();
	if (setpgid(0, 0) != 0)
		lnx_child_fail(c, 125, "cannot give the command its own process group");
	if (s->take_terminal)
		run_take_terminal();
	if (chdir(s->cwd) != 0) {
		snprintf(err, sizeof err, "cannot change to %s: %s", s->cwd, strerror(errno));
		lnx_child_fail(c, 125, err);
	}
	/* The process limit counts from here: the command and all it starts.
	 * The open-files limit is the one cagerun was started with (it raised
	 * its own for the proxy), lowered by the policy's `limit files`. */
	if (!lnx_limits_apply_rlimits(s->nproc, &s->nofile, err, sizeof err))
		lnx_child_fail(c, 125, err);
	/* Under the guard, privileges are already gone (init dropped them
	 * before starting us, and securebits cannot be set again without
	 * them); Landlock is applied once more, a layer below init's, which
	 * keeps the command from tracing it: the very ruleset init built and
	 * enforced on itself, so the same rules without opening every
	 * granted path again. */
	if (c->notify_sock < 0 && !lnx_exec_drop_privileges(err, sizeof err))
		lnx_child_fail(c, 125, err);
	if (c->ruleset_fd >= 0) {
		bool ok = lnx_landlock_restrict(c->ruleset_fd, err, sizeof err);
		close(c->ruleset_fd);
		c->ruleset_fd = -1;
		if (!ok)
			lnx_child_fail(c, 125, err);
	} else if (!lnx_exec_landlock(s, NULL, err, sizeof err)) {
		lnx_child_fail(c, 125, err);
	}
	/* --log-denials: the observer's filter (its listener leaves by
	 * sendmsg, which it does not watch). */
	int ofd = -1;
	if (s->observe && (ofd = lnx_observe_install(false, err, sizeof err)) < 0)
		lnx_child_fail(c, 125, err);
	if (!lnx_seccomp_install(s->seccomp, err, sizeof err))
		lnx_child_fail(c, 125, err);
	if (c->notify_sock >= 0) {
		int l = lnx_notify_install(c->notify_insns, c->notify_len, err, sizeof err);
		if (l < 0)
			lnx_child_fail(c, 125, err);
		if (!lnx_notify_send_fd(c->notify_sock, l))
			lnx_child_fail(c, 125, "cannot hand the create guard its listener");
		close(l);
		close(c->notify_sock);
	}
	if (ofd >= 0) {
		if (!lnx_notify_send_fd(s->observe_sock, ofd))
			lnx_child_fail(c, 125, "cannot hand the denial observer's listener to cagerun");
		close(ofd);
	}
	if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0)
		lnx_child_fail(c, 125, "cannot close inherited descriptors");
	/* The error pipe stays open (close-on-exec) until the exec succeeds. */
	environ = (char **)s->envp;
	execvp(s->argv[0], s->argv);
	int e = errno;
	snprintf(err, sizeof err, "%s: %s", s->argv[0], strerror(e));
	lnx_child_fail(c, e == ENOENT ? 127 : 126, err);
}

static int spawn_main(void *arg)
{
	/* A copy in this process's own stack: lnx_exec_main changes fields. */
	struct lnx_child c = *(const struct lnx_child *)arg;
	lnx_exec_main(&c);
}

/* AddressSanitizer keeps its own record of each thread's stack and
 * cannot follow one it did not make (it warns, and may report errors that
 * are not there), so sanitizer builds fork instead: their tests check the
 * steps, the gcc build's tests the spawn as well. */
#if defined(__SANITIZE_ADDRESS__)
#define LNX_SPAWN_FORKS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LNX_SPAWN_FORKS 1
#endif
#endif

pid_t lnx_exec_spawn(const struct lnx_child *c)
{
#ifdef LNX_SPAWN_FORKS
	pid_t child = fork();
	if (child == 0)
		spawn_main((void *)c);
	return child;
#else
	/* What the steps above need (err buffers, execvp's path buffer, a
	 * script's argv), with room to spare; only the pages used are ever
	 * faulted in. */
	enum { SPAWN_STACK = 256 * 1024 };
	void *stack = mmap(NULL, SPAWN_STACK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	char **env = environ;
	pid_t pid = clone(spawn_main, (char *)stack + SPAWN_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD,
			  (void *)c);
	int e = errno; /* the child shares it too, until its exec */
	environ = env;
	/* Back here, the child has exec'd or exited: its stack is unused. */
	munmap(stack, SPAWN_STACK);
	if (pid < 0)
		errno = e;
	return pid;
#endif
}
