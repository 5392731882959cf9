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

/* The same filter in two steps, so that the costly part (libseccomp turning some two hundred rules
 * into BPF, about a millisecond) runs in cagerun before the clone, and the sandboxed child only
 * installs the result without allocating. The program is exactly the one
 * lnx_seccomp_load would load (libseccomp generates it the same way for export and for loading). */
struct sock_filter;
struct lnx_seccomp_prog {
	struct sock_filter *insns; /* malloc'd */
	unsigned short len;
};
/* Builds the filter for o into p (free with lnx_seccomp_prog_free). Needs no privileges. */
bool lnx_seccomp_build(const struct lnx_seccomp_opts *o, struct lnx_seccomp_prog *p, char *err,
		       size_t errlen);
/* Installs p into the calling thread with the flags libseccomp's own load uses here (none).
 * Requires no_new_privs already set. Makes no allocation, so it is safe in a child cloned from a
 * multi-threaded process. */
bool lnx_seccomp_install(const struct lnx_seccomp_prog *p, char *err, size_t errlen);
void lnx_seccomp_prog_free(struct lnx_seccomp_prog *p);
/* The same program as lnx_seccomp_build makes for o, generated at build
 * time (lnx_seccomp_gen.c); false when o has no generated program (then
 * build it) or on OOM. */
bool lnx_seccomp_prebuilt(const struct lnx_seccomp_opts *o, struct lnx_seccomp_prog *p);

/* Whether this kernel runs the stored program: it takes actions up to
 * SECCOMP_RET_KILL_PROCESS (Linux 4.14), asked with one
 * SECCOMP_GET_ACTION_AVAIL instead of libseccomp's probe of its API level
 * (nine system calls). False with a message in err. */
bool lnx_seccomp_kernel_ok(char *err, size_t errlen);

/* For docs and tests: the names of the syscalls the filter refuses whatever their arguments
 * (clone3 with ENOSYS, the others with EPERM), NULL-terminated, static. The calls refused only
 * for some arguments (clone, ioctl, personality, socket, socketpair) are not in it. */
const char *const *lnx_seccomp_denied_names(void);

#endif
