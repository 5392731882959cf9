/*
 * lnx_seccomp.h - the system-call filter of the Linux sandbox.
 *
 * The launcher loads it last, right before execvp(): after no_new_privs is
 * set, capabilities are dropped and Landlock is applied. The filter allows
 * by default and refuses the calls that reach kernel attack surface or other
 * processes (ptrace, io_uring, bpf, keyrings, mounts, namespaces, ...), the
 * socket families and types a policy has no rule for, terminal input
 * injection, and every system call made through another ABI than the native
 * one. docs/linux-seccomp.md lists what is refused and why.
 */
#ifndef CAGE_LNX_SECCOMP_H
#define CAGE_LNX_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

struct lnx_seccomp_opts {
	bool allow_unix_sockets; /* socket(AF_UNIX, ...) allowed (policy has `allow unix` rules);
	                            socketpair(AF_UNIX) is always allowed */
	bool allow_inet;         /* socket(AF_INET/AF_INET6, SOCK_STREAM|SOCK_DGRAM) allowed (always true
	                            today; false would be an offline sandbox) */
};

/* Builds and loads the filter into the calling thread (TSYNC not needed: called single-threaded,
 * right before execve). Requires no_new_privs already set. Returns false with a message in err. */
bool lnx_seccomp_load(const struct lnx_seccomp_opts *o, char *err, size_t errlen);

/* For docs and tests: the names of the syscalls the filter refuses whatever their arguments
 * (clone3 with ENOSYS, the others with EPERM), NULL-terminated, static. The calls refused only
 * for some arguments (clone, ioctl, personality, socket, socketpair) are not in it. */
const char *const *lnx_seccomp_denied_names(void);

#endif
