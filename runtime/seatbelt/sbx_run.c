/*
 * sbx_run.c - `cagerun -- COMMAND` with Seatbelt: the macOS launcher, and
 * on any platform `cagerun --backend seatbelt` (which on Linux goes all the
 * way to the exec and then fails closed: there is no sandbox-exec).
 *
 *   compile the policy for macOS -> mode -> refuse inside another Seatbelt
 *   sandbox -> lease -> the profile, tagged with this run's id, written
 *   0600 into the lease -> proxy (enforce) -> environment -> launch plan
 *   (sbx_plan.c) -> check /usr/bin/sandbox-exec -> (macOS) start `log
 *   stream` for the tag -> fork, exec sandbox-exec -> serve the proxy and
 *   forward signals until it exits -> summaries, clean up.
 *
 * Everything up to the exec that fails ends the run with 125, and the
 * command has not started: the child reports a failed execve through a
 * close-on-exec pipe before anything of the command could run.
 */
#include "sbx_run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agentstate.h"
#include "cpt.h"
#include "lease.h"
#include "prx.h"
#include "prx_ev.h"
#include "runcommon.h"
#include "runenv.h"
#include "sbpl.h"
#include "sbx_log.h"
#include "sbx_nest.h"
#include "sbx_plan.h"

extern char **environ;

struct srun {
	const struct run_opts *o;
	cage_policy *pol;
	const struct ir_profile *prof;
	enum ir_mode mode;
	struct lease lease;
	char tag[40];
	char *profile_text;
	size_t profile_len;
	char *profile_path;
	char *tbytes;
	struct cpt_table table;
	bool table_loaded;
	struct prx_server *srv;
	int log_fd, sig_fd;
	unsigned port;
	char **envp;
	struct sbx_plan plan;
	pid_t child, logger;
	int status;
	bool exited;
	bool had_terminal;
	struct rlimit nofile; /* the command's RLIMIT_NOFILE */
};

/* What the host of Seatbelt can bound per sandbox (docs/cagerun.md,
 * "Resource limits"): open files, by the rlimit sandbox-exec and its
 * command inherit. The rest has no per-sandbox mechanism cagerun could
 * set here, so run_limits_gate refuses them unless best-effort. */
static const char *const sbx_limits_why[IR_LIM_N] = {
	[IR_LIM_PROCESSES] = "macOS counts RLIMIT_NPROC per user, not per sandbox",
	[IR_LIM_MEMORY] = "macOS has no per-sandbox memory bound a user can set",
	[IR_LIM_TMP] = ("the private TMPDIR is a directory on the user's disk, not a "
			"size-limited volume"),
};

