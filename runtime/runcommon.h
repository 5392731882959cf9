/*
 * runcommon.h - the steps of `cagerun -- COMMAND` that every launcher
 * shares (Linux: runtime/linux/lnx_run.c; Seatbelt:
 * runtime/seatbelt/sbx_run.c): compile and check the policy, the mode
 * `off` path, and the summary of the hosts the proxy denied.
 */
#ifndef CAGE_RUNCOMMON_H
#define CAGE_RUNCOMMON_H

#include "ir.h"
#include "policy.h"
#include "run.h"

/* One line "cagerun: ..." on stderr; returns RUN_SETUP_FAILED. */
int run_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Compiles o->policy (diagnostics to stderr), picks the mode (--mode or
 * the profile's) and checks that every path param names something that
 * exists. 0, or RUN_SETUP_FAILED with the cause said. *pol is set even on
 * failure (free it). */
int run_load_policy(const struct run_opts *o, cage_policy **pol, const struct ir_profile **prof,
		    enum ir_mode *mode);

/* `mode off`, said explicitly: exec the command with no sandbox, after
 * saying so on stderr. Returns only on failure (126/127). */
int run_unconfined(char *const *argv);

/* Makes this process's group the foreground group of the terminal on
 * standard input (SIGTTOU held off meanwhile); nothing when it is not our
 * terminal. The command's side takes the terminal with it, cagerun takes
 * it back at the end. */
void run_take_terminal(void);

#endif
