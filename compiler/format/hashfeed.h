/*
 * hashfeed.h - one XXH3 hash (64 or 128 bits) over many small fields:
 * the plan key's profile digest (lplan_save.c) and the layered form's
 * effective fingerprint (runtime/layers/layers.c), each fed a few bytes
 * at a time, about 20 fields per rule.
 *
 * XXH3's streaming update costs as much for 8 bytes as for hundreds, so
 * fields are gathered into a buffer and handed over in blocks. The hash
 * is that of the whole stream however it is cut: buffering changes no
 * digest. Integers go in at fixed width and strings with their NUL, so
 * no two lists hash alike by running into each other.
 */
#ifndef CAGE_HASHFEED_H
#define CAGE_HASHFEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <xxhash.h>

struct hashfeed {
	XXH3_state_t *s;
	bool wide; /* 128 bits, else 64 */
	size_t n;
	uint8_t buf[4096];
};

/* False when XXH3 has no state to give (out of memory); nothing to free. */
bool hf_init(struct hashfeed *h, bool wide);
/* A block that does not fit what is left of the buffer. */
void hf_bytes_flush(struct hashfeed *h, const void *p, size_t n);

/* Inline: a digest makes thousands of these, most of them 8 bytes. */
static inline void hf_bytes(struct hashfeed *h, const void *p, size_t n)
{
	if (n <= sizeof h->buf - h->n) {
		memcpy(h->buf + h->n, p, n);
		h->n += n;
	} else {
		hf_bytes_flush(h, p, n);
	}
}

static inline void hf_u64(struct hashfeed *h, uint64_t v)
{
	hf_bytes(h, &v, sizeof v);
}

/* The string and its NUL; NULL goes in as "". */
static inline void hf_str(struct hashfeed *h, const char *s)
{
	s = s ? s : "";
	hf_bytes(h, s, strlen(s) + 1);
}

/* The digest; the feed is done with (its state freed). */
uint64_t hf_digest64(struct hashfeed *h);
XXH128_hash_t hf_digest128(struct hashfeed *h);

#endif