static int write_profile(struct srun *r)
{
	FILE *mem = open_memstream(&r->profile_text, &r->profile_len);
	const char *err = NULL;
	/* Every rule that denies, or in monitor mode reports, carries the tag. */
	const char *tag = r->tag;
	/* The profile in the run's mode (--mode may override the policy's). */
	struct ir_profile prof = *r->prof;
	prof.mode = r->mode;
	bool ok = mem && sbpl_emit_tagged(r->pol->ir, &prof, tag, mem, &r->pol->arena, &err);
	if (mem && fclose(mem) != 0)
		ok = false;
	if (!ok)
		return run_fail("%s: cannot write the Seatbelt profile: %s; nothing was run",
				r->o->policy, err ? err : strerror(errno));
	size_t n = strlen(r->lease.dir) + sizeof "/profile.sb";
	if (!(r->profile_path = malloc(n)))
		return run_fail("out of memory");
	snprintf(r->profile_path, n, "%s/profile.sb", r->lease.dir);
	int fd = open(r->profile_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t off = 0;
	while (fd >= 0 && off < r->profile_len) {
		ssize_t w = write(fd, r->profile_text + off, r->profile_len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	int e = errno;
	if (fd >= 0 && close(fd) != 0 && off == r->profile_len) {
		e = errno;
		off = 0;
	}
	if (fd < 0 || off != r->profile_len)
		return run_fail("cannot write the profile %s: %s; nothing was run", r->profile_path,
				strerror(e));
	return 0;
}

static bool on_signal(void *ctx);

/* The proxy on host loopback: the sandbox may reach only its port, and
 * other local users must not borrow it, so it wants the run's secret. */
static int start_proxy(struct srun *r, char *url, size_t urlen)
{
	char err[512];
	int rc = run_proxy_table(r->pol, r->o->policy, &r->tbytes, &r->table);
	if (rc)
		return rc;
	r->table_loaded = true;
	char secret[33];
	if (!run_proxy_secret(secret))
		return run_fail("no random bytes for the proxy's secret");
	struct prx_config cfg;
	memset(&cfg, 0, sizeof cfg);
	prx_limits_default(&cfg.limits);
	cfg.policy = prx_policy_of_table(&r->table);
	cfg.overrides = r->o->resolve;
	cfg.secret = secret;
	cfg.log_fd = r->log_fd;
	cfg.notice_fd = run_notice_fd(r->o);
	cfg.on_stop_fd = on_signal;
	cfg.stop_ctx = r;
	if ((rc = run_proxy_fit(&cfg.limits, false)))
		return rc;
	char bound[80] = "";
	r->srv = prx_server_new(&cfg, err, sizeof err);
	if (!r->srv || !prx_server_listen_tcp(r->srv, "127.0.0.1:0", bound, sizeof bound, err,
					      sizeof err))
		return run_fail("proxy: %s; nothing was run", err);
	const char *colon = strrchr(bound, ':');
	r->port = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
	if (!r->port)
		return run_fail("proxy: no port in %s; nothing was run", bound);
	snprintf(url, urlen, "http://cage:%s@127.0.0.1:%u", secret, r->port);
	if (r->o->verbose)
		fprintf(stderr, "cagerun: proxy on 127.0.0.1:%u\n", r->port);
	return 0;
}

/* Signals: forward to the command's process group; SIGCHLD reaps it. */
static bool on_signal(void *ctx)
{
	struct srun *r = ctx;
	int sig;
	while ((sig = prx_sigfd_read(r->sig_fd)) > 0) {
		if (sig != SIGCHLD) {
			if (r->child > 0)
				kill(-r->child, sig);
			continue;
		}
		int st;
		if (r->child > 0 && waitpid(r->child, &st, WNOHANG) == r->child) {
			r->exited = true;
			r->status = run_wait_code(st);
		}
	}
	return r->exited;
}

#ifdef __APPLE__
/* `log stream` for this run's tag, from outside the sandbox, into a file
 * in the lease; read once the command is over. Best effort: a logger that
 * does not start costs the summary, not the run. */
static void start_logger(struct srun *r)
{
	char path[4096], pred[128];
	snprintf(path, sizeof path, "%s/seatbelt.ndjson", r->lease.dir);
	snprintf(pred, sizeof pred, "eventMessage ENDSWITH \"%s\"", r->tag);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd, STDOUT_FILENO);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		char *argv[] = { "/usr/bin/log", "stream", "--style", "ndjson", "--predicate", pred,
				 NULL };
		execve(argv[0], argv, environ);
		_exit(127);
	}
	close(fd);
	r->logger = pid > 0 ? pid : 0;
	/* Give it a moment to attach before the command starts. */
	for (int i = 0; i < 20 && r->logger; i++) {
		struct stat st;
		if (stat(path, &st) == 0 && st.st_size > 0)
			break;
		usleep(25000);
	}
}

static void stop_logger(struct srun *r)
{
	if (r->logger <= 0)
		return;
	usleep(300000); /* the kernel's last reports reach the log a little later */
	kill(r->logger, SIGTERM);
	(void)waitpid(r->logger, NULL, 0);
	r->logger = 0;
	char path[4096];
	snprintf(path, sizeof path, "%s/seatbelt.ndjson", r->lease.dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	/* The same records, summary and JSON-lines log as the Linux monitor
	 * (docs/monitor.md). */
	struct mon_summary s;
	mon_summary_init(&s, 64, false);
	unsigned long other = 0;
	unsigned long n = sbx_log_collect(f, r->tag, &s, r->log_fd, &other);
	fclose(f);
	if (r->o->quiet) {
		/* --quiet: the log gets the records, stderr nothing */
	} else if (n && !mon_summary_empty(&s)) {
		fprintf(stderr, "cagerun: %s:\n", r->mode == IR_MODE_MONITOR
							   ? "what enforce mode would have refused"
							   : "what the sandbox refused");
		mon_summary_print(&s, stderr, "cagerun: ");
	}
	if (other && !r->o->quiet)
		fprintf(stderr, "cagerun: %lu other sandbox denial%s (system services, sysctl, "
				"IOKit, ...): see log show --predicate 'eventMessage ENDSWITH \"%s\"'\n",
			other, other == 1 ? "" : "s", r->tag);
	mon_summary_free(&s);
}
#else
static void start_logger(struct srun *r)
{
	(void)r; /* no unified log here */
}

static void stop_logger(struct srun *r)
{
	(void)r;
}
#endif

static int exec_plan(struct srun *r)
{
	int ep[2];
	if (pipe(ep) != 0 || fcntl(ep[0], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(ep[1], F_SETFD, FD_CLOEXEC) != 0)
		return run_fail("pipe: %s; nothing was run", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(ep[0]);
		close(ep[1]);
		return run_fail("fork: %s; nothing was run", strerror(errno));
	}
	if (pid == 0) {
		close(ep[0]);
		(void)setpgid(0, 0);
		/* Interactive commands read the terminal: their group takes it,
		 * as on Linux, so Ctrl-C and reads reach them directly. */
		if (r->had_terminal)
			run_take_terminal();
		sigset_t none;
		sigemptyset(&none);
		(void)sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (setrlimit(RLIMIT_NOFILE, &r->nofile) != 0) {
			int e = errno;
			if (write(ep[1], &e, sizeof e) < 0)
				(void)0;
			_exit(RUN_SETUP_FAILED);
		}
		execve(r->plan.argv[0], r->plan.argv, (char *const *)r->plan.envp);
		int e = errno;
		if (write(ep[1], &e, sizeof e) < 0)
			(void)0;
		_exit(RUN_SETUP_FAILED);
	}
	r->child = pid;
	(void)setpgid(pid, pid);
	close(ep[1]);
	int e = 0;
	ssize_t n;
	while ((n = read(ep[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (n == (ssize_t)sizeof e) {
		(void)waitpid(pid, NULL, 0);
		r->child = 0;
		return run_fail("cannot execute %s: %s; nothing was run", r->plan.argv[0],
				strerror(e));
	}
	return 0;
}

static int launch(struct srun *r)
{
	int rc;
	char err[1024];
	if (!cage_options_target(r->o->copts, "macos"))
		return run_fail("cannot compile for macOS");
	if ((rc = run_load_policy(r->o, &r->pol, &r->prof, &r->mode)))
		return rc;
	if (r->mode != IR_MODE_OFF && (rc = run_discover_git(r->o, NULL, r->pol)))
		return rc;
	if (r->mode == IR_MODE_OFF)
		return run_unconfined(r->o->argv, r->o->nofile);
	if (sbx_nested_refusal(sbx_in_sandbox(), err, sizeof err))
		return run_fail("%s", err);
	/* Monitor mode blocks nothing, limits included (as on Linux). */
	struct rlimit start;
	if (!run_nofile_start(r->o->nofile, &start))
		return run_fail("getrlimit: %s; nothing was run", strerror(errno));
	r->nofile = start;
	if (r->mode != IR_MODE_MONITOR) {
		if ((rc = run_limits_gate(r->prof, sbx_limits_why, r->o->quiet)))
			return rc;
		run_nofile_for(r->prof, &start, &r->nofile);
	}
	if (!lease_create(&r->lease, r->prof->private_home, err, sizeof err))
		return run_fail("%s; nothing was run", err);
	unsigned char rnd[8];
	if (!prx_random(rnd, sizeof rnd))
		return run_fail("no random bytes for the run's tag; nothing was run");
	snprintf(r->tag, sizeof r->tag, "cage-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1],
		 rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	if ((rc = write_profile(r)))
		return rc;
	static const int sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return run_fail("cannot ignore SIGPIPE");
	if ((r->sig_fd = prx_sigfd_open(sigs, sizeof sigs / sizeof *sigs, err, sizeof err)) < 0)
		return run_fail("%s; nothing was run", err);
	/* --log: the proxy's access lines and Seatbelt's records, one file. */
	if (r->o->log_path &&
	    (r->log_fd = run_open_log(r->o->log_path)) < 0)
		return run_fail("--log %s: %s; nothing was run", r->o->log_path, strerror(errno));
	char url[128] = "";
	/* The profile says whether it reaches a proxy (enforce and monitor
	 * with host rules; enforce-fs leaves the network open). */
	bool wants_proxy = strstr(r->profile_text, "(param \"" SBPL_PARAM_PROXY_PORT "\")");
	if (wants_proxy && (rc = start_proxy(r, url, sizeof url)))
		return rc;
	struct agentstate agst;
	if ((rc = run_agent_state(r->pol, r->o->verbose, &agst)))
		return rc;
	struct runenv_extra x = { r->lease.tmp, r->lease.home, wants_proxy ? url : NULL,
				  r->o->prompt, agst.env, r->mode == IR_MODE_ENFORCE,
				  r->o->path_prefix };
	if (!(r->envp = runenv_build(r->prof, environ, &x)))
		return run_fail("out of memory");
	char port[8];
	snprintf(port, sizeof port, "%u", r->port);
	const struct sbx_value vals[] = {
		{ SBPL_PARAM_PROXY_PORT, r->port ? port : NULL, SBX_PORT },
		{ SBPL_PARAM_PRIVATE_TMP, r->lease.tmp, SBX_PATH },
		{ SBPL_PARAM_PRIVATE_HOME, r->lease.home, SBX_PATH },
	};
	struct sbx_plan_in in = { .profile_text = r->profile_text, .profile_len = r->profile_len,
				  .profile_path = r->profile_path, .values = vals, .nvalues = 3,
				  .argv = r->o->argv, .envp = r->envp };
	if (!sbx_plan_build(&in, &r->plan, err, sizeof err))
		return run_fail("%s; nothing was run", err);
	if (r->o->verbose)
		fprintf(stderr, "cagerun: profile %s, tag %s\n", r->profile_path, r->tag);
	if (!sbx_check_exec(r->plan.argv[0], err, sizeof err))
		return run_fail("%s: Seatbelt is not available here; nothing was run", err);
	start_logger(r);
	r->had_terminal = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	if ((rc = exec_plan(r)))
		return rc;
	if (r->srv && !prx_server_run(r->srv, r->sig_fd, err, sizeof err)) {
		fprintf(stderr, "cagerun: proxy: %s; stopping the command\n", err);
		return RUN_SETUP_FAILED;
	}
	while (!r->exited) {
		struct pollfd p = { r->sig_fd, POLLIN, 0 };
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		on_signal(r);
	}
	return r->status;
}

int sbx_run_command(const struct run_opts *o)
{
	struct srun r;
	memset(&r, 0, sizeof r);
	r.o = o;
	r.log_fd = r.sig_fd = -1;
	int status = launch(&r);
	if (r.child > 0) {
		/* No PID namespace on macOS: end what is left of the command's
		 * process group (a daemon that left the group survives; see
		 * docs/cagerun.md). */
		kill(-r.child, SIGKILL);
		if (!r.exited)
			(void)waitpid(r.child, NULL, 0);
	}
	if (r.had_terminal && tcgetpgrp(STDIN_FILENO) != getpgrp())
		run_take_terminal();
	stop_logger(&r);
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
	sbx_plan_free(&r.plan);
	runenv_free(r.envp);
	free(r.profile_text);
	free(r.profile_path);
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
