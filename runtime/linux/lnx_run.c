/*
 * lnx_run.c - run_command() on Linux: the order of everything cagerun does
 * around the sandbox.
 *
 *   compile the policy -> choose the mode -> check every path param and the
 *   kernel (Landlock ABI) -> limits, signals, the proxy's table, the
 *   filter -> the Linux plan: bind the kept one, else build it (refuse
 *   what it cannot enforce, and a plan wider than the policy) and keep
 *   it -> lease -> environment -> start the sandbox -> confirm that
 *   nothing the kept plan depends on changed (else kill init and go back
 *   to the plan, built afresh) -> proxy (enforce) -> adopt its listeners
 *   -> release init -> wait for the exec -> serve the proxy and forward
 *   signals until init exits -> report, clean up.
 *
 * The seccomp filter is built here, before the clone, so that the child
 * only installs it (see lnx_seccomp.h).
 *
 * Everything before "wait for the exec" that fails ends the run with 125
 * and the command has not started.
 */
#include "run.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "agentstate.h"
#include "cpt.h"
#include "lch_ahead.h"
#include "lch_wire.h"
#include "lease.h"
#include "lnx_gitreport.h"
#include "lnx_guard.h"
#include "lnx_landlock.h"
#include "lnx_limits.h"
#include "lnx_monitor.h"
#include "lnx_mount.h"
#include "lnx_notify.h"
#include "lnx_observe.h"
#include "lnx_planload.h"
#include "lnx_plancache.h"
#include "lnx_sandbox.h"
#include "lnx_seccomp.h"
#include "lookup.h"
#include "lplan.h"
#include "mon_sink.h"
#include "path.h"
#include "cage.h"
#include "gs.h"
#include "policy.h"
#include "prx.h"
#include "runcommon.h"
#include "runenv.h"

extern char **environ;

/* The proxy's port inside the sandbox's own network namespace: the first
 * from 3128 up that no forwarded loopback port takes (3128 is also the
 * one a launcher's spare listens on ahead, lch_ahead.h). */
static uint16_t pick_proxy_port(const struct lplan *plan)
{
	for (uint16_t port = LCH_AHEAD_PROXY_PORT;; port++) {
		bool used = false;
		for (size_t i = 0; i < plan->nports; i++)
			used |= plan->ports[i].port == port;
		if (!used)
			return port;
	}
}

struct lrun {
	const struct run_opts *o;
	struct run_ahead *ahead; /* the launcher's namespaces made ahead, until used or dropped */
	cage_policy *pol;
	const struct ir_profile *prof;
	enum ir_mode mode;
	struct lplan plan;
	struct lnx_planload pl; /* where the plan came from, and the cache to keep safe */
	struct lease lease;
	char *tbytes;
	struct cpt_table table;
	bool table_loaded;
	struct prx_server *srv;
	int log_fd, sig_fd;
	char **envp;
	struct agentstate *agst; /* heap: 37 KB a memset of lrun would fault in */
	struct lnx_sandbox sb;
	struct lnx_seccomp_prog sc;
	struct mon_sink sink; /* monitor mode, and denials in enforce mode */
	bool have_sink;
	bool ran; /* the command was exec'd */
	int obs_sock; /* --log-denials: where the observer's listener arrives */
	struct lnx_observer *obs;
	struct gitreport git; /* repositories the run creates in the workspace */
	struct lnx_guard_seen *seen; /* shared with the guard's supervisor, or NULL */
	int status; /* init's exit status, once it exited */
	bool exited;
	/* With a status hook (the launcher's run): init's word, a pipe whose
	 * input is signalled on sig_fd (WORD_SIG); init_done once it came, so
	 * every process of the sandbox but init, which is exiting, is gone. */
	int word_fd;
	bool init_done;
	bool answered; /* init sent the hook's messages itself (lnx_spec.answer) */
	bool had_terminal;
	bool aborted; /* the launcher said its client left (LCH_ABORT_SIG) */
	struct rlimit nofile_start; /* what the command gets without `limit files` */
	struct lnx_limits lim;
	bool have_lim;
	/* The compile taken before its looks (run.h, confirm): confirmed, or
	 * found stale. */
	bool compile_confirmed, stale_compile;
	/* Git discovery assumed from the last launch, until confirmed
	 * (gs.h; git_holds). */
	struct gs_assumed gs;
};

#define fail run_fail

/* What launch returns when the compile it was given went stale before the
 * command could start (run_opts.confirm): nothing was run, and the caller,
 * which says so, compiles afresh. Never an exit status. */
#define COMPILE_STALE (-3)

/* Whether the compile run_opts.confirm covers is still right (always,
 * when there is none); found stale, the run ends with COMPILE_STALE. */
static bool compile_holds(struct lrun *r)
{
	if (r->o->confirm && !r->compile_confirmed && !r->stale_compile) {
		r->compile_confirmed = r->o->confirm(r->o->confirm_ctx);
		r->stale_compile = !r->compile_confirmed;
	}
	return !r->stale_compile;
}

/* Git discovery's records, kept beside the plans (gs_keep.h) in the
 * folder no sandbox can write (lnx_plancache.h): the walk of the
 * workspace (*.walk), and what it found (*.found). */
