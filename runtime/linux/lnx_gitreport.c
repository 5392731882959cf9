/*
 * lnx_gitreport.c - finds the git repositories a run created (see
 * lnx_gitreport.h).
 */
#include "lnx_gitreport.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define GITREPORT_MAX_ENTRIES 200000
#define GITREPORT_MAX_DEPTH 40

struct walk {
	struct gitreport *g;
	size_t entries;
	bool at_start;
	FILE *out;
	unsigned found;
};

static bool born_after(const struct statx *sx, const struct timespec *t)
{
	return sx->stx_btime.tv_sec > t->tv_sec ||
	       (sx->stx_btime.tv_sec == t->tv_sec && sx->stx_btime.tv_nsec >= t->tv_nsec);
}

static bool was_there(const struct gitreport *g, const struct statx *sx)
{
	for (size_t i = 0; i < g->nbefore; i++)
		if (g->before[i].dev == makedev(sx->stx_dev_major, sx->stx_dev_minor) &&
		    g->before[i].ino == sx->stx_ino)
			return true;
	return false;
}

static void found(struct walk *w, const char *path, const struct statx *sx)
{
	struct gitreport *g = w->g;
	if (w->at_start) {
		struct gitreport_seen *v = realloc(g->before, (g->nbefore + 1) * sizeof *v);
		if (!v) {
			g->truncated = true;
			return;
		}
		v[g->nbefore].dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
		v[g->nbefore].ino = sx->stx_ino;
		g->before = v;
		g->nbefore++;
		return;
	}
	bool is_new = g->by_birth ? born_after(sx, &g->start) : !was_there(g, sx);
	if (!is_new)
		return;
	if (w->found++ == 0)
		fprintf(w->out, "cagerun: git repositories this run created (their config and hooks "
				"were written inside the sandbox; check them before running git there):\n");
	fprintf(w->out, "cagerun:   %s\n", path);
}

static void walk(struct walk *w, int dfd, const char *path, unsigned depth)
{
	if (depth > GITREPORT_MAX_DEPTH) {
		w->g->truncated = true;
		return;
	}
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (++w->entries > GITREPORT_MAX_ENTRIES) {
			w->g->truncated = true;
			break;
		}
		bool is_git = !strcmp(e->d_name, ".git");
		if (!is_git && e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		/* A directory the listing says is one needs no statx: the
		 * openat below refuses anything else (O_DIRECTORY, O_NOFOLLOW). */
		struct statx sx;
		if (!is_git && e->d_type == DT_DIR)
			sx.stx_mode = S_IFDIR;
		else if (statx(dirfd(d), e->d_name, AT_SYMLINK_NOFOLLOW,
			       STATX_TYPE | STATX_INO | STATX_BTIME, &sx) != 0)
			continue;
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		char *sub = malloc(len);
		if (!sub)
			break;
		snprintf(sub, len, "%s/%s", strcmp(path, "/") ? path : "", e->d_name);
		if (is_git && (S_ISDIR(sx.stx_mode) || S_ISREG(sx.stx_mode)))
			found(w, sub, &sx);
		else if (S_ISDIR(sx.stx_mode)) {
			int fd = openat(dirfd(d), e->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				walk(w, fd, sub, depth + 1);
		}
		free(sub);
	}
	closedir(d);
}

static void walk_root(struct gitreport *g, bool at_start, FILE *out)
{
	int fd = open(g->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct walk w = { g, 0, at_start, out, 0 };
	walk(&w, fd, g->root, 0);
}

void gitreport_begin(struct gitreport *g, const char *root)
{
	memset(g, 0, sizeof *g);
	/* The filesystem's own clock: timestamps are taken from the coarse
	 * one, so a fine reading could be later than a file made after it. */
	clock_gettime(CLOCK_REALTIME_COARSE, &g->start);
	g->root = strdup(root);
	if (!g->root)
		return;
	struct statx sx;
	g->by_birth = statx(AT_FDCWD, root, 0, STATX_BTIME, &sx) == 0 &&
		      (sx.stx_mask & STATX_BTIME);
	if (!g->by_birth)
		walk_root(g, true, NULL);
}

void gitreport_end(struct gitreport *g, FILE *out)
{
	if (!g->root)
		return;
	walk_root(g, false, out);
	if (g->truncated)
		fprintf(out, "cagerun: (%s is too large or too deep to look through whole for new git "
			     "repositories)\n",
			g->root);
}

void gitreport_free(struct gitreport *g)
{
	free(g->root);
	free(g->before);
	memset(g, 0, sizeof *g);
}
