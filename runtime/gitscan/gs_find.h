/*
 * gs_find.h - the finding half of the launch-time git discovery (gs.h):
 * git directories in and around the workspace, and the paths their
 * configuration names. Only reads the filesystem; gs_rules.c turns what
 * it finds into rules.
 */
#ifndef CAGE_GS_FIND_H
#define CAGE_GS_FIND_H

#include "arena.h"
#include "gs.h"

struct gs_find_in {
	struct arena *a;        /* every string of the result */
	const char *workspace;  /* absolute, normalised */
	const char *home;       /* may be NULL */
	const char *const *roots; /* directories the profile lets the command write below */
	size_t nroots;
	const struct gs_keep *keep; /* NULL: the walk is made every time */
};

/* Fills res->v (items not yet filtered by writability), scanned and
 * truncated. False with err set: a configuration cagerun cannot read as
 * git does. */
bool gs_find(const struct gs_find_in *in, struct gs_result *res, char *err, size_t errlen);

#endif