static bool is_found_record(const char *name)
{
	size_t n = strlen(name);
	return n > 6 && !strcmp(name + n - 6, ".found");
}

static bool walk_keep_load(void *ctx, struct arena *a, const char *name, const uint8_t **b,
			   size_t *n)
{
	struct lrun *r = ctx;
	if (!lnx_planload_cache(&r->pl, r->o->verbose))
		return false;
	char err[512];
	enum lnx_plancache_got got = lnx_plancache_read(a, &r->pl.cache, name, b, n, err, sizeof err);
	if (got == PLANCACHE_REJECTED && r->o->verbose)
		fprintf(stderr, "cagerun: git discovery's %s: %s/%s: %s; %s\n",
			is_found_record(name) ? "record of what it found" : "walk", r->pl.cache.dir,
			name, err, is_found_record(name) ? "looking first" : "walking again");
	return got == PLANCACHE_LOADED;
}

static void walk_keep_store(void *ctx, const char *name, const uint8_t *b, size_t n)
{
	struct lrun *r = ctx;
	char err[512];
	if (lnx_planload_cache(&r->pl, r->o->verbose) &&
	    !lnx_plancache_store(&r->pl.cache, name, b, n, err, sizeof err) && r->o->verbose)
		fprintf(stderr, "cagerun: git discovery's %s: not kept: %s\n",
			is_found_record(name) ? "record of what it found" : "walk", err);
}

/* Whether the sandbox is built beside what is confirmed after the clone
 * (a kept plan, a kept compile's looks, git discovery): the enforcing
 * modes, not with --log-denials, whose observer is set up from the plan. */
static bool built_beside(const struct lrun *r)
{
	return (r->mode == IR_MODE_ENFORCE || r->mode == IR_MODE_ENFORCE_FS) && !r->o->log_denials;
}

static int load_policy(struct lrun *r)
{
	int rc = run_load_policy(r->o, &r->pol, &r->prof, &r->mode);
	if (rc || r->mode == IR_MODE_OFF)
		return rc;
	/* Where a sandbox is built beside, git discovery is assumed as the
	 * last launch with the same inputs found it, and looked at while
	 * init builds its mounts, which take longer than cagerun's own work
	 * after the clone (git_holds). */
	bool assume = built_beside(r);
	const struct gs_keep keep = { r, walk_keep_load, walk_keep_store, assume };
	if (assume && gs_assume(r->pol, &r->gs, &keep))
		return 0;
	return run_discover_git(r->o, &keep, r->pol);
}

/* What launch_planned returns when the git discovery assumed was not
 * what the disk gives: the profile has the rules found in their place,
 * the attempt's sandbox (if any) is thrown away, and the run plans
 * again. Never an exit status. */
#define GIT_STALE (-4)

/* The assumed discovery looked at (once; 0 when none is assumed): 0 when
 * the disk gives the same, GIT_STALE when it gives other rules (now the
 * profile's), else the failure said. */
static int git_holds(struct lrun *r)
{
	if (!r->gs.on)
		return 0;
	const struct gs_keep keep = { r, walk_keep_load, walk_keep_store, true };
	struct gs_result now;
	char err[2048];
	enum gs_confirmed c = gs_confirm(r->pol, &r->gs, &keep, &now, err, sizeof err);
	if (c != GS_FAILED) {
		if (r->o->verbose)
			fprintf(stderr, "cagerun: git discovery: %s\n",
				c == GS_SAME ? "as the last launch found it (assumed, confirmed "
					       "while the sandbox was built)"
					     : "not what the last launch found; planning again");
		run_git_report(r->o, &now);
	}
	gs_result_free(&now);
	if (c == GS_FAILED)
		return fail("%s; nothing was run", err);
	return c == GS_SAME ? 0 : GIT_STALE;
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
	int rc = run_proxy_table(r->pol, r->o->policy, &r->tbytes, &r->table);
	r->table_loaded = rc == 0;
	return rc;
}

/* --log: created 0600, appended, never through a symlink. */
static int open_log(struct lrun *r)
{
	if (!r->o->log_path || r->log_fd >= 0)
		return 0;
	r->log_fd = run_open_log(r->o->log_path);
	if (r->log_fd < 0)
		return fail("--log %s: %s", r->o->log_path, strerror(errno));
	return 0;
}

/* Only once the sandbox has been cloned, since the child of a threaded
 * process must not touch a lock (malloc's) that another thread may hold at
 * that moment; the server's resolver threads start later still, with the
 * first name that needs DNS. */
