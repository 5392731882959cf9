/*
 * kept.c - a compile kept on disk (see kept.h).
 *
 * The file: "CAGEKPT\n", a version, the request's key, the layers (each
 * its kind, its file's real path and hash, and the index of that file
 * among the policy's), the project root, the config folder, the private
 * cache folder and its key, the policy's image (cage_policy_image), then
 * an XXH3-64 of all before it. Its name is the key, so a request finds
 * only its own; the key inside is compared too. Taking it checks, in
 * this order: the file (owner, mode, no link: the platform's read), the
 * checksum and the key, the image (pimage.c), each layer against the
 * image and against what was asked or discovered, then what the
 * launcher's kept compile is checked by (held_still: every file and path
 * the compile looked at, the private cache folder resolved again, --mode)
 * and that each project layer is still approved. The looks at the disk
 * and the approval may be left to kept_confirm, which the Linux launcher
 * calls while init builds its mounts (kept.h). A file that fails any of
 * these is left where it is: the compile that follows writes a good one
 * over it.
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
#include "trust.h"

#define KEPT_MAGIC "CAGEKPT\n"
#define KEPT_VERSION 2u
#define KEPT_NONE 0xffffffffu

/* Whether L, found for rq (layers_discover), may be kept: not when the
 * command layer's file lives in a directory of this run's own, named
 * afresh each time. */
static bool layered_ok(const struct layers_req *rq, const struct layers *L)
{
	return L && L->discovered && !rq->task && !rq->lint && rq->argv && rq->argv[0] &&
	       !L->cmd_dir[0] && L->root;
}

