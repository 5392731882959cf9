/*
 * lnx_probe.c - runs inside the sandbox for the differential test: reads
 * "ACCESS PATH" lines from standard input (a file outside the sandbox
 * that the policy need not grant) and tries each access for real, printing
 * "ACCESS PATH allowed" or "ACCESS PATH denied ERRNO". Only an error that
 * means "not permitted" counts as denied; anything else (ENOTEMPTY,
 * EEXIST, ENOEXEC...) means the permission check passed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static bool permission_error(int e)
{
	return e == EACCES || e == EPERM || e == EROFS || e == EBUSY;
}

static int try_access(const char *acc, const char *path)
{
	struct stat st;
	bool is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	if (!strcmp(acc, "read-metadata"))
		return stat(path, &st) == 0 ? 0 : errno;
	if (!strcmp(acc, "read")) {
		if (is_dir) {
			DIR *d = opendir(path);
			if (!d)
				return errno;
			closedir(d);
			return 0;
		}
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return errno;
		char c;
		int e = read(fd, &c, 1) < 0 ? errno : 0;
		close(fd);
		return e;
	}
	if (!strcmp(acc, "write")) {
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	}
	if (!strcmp(acc, "create")) {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			return errno == EEXIST ? 0 : errno;
		close(fd);
		return 0;
	}
	if (!strcmp(acc, "delete")) {
		/* The name itself: a symlink is unlinked, whatever it leads to. */
		is_dir = lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
		if ((is_dir ? rmdir(path) : unlink(path)) == 0)
			return 0;
		return errno == ENOTEMPTY || errno == EEXIST ? 0 : errno;
	}
	if (!strcmp(acc, "exec")) {
		pid_t p = fork();
		if (p == 0) {
			char *argv[] = { (char *)path, NULL };
			execv(path, argv);
			_exit(errno == EACCES || errno == EPERM ? 100 : 0);
		}
		int status = 0;
		if (p < 0 || waitpid(p, &status, 0) < 0)
			return EIO;
		return WIFEXITED(status) && WEXITSTATUS(status) == 100 ? EACCES : 0;
	}
	return EINVAL;
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: lnx_probe < QUERIES\n");
		return 2;
	}
	FILE *f = stdin;
	char line[4200], acc[32], path[4096];
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%31s %4095[^\n]", acc, path) != 2)
			continue;
		int e = try_access(acc, path);
		if (e == 0 || !permission_error(e))
			printf("%s %s allowed\n", acc, path);
		else
			printf("%s %s denied %s\n", acc, path, strerror(e));
	}
	return 0;
}
