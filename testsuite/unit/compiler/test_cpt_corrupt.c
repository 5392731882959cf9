/*
 * test_cpt_corrupt.c - a damaged or hostile proxy table is refused with the
 * right error, never half-loaded. Truncation at every length, every single
 * bit flip (caught by the checksum), and - with the checksum recomputed, as
 * an attacker or a buggy writer would - every header field and a set of
 * structural lies (offsets, indexes, strings, hash and probe invariants).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpt.h"
#include "cpt_format.h"
#include "cpt_testlib.h"

static struct tir T;
static uint8_t *buf;
static size_t len;

static void setup(void)
{
	const char *err = NULL;
	tir_init(&T);
	tir_add(&T, IR_ALLOW, "github.com:443");
	tir_add(&T, IR_ALLOW, "*.githubusercontent.com");
	tir_add(&T, IR_DENY, "*.evil.example:80,8000-8100");
	tir_add(&T, IR_ALLOW, "10.0.0.1:5432");
	tir_add(&T, IR_ALLOW, "[fd00::1]");
	tir_add(&T, IR_PROTECT, "secret.example");
	tir_add(&T, IR_ALLOW, "*");
	tir_add(&T, IR_DENY, "github.com:22");
	cr_assert(tir_build(&T, &err), "%s", err);
	len = T.table_len;
	buf = malloc(len + 16);
	cr_assert(buf);
	memcpy(buf, T.table, len);
}

static void teardown(void)
{
	free(buf);
	tir_free(&T);
}

TestSuite(corrupt, .init = setup, .fini = teardown);

static void reseal(uint8_t *b, size_t n)
{
	cpt_wr64(b + n - CPT_SUM_SIZE, XXH3_64bits(b, n - CPT_SUM_SIZE));
}

static enum cpt_errcode load(const uint8_t *b, size_t n, struct cpt_error *e)
{
	struct cpt_table t;
	if (cpt_load_mem(&t, b, n, e))
		return CPT_E_OK;
	cr_assert_neq(e->code, CPT_E_OK);
	cr_assert(e->msg[0] != '\0', "error without a message");
	return e->code;
}

/* Lookups and the dump must be safe on whatever the loader accepts. */
static void exercise(const uint8_t *b, size_t n)
{
	static const char *hosts[] = { "github.com", "a.githubusercontent.com", "x.evil.example",
				       "10.0.0.1", "[fd00::1]", "secret.example", "other.net",
				       "a.b.c.d.e.f.example" };
	struct cpt_table t;
	struct cpt_error e;
	if (!cpt_load_mem(&t, b, n, &e))
		return;
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		struct cpt_result r;
		cpt_lookup_str(&t, hosts[i], strlen(hosts[i]), 443, &r);
		cr_assert(r.loc && r.text);
		cr_assert(!r.allowed || !r.by_default);
	}
	FILE *null = fopen("/dev/null", "w");
	cr_assert(null);
	cpt_dump(&t, null);
	fclose(null);
}

Test(corrupt, pristine_table_loads)
{
	struct cpt_error e;
	cr_assert_eq(load(buf, len, &e), CPT_E_OK, "%s", e.msg);
}

Test(corrupt, truncated_at_every_length)
{
	struct cpt_error e;
	for (size_t n = 0; n < len; n++) {
		uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan sees any overread */
		memcpy(copy, buf, n);
		cr_assert_eq(load(copy, n, &e), CPT_E_TRUNCATED, "length %zu: %s (%s)", n,
			     cpt_errcode_name(e.code), e.msg);
		free(copy);
	}
}

Test(corrupt, trailing_bytes)
{
	struct cpt_error e;
	buf[len] = 0;
	cr_assert_eq(load(buf, len + 1, &e), CPT_E_CORRUPT, "%s", e.msg);
	cr_assert(strstr(e.msg, "trailing"), "%s", e.msg);
}

Test(corrupt, every_bit_flip_is_caught)
{
	struct cpt_error e;
	for (size_t i = 0; i < len; i++)
		for (int bit = 0; bit < 8; bit++) {
			buf[i] ^= (uint8_t)(1u << bit);
			enum cpt_errcode c = load(buf, len, &e);
			cr_assert_neq(c, CPT_E_OK, "flip of byte %zu bit %d accepted", i, bit);
			if (i >= CPT_H_FILESIZE + 8 || (i >= CPT_H_FLAGS && i < CPT_H_FILESIZE))
				cr_assert_eq(c, CPT_E_CHECKSUM, "byte %zu bit %d: %s", i, bit, e.msg);
			buf[i] ^= (uint8_t)(1u << bit);
		}
}

