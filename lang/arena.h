/*
 * arena.h - bump allocator for everything that lives as long as one policy
 * (source text, AST, IR). One owner frees the whole arena at once, so no
 * node ever needs its own free() and no error path can leak a half-built tree.
 */
#ifndef CAGE_ARENA_H
#define CAGE_ARENA_H

#include <stddef.h>

struct arena_block;

struct arena {
	struct arena_block *head;
	size_t total; /* bytes handed out, for benchmarks and limits */
};

void arena_init(struct arena *a);
void arena_free(struct arena *a);
/* Returns zeroed memory aligned for any object; aborts only on OOM. */
void *arena_alloc(struct arena *a, size_t size);
/* The same, not zeroed: for bytes the caller writes before anyone reads
 * them (copies, file text), where zeroing first is a second pass. */
void *arena_alloc_raw(struct arena *a, size_t size);
/* A vector's new block: room for cap elements of size bytes, the first n
 * copied from v (the old block stays in the arena until it is freed). */
void *arena_grow(struct arena *a, const void *v, size_t n, size_t cap, size_t size);
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_strdup(struct arena *a, const char *s);
/* S then T: what arena_printf("%s%s") gives, without the formatter (the
 * resolver joins a home or a directory to every path it reads). */
char *arena_concat(struct arena *a, const char *s, const char *t);
/* S, T then U (a folder, "/" and a name) */
char *arena_concat3(struct arena *a, const char *s, const char *t, const char *u);
char *arena_printf(struct arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
