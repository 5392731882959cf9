/*
 * cpt_testlib.h - test-only helpers for the proxy table: build an IR
 * profile from short rule strings without the front end, and a naive
 * reference decision to compare table lookups against.
 */
#ifndef CAGE_CPT_TESTLIB_H
#define CAGE_CPT_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpt.h"
#include "ir.h"

struct tir {
	struct arena a;
	struct src_file file;
	struct ir_profile prof;
	size_t cap;
	uint8_t *table;
	size_t table_len;
};

void tir_init(struct tir *t);
void tir_free(struct tir *t);
/* Adds one connect rule. `target` as in the language: "name", "*.suffix",
 * "*", "1.2.3.4", "[::1]", each optionally followed by ":80", ":80,443" or
 * ":8000-8100". Its location is line = rule number + 1, column 7. Aborts
 * the test program on a malformed target (a bug in the test). */
void tir_add(struct tir *t, enum ir_effect e, const char *target);
/* Builds the table into t->table; returns false and sets *err on failure. */
bool tir_build(struct tir *t, const char **err);

/* The reference: the last matching rule decides, the first matching protect
 * always denies, no match denies. Host given as a client would send it. */
struct tref {
	bool allowed, by_default;
	uint32_t rule;
};
void tref_eval(const struct ir_profile *p, const char *host, unsigned port, struct tref *r);

#endif
