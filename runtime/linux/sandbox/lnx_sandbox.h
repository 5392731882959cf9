/*
 * lnx_sandbox.h - starting a command inside the Linux sandbox.
 *
 * cagerun (the parent, outside) clones an init process into new user,
 * mount, PID, IPC and (in enforce mode) network namespaces. The init
 * process builds the mount view, creates the loopback listeners that are
 * the sandbox's only way out and hands them to the parent, then starts the
 * command, which locks itself in (no_new_privs, no capabilities, Landlock,
 * seccomp) and execs; when the plan has guards, init first locks itself in
 * the same way and serves the create guard (lnx_super.h). When the command
 * exits, init ends every process left in the namespace and exits with the
 * command's status.
 */
#ifndef CAGE_LNX_SANDBOX_H
#define CAGE_LNX_SANDBOX_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "lnx_limits.h"
#include "lnx_seccomp.h"
#include "lplan.h"
#include "run.h"

#define LNX_MAX_LISTENERS 257 /* the proxy's and up to 256 forwarded ports */

struct lnx_spec {
	const struct lplan *plan;
	bool isolate_net;         /* enforce: a network namespace, out only via the proxy */
	char *const *argv;        /* passed to execvp verbatim */
	char *const *envp;        /* the command's whole environment */
	const char *cwd;          /* where the command starts */
	const char *tmp_dir;      /* private TMPDIR: every right */
	const char *home_dir;     /* private HOME, or NULL */
	const char *empty_file;   /* an empty unreadable file, to hide files; NULL when the
	                             plan hides none or the sandbox makes its own in its
	                             private /dev/shm (lnx_mount_apply) */
	const char *keep_dir;     /* cagerun's plan cache: read-only in here, and pinned
	                             (lnx_mount_keep); NULL when there is none */
	/* Folders only caged runs read (agentstate.h, `own`), NULL-ended:
	 * the create guard lets the command make links there even inside a
	 * protect's tree. */
	const char *const *links_ok;
	uint16_t proxy_port;      /* isolate_net: the proxy's port inside */
	int landlock_abi;
	const struct lnx_seccomp_prog *seccomp; /* built by the caller, installed last */
	bool take_terminal;       /* make the command the terminal's foreground group */
	bool quiet;               /* no report of refused names at exit */
	bool observe;             /* --log-denials: the command installs the path observer
	                             (lnx_observe.h) and sends its listener to observe_sock */
	int observe_sock;
	/* Where init writes its word once it has reaped every other process
	 * of the sandbox, right before it exits: the command's status and
	 * whether init sent the answer (two bytes); -1 for none. So cagerun can answer the launcher's client without
	 * waiting for init's exit and the namespaces' teardown. */
	int word_fd;
	/* With word_fd: the answer init sends itself before its word
	 * (run_status_send), so that the launcher's client hears its status
	 * without waiting for cagerun; the word then says whether it went.
	 * NULL: cagerun answers. */
	const struct run_status_hook *answer;
	/* --log-denials when the plan has guards: the guard's supervisor holds
	 * the tree's one listener, so it observes too, into this sink (its
	 * log descriptor is inherited; the supervisor prints the summary). */
	struct mon_sink *guard_observe;
	/* Where the guard's supervisor notes what it saw (lnx_guard.h), in
	 * memory shared with the caller; NULL when nobody asks. */
	struct lnx_guard_seen *guard_seen;
	/* Resource limits (lnx_limits.h): the command's rlimits, the size of
	 * the tmpfs on tmp_dir (0: the lease's directory as it is), and, when
	 * the cgroups init is moved into before it starts anything
	 * (lnx_limits_joins): by init itself through v1 `tasks` files, into a
	 * v2 cgroup at its clone (lnx_sandbox_clone). */
	rlim_t nproc;
	struct rlimit nofile;
	uint64_t tmp_bytes;
	const char *tmp_text;
	struct lnx_cgroup_joins cgroups;
	/* The user and network namespaces a launcher's spare made before the
	 * request (lch_ahead.h), or NULL: init is cloned into them when they
	 * fit, else into namespaces of its own as without a launcher. */
	struct run_ahead *ahead;
};

struct lnx_sandbox {
	pid_t init;   /* the init process, as the parent sees it */
	int err_fd;   /* start-up failures; EOF once the command runs */
	int go_fd;    /* a byte lets init join its cgroups ('c'), one more start the command */
	bool join_wait; /* init waits for the 'c' (s->cgroups.nlater), not yet written */
	int lsock;    /* isolate_net: where init sends its listeners, until received */
	bool ahead;   /* init went into the namespaces made ahead (lnx_spec.ahead) */
	/* isolate_net: listeners inside the namespace, owned by the caller
	 * after lnx_sandbox_start: fds[0] is the proxy's, the others forward
	 * ports[i] to the host's loopback. */
	int fds[LNX_MAX_LISTENERS];
	uint16_t ports[LNX_MAX_LISTENERS];
	size_t nfds;
};

