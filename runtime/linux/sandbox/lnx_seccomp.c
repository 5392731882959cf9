/*
 * lnx_seccomp.c - builds and loads the sandbox's system-call filter (see
 * lnx_seccomp.h; docs/linux-seccomp.md says what is refused and why).
 *
 * The filter allows by default: files and the network are confined by
 * Landlock, the mount namespace and the proxy, so seccomp only closes the
 * doors those cannot see. Three constraints of libseccomp (2.5) and of the
 * kernel shape the code below:
 *
 * - A rule may not have the default action, so "allow only X" is written as
 *   "refuse everything that is not X", and a rule holds at most one
 *   comparison per argument, so "not in {a, b, c}" becomes one rule per
 *   excluded value below the largest allowed one plus one rule for all
 *   values above it (deny_outside).
 * - Arguments are compared as 64-bit registers, but the kernel reads an int
 *   or unsigned int argument from the low 32 bits only. A refusal that
 *   matches a value exactly could be dodged by setting the upper bits, so
 *   such matches are masked to 32 bits, and "everything above the largest
 *   allowed value" also refuses every value with upper bits set.
 * - Only the native ABI is allowed. A filter is per architecture and a call
 *   made through another ABI (i386 `int 0x80` or x32 on x86_64, AArch32 on
 *   arm64) would meet no rule at all, so the bad-architecture action kills
 *   the process; libseccomp applies it to x32 numbers too.
 */
#include "lnx_seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* clone's flags are its first argument on every architecture but s390,
 * where the stack pointer comes first; the clone rules would match the
 * wrong argument there. */
#if defined(__s390__) || defined(__s390x__)
#error "lnx_seccomp: clone(2) argument order differs on s390; the clone rules need porting"
#endif

/* Refused whatever the arguments. clone3 and openat2 get ENOSYS (see
 * lnx_sc_deny_names), the others EPERM. docs/linux-seccomp.md says why for each. */
static const char *const lnx_sc_denied[] = {
	/* reading or changing other processes */
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	/* large kernel attack surface that no build or editor needs */
	"io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open",
	"userfaultfd",
	/* system administration */
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
	"swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "lookup_dcookie",
	"open_by_handle_at", "name_to_handle_at",
	/* kernel keyrings, shared with the user's session */
	"keyctl", "add_key", "request_key",
	/* mounts: would undo the mount namespace's covers */
	"mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen",
	"fsconfig", "fsmount", "fspick", "mount_setattr",
	/* namespaces */
	"unshare", "setns", "clone3",
	/* a mode seccomp cannot check (lnx_sc_deny_setid_modes) */
	"openat2",
	NULL,
};

const char *const *lnx_seccomp_denied_names(void)
{
	return lnx_sc_denied;
}

/* The filter under construction and where its errors go. */
struct lnx_sc {
	scmp_filter_ctx ctx;
	char *err;
	size_t errlen;
};

/* The kernel reads the argument as a 32-bit int: compare only those bits. */
#define LNX_SC_LOW32 0xffffffffu

/* Adds one rule with the n comparisons c. A name libseccomp cannot resolve
 * is skipped: this architecture lacks the call, or libseccomp is older than
 * the call (the unit tests fail then, rather than let it pass unnoticed). */
static bool lnx_sc_rule(struct lnx_sc *sc, uint32_t act, const char *name, unsigned n,
			const struct scmp_arg_cmp *c)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return true;
	int rc = seccomp_rule_add_array(sc->ctx, act, nr, n, c);
	if (rc < 0) {
		snprintf(sc->err, sc->errlen, "seccomp: cannot add a rule for %s: %s", name,
			 strerror(-rc));
		return false;
	}
	return true;
}

/* A comparison, every field named (the SCMP_CMP macros leave datum_b out). */
static struct scmp_arg_cmp lnx_sc_cmp(unsigned arg, enum scmp_compare op, uint64_t a, uint64_t b)
{
	return (struct scmp_arg_cmp){.arg = arg, .op = op, .datum_a = a, .datum_b = b};
}

