/*
 * cpt.c - loading and querying the proxy rule table (see cpt.h and
 * docs/proxy-table.md).
 *
 * All distrust of the file is spent in cpt_load_mem(): after it succeeds,
 * every offset, index, string and probe sequence in the table has been
 * checked, so the lookup functions index without further bounds checks and
 * without allocating. The lookup cost is bounded by the table itself (at
 * most max_probe+1 slots per key, one key per label of the host), never by
 * what a client sends.
 */
#include "cpt.h"
#include "cpt_format.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cpt_effect_name(enum cpt_effect e)
{
	switch (e) {
	case CPT_ALLOW: return "allow";
	case CPT_DENY: return "deny";
	case CPT_PROTECT: return "protect";
	}
	return "?";
}

const char *cpt_errcode_name(enum cpt_errcode c)
{
	switch (c) {
	case CPT_E_OK: return "ok";
	case CPT_E_IO: return "i/o error";
	case CPT_E_TRUNCATED: return "truncated";
	case CPT_E_MAGIC: return "bad magic";
	case CPT_E_VERSION: return "unsupported version";
	case CPT_E_CHECKSUM: return "checksum mismatch";
	case CPT_E_CORRUPT: return "corrupt";
	}
	return "?";
}

static bool fail(struct cpt_error *err, enum cpt_errcode code, uint64_t off,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static bool fail(struct cpt_error *err, enum cpt_errcode code, uint64_t off,
		 const char *fmt, ...)
{
	va_list ap;
	err->code = code;
	err->sys_errno = 0;
	err->offset = off;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return false;
}

/* A NUL-terminated string must start at `off` and end inside the pool. */
static bool pool_str_ok(const struct cpt_table *t, uint32_t off)
{
	return off < t->pool_size && memchr(t->pool + off, '\0', t->pool_size - off) != NULL;
}

static bool zero_bytes(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static const uint8_t *slot_at(const struct cpt_table *t, uint32_t i)
{
	return t->slots + (size_t)i * CPT_SLOT_SIZE;
}

static const uint8_t *rule_at(const struct cpt_table *t, uint32_t i)
{
	return t->rules + (size_t)i * CPT_RULE_SIZE;
}

/* The slot holding (kind, key), or NULL. Probes at most max_probe+1 slots. */
static const uint8_t *find_slot_h(const struct cpt_table *t, uint64_t h, unsigned kind,
				  const void *key, size_t len)
{
	/* The loader checked these (check_header): the mask needs a power of two. */
	assert(t->nslots > 0 && (t->nslots & (t->nslots - 1)) == 0);
	uint32_t mask = t->nslots - 1;
	uint32_t i = (uint32_t)h & mask;
	for (uint32_t d = 0; d <= t->max_probe; d++, i = (i + 1) & mask) {
		const uint8_t *s = slot_at(t, i);
		if (s[CPT_S_KIND] == 0)
			return NULL;
		if (cpt_rd64(s + CPT_S_HASH) == h && s[CPT_S_KIND] == kind &&
		    cpt_rd16(s + CPT_S_KEYLEN) == len &&
		    memcmp(t->pool + cpt_rd32(s + CPT_S_KEYOFF), key, len) == 0)
			return s;
	}
	return NULL;
}

static const uint8_t *find_slot(const struct cpt_table *t, unsigned kind,
				const void *key, size_t len)
{
	if (t->nslots == 0)
		return NULL;
	return find_slot_h(t, cpt_hash(t->seed, kind, key, len), kind, key, len);
}

static bool check_header(struct cpt_table *t, const uint8_t *b, size_t size,
			 struct cpt_error *err)
{
	if (size < CPT_HDR_SIZE)
		return fail(err, CPT_E_TRUNCATED, size,
			    "truncated: table is %zu bytes, shorter than its %d-byte header", size,
			    CPT_HDR_SIZE);
	if (memcmp(b + CPT_H_MAGIC, CPT_MAGIC, 8) != 0)
		return fail(err, CPT_E_MAGIC, 0, "not a cage proxy table (bad magic)");
	unsigned version = cpt_rd16(b + CPT_H_VERSION);
	if (version != CPT_VERSION)
		return fail(err, CPT_E_VERSION, CPT_H_VERSION,
			    "table format version %u, this build reads version %d "
			    "(recompile the policy with this cagec)", version, CPT_VERSION);
	if (cpt_rd16(b + CPT_H_HDRSIZE) != CPT_HDR_SIZE)
		return fail(err, CPT_E_CORRUPT, CPT_H_HDRSIZE, "header size %u, expected %d",
			    cpt_rd16(b + CPT_H_HDRSIZE), CPT_HDR_SIZE);
	uint64_t fsize = cpt_rd64(b + CPT_H_FILESIZE);
	if (fsize > size)
		return fail(err, CPT_E_TRUNCATED, size,
			    "truncated: table is %zu bytes but its header says %llu", size,
			    (unsigned long long)fsize);
	if (fsize < size)
		return fail(err, CPT_E_CORRUPT, CPT_H_FILESIZE,
			    "table is %zu bytes but its header says %llu (trailing data)", size,
			    (unsigned long long)fsize);
	if (size < CPT_HDR_SIZE + CPT_SUM_SIZE)
		return fail(err, CPT_E_TRUNCATED, size, "table has no room for its checksum");
	uint64_t want = cpt_rd64(b + size - CPT_SUM_SIZE);
	uint64_t got = XXH3_64bits(b, size - CPT_SUM_SIZE);
	if (want != got)
		return fail(err, CPT_E_CHECKSUM, size - CPT_SUM_SIZE,
			    "checksum mismatch (stored %016llx, computed %016llx): the table is corrupted",
			    (unsigned long long)want, (unsigned long long)got);

	t->flags = cpt_rd32(b + CPT_H_FLAGS);
	if (t->flags & ~(uint32_t)CPT_F_KNOWN)
		return fail(err, CPT_E_CORRUPT, CPT_H_FLAGS, "unknown flags 0x%x", t->flags);
	if (cpt_rd16(b + CPT_H_RESERVED0) || cpt_rd32(b + CPT_H_RESERVED1))
		return fail(err, CPT_E_CORRUPT, CPT_H_RESERVED0, "reserved header field not zero");
	t->fingerprint = cpt_rd64(b + CPT_H_FINGERPRINT);
	t->seed = cpt_rd64(b + CPT_H_SEED);
	t->nrules = cpt_rd32(b + CPT_H_NRULES);
	t->nslots = cpt_rd32(b + CPT_H_NSLOTS);
	t->nlist = cpt_rd32(b + CPT_H_NLIST);
	t->nports = cpt_rd32(b + CPT_H_NPORTS);
	t->pool_size = cpt_rd32(b + CPT_H_POOLSIZE);
	t->max_probe = cpt_rd16(b + CPT_H_MAXPROBE);
	t->suffix_min = cpt_rd16(b + CPT_H_SUFMIN);
	t->suffix_max = cpt_rd16(b + CPT_H_SUFMAX);
	t->nkeys = cpt_rd32(b + CPT_H_NKEYS);

	if (t->nslots < 8 || (t->nslots & (t->nslots - 1)) != 0)
		return fail(err, CPT_E_CORRUPT, CPT_H_NSLOTS,
			    "slot count %u is not a power of two >= 8", t->nslots);
	if (t->max_probe > CPT_MAX_PROBE_LIMIT)
		return fail(err, CPT_E_CORRUPT, CPT_H_MAXPROBE, "max probe %u over the limit %u",
			    t->max_probe, CPT_MAX_PROBE_LIMIT);
	if (t->nlist != t->nrules)
		return fail(err, CPT_E_CORRUPT, CPT_H_NLIST,
			    "rule list has %u entries for %u rules", t->nlist, t->nrules);
	if (t->nkeys > t->nrules || t->nkeys >= t->nslots)
		return fail(err, CPT_E_CORRUPT, CPT_H_NKEYS, "key count %u out of range", t->nkeys);

	/* Sections follow each other; every size is a u32 count times a small
	 * record size, so the sum cannot overflow 64 bits. */
	uint64_t off_rules = CPT_HDR_SIZE;
	uint64_t off_slots = off_rules + (uint64_t)t->nrules * CPT_RULE_SIZE;
	uint64_t off_list = off_slots + (uint64_t)t->nslots * CPT_SLOT_SIZE;
	uint64_t off_ports = off_list + cpt_align8((uint64_t)t->nlist * CPT_LIST_SIZE);
	uint64_t off_pool = off_ports + cpt_align8((uint64_t)t->nports * CPT_PORT_SIZE);
	uint64_t off_sum = off_pool + cpt_align8(t->pool_size);
	if (off_sum + CPT_SUM_SIZE != size)
		return fail(err, CPT_E_CORRUPT, CPT_H_NRULES,
			    "section counts describe %llu bytes, table has %zu",
			    (unsigned long long)(off_sum + CPT_SUM_SIZE), size);
	t->rules = b + off_rules;
	t->slots = b + off_slots;
	t->list = b + off_list;
	t->ports = b + off_ports;
	t->pool = b + off_pool;
	if (!zero_bytes(b + off_list + (uint64_t)t->nlist * CPT_LIST_SIZE,
			off_ports - off_list - (uint64_t)t->nlist * CPT_LIST_SIZE) ||
	    !zero_bytes(b + off_ports + (uint64_t)t->nports * CPT_PORT_SIZE,
			off_pool - off_ports - (uint64_t)t->nports * CPT_PORT_SIZE) ||
	    !zero_bytes(b + off_pool + t->pool_size, off_sum - off_pool - t->pool_size))
		return fail(err, CPT_E_CORRUPT, off_list, "section padding not zero");
	if (t->pool_size == 0 || t->pool_size % 8 != 0 || t->pool[0] != '\0')
		return fail(err, CPT_E_CORRUPT, off_pool, "string pool not a multiple of 8 bytes starting with \"\"");
	if (!pool_str_ok(t, cpt_rd32(b + CPT_H_PROFILE)))
		return fail(err, CPT_E_CORRUPT, CPT_H_PROFILE, "profile name outside the string pool");
	return true;
}

static bool key_len_ok(unsigned kind, size_t len)
{
	switch (kind) {
	case CPT_K_NAME:
	case CPT_K_SUFFIX: return len >= 1 && len <= HOST_NAME_MAX_LEN;
	case CPT_K_ANY: return len == 0;
	case CPT_K_IPV4: return len == 4;
	case CPT_K_IPV6: return len == 16;
	}
	return false;
}

static bool check_body(struct cpt_table *t, struct cpt_error *err)
{
	uint64_t base_rules = (uint64_t)(t->rules - t->base);
	uint64_t base_slots = (uint64_t)(t->slots - t->base);
	uint64_t base_ports = (uint64_t)(t->ports - t->base);

	for (uint32_t i = 0; i < t->nports; i++) {
		const uint8_t *p = t->ports + (size_t)i * CPT_PORT_SIZE;
		if (cpt_rd16(p) > cpt_rd16(p + 2))
			return fail(err, CPT_E_CORRUPT, base_ports + (uint64_t)i * CPT_PORT_SIZE,
				    "port range %u: %u > %u", i, cpt_rd16(p), cpt_rd16(p + 2));
	}

	uint64_t ports_seen = 0;
	for (uint32_t i = 0; i < t->nrules; i++) {
		const uint8_t *r = rule_at(t, i);
		uint64_t off = base_rules + (uint64_t)i * CPT_RULE_SIZE;
		if (i > 0 && cpt_rd32(r + CPT_R_INDEX) <= cpt_rd32(r - CPT_RULE_SIZE + CPT_R_INDEX))
			return fail(err, CPT_E_CORRUPT, off, "rule %u: rule indexes not ascending", i);
		if (r[CPT_R_EFFECT] > CPT_PROTECT || r[CPT_R_KIND] < CPT_K_NAME ||
		    r[CPT_R_KIND] > CPT_K_IPV6)
			return fail(err, CPT_E_CORRUPT, off, "rule %u: bad effect or kind", i);
		if (cpt_rd16(r + CPT_R_RESERVED0) || cpt_rd32(r + CPT_R_RESERVED1))
			return fail(err, CPT_E_CORRUPT, off, "rule %u: reserved field not zero", i);
		uint32_t slot = cpt_rd32(r + CPT_R_SLOT);
		if (slot >= t->nslots || slot_at(t, slot)[CPT_S_KIND] != r[CPT_R_KIND])
			return fail(err, CPT_E_CORRUPT, off, "rule %u: bad slot %u", i, slot);
		/* Each rule's ranges follow the previous rule's, so every range
		 * belongs to exactly one rule and none lies outside the section. */
		if (cpt_rd32(r + CPT_R_PORTOFF) != ports_seen ||
		    (ports_seen += cpt_rd32(r + CPT_R_NPORTS)) > t->nports)
			return fail(err, CPT_E_CORRUPT, off, "rule %u: port ranges out of bounds", i);
		if (!pool_str_ok(t, cpt_rd32(r + CPT_R_LOC)) || !pool_str_ok(t, cpt_rd32(r + CPT_R_TEXT)))
			return fail(err, CPT_E_CORRUPT, off, "rule %u: string outside the pool", i);
	}

	if (ports_seen != t->nports)
		return fail(err, CPT_E_CORRUPT, CPT_H_NPORTS, "%u port ranges, rules use %llu",
			    t->nports, (unsigned long long)ports_seen);

	uint32_t keys = 0, flags = 0;
	uint64_t listed = 0;
	unsigned smin = 0, smax = 0;
	for (uint32_t i = 0; i < t->nslots; i++) {
		const uint8_t *s = slot_at(t, i);
		uint64_t off = base_slots + (uint64_t)i * CPT_SLOT_SIZE;
		unsigned kind = s[CPT_S_KIND];
		if (kind == 0) {
			if (!zero_bytes(s, CPT_SLOT_SIZE))
				return fail(err, CPT_E_CORRUPT, off, "slot %u: empty but not zero", i);
			continue;
		}
		uint32_t koff = cpt_rd32(s + CPT_S_KEYOFF);
		unsigned klen = cpt_rd16(s + CPT_S_KEYLEN);
		if (kind > CPT_K_IPV6 || s[CPT_S_RESERVED] || !key_len_ok(kind, klen) ||
		    (uint64_t)koff + klen > t->pool_size)
			return fail(err, CPT_E_CORRUPT, off, "slot %u: bad key", i);
		uint64_t h = cpt_hash(t->seed, kind, t->pool + koff, klen);
		if (cpt_rd64(s + CPT_S_HASH) != h)
			return fail(err, CPT_E_CORRUPT, off, "slot %u: stored hash does not match key", i);
		/* Finding the key from its home slot proves the probe sequence has
		 * no gap, stays within max_probe, and has no earlier duplicate. */
		if (find_slot_h(t, h, kind, t->pool + koff, klen) != s)
			return fail(err, CPT_E_CORRUPT, off, "slot %u: key not reachable by lookup", i);
		uint32_t loff = cpt_rd32(s + CPT_S_LISTOFF), llen = cpt_rd32(s + CPT_S_LISTLEN);
		if (llen == 0 || (uint64_t)loff + llen > t->nlist)
			return fail(err, CPT_E_CORRUPT, off, "slot %u: rule list out of bounds", i);
		for (uint32_t k = 0; k < llen; k++) {
			uint32_t e = cpt_rd32(t->list + (size_t)(loff + k) * CPT_LIST_SIZE);
			uint32_t prev = k ? cpt_rd32(t->list + (size_t)(loff + k - 1) * CPT_LIST_SIZE) : 0;
			/* Ascending entries that point back at this slot: each rule
			 * sits in exactly one list, so none can be skipped. */
			if (e >= t->nrules || (k > 0 && e <= prev) ||
			    cpt_rd32(rule_at(t, e) + CPT_R_SLOT) != i)
				return fail(err, CPT_E_CORRUPT, off, "slot %u: bad rule list entry", i);
		}
		listed += llen;
		keys++;
		if (kind == CPT_K_ANY)
			flags |= CPT_F_ANY;
		if (kind == CPT_K_SUFFIX) {
			flags |= CPT_F_SUFFIX;
			smin = smin == 0 || klen < smin ? klen : smin;
			smax = klen > smax ? klen : smax;
		}
		if (kind == CPT_K_IPV4 || kind == CPT_K_IPV6)
			flags |= CPT_F_IP;
	}
	if (keys != t->nkeys || listed != t->nrules)
		return fail(err, CPT_E_CORRUPT, CPT_H_NKEYS,
			    "%u keys listing %llu rules, header says %u keys and %u rules", keys,
			    (unsigned long long)listed, t->nkeys, t->nrules);
	if (flags != t->flags || smin != t->suffix_min || smax != t->suffix_max)
		return fail(err, CPT_E_CORRUPT, CPT_H_FLAGS, "flags or suffix lengths disagree with the keys");
	return true;
}

bool cpt_load_mem(struct cpt_table *t, const void *data, size_t size, struct cpt_error *err)
{
	struct cpt_table n = { 0 };
	n.base = data;
	n.size = size;
	if (!data && size)
		return fail(err, CPT_E_IO, 0, "no table data");
	if (!check_header(&n, data, size, err) || !check_body(&n, err))
		return false;
	*t = n;
	err->code = CPT_E_OK;
	err->msg[0] = '\0';
	return true;
}

bool cpt_open(struct cpt_table *t, const char *path, struct cpt_error *err)
{
	struct stat st;
	int e;
	memset(t, 0, sizeof(*t));
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		goto io;
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		errno = e;
		goto io;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, CPT_E_IO, 0, "not a regular file");
	}
	if ((uint64_t)st.st_size < CPT_HDR_SIZE) {
		close(fd);
		return fail(err, CPT_E_TRUNCATED, (uint64_t)st.st_size,
			    "truncated: table is %lld bytes, shorter than its %d-byte header",
			    (long long)st.st_size, CPT_HDR_SIZE);
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return fail(err, CPT_E_IO, 0, "too large to map");
	}
	size_t size = (size_t)st.st_size;
	void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	e = errno;
	close(fd);
	if (m == MAP_FAILED) {
		errno = e;
		goto io;
	}
	if (!cpt_load_mem(t, m, size, err)) {
		munmap(m, size);
		memset(t, 0, sizeof(*t));
		return false;
	}
	t->mapped = true;
	return true;
io:
	e = errno;
	fail(err, CPT_E_IO, 0, "%s", strerror(e));
	err->sys_errno = e;
	return false;
}

