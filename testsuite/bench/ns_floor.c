/*
 * ns_floor.c - the kernel work of a sandbox launch and nothing else, as an
 * anchor for testsuite/bench/launch.sh:
 *
 *   ns_floor [--net] -- COMMAND [ARGS...]
 *
 * clones a child into new user, mount, PID and IPC namespaces (and a
 * network namespace with --net), writes its id maps, lets it make the
 * mounts private, mount a fresh /proc and a tmpfs on /dev/shm (and bring
 * the loopback up with --net), fork COMMAND and reap it: the steps cagerun
 * takes in the same order, without a policy, a plan, a lease, Landlock or
 * seccomp. Exits with COMMAND's status. Not a sandbox: nothing is confined.
 */
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int nf_write(pid_t pid, const char *name, const char *text)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t len = (ssize_t)strlen(text);
	int ok = fd >= 0 && write(fd, text, (size_t)len) == len;
	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

static int nf_lo_up(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	int ok = s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	ok = ok && ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
	if (s >= 0)
		close(s);
	return ok ? 0 : -1;
}

/* Process 1 of the new PID namespace. */
static _Noreturn void nf_init(int go, int net, char **argv)
{
	char c;
	if (read(go, &c, 1) != 1)
		_exit(125);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0 ||
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m") != 0 ||
	    (net && nf_lo_up() != 0)) {
		perror("ns_floor: set-up");
		_exit(125);
	}
	pid_t cmd = fork();
	if (cmd == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	if (cmd < 0 || waitpid(cmd, &st, 0) != cmd)
		_exit(125);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

int main(int argc, char **argv)
{
	int net = argc > 1 && !strcmp(argv[1], "--net");
	int i = 1 + net;
	if (i + 1 >= argc || strcmp(argv[i], "--") != 0) {
		fprintf(stderr, "usage: ns_floor [--net] -- COMMAND [ARGS...]\n");
		return 2;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return 125;
	unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | SIGCHLD;
	if (net)
		flags |= CLONE_NEWNET;
	pid_t pid = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
	if (pid < 0) {
		perror("ns_floor: clone");
		return 125;
	}
	if (pid == 0) {
		close(p[1]);
		nf_init(p[0], net, argv + i + 1);
	}
	close(p[0]);
	char m[64];
	snprintf(m, sizeof m, "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
	int ok = nf_write(pid, "uid_map", m) == 0 && nf_write(pid, "setgroups", "deny") == 0;
	snprintf(m, sizeof m, "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
	ok = ok && nf_write(pid, "gid_map", m) == 0 && write(p[1], "g", 1) == 1;
	close(p[1]);
	if (!ok)
		kill(pid, SIGKILL);
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return 125;
	return !ok ? 125 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