/* Clones init (flags: its namespaces, and SIGCHLD) into the run's v2
 * cgroup, so that it is counted from its birth: clone3 with
 * CLONE_INTO_CGROUP when cj->has_into, which takes the cgroup lock for
 * reading as any fork does. Where that is refused (ENOSYS from some
 * container runtimes' seccomp profiles, kernels before 5.7), a plain clone,
 * and then init's pid written to each cj->by_pid, which takes the lock for
 * writing and waits for an RCU grace period (docs/benchmarks.md, "Into a
 * cgroup v2 at birth"). Like fork: the pid in the parent, 0 in the child,
 * -1 with err set and no child left. v1 joins (cj->later) are init's own. */
pid_t lnx_sandbox_clone(unsigned long flags, const struct lnx_cgroup_joins *cj, char *err,
			size_t errlen);
/* Writes init's pid to each cj->by_pid (init was not born in its
 * cgroup); on failure kills and reaps it, and says why in err. */
bool lnx_sandbox_join_by_pid(pid_t pid, const struct lnx_cgroup_joins *cj, char *err,
			     size_t errlen);
/* Clones init, writes its ID maps and lets it build its mounts (and, with
 * isolate_net, its listeners): returns without waiting for them, so the
 * caller's own set-up (the proxy) runs meanwhile. The caller must have
 * blocked SIGCHLD, SIGINT, SIGTERM, SIGHUP and SIGQUIT. */
bool lnx_sandbox_start(const struct lnx_spec *s, struct lnx_sandbox *sb, char *err,
		       size_t errlen);
/* isolate_net: waits for init's listeners (fds, ports), or for the reason
 * it failed first. */
bool lnx_sandbox_listeners(struct lnx_sandbox *sb, char *err, size_t errlen);
/* Lets init join the v1 cgroups (s->cgroups.nlater) it waits for once its
 * mounts are made: call once they are (lnx_limits_make). */
bool lnx_sandbox_cgroups_made(struct lnx_sandbox *sb, char *err, size_t errlen);
/* Lets init start the command: call once everything outside the sandbox
 * (the proxy) is ready. Until then the command cannot have started, so a
 * failure before this point is always a clean 125. */
bool lnx_sandbox_release(struct lnx_sandbox *sb, char *err, size_t errlen);
/* Waits for the command to be exec'd. Returns 0 once it runs, or the exit
 * status to use (125 set-up failure, 126 not executable, 127 not found)
 * with the reason in err. */
int lnx_sandbox_wait_exec(struct lnx_sandbox *sb, char *err, size_t errlen);
/* Ends init (and with it every process of the sandbox) and reaps it. */
void lnx_sandbox_kill(struct lnx_sandbox *sb);

/* The child side (lnx_init.c, lnx_exec.c). */
struct sock_filter;
struct lnx_child {
	const struct lnx_spec *s;
	int sync_fd;  /* read: the parent has written the id maps */
	int fd_sock;  /* write: listeners to the parent */
	/* The parent holds the proxy's listener already (made ahead in the
	 * network namespace, with the loopback up): init makes only the
	 * forwarded ports' listeners. */
	bool proxy_made;
	int err_fd;   /* write: start-up failures */
	/* Under the create guard (lnx_super.c): the notifying filter to
	 * install last, and where its listener goes to init; -1 else. */
	int notify_sock;
	const struct sock_filter *notify_insns;
	unsigned short notify_len;
	/* Under the guard: the Landlock ruleset init enforced on itself,
	 * which the command enforces once more (lnx_landlock_restrict); -1
	 * else, and the command builds its own. */
	int ruleset_fd;
	/* The CPUs the run may use (the parent's), which init takes back
	 * first: the parent starts it on the others (lnx_sandbox.c,
	 * start_beside). Empty when the parent could not read them. */
	cpu_set_t cpus;
};
_Noreturn void lnx_init_main(struct lnx_child *c);
_Noreturn void lnx_exec_main(struct lnx_child *c);
/* Starts lnx_exec_main(c) in a new process that shares the caller's
 * memory until it execs (or fails): the caller waits meanwhile, and no
 * page is copied, as a fork would copy every page either side writes.
 * Not where the caller must answer a filter that watches the command's
 * steps (init observing for the guard): it would wait for itself. Returns
 * its pid, or -1 with errno (no process was made). */
pid_t lnx_exec_spawn(const struct lnx_child *c);
/* The command's lock-down steps, shared with init when it runs the create
 * guard (lnx_super.h), which takes the same privileges and Landlock rules
 * as the command. */
bool lnx_exec_drop_privileges(char *err, size_t errlen);
/* Builds the ruleset (the plan's grants and the run's private folders) and
 * enforces it; with `keep`, the ruleset stays open there for a child to
 * enforce once more. */
bool lnx_exec_landlock(const struct lnx_spec *s, int *keep, char *err, size_t errlen);
/* Blocks the signals init forwards (and SIGCHLD). */
void lnx_block_forwarded(sigset_t *ss);
/* Reports a start-up failure to the parent and exits with `code`. */
_Noreturn void lnx_child_fail(struct lnx_child *c, int code, const char *msg);
/* Every signal back to its default, none blocked: what a command expects
 * from exec, whatever cagerun ignores or blocks. */
void lnx_reset_signals(void);


#endif
