/*
 * layers_lint.c - the launcher's side of cage-lint (layers_lint.h):
 * starts the helper, hands it the composition, reads and checks the
 * reply.
 *
 * The helper gets one end of a stream socket pair as its standard input
 * and output: the text is sent with MSG_NOSIGNAL (a helper that died
 * early is a failure to judge, not a SIGPIPE in cagerun), the write side
 * is shut, and the reply is read to its end, at most LL_REPLY_MAX bytes.
 */
#include "layers_lint.h"
#include "helper.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy.h"

extern char **environ;

void ll_verdict_free(struct ll_verdict *v)
{
	free(v->buf);
	free(v->v);
	memset(v, 0, sizeof *v);
}

/* The next NUL-ended field at *at, or NULL when the reply ends first. */
static const char *field(const char *buf, size_t len, size_t *at)
{
	if (*at >= len)
		return NULL;
	const char *s = buf + *at;
	const char *nul = memchr(s, '\0', len - *at);
	if (!nul)
		return NULL;
	*at = (size_t)(nul - buf) + 1;
	return s;
}

static bool number(const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v > UINT_MAX)
		return false;
	*out = (unsigned)v;
	return true;
}

static bool parse_source(const char *f[2], struct ll_source *s)
{
	if (!strcmp(f[0], "-") && !strcmp(f[1], "-"))
		return true; /* an import that failed: not bound */
	if (strlen(f[0]) != 16 || strspn(f[0], "0123456789abcdef") != 16 || f[1][0] != '/')
		return false;
	s->fp = strtoull(f[0], NULL, 16);
	s->bound = true;
	s->path = f[1];
	return true;
}

static bool parse_finding(const char *f[7], struct ll_finding *d)
{
	if (strlen(f[0]) != 1 || !strchr("ewn", f[0][0]) || !number(f[1], &d->line) ||
	    !number(f[2], &d->col))
		return false;
	d->sev = f[0][0];
	d->file = f[3];
	d->layer = f[4];
	d->id = f[5];
	d->msg = f[6];
	return true;
}

bool ll_parse(char *buf, size_t len, struct ll_verdict *out, char *why, size_t whylen)
{
	memset(out, 0, sizeof *out);
	out->buf = buf;
	size_t at = 0, cap = 0;
	const char *magic = field(buf, len, &at);
	bool seen_judged = false, seen_profile = false;
	if (!magic || strcmp(magic, LL_MAGIC)) {
		ll_verdict_free(out);
		return helper_say(why, whylen, "not a reply of this version of %s", LL_PROGRAM);
	}
	for (;;) {
		const char *tag = field(buf, len, &at);
		if (!tag)
			break;
		if (!strcmp(tag, ".")) {
			if (at != len || !seen_judged || !seen_profile)
				break;
			return true;
		}
		size_t want = !strcmp(tag, "J") || !strcmp(tag, "P") ? 1
			      : !strcmp(tag, "S")		      ? 2
			      : !strcmp(tag, "D")		      ? 7
								      : 0;
		const char *f[7];
		size_t k = 0;
		while (k < want && (f[k] = field(buf, len, &at)))
			k++;
		if (!want || k < want)
			break;
		if (tag[0] == 'J') {
			if (seen_judged || (strcmp(f[0], "0") && strcmp(f[0], "1")))
				break;
			seen_judged = true;
			out->judged = f[0][0] == '1';
		} else if (tag[0] == 'P') {
			if (seen_profile)
				break;
			seen_profile = true;
			out->profile = f[0];
		} else if (tag[0] == 'S') {
			if (out->nsrc == LL_SOURCES_MAX || !parse_source(f, &out->src[out->nsrc]))
				break;
			out->nsrc++;
		} else {
			if (out->n == cap) {
				size_t nc = cap ? 2 * cap : 16;
				struct ll_finding *nv = realloc(out->v, nc * sizeof *nv);
				if (!nv) {
					ll_verdict_free(out);
					return helper_say(why, whylen, "out of memory");
				}
				out->v = nv;
				cap = nc;
			}
			if (!parse_finding(f, &out->v[out->n]))
				break;
			out->n++;
		}
	}
	ll_verdict_free(out);
	return helper_say(why, whylen, "%s's reply is malformed or cut short", LL_PROGRAM);
}

/* The helper's arguments (layers_lint.h), malloc'd; the strings are the
 * request's and `nums`. NULL on OOM. */
