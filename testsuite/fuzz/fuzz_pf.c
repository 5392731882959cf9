/*
 * fuzz_pf.c - libFuzzer target for the plan artifact's reader
 * (compiler/format/pf_read.c), the one parser the launcher runs on bytes
 * from disk. Built only with -DCAGE_FUZZ=ON and clang
 * (testsuite/cmake/fuzz_pf.cmake).
 *
 * Each input is read as it is and again with its size field and checksum
 * fixed up, so the fuzzer reaches the structure checks behind the
 * checksum. Whatever the reader accepts must be written back to the same
 * bytes (pf_write) and re-observing its dependencies must not crash; the
 * sanitizers catch any read outside the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "pf.h"
#include "pf_format.h"

static void one(const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	struct pf_plan p;
	char err[256];
	if (pf_read(&a, data, size, &p, err, sizeof err)) {
		uint8_t *b;
		size_t n;
		pf_write(&a, &p, &b, &n);
		if (n != size || memcmp(b, data, size) != 0)
			abort(); /* accepted bytes must be the canonical form */
		size_t bad;
		/* Bounded: at most a few hundred stats of fuzzed paths. */
		if (p.ndeps <= 256)
			(void)pf_deps_check(&a, p.deps, p.ndeps, &bad);
	}
	arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(data, size);
	if (size >= PF_HDR_SIZE + PF_SUM_SIZE && size <= PF_MAX_FILE) {
		uint8_t *c = malloc(size);
		if (!c)
			return 0;
		memcpy(c, data, size);
		memcpy(c + PF_H_MAGIC, PF_MAGIC, 8);
		pf_wr16(c + PF_H_VERSION, PF_VERSION);
		pf_wr16(c + PF_H_HDRSIZE, PF_HDR_SIZE);
		pf_wr32(c + PF_H_FLAGS, 0);
		pf_wr64(c + PF_H_FILESIZE, size);
		pf_wr64(c + size - PF_SUM_SIZE, XXH3_64bits(c, size - PF_SUM_SIZE));
		one(c, size);
		free(c);
	}
	return 0;
}
