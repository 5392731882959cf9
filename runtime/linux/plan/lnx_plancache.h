/*
 * lnx_plancache.h - where cagerun keeps the plans it built, to enforce
 * again without planning while nothing they depend on has changed
 * (docs/plan-format.md, "The cache"; docs/security-model.md).
 *
 * A kept plan runs later outside any cage, so the cache is guarded like
 * the user's own keys: ROOT/cage/.plans (ROOT as for the private caches,
 * cachedir.h; a name no agent's cache key can take), the user's, mode
 * 0700, its files 0600, written whole or not at all, opened without
 * following links and checked before their bytes are read. Inside every
 * sandbox it is read-only and cannot be moved aside (lnx_mount_keep).
 */
#ifndef CAGE_LNX_PLANCACHE_H
#define CAGE_LNX_PLANCACHE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pf.h"

struct lnx_plancache {
	char dir[PATH_MAX];
};

/* Finds (creating) the cache directory. False with the reason in err:
 * then nothing is kept or reused. */
bool lnx_plancache_open(struct lnx_plancache *c, char *err, size_t errlen);

enum lnx_plancache_got { PLANCACHE_ABSENT, PLANCACHE_LOADED, PLANCACHE_REJECTED };

/* Reads the plan `name` into *out. REJECTED (why in err) when it is not
 * a regular file the user owns with mode 0600 and one link, when it is
 * a symlink, too big, or its bytes are not a valid plan (pf_read). */
enum lnx_plancache_got lnx_plancache_load(struct arena *a, const struct lnx_plancache *c,
					  const char *name, struct pf_plan *out, char *err,
					  size_t errlen);

/* The bytes of `name` (a kept walk of git discovery, gs_keep.h), with
 * the same checks as a plan's file, unparsed. */
enum lnx_plancache_got lnx_plancache_read(struct arena *a, const struct lnx_plancache *c,
					  const char *name, const uint8_t **out, size_t *n,
					  char *err, size_t errlen);

/* The same into a buffer of its own (malloc'd, the caller frees; NULL
 * unless loaded). */
enum lnx_plancache_got lnx_plancache_read_owned(const struct lnx_plancache *c, const char *name,
						uint8_t **out, size_t *outlen, char *err,
						size_t errlen);

/* Writes the plan's bytes as `name`, atomically (a private temporary
 * file renamed over whatever is there). */
bool lnx_plancache_store(const struct lnx_plancache *c, const char *name, const uint8_t *b,
			 size_t n, char *err, size_t errlen);

#endif
