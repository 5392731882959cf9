/*
 * lnx_run.c - run_command() on Linux: the order of everything cagerun does
 * around the sandbox.
 *
 *   compile the policy -> choose the mode -> check every path param and the
 *   kernel (Landlock ABI) -> build the Linux plan (refuse what it cannot
 *   enforce) -> lease -> proxy (enforce) -> environment -> start the
 *   sandbox -> adopt its listeners -> wait for the exec -> serve the proxy
 *   and forward signals until init exits -> report, clean up.
 *
 * The seccomp filter is built here, before the clone, so that the child
 * only installs it (see lnx_seccomp.h).
 *
 * Everything before "wait for the exec" that fails ends the run with 125
 * and the command has not started.
 */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cpt.h"
#include "lease.h"
#include "lnx_landlock.h"
#include "lnx_sandbox.h"
#include "lnx_seccomp.h"
#include <seccomp.h>
#include "lplan.h"
#include "policy.h"
#include "prx.h"
#include "runcommon.h"
#include "runenv.h"

extern char **environ;

/* The proxy's port inside the sandbox's own network namespace: the first
 * from 3128 up that no forwarded loopback port takes. */
static uint16_t pick_proxy_port(const struct lplan *plan)
{
	for (uint16_t port = 3128;; port++) {
		bool used = false;
		for (size_t i = 0; i < plan->nports; i++)
			used |= plan->ports[i].port == port;
		if (!used)
			return port;
	}
}

struct lrun {
	const struct run_opts *o;
	cage_policy *pol;
	const struct ir_profile *prof;
	enum ir_mode mode;
	struct lplan plan;
	struct lease lease;
	char *tbytes;
	struct cpt_table table;
	bool table_loaded;
	struct prx_server *srv;
	int log_fd, sig_fd;
	char **envp;
	struct lnx_sandbox sb;
	struct lnx_seccomp_prog sc;
	int status; /* init's exit status, once it exited */
	bool exited;
	bool had_terminal;
};

#define fail run_fail

static int load_policy(struct lrun *r)
{
	return run_load_policy(r->o, &r->pol, &r->prof, &r->mode);
}

/* Whether lnx_mount_apply will need the lease's empty file: a hidden
 * file that exists (a hidden directory gets an empty tmpfs instead). */
static bool plan_hides_file(const struct lplan *plan)
{
	for (size_t i = 0; i < plan->nnodes; i++) {
		const struct lplan_node *n = &plan->nodes[i];
		if (n->exists && !n->is_dir && (n->mount & LPM_HIDE))
			return true;
	}
	return false;
}

static void print_rule_msgs(const struct lplan_msg *m, size_t n, const char *kind)
{
	char rule[1200];
	for (size_t i = 0; i < n; i++) {
		if (m[i].rule) {
			lplan_rule_text(m[i].rule, rule, sizeof rule);
			fprintf(stderr, "cagerun: %s: %s: %s\n", kind, rule, m[i].text);
		} else {
			fprintf(stderr, "cagerun: %s: %s\n", kind, m[i].text);
		}
	}
}

static int check_kernel(struct lrun *r, int *abi)
{
	const char *why = NULL;
	*abi = lnx_landlock_abi(&why);
	if (*abi == 0)
		return fail("Landlock is not available (%s); refusing to run unconfined", why);
	if (*abi < 3)
		return fail("Landlock ABI %d is too old: ABI 3 (Linux 6.2) is needed to confine "
			    "truncate(2); refusing to run with a wider policy",
			    *abi);
	if (r->mode == IR_MODE_ENFORCE_FS && *abi < 6)
		return fail("enforce-fs needs Landlock ABI 6 (Linux 6.12) to keep the command from "
			    "abstract unix sockets outside; this kernel has ABI %d. Use --mode "
			    "enforce, which gives the sandbox its own network namespace",
			    *abi);
	return 0;
}


static bool on_signal(void *ctx);

static int build_table(struct lrun *r)
{
	size_t tlen = 0;
	FILE *mem = open_memstream(&r->tbytes, &tlen);
	const char *eerr = NULL;
	bool ok = mem && cage_emit(r->pol, "table", mem, &eerr);
	if (mem && fclose(mem) != 0)
		ok = false;
	if (!ok)
		return fail("%s: cannot build the proxy table: %s", r->o->policy,
			    eerr ? eerr : strerror(errno));
	struct cpt_error terr;
	if (!cpt_load_mem(&r->table, r->tbytes, tlen, &terr))
		return fail("%s: proxy table rejected: %s", r->o->policy, terr.msg);
	r->table_loaded = true;
	return 0;
}

/* The server starts its resolver threads: only once the sandbox has been
 * cloned, since the child of a threaded process must not touch a lock
 * (malloc's) that another thread may hold at that moment. */
