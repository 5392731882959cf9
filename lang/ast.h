/*
 * ast.h - the syntax tree of one .cage file, exactly as written.
 *
 * Nothing here is resolved: names are names, strings are unescaped text.
 * Nodes live in the policy's arena. The resolver (compiler/resolve/resolve.c) turns
 * the trees of all loaded files into the IR.
 */
#ifndef CAGE_AST_H
#define CAGE_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"

/* A word: an identifier or an (unescaped) string literal, with its span. */
struct ast_str {
	const char *text;
	size_t len;
	struct loc loc;
	bool is_ident;
	struct ast_str *next;
};

struct ast_strlist {
	struct ast_str *head, *tail;
};

enum ast_kind {
	AST_VERSION,
	AST_IMPORT,
	AST_PARAM,
	AST_LIST,
	AST_PROFILE,
	AST_RULE,
	AST_MODE,
	AST_ENV_KEEP,
	AST_ENV_SET,
	AST_ENV_UNSET,
	AST_PRIVATE,
};

enum ast_effect { AST_ALLOW, AST_DENY, AST_PROTECT };

struct ast_node {
	enum ast_kind kind;
	struct loc loc; /* the leading keyword */
	struct ast_node *next;
	union {
		struct { struct ast_str *number; } version;
		struct { struct ast_str *path; } import;
		struct { struct ast_str *name, *type, *deflt; } param;
		struct { struct ast_str *name; struct ast_str *items; } list;
		struct {
			struct ast_str *name, *parent;
			struct ast_node *body;
		} profile;
		struct {
			enum ast_effect effect;
			uint32_t access;      /* IR_A_* bits; 0 = none written */
			struct loc access_loc; /* span of the access keywords */
			struct ast_str *targets;
			/* `protect ... except P, ...`: paths inside the
			 * targets the protect leaves to the other rules */
			struct ast_str *excepts;
			struct loc except_loc; /* the `except` keyword */
		} rule;
		struct { struct ast_str *value; } mode;
		struct { struct ast_str *names; } names; /* keep, unset, private */
		struct { struct ast_str *name, *value; } env_set;
	} u;
};

struct ast_nodelist {
	struct ast_node *head, *tail;
};

struct ast_file {
	const struct src_file *src;
	struct ast_node *items;
	size_t syntax_errors;
};

#endif
