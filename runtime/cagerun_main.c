/*
 * cagerun_main.c - the cagerun program: `cagerun -p POLICY -- COMMAND`
 * runs the command inside the policy (runtime/run.h), and `--proxy-only`
 * serves the policy's filtering proxy on its own until SIGINT/SIGTERM.
 * Exit 125 whenever anything fails to start: nothing is ever served (or
 * run) without the policy in force.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cage.h"
#include "cli.h"
#include "cpt.h"
#include "gs.h"
#include "ir.h"
#include "prx.h"
#include "prx_ev.h"
#include "held.h"
#include "helper.h"
#include "kept.h"
#include "layers.h"
#include "layers_lint.h"
#include "lookup.h"
#include "run.h"
#include "runcommon.h"
#ifdef CAGE_RUN_SEATBELT
#include "sbx_run.h"
#endif
#include "slog.h"
#include "yolo.h"

#define EXIT_START 125

/* cagerun's own options; the ones that shape loading a policy come from
 * the table it shares with cagec (cli_policy_opts). New options go here:
 * one row gives parsing, --help and the docs' table (checked by a test). */
enum {
	O_POLICY = 256, O_TASK, O_MODE, O_LOG, O_RESOLVE, O_QUIET, O_VERBOSE, O_SHOW, O_PIN,
	O_SHELL, O_ALLOW_YOLO, O_PROXY_ONLY, O_LISTEN, O_SOCKET, O_MAX_CONNS, O_HEADER_TIMEOUT,
	O_CONNECT_TIMEOUT, O_IDLE_TIMEOUT, O_HELP, O_VERSION, O_BACKEND, O_RECORD_COVERED,
	O_RECORD_WORKSPACE, O_LOG_DENIALS,
};

static const struct cli_opt run_opts_table[] = {
	{ "policy", 'p', "POLICY", O_POLICY, CLI_CAGERUN,
	  "run under this .cage file exactly as written: no layers are added" },
	{ "task", 0, "FILE", O_TASK, CLI_CAGERUN,
	  "add FILE as the task layer, last: on top of the layers found automatically, or of -p "
	  "POLICY (then it may not re-open the policy's denies)" },
	{ "mode", 0, "MODE", O_MODE, CLI_CAGERUN,
	  "override the policy's mode: off, monitor, enforce-fs or enforce" },
	{ "log", 0, "FILE", O_LOG, CLI_CAGERUN,
	  "append the proxy's JSON-lines access log to FILE (created 0600)" },
	{ "resolve", 0, "HOST:PORT:ADDR", O_RESOLVE, CLI_CAGERUN,
	  "the proxy uses ADDR[,ADDR...] for HOST:PORT instead of DNS (repeatable)" },
	{ "quiet", 'q', NULL, O_QUIET, CLI_CAGERUN,
	  "print no fingerprint at start, no denials as they happen, no denied hosts or "
	  "changed layers at exit" },
	{ "verbose", 'v', NULL, O_VERBOSE, CLI_CAGERUN,
	  "also print the Linux plan's notes (rules enforced more narrowly than written), "
	  "what the git discovery found, and whether a kept compile and plan were used" },
	{ "backend", 0, "NAME", O_BACKEND, CLI_CAGERUN,
	  "the launcher, linux or seatbelt (default: this host's); the Linux build has no "
	  "Seatbelt launcher (its test programs do, to test the macOS path up to the exec)" },
	{ "record-covered", 0, NULL, O_RECORD_COVERED, CLI_CAGERUN,
	  "monitor: also record the accesses the policy covers (only-would-block off)" },
	{ "record-workspace", 0, NULL, O_RECORD_WORKSPACE, CLI_CAGERUN,
	  "monitor: also record covered accesses under the workspace (exclude-workspace off)" },
	{ "log-denials", 0, NULL, O_LOG_DENIALS, CLI_CAGERUN,
	  "enforce, enforce-fs: also observe file calls and record each one the policy "
	  "denies (to --log, and a summary at exit)" },
	{ "show", 0, NULL, O_SHOW, CLI_CAGERUN,
	  "print the layers, mode, grants, lint's findings and the git paths discovered for "
	  "-- COMMAND; run nothing" },
	{ "pin", 0, "FINGERPRINT", O_PIN, CLI_CAGERUN,
	  "refuse to start (125) unless the composed policy's fingerprint is this one" },
	{ "shell", 0, NULL, O_SHELL, CLI_CAGERUN,
	  "open $SHELL (else /bin/sh) inside the policy, with the prompt marked [cage]" },
	{ "allow-yolo", 0, NULL, O_ALLOW_YOLO, CLI_CAGERUN,
	  "let an agent's skip-permission flag run under a mode other than enforce" },
	{ "proxy-only", 0, NULL, O_PROXY_ONLY, CLI_CAGERUN,
	  "serve the policy's filtering proxy on its own, run no command" },
	{ "listen", 0, "ADDR:PORT", O_LISTEN, CLI_CAGERUN,
	  "--proxy-only: listen on this loopback TCP address (default 127.0.0.1:0)" },
	{ "socket", 0, "PATH", O_SOCKET, CLI_CAGERUN,
	  "--proxy-only: listen on a unix socket (mode 0600, in a 0700 directory of yours)" },
	{ "max-conns", 0, "N", O_MAX_CONNS, CLI_CAGERUN,
	  "--proxy-only: concurrent client connections (default 1024)" },
	{ "header-timeout", 0, "MS", O_HEADER_TIMEOUT, CLI_CAGERUN,
	  "--proxy-only: time for a request head to arrive (default 10000)" },
	{ "connect-timeout", 0, "MS", O_CONNECT_TIMEOUT, CLI_CAGERUN,
	  "--proxy-only: per upstream address (default 10000)" },
	{ "idle-timeout", 0, "MS", O_IDLE_TIMEOUT, CLI_CAGERUN,
	  "--proxy-only: close a tunnel idle this long (default 300000)" },
	{ "help", 'h', NULL, O_HELP, CLI_CAGERUN, "print this help and exit" },
	{ "version", 'V', NULL, O_VERSION, CLI_CAGERUN, "print the version and exit" },
	{ 0 },
};

