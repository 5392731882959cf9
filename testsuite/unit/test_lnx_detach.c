/*
 * test_lnx_detach.c - the cleanup after the status is out
 * (runtime/linux/lnx_detach.c): the cleaner waits for init to be gone
 * before it cleans up, releases the caller's standard output at once,
 * keeps standard error, and leaves the caller's process group. "init"
 * here is a child that waits on a pipe until the test lets it exit.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fx_tree.h"
#include "lnx_detach.h"

static struct fx_tree fx;

static void setup(void)
{
	fx_make(&fx, "detach");
}

static void teardown(void)
{
	fx_remove(&fx);
}

TestSuite(lnx_detach, .init = setup, .fini = teardown);

/* A child that exits once `release` is closed or written to. */
static pid_t start_init(int *release)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(p[1]);
		char c;
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	*release = p[1];
	return pid;
}

struct marker {
	char path[4096];
	pid_t pgid; /* what the cleaner's process group was */
};

static void make_marker(void *ctx)
{
	struct marker *m = ctx;
	int fd = open(m->path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd >= 0) {
		char buf[32];
		int n = snprintf(buf, sizeof buf, "%d", (int)getpgrp());
		if (write(fd, buf, (size_t)n) != n) {
			/* the test sees a short marker */
		}
		close(fd);
	}
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* Up to about 5 s for `path` to appear. */
static bool appears(const char *path)
{
	for (int i = 0; i < 500; i++) {
		if (exists(path))
			return true;
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	return false;
}

Test(lnx_detach, cleans_up_only_after_init_is_gone)
{
	int release;
	pid_t init = start_init(&release);
	struct marker m;
	snprintf(m.path, sizeof m.path, "%s/cleaned", fx.root);
	/* Without the cleaner, the cleanup runs at once (the fixture works). */
	make_marker(&m);
	cr_assert(exists(m.path));
	cr_assert_eq(unlink(m.path), 0);

	cr_assert(lnx_detach_cleanup(init, make_marker, &m));
	/* init is alive: nothing may have been cleaned, however long we look. */
	nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	cr_assert(!exists(m.path), "the cleaner did not wait for init");
	close(release);
	int st;
	cr_assert_eq(waitpid(init, &st, 0), init);
	cr_assert(appears(m.path), "the cleaner did not clean up after init left");
	/* In a session of its own, not in the caller's process group. */
	char buf[32] = "";
	int fd = open(m.path, O_RDONLY);
	cr_assert(fd >= 0);
	cr_assert(read(fd, buf, sizeof buf - 1) > 0);
	close(fd);
	cr_assert_neq(atoi(buf), (int)getpgrp());
}

Test(lnx_detach, releases_standard_output_at_once)
{
	int release;
	pid_t init = start_init(&release);
	int out[2], err[2];
	cr_assert_eq(pipe(out), 0);
	cr_assert_eq(pipe(err), 0);
	int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
	cr_assert(saved_out >= 0 && saved_err >= 0);
	cr_assert_eq(dup2(out[1], STDOUT_FILENO), STDOUT_FILENO);
	cr_assert_eq(dup2(err[1], STDERR_FILENO), STDERR_FILENO);
	close(out[1]);
	close(err[1]);
	struct marker m;
	snprintf(m.path, sizeof m.path, "%s/cleaned", fx.root);
	bool made = lnx_detach_cleanup(init, make_marker, &m);
	/* The caller lets go of both pipes, as cagerun does when it exits. */
	dup2(saved_out, STDOUT_FILENO);
	dup2(saved_err, STDERR_FILENO);
	close(saved_out);
	close(saved_err);
	cr_assert(made);
	/* The cleaner is still waiting for init: standard output must be at
	 * its end already, standard error must not be. */
	struct pollfd p[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
	cr_assert_eq(poll(&p[0], 1, 5000), 1, "the cleaner holds standard output");
	char c;
	cr_assert_eq(read(out[0], &c, 1), 0);
	cr_assert_eq(poll(&p[1], 1, 50), 0, "the cleaner dropped standard error");
	close(release);
	int st;
	cr_assert_eq(waitpid(init, &st, 0), init);
	cr_assert(appears(m.path));
	/* Once the cleaner has exited, standard error ends too. */
	cr_assert_eq(poll(&p[1], 1, 5000), 1);
	cr_assert_eq(read(err[0], &c, 1), 0);
	close(out[0]);
	close(err[0]);
}

Test(lnx_detach, without_init_cleans_up_at_once)
{
	struct marker m;
	snprintf(m.path, sizeof m.path, "%s/cleaned", fx.root);
	cr_assert(lnx_detach_cleanup(-1, make_marker, &m));
	cr_assert(appears(m.path));
}
