/*
 * lplan_realpath.c - physical path resolution for the Linux plan, with a
 * memo shared by one plan build.
 *
 * The plan resolves every rule's path through the real filesystem, the way
 * the kernel will reach it. realpath(3) re-reads every component of every
 * path, and for a missing path the plan then retried each shorter prefix:
 * the claude-code example cost 411 readlink calls for 77 distinct paths,
 * most of them under the same few directories. Here each prefix is looked
 * at once (one lstat, plus a readlink only when it is a symlink) and the
 * answer is remembered for the rest of the build.
 *
 * The result is what the plan had before: the longest prefix that resolves
 * is replaced by its physical path and the rest is kept as written; a
 * dangling symlink or a loop keeps the link's own path. /proc is never
 * resolved: the sandbox has its own procfs, whose magic links (/proc/self)
 * mean something else in there.
 */
#include "lplan_int.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Symlinks followed for one lookup before it counts as a loop (the
 * kernel's own limit). */
#define RP_MAX_LINKS 40

struct rp_ent {
	const char *key;  /* lexical path as asked */
	const char *real; /* physical path, or the key when it does not resolve */
	bool exists;
	unsigned mode; /* lstat's st_mode of the key; 0: not looked at */
};

struct lplan_rcache {
	struct arena *a;
	struct rp_ent *slots;
	size_t cap, n;
	struct lplan_deps *deps; /* what the build looked at (lplan_deps.c) */
};

struct lplan_rcache *lplan_rcache_new(struct arena *a)
{
	struct lplan_rcache *c = arena_alloc(a, sizeof *c);
	c->a = a;
	c->cap = 256;
	c->n = 0;
	c->slots = arena_alloc(a, c->cap * sizeof *c->slots);
	c->deps = lplan_deps_new(a);
	return c;
}

struct lplan_deps *lplan_rcache_deps(const struct lplan_rcache *c)
{
	return c->deps;
}

static size_t rp_hash(const char *s, size_t n)
{
	size_t h = 14695981039346656037u; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211u;
	return h;
}

static struct rp_ent *rp_slot(struct lplan_rcache *c, const char *key, size_t n)
{
	size_t i = rp_hash(key, n) & (c->cap - 1);
	while (c->slots[i].key &&
	       !(strlen(c->slots[i].key) == n && memcmp(c->slots[i].key, key, n) == 0))
		i = (i + 1) & (c->cap - 1);
	return &c->slots[i];
}

static void rp_put(struct lplan_rcache *c, const char *key, size_t n, const char *real,
		   bool exists, unsigned mode)
{
	if ((c->n + 1) * 2 > c->cap) {
		struct rp_ent *old = c->slots;
		size_t oldcap = c->cap;
		c->cap *= 2;
		c->slots = arena_alloc(c->a, c->cap * sizeof *c->slots);
			for (size_t i = 0; i < oldcap; i++)
			if (old[i].key)
				*rp_slot(c, old[i].key, strlen(old[i].key)) = old[i];
	}
	struct rp_ent *e = rp_slot(c, key, n);
	if (!e->key)
		c->n++;
	e->key = arena_strndup(c->a, key, n);
	e->real = real;
	e->exists = exists;
	e->mode = mode;
}

static bool rp_is_proc(const char *p)
{
	return strncmp(p, "/proc", 5) == 0 && (p[5] == '\0' || p[5] == '/');
}

char *lplan_join(struct arena *a, const char *dir, const char *name, size_t n)
{
	/* Copied rather than formatted: the build joins names by the
	 * thousand, and vsnprintf was a tenth of its instructions. */
	size_t dl = strcmp(dir, "/") ? strlen(dir) : 0;
	char *p = arena_alloc_raw(a, dl + n + 2);
	memcpy(p, dir, dl);
	p[dl] = '/';
	memcpy(p + dl + 1, name, n);
	p[dl + 1 + n] = '\0';
	return p;
}

static const struct rp_ent *rp_lookup(struct lplan_rcache *c, const char *path, size_t n,
				      unsigned *links);

/* Resolves `target` (a symlink's text) met in physical directory `dir`,
 * component by component, so that `..` applies after each symlink. */