static const struct cli_opt *const run_tabs[] = { run_opts_table, cli_policy_opts };

static void usage(FILE *f, bool full)
{
	fputs("usage: cagerun [OPTIONS] -- COMMAND [ARG]...     run COMMAND in the composed policy\n"
	      "       cagerun -p POLICY [OPTIONS] -- COMMAND...  run it in POLICY alone\n"
	      "       cagerun --show [OPTIONS] [-- COMMAND...]   print what a run would enforce\n"
	      "       cagerun --shell [OPTIONS]                  a shell inside the policy\n"
	      "       cagerun trust [FILE]                       approve a project layer\n"
	      "       cagerun denials [--follow] [PID]           a running session's denials\n"
	      "       cagerun --proxy-only -p POLICY [OPTIONS]   serve the filtering proxy alone\n"
	      "       cagerun launcher [--socket PATH] [-v]      start runs for cage-launch\n"
	      "       cagerun --version | --help\n",
	      f);
	if (!full) {
		fputs("See cagerun --help for the options.\n", f);
		return;
	}
	fputs("\nWithout -p, the policy is composed from layers found automatically: std/base,\n"
	      "std/secrets (and std/guard), the workspace (the project's root), what starting\n"
	      "COMMAND needs (resolved from PATH), the agent's module and your own (named\n"
	      "after COMMAND), the project's .cage/policy.cage (only its denies until\n"
	      "'cagerun trust' approves it), then --task FILE.\n\n"
	      "Options:\n", f);
	cli_print_options(f, run_tabs, 2, CLI_CAGERUN);
	fputs("\nExit status: the command's own; 128+N when signal N ended it; 125 when\n"
	      "nothing was run (the sandbox could not be set up, a bad option, policy errors,\n"
	      "a --pin mismatch, a refused skip-permission flag); 126 when COMMAND cannot be\n"
	      "executed; 127 when it is not found. --show, trust, --help, --version: 0, or\n"
	      "125 on error. --proxy-only: 0 when stopped by SIGINT, SIGTERM or SIGHUP.\n",
	      f);
}

static bool parse_ms(const char *s, unsigned *out)
{
	char *e;
	errno = 0;
	unsigned long v = strtoul(s, &e, 10);
	if (errno || *e || e == s || v == 0 || v > 86400000ul)
		return false;
	*out = (unsigned)v;
	return true;
}


/* Everything main owns, released on every path out. */
struct run {
	cage_options *opts;
	struct prx_resolver *res;
	char *tbytes;
	struct cpt_table table;
	struct prx_server *srv;
	int log_fd, sig_fd;
};

/* --proxy-only: compiles the policy and loads its proxy table into r. */
static int build_table(struct run *r, const char *path)
{
	cage_policy *p = cage_load_file(path, r->opts);
	if (!p)
		return run_fail("out of memory");
	cage_print_diagnostics(p, stderr, cli_want_color("auto", STDERR_FILENO));
	if (cage_error_count(p) > 0) {
		fprintf(stderr, "cagerun: %s: policy has errors; not starting\n", path);
		cage_policy_free(p);
		return EXIT_START;
	}
	run_proxy_only_note(p, stderr);
	int rc = run_proxy_table(p, path, &r->tbytes, &r->table);
	cage_policy_free(p);
	return rc;
}

