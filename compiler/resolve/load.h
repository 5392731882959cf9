/*
 * load.h - reading policy files from disk, safely: regular files only,
 * bounded size, no NUL bytes, close-on-exec descriptors.
 */
#ifndef CAGE_LOAD_H
#define CAGE_LOAD_H

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

#endif
