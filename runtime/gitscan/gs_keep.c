/*
 * gs_keep.c - the kept walk's bytes (gs_keep.h).
 *
 * Layout: the magic "CAGEGSK2", then fields each ending in a NUL byte,
 * then the XXH3-64 of everything before it (8 bytes, little-endian):
 *
 *   "w" WORKSPACE   "b" "DEPTH ENTRIES" (the bounds it was walked with)
 *   "s" "SCANNED TRUNCATED"
 *   "d" PATH "ERR DEV INO MODE MTIME_S MTIME_NS CTIME_S CTIME_NS COUNT N"
 *       then N fields, "D" or "F" and a name: the relevant entries, sorted
 *                                                                   per listing
 *   "h" PATH                                                        per probe
 *   "e"
 *
 * Numbers are decimal. A record walked with other bounds is not this
 * build's walk and does not parse.
 *
 * What the discovery found (gs_found) is kept the same way, under the
 * magic "CAGEGSF1":
 *
 *   "w" WORKSPACE   "k" "KEY_HI KEY_LO"   "s" "SCANNED TRUNCATED"
 *   "i" "KIND SUBTREE" PATH WHY                                      per item
 *   "e"
 */
#include "gs_keep.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#define GSK_MAGIC "CAGEGSK2"
#define GSK_MAGIC_LEN 8
#define GSK_SUM 8
#define GSK_MAX_ITEMS ((size_t)GS_SCAN_ENTRIES + 1)
#define GSK_MAX_PATH 16384
#define GSF_MAGIC "CAGEGSF1"
/* Past what gs_find can report (repositories, worktrees and modules,
 * each with the paths its configuration names): not a record it wrote. */
#define GSF_MAX_ITEMS 65536

void gs_keep_name(const char *workspace, char out[48])
{
	char uid[24];
	snprintf(uid, sizeof uid, "%u", (unsigned)geteuid());
	XXH3_state_t *st = XXH3_createState();
	XXH128_hash_t h = { 0, 0 };
	if (st && XXH3_128bits_reset(st) == XXH_OK) {
		XXH3_128bits_update(st, "git walk\0", 9);
		XXH3_128bits_update(st, workspace, strlen(workspace) + 1);
		XXH3_128bits_update(st, uid, strlen(uid));
		h = XXH3_128bits_digest(st);
	}
	XXH3_freeState(st);
	snprintf(out, 48, "%016" PRIx64 "%016" PRIx64 ".walk", (uint64_t)h.high64,
		 (uint64_t)h.low64);
}

void gs_found_name(uint64_t key_hi, uint64_t key_lo, char out[48])
{
	/* By the inputs' digest (which holds the user), not the workspace
	 * alone: two policies run in one workspace would otherwise replace
	 * each other's record on every launch. */
	snprintf(out, 48, "%016" PRIx64 "%016" PRIx64 ".found", key_hi, key_lo);
}

bool gs_walk_relevant(const char *name, bool is_dir)
{
	return is_dir || !strcmp(name, ".git") || !strcmp(name, "HEAD") || !strcmp(name, "objects") ||
	       !strcmp(name, "refs");
}

struct wb {
	uint8_t *b;
	size_t n, cap;
};

static void put(struct wb *w, const char *s)
{
	size_t k = strlen(s) + 1;
	if (w->n + k > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		while (w->n + k > cap)
			cap *= 2;
		uint8_t *nb = realloc(w->b, cap);
		if (!nb) {
			fputs("cagerun: out of memory\n", stderr);
			abort();
		}
		w->b = nb;
		w->cap = cap;
	}
	memcpy(w->b + w->n, s, k);
	w->n += k;
}

/* A tag and its value: two fields. */
static void put_tagged(struct wb *w, const char *tag, const char *value)
{
	put(w, tag);
	put(w, value);
}

/* A record's start: its magic, which has no NUL. */
static void put_magic(struct wb *w, const char *magic)
{
	put(w, magic);
	w->n--;
}

/* The end field, then the record with its checksum, in the arena. */
static void seal(struct arena *a, struct wb *b, uint8_t **out, size_t *len)
{
	put(b, "e");
	*len = b->n + GSK_SUM;
	*out = arena_alloc_raw(a, *len);
	memcpy(*out, b->b, b->n);
	uint64_t sum = XXH3_64bits(b->b, b->n);
	for (int i = 0; i < 8; i++)
		(*out)[b->n + (size_t)i] = (uint8_t)(sum >> (8 * i));
	free(b->b);
	b->b = NULL;
}