static void run_free(struct run *r)
{
	prx_server_free(r->srv);
	if (r->sig_fd >= 0)
		close(r->sig_fd);
	if (r->log_fd >= 0)
		close(r->log_fd);
	cpt_close(&r->table);
	free(r->tbytes);
	prx_resolver_free(r->res);
	cage_options_free(r->opts);
}

/* What the command line asked for, beyond what lands in r and cfg. */
struct args {
	const char *policy, *task, *listen, *sock, *logpath, *mode, *pin, *backend;
	bool proxy_only, show, shell, allow_yolo, quiet, verbose;
	bool record_covered, record_workspace, log_denials, max_conns_given;
	char **argv; /* the command, or NULL */
	const struct run_nofile *nofile;
	const struct run_status_hook *hook; /* the launcher's, or NULL */
	bool compile_now; /* a kept compile went stale in this run: compile afresh */
};

/* Parses the command line into a, cfg and r; returns -1 to go on, or an
 * exit status. */
/* The version, and where its helpers are: the name-service lookups
 * (lookup.h) and lint's verdict on layers (layers_lint.h). An installed
 * tree that lost a helper says so here, not at the proxy's first lookup
 * or the first project layer. */
static void print_version(void)
{
	char path[4096], why[256];
	printf("cagerun %s\n", cage_version());
	if (lookup_helper_path(path, sizeof path, why, sizeof why))
		printf("name lookups: %s\n", path);
	else
		printf("name lookups: unavailable: %s\n", why);
	if (helper_path(LL_PROGRAM, path, sizeof path, why, sizeof why))
		printf("layer lint: %s\n", path);
	else
		printf("layer lint: unavailable: %s\n", why);
}

static int parse_args(int argc, char **argv, struct prx_config *cfg, struct run *r,
		      struct args *a)
{
	char err[512];
	struct cli_parser p = { .argc = argc, .argv = argv, .i = 1, .tabs = run_tabs,
				.ntabs = 2, .prog = CLI_CAGERUN, .name = "cagerun" };
	if (argc <= 1) {
		usage(stderr, false);
		return EXIT_START;
	}
	int c;
	const char *v;
	for (;;) {
		const char *opt = p.i < argc ? argv[p.i] : "";
		if ((c = cli_next(&p, &v)) <= 0)
			break;
		bool ok = true;
		switch (c) {
		case O_HELP: usage(stdout, true); return 0;
		case O_VERSION: print_version(); return 0;
		case O_POLICY: a->policy = v; break;
		case O_TASK: a->task = v; break;
		case O_MODE: a->mode = v; break;
		case O_BACKEND: a->backend = v; break;
		case O_LOG: a->logpath = v; break;
		case O_RESOLVE:
			if (!prx_resolver_add(r->res, v, err, sizeof err))
				return run_fail("%s", err);
			break;
		case O_QUIET: a->quiet = true; break;
		case O_VERBOSE: a->verbose = true; break;
		case O_RECORD_COVERED: a->record_covered = true; break;
		case O_RECORD_WORKSPACE: a->record_workspace = true; break;
		case O_LOG_DENIALS: a->log_denials = true; break;
		case O_SHOW: a->show = true; break;
		case O_PIN: a->pin = v; break;
		case O_SHELL: a->shell = true; break;
		case O_ALLOW_YOLO: a->allow_yolo = true; break;
		case O_PROXY_ONLY: a->proxy_only = true; break;
		case O_LISTEN: a->listen = v; break;
		case O_SOCKET: a->sock = v; break;
		case O_MAX_CONNS:
			ok = parse_ms(v, &cfg->limits.max_conns);
			a->max_conns_given = true;
			break;
		case O_HEADER_TIMEOUT: ok = parse_ms(v, &cfg->limits.header_timeout_ms); break;
		case O_CONNECT_TIMEOUT: ok = parse_ms(v, &cfg->limits.connect_timeout_ms); break;
		case O_IDLE_TIMEOUT: ok = parse_ms(v, &cfg->limits.idle_timeout_ms); break;
		default:
			if (cli_policy_opt(c, v, r->opts) < 0)
				return EXIT_START;
		}
		if (!ok) {
			fprintf(stderr, "cagerun: bad value for %.*s: %s\n", (int)strcspn(opt, "="), opt,
				v);
			return EXIT_START;
		}
	}
	if (c < 0)
		return EXIT_START;
	/* Each denial as it happens, unless --quiet. */
	cfg->notice_fd = a->quiet ? -1 : STDERR_FILENO;
	if (p.i < argc && !p.dashdash) {
		const char *op = argv[p.i];
		size_t n = strlen(op);
		if (n > 5 && !strcmp(op + n - 5, ".cage"))
			fprintf(stderr, "cagerun: unexpected argument '%s': a policy is given with -p %s "
					"(or --task %s), and the command after --\n", op, op, op);
		else
			fprintf(stderr, "cagerun: unexpected argument '%s': the command to run goes "
					"after --, as in: cagerun -- %s\n", op, op);
		return EXIT_START;
	}
	if (p.dashdash) {
		if (p.i >= argc)
			return run_fail("-- must be followed by the command to run");
		a->argv = argv + p.i;
	}
	if (a->proxy_only) {
		if (a->argv)
			return run_fail("--proxy-only runs no command; drop it, or the -- COMMAND part");
		if (!a->policy) {
			usage(stderr, false);
			return run_fail("--proxy-only needs -p POLICY");
		}
		return -1;
	}
	if (a->shell && a->argv)
		return run_fail("--shell runs your shell; drop the -- COMMAND part, or --shell");
	if (!a->argv && !a->shell && !a->show) {
		usage(stderr, false);
		return run_fail("nothing to run: give -- COMMAND [ARG]..., or --shell, --show, "
			    "--proxy-only");
	}
	return -2;
}

