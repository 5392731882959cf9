/*
 * lnx_notify.h - seccomp user notification: the core that a supervisor
 * process of the Linux sandbox is built on. The create guard
 * (lnx_guard.c) uses it to emulate the calls that make a name; monitor
 * mode can use it to observe calls. One process tree can have only one
 * listener that matters, so one supervisor hosts every user: each system
 * call has at most one handler (which answers it), any number of
 * observers see every notification first, and a call with no handler is
 * answered "continue".
 *
 * The pieces, in the order a launcher uses them:
 *
 *   1. lnx_notify_filter() turns a list of calls (each optionally only
 *      when an argument has some flag bits set) into a small BPF program
 *      that returns SECCOMP_RET_USER_NOTIF for them and allows the rest;
 *      a call through another ABI is killed. It allocates nothing.
 *   2. The process to be supervised installs it with lnx_notify_install()
 *      (SECCOMP_FILTER_FLAG_NEW_LISTENER, and WAIT_KILLABLE_RECV where the
 *      kernel has it, so that a received call is only interrupted by a
 *      fatal signal) and hands the listener to the supervisor with
 *      lnx_notify_send_fd(); the supervisor takes it with
 *      lnx_notify_recv_fd(). Filters stack: where another filter refuses a
 *      call, that refusal wins over the notification.
 *   3. The supervisor makes an lnx_notify, registers handlers and
 *      observers, polls lnx_notify_fd() and calls lnx_notify_handle()
 *      whenever it is readable.
 *
 * A handler sees the request (struct lnx_notify_call) and answers it with
 * exactly one of lnx_notify_reply_errno / _value / _continue / _fd, or by
 * taking it over (lnx_notify_defer) and answering later, from any thread,
 * with lnx_notify_answer(). Answering "continue" lets the kernel run the
 * call with the tracee's arguments as they are *then*: never do it for a
 * call whose pointers you checked (another thread of the tracee can change
 * the memory in between).
 *
 * Reading the tracee: lnx_notify_read_string() copies a string once from
 * the tracee's memory and then checks that the request is still live
 * (the pid was not reused); lnx_notify_tracee_fd() duplicates one of its
 * descriptors (pidfd_getfd); lnx_notify_dir() gives a descriptor for the
 * directory a *at() call starts from; lnx_notify_status() reads its
 * thread-group id and umask. lnx_walk_parent() (lnx_walk.c) resolves a
 * path the way the kernel would for the tracee, up to its last component.
 *
 * Every function returns a negative errno (or false) on failure and
 * leaves no descriptor open then.
 */
#ifndef CAGE_LNX_NOTIFY_H
#define CAGE_LNX_NOTIFY_H

#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One call to notify. arg < 0: always; else only when
 * (args[arg] & mask) != 0, or, with LNX_NOTIFY_UNLESS or'ed into arg,
 * only when (args[arg] & mask) == 0 (the low 32 bits are compared). */
struct lnx_notify_rule {
	int nr;
	int arg;
	uint32_t mask;
};
#define LNX_NOTIFY_UNLESS 0x100

/* The largest filter lnx_notify_filter makes for n rules. */
#define LNX_NOTIFY_MAX_RULES 32
#define LNX_NOTIFY_MAX_INSNS (8 + 6 * LNX_NOTIFY_MAX_RULES)

/* Writes the program into insns (room for LNX_NOTIFY_MAX_INSNS). The
 * first rule naming a call decides it. Returns its length, or 0 when
 * there are too many rules or one names no argument of seccomp_data. */
unsigned short lnx_notify_filter(const struct lnx_notify_rule *rules, size_t n,
				 struct sock_filter *insns);
/* Installs the program into the calling thread (no_new_privs must be
 * set) and returns the listener, or -1 with a message in err. */
int lnx_notify_install(const struct sock_filter *insns, unsigned short len, char *err,
		       size_t errlen);

/* One descriptor over a unix socket (SCM_RIGHTS). */
bool lnx_notify_send_fd(int sock, int fd);
int lnx_notify_recv_fd(int sock); /* -1 on EOF or error */

struct lnx_notify;

struct lnx_notify_call {
	struct lnx_notify *nt;
	const struct seccomp_notif *req;
	pid_t tid; /* req->pid: the calling thread, in the supervisor's PID namespace */
	/* Filled by lnx_notify_status(). */
	pid_t tgid;
	mode_t umask;
	bool have_status;
	bool answered; /* set by the reply functions */
	bool deferred; /* set by lnx_notify_defer */
};

/* Answers c (a handler returns after answering). */
typedef void (*lnx_notify_handler)(void *ctx, struct lnx_notify_call *c);
/* Sees every notification before its handler; must not answer. */
typedef void (*lnx_notify_observer)(void *ctx, const struct lnx_notify_call *c);

/* Takes ownership of the listener. NULL on allocation failure. */
struct lnx_notify *lnx_notify_new(int listener);
void lnx_notify_free(struct lnx_notify *nt);
int lnx_notify_fd(const struct lnx_notify *nt);
/* The handler for system call nr (replaces any earlier one). */
bool lnx_notify_on(struct lnx_notify *nt, int nr, lnx_notify_handler fn, void *ctx);
bool lnx_notify_observe(struct lnx_notify *nt, lnx_notify_observer fn, void *ctx);

/* Receives one notification and dispatches it. Returns 0, or -errno when
 * the listener failed (-ENOENT: the call was interrupted before it was
 * received, harmless; anything else: the supervisor cannot go on). A
 * handler that did not answer gets its call answered ENOSYS, so a bug
 * fails closed instead of hanging the tracee. */