static int start_proxy_server(struct lrun *r)
{
	char err[512];
	struct prx_config cfg;
	memset(&cfg, 0, sizeof cfg);
	prx_limits_default(&cfg.limits);
	cfg.policy = prx_policy_of_table(&r->table);
	cfg.overrides = r->o->resolve;
	cfg.log_fd = -1;
	/* Denials as they happen, on the terminal the user watches. */
	cfg.notice_fd = r->o->quiet ? -1 : STDERR_FILENO;
	cfg.on_stop_fd = on_signal;
	cfg.stop_ctx = r;
	if (r->o->log_path) {
		r->log_fd = open(r->o->log_path,
				 O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (r->log_fd < 0)
			return fail("--log %s: %s", r->o->log_path, strerror(errno));
		cfg.log_fd = r->log_fd;
	}
	r->srv = prx_server_new(&cfg, err, sizeof err);
	if (!r->srv)
		return fail("%s", err);
	return 0;
}

static int adopt_listeners(struct lrun *r)
{
	char err[512];
	struct lnx_sandbox *sb = &r->sb;
	for (size_t i = 0; i < sb->nfds; i++) {
		int fd = sb->fds[i];
		sb->fds[i] = -1; /* the server owns it now, even on failure */
		bool ok;
		if (i == 0) {
			ok = prx_server_adopt_listener(r->srv, fd, false, err, sizeof err);
		} else {
			struct sockaddr_in dst = { .sin_family = AF_INET,
						   .sin_port = htons(sb->ports[i]) };
			dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			ok = prx_server_adopt_forward(r->srv, fd, (struct sockaddr *)&dst, sizeof dst,
						      err, sizeof err);
		}
		if (!ok)
			return fail("%s", err);
	}
	sb->nfds = 0;
	return 0;
}

/* The signalfd is readable: forward, or learn that init has exited.
 * True when the run is over. */
static bool on_signal(void *ctx)
{
	struct lrun *r = ctx;
	struct signalfd_siginfo si;
	while (read(r->sig_fd, &si, sizeof si) == (ssize_t)sizeof si) {
		if (si.ssi_signo != SIGCHLD) {
			if (r->sb.init > 0)
				kill(r->sb.init, (int)si.ssi_signo);
			continue;
		}
		int st;
		if (r->sb.init > 0 && waitpid(r->sb.init, &st, WNOHANG) == r->sb.init) {
			r->sb.init = -1;
			r->exited = true;
			r->status = WIFEXITED(st) ? WEXITSTATUS(st)
				    : WIFSIGNALED(st) ? 128 + WTERMSIG(st)
						      : RUN_SETUP_FAILED;
		}
	}
	return r->exited;
}

static void wait_without_proxy(struct lrun *r)
{
	while (!r->exited) {
		struct pollfd p = { r->sig_fd, POLLIN, 0 };
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		on_signal(r);
	}
}

static int block_signals(struct lrun *r)
{
	sigset_t ss;
	sigemptyset(&ss);
	int sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaddset(&ss, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) != 0)
		return fail("sigprocmask: %s", strerror(errno));
	r->sig_fd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r->sig_fd < 0)
		return fail("signalfd: %s", strerror(errno));
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return fail("cannot ignore SIGPIPE");
	return 0;
}