void cpt_close(struct cpt_table *t)
{
	if (t->mapped && t->base)
		munmap((void *)t->base, t->size);
	memset(t, 0, sizeof(*t));
}

/* Last match so far, and the first matching protect: a protect denies
 * whatever its position, and naming the first one is what ir_eval_host does. */
struct acc {
	bool any, prot;
	uint32_t best, best_prot;
};

static bool port_ok(const struct cpt_table *t, const uint8_t *r, unsigned port)
{
	uint32_t n = cpt_rd32(r + CPT_R_NPORTS);
	if (n == 0)
		return true;
	const uint8_t *p = t->ports + (size_t)cpt_rd32(r + CPT_R_PORTOFF) * CPT_PORT_SIZE;
	for (uint32_t i = 0; i < n; i++, p += CPT_PORT_SIZE)
		if (port >= cpt_rd16(p) && port <= cpt_rd16(p + 2))
			return true;
	return false;
}

static void scan(const struct cpt_table *t, const uint8_t *s, unsigned port, struct acc *a)
{
	if (!s)
		return;
	const uint8_t *l = t->list + (size_t)cpt_rd32(s + CPT_S_LISTOFF) * CPT_LIST_SIZE;
	uint32_t n = cpt_rd32(s + CPT_S_LISTLEN);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t e = cpt_rd32(l + (size_t)i * CPT_LIST_SIZE);
		/* Bounded, ascending, unique: what check_body proved on load. */
		assert(e < t->nrules && (i == 0 || e > cpt_rd32(l + (size_t)(i - 1) * CPT_LIST_SIZE)));
		const uint8_t *r = rule_at(t, e);
		if (!port_ok(t, r, port))
			continue;
		if (!a->any || e > a->best)
			a->best = e;
		a->any = true;
		if (r[CPT_R_EFFECT] == CPT_PROTECT && (!a->prot || e < a->best_prot)) {
			a->best_prot = e;
			a->prot = true;
		}
	}
}

