/*
 * path.h - path patterns: normalisation and matching.
 *
 * Normalisation is lexical (no filesystem access): the policy describes
 * paths on the machine that will run it, which need not be this one. The
 * checks in lint (symlink-escape) are where the real filesystem is asked.
 */
#ifndef CAGE_PATH_H
#define CAGE_PATH_H

#include "ir.h"

/* Normalises an absolute pattern: collapses "//" and ".", applies ".."
 * lexically, drops a trailing "/". `**` must be a whole component.
 * Returns false with *err (static text) when the pattern is invalid. */
bool path_normalize(struct arena *a, const char *in, size_t len, char **out, const char **err);

/* Whether in[0..len) is already what path_normalize would make of it
 * (an absolute pattern path_normalize accepts and leaves unchanged). */
bool path_is_normal(const char *in, size_t len);

/* Classifies a normalised pattern into kind and literal prefix. */
void path_classify(struct ir_path *p);

/* True if `path` (absolute, normalised, no glob characters) matches. */
bool path_match(const struct ir_path *pat, const char *path);

/* The one path a query names ("~/..." or absolute) in the IR's form: `~`
 * expanded with `home`, normalised, no wildcards. False with *err when it
 * cannot be. The result is allocated in `a`. */
bool path_query(struct arena *a, const char *home, const char *in, char **out,
		const char **err);

/* A component of a normalised path or pattern: s[0..n). */
struct path_comp {
	const char *s;
	size_t n;
};
/* Splits a normalised path into component spans; returns the count, or
 * (size_t)-1 when there are more than max. The root "/" has zero. */
size_t path_split(const char *t, struct path_comp *out, size_t max);

/* Bytes in the character at s[0..n): a whole UTF-8 sequence, or 1. */
size_t path_char_len(const char *s, size_t n);

/* One path component against one pattern component (`*`, `?` one
 * character: a UTF-8 sequence, not a byte). */
bool path_component_match(const char *pat, size_t plen, const char *name, size_t nlen);

/* True if the text has any glob character. */
bool path_has_glob(const char *s, size_t len);

#endif
