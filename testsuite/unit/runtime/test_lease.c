/*
 * test_lease.c - the run's private directory (runtime/lease.c): a removed
 * lease is kept as the user's spare and the next lease takes it, and a
 * spare that is not an empty directory of the user's is never what a run
 * starts with; a lease whose run is gone (nobody holds its lock) is
 * swept, and nothing else is. Each case runs in a scratch TMPDIR.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fx_tree.h"
#include "lease.h"

static struct fx_tree fx;
static const char *root = fx.root;
static char spare[PATH_MAX];
static char mark[PATH_MAX]; /* made by the first lease that finds no spare */

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
	snprintf(name, sizeof name, "cage-swept.%lu", (unsigned long)geteuid());
	join(mark, root, name);
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
	cr_assert_eq(count(root, LEASE_PREFIX, &runs), 2, "the spare and the sweep's mark");
	cr_assert_eq(runs, 0, "no lease left under its run's name");
	cr_assert_eq(access(mark, F_OK), 0);
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
	count(root, LEASE_PREFIX, &runs);
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
	cr_assert_eq(count(root, LEASE_PREFIX, &runs), 2, "one spare and the mark, nothing else");
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

/* A lease made by a child that ends without removing it (as a run
 * killed does), with a file in it; its name into out. */
static void abandoned(char *out)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t c = fork();
	cr_assert_geq(c, 0);
	if (c == 0) {
		struct lease l;
		char err[256];
		if (!lease_create_flat(&l, err, sizeof err))
			_exit(1);
		touch(l.dir, "left");
		(void)!write(p[1], l.dir, strlen(l.dir) + 1);
		_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], out, PATH_MAX - 1);
	close(p[0]);
	int st;
	cr_assert_eq(waitpid(c, &st, 0), c);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_assert_gt(n, 0);
	out[n] = '\0';
	cr_assert_eq(access(out, F_OK), 0, "control: the lease is left behind");
}

Test(lease, abandoned_lease_is_swept)
{
	char a[PATH_MAX], b[PATH_MAX];
	abandoned(a);
	abandoned(b);
	cr_assert_str_neq(a, b);
	cr_assert_eq(lease_sweep(root, 0, 32), 2);
	cr_assert_neq(access(a, F_OK), 0);
	cr_assert_neq(access(b, F_OK), 0);
	cr_assert_eq(lease_sweep(root, 0, 32), 0, "nothing left to sweep");
}

Test(lease, sweep_stops_at_its_bound)
{
	char a[PATH_MAX], b[PATH_MAX];
	abandoned(a);
	abandoned(b);
	cr_assert_eq(lease_sweep(root, 0, 1), 1);
	cr_assert_eq(lease_sweep(root, 0, 1), 1);
	cr_assert_eq(lease_sweep(root, 0, 1), 0);
}

Test(lease, held_lease_is_kept)
{
	char gone[PATH_MAX];
	abandoned(gone);
	struct lease l;
	make_flat(&l);
	touch(l.dir, "mine");
	cr_assert_eq(lease_sweep(root, 0, 32), 1, "control: the abandoned one goes");
	char mine[PATH_MAX];
	join(mine, l.dir, "mine");
	cr_assert_eq(access(mine, F_OK), 0, "the held lease and its file stay");
	cr_assert(lease_remove(&l));
}

Test(lease, young_lease_is_kept)
{
	char a[PATH_MAX];
	abandoned(a);
	cr_assert_eq(lease_sweep(root, 3600, 32), 0);
	cr_assert_eq(access(a, F_OK), 0);
	cr_assert_eq(lease_sweep(root, 0, 32), 1, "control: swept once old enough");
}

Test(lease, only_leases_are_swept)
{
	char a[PATH_MAX];
	abandoned(a);
	/* An older version's lease, a name of another length, a link to a
	 * directory with a file in it, a file: none of them is a lease. */
	char p[PATH_MAX], target[PATH_MAX], inside[PATH_MAX];
	join(p, root, "cage-run.abcdef");
	cr_assert_eq(mkdir(p, 0700), 0);
	join(p, root, LEASE_PREFIX "abcdefg");
	cr_assert_eq(mkdir(p, 0700), 0);
	join(target, root, "target");
	cr_assert_eq(mkdir(target, 0700), 0);
	touch(target, "kept");
	join(inside, target, "kept");
	join(p, root, LEASE_PREFIX "linkxx");
	cr_assert_eq(symlink(target, p), 0);
	touch(root, LEASE_PREFIX "filexx");
	cr_assert_eq(lease_sweep(root, 0, 32), 1, "only the abandoned lease");
	cr_assert_neq(access(a, F_OK), 0);
	int leases;
	cr_assert_eq(count(root, "", &leases), 6, "the five and the sweep's mark");
	cr_assert_eq(access(inside, F_OK), 0, "nothing removed through the link");
}

