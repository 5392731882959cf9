/*
 * cagerun_main.c - the cagerun program: `cagerun -p POLICY -- COMMAND`
 * runs the command inside the policy (runtime/run.h), and `--proxy-only`
 * serves the policy's filtering proxy on its own until SIGINT/SIGTERM.
 * Exit 125 whenever anything fails to start: nothing is ever served (or
 * run) without the policy in force.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cage.h"
#include "cli.h"
#include "cpt.h"
#include "prx.h"
#include "run.h"

#define EXIT_START 125

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cagerun -p POLICY [-D NAME=VALUE]... [-I DIR]... [--profile NAME]\n"
		"               [--mode off|enforce-fs|enforce] [--log FILE] [--resolve HOST:PORT:ADDR]...\n"
		"               [--quiet] [--verbose] -- COMMAND [ARG]...\n"
		"       cagerun --proxy-only -p POLICY [-D NAME=VALUE]... [-I DIR]... [--profile NAME]\n"
		"               [--listen 127.0.0.1:PORT] [--socket PATH] [--resolve HOST:PORT:ADDR]...\n"
		"               [--log FILE] [--max-conns N] [--header-timeout MS]\n"
		"               [--connect-timeout MS] [--idle-timeout MS] [--quiet]\n"
		"       cagerun --version | --help\n"
		"Runs COMMAND inside the policy (Linux: Landlock, seccomp, namespaces; in enforce\n"
		"mode the filtering proxy is its only way to the network). Exit status: the\n"
		"command's, 128+N when a signal N ended it, 125 when the sandbox could not be\n"
		"set up (the command did not run), 126/127 when COMMAND cannot be executed.\n"
		"--proxy-only runs the policy's filtering HTTP proxy on its own; TCP clients\n"
		"must send the per-run secret printed on standard output as the Basic password.\n"
		"Each request the proxy denies is reported on standard error (host, port, deciding\n"
		"rule); --quiet turns that off.\n");
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

static int fail(const char *what)
{
	fprintf(stderr, "cagerun: %s\n", what);
	return EXIT_START;
}

/* Compiles the policy and returns its table bytes (malloc'd). */
static char *build_table(const char *path, cage_options *o, size_t *len)
{
	cage_policy *p = cage_load_file(path, o);
	if (!p) {
		fprintf(stderr, "cagerun: out of memory\n");
		return NULL;
	}
	cage_print_diagnostics(p, stderr, cli_want_color("auto", STDERR_FILENO));
	if (cage_error_count(p) > 0) {
		fprintf(stderr, "cagerun: %s: policy has errors; not starting\n", path);
		cage_policy_free(p);
		return NULL;
	}
	run_proxy_only_note(p, stderr);
	char *buf = NULL;
	FILE *mem = open_memstream(&buf, len);
	const char *err = NULL;
	bool ok = mem && cage_emit(p, "table", mem, &err);
	if (mem && fclose(mem) != 0)
		ok = false;
	if (!ok) {
		fprintf(stderr, "cagerun: %s: cannot build the proxy table: %s\n", path,
			err ? err : strerror(errno));
		free(buf);
		buf = NULL;
	}
	cage_policy_free(p);
	return buf;
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

/* Parses the command line into cfg and r; returns -1 to go on, or an exit
 * status. */
static int parse_args(int argc, char **argv, struct prx_config *cfg, struct run *r,
		      const char **policy, const char **listen, const char **sock,
		      const char **logpath, struct run_opts *ro)
{
	bool proxy_only = false;
	char err[512];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
			printf("cagerun %s\n", cage_version());
			return 0;
		}
		if (!strcmp(a, "--proxy-only")) {
			proxy_only = true;
			continue;
		}
		if (!strcmp(a, "--")) {
			if (i + 1 >= argc)
				return fail("-- must be followed by the command to run");
			ro->argv = argv + i + 1;
			break;
		}
		if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			ro->quiet = true;
			continue;
		}
		if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
			ro->verbose = true;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "cagerun: %s needs a value\n", a);
			usage(stderr);
			return EXIT_START;
		}
		const char *v = argv[++i];
		bool ok = true;
		if (!strcmp(a, "-p") || !strcmp(a, "--policy"))
			*policy = v;
		else if (!strcmp(a, "-D") || !strcmp(a, "--define"))
			ok = cage_options_define(r->opts, v);
		else if (!strcmp(a, "-I") || !strcmp(a, "--include"))
			cage_options_include(r->opts, v);
		else if (!strcmp(a, "--profile"))
			cage_options_profile(r->opts, v);
		else if (!strcmp(a, "--mode"))
			ro->mode = v;
		else if (!strcmp(a, "--listen"))
			*listen = v;
		else if (!strcmp(a, "--socket"))
			*sock = v;
		else if (!strcmp(a, "--log"))
			*logpath = v;
		else if (!strcmp(a, "--resolve")) {
			if (!prx_resolver_add(r->res, v, err, sizeof err))
				return fail(err);
		} else if (!strcmp(a, "--max-conns"))
			ok = parse_ms(v, &cfg->limits.max_conns);
		else if (!strcmp(a, "--header-timeout"))
			ok = parse_ms(v, &cfg->limits.header_timeout_ms);
		else if (!strcmp(a, "--connect-timeout"))
			ok = parse_ms(v, &cfg->limits.connect_timeout_ms);
		else if (!strcmp(a, "--idle-timeout"))
			ok = parse_ms(v, &cfg->limits.idle_timeout_ms);
		else {
			fprintf(stderr, "cagerun: unknown option %s\n", a);
			usage(stderr);
			return EXIT_START;
		}
		if (!ok) {
			fprintf(stderr, "cagerun: bad value for %s: %s\n", a, v);
			return EXIT_START;
		}
	}
	/* Each denial as it happens, unless --quiet. */
	cfg->notice_fd = ro->quiet ? -1 : STDERR_FILENO;
	if (proxy_only && ro->argv)
		return fail("--proxy-only runs no command; drop it, or the -- COMMAND part");
	if (!proxy_only && !ro->argv) {
		usage(stderr);
		return fail("nothing to run: give -- COMMAND [ARG]..., or --proxy-only");
	}
	if (!proxy_only) {
		if (!*policy)
			return fail("-p POLICY is needed; nothing was run");
		ro->policy = *policy;
		ro->copts = r->opts;
		ro->log_path = *logpath;
		ro->resolve = r->res;
		return -2;
	}
	if (!*policy) {
		usage(stderr);
		return fail("--proxy-only needs -p POLICY");
	}
	return -1;
}

