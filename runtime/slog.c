/*
 * slog.c - the session log and `cagerun denials` (slog.h).
 *
 * The directory is the user's own and private: created 0700 when missing,
 * then refused unless it is a real directory (not a symlink) owned by the
 * caller with no group or other bits, so another user can neither read a
 * session's denials nor plant a log for `cagerun denials` to print. A
 * follower learns that the run ended when the file's link count drops to
 * zero (cagerun removed it) or its process is gone (cagerun was killed).
 */
#include "slog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { SLOG_MAX_ENTRIES = 4096, SLOG_POLL_MS = 100 };

static bool slog_dir(char *out, size_t len, char *err, size_t errlen)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	const char *tmp = getenv("TMPDIR");
	int n = rt && rt[0] == '/' ? snprintf(out, len, "%s/cage", rt)
				   : snprintf(out, len, "%s/cage-%lu",
					      tmp && tmp[0] == '/' ? tmp : "/tmp",
					      (unsigned long)geteuid());
	if (n < 0 || (size_t)n >= len) {
		snprintf(err, errlen, "the session directory's path is too long");
		return false;
	}
	if (mkdir(out, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", out, strerror(errno));
		return false;
	}
	struct stat st;
	if (lstat(out, &st) != 0) {
		snprintf(err, errlen, "%s: %s", out, strerror(errno));
		return false;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		snprintf(err, errlen, "%s is not a private directory of yours (mode 0700, owned by "
				      "you, not a symlink)", out);
		return false;
	}
	return true;
}

bool slog_open(struct slog *s, const char *what, char *err, size_t errlen)
{
	s->fd = -1;
	char dir[4096];
	if (!slog_dir(dir, sizeof dir, err, errlen))
		return false;
	snprintf(s->path, sizeof s->path, "%s/session-%ld.log", dir, (long)getpid());
	/* A log left by a killed run of a process with the same pid. */
	(void)unlink(s->path);
	s->fd = open(s->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
	if (s->fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", s->path, strerror(errno));
		return false;
	}
	char head[512];
	int n = snprintf(head, sizeof head, "cagerun: session %ld: %s\n", (long)getpid(), what);
	if (n > 0 && write(s->fd, head, (size_t)n < sizeof head ? (size_t)n : sizeof head - 1) < 0) {
		/* the denials still reach the summary at exit */
	}
	return true;
}

void slog_close(struct slog *s)
{
	if (s->fd < 0)
		return;
	(void)unlink(s->path);
	close(s->fd);
	s->fd = -1;
}

/* The newest session-PID.log in dir (by modification time) into path. */
static bool newest(const char *dir, char *path, size_t len)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	time_t best = 0;
	bool found = false;
	struct dirent *e;
	for (int i = 0; i < SLOG_MAX_ENTRIES && (e = readdir(d)); i++) {
		char *end;
		if (strncmp(e->d_name, "session-", 8) != 0 || strtol(e->d_name + 8, &end, 10) <= 0 ||
		    strcmp(end, ".log") != 0)
			continue;
		char p[4400];
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (!found || st.st_mtime >= best) {
			best = st.st_mtime;
			snprintf(path, len, "%s", p);
			found = true;
		}
	}
	closedir(d);
	return found;
}

/* The log's new bytes to out, control characters but newline and tab
 * shown as '?': cagerun writes only plain lines there, and a file that a
 * policy lets the command write must not drive the user's terminal. */
static void copy_out(int fd, FILE *out)
{
	unsigned char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			if ((buf[i] < 0x20 && buf[i] != '\n' && buf[i] != '\t') || buf[i] == 0x7f)
				buf[i] = '?';
		fwrite(buf, 1, (size_t)n, out);
	}
	fflush(out);
}

int slog_show(const char *pid, bool follow, FILE *out, FILE *err)
{
	char dir[4096], e[600], path[4400];
	if (!slog_dir(dir, sizeof dir, e, sizeof e)) {
		fprintf(err, "cagerun: %s\n", e);
		return 1;
	}
	if (pid) {
		char *end;
		long v = strtol(pid, &end, 10);
		if (*end || v <= 0) {
			fprintf(err, "cagerun: denials: %s is not a process id\n", pid);
			return 1;
		}
		snprintf(path, sizeof path, "%s/session-%ld.log", dir, v);
	} else if (!newest(dir, path, sizeof path)) {
		fprintf(err, "cagerun: no cagerun session is running with a terminal (none in %s)\n",
			dir);
		return 1;
	}
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		fprintf(err, "cagerun: no session log %s%s%s\n", path, fd < 0 ? ": " : "",
			fd < 0 ? strerror(errno) : "");
		if (fd >= 0)
			close(fd);
		return 1;
	}
	const char *b = strrchr(path, '/');
	long spid = strtol(b + 9, NULL, 10);
	for (;;) {
		copy_out(fd, out);
		if (!follow)
			break;
		/* Ended: removed by cagerun, or cagerun is gone. */
		if (fstat(fd, &st) != 0 || st.st_nlink == 0 || (kill((pid_t)spid, 0) != 0 && errno == ESRCH)) {
			copy_out(fd, out);
			fprintf(out, "cagerun: session %ld ended\n", spid);
			break;
		}
		struct timespec ts = { 0, SLOG_POLL_MS * 1000000L };
		nanosleep(&ts, NULL);
	}
	fflush(out);
	close(fd);
	return 0;
}