static int serve(struct run *r, struct prx_config *cfg, const char *policy, const char *listen,
		 const char *sock, const char *logpath, bool max_conns_given)
{
	char err[512];
	int rc = build_table(r, policy);
	if (rc)
		return rc;
	cfg->policy = prx_policy_of_table(&r->table);
	cfg->overrides = r->res;

	/* A per-run secret: 128 random bits, hex. */
	char secret[33];
	if (!run_proxy_secret(secret))
		return run_fail("no random bytes from the kernel");
	cfg->secret = secret;

	if (logpath) {
		r->log_fd = run_open_log(logpath);
		if (r->log_fd < 0)
			return run_fail("--log %s: %s", logpath, strerror(errno));
		cfg->log_fd = r->log_fd;
	}
	/* Tunnels need descriptors: main raised the soft limit as far as it
	 * goes; the slots are sized to it unless --max-conns was given. */
	if ((rc = run_proxy_fit(&cfg->limits, max_conns_given)))
		return rc;
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return run_fail("cannot ignore SIGPIPE");
	static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
	r->sig_fd = prx_sigfd_open(stop_sigs, 3, err, sizeof err);
	if (r->sig_fd < 0)
		return run_fail("%s", err);

	r->srv = prx_server_new(cfg, err, sizeof err);
	if (!r->srv)
		return run_fail("%s", err);
	if (!listen && !sock)
		listen = "127.0.0.1:0";
	char bound[80] = "";
	if ((listen && !prx_server_listen_tcp(r->srv, listen, bound, sizeof bound, err,
					      sizeof err)) ||
	    (sock && !prx_server_listen_unix(r->srv, sock, err, sizeof err)))
		return run_fail("%s", err);
	/* Standard output is the invoker's: the only place the secret goes. */
	if (listen)
		printf("proxy http://cage:%s@%s\n", secret, bound);
	if (sock)
		printf("proxy unix:%s\n", sock);
	if (fflush(stdout) != 0)
		return run_fail("cannot write to standard output");
	if (!prx_server_run(r->srv, r->sig_fd, err, sizeof err))
		return run_fail("%s", err);
	if (cfg->notice_fd >= 0) /* not --quiet */
		prx_server_print_denials(r->srv, stderr, "cagerun: ");
	return 0;
}

/* The command (or shell) to run under the loaded layers; the checks that
 * come before it (pin, skip-permission flags) refuse with 125. */
/* run_command, or the launcher o->backend names. The Seatbelt launcher
 * away from macOS (it fails closed at the exec, there being no
 * sandbox-exec) is how the macOS path is tested on Linux: it is built only
 * into the test programs (CAGE_RUN_SEATBELT, testsuite/cmake/seatbelt.cmake),
 * so that the installed Linux launcher links no SBPL emitter. */
static int run_backend(const struct run_opts *o)
{
#ifdef __APPLE__
	static const char host[] = "seatbelt";
#else
	static const char host[] = "linux";
#endif
	if (!o->backend || !strcmp(o->backend, host))
		return run_command(o);
	if (!strcmp(o->backend, "seatbelt")) {
#ifdef CAGE_RUN_SEATBELT
		/* The policy composed for this host is not the macOS one: the
		 * Seatbelt launcher compiles the file itself, for macOS. */
		if (!o->policy_file)
			return run_fail("--backend seatbelt on this host needs -p POLICY; nothing was run");
		struct run_opts so = *o;
		so.pol = NULL;
		so.policy = o->policy_file;
		return sbx_run_command(&so);
#else
		return run_fail("--backend seatbelt: this cagerun is built for %s only (the Seatbelt "
				"launcher runs on macOS); nothing was run", host);
#endif
	}
	return run_fail("--backend %s: expected %s or seatbelt; nothing was run", o->backend, host);
}

