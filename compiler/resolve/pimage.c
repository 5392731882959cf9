/*
 * pimage.c - a compiled policy as bytes, and back (see pimage.h; cage.h's
 * cage_policy_image and cage_policy_from_image; docs/cagerun.md, "A
 * compile kept on disk").
 *
 * What is written is what the launcher reads of a compile: the IR (every
 * profile, its rules, environment steps, limits and pins), the params, the
 * source files (names, texts, who imported them, for messages) and what
 * the load looked at on disk (inputs.h), so that a reader can ask the disk
 * again before trusting it. Syntax trees and import records are not: lint
 * and fmt load afresh. Only a policy with no diagnostic has an image.
 *
 * Pointers become indices: a location's file into the file list, a
 * profile's parent into the profile list, a pin's guard into its
 * profile's rules, and a protect's `except` list, which the rules of one
 * statement share, is written once and referred to by the next rule. The
 * reader trusts nothing: every count is bounded by the bytes left, every
 * index and enum is checked, every string has the length it claims and
 * its NUL, and the payload's XXH3 must match. Past the checksum, every
 * field is held to what the compiler makes (paths in normal form and
 * classified as path_classify would, hosts and Mach names as their parsers
 * would read them, one access family matching the target, an environment
 * step's name and value, `except` only on a protect's paths), because the
 * backends and the launcher rely on it without looking again; the fuzz
 * test in test_pimage runs every backend on what it accepts. Strings are
 * used where they lie in the image, which the policy keeps (no copy of
 * each). The bytes are only meaningful to the same build (the caller
 * keys them by the program's build ID).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "ir.h"
#include "path.h"
#include "pimage.h"
#include "policy.h"
#include "resolve_int.h"
#include "target.h"

#define PIM_MAGIC "CAGEPIM\n"
#define PIM_VERSION 1u
#define PIM_NONE 0xffffffffu
enum { PIM_HEADER = 8 + 4 + 8 + 8 };

/* ---- writing ---- */

struct wr {
	uint8_t *b;
	size_t n, cap;
	bool oom;
	const struct ir_policy *ir;
	bool bad; /* a pointer with no index: no image */
};

