/*
 * lnx_observe.c - monitor mode's seccomp user-notification observer (see
 * lnx_observe.h): the filter, the supervisor thread, reading arguments
 * from the tracee, resolving paths and addresses, and the access kind of
 * each call.
 *
 * The stat family is not watched: Landlock does not confine it, so on
 * Linux it never would-block, and recording it would only make `cagec
 * suggest` propose grants enforce does not need. What the filter can
 * decide from the registers alone it decides there, without a round trip
 * to the supervisor: an O_PATH open is never recorded (see on_open), so
 * open and openat notify only without O_PATH. Everything else a watched
 * call may do depends on the path it names, which the filter cannot read.
 */
#include "lnx_observe.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ir.h"
#include "lnx_notify.h"
#include "mon_sink.h"

/* The watched calls, the most frequent first (the filter compares them in
 * this order). sendto is watched only when it names
 * an address; open and openat only without O_PATH. */
static const int watched[] = {
	__NR_openat,
#ifdef __NR_open
	__NR_open,
#endif
#ifdef __NR_creat
	__NR_creat,
#endif
#ifdef __NR_mkdir
	__NR_mkdir,
#endif
#ifdef __NR_rmdir
	__NR_rmdir,
#endif
#ifdef __NR_unlink
	__NR_unlink,
#endif
#ifdef __NR_rename
	__NR_rename,
#endif
#ifdef __NR_renameat
	__NR_renameat,
#endif
#ifdef __NR_link
	__NR_link,
#endif
#ifdef __NR_symlink
	__NR_symlink,
#endif
#ifdef __NR_mknod
	__NR_mknod,
#endif
#ifdef __NR_chmod
	__NR_chmod, __NR_chown, __NR_lchown,
#endif
#ifdef __NR_fchmodat2
	__NR_fchmodat2,
#endif
	__NR_fchmodat, __NR_fchownat,
	__NR_openat2, __NR_execve, __NR_execveat, __NR_mkdirat, __NR_unlinkat,
	__NR_renameat2, __NR_linkat, __NR_symlinkat, __NR_mknodat, __NR_truncate,
};

/* The socket calls, watched in monitor mode only (in enforce mode the
 * proxy reports the hosts it refused). */
static const int watched_net[] = { __NR_connect, __NR_bind, __NR_sendmsg };

#define NW (sizeof watched / sizeof *watched)
#define NWN (sizeof watched_net / sizeof *watched_net)

size_t lnx_observe_rules(bool net, struct lnx_notify_rule *rules, size_t max)
{
	if (max < NW + NWN + 1)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < NW; i++) {
		/* O_PATH: the flags are a register (openat's third argument,
		 * open's second); an O_PATH open also drops O_CREAT, so it
		 * makes no name the create guard would have to see. */
		int flags_arg = watched[i] == __NR_openat ? 2 : -1;
#ifdef __NR_open
		if (watched[i] == __NR_open)
			flags_arg = 1;
#endif
		rules[n++] = flags_arg < 0 ? (struct lnx_notify_rule){ watched[i], -1, 0 } :
			(struct lnx_notify_rule){ watched[i], flags_arg | LNX_NOTIFY_UNLESS, O_PATH };
	}
	for (size_t i = 0; net && i < NWN; i++)
		rules[n++] = (struct lnx_notify_rule){ watched_net[i], -1, 0 };
	/* sendto only with an address (its fifth argument, a pointer) */
	if (net)
		rules[n++] = (struct lnx_notify_rule){ __NR_sendto, 4, 0xffffffffu };
	return n;
}

int lnx_observe_install(bool net, char *err, size_t errlen)
{
	struct lnx_notify_rule rules[NW + NWN + 1];
	size_t n = lnx_observe_rules(net, rules, NW + NWN + 1);
	struct sock_filter insns[LNX_NOTIFY_MAX_INSNS];
	unsigned short len = lnx_notify_filter(rules, n, insns);
	if (!len) {
		snprintf(err, errlen, "the observer's filter has too many calls");
		return -1;
	}
	return lnx_notify_install(insns, len, err, errlen);
}