static int start_proxy_server(struct lrun *r, struct prx_policy pol, const char *secret)
{
	char err[512];
	int rc;
	struct prx_config cfg;
	memset(&cfg, 0, sizeof cfg);
	prx_limits_default(&cfg.limits);
	cfg.policy = pol;
	cfg.secret = secret;
	cfg.overrides = r->o->resolve;
	cfg.log_fd = -1;
	/* Denials as they happen: on standard error, or in the session log
	 * when that is a terminal a full-screen command may own. */
	cfg.notice_fd = run_notice_fd(r->o);
	cfg.on_stop_fd = on_signal;
	cfg.stop_ctx = r;
	if ((rc = run_proxy_fit(&cfg.limits, false)))
		return rc;
	if (r->mode != IR_MODE_MONITOR && (rc = open_log(r)))
		return rc;
	cfg.log_fd = r->mode == IR_MODE_MONITOR ? -1 : r->log_fd;
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

/* The signal that says init's word is there (F_SETSIG on word_fd); one
 * of the real-time signals the C library leaves to programs. */
#define WORD_SIG (SIGRTMIN + 4)

/* The signalfd is readable: forward, or learn that init has exited.
 * True when the run is over. */
static bool on_signal(void *ctx)
{
	struct lrun *r = ctx;
	struct signalfd_siginfo si;
	while (read(r->sig_fd, &si, sizeof si) == (ssize_t)sizeof si) {
		unsigned char w[2];
		if ((int)si.ssi_signo == WORD_SIG) {
			if (r->word_fd >= 0 && (int)si.ssi_fd == r->word_fd && r->sb.init > 0 &&
			    read(r->word_fd, w, 2) == 2) {
				r->status = w[0];
				r->answered = w[1] == 1;
				r->exited = r->init_done = true;
			}
			continue;
		}
		if ((int)si.ssi_signo == LCH_ABORT_SIG) {
			/* The launcher's client left: the sandbox goes at once. */
			r->aborted = true;
			if (r->sb.init > 0)
				kill(r->sb.init, SIGKILL);
			continue;
		}
		if (si.ssi_signo != SIGCHLD) {
			if (r->sb.init > 0)
				kill(r->sb.init, (int)si.ssi_signo);
			continue;
		}
		/* Every child: in monitor mode cagerun is the subreaper of the
		 * command's tree, and orphans must not pile up as zombies. */
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			if (p != r->sb.init)
				continue;
			r->sb.init = -1;
			r->exited = true;
			r->status = WIFEXITED(st) ? WEXITSTATUS(st) : RUN_SETUP_FAILED;
			/* Init exits with the command's status, a signal's as
			 * 128+N: killed itself (from outside, since no process of
			 * the sandbox can), it took every process of the sandbox
			 * with it, and the create guard it served. */
			if (r->aborted)
				fprintf(stderr, "cagerun: stopped by the launcher (its client left, "
						"or it is ending)\n");
			else if (WIFSIGNALED(st))
				fprintf(stderr, "cagerun: the sandbox's init was killed (signal %d); "
						"the sandbox was stopped\n",
					WTERMSIG(st));
		}
	}
	return r->exited;
}

/* Whether the launcher's stop (LCH_ABORT_SIG) waits on the signalfd. */
static bool abort_pending(void)
{
	sigset_t p;
	return sigpending(&p) == 0 && sigismember(&p, LCH_ABORT_SIG) == 1;
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

/* The hosts the proxy denied, as monitor records in the --log file, so
 * the log says what enforce refused in the same form monitor mode uses. */
static void log_denial(void *ctx, const char *host, unsigned port, unsigned long count,
		       const char *rule)
{
	int fd = *(const int *)ctx;
	if (!*host) /* past the proxy's bound on distinct hosts */
		return;
	struct mon_record rec = { .time_ms = mon_now_ms(), .syscall = "proxy",
				  .access = IR_A_CONNECT, .host = host, .port = port,
				  .verdict = MON_DENIED, .count = count };
	if (rule && *rule && strcmp(rule, PRX_DENY_INTERNAL) != 0)
		rec.rule = rule;
	else if (rule && *rule)
		rec.rule_text = rule;
	(void)mon_record_write(fd, &rec);
}

static int block_signals(struct lrun *r)
{
	sigset_t ss;
	sigemptyset(&ss);
	int sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, WORD_SIG, LCH_ABORT_SIG };
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

/* The directory the session report looks through, and the workspace of
 * monitor mode's exclude-workspace toggle: the `workspace` param when the
 * policy has one, else where the command starts. */
static const char *workspace_of(struct lrun *r, const char *cwd)
{
	const struct ir_policy *ir = r->pol->ir;
	for (size_t i = 0; i < ir->nparams; i++) {
		const struct ir_param *p = &ir->params[i];
		char *path;
		const char *perr;
		if (p->type == IR_P_PATH && p->value && !strcmp(p->name, "workspace") &&
		    path_query(&r->pol->arena, ir->home, p->value, &path, &perr))
			return path;
	}
	return cwd;
}

/* ---- monitor mode ---- */

/* The proxy in log-only mode: every host is recorded by name and allowed,
 * internal addresses included, as an unsandboxed command would reach them. */
static void mon_on_host(void *ctx, const struct host_norm *h, unsigned port, struct prx_verdict *v)
{
	struct lrun *r = ctx;
	struct mon_class c;
	const char *name = h->kind == HOST_NAME && ir_host_is_localhost(h->name) ? "localhost"
										 : h->name;
	mon_sink_classify_host(&r->sink, name, port, &c);
	if (c.record) {
		struct mon_record rec = { .time_ms = mon_now_ms(), .syscall = "proxy",
					  .access = IR_A_CONNECT, .host = name, .port = port };
		mon_sink_record(&r->sink, &rec, &c);
	}
	v->allowed = true;
	v->rule[0] = '\0';
}

static void mon_on_addr(void *ctx, const struct sockaddr *sa, unsigned port, struct prx_verdict *v)
{
	(void)ctx;
	(void)sa;
	(void)port;
	v->allowed = true;
	v->rule[0] = '\0';
}

/* A loopback listener for the proxy, made before the fork so that its
 * port can go into the command's environment. */
static int proxy_listener(uint16_t *port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof a;
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 4096) != 0 ||
	    getsockname(s, (struct sockaddr *)&a, &len) != 0) {
		int e = errno;
		if (s >= 0)
			close(s);
		errno = e;
		return -1;
	}
	*port = ntohs(a.sin_port);
	return s;
}