Test(corrupt, magic_version_checksum_messages)
{
	struct cpt_error e;
	buf[0] = 'X';
	cr_assert_eq(load(buf, len, &e), CPT_E_MAGIC);
	cr_assert(strstr(e.msg, "magic"), "%s", e.msg);
	buf[0] = 'C';
	cpt_wr16(buf + CPT_H_VERSION, 2);
	reseal(buf, len);
	cr_assert_eq(load(buf, len, &e), CPT_E_VERSION);
	cr_assert(strstr(e.msg, "version 2"), "%s", e.msg);
	cpt_wr16(buf + CPT_H_VERSION, 0);
	cr_assert_eq(load(buf, len, &e), CPT_E_VERSION);
	cpt_wr16(buf + CPT_H_VERSION, CPT_VERSION);
	cr_assert_eq(load(buf, len, &e), CPT_E_CHECKSUM);
	cr_assert(strstr(e.msg, "checksum"), "%s", e.msg);
	reseal(buf, len);
	cr_assert_eq(load(buf, len, &e), CPT_E_OK);
	const char text[] = "cage 1\nprofile x {}\n";
	cr_assert_eq(load((const uint8_t *)text, sizeof(text) - 1, &e), CPT_E_TRUNCATED);
}

/* Each header field changed and the checksum recomputed: the structural
 * checks alone must refuse it. */
Test(corrupt, every_header_field_with_valid_checksum)
{
	static const struct {
		unsigned off, width;
		enum cpt_errcode want;
	} fields[] = {
		{ CPT_H_MAGIC, 8, CPT_E_MAGIC },
		{ CPT_H_VERSION, 2, CPT_E_VERSION },
		{ CPT_H_HDRSIZE, 2, CPT_E_CORRUPT },
		{ CPT_H_FLAGS, 4, CPT_E_CORRUPT },
		{ CPT_H_FILESIZE, 8, CPT_E_OK /* TRUNCATED or CORRUPT */ },
		{ CPT_H_SEED, 8, CPT_E_CORRUPT },
		{ CPT_H_NRULES, 4, CPT_E_CORRUPT },
		{ CPT_H_NSLOTS, 4, CPT_E_CORRUPT },
		{ CPT_H_NLIST, 4, CPT_E_CORRUPT },
		{ CPT_H_NPORTS, 4, CPT_E_CORRUPT },
		{ CPT_H_POOLSIZE, 4, CPT_E_CORRUPT },
		{ CPT_H_MAXPROBE, 2, CPT_E_OK /* only a smaller bound is wrong */ },
		{ CPT_H_SUFMIN, 2, CPT_E_CORRUPT },
		{ CPT_H_SUFMAX, 2, CPT_E_CORRUPT },
		{ CPT_H_RESERVED0, 2, CPT_E_CORRUPT },
		{ CPT_H_NKEYS, 4, CPT_E_CORRUPT },
		{ CPT_H_RESERVED1, 4, CPT_E_CORRUPT },
	};
	static const uint64_t deltas[] = { 1, 2, 0x80, 0xffffffffu, 0x100000000ull };
	uint8_t *c = malloc(len);
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
		for (size_t d = 0; d < sizeof(deltas) / sizeof(deltas[0]); d++) {
			struct cpt_error e;
			memcpy(c, buf, len);
			uint8_t *p = c + fields[f].off;
			uint64_t v = fields[f].width == 2 ? cpt_rd16(p)
				     : fields[f].width == 4 ? cpt_rd32(p) : cpt_rd64(p);
			v += deltas[d];
			if (fields[f].width == 2)
				cpt_wr16(p, (uint16_t)v);
			else if (fields[f].width == 4)
				cpt_wr32(p, (uint32_t)v);
			else
				cpt_wr64(p, v);
			if (memcmp(c, buf, len) == 0)
				continue; /* the delta vanished in a narrow field */
			reseal(c, len);
			enum cpt_errcode got = load(c, len, &e);
			if (fields[f].off == CPT_H_FILESIZE)
				cr_assert(got == CPT_E_TRUNCATED || got == CPT_E_CORRUPT,
					  "filesize +%llu: %s", (unsigned long long)deltas[d], e.msg);
			else if (fields[f].off == CPT_H_MAXPROBE)
				cr_assert(got == CPT_E_OK || got == CPT_E_CORRUPT);
			else
				cr_assert_eq(got, fields[f].want, "field at %u +%llu: %s (%s)",
					     fields[f].off, (unsigned long long)deltas[d],
					     cpt_errcode_name(got), e.msg);
			exercise(c, len);
		}
	free(c);
}

