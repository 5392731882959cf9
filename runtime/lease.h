/*
 * lease.h - the private directory of one cagerun run: the command's TMPDIR,
 * its HOME when the policy says `private home`, and, when the plan hides a
 * file and the Linux sandbox cannot make its own (lnx_mount_apply), an
 * empty unreadable file it mounts over it. Created
 * 0700 before the sandbox starts, emptied (without following any link the
 * command left in it) when the run ends. The emptied directory is kept
 * as the user's one spare, `cage-spare.UID` beside the leases, which the
 * next run takes by renaming it (lease.c says why and what it checks).
 *
 * A run holds a lock on its lease for its whole life (flock on the
 * directory, which the sandbox's init shares until it ends). A run that
 * was killed (SIGKILL) leaves its lease unlocked behind it; a later run
 * that makes a new directory removes such leases (lease_sweep).
 */
#ifndef CAGE_LEASE_H
#define CAGE_LEASE_H

#include <stdbool.h>
#include <stddef.h>

struct lease {
	char *dir, *tmp, *home, *empty;
	int lock; /* with dir: the directory, open and locked (flock LOCK_EX) */
	bool swept; /* its making swept the leases of runs that are gone */
};

/* Leases are named LEASE_PREFIX and six random characters. Older
 * versions named theirs `cage-run.` and did not lock them: those are
 * never swept, as one may still be in use. */
#define LEASE_PREFIX "cage-tmp."

/* Under $TMPDIR (or /tmp): the directory and its tmp, and home when asked
 * for (l->home stays NULL otherwise). */
bool lease_create(struct lease *l, bool private_home, char *err, size_t errlen);
/* The same for a run with no private HOME and no empty file: the
 * directory is the TMPDIR itself (l->tmp names it too), one directory to
 * make and remove on the host's disk instead of two. */
bool lease_create_flat(struct lease *l, char *err, size_t errlen);
/* Adds the empty file (l->empty), only for a run that needs it: each inode
 * is one more to create and remove on every run. */
bool lease_make_empty(struct lease *l, char *err, size_t errlen);
/* Removes everything in the lease and the lease itself (its directory
 * kept as the spare when that can be done); false if anything of it is
 * left under the run's name. */
bool lease_remove(struct lease *l);

/* Removes, in `base`, every lease of this user's (a directory named
 * LEASE_PREFIX and six characters, mode 0700, not a link) whose run is
 * gone (its lock can be taken) and whose change time is at least
 * `min_age_s` seconds old, at most `most` of them, never following a link
 * inside. The number removed. A run calls it, at most once a minute, when
 * it makes a directory of its own instead of taking the spare (lease.c). */
int lease_sweep(const char *base, unsigned min_age_s, int most);

#endif
