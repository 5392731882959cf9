/*
 * pf_read.c - the bytes of a plan artifact to a struct pf_plan, trusting
 * none of them (layout in pf_format.h, docs/plan-format.md).
 *
 * The checksum is verified before anything else is read, but it only
 * catches accidents: everything after it is bounds-checked as if the
 * file were hostile. A count is accepted only when the bytes left could
 * hold that many of its smallest element, so no allocation exceeds the
 * file's own size; every rule and node index must point inside the plan.
 * On a false return nothing in the plan is to be used: arrays are not
 * zeroed, as every element is written when the whole file reads.
 */
#include "pf.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <xxhash.h>

#include "pf_format.h"

struct rbuf {
	struct arena *a;
	const uint8_t *b;
	size_t len, off;
	/* Where the strings are copied, one block for the file: a string of
	 * n bytes takes n + 4 bytes of the file and n + 1 of the pool, so a
	 * pool as long as the file holds them all. */
	char *pool;
	size_t pool_used, pool_cap;
	bool bad;
	char *err;
	size_t errlen;
};

static void bad(struct rbuf *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(struct rbuf *r, const char *fmt, ...)
{
	if (r->bad)
		return;
	r->bad = true;
	int n = snprintf(r->err, r->errlen, "byte %zu: ", r->off);
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static inline const uint8_t *take(struct rbuf *r, size_t n)
{
	if (r->bad)
		return NULL;
	if (n > r->len - r->off) {
		bad(r, "truncated (%zu bytes wanted, %zu left)", n, r->len - r->off);
		return NULL;
	}
	const uint8_t *p = r->b + r->off;
	r->off += n;
	return p;
}

static inline uint8_t r8(struct rbuf *r)
{
	const uint8_t *p = take(r, 1);
	return p ? p[0] : 0;
}

static inline uint16_t r16(struct rbuf *r)
{
	const uint8_t *p = take(r, 2);
	return p ? pf_rd16(p) : 0;
}

static inline uint32_t r32(struct rbuf *r)
{
	const uint8_t *p = take(r, 4);
	return p ? pf_rd32(p) : 0;
}

static inline uint64_t r64(struct rbuf *r)
{
	const uint8_t *p = take(r, 8);
	return p ? pf_rd64(p) : 0;
}

static const char *rstr(struct rbuf *r)
{
	uint32_t n = r32(r);
	if (n > PF_MAX_STR) {
		bad(r, "string of %u bytes (at most %u)", n, PF_MAX_STR);
		return "";
	}
	const uint8_t *p = take(r, n);
	if (!p)
		return "";
	if (memchr(p, '\0', n)) {
		bad(r, "string holds a NUL byte");
		return "";
	}
	assert(r->pool_cap - r->pool_used > n);
	char *s = r->pool + r->pool_used;
	memcpy(s, p, n);
	s[n] = '\0';
	r->pool_used += (size_t)n + 1;
	return s;
}

/* A count of elements of at least `min` bytes each, and room for them. */
static void *rcount(struct rbuf *r, size_t min, size_t elem, size_t *n)
{
	uint32_t c = r32(r);
	*n = 0;
	if (r->bad)
		return NULL;
	if ((uint64_t)c * min > r->len - r->off) {
		bad(r, "count %u does not fit in the %zu bytes left", c, r->len - r->off);
		return NULL;
	}
	*n = c;
	return c ? arena_alloc_raw(r->a, (size_t)c * elem) : NULL;
}

static uint32_t rrule(struct rbuf *r, uint32_t nrules, bool none_ok)
{
	uint32_t i = r32(r);
	if ((i == PF_NONE && !none_ok) || (i != PF_NONE && i >= nrules))
		bad(r, "rule index %u out of range (%u rules)", i, nrules);
	return i;
}

static struct pf_rule *rrules(struct rbuf *r, uint32_t nrules, size_t *n)
{
	struct pf_rule *v = rcount(r, 12, sizeof *v, n);
	for (size_t i = 0; i < *n && !r->bad; i++) {
		v[i].orig = rrule(r, nrules, false);
		v[i].text = rstr(r);
		size_t ne;
		v[i].except = rcount(r, 4, sizeof *v[i].except, &ne);
		v[i].nexcept = (uint32_t)ne;
		for (size_t j = 0; j < ne && !r->bad; j++)
			v[i].except[j] = rstr(r);
	}
	return v;
}

static bool header(struct rbuf *r)
{
	if (r->len < PF_HDR_SIZE + PF_SUM_SIZE) {
		bad(r, "truncated: %zu bytes is shorter than a header and checksum", r->len);
		return false;
	}
	if (r->len > PF_MAX_FILE) {
		bad(r, "%zu bytes is larger than any plan (%u)", r->len, PF_MAX_FILE);
		return false;
	}
	if (memcmp(r->b + PF_H_MAGIC, PF_MAGIC, 8) != 0) {
		bad(r, "not a cage plan (bad magic)");
		return false;
	}
	unsigned version = pf_rd16(r->b + PF_H_VERSION);
	if (version != PF_VERSION) {
		bad(r, "plan format version %u, this build reads version %d", version, PF_VERSION);
		return false;
	}
	if (pf_rd16(r->b + PF_H_HDRSIZE) != PF_HDR_SIZE || pf_rd32(r->b + PF_H_FLAGS) != 0) {
		bad(r, "unknown header size or flags");
		return false;
	}
	uint64_t fsize = pf_rd64(r->b + PF_H_FILESIZE);
	if (fsize != r->len) {
		bad(r, "%zu bytes but the header says %llu", r->len, (unsigned long long)fsize);
		return false;
	}
	uint64_t want = pf_rd64(r->b + r->len - PF_SUM_SIZE);
	uint64_t got = XXH3_64bits(r->b, r->len - PF_SUM_SIZE);
	if (want != got) {
		bad(r, "checksum mismatch (stored %016llx, computed %016llx)",
		    (unsigned long long)want, (unsigned long long)got);
		return false;
	}
	r->off = PF_HDR_SIZE;
	r->len -= PF_SUM_SIZE; /* the body ends at the checksum */
	r->pool_cap = r->len;
	r->pool = arena_alloc_raw(r->a, r->pool_cap);
	return true;
}

bool pf_read(struct arena *a, const uint8_t *buf, size_t len, struct pf_plan *p, char *err,
	     size_t errlen)
{
	memset(p, 0, sizeof *p);
	struct rbuf r = { .a = a, .b = buf, .len = len, .err = err, .errlen = errlen };
	if (!header(&r))
		return false;
	struct pf_key *k = &p->key;
	k->fingerprint = r64(&r);
	k->digest_lo = r64(&r);
	k->digest_hi = r64(&r);
	k->uid = r32(&r);
	k->home = rstr(&r);
	k->cwd = rstr(&r);
	k->profile = rstr(&r);
	k->params = rcount(&r, 8, sizeof *k->params, &k->nparams);
	for (size_t i = 0; i < k->nparams && !r.bad; i++) {
		k->params[i].name = rstr(&r);
		k->params[i].value = rstr(&r);
	}
	p->nrules = r32(&r);

	p->nodes = rcount(&r, 41, sizeof *p->nodes, &p->nnodes);
	for (size_t i = 0; i < p->nnodes && !r.bad; i++) {
		struct pf_node *n = &p->nodes[i];
		n->path = rstr(&r);
		n->flags = r8(&r);
		n->mount = r32(&r);
		n->grant = r64(&r);
		n->ll = r64(&r);
		n->block = r64(&r);
		n->rule = rrule(&r, p->nrules, true);
		n->parent = r32(&r);
		if (n->flags & ~PF_N_KNOWN)
			bad(&r, "node %zu: unknown flags 0x%x", i, n->flags);
		if (n->parent != PF_NONE && n->parent >= i)
			bad(&r, "node %zu: parent %u does not come before it", i, n->parent);
		if (n->mount >= 32 || ((n->grant | n->ll | n->block) >> 16))
			bad(&r, "node %zu: unknown mount or access bits", i);
	}
	p->mkdirs = rcount(&r, 4, sizeof *p->mkdirs, &p->nmkdirs);
	for (size_t i = 0; i < p->nmkdirs && !r.bad; i++)
		p->mkdirs[i] = rstr(&r);
	p->notes = rcount(&r, 8, sizeof *p->notes, &p->nnotes);
	for (size_t i = 0; i < p->nnotes && !r.bad; i++) {
		p->notes[i].rule = rrule(&r, p->nrules, true);
		p->notes[i].text = rstr(&r);
	}
	p->ports = rcount(&r, 6, sizeof *p->ports, &p->nports);
	for (size_t i = 0; i < p->nports && !r.bad; i++) {
		p->ports[i].port = r16(&r);
		p->ports[i].rule = rrule(&r, p->nrules, true);
	}
	p->guards = rcount(&r, 8, sizeof *p->guards, &p->nguards);
	for (size_t i = 0; i < p->nguards && !r.bad; i++) {
		p->guards[i].pattern = rstr(&r);
		p->guards[i].rule = rrule(&r, p->nrules, true);
	}
	p->gprof = rrules(&r, p->nrules, &p->ngprof);
	p->rprof = rrules(&r, p->nrules, &p->nrprof);
	p->ngrants = r64(&r);
	p->nmounts = r64(&r);

	p->deps = rcount(&r, 70, sizeof *p->deps, &p->ndeps);
	for (size_t i = 0; i < p->ndeps && !r.bad; i++) {
		struct pf_dep *d = &p->deps[i];
		d->kind = r8(&r);
		d->path = rstr(&r);
		d->err = (int32_t)r32(&r);
		d->dev = r64(&r);
		d->ino = r64(&r);
		d->mode = r32(&r);
		d->mtime_s = (int64_t)r64(&r);
		d->mtime_ns = (int64_t)r64(&r);
		d->ctime_s = (int64_t)r64(&r);
		d->ctime_ns = (int64_t)r64(&r);
		d->target = rstr(&r);
		uint8_t listed = r8(&r);
		d->listed = listed == 1;
		size_t ne;
		const char **names = rcount(&r, 5, sizeof *names, &ne);
		unsigned char *types = ne ? arena_alloc_raw(r.a, ne) : NULL;
		for (size_t k = 0; k < ne && !r.bad; k++) {
			types[k] = r8(&r);
			names[k] = rstr(&r);
			if (!names[k][0] || strchr(names[k], '/') || !strcmp(names[k], ".") ||
			    !strcmp(names[k], ".."))
				bad(&r, "dependency %zu: entry %zu is not a name", i, k);
			else if (k && strcmp(names[k - 1], names[k]) >= 0)
				bad(&r, "dependency %zu: entries out of order", i);
		}
		d->nentries = ne;
		d->entry_names = names;
		d->entry_types = types;
		if (listed > 1 || (listed && d->kind != PF_DEP_LIST))
			bad(&r, "dependency %zu: entries on what is not a listing", i);
		if (!listed && ne)
			bad(&r, "dependency %zu: entries without the flag", i);
		if (ne > PF_LIST_KEEP)
			bad(&r, "dependency %zu: more than %d entries", i, PF_LIST_KEEP);
		if (d->kind < 1 || d->kind > PF_DEP_KIND_MAX)
			bad(&r, "dependency %zu: unknown kind %u", i, d->kind);
		if (d->path[0] != '/')
			bad(&r, "dependency %zu: path is not absolute", i);
	}
	if (!r.bad && r.off != r.len)
		bad(&r, "%zu bytes after the last section", r.len - r.off);
	return !r.bad;
}

bool pf_key_same(const struct pf_key *x, const struct pf_key *y)
{
	if (x->fingerprint != y->fingerprint || x->digest_lo != y->digest_lo ||
	    x->digest_hi != y->digest_hi || x->uid != y->uid || strcmp(x->home, y->home) ||
	    strcmp(x->cwd, y->cwd) || strcmp(x->profile, y->profile) || x->nparams != y->nparams)
		return false;
	for (size_t i = 0; i < x->nparams; i++)
		if (strcmp(x->params[i].name, y->params[i].name) ||
		    strcmp(x->params[i].value, y->params[i].value))
			return false;
	return true;
}

void pf_key_name(const struct pf_key *k, char out[33])
{
	XXH3_state_t *s = XXH3_createState();
	XXH128_hash_t h = { 0, 0 };
	if (s && XXH3_128bits_reset(s) == XXH_OK) {
		uint8_t b[28];
		pf_wr64(b, k->fingerprint);
		pf_wr64(b + 8, k->digest_lo);
		pf_wr64(b + 16, k->digest_hi);
		pf_wr32(b + 24, k->uid);
		XXH3_128bits_update(s, b, sizeof b);
		const char *strs[] = { k->home, k->cwd, k->profile };
		for (size_t i = 0; i < 3; i++)
			XXH3_128bits_update(s, strs[i], strlen(strs[i]) + 1);
		for (size_t i = 0; i < k->nparams; i++) {
			XXH3_128bits_update(s, k->params[i].name, strlen(k->params[i].name) + 1);
			XXH3_128bits_update(s, k->params[i].value, strlen(k->params[i].value) + 1);
		}
		h = XXH3_128bits_digest(s);
	}
	XXH3_freeState(s);
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.high64,
		 (unsigned long long)h.low64);
}
