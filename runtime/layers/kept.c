/*
 * kept.c - a compile kept on disk (see kept.h).
 *
 * The file: "CAGEKPT\n", a version, the request's key, what the layers
 * hold beside the policy (the one layer's real path and hash, the
 * project root, the config folder, the private cache folder and its key),
 * the policy's image (cage_policy_image), then an XXH3-64 of all before
 * it. Its name is the key, so a request finds only its own; the key
 * inside is compared too. Taking it checks, in this order: the file
 * (owner, mode, no link: the platform's read), the checksum and the
 * key, the image (pimage.c), then what the launcher's kept compile is
 * checked by (held_still: every file and path the compile looked at, the
 * private cache folder resolved again, --mode). A file that fails any of these is left
 * where it is: the compile that follows writes a good one over it.
 */
#include "kept.h"

#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "hashfeed.h"
#include "held.h"
#include "policy.h"

#define KEPT_MAGIC "CAGEKPT\n"
#define KEPT_VERSION 1u
#define KEPT_NONE 0xffffffffu

bool kept_prepare(struct kept *k, const struct layers_req *rq, char *const *envp,
		  const unsigned char *bid, size_t nbid)
{
	memset(k, 0, sizeof *k);
	if (!held_request_ok(rq) || !nbid)
		return false;
	char cwd[PATH_MAX];
	struct stat st;
	if (!getcwd(cwd, sizeof cwd) || stat(".", &st) != 0)
		return false;
	size_t no;
	unsigned char *opts = cage_options_key(rq->copts, &no);
	struct hashfeed h;
	if (!opts || !hf_init(&h, true)) {
		free(opts);
		return false;
	}
	hf_str(&h, "cage kept compile 1");
	hf_u64(&h, nbid);
	hf_bytes(&h, bid, nbid);
	hf_str(&h, rq->policy);
	hf_u64(&h, no);
	hf_bytes(&h, opts, no);
	free(opts);
	hf_str(&h, cwd);
	hf_u64(&h, (uint64_t)st.st_dev);
	hf_u64(&h, (uint64_t)st.st_ino);
	hf_u64(&h, (uint64_t)getuid());
	hf_u64(&h, (uint64_t)geteuid());
	hf_u64(&h, (uint64_t)getgid());
	size_t ne = 0;
	for (char *const *e = envp; *e; e++, ne++)
		hf_str(&h, *e);
	hf_u64(&h, ne);
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, hf_digest128(&h));
	memcpy(k->key, c.digest, sizeof k->key);
	for (size_t i = 0; i < sizeof k->key; i++)
		snprintf(k->name + 2 * i, 3, "%02x", k->key[i]);
	snprintf(k->name + 2 * sizeof k->key, sizeof k->name - 2 * sizeof k->key, ".cmp");
	k->on = true;
	return true;
}

/* ---- the file ---- */

/* s (NULL: none) as its length and bytes at *at in b, which has room. */
static void put_str(unsigned char *b, size_t *at, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : KEPT_NONE;
	memcpy(b + *at, &n, sizeof n);
	*at += sizeof n;
	if (s) {
		memcpy(b + *at, s, n);
		*at += n;
	}
}

static size_t str_room(const char *s)
{
	return sizeof(uint32_t) + (s ? strlen(s) : 0);
}

bool kept_pack(const struct kept *k, const struct layers *L, unsigned char **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!k->on || L->n != 1 || strcmp(L->v[0].kind, "policy") || L->lint || L->cmd.found ||
	    L->cmd_text || L->ignored || !L->v[0].path)
		return false;
	unsigned char *img;
	size_t nimg;
	if (!cage_policy_image(L->pol, &img, &nimg))
		return false;
	/* One buffer, the image copied once: the header, the image, the sum. */
	uint32_t version = KEPT_VERSION;
	uint64_t n64 = nimg, fp = L->v[0].fp;
	size_t len = 8 + sizeof version + sizeof k->key + str_room(L->v[0].path) + sizeof fp +
		     str_room(L->root) + str_room(L->cfgdir) + str_room(L->cache) +
		     str_room(L->cache_key) + sizeof n64 + nimg + sizeof(uint64_t);
	unsigned char *b = malloc(len);
	if (!b) {
		free(img);
		return false;
	}
	size_t at = 0;
	memcpy(b, KEPT_MAGIC, 8);
	at += 8;
	memcpy(b + at, &version, sizeof version);
	at += sizeof version;
	memcpy(b + at, k->key, sizeof k->key);
	at += sizeof k->key;
	put_str(b, &at, L->v[0].path);
	memcpy(b + at, &fp, sizeof fp);
	at += sizeof fp;
	put_str(b, &at, L->root);
	put_str(b, &at, L->cfgdir);
	put_str(b, &at, L->cache);
	put_str(b, &at, L->cache_key);
	memcpy(b + at, &n64, sizeof n64);
	at += sizeof n64;
	memcpy(b + at, img, nimg);
	at += nimg;
	free(img);
	uint64_t sum = XXH3_64bits(b, at);
	memcpy(b + at, &sum, sizeof sum);
	at += sizeof sum;
	assert(at == len);
	*out = b;
	*n = len;
	return true;
}

void kept_write(const struct kept *k, const struct kept_io *io, const unsigned char *b, size_t n)
{
	if (k->on && b)
		(void)io->write(k->name, b, n);
}

struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static bool get(struct rd *r, void *out, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		memset(out, 0, n);
		return false;
	}
	memcpy(out, r->p, n);
	r->p += n;
	return true;
}

/* A string into out (cap bytes with its NUL); NULL when none was written
 * (*none) or on a problem (r->bad). */
static const char *get_str(struct rd *r, char *out, size_t cap, bool *none)
{
	uint32_t n;
	*none = false;
	if (!get(r, &n, sizeof n))
		return NULL;
	if (n == KEPT_NONE) {
		*none = true;
		return NULL;
	}
	if (n >= cap || (size_t)(r->end - r->p) < n || memchr(r->p, '\0', n)) {
		r->bad = true;
		return NULL;
	}
	memcpy(out, r->p, n);
	out[n] = '\0';
	r->p += n;
	return out;
}

bool kept_take(struct kept *k, const struct kept_io *io, struct layers *L,
	       const struct layers_req *rq, size_t *looks, char *why, size_t whylen)
{
	memset(L, 0, sizeof *L);
	*looks = 0;
	why[0] = '\0';
	unsigned char *b;
	size_t n;
	if (!k->on)
		return false;
	if (!io->read(k->name, &b, &n, why, whylen)) {
		k->absent = !why[0];
		return false;
	}
	struct rd r = { b, b + n, false };
	char magic[8], path[PATH_MAX], root[PATH_MAX];
	uint32_t version;
	unsigned char key[sizeof k->key];
	uint64_t fp, nimg, sum;
	bool none, no_path, no_root;
	get(&r, magic, sizeof magic);
	get(&r, &version, sizeof version);
	get(&r, key, sizeof key);
	/* The header read, the checksum must still follow it. */
	if (r.bad || n < (size_t)(r.p - b) + 8 || memcmp(magic, KEPT_MAGIC, 8) ||
	    version != KEPT_VERSION || (memcpy(&sum, b + n - 8, 8), XXH3_64bits(b, n - 8) != sum)) {
		snprintf(why, whylen, "its file is not one this build wrote whole");
		free(b);
		return false;
	}
	r.end = b + n - 8;
	if (memcmp(key, k->key, sizeof key)) {
		snprintf(why, whylen, "its file is another request's");
		free(b);
		return false;
	}
	get_str(&r, path, sizeof path, &no_path);
	r.bad |= no_path; /* the layer's file is always written */
	get(&r, &fp, sizeof fp);
	get_str(&r, root, sizeof root, &no_root);
	get_str(&r, L->cfgdir, sizeof L->cfgdir, &none);
	get_str(&r, L->cache, sizeof L->cache, &none);
	get_str(&r, L->cache_key, sizeof L->cache_key, &none);
	get(&r, &nimg, sizeof nimg);
	const char *perr = NULL;
	cage_policy *pol = NULL;
	if (!r.bad && nimg == (uint64_t)(r.end - r.p))
		pol = cage_policy_adopt_image(b, (size_t)(r.p - b), (size_t)nimg, &perr);
	else
		free(b);
	if (!pol) {
		snprintf(why, whylen, "its file does not read: %s", perr ? perr : "malformed");
		memset(L, 0, sizeof *L);
		return false;
	}
	L->pol = pol;
	L->n = 1;
	L->v[0].kind = "policy";
	L->v[0].import = strdup(rq->policy);
	L->v[0].path = strdup(path);
	L->v[0].fp = fp;
	L->v[0].src = pol->ir->nfiles ? pol->ir->files[0] : NULL;
	L->root = no_root ? NULL : strdup(root);
	if (!L->v[0].import || !L->v[0].path || (!no_root && !L->root) || !L->v[0].src) {
		snprintf(why, whylen, "out of memory");
		layers_free(L);
		return false;
	}
	if (!held_still(L, rq->mode, looks, why, whylen)) {
		layers_free(L);
		return false;
	}
	return true;
}

/* ---- the recent misses ---- */

#define KEPT_RECENT_MAGIC "CAGERCT\n"
#define KEPT_RECENT_NAME "recent"

bool kept_seen(const struct kept *k, const struct kept_io *io, struct kept_recent *r)
{
	const size_t head = 8 + 4, ks = sizeof k->key;
	unsigned char *b = NULL;
	size_t n = 0;
	char why[256];
	uint32_t count = 0;
	/* A list that does not read is taken as empty: it only delays keeping. */
	if (io->read(KEPT_RECENT_NAME, &b, &n, why, sizeof why) && n >= head &&
	    !memcmp(b, KEPT_RECENT_MAGIC, 8)) {
		memcpy(&count, b + 8, 4);
		if (count > KEPT_RECENT || n != head + count * ks)
			count = 0;
	}
	bool seen = false;
	uint32_t out = 1;
	memcpy(r->b + head, k->key, ks);
	for (uint32_t i = 0; i < count; i++) {
		const unsigned char *key = b + head + i * ks;
		if (!memcmp(key, k->key, ks)) {
			seen = true;
			continue;
		}
		if (out < KEPT_RECENT)
			memcpy(r->b + head + out++ * ks, key, ks);
	}
	free(b);
	memcpy(r->b, KEPT_RECENT_MAGIC, 8);
	memcpy(r->b + 8, &out, 4);
	r->n = head + out * ks;
	return seen;
}

void kept_recent_write(const struct kept_io *io, const struct kept_recent *r)
{
	if (r->n)
		(void)io->write(KEPT_RECENT_NAME, r->b, r->n);
}
