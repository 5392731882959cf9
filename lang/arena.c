/*
 * arena.c - the bump allocator behind the AST and IR (see arena.h).
 * Out-of-memory is the one condition we do not carry back as a value: a
 * policy compiler that cannot allocate a few kilobytes has nothing sensible
 * left to report, and continuing would risk acting on a partial policy.
 */
#include "arena.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	max_align_t data[];
};

enum { ARENA_MIN_BLOCK = 64 * 1024 };

static void arena_oom(void)
{
	fputs("cage: out of memory\n", stderr);
	abort();
}

void arena_init(struct arena *a)
{
	a->head = NULL;
	a->total = 0;
}

void arena_free(struct arena *a)
{
	struct arena_block *b = a->head;
	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
	a->total = 0;
}

void *arena_alloc_raw(struct arena *a, size_t size)
{
	const size_t align = sizeof(max_align_t);
	/* Rounding up must not wrap to a small size. */
	if (size > SIZE_MAX - align)
		arena_oom();
	size = (size + align - 1) & ~(align - 1);
	if (size == 0)
		size = align;
	struct arena_block *b = a->head;
	if (!b || b->cap - b->used < size) {
		size_t cap = size > ARENA_MIN_BLOCK ? size : ARENA_MIN_BLOCK;
		if (cap > SIZE_MAX - sizeof(*b))
			arena_oom();
		b = malloc(sizeof(*b) + cap);
		if (!b)
			arena_oom();
		b->used = 0;
		b->cap = cap;
		b->next = a->head;
		a->head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += size;
	assert(b->used <= b->cap && b->used % align == 0);
	a->total += size;
	return p;
}

void *arena_alloc(struct arena *a, size_t size)
{
	void *p = arena_alloc_raw(a, size);
	memset(p, 0, size);
	return p;
}

void *arena_grow(struct arena *a, const void *v, size_t n, size_t cap, size_t size)
{
	assert(n <= cap);
	if (size && cap > SIZE_MAX / size)
		arena_oom();
	char *nv = arena_alloc_raw(a, cap * size);
	if (n)
		memcpy(nv, v, n * size);
	memset(nv + n * size, 0, (cap - n) * size);
	return nv;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc_raw(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *arena_concat3(struct arena *a, const char *s, const char *t, const char *u)
{
	size_t n = strlen(s), m = strlen(t), k = strlen(u);
	char *p = arena_alloc_raw(a, n + m + k + 1);
	memcpy(p, s, n);
	memcpy(p + n, t, m);
	memcpy(p + n + m, u, k + 1);
	return p;
}

char *arena_concat(struct arena *a, const char *s, const char *t)
{
	return arena_concat3(a, s, t, "");
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		arena_oom();
	char *p = arena_alloc_raw(a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