static char **arguments(const struct ll_request *rq, char nums[][16])
{
	const cage_options *o = rq->opts;
	/* the name; -D, -I, --layer and --untrusted pairs; six more pairs;
	 * --file and its path; the NULL */
	size_t n = 1 + 2 * (o->ndefines + o->nincludes + 2 * rq->nlayers) + 2 * 6 + 2 + 1;
	char **av = calloc(n, sizeof *av);
	if (!av)
		return NULL;
	size_t k = 0;
	av[k++] = (char *)LL_PROGRAM;
	for (size_t i = 0; i < o->ndefines; i++) {
		av[k++] = (char *)"-D";
		av[k++] = o->defines[i];
	}
	for (size_t i = 0; i < o->nincludes; i++) {
		av[k++] = (char *)"-I";
		av[k++] = o->includes[i];
	}
	av[k++] = (char *)"--stdlib";
	av[k++] = (char *)rq->stdlib;
	if (o->home) {
		av[k++] = (char *)"--home";
		av[k++] = o->home;
	}
	if (o->profile) {
		av[k++] = (char *)"--profile";
		av[k++] = o->profile;
	}
	if (o->has_target) {
		av[k++] = (char *)"--target";
		av[k++] = (char *)(o->target == IR_TARGET_LINUX ? "linux" : "macos");
	}
	for (size_t i = 0; i < rq->nlayers; i++) {
		av[k++] = (char *)"--layer";
		av[k++] = (char *)rq->kinds[i];
	}
	for (size_t i = 0; i < rq->nlayers; i++)
		if (rq->untrusted[i]) {
			snprintf(nums[2 + i], sizeof nums[2 + i], "%u", (unsigned)i);
			av[k++] = (char *)"--untrusted";
			av[k++] = nums[2 + i];
		}
	const int idx[2] = { rq->task, rq->command };
	const char *opt[2] = { "--task", "--command" };
	for (int i = 0; i < 2; i++)
		if (idx[i] >= 0) {
			snprintf(nums[i], sizeof nums[i], "%d", idx[i]);
			av[k++] = (char *)opt[i];
			av[k++] = nums[i];
		}
	if (rq->text) {
		av[k++] = (char *)"--stdin";
	} else {
		av[k++] = (char *)"--file";
		av[k++] = (char *)rq->file;
	}
	assert(k < n);
	av[k] = NULL;
	return av;
}

/* fork and exec rather than posix_spawn: posix_spawn returns only once
 * the helper's exec is done (0.3 to 0.4 ms here), and the point is to
 * have it work while the launch goes on. What posix_spawn does about
 * signals is done by hand: every signal is blocked across the fork, so
 * that none of cagerun's handlers can run in the child, which sets the
 * handled ones back to their default before it unblocks them all. Between
 * the fork and the exec the child calls only what is safe after a fork
 * in a threaded program; an exec that fails is its exit status 127, told
 * by ll_finish. */
static bool spawn(const char *path, char **av, int fd, pid_t *pid, char *why, size_t whylen)
{
	sigset_t all, none, was;
	sigfillset(&all);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &all, &was) != 0)
		return helper_say(why, whylen, "cannot start %s: sigprocmask: %s", path,
				  strerror(errno));
	pid_t p = fork();
	if (p == 0) {
		for (int sig = 1; sig < NSIG; sig++) {
			struct sigaction sa;
			if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_IGN &&
			    sa.sa_handler != SIG_DFL) {
				sa.sa_handler = SIG_DFL;
				sa.sa_flags = 0;
				(void)sigaction(sig, &sa, NULL);
			}
		}
		if (dup2(fd, 0) == 0 && dup2(fd, 1) == 1 && sigprocmask(SIG_SETMASK, &none, NULL) == 0)
			execve(path, av, environ);
		_exit(127);
	}
	int e = errno;
	(void)sigprocmask(SIG_SETMASK, &was, NULL);
	if (p < 0)
		return helper_say(why, whylen, "cannot start %s: fork: %s", path, strerror(e));
	*pid = p;
	return true;
}

static bool send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* The reply, to its end or LL_REPLY_MAX + 1 bytes; NULL on OOM or a read
 * error, with errno. */
static char *read_all(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n == cap) {
			char *nb = cap > LL_REPLY_MAX ? NULL : realloc(buf, 2 * cap);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		/* A helper that ended without reading all of the text resets
		 * the connection: what came before is all of its reply. */
		if (r < 0 && errno == ECONNRESET)
			r = 0;
		if (r < 0) {
			int e = errno;
			free(buf);
			errno = e;
			return NULL;
		}
		if (r == 0) {
			*len = n;
			return buf;
		}
		n += (size_t)r;
		if (n > LL_REPLY_MAX) {
			*len = n;
			return buf;
		}
	}
	free(buf);
	errno = ENOMEM;
	return NULL;
}