static int launch_monitor(struct lrun *r)
{
	int rc;
	char err[1024], cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return fail("getcwd: %s", strerror(errno));
	if ((rc = open_log(r)))
		return rc;
	/* Before anything is made that the run must remove (the lease): a
	 * signal that ends the run is read, not acted on, from here. */
	if ((rc = block_signals(r)))
		return rc;
	if (!lease_create(&r->lease, r->prof->private_home, err, sizeof err))
		return fail("%s", err);
	const struct mon_opts mo = {
		.only_would_block = !r->o->record_covered,
		.exclude_workspace = !r->o->record_workspace,
		.workspace = workspace_of(r, cwd),
		.log_fd = r->log_fd,
		.always = { r->lease.tmp, r->lease.home },
	};
	mon_sink_init(&r->sink, r->prof, &mo);
	r->have_sink = true;
	char secret[33], proxy_url[96];
	if (!run_proxy_secret(secret))
		return fail("no random bytes for the proxy's secret");
	uint16_t pport = 0;
	int lfd = proxy_listener(&pport);
	if (lfd < 0)
		return fail("cannot listen for the proxy on 127.0.0.1: %s", strerror(errno));
	snprintf(proxy_url, sizeof proxy_url, "http://cage:%s@127.0.0.1:%u", secret, (unsigned)pport);
	if ((rc = run_agent_state(r->pol, r->o->verbose, r->agst))) {
		close(lfd);
		return rc;
	}
	struct runenv_extra x = { r->lease.tmp, r->lease.home, proxy_url, r->o->prompt,
				  r->agst->env, false, r->o->path_prefix };
	r->envp = runenv_build(r->prof, environ, &x);
	if (!r->envp) {
		close(lfd);
		return fail("out of memory");
	}
	r->had_terminal = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	struct lnx_monitor_child mc;
	if (!lnx_monitor_spawn(r->o->argv, r->envp, r->had_terminal, r->o->nofile, &mc, err,
			       sizeof err)) {
		close(lfd);
		if (mc.pid > 0)
			waitpid(mc.pid, NULL, 0);
		return fail("%s; nothing was run", err);
	}
	r->sb.init = mc.pid;
	r->obs = lnx_observer_start(mc.listen_fd, &r->sink, pport, err, sizeof err);
	struct prx_policy pol = { r, mon_on_host, mon_on_addr };
	bool ok = r->obs && !(rc = start_proxy_server(r, pol, secret));
	if (!ok)
		close(lfd);
	else
		ok = prx_server_adopt_listener(r->srv, lfd, true, err, sizeof err);
	if (!ok) {
		kill(mc.pid, SIGKILL);
		lnx_monitor_reap_leftovers(mc.pid);
		r->sb.init = -1;
		return rc ? rc : fail("%s; nothing was run", err);
	}
	if ((rc = lnx_monitor_wait_exec(&mc, err, sizeof err))) {
		fprintf(stderr, "cagerun: %s\n", err);
		return rc;
	}
	r->ran = true;
	if (!prx_server_run(r->srv, r->sig_fd, err, sizeof err)) {
		fprintf(stderr, "cagerun: proxy: %s; stopping the command\n", err);
		return RUN_SETUP_FAILED;
	}
	wait_without_proxy(r);
	lnx_monitor_reap_leftovers(mc.pid);
	return r->status;
}

/* --log-denials: the command sends the observer's listener right before
 * it execs, or fails and says why on err_fd (then wait_exec reports it). */
static int start_denial_observer(struct lrun *r)
{
	char err[512];
	struct pollfd p[2] = { { r->obs_sock, POLLIN, 0 }, { r->sb.err_fd, POLLIN, 0 } };
	int n;
	do
		n = poll(p, 2, 30000);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return fail("the denial observer's listener did not arrive; stopping the sandbox");
	if (!(p[0].revents & POLLIN))
		return 0; /* the command failed first: wait_exec says why */
	int fd = lnx_notify_recv_fd(r->obs_sock);
	if (fd < 0)
		return 0;
	r->obs = lnx_observer_start(fd, &r->sink, 0, err, sizeof err);
	if (!r->obs)
		return fail("%s; stopping the sandbox", err);
	return 0;
}