bool kept_prepare(struct kept *k, const struct layers_req *rq, const struct layers *L,
		  char *const *envp, const unsigned char *bid, size_t nbid)
{
	memset(k, 0, sizeof *k);
	bool layered = !rq->policy;
	if ((layered ? !layered_ok(rq, L) : !held_request_ok(rq)) || !nbid)
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
	hf_str(&h, layered ? "cage kept compile 2 layers" : "cage kept compile 1");
	hf_u64(&h, nbid);
	hf_bytes(&h, bid, nbid);
	if (layered) {
		/* What the layers' discovery found: the layers in order, the
		 * command layer's text, the project's root, the config folder,
		 * the command's name (the agent and the private cache are its). */
		hf_u64(&h, L->n);
		for (size_t i = 0; i < L->n; i++) {
			hf_str(&h, L->v[i].kind);
			hf_str(&h, L->v[i].import);
		}
		hf_str(&h, L->cmd_text ? L->cmd_text : "");
		hf_str(&h, L->root);
		hf_str(&h, L->cfgdir);
		hf_str(&h, rq->argv[0]);
	} else {
		hf_str(&h, rq->policy);
	}
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
	k->layered = layered;
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

/* The index in L's policy of each layer's file into idx: false when a
 * layer has none (not bound, or not among the policy's files). */
static bool layer_files(const struct layers *L, uint32_t *idx)
{
	const struct ir_policy *ir = L->pol->ir;
	for (size_t i = 0; i < L->n; i++) {
		idx[i] = KEPT_NONE;
		for (size_t f = 0; f < ir->nfiles && idx[i] == KEPT_NONE; f++)
			if (ir->files[f] == L->v[i].src)
				idx[i] = (uint32_t)f;
		if (idx[i] == KEPT_NONE || !L->v[i].path || L->v[i].untrusted)
			return false;
	}
	return true;
}

bool kept_pack(const struct kept *k, const struct layers *L, unsigned char **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!k->on || !L->pol || L->n == 0 || L->n > LAYERS_MAX || L->ignored)
		return false;
	/* -p: its one file, nothing generated. Layers: as discovered for k
	 * (kept_prepare made sure they may be kept), a project layer among
	 * them only trusted (layer_files: a narrowed policy says what it left
	 * out at every run). */
	assert(!k->layered || (L->discovered && !L->cmd_dir[0]));
	if (!k->layered && (L->n != 1 || strcmp(L->v[0].kind, "policy") || L->linted ||
			    L->cmd.found || L->cmd_text))
		return false;
	uint32_t idx[LAYERS_MAX];
	if (!layer_files(L, idx))
		return false;
	unsigned char *img;
	size_t nimg;
	if (!cage_policy_image(L->pol, &img, &nimg))
		return false;
	/* One buffer, the image copied once: the header, the image, the sum. */
	uint32_t version = KEPT_VERSION, nl = (uint32_t)L->n;
	uint64_t n64 = nimg;
	size_t len = 8 + sizeof version + sizeof k->key + sizeof nl + str_room(L->root) +
		     str_room(L->cfgdir) + str_room(L->cache) + str_room(L->cache_key) + sizeof n64 +
		     nimg + sizeof(uint64_t);
	for (size_t i = 0; i < L->n; i++)
		len += str_room(L->v[i].kind) + str_room(L->v[i].path) + sizeof(uint64_t) +
		       sizeof(uint32_t);
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
	memcpy(b + at, &nl, sizeof nl);
	at += sizeof nl;
	for (size_t i = 0; i < L->n; i++) {
		put_str(b, &at, L->v[i].kind);
		put_str(b, &at, L->v[i].path);
		memcpy(b + at, &L->v[i].fp, sizeof L->v[i].fp);
		at += sizeof L->v[i].fp;
		memcpy(b + at, &idx[i], sizeof idx[i]);
		at += sizeof idx[i];
	}
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

/* What a take gave L, taken back: -p's L zeroed as it came; a
 * discovered L as discovery left it, for the compile that follows. */
static void untake(struct layers *L, bool layered)
{
	if (!layered) {
		layers_free(L);
		return;
	}
	cage_policy_free(L->pol);
	L->pol = NULL;
	for (size_t i = 0; i < L->n; i++) {
		free(L->v[i].path);
		L->v[i].path = NULL;
		L->v[i].fp = 0;
		L->v[i].src = NULL;
	}
	L->cache[0] = L->cache_key[0] = '\0';
	L->mode = 0;
	L->fingerprint = 0;
}

/* The layers' records of the file into L, checked against the policy
 * adopted (each layer's file among its files, with the text hashed as
 * recorded) and against the request: -p's one "policy" layer, or the
 * layers as discovered, kind for kind.
 * The records are read before the image; their strings are copied here. */
struct layer_rec {
	char kind[16];
	char *path;
	uint64_t fp;
	uint32_t idx;
};

static bool bind_layers(struct layers *L, const struct layers_req *rq, bool layered,
			struct layer_rec *lr, uint32_t nl, char *why, size_t whylen)
{
	const struct ir_policy *ir = L->pol->ir;
	if (!layered) {
		L->n = 1;
		L->v[0].kind = "policy";
		L->v[0].import = strdup(rq->policy);
		if (!L->v[0].import) {
			snprintf(why, whylen, "out of memory");
			return false;
		}
	}
	if (nl != L->n) {
		snprintf(why, whylen, "its file has %u layers where %zu were found", nl, L->n);
		return false;
	}
	for (size_t i = 0; i < L->n; i++) {
		const struct src_file *s = lr[i].idx < ir->nfiles ? ir->files[lr[i].idx] : NULL;
		const char *named = s ? (s->realpath ? s->realpath : s->name) : NULL;
		if (strcmp(lr[i].kind, L->v[i].kind) || !s || (layered && lr[i].idx == 0) ||
		    strcmp(named, lr[i].path) || XXH3_64bits(s->text, s->len) != lr[i].fp) {
			snprintf(why, whylen, "its layer %zu is not the one found", i + 1);
			return false;
		}
		assert(!L->v[i].path && !L->v[i].src); /* discovery binds no file */
		L->v[i].src = s;
		L->v[i].fp = lr[i].fp;
		L->v[i].path = lr[i].path;
		lr[i].path = NULL;
	}
	return true;
}

/* A project layer among L's is still approved (trust.h) for the text
 * compiled, which held_still has found unchanged on disk. */
static bool still_trusted(const struct layers *L, char *why, size_t whylen)
{
	for (size_t i = 0; i < L->n; i++)
		if (!strcmp(L->v[i].kind, "project") &&
		    (!L->cfgdir[0] || !trust_is_approved(L->cfgdir, L->v[i].path, L->v[i].fp))) {
			snprintf(why, whylen, "%s is no longer approved", L->v[i].path);
			return false;
		}
	return true;
}

bool kept_confirm(const struct layers *L, size_t *looks, char *why, size_t whylen)
{
	return held_inputs_still(L, looks, why, whylen) && still_trusted(L, why, whylen);
}

bool kept_take(struct kept *k, const struct kept_io *io, struct layers *L,
	       const struct layers_req *rq, bool later, size_t *looks, char *why, size_t whylen)
{
	bool layered = k->layered;
	assert(!layered || (L->discovered && !L->pol));
	if (!layered)
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
	char magic[8], root[PATH_MAX] = "", cfgdir[sizeof L->cfgdir] = "";
	uint32_t version, nl = 0;
	unsigned char key[sizeof k->key];
	uint64_t nimg, sum;
	bool none, no_root;
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
	struct layer_rec lr[LAYERS_MAX] = { { "", NULL, 0, 0 } };
	get(&r, &nl, sizeof nl);
	if (nl == 0 || nl > LAYERS_MAX)
		r.bad = true;
	char path[PATH_MAX];
	for (uint32_t i = 0; i < nl && !r.bad; i++) {
		bool no_kind, no_path;
		get_str(&r, lr[i].kind, sizeof lr[i].kind, &no_kind);
		get_str(&r, path, sizeof path, &no_path);
		get(&r, &lr[i].fp, sizeof lr[i].fp);
		get(&r, &lr[i].idx, sizeof lr[i].idx);
		r.bad |= no_kind || no_path; /* always written */
		if (!r.bad && !(lr[i].path = strdup(path)))
			r.bad = true;
	}
	get_str(&r, root, sizeof root, &no_root);
	get_str(&r, cfgdir, sizeof cfgdir, &none);
	char cache[sizeof L->cache] = "", cache_key[sizeof L->cache_key] = "";
	bool no_cache, no_key;
	get_str(&r, cache, sizeof cache, &no_cache);
	get_str(&r, cache_key, sizeof cache_key, &no_key);
	get(&r, &nimg, sizeof nimg);
	const char *perr = NULL;
	cage_policy *pol = NULL;
	if (!r.bad && nimg == (uint64_t)(r.end - r.p))
		pol = cage_policy_adopt_image(b, (size_t)(r.p - b), (size_t)nimg, &perr);
	else
		free(b);
	bool ok = pol != NULL;
	if (!ok)
		snprintf(why, whylen, "its file does not read: %s", perr ? perr : "malformed");
	/* Discovery found the root and the config folder for this request
	 * (its key holds them); -p's come from the file. */
	if (ok && layered && (no_root || strcmp(root, L->root) || strcmp(cfgdir, L->cfgdir))) {
		snprintf(why, whylen, "its file was made for another project root");
		ok = false;
	}
	if (ok) {
		L->pol = pol;
		pol = NULL;
		snprintf(L->cache, sizeof L->cache, "%s", no_cache ? "" : cache);
		snprintf(L->cache_key, sizeof L->cache_key, "%s", no_key ? "" : cache_key);
		if (!layered) {
			snprintf(L->cfgdir, sizeof L->cfgdir, "%s", none ? "" : cfgdir);
			if (!no_root && !(L->root = strdup(root))) {
				snprintf(why, whylen, "out of memory");
				ok = false;
			}
		}
	}
	ok = ok && bind_layers(L, rq, layered, lr, nl, why, whylen);
	for (uint32_t i = 0; i < nl && i < LAYERS_MAX; i++)
		free(lr[i].path);
	cage_policy_free(pol);
	if (ok && ((!later && !kept_confirm(L, looks, why, whylen)) ||
		   !held_setup_still(L, rq->mode, why, whylen)))
		ok = false;
	if (!ok)
		untake(L, layered);
	return ok;
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