void ll_start(const struct ll_request *rq, struct ll_job *j)
{
	memset(j, 0, sizeof *j);
	j->sock = -1;
	j->pid = -1;
	/* --task and --command's numbers, then each --untrusted one */
	char nums[LL_SOURCES_MAX][16];
	if (!helper_path(LL_PROGRAM, j->path, sizeof j->path, j->why, sizeof j->why))
		return;
	if (rq->text && strlen(rq->text) > LL_TEXT_MAX) {
		helper_say(j->why, sizeof j->why, "the composition is longer than %d bytes",
			   LL_TEXT_MAX);
		return;
	}
	if (rq->nlayers > LL_SOURCES_MAX - 2) {
		helper_say(j->why, sizeof j->why, "the layers cannot be carried");
		return;
	}
	char **av = arguments(rq, nums);
	if (!av) {
		helper_say(j->why, sizeof j->why, "out of memory");
		return;
	}
	int sp[2];
	if (!helper_socketpair(SOCK_STREAM, sp)) {
		free(av);
		helper_say(j->why, sizeof j->why, "socketpair: %s", strerror(errno));
		return;
	}
	/* dup2 onto itself would keep close-on-exec: the helper's end must
	 * not be 0 or 1 already. */
	if (sp[1] <= 1) {
		int moved = fcntl(sp[1], F_DUPFD_CLOEXEC, 3);
		close(sp[1]);
		sp[1] = moved;
	}
	bool ok = sp[1] >= 0 ? spawn(j->path, av, sp[1], &j->pid, j->why, sizeof j->why)
			     : helper_say(j->why, sizeof j->why, "fcntl: %s", strerror(errno));
	free(av);
	if (sp[1] >= 0)
		close(sp[1]);
	if (!ok) {
		close(sp[0]);
		return;
	}
	j->on = true;
	j->sock = sp[0];
	/* The text fits the socket's buffer or the helper, which reads all
	 * of it first, takes the rest. A failure is told with the reply
	 * (ll_finish). */
	if (rq->text && !send_all(j->sock, rq->text, strlen(rq->text)))
		j->send_err = errno;
	if (!j->send_err && shutdown(j->sock, SHUT_WR) != 0)
		j->send_err = errno;
}

static void job_reap(struct ll_job *j, int *st)
{
	close(j->sock);
	j->sock = -1;
	while (waitpid(j->pid, st, 0) < 0)
		if (errno != EINTR) {
			*st = -1;
			break;
		}
	j->on = false;
}

bool ll_finish(struct ll_job *j, struct ll_verdict *out, char *why, size_t whylen)
{
	memset(out, 0, sizeof *out);
	if (!j->on) {
		helper_say(why, whylen, "%s", j->why[0] ? j->why : "lint was not asked");
		memset(j, 0, sizeof *j);
		return false;
	}
	size_t len = 0;
	char *reply = read_all(j->sock, &len);
	int got = errno, st = 0;
	job_reap(j, &st);
	bool ok = true;
	/* How the helper ended says more than what its socket did, and its
	 * reply more than how the text went. */
	if (st == -1)
		ok = helper_say(why, whylen, "%s could not be waited for", j->path);
	else if (WIFSIGNALED(st))
		ok = helper_say(why, whylen, "%s ended by signal %d", j->path, WTERMSIG(st));
	else if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		ok = helper_say(why, whylen, "%s exited with status %d%s", j->path, WEXITSTATUS(st),
				WEXITSTATUS(st) == 127 ? " (it could not be run)" : "");
	else if (!reply)
		ok = helper_say(why, whylen, "reading %s's reply: %s", LL_PROGRAM, strerror(got));
	else if (len > LL_REPLY_MAX)
		ok = helper_say(why, whylen, "%s's reply is longer than %d bytes", LL_PROGRAM,
				LL_REPLY_MAX);
	if (!ok) {
		free(reply);
	} else if (!ll_parse(reply, len, out, why, whylen)) {
		ok = false;
	} else if (j->send_err) {
		/* Told only of a reply that parsed: what the helper said, or
		 * that it said nothing, is the clearer reason. */
		ll_verdict_free(out);
		ok = helper_say(why, whylen, "%s did not take the composition: %s", LL_PROGRAM,
				strerror(j->send_err));
	}
	memset(j, 0, sizeof *j);
	return ok;
}

void ll_drop(struct ll_job *j)
{
	if (j->on) {
		kill(j->pid, SIGKILL);
		int st;
		job_reap(j, &st);
	}
	memset(j, 0, sizeof *j);
}

bool ll_ask(const struct ll_request *rq, struct ll_verdict *out, char *why, size_t whylen)
{
	struct ll_job j;
	ll_start(rq, &j);
	return ll_finish(&j, out, why, whylen);
}
