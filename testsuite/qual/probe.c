/*
 * probe.c - one system-level operation per subcommand, for the
 * qualification suite (qual.sh compiles it with cc at test time, into the
 * fixture's workspace, and runs it both outside and inside the sandbox).
 *
 * Each subcommand prints "ok ..." and exits 0 when the operation
 * succeeded, or "denied <op>: <errno text>" and exits 1 when it did not;
 * 2 is a usage error. The suite decides what each result means.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static int denied(const char *op)
{
	printf("denied %s: %s\n", op, strerror(errno));
	return 1;
}

/* Copies an open file to stdout. */
static int cat_fd(int fd, const char *op)
{
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return denied("write");
	if (n < 0)
		return denied(op);
	printf("\nok %s\n", op);
	return 0;
}

/* A directory descriptor opened first, then a chdir elsewhere, then a
 * read relative to the descriptor. */
static int dirfd_read(const char *dir, const char *rel, const char *newcwd)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return denied("open dir");
	if (chdir(newcwd) != 0)
		return denied("chdir");
	int fd = openat(dfd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return denied("openat");
	return cat_fd(fd, "openat read");
}

static int attach(pid_t pid)
{
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) != 0)
		return denied("ptrace attach");
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	printf("ok ptrace %d\n", (int)pid);
	return 0;
}

/* Attaches to a child of its own: allowed for any user (no Yama rule
 * forbids tracing a descendant), so only the sandbox can refuse it. */
static int ptrace_child(void)
{
	pid_t c = fork();
	if (c < 0)
		return denied("fork");
	if (c == 0) {
		pause();
		_exit(0);
	}
	int rc = attach(c);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	return rc;
}

static int connect_to(int domain, int type, const struct sockaddr *sa, socklen_t len,
		      const char *op)
{
	int s = socket(domain, type | SOCK_CLOEXEC, 0);
	if (s < 0)
		return denied("socket");
	if (connect(s, sa, len) != 0)
		return denied(op);
	char buf[64] = "";
	ssize_t n = read(s, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	printf("ok %s %s", op, n > 0 ? buf : "(connected)\n");
	close(s);
	return 0;
}

static int unix_connect(const char *name, int abstract)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	if (len + 2 > sizeof a.sun_path)
		return 2;
	memcpy(a.sun_path + (abstract ? 1 : 0), name, len);
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
				     (abstract ? 1 : 0));
	return connect_to(AF_UNIX, SOCK_STREAM, (struct sockaddr *)&a, alen,
			  abstract ? "connect abstract" : "connect unix");
}

static struct sockaddr_in loopback(const char *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int udp_send(const char *port, const char *msg)
{
	struct sockaddr_in a = loopback(port);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return denied("socket");
	if (sendto(s, msg, strlen(msg), 0, (struct sockaddr *)&a, sizeof a) < 0)
		return denied("sendto");
	printf("ok sendto\n");
	return 0;
}

static int open_socket(int domain, int type, int proto, const char *op)
{
	int s = socket(domain, type, proto);
	if (s < 0)
		return denied(op);
	printf("ok %s\n", op);
	close(s);
	return 0;
}

static int uring(void)
{
	char params[120]; /* struct io_uring_params: 120 bytes, zeroed */
	memset(params, 0, sizeof params);
	long fd = syscall(425 /* io_uring_setup */, 4, params);
	if (fd < 0)
		return denied("io_uring_setup");
	close((int)fd);
	printf("ok io_uring_setup\n");
	return 0;
}

/* A new user namespace, by unshare or by clone (child reports back). */
static int new_userns(int by_clone)
{
	if (!by_clone) {
		if (unshare(CLONE_NEWUSER) != 0)
			return denied("unshare");
		printf("ok unshare\n");
		return 0;
	}
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid < 0)
		return denied("clone");
	if (pid == 0)
		_exit(0);
	waitpid((pid_t)pid, NULL, 0);
	printf("ok clone\n");
	return 0;
}