static const struct rp_ent *rp_follow(struct lplan_rcache *c, const char *dir, const char *target,
				      unsigned *links, struct rp_ent *out)
{
	const char *cur = target[0] == '/' ? "/" : dir;
	const char *s = target;
	while (*s) {
		while (*s == '/')
			s++;
		size_t n = strcspn(s, "/");
		if (n == 0)
			break;
		if (n == 1 && s[0] == '.') {
		} else if (n == 2 && s[0] == '.' && s[1] == '.') {
			/* cur is physical, so its parent is its lexical parent. */
			cur = lplan_parent_dir(c->a, cur);
		} else if (rp_is_proc(cur)) {
			cur = lplan_join(c->a, cur, s, n);
		} else {
			const char *next = lplan_join(c->a, cur, s, n);
			const struct rp_ent *e = rp_lookup(c, next, strlen(next), links);
			if (!e || !e->exists)
				return NULL;
			cur = e->real;
		}
		s += n;
	}
	out->real = cur;
	out->exists = true;
	return out;
}

static const struct rp_ent *rp_lookup(struct lplan_rcache *c, const char *path, size_t n,
				      unsigned *links)
{
	if (n == 0 || (n == 1 && path[0] == '/')) {
		static const struct rp_ent root = { "/", "/", true, S_IFDIR };
		return &root;
	}
	struct rp_ent *hit = rp_slot(c, path, n);
	if (hit->key)
		return hit;
	size_t cut = n;
	while (cut > 0 && path[cut - 1] != '/')
		cut--;
	const char *name = path + cut;
	size_t namelen = n - cut;
	const struct rp_ent *par = rp_lookup(c, path, cut > 1 ? cut - 1 : 1, links);
	if (!par)
		return NULL;
	const char *cand = lplan_join(c->a, par->real, name, namelen);
	const char *real = cand;
	bool exists = false;
	unsigned mode = 0;
	struct stat st;
	if (par->exists && !rp_is_proc(par->real) && lplan_lstat(c, cand, &st) == 0) {
		exists = true;
		mode = st.st_mode;
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t tl = lplan_readlink(c, cand, target, sizeof target - 1);
			struct rp_ent via;
			if (tl <= 0 || ++*links > RP_MAX_LINKS) {
				exists = false; /* unreadable link or a loop: as written */
			} else {
				target[tl] = '\0';
				if (rp_follow(c, par->real, target, links, &via)) {
					real = via.real;
				} else {
					exists = false; /* dangling: the link's own path */
				}
			}
		}
	} else if (par->exists && rp_is_proc(par->real)) {
		exists = true; /* not looked at: the sandbox's /proc is not ours */
	}
	/* A loop's answer depends on how many links the caller had followed:
	 * remember only answers reached without following any. */
	if (*links == 0 || exists)
		rp_put(c, path, n, real, exists, mode);
	struct rp_ent *e = rp_slot(c, path, n);
	if (e->key)
		return e;
	/* Not remembered: hand back a one-off entry. */
	struct rp_ent *tmp = arena_alloc(c->a, sizeof *tmp);
	tmp->key = cand;
	tmp->real = real;
	tmp->exists = exists;
	tmp->mode = mode;
	return tmp;
}

bool lplan_rcache_known(struct lplan_rcache *c, const char *path, bool *exists, unsigned *mode)
{
	size_t n = strlen(path);
	struct rp_ent *e = rp_slot(c, path, n);
	/* Only a path that is its own physical path, looked at with lstat
	 * (or known missing below a directory that exists). */
	if (!e->key || strcmp(e->real, e->key) || rp_is_proc(path) || (e->exists && !e->mode))
		return false;
	*exists = e->exists;
	*mode = e->mode;
	return true;
}

const char *lplan_resolve_cached(struct lplan_rcache *c, const char *path)
{
	if (path[0] != '/' || rp_is_proc(path))
		return arena_strdup(c->a, path);
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	unsigned links = 0;
	const struct rp_ent *e = rp_lookup(c, path, n, &links);
	return e ? e->real : arena_strdup(c->a, path);
}

const char *lplan_resolve_path(struct arena *a, const char *path)
{
	return lplan_resolve_cached(lplan_rcache_new(a), path);
}
