/*
 * load.h - reading policy files from disk, safely: regular files only,
 * bounded size, no NUL bytes, close-on-exec descriptors.
 */
#ifndef CAGE_LOAD_H
#define CAGE_LOAD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "arena.h"

enum { LOAD_MAX_BYTES = 16 * 1024 * 1024 };

/* Reads `path` into arena memory (NUL-terminated). On failure returns false
 * and *err describes why in words a user can act on. */
bool load_read(struct arena *a, const char *path, char **text, size_t *len, const char **err);

/* Directory part of a path ("." when there is none), in the arena. */
char *load_dirname(struct arena *a, const char *path);

/* Joins dir and rel lexically and removes "." and "dir/.." pairs; used for
 * display names so diagnostics stay short and stable across machines. */
char *load_join(struct arena *a, const char *dir, const char *rel);

/* Directories and their real paths, kept while many paths below the same
 * few are resolved (the standard library's files share most of theirs):
 * realpath(3) reads every component of every path again. Strings in `a`;
 * the array is malloc'd (load_realdirs_free). */
struct load_realdirs {
	struct arena *a;
	struct load_realdir {
		const char *dir, *real;
	} *v;
	size_t n, cap;
};

/* realpath(3) through the directories kept in c: a name whose last
 * component is not a symlink (nor "." or "..") is its directory's real
 * path and that component, as realpath would make it. False with errno
 * set. */
bool load_realpath(struct load_realdirs *c, const char *path, char real[PATH_MAX]);
void load_realdirs_free(struct load_realdirs *c);

#endif
