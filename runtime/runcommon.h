/*
 * runcommon.h - the steps of `cagerun -- COMMAND` that every launcher
 * shares (Linux: runtime/linux/lnx_run.c; Seatbelt:
 * runtime/seatbelt/sbx_run.c): compile and check the policy, the mode
 * `off` path, and the summary of the hosts the proxy denied.
 */
#ifndef CAGE_RUNCOMMON_H
#define CAGE_RUNCOMMON_H

#include "ir.h"
#include "cage.h"
#include "policy.h"
#include "gs.h"
#include "run.h"

/* run_fail (run.h) says why a step failed. */

/* Compiles o->policy (diagnostics to stderr), picks the mode (--mode or
 * the profile's) and checks that every path param names something that
 * exists. 0, or RUN_SETUP_FAILED with the cause said. *pol is set even
 * on failure (free it). The caller then runs git discovery
 * (run_discover_git), except in mode off. */
int run_load_policy(const struct run_opts *o, cage_policy **pol, const struct ir_profile **prof,
		    enum ir_mode *mode);

/* Adds what git discovery finds to pol's profile (gs.h; its walk of the
 * workspace, and what it found, kept in `keep` where the launcher has
 * one, else NULL). 0, or RUN_SETUP_FAILED with the cause said. */
int run_discover_git(const struct run_opts *o, const struct gs_keep *keep, cage_policy *pol);

struct gs_result;
/* What --verbose says of a discovery (its items, its walk), or the note
 * when a bound stopped it. */
void run_git_report(const struct run_opts *o, const struct gs_result *gr);

/* The policy's proxy rule table: emitted into *bytes (malloc'd, the
 * caller frees it) and loaded into *t, which points into it. 0, or
 * RUN_SETUP_FAILED with the cause said (`name` names the policy). */
struct cpt_table;
int run_proxy_table(cage_policy *pol, const char *name, char **bytes, struct cpt_table *t);

/* Where the proxy's live denial lines go (run.h, notice_fd): -1 under
 * --quiet. */
int run_notice_fd(const struct run_opts *o);

/* The agents' own copies of their mixed config files (agentstate.h), made
 * before the sandbox; -v says which. 0, or RUN_SETUP_FAILED with the cause
 * said. */
struct agentstate;
int run_agent_state(const cage_policy *pol, bool verbose, struct agentstate *st);

/* The proxy's per-run secret: 128 random bits as 32 hex digits. */
bool run_proxy_secret(char out[33]);

/* --log: created 0600, appended, never through a symlink; a descriptor or
 * -1 with errno set. */
int run_open_log(const char *path);

/* `mode off`, said explicitly: exec the command with no sandbox, after
 * saying so on stderr, with the open-files limit it was started with
 * (run_nofile_restore). Returns only on failure (126/127). */
int run_unconfined(char *const *argv, const struct run_nofile *nofile);

/* The proxy's connection slots, sized to the descriptors this process
 * has (each tunnel holds two sockets and two pipes): l->max_conns is
 * lowered to fit, never raised. `explicit` (--max-conns given) keeps the
 * number asked for, and the proxy then refuses what does not fit. 0, or
 * RUN_SETUP_FAILED when not even RUN_PROXY_MIN_CONNS fit, saying how to
 * raise the limit. */
enum { RUN_PROXY_MIN_CONNS = 32 };
struct prx_limits;
int run_proxy_fit(struct prx_limits *l, bool explicit);

/* The policy's limits against what this machine can enforce: why[k] is
 * NULL for a limit the launcher enforces, else the reason it cannot. A
 * limit it cannot enforce refuses the run (RUN_SETUP_FAILED, with the
 * statement's location) unless the policy marks it best-effort; those it
 * names in one line on stderr (unless `quiet`), so that a bound is never
 * dropped in silence. 0 when the run may go on. */
int run_limits_gate(const struct ir_profile *p, const char *const why[IR_LIM_N], bool quiet);

/* RLIMIT_NOFILE for the command: what cagerun was started with (`start`),
 * both values lowered to the policy's `limit files` when it has one. The
 * soft value is never raised: programs that use select(2) rely on it. */
struct rlimit;
void run_nofile_for(const struct ir_profile *p, const struct rlimit *start, struct rlimit *out);

/* Makes this process's group the foreground group of the terminal on
 * standard input (SIGTTOU held off meanwhile); nothing when it is not our
 * terminal. The command's side takes the terminal with it, cagerun takes
 * it back at the end. */
void run_take_terminal(void);

/* Puts `len` bytes of `b` in place as `name` in the pinned folder `dfd`:
 * a new file `tmp` there (O_EXCL, never through a link, mode 0600),
 * written whole and synced, then renamed over `name`, so that no reader
 * ever sees half of it. False with errno set and *step saying which part
 * failed; `tmp` is gone then. */
enum run_replace_step { RUN_REPLACE_CREATE, RUN_REPLACE_WRITE, RUN_REPLACE_RENAME };
bool run_replace_at(int dfd, const char *name, const char *tmp, const char *b, size_t len,
		    enum run_replace_step *step);

#endif
