/*
 * lch_peer.h - whether a process connected to the launcher may have it
 * start sandboxes for it: only a process confined exactly as the launcher
 * is (docs/security-model.md, "The launcher"). A caller that something
 * else confines (another sandbox's namespaces, a seccomp filter,
 * no_new_privs, other capabilities, groups, cgroup or LSM label, or a
 * Landlock domain the launcher is not in) would otherwise get from it a
 * sandbox of its choosing outside that confinement.
 *
 * What the kernel shows of a process's confinement (credentials,
 * capabilities, no_new_privs, seccomp, namespaces, cgroup, LSM label) is
 * compared with the launcher's own. A Landlock domain is not shown, so it
 * is caught by what it forbids: a process in a domain cannot open
 * /proc/PID/fd/N of a process outside it (ptrace access). Each side
 * holds a memfd no other process has, and the other must open it that way
 * (lch_proto.h); an inode only it can reach is the proof, which a
 * namespace file, shared by every process in the namespace, would not be.
 */
#ifndef CAGE_LCH_PEER_H
#define CAGE_LCH_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The launcher's own state, read once at its start: nothing it does
 * changes its credentials, namespaces, seccomp mode or LSM label. (Its
 * cgroup can be changed from outside, so that is read for each peer.) */
struct lch_self {
	char status[4096];
	char ns[10][128];
	int nslen[10];
	char attr[4096];
	int attrlen; /* -1: no LSM label to read here */
	int proof_fd; /* a memfd only the launcher holds */
	unsigned long long proof_dev, proof_ino;
};

/* The launcher's cgroup as /proc/self/cgroup shows it: unlike the rest,
 * it can be changed from outside, so it is read again where it counts. */
struct lch_cgroup {
	char text[4096];
	int len; /* -1: could not be read */
};

struct lch_peer {
	pid_t pid;
	int pidfd;    /* the peer at connect time (SO_PEERPIDFD) */
	int proc_fd;  /* its /proc/PID directory, checked to be the peer's */
};

/* Reads the launcher's own state and makes its memfd; false with why set. */
bool lch_peer_self(struct lch_self *self, char *why, size_t whylen);
bool lch_cgroup_read(struct lch_cgroup *cg);
/* Checks the peer of conn against self, and against the launcher's
 * cgroup, read into *cg. True with *p filled (lch_peer_close frees it);
 * false with why set and nothing held. */
bool lch_peer_check(const struct lch_self *self, int conn, struct lch_peer *p,
		    struct lch_cgroup *cg, char *why, size_t whylen);
/* The launcher's look at the peer: its descriptor fdnum (the peer's
 * memfd) opened through /proc/PID/fd, for HELLO; -1 with why set. */
int lch_peer_open_fd(const struct lch_peer *p, int fdnum, char *why, size_t whylen);
/* The peer's look at the launcher: fd must be the launcher's memfd, which
 * a process in a Landlock domain the launcher is not in cannot open. */
bool lch_peer_proof(const struct lch_self *self, int fd, char *why, size_t whylen);
/* True while the peer is still the process that connected. */
bool lch_peer_alive(const struct lch_peer *p);
void lch_peer_close(struct lch_peer *p);

#endif