/* ---- the supervisor ---- */

struct lnx_observer {
	struct lnx_notify *nt;
	int stop_fd;
	atomic_bool stopping;
	struct mon_sink *sink;
	unsigned skip_port;
	pthread_t thread;
	bool started;
	bool borrowed_nt; /* lnx_observer_attach: the loop is someone else's */
};

/* The signal that interrupts the observer thread's wait in the kernel
 * (lnx_observer_stop). Only that thread takes it: its creator blocks it,
 * so a stray one sent to cagerun interrupts nothing else. */
#define OBS_WAKE_SIG (SIGRTMIN + 3)

static void obs_wake(int sig)
{
	(void)sig; /* only to make the blocked ioctl return EINTR */
}

/* Reads up to len bytes of the tracee's memory at addr, through
 * /proc/PID/mem; returns bytes read. */
static size_t peek_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/mem", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(addr + got));
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	return got;
}

/* Reads up to len bytes of the tracee's memory at addr; returns the bytes
 * read up to the first page that could not be read. One process_vm_readv
 * (the same ptrace access check as opening /proc/PID/mem) instead of an
 * open, a read and a close per call; each remote page is its own iovec,
 * so a read that reaches an unmapped page stops at that page's start.
 * Falls back to /proc/PID/mem where the call is missing or refused. */
static size_t peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	enum { MAXV = 4 };
	struct iovec local = { buf, len }, remote[MAXV];
	size_t nv = 0, off = 0;
	while (off < len && nv < MAXV) {
		size_t room = 4096 - (size_t)((addr + off) & 4095);
		if (room > len - off)
			room = len - off;
		remote[nv++] = (struct iovec){ (void *)(uintptr_t)(addr + off), room };
		off += room;
	}
	local.iov_len = off;
	ssize_t r = process_vm_readv(pid, &local, 1, remote, nv, 0);
	if (r < 0 && (errno == ENOSYS || errno == EPERM))
		return peek_mem(pid, addr, buf, len);
	if (r <= 0)
		return 0;
	if ((size_t)r == off && off < len)
		return off + peek(pid, addr + off, (char *)buf + off, len - off);
	return (size_t)r;
}

/* A NUL-terminated string from the tracee. The first read is short (most
 * paths are) and may span two pages, as peek() reads each page on its
 * own; then the rest is read page by page, so that a string ending just
 * before an unmapped page is still read. */
static bool peek_string(pid_t pid, uint64_t addr, char *out, size_t size)
{
	if (!addr)
		return false;
	size_t got = 0;
	while (got < size - 1) {
		size_t room = got ? 4096 - (size_t)((addr + got) & 4095) : 256;
		if (room > size - 1 - got)
			room = size - 1 - got;
		size_t r = peek(pid, addr + got, out + got, room);
		void *nul = memchr(out + got, '\0', r);
		if (nul)
			return true;
		got += r;
		if (r < room)
			break;
	}
	out[got] = '\0';
	return false;
}

static bool read_link(const char *p, char *out, size_t size)
{
	ssize_t n = readlink(p, out, size - 1);
	if (n <= 0)
		return false;
	out[n] = '\0';
	return true;
}

/* Whether path (absolute) is normal already: no "//", no "." or ".."
 * component, no trailing '/'. One pass, so that the common name is not
 * rewritten. */
static bool is_normal(const char *path)
{
	for (const char *p = path; *p; p++) {
		if (*p != '/')
			continue;
		const char *c = p + 1;
		if (*c == '/' || (*c == '\0' && p != path))
			return false;
		if (c[0] == '.' && (c[1] == '/' || !c[1] || (c[1] == '.' && (c[2] == '/' || !c[2]))))
			return false;
	}
	return true;
}

