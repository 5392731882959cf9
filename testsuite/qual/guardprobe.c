/*
 * guardprobe.c - tries to create a guarded name with the system calls a
 * shell does not use (testsuite/qual/guard.sh). Run in the workspace:
 *
 *   guardprobe openat|creat|mknod|symlinkat|linkat|renameat2|exchange|xlink|procself|tmpfile|race
 *   guardprobe umask|ownfiles
 *
 * Exits 0 when the call(s) ran (whatever they returned): the test looks
 * at the filesystem afterwards, never at what this program believes.
 * `race` flips a path buffer between a harmless name and ".envrc" from a
 * second thread while the first keeps calling openat(O_CREAT) on it: a
 * guard that let the kernel re-read the path after checking it would lose
 * this race. Bounded to 20000 calls and 10 seconds. `umask` is ordinary
 * work, not an attack: it prints the modes of names made under umasks
 * other threads and processes set, which must be the same with and
 * without the guard; `ownfiles` creates a name relative to a descriptor
 * of a thread with a descriptor table of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static char buf[64] = "harmless";
static atomic_int stop;

static void *flipper(void *arg)
{
	(void)arg;
	/* Each name stays a while, so that either may be what a call reads. */
	while (!atomic_load(&stop)) {
		memcpy(buf, ".envrc\0\0\0", 9);
		/* The barrier keeps the compiler from dropping the store. */
		__asm__ volatile("" ::: "memory");
		for (volatile int i = 0; i < 2000; i++)
			;
		memcpy(buf, "harmless", 9);
		__asm__ volatile("" ::: "memory");
		for (volatile int i = 0; i < 2000; i++)
			;
	}
	return NULL;
}

static int race(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, flipper, NULL) != 0)
		return 2;
	time_t end = time(NULL) + 10;
	for (int i = 0; i < 20000 && time(NULL) < end; i++) {
		int fd = openat(AT_FDCWD, buf, O_WRONLY | O_CREAT, 0644);
		if (fd >= 0)
			close(fd);
		unlink("harmless");
		if (access(".envrc", F_OK) == 0)
			break; /* lost: no need to go on */
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	return 0;
}

/* ---- umask: the mode of what the guard creates ----
 * Each step is a name the guard creates (with mode 0666 or 0777) under
 * a umask another thread or process set, in an order that a supervisor
 * keeping a stale umask would get wrong. Prints each name's mode. */
static pthread_mutex_t um_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t um_cond = PTHREAD_COND_INITIALIZER;
static int um_step;

static void um_make(const char *name)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0666);
	if (fd >= 0)
		close(fd);
}

static void um_wait(int step)
{
	pthread_mutex_lock(&um_lock);
	while (um_step < step)
		pthread_cond_wait(&um_cond, &um_lock);
	pthread_mutex_unlock(&um_lock);
}

static void um_go(int step)
{
	pthread_mutex_lock(&um_lock);
	um_step = step;
	pthread_cond_broadcast(&um_cond);
	pthread_mutex_unlock(&um_lock);
}

static void *um_setter(void *arg)
{
	(void)arg;
	umask(077);
	um_make("t1");
	return NULL;
}

static void *um_maker(void *arg)
{
	(void)arg;
	um_make("b1");
	um_go(1);
	um_wait(2);
	um_make("b2");
	return NULL;
}