static int launch(struct lrun *r)
{
	int rc, abi;
	char err[1024];
	if ((rc = load_policy(r)))
		return rc;
	if (r->mode == IR_MODE_OFF)
		return run_unconfined(r->o->argv);
	if (r->mode == IR_MODE_MONITOR)
		return fail("monitor mode is not available on Linux yet; nothing was run (use "
			    "--mode enforce-fs or enforce)");
	if ((rc = check_kernel(r, &abi)))
		return rc;
	const char *perr = NULL;
	if (!lplan_build(&r->pol->arena, r->prof, &r->plan, &perr))
		return fail("%s", perr);
	if (r->o->verbose || r->plan.nerrors)
		print_rule_msgs(r->plan.notes, r->plan.nnotes, "note");
	if (r->plan.nerrors) {
		print_rule_msgs(r->plan.errors, r->plan.nerrors, "error");
		return fail("%s: %zu rule%s cannot be enforced exactly on Linux; nothing was run",
			    r->o->policy, r->plan.nerrors, r->plan.nerrors == 1 ? "" : "s");
	}
	/* Directories the policy lets the command create, created now so
	 * that their grants can be made (lplan.c, plan_missing). */
	for (size_t i = 0; i < r->plan.nmkdirs; i++) {
		const char *d = r->plan.mkdirs[i];
		struct stat st;
		if (mkdir(d, 0700) != 0 && !(errno == EEXIST && stat(d, &st) == 0 && S_ISDIR(st.st_mode)))
			return fail("cannot create %s: %s; nothing was run", d, strerror(errno));
		if (r->o->verbose)
			fprintf(stderr, "cagerun: created %s (the policy lets the command create it)\n", d);
	}
	bool isolate = r->mode == IR_MODE_ENFORCE;
	if (!lease_create(&r->lease, r->prof->private_home, err, sizeof err) ||
	    (plan_hides_file(&r->plan) && !lease_make_empty(&r->lease, err, sizeof err)))
		return fail("%s", err);
	if ((rc = block_signals(r)))
		return rc;
	if (isolate && (rc = build_table(r)))
		return rc;
	uint16_t pport = pick_proxy_port(&r->plan);
	char proxy_url[64];
	snprintf(proxy_url, sizeof proxy_url, "http://127.0.0.1:%u", (unsigned)pport);
	struct runenv_extra x = { r->lease.tmp, r->lease.home, isolate ? proxy_url : NULL,
				  r->o->prompt };
	r->envp = runenv_build(r->prof, environ, &x);
	if (!r->envp)
		return fail("out of memory");
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return fail("getcwd: %s", strerror(errno));
	r->had_terminal = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	struct lnx_spec spec = {
		.plan = &r->plan,
		.isolate_net = isolate,
		.argv = r->o->argv,
		.envp = r->envp,
		.cwd = cwd,
		.tmp_dir = r->lease.tmp,
		.home_dir = r->lease.home,
		.empty_file = r->lease.empty,
		.proxy_port = pport,
		.landlock_abi = abi,
		.seccomp = &r->sc,
		.take_terminal = r->had_terminal,
	};
	/* Built here rather than in the child: its allocations then land on
	 * the parent's own pages instead of copy-on-write ones, and the child
	 * allocates nothing after the clone. Unix sockets stay closed until
	 * the policy language can grant them. */
	const struct lnx_seccomp_opts so = { .allow_unix_sockets = false, .allow_inet = true };
	if (seccomp_api_get() < 3)
		return fail("seccomp: kernel or libseccomp too old (API level %u, need 3); nothing "
			    "was run", seccomp_api_get());
	if (!lnx_seccomp_prebuilt(&so, &r->sc) && !lnx_seccomp_build(&so, &r->sc, err, sizeof err))
		return fail("%s; nothing was run", err);
	if (!lnx_sandbox_start(&spec, &r->sb, err, sizeof err))
		return fail("%s; nothing was run", err);
	if (isolate && ((rc = start_proxy_server(r)) || (rc = adopt_listeners(r))))
		return rc;
	if (!lnx_sandbox_release(&r->sb, err, sizeof err)) {
		/* init is gone: its own reason, when it left one, says more. */
		char why[1024];
		if (lnx_sandbox_wait_exec(&r->sb, why, sizeof why))
			snprintf(err, sizeof err, "%s", why);
		return fail("%s; nothing was run", err);
	}
	if ((rc = lnx_sandbox_wait_exec(&r->sb, err, sizeof err))) {
		fprintf(stderr, "cagerun: %s%s\n", err,
			rc == RUN_SETUP_FAILED ? "; nothing was run" : "");
		return rc;
	}
	/* The proxy serves until init exits (on_signal); without one, or if
	 * the proxy stopped for another reason, wait here. */
	if (isolate && !prx_server_run(r->srv, r->sig_fd, err, sizeof err)) {
		fprintf(stderr, "cagerun: proxy: %s; stopping the sandbox\n", err);
		return RUN_SETUP_FAILED;
	}
	wait_without_proxy(r);
	return r->status;
}

static void restore_terminal(const struct lrun *r)
{
	if (r->had_terminal && tcgetpgrp(STDIN_FILENO) != getpgrp())
		run_take_terminal();
}

int run_command(const struct run_opts *o)
{
	struct lrun r;
	memset(&r, 0, sizeof r);
	r.o = o;
	r.log_fd = r.sig_fd = -1;
	r.sb.init = -1;
	r.sb.err_fd = -1;
	r.sb.go_fd = -1;
	int status = launch(&r);
	lnx_seccomp_prog_free(&r.sc);
	lnx_sandbox_kill(&r.sb);
	restore_terminal(&r);
	if (r.srv && !o->quiet)
		prx_server_print_denials(r.srv, stderr, "cagerun: ");
	prx_server_free(r.srv);
	if (r.sig_fd >= 0)
		close(r.sig_fd);
	if (r.log_fd >= 0)
		close(r.log_fd);
	if (r.table_loaded)
		cpt_close(&r.table);
	free(r.tbytes);
	runenv_free(r.envp);
	if (r.lease.dir) {
		char *dir = strdup(r.lease.dir);
		if (!lease_remove(&r.lease))
			fprintf(stderr, "cagerun: could not remove all of %s\n", dir ? dir : "the lease");
		free(dir);
	}
	if (r.pol != o->pol)
		cage_policy_free(r.pol);
	return status;
}
