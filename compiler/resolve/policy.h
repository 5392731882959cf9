/*
 * policy.h - the library's internal view of a loaded policy (the struct
 * behind the public cage_policy handle) and of the options that shaped it.
 * The checker and the backends reach the AST and import records through it.
 */
#ifndef CAGE_POLICY_H
#define CAGE_POLICY_H

#include "ast.h"
#include "inputs.h"
#include "ir.h"

struct cage_options {
	char **defines; /* "name=value" */
	size_t ndefines;
	char **includes;
	size_t nincludes;
	char *stdlib;
	char *home;
	char *profile;
	bool has_target; /* false: the host's (IR_TARGET_HOST) */
	enum ir_target target;
	/* cage_options_param_fn (cage.h's cage_param_fn), or NULL */
	const char *(*param_fn)(void *ctx, const char *param, const char *decl,
				const char *profile);
	void *param_ctx;
};

/* One `import` statement as resolved, for the unused-import check. */
struct policy_import {
	const struct src_file *from;
	struct loc loc; /* the import string */
	const struct src_file *target; /* NULL when it failed */
};

struct cage_policy {
	struct arena arena;
	struct diag_list diags;
	bool io_error; /* the main file could not be read: a usage error */
	struct ir_policy *ir;
	struct ast_file **asts; /* parallel to ir->files */
	struct policy_import *imports;
	size_t nimports;
	/* What loading the files looked at on disk, in order (inputs.h). */
	struct policy_input *inputs;
	size_t ninputs;
	/* The image it was read from (pimage.h), which its strings point
	 * into; malloc'd, freed with it. NULL for a policy compiled. */
	unsigned char *image;
	/* Scratch for query answers handed to API users. */
	char verdict_text[1024];
};

/* Resolves the policy whose main file is `path` (text == NULL: read it) or
 * the given text. Fills p->ir (even with errors, as far as it got). */
void resolve_policy(struct cage_policy *p, const char *path, const char *text, size_t len,
		    const struct cage_options *o);

#endif