static int umask_probe(void)
{
	umask(022);
	um_make("m1");
	pthread_t t;
	if (pthread_create(&t, NULL, um_setter, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 2;
	um_make("m2"); /* the thread's umask is the process's */
	mkdir("d2", 0777);
	umask(022);
	um_make("m3");
	pid_t pid = fork();
	if (pid == 0) {
		umask(027);
		um_make("c1");
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		return 2;
	um_make("m4"); /* the child's umask was its own */
	/* A thread that made a name before the umask changed, and one after. */
	if (pthread_create(&t, NULL, um_maker, NULL) != 0)
		return 2;
	um_wait(1);
	umask(007);
	um_go(2);
	if (pthread_join(t, NULL) != 0)
		return 2;
	mkdir("d5", 0777);
	static const char *const names[] = { "m1", "t1", "m2", "d2", "m3", "c1",
					     "m4", "b1", "b2", "d5" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		struct stat st;
		if (stat(names[i], &st) != 0)
			printf("%s missing\n", names[i]);
		else
			printf("%s %03o\n", names[i], (unsigned)(st.st_mode & 0777));
	}
	return 0;
}

/* ---- ownfiles: a thread with a descriptor table of its own ----
 * A thread made without CLONE_FILES (allowed, unlike one without
 * CLONE_FS) opens folder `sub` and creates a name relative to that
 * descriptor, whose number the main thread uses for `.` in its own
 * table. The name must land in sub/, as without the guard. */
static atomic_int of_stage;
static int of_fd = -1;
static char of_stack[256 * 1024] __attribute__((aligned(16)));

static int of_wait(int want)
{
	for (int i = 0; i < 5000 && atomic_load(&of_stage) < want; i++)
		usleep(1000);
	return atomic_load(&of_stage) >= want ? 0 : -1;
}

static int of_thread(void *arg)
{
	(void)arg;
	of_fd = open("sub", O_PATH | O_DIRECTORY | O_CLOEXEC);
	atomic_store(&of_stage, 1);
	if (of_wait(2) == 0) {
		int fd = openat(of_fd, "made", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
	atomic_store(&of_stage, 3);
	syscall(SYS_exit, 0); /* this thread only */
	return 0;
}

static int ownfiles_probe(void)
{
	/* Before Linux 6.9 the guard cannot name a thread's own table
	 * (docs/security-model.md): said, not tried, with and without it. */
	int self = (int)syscall(SYS_pidfd_open, (pid_t)syscall(SYS_gettid), 0x80 /* PIDFD_THREAD */);
	if (self < 0) {
		printf("no thread pidfds (%s): not tried\n", strerror(errno));
		return 0;
	}
	close(self);
	if (mkdir("sub", 0755) != 0)
		return 2;
	static pid_t tid = 1;
	if (clone(of_thread, of_stack + sizeof of_stack,
		  CLONE_VM | CLONE_FS | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
			  CLONE_CHILD_CLEARTID,
		  NULL, NULL, NULL, &tid) < 0 ||
	    of_wait(1) != 0)
		return 2;
	/* The same number, here ".": the lowest free in both tables. */
	int mine = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	atomic_store(&of_stage, 2);
	if (of_wait(3) != 0)
		return 2;
	for (int i = 0; i < 5000 && __atomic_load_n(&tid, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	printf("same number: %s\n", mine == of_fd ? "yes" : "no");
	printf("sub/made: %s\n", access("sub/made", F_OK) == 0 ? "yes" : "no");
	printf("made: %s\n", access("made", F_OK) == 0 ? "yes" : "no");
	return 0;
}

static void file(const char *name)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	const char *m = argv[1];
	if (!strcmp(m, "openat")) {
		int fd = openat(AT_FDCWD, ".envrc", O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(m, "creat")) {
		int fd = (int)syscall(SYS_creat, ".envrc", 0644);
		if (fd >= 0)
			close(fd);
	} else if (!strcmp(m, "mknod")) {
		mknodat(AT_FDCWD, ".envrc", S_IFIFO | 0644, 0);
	} else if (!strcmp(m, "symlinkat")) {
		symlinkat("/etc/passwd", AT_FDCWD, ".envrc");
	} else if (!strcmp(m, "linkat")) {
		file("src");
		int dfd = open(".", O_RDONLY | O_DIRECTORY);
		linkat(dfd, "src", dfd, ".envrc", 0);
	} else if (!strcmp(m, "renameat2")) {
		mkdir("d", 0755);
		file("d/settings.json");
		syscall(SYS_renameat2, AT_FDCWD, "d", AT_FDCWD, ".claude", 0);
	} else if (!strcmp(m, "exchange")) {
		/* .claude exists (empty, allowed); swap in one holding the name. */
		mkdir(".claude", 0755);
		mkdir("d", 0755);
		file("d/settings.json");
		syscall(SYS_renameat2, AT_FDCWD, "d", AT_FDCWD, ".claude", RENAME_EXCHANGE);
	} else if (!strcmp(m, "xlink")) {
		/* A link swapped with a file a protect's except keeps writable. */
		symlink("/etc/passwd", "l");
		syscall(SYS_renameat2, AT_FDCWD, "l", AT_FDCWD, "state/history.jsonl",
			RENAME_EXCHANGE);
	} else if (!strcmp(m, "procself")) {
		file("/proc/self/cwd/.envrc");
	} else if (!strcmp(m, "tmpfile")) {
		/* An unnamed file given the name afterwards. */
		int fd = open(".", O_WRONLY | O_TMPFILE, 0644);
		char p[64];
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		if (fd >= 0)
			linkat(AT_FDCWD, p, AT_FDCWD, ".envrc", AT_SYMLINK_FOLLOW);
	} else if (!strcmp(m, "race")) {
		return race();
	} else if (!strcmp(m, "umask")) {
		return umask_probe();
	} else if (!strcmp(m, "ownfiles")) {
		return ownfiles_probe();
	} else {
		return 2;
	}
	return 0;
}
