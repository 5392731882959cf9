/*
 * runcommon.c - the steps every launcher shares (see runcommon.h).
 */
#include "runcommon.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agentstate.h"
#include "cli.h"
#include "cpt.h"
#include "cpt_write.h"
#include "prx.h"
#include "gs.h"
#include "prx_ev.h"
#include "path.h"

void run_alloc_tune(void)
{
#ifdef __GLIBC__
	/* Failure leaves malloc as it was: slower, not wrong. */
	(void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
	(void)mallopt(M_TOP_PAD, 1 << 20);
#endif
}

int run_wait_code(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return RUN_SETUP_FAILED;
}

bool run_send_fd(int sock, const void *buf, size_t n, int fd)
{
	struct iovec iov = { (void *)buf, n };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		memset(&u, 0, sizeof u);
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof u.buf;
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof fd);
	}
#ifdef MSG_NOSIGNAL
	const int flags = MSG_NOSIGNAL;
#else
	const int flags = 0; /* SIGPIPE is ignored where this is used */
#endif
	ssize_t k;
	while ((k = sendmsg(sock, &mh, flags)) < 0 && errno == EINTR)
		;
	return k == (ssize_t)n;
}

bool run_status_send(const struct run_status_hook *h, int status)
{
#ifdef MSG_NOSIGNAL
	const int flags = MSG_NOSIGNAL | MSG_DONTWAIT;
#else
	const int flags = MSG_DONTWAIT; /* SIGPIPE is ignored in every run */
#endif
	for (size_t i = 0; i < h->nmsgs; i++) {
		struct run_status_msg m = h->msgs[i];
		if (m.code_at >= 0 && (size_t)m.code_at < m.len)
			m.bytes[m.code_at] = (unsigned char)status;
		ssize_t k;
		while ((k = send(m.fd, m.bytes, m.len, flags)) < 0 && errno == EINTR)
			;
		if (k != (ssize_t)m.len)
			return false;
	}
	return true;
}

void run_nofile_for(const struct ir_profile *p, const struct rlimit *start, struct rlimit *out)
{
	*out = *start;
	const struct ir_limit *l = &p->limits[IR_LIM_FILES];
	if (!l->set)
		return;
	rlim_t v = (rlim_t)l->value;
	if (out->rlim_max == RLIM_INFINITY || out->rlim_max > v)
		out->rlim_max = v;
	if (out->rlim_cur == RLIM_INFINITY || out->rlim_cur > out->rlim_max)
		out->rlim_cur = out->rlim_max;
}

int run_limits_gate(const struct ir_profile *p, const char *const why[IR_LIM_N], bool quiet)
{
	char v[64], line[1024] = "";
	size_t used = 0;
	for (int k = 0; k < IR_LIM_N; k++) {
		const struct ir_limit *l = &p->limits[k];
		if (!l->set || !why[k])
			continue;
		ir_limit_display(l, false, v, sizeof v);
		const char *name = ir_limit_name((enum ir_limit_kind)k);
		if (!l->best_effort) {
			const struct loc *at = &l->loc;
			return run_fail("%s:%u:%u: limit %s %s cannot be enforced here: %s; mark it "
					"best-effort to run without it (docs/cagerun.md, \"Resource "
					"limits\"); nothing was run",
					at->file ? at->file->name : "?", at->line, at->col, name, v,
					why[k]);
		}
		int n = snprintf(line + used, sizeof line - used, "%s%s %s (%s)", used ? "; " : "",
				 name, v, why[k]);
		if (n > 0 && (size_t)n < sizeof line - used)
			used += (size_t)n;
	}
	if (used && !quiet)
		fprintf(stderr, "cagerun: best-effort limits NOT enforced here: %s\n", line);
	return 0;
}

int run_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("cagerun: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return RUN_SETUP_FAILED;
}