/* A rule on one argument, with an optional condition `pre` on another. */
static bool lnx_sc_rule_if(struct lnx_sc *sc, uint32_t act, const char *name,
			   const struct scmp_arg_cmp *pre, struct scmp_arg_cmp cmp)
{
	struct scmp_arg_cmp c[2] = {cmp, cmp};
	if (pre)
		c[0] = *pre;
	return lnx_sc_rule(sc, act, name, pre ? 2 : 1, c);
}

static bool lnx_sc_in(uint32_t v, const uint32_t *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == v)
			return true;
	return false;
}

/*
 * Refuses `name` with `act` when argument `arg` is not one of ok[0..n)
 * (and the optional condition `pre` on another argument holds): one rule per
 * excluded value from 0 to the largest allowed value, and one for everything
 * above it, which also catches negative values and upper-bit garbage.
 */
static bool lnx_sc_deny_outside(struct lnx_sc *sc, uint32_t act, const char *name,
				const struct scmp_arg_cmp *pre, unsigned arg, const uint32_t *ok,
				size_t n)
{
	uint32_t max = 0;
	for (size_t i = 0; i < n; i++)
		if (ok[i] > max)
			max = ok[i];
	for (uint32_t v = 0; v < max; v++)
		if (!lnx_sc_in(v, ok, n) &&
		    !lnx_sc_rule_if(sc, act, name, pre, lnx_sc_cmp(arg, SCMP_CMP_EQ, v, 0)))
			return false;
	return lnx_sc_rule_if(sc, act, name, pre, lnx_sc_cmp(arg, SCMP_CMP_GT, max, 0));
}

/* Refuses when the low `bits` bits (at most 8) of argument `arg` are not
 * one of ok[0..n): one rule per excluded value of those bits. */
static bool lnx_sc_deny_bits_outside(struct lnx_sc *sc, uint32_t act, const char *name,
				     const struct scmp_arg_cmp *pre, unsigned arg, unsigned bits,
				     const uint32_t *ok, size_t n)
{
	uint32_t mask = (1u << bits) - 1;
	for (uint32_t v = 0; v <= mask; v++)
		if (!lnx_sc_in(v, ok, n) &&
		    !lnx_sc_rule_if(sc, act, name, pre, lnx_sc_cmp(arg, SCMP_CMP_MASKED_EQ, mask, v)))
			return false;
	return true;
}

static bool lnx_sc_deny_names(struct lnx_sc *sc)
{
	for (const char *const *p = lnx_sc_denied; *p; p++) {
		/* clone3's flags and openat2's mode live in structs in memory,
		 * which seccomp cannot read; ENOSYS makes callers fall back to
		 * clone and openat, whose arguments are filtered below. */
		int e = !strcmp(*p, "clone3") || !strcmp(*p, "openat2") ? ENOSYS : EPERM;
		if (!lnx_sc_rule(sc, SCMP_ACT_ERRNO((uint32_t)e), *p, 0, NULL))
			return false;
	}
	return true;
}

/* clone with a CLONE_NEW* flag would make new namespaces, like unshare.
 * CLONE_NEWTIME is left out: clone() reads that bit as part of the exit
 * signal, only clone3 and unshare (both refused) take it. */
static bool lnx_sc_deny_clone_ns(struct lnx_sc *sc)
{
	static const uint32_t ns_flags[] = {
		CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
		CLONE_NEWUSER, CLONE_NEWPID,   CLONE_NEWNET,
	};
	for (size_t i = 0; i < sizeof ns_flags / sizeof ns_flags[0]; i++)
		if (!lnx_sc_rule_if(sc, SCMP_ACT_ERRNO(EPERM), "clone", NULL,
				 lnx_sc_cmp(0, SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i])))
			return false;
	return true;
}

/* A thread made without CLONE_FS has a umask, root and cwd of its own.
 * Refused, so that every thread of a process shares them: the create
 * guard keeps a process's umask between calls (lnx_notify.c, "The task
 * cache") and relies on it. Every thread library passes CLONE_FS; fork
 * and vfork (no CLONE_THREAD) are unaffected. */
static bool lnx_sc_deny_thread_own_fs(struct lnx_sc *sc)
{
	return lnx_sc_rule_if(sc, SCMP_ACT_ERRNO(EPERM), "clone", NULL,
			      lnx_sc_cmp(0, SCMP_CMP_MASKED_EQ, CLONE_THREAD | CLONE_FS,
					 CLONE_THREAD));
}

