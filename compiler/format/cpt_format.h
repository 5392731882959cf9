/*
 * cpt_format.h - the on-disk layout of the proxy rule table, shared by the
 * writer (cpt_write.c) and the reader (cpt.c). The prose
 * specification is docs/proxy-table.md; keep the two in step, and bump
 * CPT_VERSION for any change a version-1 reader would misread.
 *
 * Every field is little-endian and fixed-width, read and written byte by
 * byte (cpt_rd*, cpt_wr*) so neither side depends on host endianness or on
 * the alignment of the buffer it is given.
 */
#ifndef CAGE_CPT_FORMAT_H
#define CAGE_CPT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <xxhash.h>

/* Header: offsets of its fields. */
enum {
	CPT_H_MAGIC = 0,        /* 8 bytes "CAGECPT\0" */
	CPT_H_VERSION = 8,      /* u16 */
	CPT_H_HDRSIZE = 10,     /* u16, = CPT_HDR_SIZE */
	CPT_H_FLAGS = 12,       /* u32, CPT_F_* */
	CPT_H_FILESIZE = 16,    /* u64, whole file incl. checksum */
	CPT_H_FINGERPRINT = 24, /* u64, the policy's source fingerprint */
	CPT_H_SEED = 32,        /* u64, XXH3 seed of the hash table */
	CPT_H_NRULES = 40,      /* u32 */
	CPT_H_NSLOTS = 44,      /* u32, power of two >= 8 */
	CPT_H_NLIST = 48,       /* u32, entries in the rule list section */
	CPT_H_NPORTS = 52,      /* u32, port ranges */
	CPT_H_POOLSIZE = 56,    /* u32, bytes */
	CPT_H_PROFILE = 60,     /* u32, pool offset of the profile name */
	CPT_H_MAXPROBE = 64,    /* u16, longest probe distance in the table */
	CPT_H_SUFMIN = 66,      /* u16, shortest suffix key (bytes), 0 if none */
	CPT_H_SUFMAX = 68,      /* u16, longest suffix key */
	CPT_H_RESERVED0 = 70,   /* u16, 0 */
	CPT_H_NKEYS = 72,       /* u32, occupied slots */
	CPT_H_RESERVED1 = 76,   /* u32, 0 */
	CPT_HDR_SIZE = 80,
};

enum {
	CPT_F_ANY = 1u << 0,    /* some rule is `*` */
	CPT_F_SUFFIX = 1u << 1, /* some rule is `*.suffix` */
	CPT_F_IP = 1u << 2,     /* some rule is an IP literal */
	CPT_F_KNOWN = CPT_F_ANY | CPT_F_SUFFIX | CPT_F_IP,
};

/* Rule record, one per host rule, in policy order. */
enum {
	CPT_R_INDEX = 0,     /* u32, index in the profile's rule list */
	CPT_R_EFFECT = 4,    /* u8, enum cpt_effect */
	CPT_R_KIND = 5,      /* u8, enum cpt_kind */
	CPT_R_RESERVED0 = 6, /* u16, 0 */
	CPT_R_SLOT = 8,      /* u32, slot of its key */
	CPT_R_PORTOFF = 12,  /* u32, first port range */
	CPT_R_NPORTS = 16,   /* u32, 0 = every port */
	CPT_R_LOC = 20,      /* u32, pool offset of "file:line:col" */
	CPT_R_TEXT = 24,     /* u32, pool offset of the target as written */
	CPT_R_RESERVED1 = 28,
	CPT_RULE_SIZE = 32,
};

/* Hash slot (open addressing, linear probing). kind 0 = empty. */
enum {
	CPT_S_HASH = 0,     /* u64, cpt_hash(seed, kind, key) */
	CPT_S_KEYOFF = 8,   /* u32, pool offset of the key bytes */
	CPT_S_KEYLEN = 12,  /* u16 */
	CPT_S_KIND = 14,    /* u8, enum cpt_kind */
	CPT_S_RESERVED = 15,
	CPT_S_LISTOFF = 16, /* u32, first entry in the list section */
	CPT_S_LISTLEN = 20, /* u32, >= 1 */
	CPT_SLOT_SIZE = 24,
};

/* Longest probe distance a valid table may have. Tables are at most half
 * full, so real distances stay far below it (18 for 100,000 keys); the
 * limit bounds the work of a lookup and of validating a crafted table. */
#define CPT_MAX_PROBE_LIMIT 512u

#define CPT_LIST_SIZE 4u /* u32 rule record number */
#define CPT_PORT_SIZE 4u /* u16 lo, u16 hi */
#define CPT_SUM_SIZE 8u  /* trailing u64 XXH3-64 of everything before it */

static inline uint64_t cpt_align8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

/* The hash of a key: the kind is mixed into the seed so "example.com" as a
 * name and as a suffix never share a slot's hash. */
static inline uint64_t cpt_hash(uint64_t seed, unsigned kind, const void *key, size_t len)
{
	return XXH3_64bits_withSeed(key, len, seed ^ ((uint64_t)kind * 0x9E3779B97F4A7C15ull));
}

static inline uint16_t cpt_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static inline uint32_t cpt_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t cpt_rd64(const uint8_t *p)
{
	return (uint64_t)cpt_rd32(p) | (uint64_t)cpt_rd32(p + 4) << 32;
}

static inline void cpt_wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void cpt_wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void cpt_wr64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

#endif