/* A compile the launcher kept for the request it expected (layers/held.h),
 * and what made it; each spare holds a copy. */
struct run_held {
	struct run r;   /* its options: the compile keeps pointers into them */
	struct run cmp; /* the same options parsed again, as a request's come
	                   (the compile adds the cache folder to r's) */
	struct layers_held h;
	struct run_plan_ahead *plan; /* h's plan, bound ahead, or NULL */
};

extern char **environ;

/* The kept compile into *L when it fits this run's request rq (held.h
 * says when). */
static bool take_held(struct layers *L, const struct layers_req *rq, const struct args *a)
{
	if (!a->hook || !a->hook->held)
		return false;
	size_t n;
	char why[PATH_MAX + 80];
	bool took = held_take(&a->hook->held->h, L, rq, environ, &n, why, sizeof why);
	if (a->verbose && took)
		fprintf(stderr, "cagerun: compile: the one the launcher kept (%zu looks at the disk "
				"unchanged)\n", n);
	else if (a->verbose)
		fprintf(stderr, "cagerun: compile: not the one the launcher kept: %s\n", why);
	return took;
}

/* What --verbose says of a kept compile: taken after `looks` looks at
 * the disk, or not, and why. */
static void say_kept(const struct kept *k, bool took, size_t looks, const char *why)
{
	if (took)
		fprintf(stderr, "cagerun: compile: kept on disk, %s (%zu looks at the disk "
				"unchanged)\n", k->name, looks);
	else
		fprintf(stderr, "cagerun: compile: not the one kept on disk: %s\n", why);
}

/* A compile kept on disk into *L when one fits rq (kept.h); k is rq's
 * key either way, for keeping the compile that follows a miss. With
 * `later`, what it read is asked again by confirm_kept (below). */
static bool take_kept(struct layers *L, const struct layers_req *rq, const struct args *a,
		      struct kept *k, const struct kept_io *io, bool later)
{
	unsigned char bid[64 + PATH_MAX];
	size_t nbid = 0;
	if (!run_program_id(bid, sizeof bid, &nbid) || !kept_prepare(k, rq, L, environ, bid, nbid) ||
	    a->compile_now)
		return false;
	size_t n;
	char why[PATH_MAX + 80];
	bool took = kept_take(k, io, L, rq, later, &n, why, sizeof why);
	/* Taken with its looks left for later, it is said of once asked. */
	if (a->verbose && (took ? !later : why[0] != '\0'))
		say_kept(k, took, n, why);
	return took;
}

/* A kept compile taken before its looks (kept_take's `later`), asked
 * again once (run_opts.confirm): while init builds its mounts on Linux,
 * else before the run. */
struct kept_check {
	const struct layers *L;
	const struct kept *k;
	bool verbose, done, ok;
	char why[PATH_MAX + 80];
};

static bool confirm_kept(void *ctx)
{
	struct kept_check *c = ctx;
	if (c->done)
		return c->ok;
	size_t n = 0;
	c->done = true;
	c->ok = kept_confirm(c->L, &n, c->why, sizeof c->why);
	if (c->verbose)
		say_kept(c->k, c->ok, n, c->why);
	return c->ok;
}

/* A compile to keep on disk, written once the command has started
 * (run_opts.started) or, when it never did, after the run. */
struct keep_later {
	const struct kept *k;
	const struct kept_io *io;
	unsigned char *b; /* the compile's file, or NULL */
	size_t n;
	struct kept_recent recent; /* the recent misses, to write (n 0: none) */
};

static void keep_now(void *ctx)
{
	struct keep_later *kl = ctx;
	kept_recent_write(kl->io, &kl->recent);
	kl->recent.n = 0;
	kept_write(kl->k, kl->io, kl->b, kl->n);
	free(kl->b);
	kl->b = NULL;
}

