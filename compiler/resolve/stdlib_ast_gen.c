/*
 * stdlib_ast_gen.c - build-time generator of the standard library's
 * syntax trees (stdlib_ast.h says how they are used):
 *   stdlib_ast_gen STDLIB_DIR FILE... > stdlib_ast_data.h
 * parses each FILE (a path under STDLIB_DIR) with the compiler's own
 * parser and writes its tree as C data, with the XXH3-128 hash of the
 * bytes it was parsed from. A file that parses with any diagnostic is
 * left out: the compiler parses it at run time and reports what it says.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "load.h"
#include "parse_ctx.h"
#include "stdlib_ast.h"

/* Everything written so far, across files: the trees' nodes and words
 * are indexes into these, and texts offsets into the pool. */
struct gen {
	struct sast_node *nodes;
	size_t nn, capn;
	struct sast_str *strs;
	size_t ns, caps;
	char *pool;
	size_t np, capp;
	const struct src_file *file; /* the one being parsed */
};

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(p, c * size);
	if (!q) {
		fputs("stdlib_ast_gen: out of memory\n", stderr);
		exit(1);
	}
	*cap = c;
	return q;
}

/* A location is in the file parsed (line 1 on), or none (all zero, as
 * the parser leaves an `except` that is not written): the kept form
 * tells them apart by the line. */
static struct sast_loc loc_of(const struct gen *g, const struct loc *l)
{
	bool none = !l->file && !l->line && !l->col && !l->off && !l->len;
	if (!none && (l->file != g->file || l->line == 0)) {
		fputs("stdlib_ast_gen: a location outside the file parsed\n", stderr);
		exit(1);
	}
	struct sast_loc s = { l->line, l->col, l->off, l->len };
	return s;
}

static uint32_t pool_add(struct gen *g, const char *text, size_t len)
{
	g->pool = grow(g->pool, &g->capp, g->np + len + 1, 1);
	uint32_t off = (uint32_t)g->np;
	memcpy(g->pool + g->np, text, len);
	g->pool[g->np + len] = '\0';
	g->np += len + 1;
	return off;
}

/* A word list as indexes, in order; -1 for none. */
static int32_t add_strs(struct gen *g, const struct ast_str *s)
{
	int32_t first = -1, prev = -1;
	for (; s; s = s->next) {
		g->strs = grow(g->strs, &g->caps, g->ns + 1, sizeof *g->strs);
		int32_t k = (int32_t)g->ns++;
		struct sast_str *o = &g->strs[k];
		memset(o, 0, sizeof *o);
		o->text = pool_add(g, s->text, s->len);
		o->len = (uint32_t)s->len;
		o->loc = loc_of(g, &s->loc);
		o->is_ident = s->is_ident;
		o->next = -1;
		if (prev >= 0)
			g->strs[prev].next = k;
		else
			first = k;
		prev = k;
	}
	return first;
}

static int32_t add_nodes(struct gen *g, const struct ast_node *n)
{
	int32_t first = -1, prev = -1;
	for (; n; n = n->next) {
		g->nodes = grow(g->nodes, &g->capn, g->nn + 1, sizeof *g->nodes);
		int32_t k = (int32_t)g->nn++;
		struct sast_node o;
		memset(&o, 0, sizeof o);
		o.kind = (uint8_t)n->kind;
		o.loc = loc_of(g, &n->loc);
		o.next = o.body = -1;
		o.s[0] = o.s[1] = o.s[2] = -1;
		if ((size_t)n->kind >= SAST_KINDS || sast_slots[n->kind].n == 0) {
			fprintf(stderr, "stdlib_ast_gen: node kind %d not known here\n", (int)n->kind);
			exit(1);
		}
		for (int j = 0; j < sast_slots[n->kind].n; j++)
			o.s[j] = add_strs(g, *sast_slot((struct ast_node *)n, j));
		if (n->kind == AST_RULE) {
			o.effect = (uint8_t)n->u.rule.effect;
			o.access = n->u.rule.access;
			o.access_loc = loc_of(g, &n->u.rule.access_loc);
			o.except_loc = loc_of(g, &n->u.rule.except_loc);
		}
		g->nodes[k] = o;
		/* The body after the node itself, so a profile's items follow it. */
		if (n->kind == AST_PROFILE)
			g->nodes[k].body = add_nodes(g, n->u.profile.body);
		if (prev >= 0)
			g->nodes[prev].next = k;
		else
			first = k;
		prev = k;
	}
	return first;
}

