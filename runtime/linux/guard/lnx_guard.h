/*
 * lnx_guard.h - the create guard: makes the names the Linux plan could
 * not cover (lplan_guard in lplan.h) impossible to create, while every
 * other creation behaves as before. It is a set of lnx_notify handlers,
 * run by the sandbox's supervisor (lnx_super.c), for every call that
 * makes or moves a name: open/creat/openat with O_CREAT, mkdir(at),
 * mknod(at), symlink(at), link(at), rename(at/at2); and umask, which
 * names nothing and is let run once the supervisor has forgotten the
 * umasks it kept (lnx_tasks.h).
 *
 * Each call that makes a name is emulated, never continued: the
 * supervisor reads the path once, resolves it itself (lnx_walk_parent),
 * asks the plan (lplan_guard_denies) about the resolved directory and
 * last name, and performs the call on that pinned directory with the
 * tracee's umask (the supervisor's own is 0), answering with its
 * result (a new descriptor for opens). A continued
 * call would be re-read by the kernel after the check, when another
 * thread of the tracee may have changed the path. The supervisor runs
 * under the same Landlock rules as the command, so an emulated call can
 * do no more than the command could; refusals are EACCES, as Landlock's.
 */
#ifndef CAGE_LNX_GUARD_H
#define CAGE_LNX_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lnx_notify.h"
#include "lplan.h"

/* The calls the guard's filter notifies (at most LNX_NOTIFY_MAX_RULES). */
size_t lnx_guard_rules(struct lnx_notify_rule *out, size_t max);

/* What the guard saw that cagerun's report at exit needs
 * (lnx_gitreport.h), in memory cagerun shares with the supervisor
 * (MAP_SHARED, mapped before the clone; the command's exec drops it).
 * Every name a sandboxed process makes or moves passes check() below,
 * so a run in which none was `.git` and no directory moved cannot have
 * made a repository, and the walk at exit can be left out. Each field
 * only ever goes from 0 to 1. */
struct lnx_guard_seen {
	uint32_t serving;    /* the guard answered the command's calls from its start */
	uint32_t maybe_repo; /* a name `.git` was made, or a directory was moved */
};

struct lnx_guard;
/* NULL with errno on failure. The plan and links_ok (folders where links
 * may be made inside a protect's tree, NULL-ended; may be NULL) must
 * outlive the guard. seen: where to note what it saw, or NULL. */
struct lnx_guard *lnx_guard_new(const struct lplan *plan, const char *const *links_ok,
				struct lnx_guard_seen *seen);
/* The same for a filter that notifies every open (--log-denials): opens
 * without O_CREAT are answered "continue". */
bool lnx_guard_attach_all_opens(struct lnx_guard *g, struct lnx_notify *nt);
bool lnx_guard_attach(struct lnx_guard *g, struct lnx_notify *nt);
/* One line per refused name (with counts and the rule), to `out`. */
void lnx_guard_report(const struct lnx_guard *g, FILE *out);
void lnx_guard_free(struct lnx_guard *g);

#endif