/* Removes ".", "..", "//" and a trailing '/' in place; path is absolute. */
static void normalize(char *path)
{
	if (is_normal(path))
		return;
	char *w = path;
	const char *r = path;
	while (*r) {
		while (*r == '/')
			r++;
		const char *e = strchr(r, '/');
		size_t n = e ? (size_t)(e - r) : strlen(r);
		if (n == 0)
			break;
		if (n == 1 && r[0] == '.') {
		} else if (n == 2 && r[0] == '.' && r[1] == '.') {
			while (w > path && *--w != '/')
				;
		} else {
			*w++ = '/';
			memmove(w, r, n);
			w += n;
		}
		r += n;
	}
	if (w == path)
		*w++ = '/';
	*w = '\0';
}

/* The decimal digits of v at w; returns the end. */
static char *put_uint(char *w, unsigned v)
{
	char digits[16];
	size_t nd = 0;
	do
		digits[nd++] = (char)('0' + v % 10);
	while ((v /= 10) && nd < sizeof digits);
	while (nd)
		*w++ = digits[--nd];
	return w;
}

/* "/proc/PID/" and tail (short), then num unless it is negative, into out
 * (at least 64 bytes). Written by hand: this runs for every relative
 * name, and snprintf was most of the observer's own time there. */
static void proc_link(char *out, pid_t pid, const char *tail, int num)
{
	char *w = out;
	memcpy(w, "/proc/", 6);
	w = put_uint(w + 6, (unsigned)pid);
	*w++ = '/';
	size_t nt = strlen(tail);
	memcpy(w, tail, nt);
	w += nt;
	if (num >= 0)
		w = put_uint(w, (unsigned)num);
	*w = '\0';
}

/* The absolute path the tracee named with (dirfd, name). /proc/self and
 * /proc/thread-self are the tracee's, not ours. */
static bool resolve(pid_t pid, int dirfd, const char *name, char *out, size_t size)
{
	size_t nb = 0, nn = strlen(name);
	if (name[0] != '/') {
		char link[64];
		if (dirfd != AT_FDCWD && dirfd < 0)
			return false; /* EBADF for the tracee too */
		if (dirfd == AT_FDCWD)
			proc_link(link, pid, "cwd", -1);
		else
			proc_link(link, pid, "fd/", dirfd);
		ssize_t r = readlink(link, out, size - 1);
		if (r <= 0 || (size_t)r >= size - 1 || out[0] != '/')
			return false; /* gone, not a path, or cut short */
		nb = (size_t)r;
		if (nn) {
			if (nb + 1 + nn >= size)
				return false;
			out[nb++] = '/';
		}
	}
	if (nb + nn >= size)
		return false;
	memcpy(out + nb, name, nn + 1);
	normalize(out);
	if (!strncmp(out, "/proc/self", 10) && (out[10] == '/' || !out[10])) {
		char tmp[4200];
		snprintf(tmp, sizeof tmp, "/proc/%d%s", (int)pid, out + 10);
		snprintf(out, size, "%s", tmp);
	}
	return true;
}

/* Writes the record of an access already classified as recorded. */
static void record_path(struct lnx_observer *o, pid_t pid, const char *sc, uint32_t access,
			const char *path, const struct mon_class *c)
{
	char exe[4096], link[64];
	snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
	struct mon_record r = { .time_ms = mon_now_ms(), .pid = pid, .syscall = sc,
				.access = access, .path = path };
	r.exe = read_link(link, exe, sizeof exe) ? exe : NULL;
	mon_sink_record(o->sink, &r, c);
}