static int run_layers(struct run *r, struct args *a)
{
	struct layers L;
	memset(&L, 0, sizeof L);
	char *shell_argv[5] = { 0 };
	if (a->shell) {
		const char *sh = getenv("SHELL");
		if (!sh || sh[0] != '/')
			sh = "/bin/sh";
		const char *b = strrchr(sh, '/') + 1;
		size_t k = 0;
		shell_argv[k++] = (char *)sh;
		/* The user's startup files would set their own prompt (and may
		 * read what the cage denies): start the shell without them. */
		if (!strcmp(b, "bash")) {
			shell_argv[k++] = "--norc";
			shell_argv[k++] = "--noprofile";
		} else if (!strcmp(b, "zsh")) {
			shell_argv[k++] = "-f";
		}
		shell_argv[k++] = "-i";
		a->argv = shell_argv;
	}
	struct layers_req rq = { .policy = a->policy, .task = a->task, .argv = a->argv,
				 .mode = a->mode, .copts = r->opts, .lint = a->show,
				 .quiet = a->quiet };
	bool took = take_held(&L, &rq, a);
	struct kept k = { 0 };
	const struct kept_io kio = { run_kept_read, run_kept_write };
	/* Without -p the layers are found first: a kept compile is looked
	 * for under what was found (kept_prepare says which requests may
	 * take one), and the compile goes on from it. */
	int status = took || rq.policy ? 0 : layers_discover(&L, &rq);
	/* Its looks asked while init builds its mounts, where the Linux
	 * launcher runs it (run_opts.confirm); else right after the take. */
#ifdef __linux__
	bool later = !a->backend || !strcmp(a->backend, "linux");
#else
	bool later = false;
#endif
	bool kept = !took && status == 0 && take_kept(&L, &rq, a, &k, &kio, later);
	struct kept_check kc = { .L = &L, .k = &k, .verbose = a->verbose };
	if (kept)
		status = layers_check_command(&L, &rq);
	else if (!took && status == 0)
		status = layers_load(&L, &rq);
	struct keep_later kl = { .k = &k, .io = &kio };
	/* Kept from a request's second run (kept.h, "recent"), or at once
	 * when the one kept had gone stale. */
	if (status == 0 && !took && !kept && k.on && (!k.absent || kept_seen(&k, &kio, &kl.recent)))
		kept_pack(&k, &L, &kl.b, &kl.n);
	if (status == 0 && a->show) {
		/* What a run would add: the same discovery the launch makes. */
		struct gs_result gr = { 0 };
		char gerr[2048];
		bool found = L.mode == IR_MODE_OFF || gs_extend(L.pol, &gr, NULL, gerr, sizeof gerr);
		if (!found)
			fprintf(stderr, "cagerun: %s; a run would refuse to start\n", gerr);
		layers_show(&L, stdout);
		if (found && L.mode != IR_MODE_OFF)
			gs_print(&gr, stdout);
		gs_result_free(&gr);
		if (!found)
			status = EXIT_START;
		if (fflush(stdout) != 0)
			status = EXIT_START;
	} else if (status == 0) {
		char fp[32];
		snprintf(fp, sizeof fp, "xxh3:%016" PRIx64, L.fingerprint);
		if (!a->quiet)
			fprintf(stderr, "cagerun: policy %s (%zu layer%s; cagerun --show lists them)\n", fp,
				L.n, L.n == 1 ? "" : "s");
		const struct yolo_flag *y = yolo_find(a->argv);
		char yname[128] = "";
		if (y)
			snprintf(yname, sizeof yname, "%s%s%s", y->flag, y->value ? "=" : "",
				 y->value ? y->value : "");
		bool pin_off = a->pin && strcmp(a->pin, fp) && strcmp(a->pin, fp + 5);
		bool yolo_off = y && L.mode != IR_MODE_ENFORCE && !a->allow_yolo;
		/* A refusal is said of a confirmed compile: one gone stale is
		 * compiled again (below) and judged then. */
		if ((pin_off || yolo_off) && kept && later && !confirm_kept(&kc)) {
			status = EXIT_START;
		} else if (pin_off) {
			status = EXIT_START;
			fprintf(stderr, "cagerun: --pin %s: the policy is %s; a layer changed since it "
					"was pinned (cagerun --show); nothing was run\n", a->pin, fp);
		} else if (yolo_off) {
			status = EXIT_START;
			fprintf(stderr, "cagerun: %s %s turns off the agent's own permission prompts, and "
					"mode %s is not a full cage; refused, nothing was run (use mode "
					"enforce, or add --allow-yolo to run it anyway)\n", y->agent, yname,
				ir_mode_name((enum ir_mode)L.mode));
		} else {
			if (y && L.mode == IR_MODE_ENFORCE) {
				fprintf(stderr, "cagerun: note: %s %s: the agent asks no more; the cage (mode "
						"enforce) is the boundary\n", y->agent, yname);
			} else if (y) {
				fprintf(stderr,
					"cagerun: ************************************************************\n"
					"cagerun: WARNING: %s %s under mode %s\n"
					"cagerun: the agent asks before nothing and %s; --allow-yolo was given\n"
					"cagerun: ************************************************************\n",
					y->agent, yname, ir_mode_name((enum ir_mode)L.mode),
					L.mode == IR_MODE_ENFORCE_FS ? "its network is open"
								     : "nothing confines it");
			}
			struct run_opts ro = { .policy = a->policy ? a->policy : "the composed policy",
					       .copts = r->opts, .mode = a->mode, .argv = a->argv,
					       .log_path = a->logpath, .resolve = r->res,
					       .quiet = a->quiet, .verbose = a->verbose, .pol = L.pol,
					       .prompt = a->shell ? "[cage] $ " : NULL,
					       .backend = a->backend, .policy_file = a->policy,
					       .record_covered = a->record_covered,
					       .record_workspace = a->record_workspace,
					       .log_denials = a->log_denials, .nofile = a->nofile,
					       .path_prefix = L.cmd.path_prefix, .status_hook = a->hook,
					       .plan_ahead = took ? a->hook->held->plan : NULL,
					       .started = keep_now, .started_ctx = &kl,
					       .confirm = kept && later ? confirm_kept : NULL,
					       .confirm_ctx = &kc };
			/* A version manager's shim: the program it resolved to runs in
			 * its place (docs/cagerun.md, "Version managers"). */
			char **shim_argv = NULL;
			if (L.cmd.exec) {
				size_t n = 0;
				while (a->argv[n])
					n++;
				shim_argv = calloc(n + 1, sizeof *shim_argv);
				if (!shim_argv) {
					layers_free(&L);
					return run_fail("out of memory");
				}
				shim_argv[0] = L.cmd.exec;
				for (size_t i = 1; i < n; i++)
					shim_argv[i] = a->argv[i];
				ro.argv = shim_argv;
			}
			/* A full-screen command owns the terminal: its denials go to
			 * the session log (cagerun denials --follow) and the summary
			 * at exit, not over its screen. */
			struct slog sl = { .fd = -1 };
			int devnull = -1;
			if (!a->quiet && isatty(STDERR_FILENO)) {
				char e[600];
				if (slog_open(&sl, a->argv[0], e, sizeof e)) {
					ro.notice_fd = sl.fd;
					fprintf(stderr, "cagerun: denials are listed when the command ends; to "
							"watch them live: cagerun denials --follow\n");
				} else {
					/* still off the screen: the summary says what was denied */
					devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
					ro.notice_fd = devnull;
					fprintf(stderr, "cagerun: note: %s; denials are listed when the command "
							"ends\n", e);
				}
			}
			fflush(stderr);
			status = run_backend(&ro);
			free(shim_argv);
			slog_close(&sl);
			if (devnull >= 0)
				close(devnull);
			if (!a->quiet && !(kc.done && !kc.ok))
				layers_report_changes(&L, stderr);
		}
	}
	keep_now(&kl); /* when the command never started, or was not run */
	layers_free(&L);
	if (kc.done && !kc.ok) {
		/* The kept compile went stale before the command could start:
		 * nothing ran; the run again, compiled afresh. */
		if (!a->quiet && !a->verbose)
			fprintf(stderr, "cagerun: the compile kept on disk is out of date (%s); "
					"compiling again\n", kc.why);
		a->compile_now = true;
		/* The launcher's namespaces made ahead went with the first
		 * attempt (run_command uses or drops them): none this time. */
		const struct run_status_hook *hook = a->hook;
		struct run_status_hook again;
		if (hook) {
			again = *hook;
			again.ahead = NULL;
			a->hook = &again;
		}
		status = run_layers(r, a);
		a->hook = hook;
	}
	return status;
}

