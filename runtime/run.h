/*
 * run.h - `cagerun -- COMMAND`: compile the policy, then run the command
 * inside it with the platform's launcher. Every failure before the command
 * starts returns RUN_SETUP_FAILED (125) and the command never runs.
 */
#ifndef CAGE_RUN_H
#define CAGE_RUN_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/resource.h>

#include "cage.h"

#define RUN_SETUP_FAILED 125

struct prx_resolver;

/* The open-files limit cagerun was started with. cagerun raises its own
 * soft limit toward the hard one (the proxy holds four descriptors per
 * tunnel); the command gets the limit it would have had without cagerun,
 * restored in its process right before the exec. */
struct run_nofile {
	struct rlimit orig;
	bool known;   /* orig was read */
	bool changed; /* the soft limit was raised: restore orig before exec */
};

/* At start, before anything is allocated: glibc's malloc keeps what it
 * has instead of giving the top of the heap back at every large free and
 * asking again for each next 128 KiB. A launch is short and its peak is
 * small (about 2 MiB), and each brk(2) that gives or takes pages cost
 * about 20 us here: 16 of them were 0.25 ms of a launch
 * (docs/benchmarks.md, "A static cagerun"). No-op elsewhere. */
void run_alloc_tune(void);

/* At start: remember the limit, then raise the soft one as far as the
 * hard one (or the kernel's nr_open) lets it. */
void run_nofile_raise(struct run_nofile *n);

/* In the command's process, right before the exec: async-signal-safe
 * (setrlimit only). False when the limit could not be put back. */
bool run_nofile_restore(const struct run_nofile *n);

/* The limit cagerun was started with (what the command gets unless a
 * policy's `limit files` lowers it): n's record, or the current limit
 * where there is none. False when it cannot be read. */
bool run_nofile_start(const struct run_nofile *n, struct rlimit *out);

/* What the launcher (lch_server.h) hears of a run it started: the exit
 * status, as soon as the command and the sandbox are gone and cagerun has
 * printed all it will print, but before cagerun cleans up after it (the
 * run's cgroups, its TMPDIR, its own exit), so that the client does not
 * wait for that. Linux only; a direct run has none. */
#define RUN_STATUS_MSG_MAX 256
#define RUN_STATUS_MSGS 2
struct run_status_msg {
	int fd;
	unsigned char bytes[RUN_STATUS_MSG_MAX];
	size_t len;
	int code_at; /* where the status goes in bytes; -1: nowhere */
};

/* The answer as bytes that any process of the run may send
 * (run_status_send): cagerun once it has printed all it will, or, when
 * it will print nothing after the command (quiet, no logs), the
 * sandbox's init the moment it has reaped the rest of the sandbox. */
struct run_ahead;
struct run_held;
struct run_status_hook {
	const struct run_status_msg *msgs;
	size_t nmsgs;
	/* What the launcher's spare made for this run before its request
	 * came (on Linux, the sandbox's user and network namespaces:
	 * lch_ahead.h), or NULL; the run uses it or throws it away. */
	struct run_ahead *ahead;
	/* The spare's copy of the compile the launcher made for the request
	 * it ran last (cagerun_main.c, layers/held.h), or NULL: used only
	 * when this request is that one and nothing it read changed. */
	struct run_held *held;
};

/* Sends n bytes on a unix socket and, when fd >= 0, that descriptor
 * with them; retries EINTR. True when all n went. */
bool run_send_fd(int sock, const void *buf, size_t n, int fd);

/* Sends h's messages in order, each on its descriptor with the status
 * written in; stops at the first that does not go whole (without
 * waiting, where a socket is full). True when all went. Allocates
 * nothing: init calls it after its last fork. */
bool run_status_send(const struct run_status_hook *h, int status);

/* The plan of a compile the launcher keeps for its spares, bound ahead
 * (Linux: the kept plan, lnx_planload.h's lnx_plan_hold); opaque here. */
struct run_plan_ahead;
/* For the launcher, once it has compiled a request for its spares: the
 * plan a run of that compile would bind, bound now from the current
 * directory `cwd`. NULL when there is none to bind (none kept yet, or
 * macOS); nothing is built or said. */
struct run_plan_ahead *run_plan_ahead_make(cage_policy *pol, const char *cwd);
void run_plan_ahead_free(struct run_plan_ahead *p);
/* Whether the run that took p found it stale (so the launcher binds one
 * again, with a compile made again). */
bool run_plan_ahead_stale(const struct run_plan_ahead *p);