static void emit_path(struct lnx_observer *o, pid_t pid, const char *sc, uint32_t access,
		      const char *path)
{
	struct mon_class c;
	mon_sink_classify_path(o->sink, access, path, &c);
	if (c.record)
		record_path(o, pid, sc, access, path, &c);
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* Whether any of the accesses in mask (IR_A_ bits) on path would be
 * recorded. Classifying needs no I/O, so the observer asks this before it
 * looks at the file system: an access that is not recorded whatever the
 * file's existence needs no lstat. */
static bool any_recorded(struct lnx_observer *o, uint32_t mask, const char *path)
{
	for (uint32_t bit = 1; bit && bit <= mask; bit <<= 1) {
		if (!(mask & bit))
			continue;
		struct mon_class c;
		mon_sink_classify_path(o->sink, bit, path, &c);
		if (c.record)
			return true;
	}
	return false;
}

/* A file access: classify the named path; skip what does not exist where
 * the call needs it to (a failed lookup is ENOENT under enforce too). */
static void on_path(struct lnx_observer *o, pid_t pid, const char *sc, int dirfd, __u64 name,
		    uint32_t access, bool must_exist)
{
	char nm[4096], path[4200];
	if (!peek_string(pid, name, nm, sizeof nm) || !resolve(pid, dirfd, nm, path, sizeof path))
		return;
	struct mon_class c;
	mon_sink_classify_path(o->sink, access, path, &c);
	if (!c.record || (must_exist && !exists(path)))
		return;
	record_path(o, pid, sc, access, path, &c);
}

static void on_open(struct lnx_observer *o, pid_t pid, const char *sc, int dirfd, uint64_t name,
		    uint64_t flags)
{
	char nm[4096], path[4200];
	if (flags & O_PATH)
		return; /* metadata only, like stat (open and openat do not get
			   here: their filter rule leaves O_PATH out; openat2's
			   flags are in memory) */
	if (!peek_string(pid, name, nm, sizeof nm) || !resolve(pid, dirfd, nm, path, sizeof path))
		return;
	int acc = (int)(flags & O_ACCMODE);
	/* What the call may be, the file existing or not: nothing of it
	 * recorded means nothing to do (the common case, a covered open). */
	uint32_t may = 0;
	if (acc == O_RDONLY || acc == O_RDWR)
		may |= IR_A_READ;
	if (acc != O_RDONLY || (flags & O_TRUNC))
		may |= IR_A_WRITE;
	if (flags & O_CREAT)
		may |= IR_A_CREATE | IR_A_WRITE;
	if (!any_recorded(o, may, path))
		return;
	bool ex = exists(path);
	if (!ex && !(flags & O_CREAT))
		return;
	if (!ex) {
		emit_path(o, pid, sc, IR_A_CREATE, path);
		emit_path(o, pid, sc, IR_A_WRITE, path);
		return;
	}
	if (acc == O_RDONLY || acc == O_RDWR)
		emit_path(o, pid, sc, IR_A_READ, path);
	if (acc != O_RDONLY || (flags & O_TRUNC))
		emit_path(o, pid, sc, IR_A_WRITE, path);
}

/* A socket address: inet is a host (loopback as "localhost", as policies
 * name it), unix paths are `unix` accesses (bind: create). */
static void on_addr(struct lnx_observer *o, pid_t pid, const char *sc, uint64_t addr, uint64_t len,
		    bool is_bind)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	if (!addr || len < sizeof(sa_family_t))
		return;
	if (len > sizeof ss)
		len = sizeof ss;
	if (peek(pid, addr, &ss, len) < sizeof(sa_family_t))
		return;
	char host[INET6_ADDRSTRLEN] = "";
	unsigned port = 0;
	bool loop = false;
	if (ss.ss_family == AF_UNIX) {
		struct sockaddr_un *u = (struct sockaddr_un *)&ss;
		if (len <= offsetof(struct sockaddr_un, sun_path) || !u->sun_path[0])
			return; /* unnamed or abstract */
		u->sun_path[sizeof u->sun_path - 1] = '\0';
		char path[4200];
		if (!resolve(pid, AT_FDCWD, u->sun_path, path, sizeof path) ||
		    (!is_bind && !exists(path)))
			return; /* no socket there: ENOENT under enforce too */
		emit_path(o, pid, sc, is_bind ? IR_A_CREATE : IR_A_UNIX, path);
		return;
	}
	if (is_bind)
		return; /* listening on a port is not a policy access */
	if (ss.ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
		port = ntohs(a->sin_port);
		loop = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	} else if (ss.ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
		port = ntohs(a->sin6_port);
		loop = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
	} else {
		return;
	}
	if (loop && port == o->skip_port)
		return; /* the proxy itself */
	const char *h = loop ? "localhost" : host;
	struct mon_class c;
	mon_sink_classify_host(o->sink, h, port, &c);
	if (!c.record)
		return;
	char exe[4096], link[64];
	snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
	struct mon_record r = { .time_ms = mon_now_ms(), .pid = pid, .syscall = sc,
				.access = IR_A_CONNECT, .host = h, .port = port };
	r.exe = read_link(link, exe, sizeof exe) ? exe : NULL;
	mon_sink_record(o->sink, &r, &c);
}