static run_main_fn cagerun_main;
static run_prepare_fn cagerun_prepare;
static bool cagerun_held_taken(const struct run_held *k);
static void cagerun_held_release(struct run_held *k);

int main(int argc, char **argv)
{
	run_alloc_tune();
	/* `cagerun launcher`: starts the launches cage-launch asks for, each
	 * in a fork of itself that runs cagerun_main (run.h), with the
	 * compile cagerun_prepare made in the launcher. */
	static const struct run_launcher_fns fns = { cagerun_main, cagerun_prepare,
						      cagerun_held_taken, cagerun_held_release };
	if (argc >= 2 && !strcmp(argv[1], "launcher"))
		return run_launcher(argc, argv, &fns);
	return cagerun_main(argc, argv, NULL);
}

/* In the launcher: the -p request it ran last, compiled in its directory
 * and environment with nothing printed, and kept (held.h) for the spares
 * it forks next. */
static struct run_held *cagerun_prepare(int argc, char **argv, char **envp, const char *cwd)
{
	struct run_held *k = calloc(1, sizeof *k);
	if (k)
		k->r.log_fd = k->r.sig_fd = k->cmp.log_fd = k->cmp.sig_fd = -1; /* for run_free */
	int here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int quiet = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	int err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	char **was = environ;
	bool kept = false;
	if (k && here >= 0 && quiet >= 0 && out >= 0 && err >= 0 &&
	    dup2(quiet, STDOUT_FILENO) == STDOUT_FILENO &&
	    dup2(quiet, STDERR_FILENO) == STDERR_FILENO && chdir(cwd) == 0) {
		environ = envp;
		struct prx_config cfg;
		memset(&cfg, 0, sizeof cfg);
		prx_limits_default(&cfg.limits);
		struct args a, b;
		memset(&a, 0, sizeof a);
		memset(&b, 0, sizeof b);
		struct prx_config cfg2 = cfg;
		k->r.opts = cage_options_new();
		k->r.res = prx_resolver_new();
		k->cmp.opts = cage_options_new();
		k->cmp.res = prx_resolver_new();
		if (k->r.opts && k->r.res && k->cmp.opts && k->cmp.res &&
		    parse_args(argc, argv, &cfg, &k->r, &a) == -2 &&
		    parse_args(argc, argv, &cfg2, &k->cmp, &b) == -2 && !a.shell) {
			struct layers_req rq = { .policy = a.policy, .task = a.task, .argv = a.argv,
						 .mode = a.mode, .copts = k->r.opts, .lint = a.show,
						 .quiet = a.quiet };
			kept = held_make(&k->h, &rq, k->cmp.opts, envp, cwd);
			if (kept)
				k->plan = run_plan_ahead_make(k->h.L.pol, cwd);
		}
		environ = was;
	}
	/* Back as it was: a launcher that cannot say where it was must not
	 * serve (its clients then start cagerun themselves). */
	if ((here >= 0 && fchdir(here) != 0) ||
	    (out >= 0 && dup2(out, STDOUT_FILENO) != STDOUT_FILENO) ||
	    (err >= 0 && dup2(err, STDERR_FILENO) != STDERR_FILENO))
		_exit(125);
	if (here >= 0)
		close(here);
	if (quiet >= 0)
		close(quiet);
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	if (!kept && k) {
		cagerun_held_release(k);
		k = NULL;
	}
	return k;
}

