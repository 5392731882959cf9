/*
 * stdlib_ast.h - the standard library's syntax trees, made when cage is
 * built (stdlib_ast_gen.c) instead of on every compile.
 *
 * Most of a launch's compile is parsing the standard library, the same
 * files every time. The build parses each of them once with the same
 * parser and keeps its tree with the XXH3-128 hash of the bytes. When
 * the resolver loads a file from the standard library folder whose bytes
 * hash the same, it takes a copy of the kept tree instead of parsing.
 * Only files the resolver found in the standard library folder are
 * looked up, so the worst a hash collision can do is give a file the
 * tree of the build's own standard library, never text someone else
 * wrote. A file changed by a byte hashes otherwise and is parsed; a file
 * that had diagnostics at build time was not kept and is parsed, so its
 * diagnostics are reported as before. Cross-builds keep no trees.
 */
#ifndef CAGE_STDLIB_AST_H
#define CAGE_STDLIB_AST_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ast.h"
#include "diag.h"

/* The kept form: indexes (-1 for none) instead of pointers. */
struct sast_loc {
	uint32_t line, col, off, len;
};
struct sast_str {
	uint32_t text, len; /* text: offset into the pool, NUL-terminated */
	struct sast_loc loc;
	uint8_t is_ident;
	int32_t next;
};
struct sast_node {
	uint8_t kind;
	struct sast_loc loc;
	int32_t next, body; /* body: a profile's items */
	int32_t s[3];       /* the node's word lists, in the order of ast.h's union */
	uint8_t effect;
	uint32_t access;
	struct sast_loc access_loc, except_loc;
};
struct sast_file {
	uint64_t hash_hi, hash_lo; /* XXH3-128 of the bytes */
	size_t len;
	int32_t items;
	const char *name; /* under the standard library's source folder */
};

/* Where each kind of node keeps its word lists (ast.h's union), in the
 * order of sast_node.s: the generator and the copy read this one table. */
struct sast_slots {
	int n;
	size_t off[3];
};
#define SAST_AT(m) offsetof(struct ast_node, u.m)
static const struct sast_slots sast_slots[] = {
	[AST_VERSION] = { 1, { SAST_AT(version.number) } },
	[AST_IMPORT] = { 1, { SAST_AT(import.path) } },
	[AST_PARAM] = { 3, { SAST_AT(param.name), SAST_AT(param.type), SAST_AT(param.deflt) } },
	[AST_LIST] = { 2, { SAST_AT(list.name), SAST_AT(list.items) } },
	[AST_PROFILE] = { 2, { SAST_AT(profile.name), SAST_AT(profile.parent) } },
	[AST_RULE] = { 2, { SAST_AT(rule.targets), SAST_AT(rule.excepts) } },
	[AST_MODE] = { 1, { SAST_AT(mode.value) } },
	[AST_ENV_KEEP] = { 1, { SAST_AT(names.names) } },
	[AST_ENV_SET] = { 2, { SAST_AT(env_set.name), SAST_AT(env_set.value) } },
	[AST_ENV_UNSET] = { 1, { SAST_AT(names.names) } },
	[AST_PRIVATE] = { 1, { SAST_AT(names.names) } },
	[AST_LIMIT] = { 3, { SAST_AT(limit.what), SAST_AT(limit.number), SAST_AT(limit.words) } },
};
#undef SAST_AT
#define SAST_KINDS (sizeof sast_slots / sizeof *sast_slots)

/* The word list in slot j of node n. */
static inline struct ast_str **sast_slot(struct ast_node *n, int j)
{
	return (struct ast_str **)(void *)((char *)n + sast_slots[n->kind].off[j]);
}

/* A copy of the kept tree of f's bytes, in a, its locations in f; NULL
 * when none was kept for them. */
struct ast_file *stdlib_ast_find(const struct src_file *f, struct arena *a);
/* The kept files, for tests. */
size_t stdlib_ast_count(void);
const struct sast_file *stdlib_ast_file(size_t i);

#endif