/* What launch_planned returns when the kept plan it started under was
 * found stale before the command could start: its sandbox is gone, and
 * the run plans again. Never an exit status. */
#define PLAN_STALE (-2)

/* The kept plan a launcher binds beside the compile it keeps for its
 * spares (run.h): a run that takes the compile takes the plan, and reads
 * and binds no file; it is confirmed like any kept plan, and found stale
 * it is marked so, which has the launcher compile and bind again. */
struct run_plan_ahead {
	struct lnx_held_plan h;
	bool stale; /* a run found it so */
};

struct run_plan_ahead *run_plan_ahead_make(cage_policy *pol, const char *cwd)
{
	if (!pol || !pol->ir || !pol->ir->selected)
		return NULL;
	struct run_plan_ahead *p = malloc(sizeof *p);
	if (p && lnx_plan_hold(&pol->arena, pol->ir, pol->ir->selected, cwd, &p->h)) {
		p->stale = false;
		return p;
	}
	free(p);
	return NULL;
}

void run_plan_ahead_free(struct run_plan_ahead *p)
{
	free(p);
}

bool run_plan_ahead_stale(const struct run_plan_ahead *p)
{
	return p && p->stale;
}

static int launch_planned(struct lrun *r, int abi, const char *cwd, bool defer);

/* A stale attempt undone: its init (and every mount it made, in a mount
 * namespace of its own) killed, its lease and environment gone. What
 * does not depend on the plan (limits, signals, table, filter) stays. */
static void drop_attempt(struct lrun *r)
{
	lnx_sandbox_kill(&r->sb);
	if (r->sb.ahead) {
		/* Init went into the namespaces made ahead: spent. */
		lch_ahead_drop(r->ahead);
		r->ahead = NULL;
		r->sb.ahead = false;
	}
	if (r->word_fd >= 0)
		close(r->word_fd);
	r->word_fd = -1;
	runenv_free(r->envp);
	r->envp = NULL;
	if (r->lease.dir && !lease_remove(&r->lease))
		fprintf(stderr, "cagerun: could not remove all of a lease\n");
}

static int launch(struct lrun *r)
{
	int rc, abi;
	char err[1024];
	if ((rc = load_policy(r)))
		return rc;
	/* A compile taken before its looks is confirmed while init builds
	 * its mounts; where no sandbox is built beside (mode off, monitor,
	 * or --log-denials), first. The agents' copies below may be made
	 * before it is: a kept compile is one that ran before, so they are
	 * what its runs made already, made again only where removed since. */
	bool beside = built_beside(r);
	if (!beside && !compile_holds(r))
		return COMPILE_STALE;
	if (r->mode == IR_MODE_OFF || r->mode == IR_MODE_MONITOR) {
		/* No sandbox to clone: the helper that holds them must not
		 * live on beside the command (which mode off execs). */
		lch_ahead_drop(r->ahead);
		r->ahead = NULL;
	}
	assert(beside || !r->o->confirm || r->compile_confirmed);
	if (r->mode == IR_MODE_OFF)
		return run_unconfined(r->o->argv, r->o->nofile);
	if (r->mode == IR_MODE_MONITOR)
		return launch_monitor(r);
	if ((rc = check_kernel(r, &abi)))
		return rc;
	/* The agents' own folders and copies first (agentstate.h): the plan
	 * mounts what exists when it is built, and a folder made after it
	 * (an agent never run on this machine) would be read-only inside. */
	if ((rc = run_agent_state(r->pol, r->o->verbose, r->agst)))
		return rc;
	/* What does not depend on the plan, once: the signals (before the
	 * cgroups, so that a signal that ends the run cannot leave them), the
	 * limits, the proxy's table, the seccomp filter, the git report. */
	if ((rc = block_signals(r)))
		return rc;
	r->have_lim = true;
	if (!lnx_limits_prepare(&r->lim, r->prof, &r->nofile_start, err, sizeof err))
		return fail("%s; nothing was run", err);
	if ((rc = run_limits_gate(r->prof, r->lim.why, r->o->quiet)))
		return rc;
	if (r->o->verbose)
		for (int k = 0; k < IR_LIM_N; k++)
			if (r->prof->limits[k].set && !r->lim.why[k])
				fprintf(stderr, "cagerun: limit %s: %s\n", ir_limit_name((enum ir_limit_kind)k),
					k == IR_LIM_PROCESSES ? (r->lim.cg_pids ? "pids cgroup"
									 : "RLIMIT_NPROC in the user namespace")
					: k == IR_LIM_MEMORY ? (r->lim.mem_dir ? "memory cgroup (cgroup v1)"
								 : "memory cgroup")
					: k == IR_LIM_TMP    ? "size of the tmpfs on TMPDIR"
							     : "RLIMIT_NOFILE");
	bool isolate = r->mode == IR_MODE_ENFORCE;
	if (isolate && (rc = build_table(r)))
		return rc;
	/* Said now rather than at the command's first connection to a name,
	 * which would fail with 502 (lookup.h). */
	char lk[PATH_MAX], lkwhy[256];
	if (isolate && !r->o->quiet && !lookup_helper_path(lk, sizeof lk, lkwhy, sizeof lkwhy))
		fprintf(stderr, "cagerun: warning: no name lookups: %s; the proxy will refuse "
				"every host name (cagerun --version)\n", lkwhy);
	/* Built here rather than in the child: its allocations then land on
	 * the parent's own pages instead of copy-on-write ones, and the child
	 * allocates nothing after the clone. Unix sockets stay closed until
	 * the policy language can grant them. */
	const struct lnx_seccomp_opts so = { .allow_unix_sockets = false, .allow_inet = true };
	if (!lnx_seccomp_kernel_ok(err, sizeof err))
		return fail("%s; nothing was run", err);
	if (!lnx_seccomp_prebuilt(&so, &r->sc) && !lnx_seccomp_build(&so, &r->sc, err, sizeof err))
		return fail("%s; nothing was run", err);
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return fail("getcwd: %s", strerror(errno));
	r->had_terminal = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	if (!r->o->quiet)
		gitreport_begin(&r->git, workspace_of(r, cwd));
	/* A kept plan and an assumed git discovery are confirmed while the
	 * sandbox is built (defer); either found stale, the plan is taken
	 * afresh and the sandbox built again, once, with both confirmed
	 * first. With --log-denials the observer's set-up depends on the
	 * plan, and the plan is confirmed first. */
	rc = launch_planned(r, abi, cwd, beside);
	if (rc == PLAN_STALE || rc == GIT_STALE) {
		if (rc == PLAN_STALE && r->pl.from_held)
			r->o->plan_ahead->stale = true;
		drop_attempt(r);
		rc = launch_planned(r, abi, cwd, false);
	}
	assert(rc != PLAN_STALE && rc != GIT_STALE);
	return rc;
}

