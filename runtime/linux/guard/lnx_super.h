/*
 * lnx_super.h - the create guard's supervisor, run by the sandbox's init
 * when the plan has guards (lnx_super.c says why init and no other
 * process). Init calls the three steps in order: lnx_super_prepare after
 * its mounts and before cagerun lets the command start, lnx_super_serve
 * once it may, and lnx_super_report after ending what the command left.
 */
#ifndef CAGE_LNX_SUPER_H
#define CAGE_LNX_SUPER_H

#include <linux/filter.h>

#include "lnx_notify.h"
#include "lnx_sandbox.h"

struct lnx_guard;

/* What init holds for the guard, from its set-up to its exit. */
struct lnx_super {
	struct lnx_guard *g;
	struct lnx_notify *nt;    /* once the command's listener arrived */
	int sig_fd;               /* signalfd of the forwarded signals and SIGCHLD */
	int sp[2];                /* the listener's way from the command: [0] init's end */
	int ruleset;              /* the Landlock ruleset init enforced, for the command */
	int status_sock;          /* the status reader's socket until nt owns it, or -1 */
	unsigned short len;       /* the notifying filter the command installs */
	struct sock_filter insns[LNX_NOTIFY_MAX_INSNS];
};

/* Drops init's privileges and applies the command's Landlock rules to it,
 * after building the filter and the guard; a failure is reported to
 * cagerun (lnx_child_fail). */
void lnx_super_prepare(struct lnx_child *c, struct lnx_super *sv);
/* Starts the command and serves the guard until the command exits;
 * returns its status. */
int lnx_super_serve(struct lnx_child *c, struct lnx_super *sv);
/* Ends the status reader and prints what the guard (and the observer)
 * refused, unless quiet. */
void lnx_super_report(const struct lnx_spec *s, struct lnx_super *sv);

#endif
