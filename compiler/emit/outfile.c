/*
 * outfile.c - all-or-nothing output files (see outfile.h).
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool outfile_open(struct outfile *o, const char *path, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "'%s' is a directory", path);
		return false;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 || !(o->fp = fdopen(fd, "wb"))) {
			snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return false;
		}
		return true; /* no tmp: commit just closes */
	}
	size_t n = strlen(path);
	o->path = strdup(path);
	o->tmp = malloc(n + 16);
	if (!o->path || !o->tmp) {
		snprintf(err, errlen, "out of memory");
		outfile_abort(o);
		return false;
	}
	snprintf(o->tmp, n + 16, "%s.tmp.XXXXXX", path);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", o->tmp, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		outfile_abort(o);
		return false;
	}
	/* mkstemp makes 0600; a profile is not secret, keep the usual 0644
	 * (less the umask's bits). */
	mode_t um = umask(0);
	umask(um);
	if (fchmod(fd, 0644 & ~um) != 0 || !(o->fp = fdopen(fd, "wb"))) {
		snprintf(err, errlen, "cannot prepare '%s': %s", o->tmp, strerror(errno));
		close(fd);
		outfile_abort(o);
		return false;
	}
	return true;
}

bool outfile_commit(struct outfile *o, char *err, size_t errlen)
{
	/* No fsync: the guarantee is against failed runs (the old file stays
	 * whole), not against power loss, and fsync would cost more than the
	 * compile itself. */
	bool ok = fflush(o->fp) == 0 && !ferror(o->fp);
	int saved = errno;
	if (fclose(o->fp) != 0 && ok) {
		ok = false;
		saved = errno;
	}
	o->fp = NULL;
	if (!ok) {
		snprintf(err, errlen, "cannot write '%s': %s", o->path ? o->path : "output",
			 strerror(saved));
		outfile_abort(o);
		return false;
	}
	if (o->tmp && rename(o->tmp, o->path) != 0) {
		snprintf(err, errlen, "cannot rename to '%s': %s", o->path, strerror(errno));
		outfile_abort(o);
		return false;
	}
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
	return true;
}

void outfile_abort(struct outfile *o)
{
	if (o->fp)
		fclose(o->fp);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
}
