/*
 * pf_deps.c - a plan's dependencies on the filesystem: how one is
 * observed, and when two observations agree (see docs/plan-format.md,
 * "Dependencies").
 *
 * The planner's conclusions from a path are its existence, its type and
 * which inode it is (a rule is opened by path when the sandbox starts,
 * and a symlink is resolved through its text); what a listing found
 * changes with the directory's modification and change times, which
 * every entry created, removed or renamed in it moves (the change time
 * cannot be set back by a user). So an lstat or stat dependency compares
 * the error, device, mode and (but for a regular file, which the plan
 * names by path only: a file saved by rename is the same file to it)
 * the inode; a link adds its text; a listing adds both times. A listing
 * the planner read whole also carries its entries: when only
 * its times moved (a file saved through a temporary name, git's
 * index.lock), the entries are read again and compared, and the same
 * entries are the same listing. A change this does not see is one the
 * plan does not depend on; a change it sees, however harmless, costs a
 * fresh build.
 *
 * A launch re-observes every dependency, and most are paths that do not
 * exist (the secrets and agent files a policy names): on this project's
 * machines one stat costs about 1 us, and the claude-code plan has 350.
 * An answer that follows from one already checked is not asked again:
 * every path below one that is missing (ENOENT, or ENOTDIR) fails the same
 * way, and a name that is not among the entries of a listing that agrees
 * is missing. Both follow from what the check has just confirmed on disk,
 * the second on the same ground a listing's own agreement stands on (its
 * times, or its entries compared again).
 */
#include "pf.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>


void pf_observe(struct arena *a, enum pf_dep_kind kind, const char *path, struct pf_dep *d,
		struct stat *st)
{
	struct stat sb;
	memset(d, 0, sizeof *d);
	d->kind = (uint8_t)kind;
	d->path = path;
	d->target = "";
	int rc = kind == PF_DEP_LSTAT || kind == PF_DEP_LINK ? lstat(path, &sb) : stat(path, &sb);
	if (rc != 0) {
		d->err = errno ? errno : EIO;
		return;
	}
	if (st)
		*st = sb;
	d->dev = (uint64_t)sb.st_dev;
	d->ino = (uint64_t)sb.st_ino;
	d->mode = (uint32_t)sb.st_mode;
	if (kind == PF_DEP_LIST) {
		d->mtime_s = (int64_t)sb.PF_MTIM.tv_sec;
		d->mtime_ns = (int64_t)sb.PF_MTIM.tv_nsec;
		d->ctime_s = (int64_t)sb.PF_CTIM.tv_sec;
		d->ctime_ns = (int64_t)sb.PF_CTIM.tv_nsec;
	}
	if (kind == PF_DEP_LINK && S_ISLNK(sb.st_mode)) {
		char buf[PATH_MAX];
		ssize_t n = readlink(path, buf, sizeof buf - 1);
		if (n > 0)
			d->target = arena_strndup(a, buf, (size_t)n);
	}
}

bool pf_dep_same(const struct pf_dep *x, const struct pf_dep *y)
{
	return x->kind == y->kind && x->err == y->err && x->dev == y->dev &&
	       (x->ino == y->ino || S_ISREG(x->mode)) && x->mode == y->mode && x->mtime_s == y->mtime_s && x->mtime_ns == y->mtime_ns &&
	       x->ctime_s == y->ctime_s && x->ctime_ns == y->ctime_ns &&
	       !strcmp(x->target, y->target) && (x->path == y->path || !strcmp(x->path, y->path));
}

/* By name: the type byte in front is skipped. */
static int entry_cmp_name(const void *x, const void *y)
{
	const char *const *a = x, *const *b = y;
	return strcmp(*a + 1, *b + 1);
}

int pf_list_read(struct arena *a, const char *path, struct pf_listing *out)
{
	memset(out, 0, sizeof *out);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	/* Each name with its type in front, so that one sort orders both. */
	size_t cap = 64, n = 0;
	char **v = malloc(cap * sizeof *v);
	int rerr = v ? 0 : ENOMEM;
	bool whole = true;
	while (!rerr) {
		errno = 0;
		struct dirent *e = readdir(d);
		if (!e) {
			rerr = errno;
			break;
		}
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == PF_LIST_MAX) {
			whole = false;
			break;
		}
		if (n == cap) {
			char **nv = realloc(v, 2 * cap * sizeof *v);
			if (!nv) {
				rerr = ENOMEM;
				break;
			}
			v = nv;
			cap *= 2;
		}
		size_t len = strlen(e->d_name);
		char *t = arena_alloc(a, len + 2);
		t[0] = (char)e->d_type;
		memcpy(t + 1, e->d_name, len + 1);
		v[n++] = t;
	}
	closedir(d);
	if (rerr) {
		free(v);
		errno = rerr;
		return -1;
	}
	qsort(v, n, sizeof *v, entry_cmp_name);
	out->names = arena_alloc(a, (n ? n : 1) * sizeof *out->names);
	out->types = arena_alloc(a, n ? n : 1);
	for (size_t i = 0; i < n; i++) {
		out->types[i] = (unsigned char)v[i][0];
		out->names[i] = v[i] + 1;
	}
	out->n = n;
	free(v);
	return whole ? 1 : 0;
}

bool pf_list_same(const struct pf_listing *l, const struct pf_dep *d)
{
	if (!d->listed || l->n != d->nentries)
		return false;
	for (size_t i = 0; i < l->n; i++)
		if (l->types[i] != d->entry_types[i] || strcmp(l->names[i], d->entry_names[i]))
			return false;
	return true;
}

/* A listing whose times moved: the same listing when nothing else of its
 * stat did and it holds the entries recorded. */
