/*
 * stdlib_ast.c - the standard library's kept syntax trees (stdlib_ast.h):
 * finding one by the hash of a file's bytes, and copying it into the
 * compile's arena with its locations pointed at the file read.
 */
#include "stdlib_ast.h"

#include <assert.h>
#include <string.h>
#include <xxhash.h>

#include "stdlib_ast_data.h" /* generated: sast_pool, sast_strs, sast_nodes, sast_files */

/* A variable, not the macro: a cross-build's table is empty, and a
 * comparison with a constant 0 would draw a warning. */
static const size_t sast_nfiles = SAST_NFILES;

size_t stdlib_ast_count(void)
{
	return sast_nfiles;
}

const struct sast_file *stdlib_ast_file(size_t i)
{
	return i < sast_nfiles ? &sast_files[i] : NULL;
}

/* Line 0: no location (stdlib_ast_gen.c, loc_of). */
static struct loc loc_in(const struct src_file *f, const struct sast_loc *l)
{
	struct loc o = { NULL, 0, 0, 0, 0 };
	if (l->line == 0)
		return o;
	assert(l->off <= f->len && l->len <= f->len - l->off);
	o.file = f;
	o.line = l->line;
	o.col = l->col;
	o.off = l->off;
	o.len = l->len;
	return o;
}

static struct ast_str *copy_strs(const struct src_file *f, struct arena *a, int32_t k)
{
	struct ast_str *first = NULL, **tail = &first;
	for (; k >= 0; k = sast_strs[k].next) {
		assert(k < SAST_NSTRS);
		const struct sast_str *s = &sast_strs[k];
		struct ast_str *o = arena_alloc(a, sizeof *o);
		/* The compile may write into a word's text, as into the copy
		 * the parser makes: its own copy, never the table's. */
		o->text = arena_strndup(a, sast_pool + s->text, s->len);
		o->len = s->len;
		o->loc = loc_in(f, &s->loc);
		o->is_ident = s->is_ident;
		*tail = o;
		tail = &o->next;
	}
	return first;
}

static struct ast_node *copy_nodes(const struct src_file *f, struct arena *a, int32_t k)
{
	struct ast_node *first = NULL, **tail = &first;
	for (; k >= 0; k = sast_nodes[k].next) {
		assert(k < SAST_NNODES);
		const struct sast_node *n = &sast_nodes[k];
		struct ast_node *o = arena_alloc(a, sizeof *o);
		o->kind = (enum ast_kind)n->kind;
		o->loc = loc_in(f, &n->loc);
		assert((size_t)o->kind < SAST_KINDS);
		for (int j = 0; j < sast_slots[o->kind].n; j++)
			*sast_slot(o, j) = copy_strs(f, a, n->s[j]);
		if (o->kind == AST_PROFILE)
			o->u.profile.body = copy_nodes(f, a, n->body);
		if (o->kind == AST_RULE) {
			o->u.rule.effect = (enum ast_effect)n->effect;
			o->u.rule.access = n->access;
			o->u.rule.access_loc = loc_in(f, &n->access_loc);
			o->u.rule.except_loc = loc_in(f, &n->except_loc);
		}
		*tail = o;
		tail = &o->next;
	}
	return first;
}

struct ast_file *stdlib_ast_find(const struct src_file *f, struct arena *a)
{
	if (sast_nfiles == 0 || !f->text)
		return NULL;
	XXH128_hash_t h = XXH3_128bits(f->text, f->len);
	for (size_t i = 0; i < sast_nfiles; i++) {
		const struct sast_file *k = &sast_files[i];
		if (k->hash_hi != h.high64 || k->hash_lo != h.low64 || k->len != f->len)
			continue;
		struct ast_file *af = arena_alloc(a, sizeof *af);
		af->src = f;
		af->items = copy_nodes(f, a, k->items);
		return af;
	}
	return NULL;
}
