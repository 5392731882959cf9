/*
 * lch_sys.h - the few system calls cage-launch makes, without a C library.
 *
 * cage-launch exists to cost less than a program's start-up: glibc's own
 * start reads the CPU's cache description with cpuid, which a hypervisor
 * traps (about 0.55 ms per exec on the project's machine, docs/benchmarks.md
 * "The C library's start-up"). So the client is built with -nostdlib and
 * makes its calls here: x86_64 only (the one architecture it is built and
 * tested on; another needs its own stub and _start), the *at and p* forms
 * (which every architecture has), raw kernel results (-errno on failure). The structures are the kernel's, from the uapi headers, or
 * spelled out where those headers have none (msghdr, cmsghdr, ucred).
 */
#ifndef CAGE_LCH_SYS_H
#define CAGE_LCH_SYS_H

#include <asm/unistd.h>
#include <linux/fcntl.h>
#include <linux/stat.h>
#include <stddef.h>
#include <stdint.h>

#include "../lch_rawsys.h"
#ifndef LCH_RAWSYS
#error "cage-launch: no system call stubs for this architecture"
#endif

/* Kernel structures the uapi headers do not export under these names. */
struct lch_iovec {
	void *base;
	size_t len;
};
struct lch_msghdr {
	void *name;
	int namelen;
	struct lch_iovec *iov;
	size_t iovlen;
	void *control;
	size_t controllen;
	unsigned flags;
};
struct lch_cmsghdr {
	size_t len;
	int level, type;
};
struct lch_ucred {
	int32_t pid;
	uint32_t uid, gid;
};
struct lch_pollfd {
	int fd;
	short events, revents;
};
struct lch_sockaddr_un {
	uint16_t family;
	char path[108];
};

#define LCH_AF_UNIX 1
#define LCH_SOCK_SEQPACKET 5
#define LCH_SOCK_CLOEXEC 02000000
#define LCH_SOL_SOCKET 1
#define LCH_SO_PEERCRED 17
#define LCH_SCM_RIGHTS 1
#define LCH_MSG_NOSIGNAL 0x4000
#define LCH_MSG_CMSG_CLOEXEC 0x40000000
#define LCH_POLLIN 1
#define LCH_SIG_BLOCK 0
#define LCH_SIG_SETMASK 2
#define LCH_TCGETS 0x5401
#define LCH_AT_FDCWD (-100)
#define LCH_AT_EMPTY_PATH 0x1000
#define LCH_EINTR 4
#define LCH_EAGAIN 11

#endif