/* TIOCSTI pushes bytes into a terminal's input queue and TIOCLINUX can paste
 * a console selection: either types commands into the user's shell. The
 * kernel reads the request as 32 bits, so only those are compared. */
static bool lnx_sc_deny_tty_inject(struct lnx_sc *sc)
{
	return lnx_sc_rule_if(sc, SCMP_ACT_ERRNO(EPERM), "ioctl", NULL,
			   lnx_sc_cmp(1, SCMP_CMP_MASKED_EQ, LNX_SC_LOW32, TIOCSTI)) &&
	       lnx_sc_rule_if(sc, SCMP_ACT_ERRNO(EPERM), "ioctl", NULL,
			   lnx_sc_cmp(1, SCMP_CMP_MASKED_EQ, LNX_SC_LOW32, TIOCLINUX));
}

/*
 * No file may get a set-user-ID or set-group-ID bit from inside: a sandbox
 * started by root could otherwise leave a setuid-root program in a
 * writable tree that outlives the run (the mounts are nosuid only inside).
 * Landlock does not mediate modes, so the mode arguments are checked here:
 * chmod and friends, and open/creat/mknod when they create. openat2 takes
 * its mode in a struct seccomp cannot read: it is refused with ENOSYS
 * (lnx_sc_denied), which sends callers back to openat.
 */
static bool lnx_sc_deny_setid_modes(struct lnx_sc *sc)
{
	static const struct {
		const char *name;
		unsigned mode_arg;
		int flags_arg; /* -1: always creates (or changes) a mode */
	} calls[] = {
		{"chmod", 1, -1},  {"fchmod", 1, -1}, {"fchmodat", 2, -1}, {"fchmodat2", 2, -1},
		{"creat", 1, -1},  {"mknod", 1, -1},  {"mknodat", 2, -1},  {"open", 2, 1},
		{"openat", 3, 2},
	};
	static const uint32_t bits[] = {S_ISUID, S_ISGID};
	/* O_TMPFILE makes a file too (nameless until linkat). */
	static const uint32_t creating[] = {O_CREAT, __O_TMPFILE};
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
		for (size_t b = 0; b < 2; b++) {
			struct scmp_arg_cmp m = lnx_sc_cmp(calls[i].mode_arg, SCMP_CMP_MASKED_EQ,
							   bits[b], bits[b]);
			if (calls[i].flags_arg < 0) {
				if (!lnx_sc_rule_if(sc, SCMP_ACT_ERRNO(EPERM), calls[i].name, NULL, m))
					return false;
				continue;
			}
			for (size_t f = 0; f < 2; f++) {
				struct scmp_arg_cmp c = lnx_sc_cmp((unsigned)calls[i].flags_arg,
								   SCMP_CMP_MASKED_EQ, creating[f],
								   creating[f]);
				if (!lnx_sc_rule_if(sc, SCMP_ACT_ERRNO(EPERM), calls[i].name, &c, m))
					return false;
			}
		}
	return true;
}

/*
 * personality() may only query (0xffffffff) or set PER_LINUX (0): the other
 * personas turn off address-space randomisation (ADDR_NO_RANDOMIZE), make
 * data executable (READ_IMPLIES_EXEC) or map page zero, and survive exec.
 * glibc and ld.so never change the persona. The kernel reads 32 bits, and
 * those are all equal exactly when no bit is 1 while the next one round the
 * circle (bit 31's next is bit 0) is 0: going round a word that has both
 * values, some 1 is followed by a 0. So 32 rules refuse "bit i set, bit
 * i+1 mod 32 clear", one masked comparison each. No set of masked
 * comparisons is smaller: a word with one bit set is refused only by a
 * rule whose wanted ones are that bit alone, one rule per bit.
 */
static bool lnx_sc_deny_personality(struct lnx_sc *sc)
{
	for (unsigned i = 0; i < 32; i++) {
		uint32_t bit = 1u << i, next = 1u << ((i + 1) % 32);
		if (!lnx_sc_rule_if(sc, SCMP_ACT_ERRNO(EPERM), "personality", NULL,
				 lnx_sc_cmp(0, SCMP_CMP_MASKED_EQ, bit | next, bit)))
			return false;
	}
	return true;
}

