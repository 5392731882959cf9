/*
 * lch_ahead.h - the sandbox's user namespace (with its ID maps) and
 * network namespace, made by a launcher's spare while it waits for a
 * client, so that the run it becomes clones init into them instead of
 * paying for both on the launch's path (docs/launcher.md, "Namespaces
 * made ahead").
 *
 * Nothing in them depends on a request: a user namespace that maps the
 * user's own uid and gid and nothing else, and an empty network
 * namespace. What does depend on it, the mount view (copied when init is
 * cloned, so it is the host's at that moment), the PID and IPC
 * namespaces and everything init builds, is made at the launch as
 * before. A spare serves one run, so each made pair is used once or
 * thrown away; nobody else can reach it from inside a sandbox.
 *
 * The namespaces are held by a helper process of the spare's that shares
 * its memory, descriptors and signal dispositions (it must: init, cloned
 * by the helper, has to start from the spare's memory as it is at the
 * launch). The helper lives in the new user namespace, so it alone can
 * create namespaces owned by it; it makes raw system calls only, on its
 * own stack, and runs only while the spare waits for it. At the launch it
 * first takes on what a clone would have inherited from the run (working
 * directory, umask, signal mask, resource limits), then clones init as
 * the run's child (CLONE_PARENT). The run checks that init is in the
 * namespaces made, and refuses to start otherwise.
 *
 * x86_64 only, like the launcher's client; elsewhere lch_ahead_make says
 * no and every run makes its namespaces itself.
 */
#ifndef CAGE_LCH_AHEAD_H
#define CAGE_LCH_AHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct run_ahead;

/* The proxy's port inside the sandbox, unless the policy forwards a
 * loopback port of that number (then the next free one): the network
 * namespace made ahead holds a listener on it. */
#define LCH_AHEAD_PROXY_PORT 3128

/* Writes pid's ID maps: the caller's uid and gid mapped to themselves,
 * nothing else, setgroups denied. Shared with a sandbox cloned without
 * namespaces made ahead. False with the reason in err. */
bool lch_idmap_write(pid_t pid, char *err, size_t errlen);

/* A user namespace, a network namespace owned by it and the proxy's
 * listener in that (-1 where there is none): a set the launcher keeps
 * between spares when a run did not use it. */
struct lch_nsset {
	int user, net, listen;
};

/* Closes what set holds (NULL: nothing). */
void lch_nsset_close(struct lch_nsset *set);

/* In a spare: makes a user namespace and a network namespace with the
 * proxy's listener, held by a helper; or, given `reuse` (a set from the
 * launcher, never used by a sandbox), has the helper enter those. Takes
 * reuse's descriptors either way. NULL when it cannot (no user
 * namespaces, another architecture): the run then makes its own. */
struct run_ahead *lch_ahead_make(struct lch_nsset *reuse);

/* Where lch_ahead_drop sends the set back when no sandbox used it: the
 * launcher's end of the socket pair (lch_wire.h's LCH_NOTE_NS notes). */
void lch_ahead_return_to(struct run_ahead *ah, int chan);

/* Whether ah can serve a sandbox that wants (or not) its own network:
 * only one that does, as a user namespace alone saves nothing here
 * (docs/launcher.md). */
bool lch_ahead_fits(const struct run_ahead *ah, bool net);

/* Clones init into the namespaces made, plus flags' mount, PID and IPC
 * namespaces (CLONE_NEWUSER and CLONE_NEWNET in flags say which of ah's
 * to use; without CLONE_NEWNET init stays in the run's network), into
 * the v2 cgroup `into_fd` at its birth when into_fd >= 0. Init starts in
 * entry(arg), from a copy of the caller's memory as it is now, and is the
 * caller's child; the caller's ID maps are already written. Returns
 * init's pid, with *born_in set when into_fd was used; 0 when no init was
 * cloned and the caller should clone its own (ah did not fit, or the
 * helper could not clone); -1 with err set when nothing may start (the
 * helper went away mid-clone, or init is not where it should be; no
 * init of it is left). */
pid_t lch_ahead_clone(struct run_ahead *ah, unsigned long flags, int into_fd,
		      int (*entry)(void *), void *arg, bool *born_in, char *err,
		      size_t errlen);

/* After lch_ahead_clone with CLONE_NEWNET: the proxy's listener made in
 * that namespace on LCH_AHEAD_PROXY_PORT, the caller's to own; -1 when
 * there is none (init then makes it). Taken once. */
int lch_ahead_take_listener(struct run_ahead *ah);

/* Moves ah's descriptors to at, at+1, ... (close-on-exec), for a caller
 * about to close everything above its own; returns the first number
 * after them (at, for NULL). On failure ah is dropped and *ah NULL. */
int lch_ahead_renumber(struct run_ahead **ah, int at);

/* Sends an unused set back (lch_ahead_return_to), ends the helper if it
 * still waits, reaps it and frees ah (NULL: nothing). */
void lch_ahead_drop(struct run_ahead *ah);

#endif
