/*
 * jsonl.h - one JSON object per line, built in a fixed buffer and written
 * with a single write(2), so that lines from concurrent writers to an
 * O_APPEND file never interleave. Shared by the proxy's access log and the
 * monitor's records.
 *
 * Strings may come from a hostile process (host names, file names), so
 * every control or non-ASCII byte is escaped as \u00XX: a line stays valid
 * JSON and one line whatever it carries. A record that does not fit is not
 * written at all, never cut off.
 */
#ifndef CAGE_JSONL_H
#define CAGE_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jl_buf {
	char p[8192];
	size_t n;
	bool full;
};

/* Starts the object with "time" (UTC, milliseconds) as its first field. */
void jl_begin(struct jl_buf *b, int64_t real_ms);
void jl_put(struct jl_buf *b, const char *s, size_t n);
void jl_fmt(struct jl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* ,"key":"escaped" or ,"key":null for s == NULL. */
void jl_str(struct jl_buf *b, const char *key, const char *s);
/* Closes the object and writes the line; false if it did not fit or the
 * write failed. fd < 0 writes nothing and succeeds. */
bool jl_end_write(struct jl_buf *b, int fd);

#endif