static int launch_planned(struct lrun *r, int abi, const char *cwd, bool defer)
{
	int rc;
	char err[1024];
	bool isolate = r->mode == IR_MODE_ENFORCE;
	/* Planned for a discovery not yet confirmed only when the sandbox
	 * is built beside the looking (found other, the profile has what
	 * was found before any plan is taken). */
	if (!defer && (rc = git_holds(r)) && rc != GIT_STALE)
		return rc;
	/* The plan the launcher bound ahead for the compile this run took,
	 * else the kept one from the cache's file, else a fresh build. */
	const struct lnx_held_plan *ahead = r->o->plan_ahead ? &r->o->plan_ahead->h : NULL;
	bool bound = defer && ahead && r->pol == r->o->pol &&
		     lnx_plan_take_held(&r->pol->arena, r->pol->ir, r->prof, cwd, ahead,
					r->o->verbose, &r->plan, &r->pl);
	if (!bound && (rc = lnx_plan_get(&r->pol->arena, r->pol->ir, r->prof, r->o->policy, cwd,
					 r->o->verbose, defer, &r->plan, &r->pl)))
		return rc;
	/* The folders below are made on the host: only for a confirmed plan
	 * of a confirmed compile and discovery. */
	if (r->plan.nmkdirs > 0 && !compile_holds(r))
		return COMPILE_STALE;
	if (r->plan.nmkdirs > 0 && (rc = git_holds(r)))
		return rc;
	if (r->pl.unconfirmed && r->plan.nmkdirs > 0 &&
	    !lnx_plan_confirm(&r->pol->arena, &r->pl, r->o->verbose))
		return PLAN_STALE;
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
	/* The lease on the host's disk, where each directory or file made and
	 * removed is an inode update that waits for the journal while other
	 * jobs write (0.05 to 0.6 ms each here): one directory, the TMPDIR
	 * itself, unless the run needs a private HOME beside it or the empty
	 * file cannot be made inside the sandbox (lnx_mount_apply). */
	bool lease_empty = lnx_mount_hides_file(&r->plan) && !lnx_mount_private_shm();
	bool leased = r->prof->private_home || lease_empty
			      ? lease_create(&r->lease, r->prof->private_home, err, sizeof err)
			      : lease_create_flat(&r->lease, err, sizeof err);
	if (!leased || (lease_empty && !lease_make_empty(&r->lease, err, sizeof err)))
		return fail("%s", err);
	/* The runs killed before their clean-up: their leases went as this
	 * one was made (lease.h), their cgroups go now. */
	if (r->lease.swept && r->have_lim)
		(void)lnx_limits_sweep(&r->lim);
	uint16_t pport = pick_proxy_port(&r->plan);
	char proxy_url[64];
	snprintf(proxy_url, sizeof proxy_url, "http://127.0.0.1:%u", (unsigned)pport);
	struct runenv_extra x = { r->lease.tmp, r->lease.home, isolate ? proxy_url : NULL,
				  r->o->prompt, r->agst->env, isolate, r->o->path_prefix };
	r->envp = runenv_build(r->prof, environ, &x);
	if (!r->envp)
		return fail("out of memory");
	const char *links_ok[AGENTSTATE_ENV_MAX + 1] = { NULL };
	for (size_t i = 0; i < r->agst->nown && i < AGENTSTATE_ENV_MAX; i++)
		links_ok[i] = r->agst->own[i];
	struct lnx_spec spec = {
		.plan = &r->plan,
		.links_ok = links_ok,
		.isolate_net = isolate,
		.argv = r->o->argv,
		.envp = r->envp,
		.cwd = cwd,
		.tmp_dir = r->lease.tmp,
		.home_dir = r->lease.home,
		.empty_file = r->lease.empty,
		.keep_dir = r->pl.have_cache ? r->pl.cache.dir : NULL,
		.proxy_port = pport,
		.landlock_abi = abi,
		.seccomp = &r->sc,
		.take_terminal = r->had_terminal,
		.quiet = r->o->quiet,
		.observe_sock = -1,
		.word_fd = -1,
		.nproc = r->lim.nproc,
		.nofile = r->lim.nofile,
		.tmp_bytes = r->lim.tmp_bytes,
		.tmp_text = r->lim.tmp_text,
		.ahead = r->ahead,
	};
	lnx_limits_joins(&r->lim, &spec.cgroups);
	int osp[2] = { -1, -1 };
	if (r->o->log_denials) {
		if ((rc = open_log(r)))
			return rc;
		const struct mon_opts mo = { .only_would_block = true, .exclude_workspace = true,
					     .log_fd = r->log_fd, .enforce = true,
					     .always = { r->lease.tmp, r->lease.home } };
		mon_sink_init(&r->sink, r->prof, &mo);
		r->have_sink = true;
		if (r->plan.nguards > 0) {
			/* One process tree has one seccomp listener: the create
			 * guard's supervisor holds it, so it observes too. */
			spec.guard_observe = &r->sink;
		} else {
			if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, osp) != 0)
				return fail("socketpair: %s", strerror(errno));
			spec.observe = true;
			spec.observe_sock = osp[1];
		}
	}
	if (!r->o->quiet && r->plan.nguards > 0) {
		/* The guard sees every name made or moved: where it runs, it
		 * says whether the walk at exit can find anything. Without
		 * the page the walk is made, as without the guard. The page
		 * of a stale attempt was never written (nothing served). */
		void *m = r->seen ? r->seen
				  : mmap(NULL, sizeof *r->seen, PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED)
			spec.guard_seen = r->seen = m;
	}
	/* Only a run that can answer before its clean-up listens for init's
	 * word: cagerun itself waits for init's exit in any case. */
	int word[2] = { -1, -1 };
	if (r->o->status_hook && pipe2(word, O_CLOEXEC | O_NONBLOCK) == 0) {
		if (fcntl(word[0], F_SETOWN, getpid()) == 0 && fcntl(word[0], F_SETSIG, WORD_SIG) == 0 &&
		    fcntl(word[0], F_SETFL, O_NONBLOCK | O_ASYNC) == 0) {
			r->word_fd = word[0];
			spec.word_fd = word[1];
			/* Init may answer the client itself only where cagerun
			 * has nothing to say or write after the command. */
			const struct run_opts *o = r->o;
			if (o->quiet && !o->log_denials && !o->log_path)
				spec.answer = o->status_hook;
		} else {
			close(word[0]); /* without it, init's exit says the same, later */
			close(word[1]);
			word[1] = -1;
		}
	}
	bool started = lnx_sandbox_start(&spec, &r->sb, err, sizeof err);
	if (word[1] >= 0)
		close(word[1]);
	if (osp[1] >= 0)
		close(osp[1]);
	r->obs_sock = osp[0];
	if (!started)
		return fail("%s; nothing was run", err);
	if (r->o->verbose && r->sb.ahead)
		fprintf(stderr, "cagerun: sandbox: in the %s the launcher made ahead\n",
			isolate ? "user and network namespaces" : "user namespace");
	/* The v1 cgroups, made while init builds its mounts, first: init
	 * waits for them once its mounts are made (lnx_limits.h). */
	if (!lnx_limits_make(&r->lim, err, sizeof err) ||
	    !lnx_sandbox_cgroups_made(&r->sb, err, sizeof err))
		return fail("%s; nothing was run", err);
	/* The kept plan's dependencies, asked while init builds its mounts:
	 * until it is released nothing runs in there, and a stale plan's
	 * sandbox is thrown away whole (drop_attempt). */
	if (r->pl.unconfirmed && !lnx_plan_confirm(&r->pol->arena, &r->pl, r->o->verbose))
		return PLAN_STALE;
	/* The compile's own looks, beside init's mounts too; at the latest
	 * here, before the command may start (run.h, confirm). */
	if (!compile_holds(r))
		return COMPILE_STALE;
	/* And git discovery's, which may have added rules the plan was made
	 * with. */
	if ((rc = git_holds(r)))
		return rc;
	/* The proxy is made while init builds the mounts and listeners, and
	 * serves only once they arrive; the command starts after both. */
	if (isolate && (rc = start_proxy_server(r, prx_policy_of_table(&r->table), NULL)))
		return rc;
	if (isolate && !lnx_sandbox_listeners(&r->sb, err, sizeof err))
		return fail("%s; nothing was run", err);
	if (isolate && (rc = adopt_listeners(r)))
		return rc;
	/* The launcher's client may have left meanwhile (LCH_ABORT_SIG, read
	 * by the loops after this): nothing is started for it. */
	if (abort_pending())
		return fail("stopped by the launcher (its client left, or it is ending); "
			    "nothing was run");
	assert(!r->o->confirm || r->compile_confirmed);
	assert(!r->gs.on);
	if (!lnx_sandbox_release(&r->sb, err, sizeof err)) {
		/* init is gone: its own reason, when it left one, says more. */
		char why[1024];
		if (lnx_sandbox_wait_exec(&r->sb, why, sizeof why))
			snprintf(err, sizeof err, "%s", why);
		return fail("%s; nothing was run", err);
	}
	if (r->obs_sock >= 0 && (rc = start_denial_observer(r)))
		return rc;
	if ((rc = lnx_sandbox_wait_exec(&r->sb, err, sizeof err))) {
		fprintf(stderr, "cagerun: %s%s\n", err,
			rc == RUN_SETUP_FAILED ? "; nothing was run" : "");
		return rc;
	}
	r->ran = true;
	if (r->o->started)
		r->o->started(r->o->started_ctx);
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
	r.ahead = o->status_hook ? o->status_hook->ahead : NULL;
	r.log_fd = r.sig_fd = r.obs_sock = r.word_fd = -1;
	r.sb.init = -1;
	r.sb.err_fd = -1;
	r.sb.go_fd = -1;
	r.sb.lsock = -1;
	/* As cagerun was started, before it raised its own soft limit for
	 * the proxy (run_nofile_raise). */
	if (!run_nofile_start(o->nofile, &r.nofile_start))
		return fail("getrlimit: %s", strerror(errno));
	/* Not zeroed: agentstate_prepare sets what is read, and the rest of
	 * its buffers is never touched (each page a fresh fault here). */
	r.agst = malloc(sizeof *r.agst);
	if (!r.agst)
		return fail("out of memory");
	int status = launch(&r);
	assert(status != COMPILE_STALE || r.stale_compile);
	if (status == COMPILE_STALE) {
		/* Nothing ran and nothing is to be said: the caller compiles
		 * afresh and runs again, answering any client then. */
		status = RUN_SETUP_FAILED;
		gitreport_free(&r.git);
	}
	free(r.agst);
	lnx_seccomp_prog_free(&r.sc);
	/* After init's word nothing of the sandbox but init is left, and the
	 * reports need not wait for its exit; otherwise the sandbox is
	 * stopped (and init reaped) first. */
	if (!r.init_done)
		lnx_sandbox_kill(&r.sb);
	if (r.have_lim && r.ran && !o->quiet)
		lnx_limits_report(&r.lim, stderr);
	lnx_observer_stop(r.obs);
	if (r.obs_sock >= 0)
		close(r.obs_sock);
	restore_terminal(&r);
	/* After the sandbox is gone: nothing can still be writing there. */
	if (r.seen && __atomic_load_n(&r.seen->serving, __ATOMIC_SEQ_CST) &&
	    !__atomic_load_n(&r.seen->maybe_repo, __ATOMIC_SEQ_CST)) {
		if (o->verbose && r.git.root)
			fprintf(stderr, "cagerun: git report: the run made no name .git and moved no "
					"directory; %s not walked\n", r.git.root);
	} else {
		gitreport_end(&r.git, stderr);
	}
	gitreport_free(&r.git);
	if (r.seen)
		munmap(r.seen, sizeof *r.seen);
	if (r.srv && !o->quiet)
		prx_server_print_denials(r.srv, stderr, "cagerun: ");
	if (r.srv && r.mode != IR_MODE_MONITOR && r.log_fd >= 0)
		prx_server_denials(r.srv, log_denial, &r.log_fd);
	if (r.have_sink) {
		if (o->quiet || !r.ran) {
			/* nothing to say, or the command never ran */
		} else if (r.sink.recorded) {
			fprintf(stderr, "cagerun: %s\n", r.mode == IR_MODE_MONITOR
				? "monitor: what the policy would block, then what it covers:"
				: "paths the policy denied:");
			mon_sink_print(&r.sink, stderr, "cagerun:   ");
		} else if (r.mode == IR_MODE_MONITOR) {
			fprintf(stderr, "cagerun: monitor: nothing the policy would block\n");
		}
		mon_sink_free(&r.sink);
	}
	/* Everything said, the sandbox gone (init reaped, or killed and
	 * reaped above): the launcher may answer its client now. What is
	 * left is cleaning up, which the client need not wait for. */
	if (o->status_hook && !r.answered && !r.stale_compile) {
		fflush(NULL);
		(void)run_status_send(o->status_hook, status);
	}
	/* The namespaces made ahead, after the answer: their helper has
	 * left (init was cloned from it) or is of no use, and an unused
	 * pair goes back to the launcher, neither on the client's time. */
	lch_ahead_drop(r.ahead);
	r.ahead = NULL;
	lnx_sandbox_kill(&r.sb);
	if (r.word_fd >= 0)
		close(r.word_fd);
	if (r.have_lim)
		lnx_limits_free(&r.lim);
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
	gs_result_free(&r.gs.res);
	if (r.pol != o->pol)
		cage_policy_free(r.pol);
	return status;
}