static void put_loc(const struct sast_loc *l)
{
	printf("{%u,%u,%u,%u}", l->line, l->col, l->off, l->len);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs("usage: stdlib_ast_gen STDLIB_DIR FILE...\n", stderr);
		return 2;
	}
	size_t root_len = strlen(argv[1]);
	struct gen g;
	memset(&g, 0, sizeof g);
	struct sast_file *files = calloc((size_t)argc, sizeof *files);
	const char **names = calloc((size_t)argc, sizeof *names);
	if (!files || !names)
		return 1;
	size_t nf = 0;
	for (int i = 2; i < argc; i++) {
		const char *rel = argv[i];
		if (!strncmp(rel, argv[1], root_len) && rel[root_len] == '/')
			rel += root_len + 1;
		struct arena a;
		arena_init(&a);
		/* Read as the resolver reads it, so the hash is of the same bytes. */
		char *text;
		size_t len;
		const char *err;
		if (!load_read(&a, argv[i], &text, &len, &err)) {
			fprintf(stderr, "stdlib_ast_gen: %s\n", err);
			return 1;
		}
		struct diag_list dl;
		diag_list_init(&dl, &a);
		struct src_file f = { .name = rel, .text = text, .len = len };
		g.file = &f;
		struct ast_file *af = parse_file(&f, &a, &dl);
		bool clean = dl.n == 0 && af->syntax_errors == 0 && strlen(text) == len;
		if (clean) {
			XXH128_hash_t h = XXH3_128bits(text, len);
			struct sast_file *o = &files[nf];
			names[nf++] = rel;
			o->hash_hi = h.high64;
			o->hash_lo = h.low64;
			o->len = len;
			o->items = add_nodes(&g, af->items);
		} else {
			fprintf(stderr, "stdlib_ast_gen: %s has diagnostics: parsed at run time\n", rel);
		}
		diag_list_free(&dl);
		arena_free(&a);
	}
	puts("/* Generated by stdlib_ast_gen from the standard library: do not edit. */");
	printf("#define SAST_NFILES %zu\n#define SAST_NNODES %zu\n#define SAST_NSTRS %zu\n", nf,
	       g.nn, g.ns);
	printf("static const char sast_pool[%zu] = {", g.np ? g.np : 1);
	for (size_t i = 0; i < g.np; i++)
		printf("%s%d", i == 0 ? "\n" : i % 24 ? "," : ",\n", (int)(unsigned char)g.pool[i]);
	if (!g.np)
		printf("0");
	puts("};");
	printf("static const struct sast_str sast_strs[%zu] = {\n", g.ns ? g.ns : 1);
	for (size_t i = 0; i < g.ns; i++) {
		const struct sast_str *s = &g.strs[i];
		printf("{%u,%u,", s->text, s->len);
		put_loc(&s->loc);
		printf(",%u,%d},\n", (unsigned)s->is_ident, (int)s->next);
	}
	if (!g.ns)
		puts("{0}");
	puts("};");
	printf("static const struct sast_node sast_nodes[%zu] = {\n", g.nn ? g.nn : 1);
	for (size_t i = 0; i < g.nn; i++) {
		const struct sast_node *n = &g.nodes[i];
		printf("{%u,", (unsigned)n->kind);
		put_loc(&n->loc);
		printf(",%d,%d,{%d,%d,%d},%u,%uu,", (int)n->next, (int)n->body, (int)n->s[0],
		       (int)n->s[1], (int)n->s[2], (unsigned)n->effect, (unsigned)n->access);
		put_loc(&n->access_loc);
		putchar(',');
		put_loc(&n->except_loc);
		puts("},");
	}
	if (!g.nn)
		puts("{0}");
	puts("};");
	printf("static const struct sast_file sast_files[%zu] = {\n", nf ? nf : 1);
	for (size_t i = 0; i < nf; i++)
		printf("{0x%016llxull,0x%016llxull,%zu,%d,\"%s\"},\n",
		       (unsigned long long)files[i].hash_hi, (unsigned long long)files[i].hash_lo,
		       files[i].len, (int)files[i].items, names[i]);
	if (!nf)
		puts("{0}");
	puts("};");
	free(files);
	free(names);
	free(g.nodes);
	free(g.strs);
	free(g.pool);
	return fflush(stdout) == 0 ? 0 : 1;
}