/*
 * socket(): families the policy does not use fail with EAFNOSUPPORT, what a
 * kernel built without them answers, so programs that probe a family (for
 * example IPv6 or AF_VSOCK) fall back instead of aborting. Within an allowed
 * IP family only stream and datagram sockets over TCP or UDP are made (no
 * raw, packet or ICMP sockets, no SCTP), and netlink only as NETLINK_ROUTE,
 * which getifaddrs() needs; those refusals are EPERM, as a raw socket without
 * CAP_NET_RAW would be. socketpair() makes only AF_UNIX pairs.
 */
static bool lnx_sc_socket(struct lnx_sc *sc, const struct lnx_seccomp_opts *o)
{
	const uint32_t nofam = SCMP_ACT_ERRNO(EAFNOSUPPORT), eperm = SCMP_ACT_ERRNO(EPERM);
	uint32_t fams[4];
	size_t nf = 0;
	if (o->allow_unix_sockets)
		fams[nf++] = AF_UNIX;
	if (o->allow_inet) {
		fams[nf++] = AF_INET;
		fams[nf++] = AF_INET6;
	}
	fams[nf++] = AF_NETLINK;
	if (!lnx_sc_deny_outside(sc, nofam, "socket", NULL, 0, fams, nf))
		return false;

	static const uint32_t ip_types[] = {SOCK_STREAM, SOCK_DGRAM};
	static const uint32_t ip_protos[] = {0, IPPROTO_TCP, IPPROTO_UDP};
	static const uint32_t ip_fams[] = {AF_INET, AF_INET6};
	for (size_t i = 0; o->allow_inet && i < 2; i++) {
		/* Exact family match is safe here: a family with upper bits set
		 * was refused above. The type's low 4 bits are the kind (the rest
		 * are SOCK_NONBLOCK, SOCK_CLOEXEC or rejected by the kernel). */
		struct scmp_arg_cmp fam = lnx_sc_cmp(0, SCMP_CMP_EQ, ip_fams[i], 0);
		if (!lnx_sc_deny_bits_outside(sc, eperm, "socket", &fam, 1, 4, ip_types, 2) ||
		    !lnx_sc_deny_outside(sc, eperm, "socket", &fam, 2, ip_protos, 3))
			return false;
	}
	static const uint32_t nl_protos[] = {NETLINK_ROUTE};
	struct scmp_arg_cmp nl = lnx_sc_cmp(0, SCMP_CMP_EQ, AF_NETLINK, 0);
	if (!lnx_sc_deny_outside(sc, eperm, "socket", &nl, 2, nl_protos, 1))
		return false;

	static const uint32_t pair_fams[] = {AF_UNIX};
	return lnx_sc_deny_outside(sc, nofam, "socketpair", NULL, 0, pair_fams, 1);
}

static bool lnx_sc_attr(struct lnx_sc *sc, enum scmp_filter_attr a, uint32_t v, const char *what)
{
	int rc = seccomp_attr_set(sc->ctx, a, v);
	if (rc < 0)
		snprintf(sc->err, sc->errlen, "seccomp: cannot set %s: %s", what, strerror(-rc));
	return rc == 0;
}

/* The launcher sets no_new_privs itself; finding it unset means the launch
 * steps ran out of order, which must not pass silently. */
static bool lnx_sc_nnp_set(char *err, size_t errlen)
{
	int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	if (nnp != 1) {
		snprintf(err, errlen, "seccomp: no_new_privs is not set%s%s",
			 nnp < 0 ? ": " : "", nnp < 0 ? strerror(errno) : "");
		return false;
	}
	return true;
}

