/*
 * cachedir.h - each agent's private caches and tool homes (std/guard's
 * `cache` param, docs/cagerun.md "Private caches"): ROOT/cage/KEY, ROOT
 * being $XDG_CACHE_HOME when it is an absolute path, else ~/.cache. The
 * KEY is the agent: the command's base name in the layered form, the
 * selected profile's name with -p. cage owns the folder; the user's real
 * caches stay read-only, since programs outside the cage run what they
 * hold.
 */
#ifndef CAGE_CACHEDIR_H
#define CAGE_CACHEDIR_H

#include <stdbool.h>
#include <stddef.h>

enum { CACHEDIR_KEY_MAX = 64 };

/* A key for `name` (a command's base name, a profile's name): itself
 * when it is 1-64 of [A-Za-z0-9._-] and does not start with '.', else
 * "default". */
void cachedir_key(const char *name, char out[CACHEDIR_KEY_MAX + 1]);

/* ROOT/cage/KEY, resolved, into out. ROOT must be an existing directory
 * (it is resolved with realpath(3): the user's own choice of where caches
 * live); cage and KEY are opened one at a time without following links,
 * created 0700 when `create` and missing, and must then be directories
 * owned by the user that no one else may write (their group and other
 * bits are then cleared). Without
 * `create` a missing folder is not an error (the path is still given).
 * False with the reason in err. */
bool cachedir_resolve(const char *key, bool create, char *out, size_t cap, char *err,
		      size_t errlen);

#endif
