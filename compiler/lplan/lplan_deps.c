/*
 * lplan_deps.c - every look at the filesystem a plan build makes, and
 * the record of them that a reused plan is validated against
 * (compiler/format/pf.h, docs/plan-format.md).
 *
 * The planner (and the plan check after it) look at the disk only
 * through these calls, which observe the path as pf_observe does and
 * remember the observation once per (call, path). A stat, lstat or
 * readlink asked again in the same build is answered from the record:
 * the plan is then one function of its record, which is what a later
 * launch re-checks, and the build makes one system call per path where
 * it made five (1,579 calls for 296 paths, a kept-plan miss of the
 * claude-code example). A directory is listed afresh each time: read
 * twice with different entries (it changed under the planner), it makes
 * the record unstable, and such a plan is enforced once but never kept,
 * since no single state of the disk explains it. A directory is read
 * whole (pf_list_read) and its record carries what the planner saw, so
 * that a launch can tell the same entries under new times from new
 * entries.
 */
#include "lplan_int.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

struct lplan_deps {
	struct arena *a;
	struct pf_dep *v;
	struct stat *st; /* v[i]'s stat, when it succeeded: the answer to repeat */
	size_t n, cap;
	size_t *slots; /* index + 1, 0 empty; nslots a power of 2 */
	size_t nslots;
	bool unstable;
};

struct lplan_deps *lplan_deps_new(struct arena *a)
{
	struct lplan_deps *d = arena_alloc(a, sizeof *d);
	d->a = a;
	d->nslots = 512;
	d->slots = arena_alloc(a, d->nslots * sizeof *d->slots);
	return d;
}

static size_t dep_hash(unsigned kind, const char *s)
{
	size_t h = 14695981039346656037u ^ kind; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static size_t *dep_slot(const struct lplan_deps *d, unsigned kind, const char *path)
{
	size_t i = dep_hash(kind, path) & (d->nslots - 1);
	while (d->slots[i]) {
		const struct pf_dep *e = &d->v[d->slots[i] - 1];
		if (e->kind == kind && !strcmp(e->path, path))
			break;
		i = (i + 1) & (d->nslots - 1);
	}
	return &d->slots[i];
}

static void dep_grow(struct lplan_deps *d)
{
	size_t *old = d->slots, oldn = d->nslots;
	d->nslots *= 2;
	d->slots = arena_alloc(d->a, d->nslots * sizeof *d->slots);
	for (size_t i = 0; i < oldn; i++)
		if (old[i]) {
			const struct pf_dep *e = &d->v[old[i] - 1];
			*dep_slot(d, e->kind, e->path) = old[i];
		}
}

/* Observes and remembers; the stat (when it succeeded) into *st. 0, or
 * -1 with errno as the call made. */
static int observe(struct lplan_rcache *c, enum pf_dep_kind kind, const char *path,
		   struct pf_dep *out, struct stat *st)
{
	struct lplan_deps *d = lplan_rcache_deps(c);
	struct arena *a = d->a;
	size_t *slot = dep_slot(d, (unsigned)kind, path);
	assert(st);
	if (*slot && kind != PF_DEP_LIST) {
		/* Asked before in this build: the recorded answer (above). */
		*out = d->v[*slot - 1];
		if (!out->err)
			*st = d->st[*slot - 1];
	} else if (*slot) {
		pf_observe(a, kind, path, out, st);
		/* A listing read whole is compared by its entries (lplan_list). */
		const struct pf_dep *rec = &d->v[*slot - 1];
		bool same = rec->listed ? rec->err == out->err && rec->dev == out->dev &&
						  rec->ino == out->ino && rec->mode == out->mode
					: pf_dep_same(rec, out);
		if (!same)
			d->unstable = true;
	} else {
		pf_observe(a, kind, path, out, st);
		if (d->n == d->cap) {
			size_t cap = d->cap ? d->cap * 2 : 256;
			d->v = arena_grow(a, d->v, d->n, cap, sizeof *d->v);
			d->st = arena_grow(a, d->st, d->n, cap, sizeof *d->st);
			d->cap = cap;
		}
		d->v[d->n] = *out;
		if (!out->err)
			d->st[d->n] = *st;
		d->v[d->n].path = arena_strdup(a, path);
		*slot = ++d->n;
		if (d->n * 2 > d->nslots)
			dep_grow(d);
	}
	if (out->err) {
		errno = out->err;
		return -1;
	}
	return 0;
}

int lplan_lstat(struct lplan_rcache *c, const char *path, struct stat *st)
{
	struct pf_dep o;
	return observe(c, PF_DEP_LSTAT, path, &o, st);
}

int lplan_stat(struct lplan_rcache *c, const char *path, struct stat *st)
{
	struct pf_dep o;
	return observe(c, PF_DEP_STAT, path, &o, st);
}

ssize_t lplan_readlink(struct lplan_rcache *c, const char *path, char *buf, size_t size)
{
	struct pf_dep o;
	struct stat st;
	if (observe(c, PF_DEP_LINK, path, &o, &st) != 0)
		return -1;
	size_t n = strlen(o.target);
	if (n == 0 || n >= size) {
		errno = n ? ENAMETOOLONG : EINVAL;
		return -1;
	}
	memcpy(buf, o.target, n);
	return (ssize_t)n;
}

const struct pf_listing *lplan_list(struct lplan_rcache *c, const char *path)
{
	/* Observed first, so that the times recorded are from before the
	 * entries were read: whatever changes after moves them. */
	struct lplan_deps *d = lplan_rcache_deps(c);
	struct pf_dep o;
	struct stat st;
	if (observe(c, PF_DEP_LIST, path, &o, &st) != 0)
		return NULL;
	struct pf_listing *l = arena_alloc(d->a, sizeof *l);
	int whole = pf_list_read(d->a, path, l);
	if (whole < 0)
		return NULL;
	/* Times a later change could leave as they are (it falls within the
	 * same tick of the filesystem's clock: the directory changed just
	 * now, or during the read) say nothing about the entries. */
	bool racy = pf_listing_racy(path, &st);
	struct pf_dep *rec = &d->v[*dep_slot(d, PF_DEP_LIST, path) - 1];
	if (whole == 1 && l->n <= PF_LIST_KEEP) {
		if (rec->listed && !pf_list_same(l, rec))
			d->unstable = true; /* read twice, different entries */
		rec->listed = true;
		rec->nentries = l->n;
		rec->entry_names = l->names;
		rec->entry_types = l->types;
		if (racy)
			rec->mtime_s = rec->mtime_ns = rec->ctime_s = rec->ctime_ns = 0;
	} else if (racy || rec->listed) {
		/* Too large to keep its entries: only its times can tell, and
		 * they cannot (or it was kept by its entries before). The plan
		 * is enforced once, not kept. */
		d->unstable = true;
	}
	return l;
}

const struct pf_dep *lplan_deps(const struct lplan *plan, size_t *n, bool *unstable)
{
	const struct lplan_deps *d = plan->rcache ? lplan_rcache_deps(plan->rcache) : NULL;
	*n = d ? d->n : 0;
	*unstable = d ? d->unstable : false;
	return d ? d->v : NULL;
}
