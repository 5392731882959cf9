/*
 * gs_keep.h - the discovery's walk of the workspace, kept between
 * launches (docs/security-model.md, "git discovered at launch").
 *
 * The walk's outcome (which directories get probed for a repository,
 * how many entries were read, whether a bound stopped it) depends only
 * on the listings of the directories it read. Each listed directory is
 * recorded as the kept plan records one (pf.h, PF_DEP_LIST: identity,
 * type, modification and change times, which move with every entry made,
 * removed or renamed in it), with the number of entries it read there
 * and the names its next steps depend on (gs_walk_relevant). While every
 * one re-observes the same, the walk would find the same; a directory
 * whose times moved is read again, and holding the same relevant names
 * it still would (a file saved or added only changes the count). Anything
 * else (a record that does not parse, another workspace, a directory
 * made, removed or renamed, a count past the bound) means the walk is
 * made again. The probes themselves, and the configuration git reads,
 * are never kept: they run on every launch.
 *
 * A walk is not kept when the time bound stopped it or when the
 * filesystem did not say an entry's type. A directory that changed too
 * recently for its times to tell (pf_changed_recently), or while it was
 * read, is recorded without times and read again on every launch.
 */
#ifndef CAGE_GS_KEEP_H
#define CAGE_GS_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "gs.h"
#include "pf.h"

/* What the walk took from one listing: how many entries it read, and
 * the names that decide what it does next (gs_walk_relevant), sorted. */
struct gs_entries {
	size_t count;
	const char **names;
	bool *is_dir;
	size_t n;
};

/* One walk: what it found and what it read. */
struct gs_walk {
	const char *workspace;
	const char **hits; /* directories probed, in the walk's order */
	size_t nhits;
	struct pf_dep *dirs; /* the listings, PF_DEP_LIST */
	struct gs_entries *ents; /* of each listing, in the same order */
	size_t ndirs;
	size_t scanned;
	bool truncated;
};

/* Whether the walk's next steps depend on an entry: a directory (it is
 * walked), or one of the names that make a repository (.git, or HEAD,
 * objects and refs together). Files with other names only count. */
bool gs_walk_relevant(const char *name, bool is_dir);

/* The name the walk of `workspace` is kept under, for this user. */
void gs_keep_name(const char *workspace, char out[48]);

/* Bytes of `w` (allocated in `a`). */
void gs_keep_write(struct arena *a, const struct gs_walk *w, uint8_t **out, size_t *len);

/* Parses a record: false on any malformation (magic, checksum, counts
 * past the walk's bounds, a field that is not a number, trailing bytes). */
bool gs_keep_read(struct arena *a, const uint8_t *b, size_t n, struct gs_walk *w);

/* What a discovery found (gs_extend's items, after its writability
 * filter), kept beside the walk for gs_assume: for the inputs whose
 * digest is key (gs_rules.c), and never trusted beyond a guess (gs.h). */
struct gs_found {
	const char *workspace;
	uint64_t key_hi, key_lo;
	struct gs_item *v; /* in the arena */
	size_t n;
	size_t scanned;
	bool truncated;
};

/* The name it is kept under, beside the walk's: by the digest of its
 * inputs (one record per user, workspace and policy). */
void gs_found_name(uint64_t key_hi, uint64_t key_lo, char out[48]);

/* Bytes of f (allocated in a). */
void gs_found_write(struct arena *a, const struct gs_found *f, uint8_t **out, size_t *len);

/* Parses a record; false on any malformation, as gs_keep_read. */
bool gs_found_read(struct arena *a, const uint8_t *b, size_t n, struct gs_found *f);

#endif
