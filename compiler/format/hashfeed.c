/*
 * hashfeed.c - a buffered XXH3 feed (see hashfeed.h).
 */
#include "hashfeed.h"

#include <assert.h>
#include <string.h>

bool hf_init(struct hashfeed *h, bool wide)
{
	h->s = XXH3_createState();
	h->wide = wide;
	h->n = 0;
	if (h->s && (wide ? XXH3_128bits_reset(h->s) : XXH3_64bits_reset(h->s)) == XXH_OK)
		return true;
	XXH3_freeState(h->s);
	h->s = NULL;
	return false;
}

static void flush(struct hashfeed *h, const void *p, size_t n)
{
	if (h->wide)
		(void)XXH3_128bits_update(h->s, p, n);
	else
		(void)XXH3_64bits_update(h->s, p, n);
}

void hf_bytes_flush(struct hashfeed *h, const void *p, size_t n)
{
	assert(h->s && h->n <= sizeof h->buf);
	flush(h, h->buf, h->n);
	h->n = 0;
	if (n > sizeof h->buf) {
		flush(h, p, n);
		return;
	}
	memcpy(h->buf, p, n);
	h->n = n;
}

uint64_t hf_digest64(struct hashfeed *h)
{
	assert(!h->wide);
	flush(h, h->buf, h->n);
	uint64_t d = XXH3_64bits_digest(h->s);
	XXH3_freeState(h->s);
	h->s = NULL;
	return d;
}

XXH128_hash_t hf_digest128(struct hashfeed *h)
{
	assert(h->wide);
	flush(h, h->buf, h->n);
	XXH128_hash_t d = XXH3_128bits_digest(h->s);
	XXH3_freeState(h->s);
	h->s = NULL;
	return d;
}