/* Offsets of the sections of the fixture table, from its header. */
struct layout {
	size_t rules, slots, list, ports, pool;
	uint32_t nrules, nslots, nports, pool_size;
};

static struct layout layout_of(const uint8_t *b)
{
	struct layout l;
	l.nrules = cpt_rd32(b + CPT_H_NRULES);
	l.nslots = cpt_rd32(b + CPT_H_NSLOTS);
	l.nports = cpt_rd32(b + CPT_H_NPORTS);
	l.pool_size = cpt_rd32(b + CPT_H_POOLSIZE);
	l.rules = CPT_HDR_SIZE;
	l.slots = l.rules + (size_t)l.nrules * CPT_RULE_SIZE;
	l.list = l.slots + (size_t)l.nslots * CPT_SLOT_SIZE;
	l.ports = l.list + cpt_align8((uint64_t)l.nrules * CPT_LIST_SIZE);
	l.pool = l.ports + cpt_align8((uint64_t)l.nports * CPT_PORT_SIZE);
	return l;
}

static size_t first_slot(const uint8_t *b, const struct layout *l, unsigned kind)
{
	for (uint32_t i = 0; i < l->nslots; i++)
		if (b[l->slots + (size_t)i * CPT_SLOT_SIZE + CPT_S_KIND] == kind)
			return l->slots + (size_t)i * CPT_SLOT_SIZE;
	cr_assert_fail("no slot of kind %u", kind);
	return 0;
}

static void expect_corrupt(uint8_t *c, const char *what)
{
	struct cpt_error e;
	reseal(c, len);
	cr_assert_eq(load(c, len, &e), CPT_E_CORRUPT, "%s: accepted or wrong error (%s)", what,
		     e.msg);
	memcpy(c, buf, len);
}

