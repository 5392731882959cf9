/*
 * cpt_write.c - compiles a profile's host rules into the proxy rule table
 * (see cpt_write.h; layout in docs/proxy-table.md and cpt_format.h).
 *
 * The table keeps every rule, in policy order, with its effect: the reader
 * collects all rules matching (host, port) and lets the last one win, so no
 * decision is precomputed here that the evaluator (ir_eval_host) would make
 * differently. What the writer does decide is the key a rule is filed under:
 * the exact name, the suffix after "*.", the empty key for "*", or the raw
 * address bytes (IPv4-mapped IPv6 filed as IPv4, as host_normalize does with
 * queries). Output is deterministic: the hash seed comes from the policy
 * fingerprint, not from the clock.
 */
#include "cpt_write.h"

#include <string.h>

#include "cpt.h"
#include "cpt_format.h"
#include "host.h"

struct wslot {
	uint64_t hash;
	uint32_t keyoff, listoff, count, fill;
	uint16_t keylen;
	uint8_t kind;
	const uint8_t *key;
};

struct wrule {
	const struct ir_rule *ir;
	uint8_t kind;
	const uint8_t *key;
	size_t keylen;
	uint32_t slot;
	uint32_t portoff;
	uint32_t loc, text;
};

struct pool {
	struct arena *a;
	uint8_t *buf;
	size_t len, cap;
};

static bool pool_add(struct pool *p, const void *data, size_t n, bool nul, uint32_t *off)
{
	size_t need = p->len + n + (nul ? 1 : 0);
	if (need > UINT32_MAX)
		return false;
	if (need > p->cap) {
		size_t cap = p->cap ? p->cap : 4096;
		while (cap < need)
			cap *= 2;
		p->buf = arena_grow(p->a, p->buf, p->len, cap, 1);
		p->cap = cap;
	}
	*off = (uint32_t)p->len;
	if (n)
		memcpy(p->buf + p->len, data, n);
	p->len += n;
	if (nul)
		p->buf[p->len++] = 0;
	return true;
}

static const char *loc_text(struct arena *a, const struct loc *l)
{
	if (!l->file || !l->file->name)
		return "(no location)";
	return arena_printf(a, "%s:%u:%u", l->file->name, (unsigned)l->line, (unsigned)l->col);
}

static const char *rule_err(struct arena *a, const struct ir_rule *r, const char *what)
{
	return arena_printf(a, "%s: host rule \"%s\": %s", loc_text(a, &r->loc),
			    r->written ? r->written : (r->t.host.name ? r->t.host.name : "?"), what);
}

/* A name key must be exactly what host_normalize makes of a query, or the
 * rule could never match; refuse it instead of emitting a dead rule. */
static bool name_ok(const char *name)
{
	struct host_norm h;
	size_t n = strlen(name);
	return host_normalize(name, n, &h) == HOST_OK && h.kind == HOST_NAME && h.len == n &&
	       memcmp(h.name, name, n) == 0;
}

static bool classify(struct arena *a, const struct ir_rule *r, struct wrule *w, const char **err)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const struct ir_host *h = &r->t.host;

	switch (h->kind) {
	case IR_H_NAME:
	case IR_H_SUFFIX:
		if (!h->name || !name_ok(h->name)) {
			*err = rule_err(a, r, "not a normalised host name (lowercase LDH labels, "
					      "punycode for IDNs)");
			return false;
		}
		w->kind = h->kind == IR_H_NAME ? CPT_K_NAME : CPT_K_SUFFIX;
		w->key = (const uint8_t *)h->name;
		w->keylen = strlen(h->name);
		return true;
	case IR_H_ANY:
		w->kind = CPT_K_ANY;
		w->key = (const uint8_t *)"";
		w->keylen = 0;
		return true;
	case IR_H_IPV4:
		w->kind = CPT_K_IPV4;
		w->key = h->addr;
		w->keylen = 4;
		return true;
	case IR_H_IPV6:
		if (memcmp(h->addr, mapped, 12) == 0) {
			w->kind = CPT_K_IPV4;
			w->key = h->addr + 12;
			w->keylen = 4;
		} else {
			w->kind = CPT_K_IPV6;
			w->key = h->addr;
			w->keylen = 16;
		}
		return true;
	}
	*err = rule_err(a, r, "unknown host kind");
	return false;
}

static uint32_t insert(struct wslot *slots, uint32_t nslots, uint64_t seed, struct wrule *w,
		       uint32_t *maxprobe, bool *isnew)
{
	uint64_t h = cpt_hash(seed, w->kind, w->key, w->keylen);
	uint32_t mask = nslots - 1, i = (uint32_t)h & mask;
	for (uint32_t d = 0;; d++, i = (i + 1) & mask) {
		struct wslot *s = &slots[i];
		if (s->kind == 0) {
			s->hash = h;
			s->kind = w->kind;
			s->key = w->key;
			s->keylen = (uint16_t)w->keylen;
			if (d > *maxprobe)
				*maxprobe = d;
			*isnew = true;
			return i;
		}
		if (s->hash == h && s->kind == w->kind && s->keylen == w->keylen &&
		    memcmp(s->key, w->key, w->keylen) == 0) {
			*isnew = false;
			return i;
		}
	}
}