static int do_mount(const char *dir)
{
	if (mount("tmpfs", dir, "tmpfs", 0, NULL) != 0)
		return denied("mount");
	printf("ok mount\n");
	return 0;
}

/* getpid through the i386 entry point (int 0x80, call 20): a filter made
 * for the native ABI alone would not see calls made this way. */
static int i386_call(void)
{
#if defined(__x86_64__)
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
	if (ret < 0) {
		errno = (int)-ret;
		return denied("int 0x80");
	}
	printf("ok int 0x80 getpid=%ld\n", ret);
	return 0;
#else
	errno = ENOSYS;
	return denied("int 0x80");
#endif
}

/* TIOCSTI on a terminal of its own (its controlling terminal, in a new
 * session: the kernel lets anyone type into that one): types a byte into
 * its input. The child reports through its exit status. */
static int tiocsti(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0)
		return denied("posix_openpt");
	pid_t c = fork();
	if (c < 0)
		return denied("fork");
	if (c == 0) {
		int s = -1;
		if (setsid() < 0 || (s = open(ptsname(m), O_RDWR | O_CLOEXEC)) < 0)
			_exit(3);
		char ch = 'x';
		_exit(ioctl(s, TIOCSTI, &ch) == 0 ? 0 : errno == EPERM ? 1 : 2);
	}
	int st = 0;
	waitpid(c, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		errno = WIFEXITED(st) && WEXITSTATUS(st) == 1 ? EPERM : EIO;
		return denied("TIOCSTI");
	}
	printf("ok TIOCSTI\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	const char *cmd = argc > 1 ? argv[1] : "";
	if (!strcmp(cmd, "dirfd") && argc == 5)
		return dirfd_read(argv[2], argv[3], argv[4]);
	if (!strcmp(cmd, "ptrace-child"))
		return ptrace_child();
	if (!strcmp(cmd, "ptrace") && argc == 3)
		return attach((pid_t)atoi(argv[2]));
	if (!strcmp(cmd, "unix") && argc == 3)
		return unix_connect(argv[2], 0);
	if (!strcmp(cmd, "abstract") && argc == 3)
		return unix_connect(argv[2], 1);
	if (!strcmp(cmd, "tcp") && argc == 3) {
		struct sockaddr_in a = loopback(argv[2]);
		return connect_to(AF_INET, SOCK_STREAM, (struct sockaddr *)&a, sizeof a,
				  "connect tcp");
	}
	if (!strcmp(cmd, "udp") && argc == 4)
		return udp_send(argv[2], argv[3]);
	if (!strcmp(cmd, "raw"))
		return open_socket(AF_INET, SOCK_RAW, IPPROTO_ICMP, "raw socket");
	if (!strcmp(cmd, "packet"))
		return open_socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL), "packet socket");
	if (!strcmp(cmd, "io_uring"))
		return uring();
	if (!strcmp(cmd, "unshare-user"))
		return new_userns(0);
	if (!strcmp(cmd, "clone-user"))
		return new_userns(1);
	if (!strcmp(cmd, "mount") && argc == 3)
		return do_mount(argv[2]);
	if (!strcmp(cmd, "i386"))
		return i386_call();
	if (!strcmp(cmd, "tiocsti"))
		return tiocsti();
	if (!strcmp(cmd, "pause")) {
		/* "ready" only once nothing but the default action stands
		 * between a signal and the process. */
		printf("ready\n");
		pause();
		return 0;
	}
	if (!strcmp(cmd, "kill") && argc == 3) {
		if (kill((pid_t)atoi(argv[2]), SIGTERM) != 0)
			return denied("kill");
		printf("ok kill\n");
		return 0;
	}
	fprintf(stderr, "usage: probe dirfd DIR REL NEWCWD | ptrace-child | ptrace PID | "
			"unix PATH | abstract NAME | tcp PORT | udp PORT MSG | raw | packet | "
			"io_uring | unshare-user | clone-user | mount DIR | i386 | tiocsti | pause | kill PID\n");
	return 2;
}
