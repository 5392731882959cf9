/*
 * lnx_super.c - the supervisor that runs the create guard, between init
 * and the command when the plan has guards (lplan_guard in lplan.h).
 *
 * Why it is built this way (docs/security-model.md, "The create guard"):
 *
 * - It is forked by init after the mounts, so it sees the sandbox's mount
 *   namespace and /proc; it drops every privilege and applies the very
 *   Landlock rules of the command, so what it does for the command is
 *   bounded exactly like the command.
 * - It forks the command, which applies the rules once more: its Landlock
 *   domain is then nested below the supervisor's, and Landlock forbids a
 *   process to trace, read or (ABI 6) signal one in an enclosing domain.
 *   It also marks itself non-dumpable.
 * - It is the command's parent and a child subreaper, so every process of
 *   the command stays its descendant (pidfd_getfd and reading a process's
 *   memory need ptrace rights, which Yama may limit to ancestors).
 * - It lives in a process group of its own, so a `kill 0` in the command
 *   does not reach it; it forwards the signals init forwards to it to the
 *   command's group.
 * - If it dies, the kernel fails every notified call with ENOSYS (the
 *   command cannot create anything then) and init, seeing its supervisor
 *   child killed, stops the run and says so: closed, never open.
 *
 * It exits with the command's status when the command exits, after
 * printing the names it refused (unless --quiet); init then ends whatever
 * the command left running.
 */
#include "lnx_sandbox.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lnx_guard.h"
#include "lnx_notify.h"
#include "lnx_observe.h"
#include "mon_sink.h"

static _Noreturn void super_fail(pid_t cmd, const char *what)
{
	fprintf(stderr, "cagerun: create guard: %s; the sandbox was stopped\n", what);
	if (cmd > 0)
		kill(cmd, SIGKILL);
	_exit(125);
}

/* Whether the plan's Landlock rules, which this process holds too, let
 * it read /proc/TID/status itself: a grant of reading files on /proc or
 * on the root, since a directory's rights apply beneath it
 * (lnx_exec_landlock grants each node's rights and nothing else that
 * reaches /proc). */
static bool plan_reads_proc(const struct lplan *p)
{
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct lplan_node *n = &p->nodes[i];
		if (n->exists && n->is_dir && (n->grant & LP_READ_FILE) &&
		    (!strcmp(n->path, "/") || !strcmp(n->path, "/proc")))
			return true;
	}
	return false;
}

