/*
 * api.c - the public libcage interface (cage.h) over the internal modules.
 * This file owns the policy handle: cage_policy_free() is the one place
 * its memory is released.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"
#include "cage.h"
#include "pimage.h"
#include "policy.h"

const char *cage_version(void)
{
	return CAGE_VERSION_STRING;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p) {
		fputs("cage: out of memory\n", stderr);
		abort();
	}
	return p;
}

static void push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv) {
		fputs("cage: out of memory\n", stderr);
		abort();
	}
	nv[(*n)++] = xstrdup(s);
	*v = nv;
}

cage_options *cage_options_new(void)
{
	return calloc(1, sizeof(cage_options));
}

void cage_options_free(cage_options *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->ndefines; i++)
		free(o->defines[i]);
	for (size_t i = 0; i < o->nincludes; i++)
		free(o->includes[i]);
	free(o->defines);
	free(o->includes);
	free(o->stdlib);
	free(o->home);
	free(o->profile);
	free(o);
}

bool cage_options_define(cage_options *o, const char *def)
{
	const char *eq = strchr(def, '=');
	if (!eq || eq == def)
		return false;
	push(&o->defines, &o->ndefines, def);
	return true;
}

void cage_options_param_fn(cage_options *o, cage_param_fn fn, void *ctx)
{
	o->param_fn = fn;
	o->param_ctx = fn ? ctx : NULL;
}

void cage_options_include(cage_options *o, const char *dir)
{
	push(&o->includes, &o->nincludes, dir);
}

static void set_str(char **slot, const char *v)
{
	free(*slot);
	*slot = v ? xstrdup(v) : NULL;
}

void cage_options_stdlib(cage_options *o, const char *dir) { set_str(&o->stdlib, dir); }
void cage_options_home(cage_options *o, const char *dir) { set_str(&o->home, dir); }
void cage_options_profile(cage_options *o, const char *name) { set_str(&o->profile, name); }

bool cage_options_target(cage_options *o, const char *name)
{
	enum ir_target t;
	if (!name || !ir_target_parse(name, &t))
		return false;
	o->target = t;
	o->has_target = true;
	return true;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_list(char *const *a, size_t na, char *const *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

bool cage_options_same(const cage_options *a, const cage_options *b)
{
	return same_list(a->defines, a->ndefines, b->defines, b->ndefines) &&
	       same_list(a->includes, a->nincludes, b->includes, b->nincludes) &&
	       same_str(a->stdlib, b->stdlib) && same_str(a->home, b->home) &&
	       same_str(a->profile, b->profile) && a->has_target == b->has_target &&
	       (!a->has_target || a->target == b->target) && a->param_fn == b->param_fn &&
	       a->param_ctx == b->param_ctx;
}

/* Appends s (NULL: none) as its length, then its bytes. */
static bool key_str(FILE *f, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
	return fwrite(&n, sizeof n, 1, f) == 1 && (!s || fwrite(s, 1, n, f) == n);
}

static bool key_list(FILE *f, char *const *v, size_t n)
{
	uint64_t c = n;
	bool ok = fwrite(&c, sizeof c, 1, f) == 1;
	for (size_t i = 0; ok && i < n; i++)
		ok = key_str(f, v[i]);
	return ok;
}

unsigned char *cage_options_key(const cage_options *o, size_t *n)
{
	char *b = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&b, &len);
	if (!f)
		return NULL;
	uint32_t target = o->has_target ? (uint32_t)o->target + 1 : 0;
	uint8_t fn = o->param_fn != NULL;
	bool ok = key_list(f, o->defines, o->ndefines) && key_list(f, o->includes, o->nincludes) &&
		  key_str(f, o->stdlib) && key_str(f, o->home) && key_str(f, o->profile) &&
		  fwrite(&target, sizeof target, 1, f) == 1 && fwrite(&fn, 1, 1, f) == 1;
	if (fclose(f) != 0 || !ok) {
		free(b);
		return NULL;
	}
	*n = len;
	return (unsigned char *)b;
}

static cage_policy *load(const char *name, const char *text, size_t len, const cage_options *o)
{
	static const cage_options none;
	cage_policy *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	arena_init(&p->arena);
	diag_list_init(&p->diags, &p->arena);
	resolve_policy(p, name, text, len, o ? o : &none);
	return p;
}

cage_policy *cage_load_file(const char *path, const cage_options *o)
{
	return load(path, NULL, 0, o);
}

cage_policy *cage_load_string(const char *name, const char *text, size_t len, const cage_options *o)
{
	return load(name ? name : "<string>", text ? text : "", text ? len : 0, o);
}

bool cage_inputs_unchanged(const cage_policy *p, const char **changed, size_t *n)
{
	return policy_inputs_unchanged(p, changed, n);
}

bool cage_policy_image(const cage_policy *p, unsigned char **out, size_t *n)
{
	return pim_write(p, out, n);
}

cage_policy *cage_policy_adopt_image(unsigned char *buf, size_t off, size_t n, const char **why)
{
	cage_policy *p = calloc(1, sizeof(*p));
	if (!p) {
		free(buf);
		*why = "out of memory";
		return NULL;
	}
	arena_init(&p->arena);
	diag_list_init(&p->diags, &p->arena);
	if ((*why = pim_read(p, buf, off, n))) {
		cage_policy_free(p);
		return NULL;
	}
	return p;
}