static void dispatch(struct lnx_observer *o, const struct seccomp_notif *q)
{
	pid_t pid = (pid_t)q->pid;
	const __u64 *a = q->data.args;
	int nr = q->data.nr;
	switch (nr) {
#ifdef __NR_open
	case __NR_open: on_open(o, pid, "open", AT_FDCWD, a[0], a[1]); break;
#endif
#ifdef __NR_creat
	case __NR_creat: on_open(o, pid, "creat", AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC); break;
#endif
	case __NR_openat: on_open(o, pid, "openat", (int)a[0], a[1], a[2]); break;
	case __NR_openat2: {
		struct open_how how;
		memset(&how, 0, sizeof how);
		if (peek(pid, a[2], &how, sizeof how.flags) == sizeof how.flags)
			on_open(o, pid, "openat2", (int)a[0], a[1], how.flags);
		break;
	}
	case __NR_execve: on_path(o, pid, "execve", AT_FDCWD, a[0], IR_A_EXEC, true); break;
	case __NR_execveat: on_path(o, pid, "execveat", (int)a[0], a[1], IR_A_EXEC, true); break;
#ifdef __NR_mkdir
	case __NR_mkdir: on_path(o, pid, "mkdir", AT_FDCWD, a[0], IR_A_CREATE, false); break;
#endif
	case __NR_mkdirat: on_path(o, pid, "mkdirat", (int)a[0], a[1], IR_A_CREATE, false); break;
#ifdef __NR_mknod
	case __NR_mknod: on_path(o, pid, "mknod", AT_FDCWD, a[0], IR_A_CREATE, false); break;
#endif
	case __NR_mknodat: on_path(o, pid, "mknodat", (int)a[0], a[1], IR_A_CREATE, false); break;
#ifdef __NR_rmdir
	case __NR_rmdir: on_path(o, pid, "rmdir", AT_FDCWD, a[0], IR_A_DELETE, true); break;
#endif
#ifdef __NR_unlink
	case __NR_unlink: on_path(o, pid, "unlink", AT_FDCWD, a[0], IR_A_DELETE, true); break;
#endif
	case __NR_unlinkat: on_path(o, pid, "unlinkat", (int)a[0], a[1], IR_A_DELETE, true); break;
#ifdef __NR_rename
	case __NR_rename:
		on_path(o, pid, "rename", AT_FDCWD, a[0], IR_A_DELETE, true);
		on_path(o, pid, "rename", AT_FDCWD, a[1], IR_A_CREATE, false);
		break;
#endif
#ifdef __NR_renameat
	case __NR_renameat:
#endif
	case __NR_renameat2:
		on_path(o, pid, "renameat", (int)a[0], a[1], IR_A_DELETE, true);
		on_path(o, pid, "renameat", (int)a[2], a[3], IR_A_CREATE, false);
		break;
#ifdef __NR_link
	case __NR_link: on_path(o, pid, "link", AT_FDCWD, a[1], IR_A_CREATE, false); break;
#endif
	case __NR_linkat: on_path(o, pid, "linkat", (int)a[2], a[3], IR_A_CREATE, false); break;
#ifdef __NR_symlink
	case __NR_symlink: on_path(o, pid, "symlink", AT_FDCWD, a[1], IR_A_CREATE, false); break;
#endif
	case __NR_symlinkat: on_path(o, pid, "symlinkat", (int)a[1], a[2], IR_A_CREATE, false); break;
	case __NR_truncate: on_path(o, pid, "truncate", AT_FDCWD, a[0], IR_A_WRITE, true); break;
	/* Changing a file's mode or owner is writing it, as the policy
	 * language (and Seatbelt's file-write-mode) has it. */
#ifdef __NR_chmod
	case __NR_chmod: on_path(o, pid, "chmod", AT_FDCWD, a[0], IR_A_WRITE, true); break;
	case __NR_chown: on_path(o, pid, "chown", AT_FDCWD, a[0], IR_A_WRITE, true); break;
	case __NR_lchown: on_path(o, pid, "lchown", AT_FDCWD, a[0], IR_A_WRITE, true); break;
#endif
#ifdef __NR_fchmodat2
	case __NR_fchmodat2: on_path(o, pid, "fchmodat2", (int)a[0], a[1], IR_A_WRITE, true); break;
#endif
	case __NR_fchmodat: on_path(o, pid, "fchmodat", (int)a[0], a[1], IR_A_WRITE, true); break;
	case __NR_fchownat: on_path(o, pid, "fchownat", (int)a[0], a[1], IR_A_WRITE, true); break;
	case __NR_connect: on_addr(o, pid, "connect", a[1], a[2], false); break;
	case __NR_bind: on_addr(o, pid, "bind", a[1], a[2], true); break;
	case __NR_sendto: on_addr(o, pid, "sendto", a[4], a[5], false); break;
	case __NR_sendmsg: {
		struct msghdr m;
		if (peek(pid, a[1], &m, sizeof m) == sizeof m)
			on_addr(o, pid, "sendmsg", (uint64_t)(uintptr_t)m.msg_name, m.msg_namelen, false);
		break;
	}
	default:
		break;
	}
}