static void finish(const struct cpt_table *t, const struct acc *a, struct cpt_result *r)
{
	if (!a->any) {
		*r = (struct cpt_result){ .allowed = false, .by_default = true, .loc = "", .text = "" };
		return;
	}
	uint32_t e = a->prot ? a->best_prot : a->best;
	const uint8_t *rec = rule_at(t, e);
	r->effect = (enum cpt_effect)rec[CPT_R_EFFECT];
	r->kind = (enum cpt_kind)rec[CPT_R_KIND];
	r->allowed = r->effect == CPT_ALLOW;
	r->by_default = false;
	r->rule_index = cpt_rd32(rec + CPT_R_INDEX);
	r->loc = (const char *)t->pool + cpt_rd32(rec + CPT_R_LOC);
	r->text = (const char *)t->pool + cpt_rd32(rec + CPT_R_TEXT);
}

void cpt_lookup(const struct cpt_table *t, const struct host_norm *h, unsigned port,
		struct cpt_result *r)
{
	struct acc a = { 0 };
	if (!t->base || port == 0 || port > 65535) {
		finish(t, &a, r);
		return;
	}
	if (h->kind == HOST_IPV4) {
		if (t->flags & CPT_F_IP)
			scan(t, find_slot(t, CPT_K_IPV4, h->addr, 4), port, &a);
	} else if (h->kind == HOST_IPV6) {
		if (t->flags & CPT_F_IP)
			scan(t, find_slot(t, CPT_K_IPV6, h->addr, 16), port, &a);
	} else {
		scan(t, find_slot(t, CPT_K_NAME, h->name, h->len), port, &a);
		/* Every proper suffix that starts after a dot: "a.b.c" tries
		 * "b.c" and "c", never "a.b.c" itself (the apex is not a
		 * strict subdomain of itself). */
		if (t->flags & CPT_F_SUFFIX)
			for (size_t i = 0; i < h->len; i++) {
				if (h->name[i] != '.')
					continue;
				size_t n = h->len - i - 1;
				if (n < t->suffix_min)
					break;
				if (n <= t->suffix_max)
					scan(t, find_slot(t, CPT_K_SUFFIX, h->name + i + 1, n), port, &a);
			}
		/* `*` is any public name: never localhost or *.localhost (as
		 * ir_host_match), which only rules naming them reach. */
		bool loopback_name = (h->len == 9 && memcmp(h->name, "localhost", 9) == 0) ||
				     (h->len > 10 && memcmp(h->name + h->len - 10, ".localhost", 10) == 0);
		if ((t->flags & CPT_F_ANY) && !loopback_name)
			scan(t, find_slot(t, CPT_K_ANY, "", 0), port, &a);
	}
	finish(t, &a, r);
}

