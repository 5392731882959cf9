/*
 * lnx_detach.h - the end of a run after its status is known.
 *
 * Once init has said that the run is over (lnx_sandbox_done), nothing of
 * the sandbox is alive, but init is still leaving: its exit tears down the
 * sandbox's namespaces, and only then can the run's cgroups and private
 * directory be removed. The caller of cagerun need not wait for that. The
 * cleaner, a child of cagerun forked at the very end (each page cagerun
 * writes after a fork is copied, so a cleaner forked earlier costs more
 * than it saves), waits for init to be gone, cleans up and exits while
 * cagerun exits with the command's status. It runs in a session of its
 * own (a hang-up or a signal to the group that ran cagerun must not stop
 * it half-way), with standard input and output on /dev/null (whoever
 * reads cagerun's output to its end sees the end when cagerun exits) and
 * standard error kept (a cleanup that fails still says so).
 */
#ifndef CAGE_LNX_DETACH_H
#define CAGE_LNX_DETACH_H

#include <stdbool.h>
#include <sys/types.h>

/* Forks the cleaner, which waits until `init` (cagerun's child, exited or
 * leaving, not yet reaped; <= 0: none to wait for) is gone, bounded, then
 * calls clean(ctx) and exits. True when the cleaner was made and owns the
 * cleanup; false when the caller must clean up itself. */
bool lnx_detach_cleanup(pid_t init, void (*clean)(void *ctx), void *ctx);

#endif