Test(corrupt, structural_lies_with_valid_checksum)
{
	uint8_t *c = malloc(len);
	memcpy(c, buf, len);
	struct layout l = layout_of(buf);
	uint8_t *r0 = c + l.rules, *r1 = c + l.rules + CPT_RULE_SIZE;
	size_t sname = first_slot(buf, &l, CPT_K_NAME), ssuf = first_slot(buf, &l, CPT_K_SUFFIX);
	size_t sempty = first_slot(buf, &l, 0);

	cpt_wr16(c + CPT_H_MAXPROBE, CPT_MAX_PROBE_LIMIT + 1);
	expect_corrupt(c, "max probe over the limit");
	cpt_wr32(r1 + CPT_R_INDEX, 0);
	expect_corrupt(c, "rule indexes not ascending");
	r0[CPT_R_EFFECT] = 3;
	expect_corrupt(c, "effect 3");
	r0[CPT_R_KIND] = 0;
	expect_corrupt(c, "kind 0");
	r0[CPT_R_KIND] = 6;
	expect_corrupt(c, "kind 6");
	cpt_wr32(r0 + CPT_R_SLOT, l.nslots);
	expect_corrupt(c, "slot out of range");
	cpt_wr32(r0 + CPT_R_SLOT, (uint32_t)((sempty - l.slots) / CPT_SLOT_SIZE));
	expect_corrupt(c, "slot points at an empty slot");
	cpt_wr32(r0 + CPT_R_PORTOFF, l.nports);
	expect_corrupt(c, "port offset past the end");
	cpt_wr32(r0 + CPT_R_NPORTS, 0xffffffffu);
	expect_corrupt(c, "port count overflow");
	cpt_wr32(r0 + CPT_R_LOC, l.pool_size);
	expect_corrupt(c, "location offset past the pool");
	cpt_wr32(r0 + CPT_R_TEXT, 0xfffffff0u);
	expect_corrupt(c, "text offset far past the pool");
	cpt_wr32(r0 + CPT_R_RESERVED1, 1);
	expect_corrupt(c, "rule reserved field");
	/* The last rule's text running to the end of the pool with no NUL. */
	uint32_t last_text = cpt_rd32(c + l.rules + (size_t)(l.nrules - 1) * CPT_RULE_SIZE + CPT_R_TEXT);
	memset(c + l.pool + last_text, 'x', l.pool_size - last_text);
	expect_corrupt(c, "unterminated last string");

	cpt_wr16(c + l.ports, 9000);
	cpt_wr16(c + l.ports + 2, 8000);
	expect_corrupt(c, "port range lo > hi");

	cpt_wr32(c + l.list, l.nrules);
	expect_corrupt(c, "list entry out of range");
	cpt_wr32(c + sname + CPT_S_LISTOFF, l.nrules);
	expect_corrupt(c, "list offset past the end");
	cpt_wr32(c + sname + CPT_S_LISTLEN, 0);
	expect_corrupt(c, "empty list");
	cpt_wr64(c + sname + CPT_S_HASH, cpt_rd64(c + sname + CPT_S_HASH) ^ 1);
	expect_corrupt(c, "stored hash wrong");
	cpt_wr16(c + sname + CPT_S_KEYLEN, 300);
	expect_corrupt(c, "name key too long");
	cpt_wr32(c + sname + CPT_S_KEYOFF, l.pool_size);
	expect_corrupt(c, "key past the pool");
	c[ssuf + CPT_S_KIND] = CPT_K_NAME;
	expect_corrupt(c, "slot kind disagrees with its rules");
	c[sempty + CPT_S_LISTLEN] = 1;
	expect_corrupt(c, "empty slot with data");
	c[sname + CPT_S_RESERVED] = 1;
	expect_corrupt(c, "slot reserved byte");

	/* Moving a key one slot on leaves a gap its probe cannot cross. */
	for (uint32_t i = 0; i < l.nslots; i++) {
		uint8_t *s = c + l.slots + (size_t)i * CPT_SLOT_SIZE;
		uint8_t *next = c + l.slots + (size_t)((i + 1) % l.nslots) * CPT_SLOT_SIZE;
		if (s[CPT_S_KIND] && !next[CPT_S_KIND] &&
		    (cpt_rd64(s + CPT_S_HASH) & (l.nslots - 1)) == i) {
			memcpy(next, s, CPT_SLOT_SIZE);
			memset(s, 0, CPT_SLOT_SIZE);
			expect_corrupt(c, "key moved off its probe sequence");
			break;
		}
	}
	/* A duplicate of a key in an empty slot after it: shadowed rules. */
	for (uint32_t i = 0; i < l.nslots; i++) {
		uint8_t *s = c + l.slots + (size_t)i * CPT_SLOT_SIZE;
		uint8_t *next = c + l.slots + (size_t)((i + 1) % l.nslots) * CPT_SLOT_SIZE;
		if (s[CPT_S_KIND] && !next[CPT_S_KIND]) {
			memcpy(next, s, CPT_SLOT_SIZE);
			cpt_wr16(c + CPT_H_MAXPROBE, CPT_MAX_PROBE_LIMIT);
			cpt_wr32(c + CPT_H_NKEYS, cpt_rd32(c + CPT_H_NKEYS) + 1);
			expect_corrupt(c, "duplicate key");
			break;
		}
	}
	/* Dropping a rule from every list: it would silently never apply. */
	{
		bool found = false;
		for (uint32_t i = 0; i < l.nslots && !found; i++) {
			uint8_t *s = c + l.slots + (size_t)i * CPT_SLOT_SIZE;
			uint32_t n = cpt_rd32(s + CPT_S_LISTLEN);
			if (s[CPT_S_KIND] && n > 1) {
				cpt_wr32(s + CPT_S_LISTLEN, n - 1);
				expect_corrupt(c, "rule missing from every list");
				found = true;
			}
		}
		cr_assert(found, "fixture has no key with two rules");
	}
	free(c);
}

/* Every byte set to a few values, checksum recomputed: whatever the loader
 * accepts must be safe to query (run this under CAGE_SANITIZE=ON). */
Test(corrupt, resealed_byte_mutations_never_crash)
{
	static const uint8_t vals[] = { 0x00, 0x01, 0x7f, 0xff };
	uint8_t *c = malloc(len);
	size_t accepted = 0, total = 0;
	for (size_t i = 0; i + CPT_SUM_SIZE < len; i++)
		for (size_t v = 0; v < sizeof(vals); v++) {
			memcpy(c, buf, len);
			if (c[i] == vals[v])
				continue;
			c[i] = vals[v];
			reseal(c, len);
			struct cpt_table t;
			struct cpt_error e;
			total++;
			if (cpt_load_mem(&t, c, len, &e))
				accepted++;
			exercise(c, len);
		}
	/* Location strings, ports and effects may legitimately change; most
	 * other bytes may not. */
	cr_assert(accepted < total / 2, "%zu of %zu mutations accepted", accepted, total);
	free(c);
}
