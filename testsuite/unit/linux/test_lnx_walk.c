/*
 * test_lnx_walk.c - the create guard's path walker (runtime/linux/guard/
 * lnx_walk.c) against a fixture tree: it must land on the directory and
 * last name the kernel would, through ".", "..", symlinks (relative,
 * absolute, chained, looping), /proc/self and /proc/thread-self taken as
 * the traced process (here the test itself), and never into the
 * supervisor's own /proc entry.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lnx_notify.h"

static char root[256];
static int root_fd = -1;

static void at(char *buf, size_t n, const char *rel)
{
	snprintf(buf, n, "%s/%s", root, rel);
}

static void setup(void)
{
	char tmpl[] = "/tmp/cage-walk.XXXXXX";
	cr_assert(mkdtemp(tmpl));
	cr_assert(realpath(tmpl, root));
	char p[512], q[512];
	const char *dirs[] = { "a", "a/b", "a/b/c", "d" };
	for (size_t i = 0; i < 4; i++) {
		at(p, sizeof p, dirs[i]);
		cr_assert(mkdir(p, 0755) == 0);
	}
	at(p, sizeof p, "f");
	int fd = open(p, O_WRONLY | O_CREAT, 0644);
	cr_assert(fd >= 0);
	close(fd);
	at(p, sizeof p, "rel");
	cr_assert(symlink("a/b", p) == 0); /* relative */
	at(p, sizeof p, "abs");
	at(q, sizeof q, "d");
	cr_assert(symlink(q, p) == 0); /* absolute */
	at(p, sizeof p, "chain");
	cr_assert(symlink("rel/c", p) == 0);
	at(p, sizeof p, "loop1");
	cr_assert(symlink("loop2", p) == 0);
	at(p, sizeof p, "loop2");
	cr_assert(symlink("loop1", p) == 0);
	at(p, sizeof p, "dangling");
	cr_assert(symlink("nowhere", p) == 0);
	root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert(root_fd >= 0);
}

static void teardown(void)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	cr_assert(system(cmd) == 0);
	close(root_fd);
}

TestSuite(lnx_walk, .init = setup, .fini = teardown);

static struct lnx_walk me(void)
{
	struct lnx_walk w = { root_fd, getpid(), gettid(), 0, 0 };
	return w;
}

/* Walks `path` (relative ones from the fixture's root) and checks the
 * directory (relative to the fixture, "" for the fixture itself, or
 * absolute when it starts with '/') and the last name. */
static void expect(const char *path, const char *dir, const char *name, bool slash)
{
	struct lnx_walk w = me();
	struct lnx_walked out;
	int start = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert(start >= 0);
	int rc = lnx_walk_parent(&w, start, path, &out);
	close(start);
	cr_assert_eq(rc, 0, "%s: %s", path, strerror(-rc));
	char want[PATH_MAX];
	if (dir[0] == '/')
		snprintf(want, sizeof want, "%s", dir);
	else if (*dir)
		snprintf(want, sizeof want, "%s/%s", root, dir);
	else
		snprintf(want, sizeof want, "%s", root);
	cr_expect_str_eq(out.dir, want, "%s", path);
	cr_expect_str_eq(out.name, name, "%s", path);
	cr_expect_eq(out.slash, slash, "%s", path);
	close(out.dirfd);
}

static void expect_err(const char *path, int err)
{
	struct lnx_walk w = me();
	struct lnx_walked out;
	int start = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int rc = lnx_walk_parent(&w, start, path, &out);
	close(start);
	if (rc == 0)
		close(out.dirfd);
	cr_expect_eq(rc, -err, "%s: got %d, want %d", path, rc, -err);
}

Test(lnx_walk, plain_components)
{
	expect("x", "", "x", false);
	expect("a/b/x", "a/b", "x", false);
	expect("a//b///x", "a/b", "x", false);
	expect("./a/./b/x", "a/b", "x", false);
	expect("a/b/c/../x", "a/b", "x", false);
	expect("a/b/", "a", "b", true);
	expect("a/.", "a", ".", false);
	char abs[PATH_MAX];
	at(abs, sizeof abs, "a/b/x");
	expect(abs, "a/b", "x", false);
}

