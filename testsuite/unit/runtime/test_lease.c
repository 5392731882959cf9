/*
 * test_lease.c - the run's private directory (runtime/lease.c): a removed
 * lease is kept as the user's spare and the next lease takes it, and a
 * spare that is not an empty directory of the user's is never what a run
 * starts with. Each case runs in a scratch TMPDIR.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fx_tree.h"
#include "lease.h"

static struct fx_tree fx;
static const char *root = fx.root;
static char spare[PATH_MAX];

/* a/b into out, asserted to fit. */
static void join(char *out, const char *a, const char *b)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", a, b);
	cr_assert(n > 0 && n < PATH_MAX);
}

static void setup(void)
{
	fx_make(&fx, "lease");
	char name[64];
	snprintf(name, sizeof name, "cage-spare.%lu", (unsigned long)geteuid());
	join(spare, root, name);
	cr_assert_eq(setenv("TMPDIR", root, 1), 0);
}

static void teardown(void)
{
	fx_remove(&fx);
	unsetenv("TMPDIR");
}

TestSuite(lease, .init = setup, .fini = teardown);

/* Entries of `dir` but . and .., and how many start with `prefix`. */
static int count(const char *dir, const char *prefix, int *with_prefix)
{
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "%s", dir);
	int n = 0;
	*with_prefix = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		if (!strncmp(e->d_name, prefix, strlen(prefix)))
			(*with_prefix)++;
	}
	closedir(d);
	return n;
}

static void touch(const char *dir, const char *name)
{
	char p[PATH_MAX];
	join(p, dir, name);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	fclose(f);
}

static void make_flat(struct lease *l)
{
	char err[256];
	cr_assert(lease_create_flat(l, err, sizeof err), "%s", err);
	struct stat st;
	cr_assert_eq(lstat(l->dir, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0700);
	cr_assert_eq(st.st_uid, geteuid());
	int runs;
	cr_assert_eq(count(l->dir, "", &runs), 0, "a new lease holds nothing");
}

Test(lease, removed_lease_is_the_next_runs)
{
	struct lease l;
	make_flat(&l);
	struct stat first;
	cr_assert_eq(stat(l.dir, &first), 0);
	char name[PATH_MAX];
	snprintf(name, sizeof name, "%s", l.dir);
	/* What a command leaves: files, a tree, an unreadable directory. */
	touch(l.dir, "a");
	char sub[PATH_MAX];
	join(sub, l.dir, "d");
	cr_assert_eq(mkdir(sub, 0700), 0);
	touch(sub, "b");
	cr_assert_eq(chmod(sub, 0), 0);
	cr_assert(lease_remove(&l));

	int runs;
	cr_assert_eq(count(root, "cage-run.", &runs), 1);
	cr_assert_eq(runs, 0, "no lease left under its run's name");
	struct stat sp;
	cr_assert_eq(lstat(spare, &sp), 0, "the emptied lease is the spare");
	cr_assert_eq(sp.st_ino, first.st_ino);
	cr_assert_eq(count(spare, "", &runs), 0, "the spare holds nothing");

	make_flat(&l);
	struct stat second;
	cr_assert_eq(stat(l.dir, &second), 0);
	cr_assert_eq(second.st_ino, first.st_ino, "the next lease took the spare");
	cr_assert_str_neq(l.dir, name, "under a new name");
	cr_assert_neq(access(spare, F_OK), 0);
	cr_assert(lease_remove(&l));
}

Test(lease, planted_content_is_removed)
{
	struct lease l;
	make_flat(&l);
	cr_assert(lease_remove(&l));
	touch(spare, "planted");
	char planted[PATH_MAX];
	join(planted, spare, "planted");
	cr_assert_eq(access(planted, F_OK), 0, "control: the spare holds the file");
	make_flat(&l); /* asserts the lease is empty */
	cr_assert(lease_remove(&l));
}

Test(lease, wrong_mode_is_made_private)
{
	struct lease l;
	make_flat(&l);
	cr_assert(lease_remove(&l));
	cr_assert_eq(chmod(spare, 0755), 0);
	struct stat st;
	cr_assert_eq(stat(spare, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0755, "control: the spare is open to others");
	make_flat(&l); /* asserts 0700 */
	cr_assert(lease_remove(&l));
}

Test(lease, symlink_spare_is_not_followed)
{
	char target[PATH_MAX];
	join(target, root, "elsewhere");
	cr_assert_eq(mkdir(target, 0700), 0);
	touch(target, "keep");
	cr_assert_eq(symlink(target, spare), 0);
	struct lease l;
	make_flat(&l); /* asserts a directory (lstat), empty */
	struct stat st;
	cr_assert_eq(lstat(spare, &st), 0, "the link is put back");
	cr_assert(S_ISLNK(st.st_mode));
	char keep[PATH_MAX];
	join(keep, target, "keep");
	cr_assert_eq(access(keep, F_OK), 0, "what it points at is untouched");
	/* The lease goes to its own name and the link stays. */
	cr_assert(lease_remove(&l));
	int runs;
	count(root, "cage-run.", &runs);
	cr_assert_eq(runs, 0);
	cr_assert_eq(access(keep, F_OK), 0);
}

Test(lease, file_spare_is_put_back)
{
	touch(root, strrchr(spare, '/') + 1);
	struct lease l;
	make_flat(&l);
	struct stat st;
	cr_assert_eq(lstat(spare, &st), 0);
	cr_assert(S_ISREG(st.st_mode), "the file is back under its name");
	cr_assert(lease_remove(&l));
}

Test(lease, two_runs_leave_one_spare)
{
	struct lease a, b;
	make_flat(&a);
	make_flat(&b);
	cr_assert_str_neq(a.dir, b.dir);
	cr_assert(lease_remove(&a));
	cr_assert(lease_remove(&b));
	int runs;
	cr_assert_eq(count(root, "cage-run.", &runs), 1, "one spare, nothing else");
	cr_assert_eq(runs, 0);
	cr_assert_eq(access(spare, F_OK), 0);
}

Test(lease, with_home_takes_the_spare_too)
{
	struct lease l;
	make_flat(&l);
	cr_assert(lease_remove(&l));
	char err[256];
	cr_assert(lease_create(&l, true, err, sizeof err), "%s", err);
	cr_assert_neq(access(spare, F_OK), 0, "the spare was taken");
	touch(l.home, ".bashrc");
	touch(l.tmp, "t");
	cr_assert(lease_remove(&l));
	int runs;
	cr_assert_eq(count(spare, "", &runs), 0, "kept empty");
}