struct run_opts {
	const char *policy;          /* the .cage file, or a name for the composed policy */
	const char *policy_file;     /* -p: the one file run as written, else NULL */
	cage_options *copts;         /* -D, -I, --profile */
	const char *mode;            /* --mode, or NULL for the policy's */
	char *const *argv;           /* the command, verbatim */
	const char *log_path;        /* --log: the proxy's JSON-lines log */
	const struct prx_resolver *resolve; /* --resolve overrides, may be NULL */
	bool quiet, verbose;
	const char *backend;         /* --backend: "linux", "seatbelt", or NULL for the host's */
	/* The policy, already compiled (cagerun's layers): used instead of
	 * loading `policy`, and not freed by run_command. */
	cage_policy *pol;
	const char *prompt; /* PS1 for --shell, or NULL */
	/* monitor mode: turn off the only-would-block and exclude-workspace
	 * toggles (docs/monitor.md) */
	bool record_covered, record_workspace;
	/* enforce modes: also observe file calls and record what the policy
	 * denies (docs/monitor.md) */
	bool log_denials;
	/* the open-files limit to give the command back (run_nofile_raise) */
	const struct run_nofile *nofile;
	/* where the proxy writes each denial as it happens: 0 for standard
	 * error, else the session log (slog.h) when standard error is a
	 * terminal; nowhere under quiet (run_notice_fd) */
	int notice_fd;
	/* the command layer resolved a version manager's shim: the manager's
	 * bin directories to put first on the command's PATH, or NULL */
	const char *path_prefix;
	/* the launcher's, or NULL */
	const struct run_status_hook *status_hook;
	/* bound ahead for `pol`, the launcher's kept compile this run took
	 * (run_plan_ahead_make), or NULL; still confirmed before use, and
	 * marked stale when the confirmation fails */
	struct run_plan_ahead *plan_ahead;
	/* Called in cagerun once the command has started, or NULL: work
	 * that need not delay the launch (writing the compile kept on disk,
	 * layers/kept.h), done while the command runs. Not called when the
	 * command never starts, or in mode off, which execs it: the caller
	 * does it afterwards, when it can. */
	void (*started)(void *ctx);
	void *started_ctx;
	/* `pol` was taken from disk before what it read was asked again
	 * (layers/kept.h, kept_take's `later`), or NULL: true once confirmed
	 * (the same answer on every call). Linux's run_command calls it while
	 * init builds its mounts and always before the command is let start,
	 * and first, before anything, when there is no sandbox to build
	 * beside it; false: the compile went stale, nothing was run, and the
	 * caller compiles afresh (it alone says so). */
	bool (*confirm)(void *ctx);
	void *confirm_ctx;
};

/* A waited-for process's status as a shell gives it: its exit code,
 * 128+N for signal N, else RUN_SETUP_FAILED. */
int run_wait_code(int wait_status);

/* "cagerun: MESSAGE" on stderr; returns RUN_SETUP_FAILED. */
int run_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs the command; returns its exit status (128+N for a signal), or 125
 * when the sandbox could not be set up, 126/127 when the command could not
 * be executed. Messages go to stderr. */
int run_command(const struct run_opts *o);

/* cagerun's main, which the launcher calls in each run's process. */
typedef int run_main_fn(int argc, char **argv, const struct run_status_hook *hook);
/* What the launcher calls for the request it ran last (argv and envp as
 * that request carried them, cwd the directory it ran in): a compile
 * kept for it, which the spares it forks next inherit, or NULL when there
 * is none to keep. Prints nothing; leaves the working directory and
 * environment as it found them. */
typedef struct run_held *run_prepare_fn(int argc, char **argv, char **envp, const char *cwd);

/* cagerun's side of the launcher: what each request runs, and the
 * compile kept for the next (whether a run used its copy; its release). */
struct run_launcher_fns {
	run_main_fn *run;
	run_prepare_fn *prepare;
	bool (*taken)(const struct run_held *h);
	void (*release)(struct run_held *h);
};

/* `cagerun launcher [--socket PATH] [-v]`: serves launches to cage-launch
 * until SIGINT or SIGTERM (Linux: lch_server.h; elsewhere it says it is
 * not there). Each one runs `f->run(argc, argv, hook)`, cagerun's main, in
 * a child of its own. Returns the exit status. */
int run_launcher(int argc, char **argv, const struct run_launcher_fns *f);

/* Files of a compile kept on disk (runtime/layers/kept.h), in the
 * platform's private cache: `name` read whole into *out (malloc'd),
 * false when absent (why "") or refused (why says why); written whole or
 * not at all. */
bool run_kept_read(const char *name, unsigned char **out, size_t *n, char *why, size_t whylen);
bool run_kept_write(const char *name, const unsigned char *b, size_t n);
/* What a kept compile is keyed by besides the request: the running
 * program's build ID and the path it runs from (which the standard
 * library's default folder depends on), at most cap bytes. False when it
 * has no build ID, and then nothing is kept on disk. */
bool run_program_id(unsigned char *out, size_t cap, size_t *n);

/* `--proxy-only`: a note on out when the selected profile's mode is not
 * enforce (enforce-fs, off, monitor), saying what that mode means for the
 * network and that the proxy alone still enforces the connect rules. */
void run_proxy_only_note(const cage_policy *p, FILE *out);

#endif