/* Every notification, before lnx_notify answers it "continue" (monitor
 * mode registers no handler). */
static void observe(void *ctx, const struct lnx_notify_call *c)
{
	dispatch(ctx, c->req);
}

/* Gives the calling thread a descriptor table of its own holding only
 * the standard streams and the descriptors it uses (the listener, the
 * stop event, the log). The kernel looks up a descriptor of a table no
 * other thread shares without taking a reference on the file, and this
 * thread looks up the listener twice per watched call (perf put those
 * references at 4 % of its time). Holding nothing else, the thread can
 * keep no descriptor of cagerun open past the moment cagerun closes it
 * (a pipe's end, a lock), and what it opens for a moment (/proc) is in
 * no child cagerun forks meanwhile. A failure leaves the shared table,
 * as before: this is a saving, not a guarantee anything depends on. */
static void own_table(const struct lnx_observer *o)
{
	int keep[3] = { lnx_notify_fd(o->nt), o->stop_fd, o->sink->o.log_fd };
	for (size_t i = 1; i < 3; i++) /* ascending, for the gaps below */
		for (size_t k = i; k > 0 && keep[k - 1] > keep[k]; k--) {
			int t = keep[k];
			keep[k] = keep[k - 1];
			keep[k - 1] = t;
		}
	assert(keep[0] <= keep[1] && keep[1] <= keep[2]);
	/* close_range (Linux 5.9) first, on an empty range: without it the
	 * copy would keep every descriptor, so stay on the shared table. */
	if (syscall(SYS_close_range, ~0U, ~0U, 0) != 0 || unshare(CLONE_FILES) != 0)
		return;
	unsigned from = 3;
	for (size_t i = 0; i < 3; i++) {
		if (keep[i] < (int)from)
			continue; /* -1 (no log), a standard stream, or a repeat */
		if ((unsigned)keep[i] > from)
			(void)syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	(void)syscall(SYS_close_range, from, ~0U, 0);
}

/* The observer thread. It waits for each call inside
 * SECCOMP_IOCTL_NOTIF_RECV rather than in poll() first: one system call
 * less per watched call, and the kernel's hand-off to this CPU
 * (SYNC_WAKE_UP) applies to that wait as to poll's. poll() still decides
 * what an -ENOENT means (a call interrupted before we took it, or, since
 * Linux 6.11, no tracee left) and waits for the stop once none is left.
 * lnx_observer_stop interrupts the wait with OBS_WAKE_SIG. */
static void *serve(void *arg)
{
	struct lnx_observer *o = arg;
	sigset_t wake;
	sigemptyset(&wake);
	sigaddset(&wake, OBS_WAKE_SIG);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	own_table(o);
	bool listening = true;
	while (!atomic_load(&o->stopping)) {
		if (listening) {
			int rc = lnx_notify_handle(o->nt);
			if (rc == 0 || rc == -EINTR)
				continue;
			if (rc != -ENOENT) {
				listening = false; /* the listener cannot go on */
				continue;
			}
		}
		struct pollfd p[2] = { { o->stop_fd, POLLIN, 0 }, { lnx_notify_fd(o->nt), POLLIN, 0 } };
		if (poll(p, listening ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents)
			break;
		if (p[1].revents & (POLLHUP | POLLERR | POLLNVAL))
			listening = false; /* every tracee is gone */
	}
	return NULL;
}

struct lnx_observer *lnx_observer_start(int listen_fd, struct mon_sink *sink,
					unsigned skip_port, char *err, size_t errlen)
{
	struct lnx_observer *o = calloc(1, sizeof *o);
	if (!o) {
		close(listen_fd);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	o->sink = sink;
	o->skip_port = skip_port;
	o->stop_fd = eventfd(0, EFD_CLOEXEC);
	o->nt = lnx_notify_new(listen_fd);
	if (!o->nt)
		close(listen_fd);
	atomic_init(&o->stopping, false);
	/* The wake-up signal: a handler (an ignored signal would not
	 * interrupt the wait) without SA_RESTART, blocked in this thread and
	 * so in every thread it starts from now on; serve() unblocks it. */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = obs_wake;
	sigemptyset(&sa.sa_mask);
	sigset_t wake;
	sigemptyset(&wake);
	sigaddset(&wake, OBS_WAKE_SIG);
	int e = 0;
	if (o->stop_fd < 0 || !o->nt || !lnx_notify_observe(o->nt, observe, o) ||
	    (sigaction(OBS_WAKE_SIG, &sa, NULL) != 0 && (e = errno)) ||
	    (e = pthread_sigmask(SIG_BLOCK, &wake, NULL)) != 0 ||
	    (e = pthread_create(&o->thread, NULL, serve, o)) != 0) {
		snprintf(err, errlen, "cannot start the observer: %s",
			 o->stop_fd < 0 ? strerror(errno) : e ? strerror(e) : "out of memory");
		lnx_observer_stop(o);
		return NULL;
	}
	o->started = true;
	return o;
}

struct lnx_observer *lnx_observer_attach(struct lnx_notify *nt, struct mon_sink *sink,
					 unsigned skip_port)
{
	struct lnx_observer *o = calloc(1, sizeof *o);
	if (!o)
		return NULL;
	o->nt = nt;
	o->borrowed_nt = true;
	o->sink = sink;
	o->skip_port = skip_port;
	o->stop_fd = -1;
	if (!lnx_notify_observe(nt, observe, o)) {
		free(o);
		return NULL;
	}
	return o;
}

void lnx_observer_stop(struct lnx_observer *o)
{
	if (!o)
		return;
	if (o->started) {
		atomic_store(&o->stopping, true);
		uint64_t one = 1;
		if (write(o->stop_fd, &one, sizeof one) != (ssize_t)sizeof one) {
			/* an eventfd write cannot fail short of overflow */
		}
		/* A signal that lands before the thread enters the ioctl is
		 * spent: send it again until the thread is gone (10 s, then
		 * wait for it without a bound rather than free what it uses). */
		bool joined = false;
		for (int i = 0; i < 500 && !joined; i++) {
			if (pthread_kill(o->thread, OBS_WAKE_SIG) != 0)
				break;
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 20 * 1000 * 1000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			joined = pthread_timedjoin_np(o->thread, NULL, &ts) == 0;
		}
		if (!joined)
			pthread_join(o->thread, NULL);
	}
	if (o->stop_fd >= 0)
		close(o->stop_fd);
	if (!o->borrowed_nt)
		lnx_notify_free(o->nt);
	free(o);
}
