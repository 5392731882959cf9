/*
 * lnx_super.c - the create guard's supervisor (lplan_guard in lplan.h),
 * which is the sandbox's init itself when the plan has guards: no process
 * stands between init and the command.
 *
 * Why it is built this way (docs/security-model.md, "The create guard"):
 *
 * - Init sets it up after the mounts, before cagerun lets the command
 *   start, so it sees the sandbox's mount namespace and /proc; it then
 *   drops every privilege it held for the mounts and applies the very
 *   Landlock rules of the command, so what it does for the command is
 *   bounded exactly like the command. Nothing of init needs a privilege
 *   after the mounts.
 * - It starts the command, which applies the rules once more: its Landlock
 *   domain is then nested below init's, and Landlock forbids a process to
 *   trace, read or (ABI 6) signal one in an enclosing domain. Init is also
 *   non-dumpable, and SIGKILL and SIGSTOP sent from inside its PID
 *   namespace never reach a namespace's init anyway.
 * - As process 1 of the namespace it is the command's parent and every
 *   orphan's, so every process of the command stays its descendant
 *   (pidfd_getfd and reading a process's memory need ptrace rights, which
 *   Yama may limit to ancestors).
 * - If it dies, the kernel ends every process of its PID namespace, and
 *   cagerun, seeing init killed, says so and exits 125: closed, never
 *   open. An error on the listener stops the run the same way.
 *
 * When the command exits, init ends whatever it left running, prints the
 * names the guard refused (unless --quiet) and exits with its status.
 */
#include "lnx_super.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
					return run_wait_code(st);
		}
	}
}


void lnx_super_prepare(struct lnx_child *c, struct lnx_super *sv)
{
	const struct lnx_spec *s = c->s;
	char err[600];
	sigset_t ss;
	lnx_block_forwarded(&ss);
	/* Its report at exit must not stop it (a background group writing to
	 * a terminal with tostop) or kill it (a closed pipe): either would
	 * look like, or be, an init that never ends the run cleanly. The
	 * command sets every signal back to default before it execs. */
	signal(SIGTTOU, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sv->sig_fd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	sv->nt = NULL;
	sv->status_sock = -1;
	sv->ruleset = -1;
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
	sv->len = lnx_notify_filter(rules, nrules, sv->insns);
	sv->g = lnx_guard_new(s->plan, s->links_ok, s->guard_seen);
	if (sv->sig_fd < 0 || !sv->len || !sv->g ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv->sp) != 0) {
		snprintf(err, sizeof err, "cannot start the create guard: %s", strerror(errno));
		lnx_child_fail(c, 125, err);
	}
	/* Dropping capabilities clears the parent-death signal: set again,
	 * it covers cagerun's death from here on, and the read of `r` that
	 * follows sees one that came before (cagerun alone holds the other
	 * end of that pipe). */
	if (!lnx_exec_drop_privileges(err, sizeof err))
		lnx_child_fail(c, 125, err);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
		snprintf(err, sizeof err, "cannot set the parent-death signal: %s", strerror(errno));
		lnx_child_fail(c, 125, err);
	}
	/* Its own needs do not depend on the policy: /proc/TID/status of the
	 * command's threads is read by a reader started before the command's
	 * rules are applied here, confined to reading /proc; unless those
	 * rules let read it anyway, when the reader would only cost a
	 * process. */
	pid_t reader;
	if (!plan_reads_proc(s->plan) &&
	    (sv->status_sock = lnx_notify_status_reader(s->landlock_abi, &reader, err,
							 sizeof err)) < 0)
		lnx_child_fail(c, 125, err);
	if (!lnx_exec_landlock(s, &sv->ruleset, err, sizeof err))
		lnx_child_fail(c, 125, err);
	prctl(PR_SET_DUMPABLE, 0);
}

int lnx_super_serve(struct lnx_child *c, struct lnx_super *sv)
{
	const struct lnx_spec *s = c->s;
	char err[600];
	/* What init holds beside (sp[0], sig_fd, status_sock) is
	 * close-on-exec: the command never has it. */
	struct lnx_child cc = *c;
	cc.notify_sock = sv->sp[1];
	cc.notify_insns = sv->insns;
	cc.notify_len = sv->len;
	cc.ruleset_fd = sv->ruleset;
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
	close(sv->ruleset);
	sv->ruleset = -1;
	/* The command reports its own start-up failures; cagerun must see
	 * the pipe close when it execs. */
	close(c->err_fd);
	c->err_fd = -1;
	close(sv->sp[1]);
	int l = lnx_notify_recv_fd(sv->sp[0]);
	close(sv->sp[0]);
	if (l < 0) {
		/* The command failed before handing over its listener (and
		 * said why): nothing to serve. */
		int st;
		while (waitpid(cmd, &st, 0) < 0 && errno == EINTR)
			;
		return run_wait_code(st);
	}
	/* Each name the guard makes has its mode from the tracee's umask
	 * already (lnx_guard.c); its own, cagerun's, must take nothing more
	 * away: a command under umask 002 would get 644 for 664 files. The
	 * command has its own copy since the clone (no CLONE_FS). */
	umask(0);
	struct lnx_notify *nt = sv->nt = lnx_notify_new(l);
	if (nt && sv->status_sock >= 0) {
		lnx_notify_use_status_reader(nt, sv->status_sock); /* it owns it now */
		sv->status_sock = -1;
	}
	if (!nt || !(s->guard_observe ? lnx_guard_attach_all_opens(sv->g, nt)
				      : lnx_guard_attach(sv->g, nt)) ||
	    (s->guard_observe && !lnx_observer_attach(nt, s->guard_observe, 0)))
		super_fail(cmd, "cannot set up the notification loop");
	/* Before the first call is answered: the command waits on its first
	 * notified call until serve() reads it. */
	if (s->guard_seen)
		__atomic_store_n(&s->guard_seen->serving, 1, __ATOMIC_SEQ_CST);
	return serve(nt, sv->sig_fd, cmd);
}

void lnx_super_report(const struct lnx_spec *s, struct lnx_super *sv)
{
	/* The reader has nothing left to read: it ends when its socket
	 * closes (it is in a Landlock domain of its own, which init's
	 * signals do not reach), so its exit runs beside the report. */
	if (sv->nt)
		lnx_notify_use_status_reader(sv->nt, -1);
	else if (sv->status_sock >= 0)
		close(sv->status_sock);
	sv->status_sock = -1;
	if (!s->quiet)
		lnx_guard_report(sv->g, stderr);
	if (s->guard_observe && !s->quiet && s->guard_observe->recorded) {
		fprintf(stderr, "cagerun: paths the policy denied:\n");
		mon_sink_print(s->guard_observe, stderr, "cagerun:   ");
	}
	fflush(stderr);
}