cage_policy *cage_policy_from_image(const unsigned char *b, size_t n, const char **why)
{
	unsigned char *copy = malloc(n ? n : 1);
	if (!copy) {
		*why = "out of memory";
		return NULL;
	}
	memcpy(copy, b, n);
	return cage_policy_adopt_image(copy, 0, n, why);
}

void cage_policy_free(cage_policy *p)
{
	if (!p)
		return;
	diag_list_free(&p->diags);
	arena_free(&p->arena);
	free(p->image);
	free(p);
}

size_t cage_error_count(const cage_policy *p) { return p->diags.errors; }
size_t cage_diagnostic_count(const cage_policy *p) { return p->diags.n; }

bool cage_diagnostic_get(const cage_policy *p, size_t i, struct cage_diagnostic *out)
{
	if (i >= p->diags.n)
		return false;
	const struct diag *d = p->diags.items[i];
	out->severity = d->sev == DIAG_ERROR ? CAGE_ERROR : d->sev == DIAG_WARNING ? CAGE_WARNING : CAGE_NOTE;
	out->file = d->loc.file ? d->loc.file->name : NULL;
	out->line = d->loc.line;
	out->column = d->loc.col;
	out->id = d->id;
	out->message = d->msg;
	return true;
}

void cage_print_diagnostics(const cage_policy *p, FILE *out, bool color)
{
	diag_render(out, &p->diags, color);
}

static void fill_verdict(cage_policy *p, const struct ir_verdict *iv, struct cage_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->allowed = iv->allowed;
	v->by_default = iv->rule == NULL;
	if (!iv->rule)
		return;
	const struct ir_rule *r = iv->rule;
	char acc[128], tgt[512];
	ir_access_names(r->access, acc, sizeof(acc));
	ir_target_display(r, tgt, sizeof(tgt));
	snprintf(p->verdict_text, sizeof(p->verdict_text), "%s %s %s", ir_effect_name(r->effect), acc, tgt);
	v->rule = p->verdict_text;
	v->file = r->loc.file ? r->loc.file->name : NULL;
	v->line = r->loc.line;
	v->column = r->loc.col;
}

static const struct { const char *name; uint32_t bit; } query_access[] = {
	{ "read", IR_A_READ },   { "read-metadata", IR_A_READ_META }, { "write", IR_A_WRITE },
	{ "create", IR_A_CREATE }, { "delete", IR_A_DELETE },       { "exec", IR_A_EXEC },
	{ "unix", IR_A_UNIX },   { "mach", IR_A_MACH },
};

bool cage_query_path(cage_policy *p, const char *access, const char *path,
		     struct cage_verdict *v, const char **err)
{
	const struct ir_profile *prof = p->ir ? p->ir->selected : NULL;
	if (!prof) {
		*err = "the policy has errors; it cannot be queried";
		return false;
	}
	uint32_t bit = 0;
	for (size_t i = 0; i < sizeof(query_access) / sizeof(query_access[0]); i++)
		if (strcmp(access, query_access[i].name) == 0)
			bit = query_access[i].bit;
	if (!bit) {
		*err = "unknown access (read, read-metadata, write, create, delete, exec, unix, mach)";
		return false;
	}
	struct ir_verdict iv;
	if (bit == IR_A_MACH) {
		ir_eval_mach(prof, path, &iv);
		fill_verdict(p, &iv, v);
		return true;
	}
	char *norm;
	if (!path_query(&p->arena, p->ir->home, path, &norm, err))
		return false;
	ir_eval_path(prof, bit, norm, &iv);
	fill_verdict(p, &iv, v);
	return true;
}

bool cage_query_host(cage_policy *p, const char *host, unsigned port, struct cage_verdict *v,
		     const char **err)
{
	const struct ir_profile *prof = p->ir ? p->ir->selected : NULL;
	if (!prof) {
		*err = "the policy has errors; it cannot be queried";
		return false;
	}
	if (port < 1 || port > 65535) {
		*err = "port must be 1 to 65535";
		return false;
	}
	size_t n = strlen(host);
	char *h = arena_strdup(&p->arena, host);
	if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
		h[n - 1] = '\0';
		h++;
	}
	unsigned char a6[16];
	if (strchr(h, ':')) {
		if (inet_pton(AF_INET6, h, a6) != 1) {
			*err = "bad IPv6 address";
			return false;
		}
		char canon[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, a6, canon, sizeof(canon));
		h = arena_strdup(&p->arena, canon);
	} else {
		n = strlen(h);
		if (n && h[n - 1] == '.')
			h[--n] = '\0';
		for (char *c = h; *c; c++)
			*c = (char)tolower((unsigned char)*c);
	}
	struct ir_verdict iv;
	ir_eval_host(prof, h, port, &iv);
	fill_verdict(p, &iv, v);
	return true;
}

bool cage_has_host_rules(const cage_policy *p)
{
	if (!p->ir || !p->ir->selected)
		return false;
	const struct ir_profile *prof = p->ir->selected;
	for (size_t i = 0; i < prof->nrules; i++)
		if (prof->rules[i].tkind == IR_T_HOST)
			return true;
	return false;
}
