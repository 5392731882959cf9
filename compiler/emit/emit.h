/*
 * emit.h - the backend registry. Each backend turns the selected profile of
 * a resolved policy into bytes on a stream. Backends add themselves to the
 * table in emit.c; cagec's --emit and cage_emit() look them up by name.
 */
#ifndef CAGE_EMIT_H
#define CAGE_EMIT_H

#include <stdbool.h>
#include <stdio.h>

#include "ir.h"

/* Returns false and sets *err (static text or allocated in `a`) on failure.
 * Output must be deterministic for the same policy and options. */
typedef bool (*emit_fn)(const struct ir_policy *pol, const struct ir_profile *prof,
			FILE *out, struct arena *a, const char **err);

struct emit_backend {
	const char *name;
	const char *what; /* one line for --help */
	bool binary;      /* refuses to write to a terminal */
	emit_fn fn;
};

const struct emit_backend *emit_find(const char *name);
const struct emit_backend *emit_backends(size_t *n);

#endif
