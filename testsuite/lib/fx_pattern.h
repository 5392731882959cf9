/*
 * fx_pattern.h - test-only: path patterns as the resolver makes them, for
 * the brute-force tests of the pattern relations and the plan's
 * candidate rules.
 */
#ifndef CAGE_FX_PATTERN_H
#define CAGE_FX_PATTERN_H

#include <stdbool.h>

#include "arena.h"
#include "ir.h"

/* `text` as an IR pattern (in a), when it is already in the resolver's
 * normal form: the only patterns the evaluator is ever given. */
bool fx_resolver_form(struct arena *a, const char *text, struct ir_path *out);

#endif