/* A run took its copy of the compile (held_take moves it out), and did
 * not find the plan bound with it stale. */
static bool cagerun_held_taken(const struct run_held *k)
{
	return k->h.L.pol == NULL && !run_plan_ahead_stale(k->plan);
}

static void cagerun_held_release(struct run_held *k)
{
	if (!k)
		return;
	layers_free(&k->h.L);
	run_plan_ahead_free(k->plan);
	run_free(&k->r);
	run_free(&k->cmp);
	free(k);
}

static int cagerun_main(int argc, char **argv, const struct run_status_hook *hook)
{
	/* `cagerun denials [--follow] [PID]`: a session's denials, from
	 * another terminal (slog.h). */
	if (argc >= 2 && !strcmp(argv[1], "denials")) {
		bool follow = false;
		const char *pid = NULL;
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--follow") || !strcmp(argv[i], "-f"))
				follow = true;
			else if (!pid && argv[i][0] != '-')
				pid = argv[i];
			else
				return run_fail("usage: cagerun denials [--follow] [PID]");
		}
		return slog_show(pid, follow, stdout, stderr);
	}
	/* `cagerun trust [FILE]`: a word, not an option, as direnv's allow. */
	if (argc >= 2 && !strcmp(argv[1], "trust")) {
		if (argc > 3)
			return run_fail("usage: cagerun trust [FILE]");
		return layers_trust(argc == 3 ? argv[2] : NULL);
	}
	struct run r;
	memset(&r, 0, sizeof r);
	r.log_fd = r.sig_fd = -1;
	struct prx_config cfg;
	memset(&cfg, 0, sizeof cfg);
	prx_limits_default(&cfg.limits);
	cfg.log_fd = cfg.notice_fd = -1;
	r.opts = cage_options_new();
	r.res = prx_resolver_new();
	struct args a;
	memset(&a, 0, sizeof a);
	/* The proxy's tunnels need descriptors; the command gets back the
	 * limit it was started with (run.h). */
	struct run_nofile nofile;
	run_nofile_raise(&nofile);
	a.nofile = &nofile;
	a.hook = hook;
	int status;
	if (!r.opts || !r.res)
		status = run_fail("out of memory");
	else if ((status = parse_args(argc, argv, &cfg, &r, &a)) == -2)
		status = run_layers(&r, &a);
	else if (status == -1)
		status = serve(&r, &cfg, a.policy, a.listen, a.sock, a.logpath, a.max_conns_given);
	run_free(&r);
	return status;
}