static void put(struct wr *w, const void *p, size_t n)
{
	if (w->oom)
		return;
	if (w->cap - w->n < n) {
		size_t cap = w->cap ? w->cap : 128 * 1024;
		while (cap - w->n < n)
			cap *= 2;
		uint8_t *b = realloc(w->b, cap);
		if (!b) {
			w->oom = true;
			return;
		}
		w->b = b;
		w->cap = cap;
	}
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

static void put32(struct wr *w, uint32_t v) { put(w, &v, sizeof v); }
static void put64(struct wr *w, uint64_t v) { put(w, &v, sizeof v); }

static void put_strn(struct wr *w, const char *s, size_t n)
{
	if (!s || n >= PIM_NONE) {
		w->bad |= s != NULL;
		put32(w, PIM_NONE);
		return;
	}
	put32(w, (uint32_t)n);
	put(w, s, n);
	put(w, "", 1); /* read in place, as a C string */
}

static void put_str(struct wr *w, const char *s) { put_strn(w, s, s ? strlen(s) : 0); }

/* x's place in v[0..n), PIM_NONE for NULL; one not there spoils the image. */
static uint32_t index_in(struct wr *w, const void *const *v, size_t n, const void *x)
{
	if (!x)
		return PIM_NONE;
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return (uint32_t)i;
	w->bad = true;
	return PIM_NONE;
}

static uint32_t file_index(struct wr *w, const struct src_file *f)
{
	return index_in(w, (const void *const *)w->ir->files, w->ir->nfiles, f);
}

static void put_loc(struct wr *w, struct loc l)
{
	put32(w, file_index(w, l.file));
	put32(w, l.line);
	put32(w, l.col);
	put32(w, l.off);
	put32(w, l.len);
}

static void put_path(struct wr *w, const struct ir_path *p)
{
	put_strn(w, p->text, p->len);
	put32(w, p->len);
	put32(w, p->home_len);
	put32(w, p->lit_prefix);
	put32(w, (uint32_t)p->kind);
}

static void put_rule(struct wr *w, const struct ir_rule *r, const struct ir_rule *prev)
{
	put32(w, r->index);
	put32(w, (uint32_t)r->effect);
	put32(w, r->access);
	put32(w, (uint32_t)r->tkind);
	switch (r->tkind) {
	case IR_T_PATH:
	case IR_T_UNIX:
		put_path(w, &r->t.path);
		break;
	case IR_T_HOST:
		put32(w, (uint32_t)r->t.host.kind);
		put_str(w, r->t.host.name);
		put(w, r->t.host.addr, sizeof r->t.host.addr);
		put64(w, r->t.host.nports);
		for (size_t i = 0; i < r->t.host.nports; i++) {
			put32(w, r->t.host.ports[i].lo);
			put32(w, r->t.host.ports[i].hi);
		}
		break;
	case IR_T_MACH:
		put_str(w, r->t.mach.name);
		put32(w, r->t.mach.prefix);
		break;
	}
	/* 0: none; 1: the previous rule's (one statement's rules share it);
	 * 2: written here. */
	if (!r->except || !r->nexcept) {
		put32(w, 0);
	} else if (prev && prev->except == r->except && prev->nexcept == r->nexcept) {
		put32(w, 1);
	} else {
		put32(w, 2);
		put32(w, r->nexcept);
		for (uint32_t i = 0; i < r->nexcept; i++) {
			put_path(w, &r->except[i].path);
			put_str(w, r->except[i].written);
			put_loc(w, r->except[i].loc);
		}
	}
	put_str(w, r->written);
	put_loc(w, r->loc);
	put_loc(w, r->rule_loc);
	put_str(w, r->layer);
}

static uint32_t profile_index(struct wr *w, const struct ir_profile *p)
{
	return index_in(w, (const void *const *)w->ir->profiles, w->ir->nprofiles, p);
}

static void put_profile(struct wr *w, const struct ir_profile *p)
{
	put_str(w, p->name);
	put_loc(w, p->loc);
	put32(w, profile_index(w, p->parent));
	put32(w, (uint32_t)p->mode);
	put_loc(w, p->mode_loc);
	put32(w, p->private_tmp);
	put32(w, p->private_home);
	for (int k = 0; k < IR_LIM_N; k++) {
		const struct ir_limit *l = &p->limits[k];
		put32(w, l->set);
		put32(w, l->best_effort);
		put64(w, l->value);
		put64(w, l->unit);
		put_loc(w, l->loc);
	}
	put64(w, p->nrules);
	for (size_t i = 0; i < p->nrules; i++)
		put_rule(w, &p->rules[i], i ? &p->rules[i - 1] : NULL);
	put64(w, p->nenv);
	for (size_t i = 0; i < p->nenv; i++) {
		put32(w, (uint32_t)p->env[i].kind);
		put_str(w, p->env[i].name);
		put_str(w, p->env[i].value);
		put_loc(w, p->env[i].loc);
	}
	put64(w, p->npins);
	for (size_t i = 0; i < p->npins; i++) {
		const struct ir_pin *pin = &p->pins[i];
		put_path(w, &pin->pat);
		bool in = pin->guard >= p->rules && pin->guard < p->rules + p->nrules;
		w->bad |= !in;
		put64(w, in ? (uint64_t)(pin->guard - p->rules) : 0);
	}
	put32(w, p->guard != NULL);
	for (size_t i = 0; p->guard && i < p->nrules; i++)
		put32(w, p->guard[i]);
}

/* A file's text as one of the source files' (by index), else NULL. */
static uint32_t text_of_file(const struct ir_policy *ir, const char *text, size_t len)
{
	for (size_t i = 0; i < ir->nfiles; i++)
		if (ir->files[i]->text == text && ir->files[i]->len == len)
			return (uint32_t)i;
	return PIM_NONE;
}

bool pim_write(const struct cage_policy *p, unsigned char **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	const struct ir_policy *ir = p->ir;
	if (!ir || !ir->selected || p->diags.n || p->diags.dropped || p->io_error)
		return false;
	struct wr w = { .ir = ir };
	uint8_t header[PIM_HEADER] = { 0 };
	put(&w, header, sizeof header); /* filled last */
	put64(&w, ir->nfiles);
	for (size_t i = 0; i < ir->nfiles; i++) {
		const struct src_file *f = ir->files[i];
		put_str(&w, f->name);
		put_str(&w, f->realpath);
		put_strn(&w, f->text, f->len);
		put32(&w, (uint32_t)f->id);
		put_str(&w, f->stdlib_root);
		put32(&w, file_index(&w, f->importer));
		put32(&w, f->import_line);
		put32(&w, f->import_col);
	}
	put32(&w, (uint32_t)ir->target);
	put_str(&w, ir->home);
	put64(&w, ir->fingerprint);
	put64(&w, ir->nparams);
	for (size_t i = 0; i < ir->nparams; i++) {
		const struct ir_param *pa = &ir->params[i];
		put_str(&w, pa->name);
		put32(&w, (uint32_t)pa->type);
		put_str(&w, pa->value);
		put32(&w, pa->from_define);
		put32(&w, pa->used);
		put_loc(&w, pa->loc);
	}
	put64(&w, ir->nprofiles);
	for (size_t i = 0; i < ir->nprofiles; i++)
		put_profile(&w, ir->profiles[i]);
	put32(&w, profile_index(&w, ir->selected));
	put64(&w, p->ninputs);
	for (size_t i = 0; i < p->ninputs; i++) {
		const struct policy_input *in = &p->inputs[i];
		put32(&w, (uint32_t)in->kind);
		put_str(&w, in->path);
		put32(&w, (uint32_t)in->err);
		put_str(&w, in->real);
		uint32_t f = in->kind == INPUT_FILE ? text_of_file(ir, in->text, in->len) : PIM_NONE;
		put32(&w, f);
		if (in->kind == INPUT_FILE && f == PIM_NONE)
			put_strn(&w, in->text, in->len);
	}
	if (w.oom || w.bad) {
		free(w.b);
		return false;
	}
	uint64_t len = w.n - PIM_HEADER, sum = XXH3_64bits(w.b + PIM_HEADER, len);
	uint32_t version = PIM_VERSION;
	memcpy(w.b, PIM_MAGIC, 8);
	memcpy(w.b + 8, &version, 4);
	memcpy(w.b + 12, &len, 8);
	memcpy(w.b + 20, &sum, 8);
	*out = w.b;
	*n = w.n;
	return true;
}

/* ---- reading ---- */

struct rd {
	const uint8_t *p, *end;
	struct arena *a;
	const char *why; /* the first problem; reading stops being useful after it */
	struct src_file **files;
	size_t nfiles;
	const char *home; /* the policy's home, once read: paths' `~` lies in it */
};

static bool fail(struct rd *r, const char *why)
{
	if (!r->why)
		r->why = why;
	r->p = r->end;
	return false;
}

static bool get(struct rd *r, void *out, size_t n)
{
	if ((size_t)(r->end - r->p) < n) {
		memset(out, 0, n);
		return fail(r, "truncated");
	}
	memcpy(out, r->p, n);
	r->p += n;
	return true;
}

static uint32_t get32(struct rd *r)
{
	uint32_t v;
	get(r, &v, sizeof v);
	return v;
}

static uint64_t get64(struct rd *r)
{
	uint64_t v;
	get(r, &v, sizeof v);
	return v;
}

static bool get_bool(struct rd *r)
{
	uint32_t v = get32(r);
	if (v > 1)
		fail(r, "a flag out of range");
	return v == 1;
}

/* A count of items each at least `least` bytes long: never more than the
 * bytes left could hold. */
static size_t get_count(struct rd *r, size_t least)
{
	uint64_t n = get64(r);
	if (n > (uint64_t)(r->end - r->p) / least) {
		fail(r, "a count larger than the image");
		return 0;
	}
	return (size_t)n;
}

static uint32_t get_enum(struct rd *r, uint32_t limit)
{
	uint32_t v = get32(r);
	if (v >= limit)
		fail(r, "a value out of range");
	return v < limit ? v : 0;
}

/* A string, in place in the image (written with its NUL); *len its
 * length. NULL for none (or on a problem, which r says). A string with a
 * NUL inside is refused: C strings would end early. */
static const char *get_strn(struct rd *r, uint32_t *len)
{
	uint32_t n = get32(r);
	*len = 0;
	if (n == PIM_NONE)
		return NULL;
	if (n >= (size_t)(r->end - r->p)) {
		fail(r, "a string longer than the image");
		return NULL;
	}
	if (r->p[n] != '\0' || memchr(r->p, '\0', n)) {
		fail(r, "a string not ended by its NUL, or with one inside");
		return NULL;
	}
	const char *s = (const char *)r->p; /* the image lives as long as the policy */
	r->p += n + 1;
	*len = n;
	return s;
}

static const char *get_str(struct rd *r)
{
	uint32_t n;
	return get_strn(r, &n);
}

static const char *get_str_needed(struct rd *r)
{
	const char *s = get_str(r);
	if (!s)
		fail(r, "a string missing");
	return s;
}

static const struct src_file *get_file(struct rd *r)
{
	uint32_t i = get32(r);
	if (i == PIM_NONE)
		return NULL;
	if (i >= r->nfiles) {
		fail(r, "a file index out of range");
		return NULL;
	}
	return r->files[i];
}

static struct loc get_loc(struct rd *r)
{
	struct loc l = { .file = get_file(r) };
	l.line = get32(r);
	l.col = get32(r);
	l.off = get32(r);
	l.len = get32(r);
	if (l.file && (l.off > l.file->len || l.len > l.file->len - l.off))
		fail(r, "a location outside its file");
	return l;
}

static void get_path(struct rd *r, struct ir_path *p)
{
	uint32_t n;
	p->text = get_strn(r, &n);
	p->len = get32(r);
	p->home_len = get32(r);
	p->lit_prefix = get32(r);
	p->kind = (enum ir_pat_kind)get_enum(r, IR_PAT_GLOB + 1);
	if (!p->text || n != p->len || p->home_len > p->len || p->lit_prefix > p->len) {
		fail(r, "a path pattern that does not hold together");
		return;
	}
	struct ir_path again = { .text = p->text };
	path_classify(&again);
	if (!path_is_normal(p->text, p->len) || again.len != p->len ||
	    again.lit_prefix != p->lit_prefix || again.kind != p->kind)
		fail(r, "a path pattern not in the form the compiler makes");
	if (p->home_len && (!r->home || strncmp(p->text, r->home, p->home_len) != 0 ||
			    (p->text[p->home_len] != '\0' && p->text[p->home_len] != '/')))
		fail(r, "a path's home that is not the policy's");
}

/* A host as target_parse_host makes it: its name read again gives the
 * same kind, name and address (its ports, from 1 up and each range in
 * order, are checked as they are read). */
static void check_host(struct rd *r, const struct ir_host *h)
{
	if (!h->name || !*h->name || strlen(h->name) > 253) {
		fail(r, "a host without a name");
		return;
	}
	char text[260];
	snprintf(text, sizeof text, h->kind == IR_H_SUFFIX ? "*.%s" : h->kind == IR_H_IPV6 ? "[%s]" : "%s",
		 h->name);
	struct ir_host again;
	const char *err;
	if (!target_parse_host(r->a, text, strlen(text), &again, &err) || again.nports ||
	    again.kind != h->kind || strcmp(again.name, h->name) != 0 ||
	    memcmp(again.addr, h->addr, sizeof h->addr) != 0)
		fail(r, "a host not in the form the compiler makes");
}

static void check_mach(struct rd *r, const struct ir_mach *m)
{
	char text[520];
	int n = snprintf(text, sizeof text, "%s%s", m->name ? m->name : "", m->prefix ? "*" : "");
	struct ir_mach again;
	const char *err;
	if (!m->name || n < 0 || (size_t)n >= sizeof text ||
	    !target_parse_mach(r->a, text, (size_t)n, &again, &err) ||
	    again.prefix != m->prefix || strcmp(again.name, m->name) != 0)
		fail(r, "a Mach service not in the form the compiler makes");
}


static void get_rule(struct rd *r, struct ir_rule *x, const struct ir_rule *prev)
{
	x->index = get32(r);
	x->effect = (enum ir_effect)get_enum(r, IR_PROTECT + 1);
	x->access = get32(r);
	x->tkind = (enum ir_target_kind)get_enum(r, IR_T_MACH + 1);
	switch (x->tkind) {
	case IR_T_PATH:
	case IR_T_UNIX:
		get_path(r, &x->t.path);
		break;
	case IR_T_HOST: {
		struct ir_host *h = &x->t.host;
		h->kind = (enum ir_host_kind)get_enum(r, IR_H_IPV6 + 1);
		h->name = get_str(r);
		get(r, h->addr, sizeof h->addr);
		h->nports = get_count(r, 8);
		struct ir_port_range *ports = arena_alloc(r->a, (h->nports + 1) * sizeof *ports);
		for (size_t i = 0; i < h->nports; i++) {
			uint32_t lo = get32(r), hi = get32(r);
			if (lo == 0 || lo > 65535 || hi > 65535 || lo > hi)
				fail(r, "a port range out of order");
			ports[i] = (struct ir_port_range){ (uint16_t)lo, (uint16_t)hi };
		}
		h->ports = ports;
		if (!r->why)
			check_host(r, h);
		break;
	}
	case IR_T_MACH:
		x->t.mach.name = get_str_needed(r);
		x->t.mach.prefix = get_bool(r);
		if (!r->why)
			check_mach(r, &x->t.mach);
		break;
	}
	if (!x->access || (x->access & ~ir_target_family(x->tkind)))
		fail(r, "a rule's access that its target does not take");
	switch (get_enum(r, 3)) {
	case 0:
		break;
	case 1:
		if (!prev || !prev->except) {
			fail(r, "an except list shared with no rule");
			break;
		}
		x->except = prev->except;
		x->nexcept = prev->nexcept;
		break;
	case 2: {
		uint32_t n = get32(r);
		if (n == 0 || n > (size_t)(r->end - r->p) / 36) {
			fail(r, "a count larger than the image");
			break;
		}
		struct ir_except *e = arena_alloc(r->a, n * sizeof *e);
		for (uint32_t i = 0; i < n; i++) {
			get_path(r, &e[i].path);
			e[i].written = get_str(r);
			e[i].loc = get_loc(r);
		}
		x->except = e;
		x->nexcept = n;
		break;
	}
	}
	if (x->nexcept && (x->effect != IR_PROTECT || x->tkind != IR_T_PATH))
		fail(r, "an except on what is not a protect's path");
	x->written = get_str(r);
	x->loc = get_loc(r);
	x->rule_loc = get_loc(r);
	x->layer = get_str(r);
}

/* A profile; its parent's index into *parent (linked by the caller once
 * every profile is read: the parent may come later). */
static struct ir_profile *get_profile(struct rd *r, size_t nall, size_t self, uint32_t *parent)
{
	struct ir_profile *p = arena_alloc(r->a, sizeof *p);
	p->name = get_str_needed(r);
	p->loc = get_loc(r);
	*parent = get32(r);
	if (*parent != PIM_NONE && (*parent >= nall || *parent == self))
		fail(r, "a parent profile out of range");
	p->mode = (enum ir_mode)get_enum(r, IR_MODE_ENFORCE + 1);
	p->mode_loc = get_loc(r);
	p->private_tmp = get_bool(r);
	p->private_home = get_bool(r);
	for (int k = 0; k < IR_LIM_N; k++) {
		struct ir_limit *l = &p->limits[k];
		l->set = get_bool(r);
		l->best_effort = get_bool(r);
		l->value = get64(r);
		l->unit = get64(r);
		l->loc = get_loc(r);
		if (l->set && !l->unit)
			fail(r, "a limit without its unit");
	}
	p->nrules = get_count(r, 16);
	p->rules = arena_alloc(r->a, (p->nrules + 1) * sizeof *p->rules);
	for (size_t i = 0; i < p->nrules; i++) {
		get_rule(r, &p->rules[i], i ? &p->rules[i - 1] : NULL);
		if (p->rules[i].index != i)
			fail(r, "a rule out of its place");
	}
	p->nenv = get_count(r, 12);
	p->env = arena_alloc(r->a, (p->nenv + 1) * sizeof *p->env);
	for (size_t i = 0; i < p->nenv; i++) {
		p->env[i].kind = (enum ir_env_kind)get_enum(r, IR_ENV_UNSET + 1);
		p->env[i].name = get_str_needed(r);
		p->env[i].value = get_str(r);
		p->env[i].loc = get_loc(r);
		if (p->env[i].name && !rsv_env_name_ok(p->env[i].name))
			fail(r, "a bad environment variable name");
		if ((p->env[i].kind == IR_ENV_SET) != (p->env[i].value != NULL))
			fail(r, "an environment step with a value it does not take");
	}
	p->npins = get_count(r, 24);
	p->pins = arena_alloc(r->a, (p->npins + 1) * sizeof *p->pins);
	for (size_t i = 0; i < p->npins; i++) {
		get_path(r, &p->pins[i].pat);
		uint64_t g = get64(r);
		if (g >= p->nrules || p->rules[g].effect == IR_ALLOW)
			fail(r, "a pin's guard out of range");
		p->pins[i].guard = g < p->nrules ? &p->rules[g] : NULL;
	}
	if (get_bool(r)) {
		bool *guard = arena_alloc(r->a, (p->nrules ? p->nrules : 1) * sizeof *guard);
		for (size_t i = 0; i < p->nrules; i++)
			guard[i] = get_bool(r);
		p->guard = guard;
	}
	return p;
}

static const void *next_importer(const void *f) { return ((const struct src_file *)f)->importer; }
static const void *next_parent(const void *p) { return ((const struct ir_profile *)p)->parent; }

/* Whether following `next` from x reaches NULL: each step goes to another
 * of n items, so within n steps, or it goes round. */
static bool chain_ends(const void *x, const void *(*next)(const void *), size_t n)
{
	for (size_t steps = 0; x && steps <= n; steps++)
		x = next(x);
	return x == NULL;
}

static void read_payload(struct rd *r, struct cage_policy *pol)
{
	struct ir_policy *ir = arena_alloc(r->a, sizeof *ir);
	r->nfiles = get_count(r, 28);
	r->files = arena_alloc(r->a, (r->nfiles + 1) * sizeof *r->files);
	for (size_t i = 0; i < r->nfiles; i++)
		r->files[i] = arena_alloc(r->a, sizeof *r->files[i]);
	for (size_t i = 0; i < r->nfiles && !r->why; i++) {
		struct src_file *f = r->files[i];
		f->name = get_str_needed(r);
		f->realpath = get_str(r);
		uint32_t len;
		f->text = get_strn(r, &len);
		f->len = len;
		if (!f->text)
			fail(r, "a source file without its text");
		f->id = (int)get32(r);
		f->stdlib_root = get_str(r);
		f->importer = get_file(r);
		f->import_line = get32(r);
		f->import_col = get32(r);
	}
	/* A chain of importers must end (messages walk it). */
	for (size_t i = 0; i < r->nfiles && !r->why; i++)
		if (!chain_ends(r->files[i], next_importer, r->nfiles))
			fail(r, "files that import each other in a circle");
	ir->files = (const struct src_file **)r->files;
	ir->nfiles = r->nfiles;
	ir->target = (enum ir_target)get_enum(r, IR_TARGET_LINUX + 1);
	ir->home = get_str(r);
	r->home = ir->home;
	ir->fingerprint = get64(r);
	ir->nparams = get_count(r, 24);
	ir->params = arena_alloc(r->a, (ir->nparams + 1) * sizeof *ir->params);
	for (size_t i = 0; i < ir->nparams && !r->why; i++) {
		struct ir_param *pa = &ir->params[i];
		pa->name = get_str_needed(r);
		pa->type = (enum ir_param_type)get_enum(r, IR_P_PORT + 1);
		pa->value = get_str(r);
		pa->from_define = get_bool(r);
		pa->used = get_bool(r);
		pa->loc = get_loc(r);
	}
	ir->nprofiles = get_count(r, 100);
	ir->profiles = arena_alloc(r->a, (ir->nprofiles + 1) * sizeof *ir->profiles);
	uint32_t *parents = arena_alloc(r->a, (ir->nprofiles + 1) * sizeof *parents);
	for (size_t i = 0; i < ir->nprofiles && !r->why; i++)
		ir->profiles[i] = get_profile(r, ir->nprofiles, i, &parents[i]);
	for (size_t i = 0; i < ir->nprofiles && !r->why; i++)
		ir->profiles[i]->parent = parents[i] == PIM_NONE ? NULL : ir->profiles[parents[i]];
	/* A parent chain must end (the backends walk it). */
	for (size_t i = 0; i < ir->nprofiles && !r->why; i++)
		if (!chain_ends(ir->profiles[i], next_parent, ir->nprofiles))
			fail(r, "profiles that extend each other in a circle");
	uint32_t sel = get32(r);
	if (sel >= ir->nprofiles)
		fail(r, "no selected profile");
	ir->selected = r->why ? NULL : ir->profiles[sel];
	pol->ninputs = get_count(r, 20);
	pol->inputs = arena_alloc(r->a, (pol->ninputs + 1) * sizeof *pol->inputs);
	for (size_t i = 0; i < pol->ninputs && !r->why; i++) {
		struct policy_input *in = &pol->inputs[i];
		in->kind = (enum input_kind)get_enum(r, INPUT_FILE + 1);
		in->path = get_str_needed(r);
		in->err = (int)get32(r);
		in->real = get_str(r);
		uint32_t f = get32(r);
		if (in->kind != INPUT_FILE && f != PIM_NONE)
			fail(r, "a file's text for what is not a file");
		if (f != PIM_NONE) {
			if (f >= r->nfiles) {
				fail(r, "a file index out of range");
				continue;
			}
			in->text = r->files[f]->text;
			in->len = r->files[f]->len;
		} else if (in->kind == INPUT_FILE) {
			uint32_t len;
			in->text = get_strn(r, &len);
			in->len = len;
			if (!in->text)
				fail(r, "a file read without its text");
		}
		if (in->kind == INPUT_REAL && !in->err && !in->real)
			fail(r, "a real path missing");
	}
	if (r->p != r->end)
		fail(r, "bytes after the end");
	pol->ir = ir;
}

const char *pim_read(struct cage_policy *p, unsigned char *buf, size_t off, size_t n)
{
	p->image = buf;
	const unsigned char *b = buf + off;
	uint32_t version;
	uint64_t len, sum;
	if (n < PIM_HEADER || memcmp(b, PIM_MAGIC, 8))
		return "not a policy image";
	memcpy(&version, b + 8, 4);
	memcpy(&len, b + 12, 8);
	memcpy(&sum, b + 20, 8);
	if (version != PIM_VERSION)
		return "a policy image of another version";
	if (len != n - PIM_HEADER || XXH3_64bits(b + PIM_HEADER, len) != sum)
		return "a policy image whose checksum does not match";
	struct rd r = { b + PIM_HEADER, b + n, &p->arena, NULL, NULL, 0, NULL };
	read_payload(&r, p);
	return r.why;
}
