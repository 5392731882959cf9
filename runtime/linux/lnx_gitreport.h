/*
 * lnx_gitreport.h - the session report of git repositories a run created
 * inside the workspace. A new repository's config and hooks were written
 * by the sandboxed command, so they may name commands (core.hooksPath,
 * core.fsmonitor, filter drivers) that git runs outside the cage later;
 * cagerun lists them at exit so the user looks before running git there.
 *
 * A repository is a `.git` directory or file. Where the filesystem
 * records birth times, one walk at the end finds those born during the
 * run; elsewhere the walk is also made at the start and compared. Both
 * walks are bounded (entries and depth), never follow symlinks, and do
 * not descend into a `.git`.
 */
#ifndef CAGE_LNX_GITREPORT_H
#define CAGE_LNX_GITREPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

struct gitreport {
	char *root;           /* NULL: nothing to report on */
	struct timespec start;
	bool by_birth;        /* birth times are recorded under root */
	struct gitreport_seen {
		dev_t dev;
		ino_t ino;
	} *before;            /* !by_birth: the repositories at the start */
	size_t nbefore;
	bool truncated;       /* a walk stopped at its bound */
};

/* Notes the start of a run for the directory `root` (copied). */
void gitreport_begin(struct gitreport *g, const char *root);
/* Prints one line per repository created since, to `out`. */
void gitreport_end(struct gitreport *g, FILE *out);
void gitreport_free(struct gitreport *g);

#endif
