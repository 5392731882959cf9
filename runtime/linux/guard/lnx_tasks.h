/*
 * lnx_tasks.h - what the guard's supervisor keeps about each calling
 * thread between its calls (its thread-group id and umask), and when it
 * may not keep anything. lnx_notify.c is the only user.
 *
 * Reading /proc/TID/status costs about a third of a guarded create; both
 * answers change rarely, and the umask only through umask(2), which the
 * guard's filter makes notify (lnx_guard_rules). The rules, which
 * docs/security-model.md ("The create guard") argues from:
 *
 *   - A kept answer belongs to one thread, pinned by a pidfd of that
 *     thread (PIDFD_THREAD, Linux 6.9): it is used only while that thread
 *     is alive, so a reused TID never inherits it.
 *   - Every thread of a process shares one umask: the sandbox's seccomp
 *     filter refuses unshare and a thread made without CLONE_FS. Processes
 *     sharing one (CLONE_FS without CLONE_THREAD) are covered by the next
 *     rule, which forgets everything.
 *   - A umask call forgets every kept answer before it is let run, and
 *     nothing is kept or used until the caller has made another notified
 *     call (so its umask is over) or is gone. A status read while a umask
 *     call may be running is used for that one call only.
 *   - Where the kernel has no PIDFD_THREAD, or more umask calls are open
 *     at once than are tracked, nothing is kept again: every call reads
 *     the status, as before this cache.
 */
#ifndef CAGE_LNX_TASKS_H
#define CAGE_LNX_TASKS_H

#include <stdbool.h>
#include <sys/types.h>

struct lnx_tasks;

/* NULL on allocation failure. */
struct lnx_tasks *lnx_tasks_new(void);
void lnx_tasks_free(struct lnx_tasks *ts);

/* A notification from tid arrived: a umask call tid made is over. */
void lnx_tasks_seen(struct lnx_tasks *ts, pid_t tid);
/* The kept answers for tid, when they stand. */
bool lnx_tasks_find(struct lnx_tasks *ts, pid_t tid, pid_t *tgid, mode_t *umask);
/* A pidfd of thread tid to keep answers with, opened before they are
 * read, or -1 when nothing may be kept now. The caller confirms that the
 * notification is still live after reading (then the pidfd is the
 * caller's) and passes it to lnx_tasks_keep, or closes it. */
int lnx_tasks_pin(struct lnx_tasks *ts, pid_t tid);
/* A new pidfd of thread tid itself (PIDFD_THREAD), owned by the caller;
 * -1 with errno set (EINVAL: a kernel before 6.9, which has none). */
int lnx_tasks_thread_pidfd(pid_t tid);
/* The kept pidfd of thread tid, while that thread lives (still owned
 * here: valid until the next call into this table), or -1. */
int lnx_tasks_pidfd(struct lnx_tasks *ts, pid_t tid);
/* Keeps tgid and umask for tid with pidfd (owned from here on). */
void lnx_tasks_keep(struct lnx_tasks *ts, pid_t tid, int pidfd, pid_t tgid, mode_t umask);
/* Thread tid is in umask(2), not yet let run: forgets every kept answer
 * and keeps none until tid is seen again or gone. */
void lnx_tasks_umask_call(struct lnx_tasks *ts, pid_t tid);

#endif