int run_load_policy(const struct run_opts *o, cage_policy **polp, const struct ir_profile **prof,
		    enum ir_mode *mode)
{
	/* Already compiled (cagerun's layers, which printed its findings), or
	 * compiled here; the caller frees it only in the second case. */
	cage_policy *pol = *polp = o->pol ? o->pol : cage_load_file(o->policy, o->copts);
	if (!pol)
		return run_fail("out of memory");
	if (!o->pol)
		cage_print_diagnostics(pol, stderr, cli_want_color("auto", STDERR_FILENO));
	if (cage_error_count(pol) > 0 || !pol->ir || !pol->ir->selected)
		return run_fail("%s: the policy has errors; nothing was run", o->policy);
	*prof = pol->ir->selected;
	*mode = (*prof)->mode;
	if (o->mode && !ir_mode_parse(o->mode, mode))
		return run_fail("--mode %s: expected off, monitor, enforce-fs or enforce", o->mode);
	/* Every path param must name something that exists: a typo in -D
	 * must not quietly grant (or protect) nothing. */
	const struct ir_policy *ir = pol->ir;
	for (size_t i = 0; i < ir->nparams; i++) {
		const struct ir_param *p = &ir->params[i];
		if (p->type != IR_P_PATH || !p->used || !p->value)
			continue;
		/* As the rules see it: a default may start with `~`. */
		char *path;
		const char *perr = NULL;
		if (!path_query(&pol->arena, ir->home, p->value, &path, &perr))
			return run_fail("param %s: %s: %s; nothing was run", p->name, p->value, perr);
		struct stat st;
		if (stat(path, &st) != 0)
			return run_fail("param %s: %s: %s; nothing was run", p->name, path,
					strerror(errno));
	}
	return 0;
}

int run_discover_git(const struct run_opts *o, const struct gs_keep *keep, cage_policy *pol)
{
	/* Git directories and what git's configuration points at, found now
	 * and protected for this run, before any plan is built from the
	 * profile (runtime/gitscan/gs.h). */
	struct gs_result gr;
	char gerr[2048];
	if (!gs_extend(pol, &gr, keep, gerr, sizeof gerr)) {
		gs_result_free(&gr);
		return run_fail("%s; nothing was run", gerr);
	}
	run_git_report(o, &gr);
	gs_result_free(&gr);
	return 0;
}

void run_git_report(const struct run_opts *o, const struct gs_result *gr)
{
	if (o->verbose) {
		gs_print(gr, stderr);
		if (gr->walk_note)
			fprintf(stderr, "cagerun: git discovery's walk: %s\n", gr->walk_note);
	} else if (gr->truncated && !o->quiet) {
		fprintf(stderr, "cagerun: note: the git discovery stopped at a bound (%zu entries "
				"read); cagerun --show lists what it found\n", gr->scanned);
	}
}

int run_proxy_table(cage_policy *pol, const char *name, char **bytes, struct cpt_table *t)
{
	size_t tlen = 0;
	FILE *mem = open_memstream(bytes, &tlen);
	const char *err = NULL;
	/* The table backend itself, not cage_emit(): the launcher links the
	 * table writer and no other backend. */
	bool ok = mem && pol->ir && pol->ir->selected &&
		  cpt_emit(pol->ir, pol->ir->selected, mem, &pol->arena, &err);
	if (mem && fclose(mem) != 0)
		ok = false;
	if (!ok)
		return run_fail("%s: cannot build the proxy table: %s", name,
				err ? err : strerror(errno));
	struct cpt_error terr;
	if (!cpt_load_mem(t, *bytes, tlen, &terr))
		return run_fail("%s: proxy table rejected: %s", name, terr.msg);
	return 0;
}

int run_agent_state(const cage_policy *pol, bool verbose, struct agentstate *st)
{
	char err[PATH_MAX + 256];
	if (!agentstate_prepare(pol->ir, st, err, sizeof err))
		return run_fail("%s; nothing was run", err);
	if (verbose && st->copy[0])
		fprintf(stderr, "cagerun: %s: the agent's own copy of its config file%s\n", st->copy,
			st->seeded ? " (copied now from the user's)" : "");
	return 0;
}

bool run_proxy_secret(char out[33])
{
	unsigned char rnd[16];
	if (!prx_random(rnd, sizeof rnd))
		return false;
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", rnd[i]);
	return true;
}

int run_notice_fd(const struct run_opts *o)
{
	return o->quiet ? -1 : o->notice_fd > 0 ? o->notice_fd : STDERR_FILENO;
}