Test(lnx_walk, root_and_dotdot_above_root)
{
	expect("/", "/", ".", false);
	expect("/../../tmp", "/", "tmp", false);
}

Test(lnx_walk, symlinks_like_the_kernel)
{
	expect("rel/x", "a/b", "x", false);
	expect("abs/x", "d", "x", false);
	expect("chain/x", "a/b/c", "x", false);
	expect("rel/../x", "a", "x", false); /* ".." after a link: from its target */
	/* The last component is never followed here. */
	expect("rel", "", "rel", false);
	expect_err("loop1/x", ELOOP);
	expect_err("dangling/x", ENOENT);
	expect_err("f/x", ENOTDIR);
	expect_err("missing/x", ENOENT);
	expect_err("", ENOENT);
}

Test(lnx_walk, long_names)
{
	char name[NAME_MAX + 8];
	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	char path[sizeof name + 4];
	snprintf(path, sizeof path, "%s/x", name);
	expect_err(path, ENAMETOOLONG);
}

Test(lnx_walk, proc_self_is_the_tracee)
{
	char cwd[PATH_MAX];
	cr_assert(getcwd(cwd, sizeof cwd));
	char rp[PATH_MAX];
	cr_assert(realpath(cwd, rp));
	expect("/proc/self/cwd/x", rp, "x", false);
	expect("/proc/thread-self/cwd/x", rp, "x", false);
	char path[PATH_MAX];
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert(fd >= 0);
	snprintf(path, sizeof path, "/proc/self/fd/%d/a/x", fd);
	expect(path, "a", "x", false);
	close(fd);
}

Test(lnx_walk, never_into_the_supervisor)
{
	struct lnx_walk w = me();
	w.self = getppid(); /* stands for the supervisor */
	struct lnx_walked out;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cwd/x", (int)w.self);
	cr_expect_eq(lnx_walk_parent(&w, root_fd, path, &out), -EACCES);
	w.tgid = w.self; /* a /proc/self that would name it */
	cr_expect_eq(lnx_walk_parent(&w, root_fd, "/proc/self/root/tmp/x", &out), -EACCES);
}

static pthread_mutex_t hold = PTHREAD_MUTEX_INITIALIZER;

static void *idle_thread(void *arg)
{
	pid_t tid = gettid();
	if (write(*(int *)arg, &tid, sizeof tid) != (ssize_t)sizeof tid)
		return NULL;
	pthread_mutex_lock(&hold); /* until the test is done */
	pthread_mutex_unlock(&hold);
	return NULL;
}

Test(lnx_walk, never_into_a_thread_of_the_supervisor)
{
	/* The test process stands for the supervisor, one of its threads for
	 * the thread that waits on a FIFO: /proc/TID of it is reachable,
	 * unlisted, and must be refused like its main pid. */
	pthread_mutex_lock(&hold);
	int pp[2];
	cr_assert(pipe(pp) == 0);
	pthread_t t;
	cr_assert(pthread_create(&t, NULL, idle_thread, &pp[1]) == 0);
	pid_t tid = 0;
	cr_assert(read(pp[0], &tid, sizeof tid) == (ssize_t)sizeof tid && tid > 0);
	close(pp[0]);
	close(pp[1]);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cwd/x", (int)tid);
	struct lnx_walked out;
	/* Control: with someone else as the supervisor, the walk works. */
	struct lnx_walk w = { root_fd, getppid(), getppid(), 0, 0 };
	int ctl = lnx_walk_parent(&w, root_fd, path, &out);
	if (ctl == 0)
		close(out.dirfd);
	w = (struct lnx_walk){ root_fd, getppid(), getppid(), getpid(), 0 };
	int rc = lnx_walk_parent(&w, root_fd, path, &out);
	if (rc == 0)
		close(out.dirfd);
	pthread_mutex_unlock(&hold);
	pthread_join(t, NULL);
	cr_expect_eq(ctl, 0, "control: %s", strerror(-ctl));
	cr_expect_eq(rc, -EACCES);
}