static int serve(struct run *r, struct prx_config *cfg, const char *policy, const char *listen,
		 const char *sock, const char *logpath)
{
	char err[512];
	size_t tlen = 0;
	r->tbytes = build_table(policy, r->opts, &tlen);
	if (!r->tbytes)
		return EXIT_START;
	struct cpt_error terr;
	if (!cpt_load_mem(&r->table, r->tbytes, tlen, &terr)) {
		fprintf(stderr, "cagerun: %s: proxy table rejected: %s\n", policy, terr.msg);
		return EXIT_START;
	}
	cfg->policy = prx_policy_of_table(&r->table);
	cfg->overrides = r->res;

	/* A per-run secret: 128 random bits, hex. */
	unsigned char rnd[16];
	char secret[33];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return fail("getrandom failed");
	for (int i = 0; i < 16; i++)
		snprintf(secret + 2 * i, 3, "%02x", rnd[i]);
	cfg->secret = secret;

	if (logpath) {
		r->log_fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
				 0600);
		if (r->log_fd < 0) {
			snprintf(err, sizeof err, "--log %s: %s", logpath, strerror(errno));
			return fail(err);
		}
		cfg->log_fd = r->log_fd;
	}
	/* Tunnels need descriptors: take what the hard limit allows. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return fail("cannot ignore SIGPIPE");
	sigset_t ss;
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) != 0)
		return fail("sigprocmask failed");
	r->sig_fd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r->sig_fd < 0)
		return fail("signalfd failed");

	r->srv = prx_server_new(cfg, err, sizeof err);
	if (!r->srv)
		return fail(err);
	if (!listen && !sock)
		listen = "127.0.0.1:0";
	char bound[80] = "";
	if ((listen && !prx_server_listen_tcp(r->srv, listen, bound, sizeof bound, err,
					      sizeof err)) ||
	    (sock && !prx_server_listen_unix(r->srv, sock, err, sizeof err)))
		return fail(err);
	/* Standard output is the invoker's: the only place the secret goes. */
	if (listen)
		printf("proxy http://cage:%s@%s\n", secret, bound);
	if (sock)
		printf("proxy unix:%s\n", sock);
	if (fflush(stdout) != 0)
		return fail("cannot write to standard output");
	if (!prx_server_run(r->srv, r->sig_fd, err, sizeof err))
		return fail(err);
	if (cfg->notice_fd >= 0) /* not --quiet */
		prx_server_print_denials(r->srv, stderr, "cagerun: ");
	return 0;
}

int main(int argc, char **argv)
{
	struct run r;
	memset(&r, 0, sizeof r);
	r.log_fd = r.sig_fd = -1;
	struct prx_config cfg;
	memset(&cfg, 0, sizeof cfg);
	prx_limits_default(&cfg.limits);
	cfg.log_fd = cfg.notice_fd = -1;
	r.opts = cage_options_new();
	r.res = prx_resolver_new();
	int status;
	const char *policy = NULL, *listen = NULL, *sock = NULL, *logpath = NULL;
	struct run_opts ro;
	memset(&ro, 0, sizeof ro);
	if (!r.opts || !r.res)
		status = fail("out of memory");
	else if ((status = parse_args(argc, argv, &cfg, &r, &policy, &listen, &sock, &logpath,
				      &ro)) == -2)
		status = run_command(&ro);
	else if (status < 0)
		status = serve(&r, &cfg, policy, listen, sock, logpath);
	run_free(&r);
	return status;
}