int run_open_log(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
}

void run_take_terminal(void)
{
	sigset_t ss, old;
	sigemptyset(&ss);
	sigaddset(&ss, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ss, &old);
	if (tcsetpgrp(STDIN_FILENO, getpgrp()) != 0) {
		/* Not our terminal after all: signals still arrive through cagerun. */
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

void run_nofile_raise(struct run_nofile *n)
{
	memset(n, 0, sizeof *n);
	if (getrlimit(RLIMIT_NOFILE, &n->orig) != 0)
		return;
	n->known = true;
	if (n->orig.rlim_cur == RLIM_INFINITY || n->orig.rlim_cur >= n->orig.rlim_max)
		return;
	/* An unlimited hard limit is still capped by fs.nr_open: try the hard
	 * limit, then smaller steps, and keep the first the kernel accepts. */
	const rlim_t tries[] = { n->orig.rlim_max, 1u << 20, 1u << 16, 1u << 13 };
	for (size_t i = 0; i < sizeof tries / sizeof *tries; i++) {
		struct rlimit want = { tries[i], n->orig.rlim_max };
		if (tries[i] <= n->orig.rlim_cur || tries[i] > n->orig.rlim_max)
			continue;
		if (setrlimit(RLIMIT_NOFILE, &want) == 0) {
			n->changed = true;
			return;
		}
	}
}

bool run_nofile_restore(const struct run_nofile *n)
{
	return !n || !n->changed || setrlimit(RLIMIT_NOFILE, &n->orig) == 0;
}

bool run_nofile_start(const struct run_nofile *n, struct rlimit *out)
{
	if (n && n->known) {
		*out = n->orig;
		return true;
	}
	return getrlimit(RLIMIT_NOFILE, out) == 0;
}

int run_proxy_fit(struct prx_limits *l, bool explicit)
{
	struct rlimit rl;
	if (explicit || getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    prx_fds_needed(l->max_conns) <= rl.rlim_cur)
		return 0;
	unsigned long long fit = rl.rlim_cur > 32 ? (rl.rlim_cur - 32) / 6 : 0;
	if (fit < RUN_PROXY_MIN_CONNS)
		return run_fail("the open-files limit is %llu (hard limit %llu); the proxy needs at "
				"least %llu descriptors (%d connections): raise the hard limit (as "
				"root: ulimit -Hn 4096, or nofile in /etc/security/limits.conf) and "
				"run again; nothing was run",
				(unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max,
				prx_fds_needed(RUN_PROXY_MIN_CONNS), RUN_PROXY_MIN_CONNS);
	l->max_conns = (unsigned)fit;
	return 0;
}

int run_unconfined(char *const *argv, const struct run_nofile *nofile)
{
	fprintf(stderr, "cagerun: mode off: running %s WITHOUT any sandbox\n", argv[0]);
	fflush(stderr);
	if (!run_nofile_restore(nofile))
		return run_fail("cannot restore the open-files limit: %s; nothing was run",
				strerror(errno));
	execvp(argv[0], argv);
	int e = errno;
	fprintf(stderr, "cagerun: %s: %s\n", argv[0], strerror(e));
	return e == ENOENT ? 127 : 126;
}

bool run_replace_at(int dfd, const char *name, const char *tmp, const char *b, size_t len,
		    enum run_replace_step *step)
{
	*step = RUN_REPLACE_CREATE;
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	*step = RUN_REPLACE_WRITE;
	size_t put = 0;
	while (put < len) {
		ssize_t k = write(fd, b + put, len - put);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int e = k < 0 ? errno : EIO;
			close(fd);
			(void)unlinkat(dfd, tmp, 0);
			errno = e;
			return false;
		}
		put += (size_t)k;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		int e = errno;
		(void)unlinkat(dfd, tmp, 0);
		errno = e;
		return false;
	}
	*step = RUN_REPLACE_RENAME;
	if (renameat(dfd, tmp, dfd, name) != 0) {
		int e = errno;
		(void)unlinkat(dfd, tmp, 0);
		errno = e;
		return false;
	}
	return true;
}
