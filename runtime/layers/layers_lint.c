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

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
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
	bool seen_judged = false;
	if (!magic || strcmp(magic, LL_MAGIC)) {
		ll_verdict_free(out);
		return helper_say(why, whylen, "not a reply of this version of %s", LL_PROGRAM);
	}
	for (;;) {
		const char *tag = field(buf, len, &at);
		if (!tag)
			break;
		if (!strcmp(tag, ".")) {
			if (at != len || !seen_judged)
				break;
			return true;
		}
		size_t want = !strcmp(tag, "J") ? 1 : !strcmp(tag, "S") ? 2 : !strcmp(tag, "D") ? 7 : 0;
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
 * request's. NULL on OOM. */
static char **arguments(const struct ll_request *rq, char nums[2][16])
{
	const cage_options *o = rq->opts;
	size_t n = 1 + 2 * (o->ndefines + o->nincludes) + 2 * 7 + 2;
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
	if (rq->select) {
		av[k++] = (char *)"--select";
		av[k++] = (char *)rq->select;
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
	av[k] = NULL;
	return av;
}

static bool spawn(const char *path, char **av, int fd, pid_t *pid, char *why, size_t whylen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none;
	sigemptyset(&none);
	int e = posix_spawn_file_actions_init(&fa);
	if (e == 0) {
		e = posix_spawnattr_init(&at);
		if (e == 0) {
			e = posix_spawn_file_actions_adddup2(&fa, fd, 0);
			if (e == 0)
				e = posix_spawn_file_actions_adddup2(&fa, fd, 1);
			if (e == 0)
				e = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
			if (e == 0)
				e = posix_spawnattr_setsigmask(&at, &none);
			if (e == 0)
				e = posix_spawn(pid, path, &fa, &at, av, environ);
			posix_spawnattr_destroy(&at);
		}
		posix_spawn_file_actions_destroy(&fa);
	}
	return e == 0 || helper_say(why, whylen, "cannot start %s: %s", path, strerror(e));
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

bool ll_ask(const struct ll_request *rq, struct ll_verdict *out, char *why, size_t whylen)
{
	memset(out, 0, sizeof *out);
	char path[PATH_MAX], nums[2][16];
	if (!helper_path(LL_PROGRAM, path, sizeof path, why, whylen))
		return false;
	if (rq->text && strlen(rq->text) > LL_TEXT_MAX)
		return helper_say(why, whylen, "the composition is longer than %d bytes", LL_TEXT_MAX);
	char **av = arguments(rq, nums);
	if (!av)
		return helper_say(why, whylen, "out of memory");
	int sp[2];
	if (!helper_socketpair(SOCK_STREAM, sp)) {
		free(av);
		return helper_say(why, whylen, "socketpair: %s", strerror(errno));
	}
	/* dup2 onto itself would keep close-on-exec: the helper's end must
	 * not be 0 or 1 already. */
	if (sp[1] <= 1) {
		int moved = fcntl(sp[1], F_DUPFD_CLOEXEC, 3);
		close(sp[1]);
		sp[1] = moved;
	}
	pid_t pid = -1;
	bool ok = sp[1] >= 0 ? spawn(path, av, sp[1], &pid, why, whylen)
			     : helper_say(why, whylen, "fcntl: %s", strerror(errno));
	free(av);
	if (sp[1] >= 0)
		close(sp[1]);
	char *reply = NULL;
	size_t len = 0;
	int sent = 0, got = 0;
	if (ok && rq->text && !send_all(sp[0], rq->text, strlen(rq->text)))
		sent = errno;
	if (ok && !sent && shutdown(sp[0], SHUT_WR) != 0)
		sent = errno;
	/* Read even when the text was not all taken: what the helper said,
	 * or that it said nothing, is the clearer reason. */
	if (ok && !(reply = read_all(sp[0], &len)))
		got = errno;
	close(sp[0]);
	int st = 0;
	while (pid > 0 && waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			ok = ok && helper_say(why, whylen, "waitpid: %s", strerror(errno));
			break;
		}
	/* How the helper ended says more than what its socket did, and its
	 * reply more than how the text went. */
	if (ok && WIFSIGNALED(st))
		ok = helper_say(why, whylen, "%s ended by signal %d", path, WTERMSIG(st));
	else if (ok && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		ok = helper_say(why, whylen, "%s exited with status %d", path, WEXITSTATUS(st));
	else if (ok && !reply)
		ok = helper_say(why, whylen, "reading %s's reply: %s", LL_PROGRAM, strerror(got));
	else if (ok && len > LL_REPLY_MAX)
		ok = helper_say(why, whylen, "%s's reply is longer than %d bytes", LL_PROGRAM, LL_REPLY_MAX);
	if (!ok) {
		free(reply);
		return false;
	}
	if (!ll_parse(reply, len, out, why, whylen))
		return false;
	if (sent) {
		ll_verdict_free(out);
		return helper_say(why, whylen, "%s did not take the composition: %s", LL_PROGRAM,
				  strerror(sent));
	}
	return true;
}
