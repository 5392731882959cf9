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
 */
#include "pf.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


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

bool pf_deps_check(struct arena *a, const struct pf_dep *deps, size_t n, size_t *bad)
{
	for (size_t i = 0; i < n; i++) {
		struct pf_dep now;
		pf_observe(a, (enum pf_dep_kind)deps[i].kind, deps[i].path, &now, NULL);
		if (!pf_dep_same(&deps[i], &now) && !same_entries(a, &deps[i], &now)) {
			*bad = i;
			return false;
		}
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
