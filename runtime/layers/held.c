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

int held_nopts(int argc, char *const *argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			return i;
	return argc - 1;
}

bool held_make(struct layers_held *h, const struct layers_req *rq, int argc, char *const *argv,
	       char *const *envp, const char *cwd)
{
	memset(h, 0, sizeof *h);
	struct stat st;
	if (!rq->policy || rq->task || rq->lint || (size_t)snprintf(h->cwd, sizeof h->cwd, "%s", cwd) >= sizeof h->cwd ||
	    stat(".", &st) != 0)
		return false;
	h->cwd_dev = st.st_dev;
	h->cwd_ino = st.st_ino;
	h->argv = argv;
	h->nopts = held_nopts(argc, argv);
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

/* --mode's words: "--mode" (and the word after it), or "--mode=...". */
static int mode_words(char *const *v, int i, int n)
{
	if (!strcmp(v[i], "--mode"))
		return i + 1 < n ? 2 : 1;
	return !strncmp(v[i], "--mode=", 7) ? 1 : 0;
}

/* Whether the options a[0..na) and b[0..nb) are the same but --mode. */
static bool same_options(char *const *a, int na, char *const *b, int nb)
{
	int i = 0, j = 0;
	for (;;) {
		while (i < na && mode_words(a, i, na))
			i += mode_words(a, i, na);
		while (j < nb && mode_words(b, j, nb))
			j += mode_words(b, j, nb);
		if (i == na || j == nb)
			return i == na && j == nb;
		if (strcmp(a[i++], b[j++]))
			return false;
	}
}

static size_t count(char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	return n;
}

bool held_take(struct layers_held *h, struct layers *L, int argc, char *const *argv,
	       char *const *envp, const char *mode, size_t *n, char *why, size_t whylen)
{
	*n = 0;
	if (!h->L.pol) {
		snprintf(why, whylen, "none kept");
		return false;
	}
	if (!same_options(argv + 1, held_nopts(argc, argv), h->argv + 1, h->nopts)) {
		snprintf(why, whylen, "kept for other options");
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
	const char *changed = NULL;
	if (!cage_inputs_unchanged(h->L.pol, &changed, n)) {
		snprintf(why, whylen, "%s changed since it was compiled", changed);
		return false;
	}
	if (h->L.cache[0]) {
		/* The folder the compile was given, as give_cache finds it now:
		 * made again if it went, and refused if it is no longer one of
		 * the user's own. */
		char now[sizeof h->L.cache], err[PATH_MAX + 200];
		if (!cachedir_resolve(h->L.cache_key, true, now, sizeof now, err, sizeof err) ||
		    strcmp(now, h->L.cache)) {
			snprintf(why, whylen, "its private cache folder changed");
			return false;
		}
	}
	/* The mode of this request (one layers_set_mode refuses is left to
	 * the fresh compile, which says so). */
	bool known = !mode;
	for (int m = IR_MODE_OFF; m <= IR_MODE_ENFORCE && !known; m++)
		known = !strcmp(mode, ir_mode_name((enum ir_mode)m));
	if (!known || layers_set_mode(&h->L, mode) != 0) {
		snprintf(why, whylen, "--mode %s", mode);
		return false;
	}
	*L = h->L;
	memset(&h->L, 0, sizeof h->L);
	return true;
}