int lnx_notify_handle(struct lnx_notify *nt);

void lnx_notify_reply_errno(struct lnx_notify_call *c, int err);
void lnx_notify_reply_value(struct lnx_notify_call *c, int64_t val);
void lnx_notify_reply_continue(struct lnx_notify_call *c);
/* Installs fd (which the caller keeps and closes) in the tracee as the
 * call's result, close-on-exec when asked; answers errno on failure. */
void lnx_notify_reply_fd(struct lnx_notify_call *c, int fd, bool cloexec);

/* A request answered later, from any thread: lnx_notify_defer copies what
 * is needed, after which the handler returns without answering. */
struct lnx_notify_later {
	int listener;
	uint64_t id;
};
void lnx_notify_defer(struct lnx_notify_call *c, struct lnx_notify_later *l);
/* err != 0: answer -err; else install fd (when >= 0) or answer val. */
void lnx_notify_answer(const struct lnx_notify_later *l, int err, int fd, bool cloexec,
		       int64_t val);
bool lnx_notify_later_valid(const struct lnx_notify_later *l);

/* Whether the request is still pending (its tracee did not go away). */
bool lnx_notify_valid(const struct lnx_notify_call *c);
/* Copies the NUL-terminated string at addr (at most size-1 bytes) into
 * buf. 0, -EFAULT, -ENAMETOOLONG (no NUL within size), or -ESRCH when the
 * request is no longer valid after the read. */
int lnx_notify_read_string(struct lnx_notify_call *c, uint64_t addr, char *buf, size_t size);
/* Reads tgid and umask of the caller (once per call), or takes them
 * from what an earlier call of the same thread left (lnx_tasks.h says
 * when). 0 or -errno. */
int lnx_notify_status(struct lnx_notify_call *c);
/* The caller is in umask(2), not yet answered: what is kept is forgotten
 * (lnx_tasks_umask_call). Answer it "continue" after this. */
void lnx_notify_umask_call(struct lnx_notify_call *c);

/* The supervisor's reader of /proc/TID/status. The supervisor holds the
 * command's Landlock rules, which need not grant /proc; this process of
 * its own, forked before those rules are applied and with privileges
 * already dropped, is confined by a Landlock ruleset of its own to reading
 * below /proc, dies with its parent, and answers only "the status text of
 * TID" on the socket it returns (the supervisor's end; -1 with err on
 * failure), its pid in *pid. `abi` is the kernel's Landlock ABI. The
 * supervisor starts it only when the command's rules do not grant
 * reading /proc (lnx_super.c). */
int lnx_notify_status_reader(int abi, pid_t *pid, char *err, size_t errlen);
/* Makes lnx_notify_status ask the reader on `sock` (owned by nt from
 * then on) instead of opening /proc itself; -1 closes the one it has,
 * which ends the reader. */
void lnx_notify_use_status_reader(struct lnx_notify *nt, int sock);
/* A duplicate of the tracee's descriptor fd, from the calling thread's
 * own table (close-on-exec). -errno on failure. */
int lnx_notify_tracee_fd(struct lnx_notify_call *c, int fd);
/* An O_PATH descriptor of where a *at() call with dirfd starts:
 * the caller's cwd for AT_FDCWD, else its descriptor. -errno on failure. */
int lnx_notify_dir(struct lnx_notify_call *c, int dirfd);

/* ---- lnx_walk.c: resolving a path for the tracee ---- */

/* What /proc/self means and who the walker never walks into. */
struct lnx_walk {
	int root_fd;    /* the tracee's "/", O_PATH */
	pid_t tgid;     /* /proc/self */
	pid_t tid;      /* /proc/thread-self */
	pid_t self;     /* the supervisor: /proc/<self> is refused (EACCES) */
	unsigned links; /* symlinks followed so far (at most 40, as the kernel) */
};

struct lnx_walked {
	int dirfd;            /* O_PATH, close-on-exec: the directory holding name */
	char dir[PATH_MAX];   /* its path, as the mount namespace names it */
	char name[NAME_MAX + 1]; /* the last component; "." when there is none */
	bool slash;           /* the path ended in '/' */
};

/* Resolves every component of path but the last, starting from start_fd
 * (relative paths) or w->root_fd (absolute), following symlinks like the
 * kernel: "." and "..", at most 40 links, /proc/self and
 * /proc/thread-self as the tracee's own, magic links under /proc/PID
 * opened through the kernel. 0 with *out filled (close out->dirfd), or
 * -errno. */
int lnx_walk_parent(struct lnx_walk *w, int start_fd, const char *path, struct lnx_walked *out);
/* The same, taking start_fd over (closed whatever happens; -1 or any
 * descriptor for an absolute path), which saves duplicating it. */
int lnx_walk_parent_from(struct lnx_walk *w, int start_fd, const char *path,
			 struct lnx_walked *out);
/* Whether `name`, in procfs's root, is the supervisor or one of its
 * threads (never to be walked into for the tracee). */
bool lnx_walk_is_self(const struct lnx_walk *w, const char *name);
/* 0: fd is not in procfs; 1: it is; 2: it is procfs's root. */
int lnx_walk_proc(int fd);
/* The path of an open descriptor (readlink of /proc/self/fd/N). */
int lnx_walk_fd_path(int fd, char *buf, size_t size);

#endif
