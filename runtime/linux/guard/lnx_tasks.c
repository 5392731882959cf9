/*
 * lnx_tasks.c - the guard supervisor's kept thread answers (see
 * lnx_tasks.h for what is kept and the rules that make keeping it safe).
 *
 * A small table indexed by TID, one slot each, and a short list of the
 * umask calls not yet over. Everything here runs on the supervisor's
 * dispatch thread, one notification at a time.
 */
#include "lnx_tasks.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD 0x80 /* O_EXCL; Linux 6.9 */
#endif

#define LNX_TASKS_SLOTS 64
#define LNX_TASKS_UMASK_CALLS 16

struct lnx_task {
	pid_t tid; /* 0: empty */
	int pidfd;
	pid_t tgid;
	mode_t umask;
};

struct lnx_tasks {
	struct lnx_task slot[LNX_TASKS_SLOTS];
	struct {
		pid_t tid;
		int pidfd;
	} open_umask[LNX_TASKS_UMASK_CALLS];
	size_t n_open_umask;
	bool off; /* nothing is kept again */
};

struct lnx_tasks *lnx_tasks_new(void)
{
	return calloc(1, sizeof(struct lnx_tasks));
}

static void forget_all(struct lnx_tasks *ts)
{
	for (size_t i = 0; i < LNX_TASKS_SLOTS; i++)
		if (ts->slot[i].tid) {
			close(ts->slot[i].pidfd);
			ts->slot[i].tid = 0;
		}
}

void lnx_tasks_free(struct lnx_tasks *ts)
{
	if (!ts)
		return;
	forget_all(ts);
	for (size_t i = 0; i < ts->n_open_umask; i++)
		close(ts->open_umask[i].pidfd);
	free(ts);
}

/* Whether the thread a pidfd denotes has not exited. Signal 0 checks
 * only that it exists (and that we may signal it: the same user, and a
 * Landlock domain below ours). */
static bool alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

int lnx_tasks_thread_pidfd(pid_t tid)
{
	return (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
}

void lnx_tasks_seen(struct lnx_tasks *ts, pid_t tid)
{
	assert(ts->n_open_umask <= LNX_TASKS_UMASK_CALLS);
	for (size_t i = 0; i < ts->n_open_umask;) {
		/* The caller, if alive, is the thread with its TID (two live
		 * threads never share one), and that thread is in a new call
		 * now: the umask call is over either way. */
		bool over = ts->open_umask[i].tid == tid || !alive(ts->open_umask[i].pidfd);
		if (!over) {
			i++;
			continue;
		}
		close(ts->open_umask[i].pidfd);
		ts->open_umask[i] = ts->open_umask[--ts->n_open_umask];
	}
}

static bool may_keep(const struct lnx_tasks *ts)
{
	return !ts->off && ts->n_open_umask == 0;
}

static struct lnx_task *slot_of(struct lnx_tasks *ts, pid_t tid)
{
	return &ts->slot[(unsigned)tid % LNX_TASKS_SLOTS];
}

bool lnx_tasks_find(struct lnx_tasks *ts, pid_t tid, pid_t *tgid, mode_t *umask)
{
	struct lnx_task *t = slot_of(ts, tid);
	if (!may_keep(ts) || tid <= 0 || t->tid != tid || !alive(t->pidfd))
		return false;
	*tgid = t->tgid;
	*umask = t->umask;
	return true;
}

int lnx_tasks_pidfd(struct lnx_tasks *ts, pid_t tid)
{
	/* A pidfd names its thread whatever umask calls are open. */
	struct lnx_task *t = slot_of(ts, tid);
	return tid > 0 && t->tid == tid && alive(t->pidfd) ? t->pidfd : -1;
}

int lnx_tasks_pin(struct lnx_tasks *ts, pid_t tid)
{
	if (!may_keep(ts) || tid <= 0)
		return -1;
	int fd = lnx_tasks_thread_pidfd(tid);
	if (fd < 0 && errno == EINVAL)
		ts->off = true; /* no PIDFD_THREAD: a kernel before 6.9 */
	return fd;
}

void lnx_tasks_keep(struct lnx_tasks *ts, pid_t tid, int pidfd, pid_t tgid, mode_t umask)
{
	assert(pidfd >= 0 && tid > 0);
	if (!may_keep(ts)) {
		close(pidfd);
		return;
	}
	struct lnx_task *t = slot_of(ts, tid);
	if (t->tid)
		close(t->pidfd);
	*t = (struct lnx_task){ tid, pidfd, tgid, umask };
}

void lnx_tasks_umask_call(struct lnx_tasks *ts, pid_t tid)
{
	forget_all(ts);
	if (ts->off)
		return;
	/* A caller gone already (ESRCH) never runs its call: nothing to wait
	 * for. A pidfd of the TID's next owner only makes the wait longer.
	 * Without a pidfd otherwise, or without room, the end of the call
	 * cannot be seen: keep nothing again. */
	int fd = ts->n_open_umask < LNX_TASKS_UMASK_CALLS ? lnx_tasks_thread_pidfd(tid) : -1;
	if (fd < 0 && errno == ESRCH && ts->n_open_umask < LNX_TASKS_UMASK_CALLS)
		return;
	if (fd < 0) {
		ts->off = true;
		for (size_t i = 0; i < ts->n_open_umask; i++)
			close(ts->open_umask[i].pidfd);
		ts->n_open_umask = 0;
		return;
	}
	ts->open_umask[ts->n_open_umask].tid = tid;
	ts->open_umask[ts->n_open_umask].pidfd = fd;
	ts->n_open_umask++;
}
