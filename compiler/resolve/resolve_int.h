/*
 * resolve_int.h - what the resolver's files share: its working state and
 * the steps resolve.c calls in order (load, names, rules). Internal to
 * compiler/resolve*.c.
 */
#ifndef CAGE_RESOLVE_INT_H
#define CAGE_RESOLVE_INT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "load.h"
#include "policy.h"

/* Limits that keep a hostile or mistaken policy from costing more than a
 * plausible one: import nesting, list nesting, `extends` chains, and the
 * rules of all profiles together (each profile holds its own flat copy of
 * every layer it inherits, so the total can grow as profiles × rules). */
enum {
	RESOLVE_MAX_IMPORT_DEPTH = 32,
	RESOLVE_MAX_LIST_DEPTH = 16,
	RESOLVE_MAX_EXTENDS_DEPTH = 64,
	RESOLVE_MAX_IR_RULES = 2000000,
	RESOLVE_MAX_EXPANSION = 4000000, /* words expanded, lists included */
};

/* Growable arrays for the resolver's working sets. They are malloc'd and
 * freed when resolution ends; only what the IR keeps is copied, exactly
 * sized, into the policy's arena. */
#define VEC(T) struct { T *v; size_t n, cap; }
#define VEC_PUSH(vec, item)                                                      \
	do {                                                                     \
		if ((vec).n == (vec).cap) {                                      \
			size_t ncap = (vec).cap ? (vec).cap * 2 : 8;             \
			void *nv = realloc((vec).v, ncap * sizeof(*(vec).v));    \
			if (!nv) {                                               \
				fputs("cage: out of memory\n", stderr);         \
				abort();                                         \
			}                                                        \
			(vec).v = nv;                                            \
			(vec).cap = ncap;                                        \
		}                                                                \
		(vec).v[(vec).n++] = (item);                                     \
	} while (0)
#define VEC_FREE(vec)                                                            \
	do {                                                                     \
		free((vec).v);                                                   \
		(vec).v = NULL;                                                  \
		(vec).n = (vec).cap = 0;                                         \
	} while (0)

struct rfile {
	struct src_file *src;
	struct ast_file *ast;
	const char *fs_dir;      /* for relative imports */
	const char *display_dir; /* for display names of relative imports */
};

struct layer {
	VEC(struct ir_rule) rules;
	VEC(struct ir_env_op) env;
	bool has_mode;
	enum ir_mode mode;
	struct loc mode_loc;
	bool private_tmp, private_home;
	struct ir_limit limits[IR_LIM_N]; /* the tightest of the layer's own */
};

struct pdef {
	unsigned chain_depth; /* 1 for a profile without parent */
	const char *name;
	struct ast_node *node;
	const struct src_file *file;
	struct pdef *parent;
	struct layer *body;
	struct ir_profile *ir;
	int state; /* 0 new, 1 in progress, 2 done */
};

struct ldef {
	const char *name;
	struct ast_node *node;
	int state;
};

struct pnode {
	struct ast_node *node;
	struct ir_param *param;
};

/* Names to positions in one of the resolver's vectors, so that looking a
 * name up costs the same with ten names as with a hundred thousand. Slots
 * hold position + 1 (0 = empty); linear probing, at most half full. */
struct name_index {
	size_t *slot;
	size_t cap, n;
};

struct rsv {
	struct cage_policy *pol;
	struct arena *a;
	struct diag_list *d;
	const struct cage_options *o;
	const char *home;
	size_t home_len;
	VEC(struct rfile *) files;      /* load (post) order */
	VEC(const char *) loading;      /* realpaths on the import stack */
	VEC(struct rfile *) all_loaded; /* for dedupe by realpath */
	VEC(struct policy_import) imports;
	VEC(struct pnode) params;
	VEC(struct ldef) lists;
	VEC(struct pdef *) profiles;
	struct name_index param_ix, list_ix, profile_ix;
	size_t ir_rules; /* rules in all profiles built so far */
	size_t expand_steps; /* words expanded so far (see rsv_expand_word) */
	bool too_large;  /* RESOLVE_MAX_IR_RULES was reported */
	VEC(const struct ir_limit *) loose_warned; /* limits told they have no effect */
	const char *stdlib; /* --stdlib, or the default found once (stdlib_dir.h) */
	const char **search; /* the import search path, built once (search_dirs) */
	size_t nsearch;
	/* Directories of imports and their real paths (load.h), in the
	 * resolver's arena. */
	struct load_realdirs realdirs;
	VEC(struct policy_input) inputs; /* what the load looked at (inputs.h) */
};

/* A resolved word: the text to parse as a target and where it came from. */
struct rword {
	const char *text;
	struct loc loc;
	bool subtree; /* a bare path param: the directory and all below */
	const char *written;
};

typedef VEC(struct rword) rword_vec;

/* A diagnostic with the import chain of its file as notes. */
__attribute__((format(printf, 5, 6))) struct diag *
rsv_diag(struct rsv *r, enum diag_sev sev, struct loc loc, const char *id, const char *fmt, ...);

/* resolve_load.c: reads a file and, depth first, everything it imports. */
void rsv_load(struct rsv *r, struct rfile *rf, size_t depth);
/* Records one look at the disk (inputs.h); strings are the arena's. */
void rsv_input(struct rsv *r, enum input_kind kind, const char *path, int err, const char *real,
	       const char *text, size_t len);

/* resolve_names.c: params, lists and profiles by name; param values. */
struct ir_param *rsv_find_param(struct rsv *r, const char *name, size_t len);
struct ldef *rsv_find_list(struct rsv *r, const char *name);
struct pdef *rsv_find_profile(struct rsv *r, const char *name);
/* "; did you mean '...'?" naming the closest param (lists too when
 * `lists`), or profile, or "" (suggest.h). */
const char *rsv_near_name(struct rsv *r, const char *name, size_t len, bool lists);
const char *rsv_near_profile(struct rsv *r, const char *name);
void rsv_collect(struct rsv *r, struct rfile *rf);
void rsv_names_free(struct rsv *r);
/* `profile`: the name of the profile that will be selected, for the
 * options' param_fn. */
void rsv_assign_params(struct rsv *r, const char *profile);
char *rsv_expand_home(struct rsv *r, const char *s, struct loc loc, uint32_t *home_len);
char *rsv_interpolate(struct rsv *r, const struct ast_str *s, bool *ok);
void rsv_expand_word(struct rsv *r, struct ast_str *w, rword_vec *out, size_t depth);

/* resolve_rules.c: a name `env` may keep, set or unset
 * ([A-Za-z_][A-Za-z0-9_]*); one item (rule, mode, env, private) into a
 * layer. */
bool rsv_env_name_ok(const char *s);
void rsv_add_item(struct rsv *r, struct layer *L, struct ast_node *n, const char *layer_name);
/* A `limit` statement into L->limits (resolve_limit.c). */
void rsv_add_limit(struct rsv *r, struct layer *L, struct ast_node *n);
/* Merges a layer's limit `l` into the profile's `cur`, which holds what
 * the earlier layers decided: a later limit that is looser has no effect,
 * which someone used to "the last one wins" would not expect, so it gets a
 * warning (once per statement). */
void rsv_merge_limit(struct rsv *r, struct ir_limit *cur, const struct ir_limit *l,
		     enum ir_limit_kind k);

#endif