void gs_keep_write(struct arena *a, const struct gs_walk *w, uint8_t **out, size_t *len)
{
	struct wb b = { 0 };
	char num[256];
	put_magic(&b, GSK_MAGIC);
	put_tagged(&b, "w", w->workspace);
	snprintf(num, sizeof num, "%d %d", GS_SCAN_DEPTH, GS_SCAN_ENTRIES);
	put_tagged(&b, "b", num);
	snprintf(num, sizeof num, "%zu %d", w->scanned, w->truncated ? 1 : 0);
	put_tagged(&b, "s", num);
	for (size_t i = 0; i < w->ndirs; i++) {
		const struct pf_dep *d = &w->dirs[i];
		put_tagged(&b, "d", d->path);
		snprintf(num, sizeof num,
			 "%" PRId32 " %" PRIu64 " %" PRIu64 " %" PRIu32 " %" PRId64 " %" PRId64
			 " %" PRId64 " %" PRId64 " %zu %zu",
			 d->err, d->dev, d->ino, d->mode, d->mtime_s, d->mtime_ns, d->ctime_s,
			 d->ctime_ns, w->ents[i].count, w->ents[i].n);
		put(&b, num);
		for (size_t k = 0; k < w->ents[i].n; k++) {
			put(&b, w->ents[i].is_dir[k] ? "D" : "F");
			b.n--; /* one field: the type, then the name */
			put(&b, w->ents[i].names[k]);
		}
	}
	for (size_t i = 0; i < w->nhits; i++) {
		put_tagged(&b, "h", w->hits[i]);
	}
	seal(a, &b, out, len);
}

struct rb {
	const uint8_t *p, *end;
	bool bad;
};

/* The next field (NUL-terminated, at most GSK_MAX_PATH bytes), or "" with
 * r->bad set. */
static const char *field(struct rb *r)
{
	const uint8_t *z = r->bad ? NULL : memchr(r->p, '\0', (size_t)(r->end - r->p));
	if (!z || z - r->p > GSK_MAX_PATH) {
		r->bad = true;
		return "";
	}
	const char *s = (const char *)r->p;
	r->p = z + 1;
	return s;
}

/* Exactly n decimal numbers separated by single spaces, each in range
 * of int64 (signed) or uint64 (unsigned). */
static bool numbers(const char *s, size_t n, int64_t *sv, uint64_t *uv, const bool *is_signed)
{
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && *s++ != ' ')
			return false;
		const char *start = s;
		if (is_signed[i] && *s == '-')
			s++;
		if (*s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
		if (s - start > 20)
			return false;
		char tmp[24];
		memcpy(tmp, start, (size_t)(s - start));
		tmp[s - start] = '\0';
		char *e;
		if (is_signed[i])
			sv[i] = strtoll(tmp, &e, 10);
		else
			uv[i] = strtoull(tmp, &e, 10);
		if (*e)
			return false;
	}
	return *s == '\0';
}

/* The fields of a record with this magic and a checksum that holds;
 * false else. */
static bool unseal(const uint8_t *b, size_t n, const char *magic, struct rb *r)
{
	if (n < GSK_MAGIC_LEN + GSK_SUM || memcmp(b, magic, GSK_MAGIC_LEN))
		return false;
	uint64_t sum = 0;
	for (int i = 0; i < 8; i++)
		sum |= (uint64_t)b[n - GSK_SUM + (size_t)i] << (8 * i);
	if (sum != XXH3_64bits(b, n - GSK_SUM))
		return false;
	*r = (struct rb){ b + GSK_MAGIC_LEN, b + n - GSK_SUM, false };
	return true;
}

