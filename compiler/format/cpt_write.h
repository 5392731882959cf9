/*
 * cpt_write.h - the "table" backend: the selected profile's host rules as a
 * proxy rule table (layout in docs/proxy-table.md, reader in cpt.h).
 */
#ifndef CAGE_CPT_WRITE_H
#define CAGE_CPT_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir.h"

/* Builds the table for `prof` in memory; *out is allocated in `a`. Only
 * rules with a host target and the connect access are included. Fails (with
 * *err allocated in `a`, naming the rule's location) on a host the proxy
 * could never be asked for, e.g. a name that does not normalise to itself. */
bool cpt_build(const struct ir_profile *prof, uint64_t fingerprint, struct arena *a,
	       uint8_t **out, size_t *outlen, const char **err);

/* emit_fn for the backend registry (emit.h). */
bool cpt_emit(const struct ir_policy *pol, const struct ir_profile *prof, FILE *out,
	      struct arena *a, const char **err);

#endif