/* Serves the guard until the command exits; returns its status. */
static int serve(struct lnx_notify *nt, int sig_fd, pid_t cmd)
{
	int lfd = lnx_notify_fd(nt);
	for (;;) {
		struct pollfd p[2] = { { lfd, POLLIN, 0 }, { sig_fd, POLLIN, 0 } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			super_fail(cmd, "poll failed");
		}
		if (p[0].revents & POLLIN) {
			int rc = lnx_notify_handle(nt);
			if (rc < 0 && rc != -ENOENT && rc != -EINTR) {
				char m[128];
				snprintf(m, sizeof m, "the listener failed: %s", strerror(-rc));
				super_fail(cmd, m);
			}
		} else if (p[0].revents & (POLLHUP | POLLERR)) {
			lfd = -1; /* no process is left under the filter */
		}
		if (!(p[1].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		while (read(sig_fd, &si, sizeof si) == (ssize_t)sizeof si) {
			if (si.ssi_signo != SIGCHLD) {
				if (kill(-cmd, (int)si.ssi_signo) != 0)
					kill(cmd, (int)si.ssi_signo);
				continue;
			}
			int st;
			pid_t w;
			while ((w = waitpid(-1, &st, WNOHANG)) > 0)
				if (w == cmd)
					return lnx_status_code(st);
		}
	}
}

_Noreturn void lnx_super_main(struct lnx_child *c)
{
	const struct lnx_spec *s = c->s;
	char err[600];
	sigset_t ss;
	lnx_block_forwarded(&ss);
	/* Its report at exit must not stop it (a background group writing to
	 * a terminal with tostop) or kill it (a closed pipe): either would
	 * look like, or be, a supervisor that never ends the run cleanly. The
	 * command sets every signal back to default before it execs. */
	signal(SIGTTOU, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	int sig_fd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	struct lnx_notify_rule rules[LNX_NOTIFY_MAX_RULES];
	size_t nrules = 0;
	if (s->guard_observe) {
		/* The observer's calls first: for a call in both lists its
		 * rule (open and openat: notify unless O_PATH) must win over
		 * the guard's O_CREAT test (a rule whose test fails allows the
		 * call at once). What it lets pass creates nothing: with
		 * O_PATH the kernel ignores O_CREAT. */
		struct lnx_notify_rule g[LNX_NOTIFY_MAX_RULES];
		size_t ng = lnx_guard_rules(g, LNX_NOTIFY_MAX_RULES);
		nrules = lnx_observe_rules(false, rules, LNX_NOTIFY_MAX_RULES);
		for (size_t i = 0; nrules && i < ng; i++) {
			bool have = false;
			for (size_t k = 0; k < nrules && !have; k++)
				have = rules[k].nr == g[i].nr;
			if (!have && nrules < LNX_NOTIFY_MAX_RULES)
				rules[nrules++] = g[i];
			else if (!have)
				nrules = 0; /* too many: refuse below */
		}
	} else {
		nrules = lnx_guard_rules(rules, LNX_NOTIFY_MAX_RULES);
	}
	struct sock_filter insns[LNX_NOTIFY_MAX_INSNS];
	unsigned short len = lnx_notify_filter(rules, nrules, insns);
	struct lnx_guard *g = lnx_guard_new(s->plan, s->links_ok, s->guard_seen);
	int sp[2];
	if (sig_fd < 0 || !len || !g || setpgid(0, 0) != 0 ||
	    prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
		snprintf(err, sizeof err, "cannot start the create guard: %s", strerror(errno));
		lnx_child_fail(c, 125, err);
	}
	/* Its own needs do not depend on the policy: /proc/TID/status of the
	 * command's threads is read by a reader started before the command's
	 * rules are applied here, confined to reading /proc; unless those
	 * rules let read it anyway, when the reader would only cost a
	 * process. */
	if (!lnx_exec_drop_privileges(err, sizeof err))
		lnx_child_fail(c, 125, err);
	pid_t reader = -1;
	int status_sock = -1;
	if (!plan_reads_proc(s->plan) &&
	    (status_sock = lnx_notify_status_reader(s->landlock_abi, &reader, err, sizeof err)) < 0)
		lnx_child_fail(c, 125, err);
	int ruleset = -1;
	if (!lnx_exec_landlock(s, &ruleset, err, sizeof err))
		lnx_child_fail(c, 125, err);
	prctl(PR_SET_DUMPABLE, 0);
	/* What the supervisor holds beside (sp[0], sig_fd, status_sock) is
	 * close-on-exec: the command never has it. */
	struct lnx_child cc = *c;
	cc.notify_sock = sp[1];
	cc.notify_insns = insns;
	cc.notify_len = len;
	cc.ruleset_fd = ruleset;
	/* Observing too (--log-denials), the filter the command installs
	 * watches its own exec, which this process must answer: it goes on
	 * running beside the command, so it forks. Else the command's steps
	 * up to the exec make no call the guard watches, and it is spawned. */
	pid_t cmd = s->guard_observe ? fork() : lnx_exec_spawn(&cc);
	if (cmd < 0) {
		snprintf(err, sizeof err, "cannot fork the command: %s", strerror(errno));
		lnx_child_fail(c, 125, err);
	}
	if (cmd == 0)
		lnx_exec_main(&cc);
	close(ruleset);
	/* The command reports its own start-up failures; cagerun must see
	 * the pipe close when it execs. */
	close(c->err_fd);
	close(sp[1]);
	int l = lnx_notify_recv_fd(sp[0]);
	close(sp[0]);
	int code;
	if (l < 0) {
		/* The command failed before handing over its listener (and
		 * said why): nothing to serve. */
		int st;
		while (waitpid(cmd, &st, 0) < 0 && errno == EINTR)
			;
		code = lnx_status_code(st);
	} else {
		struct lnx_notify *nt = lnx_notify_new(l);
		if (nt && status_sock >= 0)
			lnx_notify_use_status_reader(nt, status_sock);
		if (!nt || !(s->guard_observe ? lnx_guard_attach_all_opens(g, nt)
					      : lnx_guard_attach(g, nt)) ||
		    (s->guard_observe && !lnx_observer_attach(nt, s->guard_observe, 0)))
			super_fail(cmd, "cannot set up the notification loop");
		/* Before the first call is answered: the command waits on its
		 * first notified call until serve() reads it. */
		if (s->guard_seen)
			__atomic_store_n(&s->guard_seen->serving, 1, __ATOMIC_SEQ_CST);
		code = serve(nt, sig_fd, cmd);
	}
	/* The command is gone: the reader has nothing left to read, and
	 * ending it now lets its exit run beside the report below instead
	 * of after this process's (init waits for both). */
	if (reader > 0)
		kill(reader, SIGKILL);
	if (!s->quiet)
		lnx_guard_report(g, stderr);
	if (s->guard_observe && !s->quiet && s->guard_observe->recorded) {
		fprintf(stderr, "cagerun: paths the policy denied:\n");
		mon_sink_print(s->guard_observe, stderr, "cagerun:   ");
	}
	fflush(stderr);
	_exit(code);
}