bool cpt_build(const struct ir_profile *prof, uint64_t fingerprint, struct arena *a,
	       uint8_t **out, size_t *outlen, const char **err)
{
	size_t n = 0, nports = 0;
	for (size_t i = 0; i < prof->nrules; i++) {
		const struct ir_rule *r = &prof->rules[i];
		if (r->tkind == IR_T_HOST && (r->access & IR_A_CONNECT)) {
			n++;
			nports += r->t.host.nports;
		}
	}
	/* Slots at most half full keeps probe runs short; 2^30 slots is far
	 * beyond any policy and keeps every count inside a u32. */
	if (n > (1u << 29) || nports > UINT32_MAX) {
		*err = "too many host rules for a proxy table";
		return false;
	}
	uint32_t nslots = 8;
	while (nslots < 2 * n)
		nslots *= 2;

	struct wrule *w = arena_alloc(a, (n ? n : 1) * sizeof(*w));
	struct wslot *slots = arena_alloc(a, (size_t)nslots * sizeof(*slots));
	struct ir_port_range *ports = arena_alloc(a, (nports ? nports : 1) * sizeof(*ports));
	struct pool pool = { .a = a };
	uint32_t off, profile_off, nkeys = 0, maxprobe = 0, flags = 0;
	uint16_t sufmin = 0, sufmax = 0;
	uint64_t seed = fingerprint ^ 0x6361676563707431ull; /* "cagecpt1" */
	size_t np = 0, k = 0;

	if (!pool_add(&pool, NULL, 0, true, &off) ||
	    !pool_add(&pool, prof->name ? prof->name : "", strlen(prof->name ? prof->name : ""),
		      true, &profile_off))
		goto toolarge;

	for (size_t i = 0; i < prof->nrules; i++) {
		const struct ir_rule *r = &prof->rules[i];
		if (r->tkind != IR_T_HOST || !(r->access & IR_A_CONNECT))
			continue;
		if (k > 0 && r->index <= w[k - 1].ir->index) {
			*err = rule_err(a, r, "rule indexes out of order");
			return false;
		}
		struct wrule *x = &w[k++];
		x->ir = r;
		if (!classify(a, r, x, err))
			return false;
		x->portoff = (uint32_t)np;
		for (size_t p = 0; p < r->t.host.nports; p++) {
			if (r->t.host.ports[p].lo > r->t.host.ports[p].hi) {
				*err = rule_err(a, r, "port range with low end above high end");
				return false;
			}
			ports[np++] = r->t.host.ports[p];
		}
		const char *lt = loc_text(a, &r->loc);
		const char *wt = r->written ? r->written : (r->t.host.name ? r->t.host.name : "");
		if (!pool_add(&pool, lt, strlen(lt), true, &x->loc) ||
		    !pool_add(&pool, wt, strlen(wt), true, &x->text))
			goto toolarge;
		bool isnew;
		x->slot = insert(slots, nslots, seed, x, &maxprobe, &isnew);
		struct wslot *s = &slots[x->slot];
		s->count++;
		if (!isnew)
			continue;
		nkeys++;
		if (!pool_add(&pool, x->key, x->keylen, x->kind == CPT_K_NAME || x->kind == CPT_K_SUFFIX,
			      &s->keyoff))
			goto toolarge;
		if (x->kind == CPT_K_ANY)
			flags |= CPT_F_ANY;
		if (x->kind == CPT_K_IPV4 || x->kind == CPT_K_IPV6)
			flags |= CPT_F_IP;
		if (x->kind == CPT_K_SUFFIX) {
			flags |= CPT_F_SUFFIX;
			if (sufmin == 0 || x->keylen < sufmin)
				sufmin = (uint16_t)x->keylen;
			if (x->keylen > sufmax)
				sufmax = (uint16_t)x->keylen;
		}
	}
	/* The pool carries its own padding, so its size has one valid value. */
	while (pool.len % 8)
		if (!pool_add(&pool, NULL, 0, true, &off))
			goto toolarge;
	if (maxprobe > CPT_MAX_PROBE_LIMIT) {
		/* Not expected with a half-empty table and XXH3; refusing beats
		 * writing a table the reader would reject. */
		*err = "proxy table hash probe sequence too long";
		return false;
	}

	uint32_t acc = 0;
	for (uint32_t i = 0; i < nslots; i++) {
		slots[i].listoff = acc;
		acc += slots[i].count;
	}

	uint64_t off_rules = CPT_HDR_SIZE;
	uint64_t off_slots = off_rules + (uint64_t)n * CPT_RULE_SIZE;
	uint64_t off_list = off_slots + (uint64_t)nslots * CPT_SLOT_SIZE;
	uint64_t off_ports = off_list + cpt_align8((uint64_t)n * CPT_LIST_SIZE);
	uint64_t off_pool = off_ports + cpt_align8((uint64_t)np * CPT_PORT_SIZE);
	uint64_t off_sum = off_pool + cpt_align8(pool.len);
	uint64_t size = off_sum + CPT_SUM_SIZE;
	if (size > SIZE_MAX)
		goto toolarge;
	uint8_t *b = arena_alloc(a, (size_t)size); /* zeroed: padding and reserved fields */

	memcpy(b + CPT_H_MAGIC, CPT_MAGIC, 8);
	cpt_wr16(b + CPT_H_VERSION, CPT_VERSION);
	cpt_wr16(b + CPT_H_HDRSIZE, CPT_HDR_SIZE);
	cpt_wr32(b + CPT_H_FLAGS, flags);
	cpt_wr64(b + CPT_H_FILESIZE, size);
	cpt_wr64(b + CPT_H_FINGERPRINT, fingerprint);
	cpt_wr64(b + CPT_H_SEED, seed);
	cpt_wr32(b + CPT_H_NRULES, (uint32_t)n);
	cpt_wr32(b + CPT_H_NSLOTS, nslots);
	cpt_wr32(b + CPT_H_NLIST, (uint32_t)n);
	cpt_wr32(b + CPT_H_NPORTS, (uint32_t)np);
	cpt_wr32(b + CPT_H_POOLSIZE, (uint32_t)pool.len);
	cpt_wr32(b + CPT_H_PROFILE, profile_off);
	cpt_wr16(b + CPT_H_MAXPROBE, (uint16_t)maxprobe);
	cpt_wr16(b + CPT_H_SUFMIN, sufmin);
	cpt_wr16(b + CPT_H_SUFMAX, sufmax);
	cpt_wr32(b + CPT_H_NKEYS, nkeys);

	for (size_t i = 0; i < n; i++) {
		uint8_t *r = b + off_rules + i * CPT_RULE_SIZE;
		const struct ir_rule *ir = w[i].ir;
		cpt_wr32(r + CPT_R_INDEX, ir->index);
		r[CPT_R_EFFECT] = ir->effect == IR_ALLOW ? CPT_ALLOW
				  : ir->effect == IR_DENY ? CPT_DENY : CPT_PROTECT;
		r[CPT_R_KIND] = w[i].kind;
		cpt_wr32(r + CPT_R_SLOT, w[i].slot);
		cpt_wr32(r + CPT_R_PORTOFF, w[i].portoff);
		cpt_wr32(r + CPT_R_NPORTS, (uint32_t)ir->t.host.nports);
		cpt_wr32(r + CPT_R_LOC, w[i].loc);
		cpt_wr32(r + CPT_R_TEXT, w[i].text);
		struct wslot *s = &slots[w[i].slot];
		cpt_wr32(b + off_list + (uint64_t)(s->listoff + s->fill++) * CPT_LIST_SIZE,
			 (uint32_t)i);
	}
	for (uint32_t i = 0; i < nslots; i++) {
		const struct wslot *s = &slots[i];
		if (!s->kind)
			continue;
		uint8_t *p = b + off_slots + (uint64_t)i * CPT_SLOT_SIZE;
		cpt_wr64(p + CPT_S_HASH, s->hash);
		cpt_wr32(p + CPT_S_KEYOFF, s->keyoff);
		cpt_wr16(p + CPT_S_KEYLEN, s->keylen);
		p[CPT_S_KIND] = s->kind;
		cpt_wr32(p + CPT_S_LISTOFF, s->listoff);
		cpt_wr32(p + CPT_S_LISTLEN, s->count);
	}
	for (size_t i = 0; i < np; i++) {
		cpt_wr16(b + off_ports + i * CPT_PORT_SIZE, ports[i].lo);
		cpt_wr16(b + off_ports + i * CPT_PORT_SIZE + 2, ports[i].hi);
	}
	memcpy(b + off_pool, pool.buf, pool.len);
	cpt_wr64(b + off_sum, XXH3_64bits(b, (size_t)off_sum));
	*out = b;
	*outlen = (size_t)size;
	return true;
toolarge:
	*err = "proxy table string pool exceeds 4 GiB";
	return false;
}

bool cpt_emit(const struct ir_policy *pol, const struct ir_profile *prof, FILE *out,
	      struct arena *a, const char **err)
{
	uint8_t *buf;
	size_t len;
	if (!cpt_build(prof, pol ? pol->fingerprint : 0, a, &buf, &len, err))
		return false;
	if (fwrite(buf, 1, len, out) != len || fflush(out) != 0) {
		*err = "write error while writing the proxy table";
		return false;
	}
	return true;
}