static bool same_entries(struct arena *a, const struct pf_dep *rec, const struct pf_dep *now)
{
	if (rec->kind != PF_DEP_LIST || !rec->listed || rec->err || now->err ||
	    rec->dev != now->dev || rec->ino != now->ino || rec->mode != now->mode)
		return false;
	struct pf_listing l;
	return pf_list_read(a, rec->path, &l) == 1 && pf_list_same(&l, rec);
}

/* The dependencies a check has confirmed that say something of the paths
 * below them: missing ones, and listings with their entries. Open
 * addressing on the path; a slot holds a dependency's index + 1. */
struct pf_known {
	uint32_t *slots;
	size_t mask;
};

static bool known_useful(const struct pf_dep *d)
{
	return d->err == ENOENT || d->err == ENOTDIR ||
	       (d->kind == PF_DEP_LIST && !d->err && d->listed);
}

/* The slot of `path` (its first len bytes) in k: the one holding it, or
 * the empty one where it would go. At most half the slots fill
 * (pf_deps_check sizes them), so the probe ends. */
static size_t known_slot(const struct pf_known *k, const struct pf_dep *deps, const char *path,
			 size_t len)
{
	size_t i = XXH3_64bits(path, len) & k->mask;
	for (; k->slots[i]; i = (i + 1) & k->mask) {
		const char *p = deps[k->slots[i] - 1].path;
		if (!strncmp(p, path, len) && p[len] == '\0')
			break;
	}
	return i;
}

static const struct pf_dep *known_find(const struct pf_known *k, const struct pf_dep *deps,
				       const char *path, size_t len)
{
	uint32_t v = k->slots[known_slot(k, deps, path, len)];
	return v ? &deps[v - 1] : NULL;
}

static void known_add(struct pf_known *k, const struct pf_dep *deps, size_t i)
{
	if (!known_useful(&deps[i]))
		return;
	size_t j = known_slot(k, deps, deps[i].path, strlen(deps[i].path));
	if (!k->slots[j])
		k->slots[j] = (uint32_t)i + 1;
}

/* Whether the listing `l` holds the name name[0..len). */
static bool listing_has(const struct pf_dep *l, const char *name, size_t len)
{
	size_t lo = 0, hi = l->nentries;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *e = l->entry_names[mid];
		int c = strncmp(e, name, len);
		if (c == 0 && e[len] != '\0')
			c = 1;
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Whether d's answer follows from a dependency the check already
 * confirmed (the nearest ancestor it knows of): into *now when it does. */
static bool derive(const struct pf_known *k, const struct pf_dep *deps, const struct pf_dep *d,
		   struct pf_dep *now)
{
	const char *p = d->path;
	for (size_t slash = strlen(p); slash-- > 0;) {
		if (p[slash] != '/')
			continue;
		/* The ancestor p[0..slash), "/" for the root. */
		const struct pf_dep *a = known_find(k, deps, p, slash ? slash : 1);
		if (!a)
			continue;
		int err = a->err;
		if (!err) {
			/* A listing: the next component is missing when it is
			 * not among the entries. ".", ".." and "" are never. */
			const char *name = p + slash + 1;
			size_t len = strcspn(name, "/");
			if (len == 0 || (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.'))) ||
			    listing_has(a, name, len))
				return false;
			err = ENOENT;
		}
		memset(now, 0, sizeof *now);
		now->kind = d->kind;
		now->path = d->path;
		now->target = "";
		now->err = err;
		return true;
	}
	return false;
}

bool pf_deps_check(struct arena *a, const struct pf_dep *deps, size_t n, size_t *bad)
{
	assert(n < UINT32_MAX);
	struct pf_known k;
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	k.slots = arena_alloc(a, cap * sizeof *k.slots); /* zeroed: all empty */
	k.mask = cap - 1;
	for (size_t i = 0; i < n; i++) {
		struct pf_dep now;
		if (!derive(&k, deps, &deps[i], &now))
			pf_observe(a, (enum pf_dep_kind)deps[i].kind, deps[i].path, &now, NULL);
		if (!pf_dep_same(&deps[i], &now) && !same_entries(a, &deps[i], &now)) {
			*bad = i;
			return false;
		}
		/* It agreed: the record says what is on disk now. */
		known_add(&k, deps, i);
	}
	return true;
}

/* Timestamps come from a clock that advances once a tick (up to 10 ms),
 * or in whole seconds on filesystems that keep no more (a zero
 * nanosecond part). Kernels since 6.13 give a change after a stat a
 * finer time on ext4, xfs, btrfs and tmpfs; others do not. */
bool pf_changed_recently(const struct stat *st)
{
	struct timespec now;
	if (clock_gettime(CLOCK_REALTIME, &now) != 0)
		return true;
	int64_t ns = ((int64_t)now.tv_sec - (int64_t)st->PF_CTIM.tv_sec) * 1000000000 +
		     ((int64_t)now.tv_nsec - (int64_t)st->PF_CTIM.tv_nsec);
	int64_t window = st->PF_CTIM.tv_nsec == 0 ? 2100000000 : 50000000;
	return ns < window;
}

bool pf_listing_racy(const char *path, const struct stat *before)
{
	struct stat now;
	return pf_changed_recently(before) || stat(path, &now) != 0 ||
	       now.st_dev != before->st_dev || now.st_ino != before->st_ino ||
	       now.PF_MTIM.tv_sec != before->PF_MTIM.tv_sec ||
	       now.PF_MTIM.tv_nsec != before->PF_MTIM.tv_nsec ||
	       now.PF_CTIM.tv_sec != before->PF_CTIM.tv_sec ||
	       now.PF_CTIM.tv_nsec != before->PF_CTIM.tv_nsec;
}
