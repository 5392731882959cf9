/*
 * test_lnx_tasks.c - the guard supervisor's kept thread answers
 * (runtime/linux/guard/lnx_tasks.c): an answer is found only for the
 * thread it was kept for while that thread lives; a umask call forgets
 * every answer and stops keeping until its caller is seen again or is
 * gone; a slot shared by two TIDs holds only the latest. The threads are
 * this test's own, so every case is decided without timing.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lnx_tasks.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD 0x80
#endif

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The kernel has PIDFD_THREAD (Linux 6.9); without it nothing is kept,
 * which the last case checks instead. */
static bool have_thread_pidfds(void)
{
	int fd = (int)syscall(SYS_pidfd_open, my_tid(), PIDFD_THREAD);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void keep_self(struct lnx_tasks *ts, mode_t um)
{
	int fd = lnx_tasks_pin(ts, my_tid());
	cr_assert(fd >= 0, "pin: %s", strerror(errno));
	lnx_tasks_keep(ts, my_tid(), fd, getpid(), um);
}

Test(lnx_tasks, kept_for_its_thread)
{
	if (!have_thread_pidfds())
		cr_skip_test("no PIDFD_THREAD");
	struct lnx_tasks *ts = lnx_tasks_new();
	pid_t tgid;
	mode_t um;
	cr_expect(!lnx_tasks_find(ts, my_tid(), &tgid, &um), "nothing kept yet");
	keep_self(ts, 027);
	cr_assert(lnx_tasks_find(ts, my_tid(), &tgid, &um));
	cr_expect_eq(tgid, getpid());
	cr_expect_eq(um, 027);
	cr_expect(!lnx_tasks_find(ts, my_tid() + 1, &tgid, &um), "another TID");
	lnx_tasks_free(ts);
}

struct held {
	pthread_mutex_t m;
	pthread_cond_t c;
	int stage; /* 1: tid set; 2: may end */
	pid_t tid;
	int pidfd; /* the thread's, to see it gone */
};

static void *hold(void *arg)
{
	struct held *h = arg;
	pthread_mutex_lock(&h->m);
	h->tid = my_tid();
	h->stage = 1;
	pthread_cond_broadcast(&h->c);
	while (h->stage < 2)
		pthread_cond_wait(&h->c, &h->m);
	pthread_mutex_unlock(&h->m);
	return NULL;
}

static void stage(struct held *h, int want)
{
	pthread_mutex_lock(&h->m);
	if (want == 2) {
		h->stage = 2;
		pthread_cond_broadcast(&h->c);
	}
	while (h->stage < want)
		pthread_cond_wait(&h->c, &h->m);
	pthread_mutex_unlock(&h->m);
}

/* A thread that waits to be let end, its TID known. */
static void held_start(struct held *h, pthread_t *t)
{
	*h = (struct held){ PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, -1 };
	cr_assert_eq(pthread_create(t, NULL, hold, h), 0);
	stage(h, 1);
	h->pidfd = (int)syscall(SYS_pidfd_open, h->tid, PIDFD_THREAD);
	cr_assert(h->pidfd >= 0);
}

/* Lets the thread end and waits until the kernel has it gone: a join
 * returns when the thread's TID word is cleared, a little before it has
 * exited. At most 5 s. */
static void held_end(struct held *h, pthread_t t)
{
	stage(h, 2);
	cr_assert_eq(pthread_join(t, NULL), 0);
	for (int i = 0; i < 5000 && syscall(SYS_pidfd_send_signal, h->pidfd, 0, NULL, 0) == 0; i++)
		usleep(1000);
	cr_assert_neq(syscall(SYS_pidfd_send_signal, h->pidfd, 0, NULL, 0), 0, "the thread ended");
	close(h->pidfd);
}

/* A thread that has run and is gone: its TID is free. */
static pid_t ended_thread(void)
{
	struct held h;
	pthread_t t;
	held_start(&h, &t);
	held_end(&h, t);
	return h.tid;
}

Test(lnx_tasks, not_for_a_thread_that_ended)
{
	if (!have_thread_pidfds())
		cr_skip_test("no PIDFD_THREAD");
	struct lnx_tasks *ts = lnx_tasks_new();
	struct held h;
	pthread_t t;
	held_start(&h, &t);
	int fd = lnx_tasks_pin(ts, h.tid);
	cr_assert(fd >= 0);
	lnx_tasks_keep(ts, h.tid, fd, getpid(), 022);
	pid_t tgid;
	mode_t um;
	cr_expect(lnx_tasks_find(ts, h.tid, &tgid, &um), "the thread lives");
	held_end(&h, t);
	/* Its TID may be handed out again; the answer must not be. */
	cr_expect(!lnx_tasks_find(ts, h.tid, &tgid, &um), "the thread is gone");
	lnx_tasks_free(ts);
}

Test(lnx_tasks, umask_call_forgets_until_its_caller_is_seen)
{
	if (!have_thread_pidfds())
		cr_skip_test("no PIDFD_THREAD");
	struct lnx_tasks *ts = lnx_tasks_new();
	struct held h;
	pthread_t t;
	held_start(&h, &t);
	keep_self(ts, 022);
	pid_t tgid;
	mode_t um;
	/* The other thread is in umask(2). */
	lnx_tasks_umask_call(ts, h.tid);
	cr_expect(!lnx_tasks_find(ts, my_tid(), &tgid, &um), "forgotten");
	cr_expect_eq(lnx_tasks_pin(ts, my_tid()), -1, "nothing kept while the call is open");
	lnx_tasks_seen(ts, my_tid()); /* another thread's call: still open */
	cr_expect_eq(lnx_tasks_pin(ts, my_tid()), -1, "still open");
	lnx_tasks_seen(ts, h.tid); /* the caller's next call: it is over */
	keep_self(ts, 077);
	cr_assert(lnx_tasks_find(ts, my_tid(), &tgid, &um));
	cr_expect_eq(um, 077);
	held_end(&h, t);
	lnx_tasks_free(ts);
}

Test(lnx_tasks, umask_call_of_a_thread_that_ends)
{
	if (!have_thread_pidfds())
		cr_skip_test("no PIDFD_THREAD");
	struct lnx_tasks *ts = lnx_tasks_new();
	struct held h;
	pthread_t t;
	held_start(&h, &t);
	lnx_tasks_umask_call(ts, h.tid);
	lnx_tasks_seen(ts, my_tid());
	cr_expect_eq(lnx_tasks_pin(ts, my_tid()), -1, "open while the caller lives");
	held_end(&h, t);
	lnx_tasks_seen(ts, my_tid()); /* any call: the caller is gone */
	int fd = lnx_tasks_pin(ts, my_tid());
	cr_expect(fd >= 0, "keeping again");
	if (fd >= 0)
		close(fd);
	/* A caller gone before its call was seen leaves nothing open. */
	lnx_tasks_umask_call(ts, ended_thread());
	fd = lnx_tasks_pin(ts, my_tid());
	cr_expect(fd >= 0, "a gone caller's call is never open");
	if (fd >= 0)
		close(fd);
	lnx_tasks_free(ts);
}

Test(lnx_tasks, one_slot_keeps_the_latest)
{
	if (!have_thread_pidfds())
		cr_skip_test("no PIDFD_THREAD");
	struct lnx_tasks *ts = lnx_tasks_new();
	keep_self(ts, 022);
	/* Another TID in the same slot (the table has 64): a pidfd of this
	 * thread stands in for it, alive. */
	pid_t other = my_tid() + 64;
	int fd = (int)syscall(SYS_pidfd_open, my_tid(), PIDFD_THREAD);
	cr_assert(fd >= 0);
	lnx_tasks_keep(ts, other, fd, 1, 077);
	pid_t tgid;
	mode_t um;
	cr_expect(!lnx_tasks_find(ts, my_tid(), &tgid, &um), "replaced");
	cr_assert(lnx_tasks_find(ts, other, &tgid, &um));
	cr_expect_eq(um, 077);
	lnx_tasks_free(ts);
}

Test(lnx_tasks, nothing_kept_without_thread_pidfds)
{
	if (have_thread_pidfds())
		cr_skip_test("this kernel has PIDFD_THREAD");
	struct lnx_tasks *ts = lnx_tasks_new();
	cr_expect_eq(lnx_tasks_pin(ts, my_tid()), -1);
	cr_expect_eq(lnx_tasks_pin(ts, my_tid()), -1, "and never again");
	lnx_tasks_free(ts);
}