bool gs_keep_read(struct arena *a, const uint8_t *b, size_t n, struct gs_walk *w)
{
	memset(w, 0, sizeof *w);
	struct rb r;
	if (!unseal(b, n, GSK_MAGIC, &r))
		return false;
	char bounds[64];
	snprintf(bounds, sizeof bounds, "%d %d", GS_SCAN_DEPTH, GS_SCAN_ENTRIES);
	if (strcmp(field(&r), "w"))
		return false;
	w->workspace = arena_strdup(a, field(&r));
	if (strcmp(field(&r), "b") || strcmp(field(&r), bounds) || strcmp(field(&r), "s"))
		return false;
	int64_t sv[8];
	uint64_t uv[8];
	static const bool s_types[2] = { false, false };
	if (!numbers(field(&r), 2, sv, uv, s_types) || uv[0] > GSK_MAX_ITEMS || uv[1] > 1)
		return false;
	w->scanned = (size_t)uv[0];
	w->truncated = uv[1] == 1;
	size_t dcap = 0, hcap = 0;
	for (;;) {
		const char *tag = field(&r);
		if (r.bad)
			return false;
		if (!strcmp(tag, "e"))
			break;
		if (!strcmp(tag, "d")) {
			if (w->ndirs == GSK_MAX_ITEMS)
				return false;
			const char *path = field(&r);
			static const bool d_types[10] = { true, false, false, false, true,
							  true, true, true, false, false };
			int64_t dsv[10];
			uint64_t duv[10];
			if (r.bad || path[0] != '/' || !numbers(field(&r), 10, dsv, duv, d_types) ||
			    dsv[0] < 0 || dsv[0] > INT32_MAX || duv[3] > UINT32_MAX ||
			    duv[8] > GSK_MAX_ITEMS || duv[9] > duv[8])
				return false;
			memcpy(sv, dsv, sizeof sv);
			memcpy(uv, duv, sizeof uv);
			if (w->ndirs == dcap) {
				dcap = dcap ? dcap * 2 : 64;
				w->dirs = arena_grow(a, w->dirs, w->ndirs, dcap, sizeof *w->dirs);
				w->ents = arena_grow(a, w->ents, w->ndirs, dcap, sizeof *w->ents);
			}
			struct gs_entries *en = &w->ents[w->ndirs];
			en->count = (size_t)duv[8];
			en->n = (size_t)duv[9];
			en->names = arena_alloc(a, (en->n ? en->n : 1) * sizeof *en->names);
			en->is_dir = arena_alloc(a, en->n ? en->n : 1);
			for (size_t k = 0; k < en->n; k++) {
				const char *e = field(&r);
				if (r.bad || (e[0] != 'D' && e[0] != 'F') || !e[1] || strchr(e + 1, '/') ||
				    !strcmp(e + 1, ".") || !strcmp(e + 1, "..") ||
				    !gs_walk_relevant(e + 1, e[0] == 'D') ||
				    (k && strcmp(en->names[k - 1], e + 1) >= 0))
					return false;
				en->is_dir[k] = e[0] == 'D';
				en->names[k] = arena_strdup(a, e + 1);
			}
			struct pf_dep *d = &w->dirs[w->ndirs++];
			memset(d, 0, sizeof *d);
			d->kind = PF_DEP_LIST;
			d->path = arena_strdup(a, path);
			d->target = "";
			d->err = (int32_t)sv[0];
			d->dev = uv[1];
			d->ino = uv[2];
			d->mode = (uint32_t)uv[3];
			d->mtime_s = sv[4];
			d->mtime_ns = sv[5];
			d->ctime_s = sv[6];
			d->ctime_ns = sv[7];
		} else if (!strcmp(tag, "h")) {
			if (w->nhits == GSK_MAX_ITEMS)
				return false;
			const char *path = field(&r);
			if (r.bad || path[0] != '/')
				return false;
			if (w->nhits == hcap) {
				hcap = hcap ? hcap * 2 : 16;
				w->hits = arena_grow(a, w->hits, w->nhits, hcap, sizeof *w->hits);
			}
			w->hits[w->nhits++] = arena_strdup(a, path);
		} else {
			return false;
		}
	}
	return !r.bad && r.p == r.end && w->ndirs > 0;
}

void gs_found_write(struct arena *a, const struct gs_found *f, uint8_t **out, size_t *len)
{
	struct wb b = { 0 };
	char num[64];
	put_magic(&b, GSF_MAGIC);
	put_tagged(&b, "w", f->workspace);
	snprintf(num, sizeof num, "%" PRIu64 " %" PRIu64, f->key_hi, f->key_lo);
	put_tagged(&b, "k", num);
	snprintf(num, sizeof num, "%zu %d", f->scanned, f->truncated ? 1 : 0);
	put_tagged(&b, "s", num);
	for (size_t i = 0; i < f->n; i++) {
		const struct gs_item *it = &f->v[i];
		snprintf(num, sizeof num, "%d %d", (int)it->kind, it->subtree ? 1 : 0);
		put_tagged(&b, "i", num);
		put(&b, it->path);
		put(&b, it->why);
	}
	seal(a, &b, out, len);
}

bool gs_found_read(struct arena *a, const uint8_t *b, size_t n, struct gs_found *f)
{
	memset(f, 0, sizeof *f);
	struct rb r;
	if (!unseal(b, n, GSF_MAGIC, &r) || strcmp(field(&r), "w"))
		return false;
	f->workspace = arena_strdup(a, field(&r));
	int64_t sv[2];
	uint64_t uv[2];
	static const bool u2[2] = { false, false };
	if (strcmp(field(&r), "k") || !numbers(field(&r), 2, sv, uv, u2))
		return false;
	f->key_hi = uv[0];
	f->key_lo = uv[1];
	if (strcmp(field(&r), "s") || !numbers(field(&r), 2, sv, uv, u2) ||
	    uv[0] > GSK_MAX_ITEMS || uv[1] > 1)
		return false;
	f->scanned = (size_t)uv[0];
	f->truncated = uv[1] == 1;
	size_t cap = 0;
	for (;;) {
		const char *tag = field(&r);
		if (r.bad || !strcmp(tag, "e"))
			break;
		if (strcmp(tag, "i") || f->n == GSF_MAX_ITEMS ||
		    !numbers(field(&r), 2, sv, uv, u2) || uv[0] > GS_CONFIG || uv[1] > 1)
			return false;
		const char *path = field(&r), *why = field(&r);
		if (r.bad || path[0] != '/')
			return false;
		if (f->n == cap) {
			cap = cap ? cap * 2 : 16;
			f->v = arena_grow(a, f->v, f->n, cap, sizeof *f->v);
		}
		f->v[f->n++] = (struct gs_item){ (enum gs_kind)uv[0], arena_strdup(a, path),
						  uv[1] == 1, arena_strdup(a, why) };
	}
	return !r.bad && r.p == r.end;
}
