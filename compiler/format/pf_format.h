/*
 * pf_format.h - the byte layout of the plan artifact, shared by its writer
 * (pf_write.c) and reader (pf_read.c). The prose specification is
 * docs/plan-format.md; keep the two in step, and bump PF_VERSION for any
 * change an older reader would misread.
 *
 * Fields are little-endian and fixed-width, read and written byte by byte
 * so that neither side depends on host endianness or buffer alignment.
 */
#ifndef CAGE_PF_FORMAT_H
#define CAGE_PF_FORMAT_H

#include <stdint.h>

/* Header: offsets of its fields. */
enum {
	PF_H_MAGIC = 0,     /* 8 bytes "CAGEPLN\0" */
	PF_H_VERSION = 8,   /* u16 */
	PF_H_HDRSIZE = 10,  /* u16, = PF_HDR_SIZE */
	PF_H_FLAGS = 12,    /* u32, 0 */
	PF_H_FILESIZE = 16, /* u64, whole file incl. checksum */
	PF_HDR_SIZE = 24,
};

#define PF_SUM_SIZE 8u /* trailing u64 XXH3-64 of everything before it */

/* Bounds a reader holds an artifact to, far above real plans (the
 * claude-code example: ~100 nodes, ~300 dependencies), so that a crafted
 * file cannot make it allocate without end. */
#define PF_MAX_FILE (64u << 20)
#define PF_MAX_STR 16384u /* a path (PATH_MAX) or a message */

static inline uint16_t pf_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static inline uint32_t pf_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t pf_rd64(const uint8_t *p)
{
	return (uint64_t)pf_rd32(p) | (uint64_t)pf_rd32(p + 4) << 32;
}

static inline void pf_wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void pf_wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void pf_wr64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

#endif
