/*
 * held.c - a compile kept for a request expected later (see held.h).
 */
#include "held.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cachedir.h"
#include "ir.h"

bool held_request_ok(const struct layers_req *rq)
{
	return rq->policy && !rq->task && !rq->lint;
}

bool held_inputs_still(const struct layers *L, size_t *looks, char *why, size_t whylen)
{
	const char *changed = NULL;
	if (!cage_inputs_unchanged(L->pol, &changed, looks)) {
		snprintf(why, whylen, "%s changed since it was compiled", changed);
		return false;
	}
	return true;
}

bool held_setup_still(struct layers *L, const char *mode, char *why, size_t whylen)
{
	if (L->cache[0]) {
		/* The folder the compile was given, as give_cache finds it now:
		 * made again if it went, and refused if it is no longer one of
		 * the user's own. */
		char now[sizeof L->cache], err[PATH_MAX + 200];
		if (!cachedir_resolve(L->cache_key, true, now, sizeof now, err, sizeof err) ||
		    strcmp(now, L->cache)) {
			snprintf(why, whylen, "its private cache folder changed");
			return false;
		}
	}
	/* The mode of this request (one layers_set_mode refuses is left to
	 * the fresh compile, which says so). */
	enum ir_mode known;
	if ((mode && !ir_mode_parse(mode, &known)) || layers_set_mode(L, mode) != 0) {
		snprintf(why, whylen, "--mode %s", mode);
		return false;
	}
	return true;
}

bool held_still(struct layers *L, const char *mode, size_t *looks, char *why, size_t whylen)
{
	return held_inputs_still(L, looks, why, whylen) && held_setup_still(L, mode, why, whylen);
}

bool held_make(struct layers_held *h, const struct layers_req *rq, const cage_options *opts,
	       char *const *envp, const char *cwd)
{
	memset(h, 0, sizeof *h);
	struct stat st;
	if (!held_request_ok(rq) ||
	    (size_t)snprintf(h->cwd, sizeof h->cwd, "%s", cwd) >= sizeof h->cwd || stat(".", &st) != 0)
		return false;
	h->cwd_dev = st.st_dev;
	h->cwd_ino = st.st_ino;
	h->policy = rq->policy;
	h->opts = opts;
	h->envp = envp;
	if (layers_load(&h->L, rq) != 0 || cage_diagnostic_count(h->L.pol) != 0) {
		layers_free(&h->L);
		memset(&h->L, 0, sizeof h->L);
		return false;
	}
	return true;
}

static bool same_strings(char *const *a, char *const *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

static size_t count(char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	return n;
}

bool held_take(struct layers_held *h, struct layers *L, const struct layers_req *rq,
	       char *const *envp, size_t *n, char *why, size_t whylen)
{
	*n = 0;
	if (!h->L.pol) {
		snprintf(why, whylen, "none kept");
		return false;
	}
	if (!held_request_ok(rq) || strcmp(rq->policy, h->policy) ||
	    !cage_options_same(rq->copts, h->opts)) {
		snprintf(why, whylen, "kept for another policy or other options");
		return false;
	}
	size_t ne = count(envp);
	if (ne != count(h->envp) || !same_strings(envp, h->envp, ne)) {
		snprintf(why, whylen, "kept for another environment");
		return false;
	}
	char cwd[PATH_MAX];
	struct stat st;
	if (!getcwd(cwd, sizeof cwd) || strcmp(cwd, h->cwd) || stat(".", &st) != 0 ||
	    st.st_dev != h->cwd_dev || st.st_ino != h->cwd_ino) {
		snprintf(why, whylen, "kept for another working directory");
		return false;
	}
	if (!held_still(&h->L, rq->mode, n, why, whylen))
		return false;
	*L = h->L;
	memset(&h->L, 0, sizeof h->L);
	return true;
}