enum host_err cpt_lookup_str(const struct cpt_table *t, const char *host, size_t len,
			     unsigned port, struct cpt_result *r)
{
	struct host_norm h;
	enum host_err e = host_normalize(host, len, &h);
	if (e != HOST_OK) {
		struct acc a = { 0 };
		finish(t, &a, r);
		return e;
	}
	cpt_lookup(t, &h, port, r);
	return HOST_OK;
}

void cpt_lookup_addr(const struct cpt_table *t, const struct sockaddr *sa,
		     struct cpt_result *r)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t v6_loop[16] = { [15] = 1 };
	struct acc a = { 0 };
	const uint8_t *addr = NULL;
	unsigned kind = 0, port = 0;
	size_t alen = 0;

	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		addr = (const uint8_t *)&in->sin_addr;
		port = ntohs(in->sin_port);
		kind = CPT_K_IPV4;
		alen = 4;
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		addr = in6->sin6_addr.s6_addr;
		port = ntohs(in6->sin6_port);
		kind = CPT_K_IPV6;
		alen = 16;
		if (memcmp(addr, mapped, 12) == 0) {
			addr += 12;
			kind = CPT_K_IPV4;
			alen = 4;
		}
	}
	if (!t->base || !addr || port == 0) {
		finish(t, &a, r);
		return;
	}
	if (t->flags & CPT_F_IP)
		scan(t, find_slot(t, kind, addr, alen), port, &a);
	bool loopback = kind == CPT_K_IPV4 ? addr[0] == 127 : memcmp(addr, v6_loop, 16) == 0;
	if (loopback)
		scan(t, find_slot(t, CPT_K_NAME, "localhost", 9), port, &a);
	finish(t, &a, r);
}

const char *cpt_profile(const struct cpt_table *t)
{
	if (!t->base)
		return "";
	return (const char *)t->pool + cpt_rd32(t->base + CPT_H_PROFILE);
}

uint64_t cpt_fingerprint(const struct cpt_table *t)
{
	return t->fingerprint;
}

uint32_t cpt_rule_count(const struct cpt_table *t)
{
	return t->nrules;
}