Test(lease, new_directory_sweeps_once_a_minute)
{
	cr_assert_neq(access(mark, F_OK), 0);
	struct lease l;
	make_flat(&l); /* no spare here: a new directory, and the sweep's mark */
	struct stat m;
	cr_assert_eq(stat(mark, &m), 0, "the mark is made");
	/* Swept half a minute ago: the next new directory does not sweep. */
	time_t half = time(NULL) - 30;
	struct timeval tv[2] = { { half, 0 }, { half, 0 } };
	cr_assert_eq(utimes(mark, tv), 0);
	struct lease k;
	make_flat(&k); /* no spare either */
	cr_assert_eq(stat(mark, &m), 0);
	cr_assert_eq(m.st_mtime, half, "not swept again within the minute");
	/* Swept two minutes ago: it does, and says so on the mark. */
	time_t old = time(NULL) - 120;
	struct timeval tv2[2] = { { old, 0 }, { old, 0 } };
	cr_assert_eq(utimes(mark, tv2), 0);
	struct lease j;
	make_flat(&j);
	cr_assert_eq(stat(mark, &m), 0);
	cr_assert_gt(m.st_mtime, old + 60, "control: swept again after the minute");
	cr_assert(lease_remove(&j));
	cr_assert(lease_remove(&k));
	cr_assert(lease_remove(&l));
}

/* A spare another process still holds locked (a child of the run that
 * shares its lock and outlives the removal): the next run neither fails
 * nor removes it, and starts in a directory of its own. */
Test(lease, locked_spare_is_left_to_its_holder)
{
	struct lease l;
	make_flat(&l);
	int go[2];
	cr_assert_eq(pipe(go), 0);
	pid_t c = fork();
	cr_assert_geq(c, 0);
	if (c == 0) { /* holds the lock's copy until the pipe closes */
		char b;
		close(go[1]);
		(void)!read(go[0], &b, 1);
		_exit(0);
	}
	close(go[0]);
	struct stat held;
	cr_assert_eq(stat(l.dir, &held), 0);
	cr_assert(lease_remove(&l));
	cr_assert_eq(access(spare, F_OK), 0, "control: the spare is there, still locked");

	struct lease n;
	make_flat(&n);
	struct stat st;
	cr_assert_eq(stat(n.dir, &st), 0);
	cr_assert_neq(st.st_ino, held.st_ino, "not the directory another process holds");
	int runs;
	cr_assert_eq(count(root, LEASE_PREFIX, &runs), 3, "the new lease, the one left and the mark");
	cr_assert_eq(runs, 2);
	cr_assert(lease_remove(&n));
	close(go[1]);
	int ws;
	cr_assert_eq(waitpid(c, &ws, 0), c);
}

/* Two runs making and removing leases side by side, as back-to-back
 * launches through the launcher do (a run gives its lease back while the
 * next one starts): none may fail to take or lock its directory. Bounded
 * in rounds; a failure is reported by the round it happened in. */
Test(lease, side_by_side_runs_never_fail)
{
	enum { ROUNDS = 30000, KIDS = 2 };
	pid_t kids[KIDS];
	for (int k = 0; k < KIDS; k++) {
		kids[k] = fork();
		cr_assert_geq(kids[k], 0);
		if (kids[k] == 0) {
			for (int i = 0; i < ROUNDS; i++) {
				struct lease l;
				char err[256];
				if (!lease_create_flat(&l, err, sizeof err)) {
					fprintf(stderr, "round %d: %s\n", i, err);
					_exit(1);
				}
				touch(l.dir, "f");
				if (!lease_remove(&l)) {
					fprintf(stderr, "round %d: not removed\n", i);
					_exit(2);
				}
			}
			_exit(0);
		}
	}
	for (int k = 0; k < KIDS; k++) {
		int st;
		cr_assert_eq(waitpid(kids[k], &st, 0), kids[k]);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "run %d failed (status %d)", k,
			  WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	int runs;
	count(root, LEASE_PREFIX, &runs);
	cr_assert_eq(runs, 0, "no lease left under a run's name");
}