/* libseccomp 2.5 exports only to a descriptor: a memfd, read back. */
static bool lnx_sc_export(scmp_filter_ctx ctx, struct lnx_seccomp_prog *p, char *err,
			  size_t errlen)
{
	int fd = memfd_create("cage-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "seccomp: memfd_create: %s", strerror(errno));
		return false;
	}
	bool ok = false;
	int rc = seccomp_export_bpf(ctx, fd);
	off_t size = rc == 0 ? lseek(fd, 0, SEEK_END) : -1;
	if (rc < 0) {
		snprintf(err, errlen, "seccomp: cannot generate the filter: %s", strerror(-rc));
	} else if (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0 ||
		   size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
		snprintf(err, errlen, "seccomp: the generated filter has a bad size (%lld bytes)",
			 (long long)size);
	} else if (!(p->insns = malloc((size_t)size))) {
		snprintf(err, errlen, "seccomp: out of memory");
	} else if (pread(fd, p->insns, (size_t)size, 0) != (ssize_t)size) {
		snprintf(err, errlen, "seccomp: cannot read the generated filter back");
		lnx_seccomp_prog_free(p);
	} else {
		p->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
		ok = true;
	}
	close(fd);
	return ok;
}

bool lnx_seccomp_build(const struct lnx_seccomp_opts *o, struct lnx_seccomp_prog *p, char *err,
		       size_t errlen)
{
	memset(p, 0, sizeof *p);
	if (!o) {
		snprintf(err, errlen, "seccomp: no options");
		return false;
	}
	/* KILL_PROCESS needs API level 3 (Linux 4.14). */
	if (seccomp_api_get() < 3) {
		snprintf(err, errlen, "seccomp: kernel or libseccomp too old (API level %u, need 3)",
			 seccomp_api_get());
		return false;
	}
	struct lnx_sc sc = {seccomp_init(SCMP_ACT_ALLOW), err, errlen};
	if (!sc.ctx) {
		snprintf(err, errlen, "seccomp: cannot create a filter");
		return false;
	}
	bool ok = lnx_sc_attr(&sc, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS,
			      "the bad-architecture action") &&
		  lnx_sc_attr(&sc, SCMP_FLTATR_CTL_NNP, 0, "no_new_privs handling") &&
		  /* A binary search over the call numbers instead of a list
		   * (the same rules): the kernel runs the filter for every
		   * call number once when it is installed, to find the calls it
		   * always allows (seccomp_cache_prepare), and for each call
		   * that is not among them afterwards. Installing it went from
		   * about 210 to 170 us here. */
		  lnx_sc_attr(&sc, SCMP_FLTATR_CTL_OPTIMIZE, 2, "the binary-tree layout") &&
		  lnx_sc_deny_names(&sc) && lnx_sc_deny_clone_ns(&sc) &&
		  lnx_sc_deny_thread_own_fs(&sc) &&
		  lnx_sc_deny_tty_inject(&sc) && lnx_sc_deny_personality(&sc) &&
		  lnx_sc_deny_setid_modes(&sc) && lnx_sc_socket(&sc, o) &&
		  lnx_sc_export(sc.ctx, p, err, errlen);
	seccomp_release(sc.ctx);
	return ok;
}

bool lnx_seccomp_kernel_ok(char *err, size_t errlen)
{
	uint32_t action = SECCOMP_RET_KILL_PROCESS;
	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0)
		return true;
	snprintf(err, errlen, "seccomp: the kernel cannot kill a process from a filter (%s); "
			      "Linux 4.14 or later is needed", strerror(errno));
	return false;
}

bool lnx_seccomp_install(const struct lnx_seccomp_prog *p, char *err, size_t errlen)
{
	if (!p->insns || p->len == 0) {
		snprintf(err, errlen, "seccomp: no filter was built");
		return false;
	}
	if (!lnx_sc_nnp_set(err, errlen))
		return false;
	struct sock_fprog prog = {.len = p->len, .filter = p->insns};
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
		snprintf(err, errlen, "seccomp: cannot load the filter: %s", strerror(errno));
		return false;
	}
	return true;
}

void lnx_seccomp_prog_free(struct lnx_seccomp_prog *p)
{
	free(p->insns);
	p->insns = NULL;
	p->len = 0;
}

bool lnx_seccomp_load(const struct lnx_seccomp_opts *o, char *err, size_t errlen)
{
	/* Checked before building too, as before the split: a caller that
	 * forgot no_new_privs learns it without the cost of a build. */
	if (!lnx_sc_nnp_set(err, errlen))
		return false;
	struct lnx_seccomp_prog p;
	bool ok = lnx_seccomp_build(o, &p, err, errlen) && lnx_seccomp_install(&p, err, errlen);
	lnx_seccomp_prog_free(&p);
	return ok;
}
