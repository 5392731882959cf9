/*
 * resolve.c - from the ASTs of a main file and its imports to the IR.
 *
 * Order of work: load the main file and, depth first, its imports (cycle
 * and depth checks); collect params, lists and profiles from every file;
 * give params their values (-D beats the default); turn module-level items
 * and each profile body into a "layer" of IR rules, once each; then build
 * every profile by concatenating layers in the documented order.
 *
 * Every problem is a diagnostic and resolution keeps going, so one run
 * reports everything wrong with a policy. Only the IR of an error-free
 * policy is ever handed to a backend.
 */
#include "resolve_int.h"

#include <errno.h>

#include <limits.h>
#include <stdarg.h>
#include <xxhash.h>

#include "load.h"
#include "path.h"

struct diag *rsv_diag(struct rsv *r, enum diag_sev sev, struct loc loc, const char *id, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	struct diag *d = diag_add(r->d, sev, loc, id, "%s", buf);
	if (loc.file)
		diag_add_import_chain(r->d, d, loc.file);
	return d;
}

static struct ir_profile *build_profile(struct rsv *r, const char *name, struct loc loc,
					const struct layer *module, struct pdef **chain, size_t nchain)
{
	struct ir_profile *p = arena_alloc(r->a, sizeof(*p));
	p->name = name;
	p->loc = loc;
	const struct layer empty = { 0 };
	size_t nrules = module->rules.n, nenv = module->env.n;
	for (size_t i = 0; i < nchain; i++) {
		nrules += chain[i]->body->rules.n;
		nenv += chain[i]->body->env.n;
	}
	if (nrules > RESOLVE_MAX_IR_RULES - r->ir_rules) {
		if (!r->too_large)
			rsv_diag(r, DIAG_ERROR, loc, "too-large",
				 "policy too large: with profile '%s' the profiles would hold more "
				 "than %d rules in all", name, RESOLVE_MAX_IR_RULES);
		r->too_large = true;
		nchain = 0; /* an empty stand-in: the error stops the compile */
		module = &empty;
		nrules = nenv = 0;
	}
	r->ir_rules += nrules;
	/* Every element is copied in below, so only an empty list's one
	 * stand-in element needs zeroing. */
	p->rules = nrules ? arena_alloc_raw(r->a, nrules * sizeof(*p->rules))
			  : arena_alloc(r->a, sizeof(*p->rules));
	p->env = nenv ? arena_alloc_raw(r->a, nenv * sizeof(*p->env)) : arena_alloc(r->a, sizeof(*p->env));
	p->mode = IR_MODE_ENFORCE;
	for (size_t i = 0; i <= nchain; i++) {
		const struct layer *L = i == 0 ? module : chain[i - 1]->body;
		if (L->rules.n)
			memcpy(p->rules + p->nrules, L->rules.v, L->rules.n * sizeof(*p->rules));
		p->nrules += L->rules.n;
		if (L->env.n)
			memcpy(p->env + p->nenv, L->env.v, L->env.n * sizeof(*p->env));
		p->nenv += L->env.n;
		if (L->has_mode) {
			p->mode = L->mode;
			p->mode_loc = L->mode_loc;
		}
		p->private_tmp |= L->private_tmp;
		p->private_home |= L->private_home;
		for (int k = 0; k < IR_LIM_N; k++)
			rsv_merge_limit(r, &p->limits[k], &L->limits[k], (enum ir_limit_kind)k);
	}
	for (size_t i = 0; i < p->nrules; i++)
		p->rules[i].index = (uint32_t)i;
	ir_pins_build(r->a, p);
	return p;
}

static void layer_free(struct layer *L)
{
	if (!L)
		return;
	VEC_FREE(L->rules);
	VEC_FREE(L->env);
}

static void resolve_profile(struct rsv *r, struct pdef *pd, const struct layer *module,
			    unsigned level)
{
	if (pd->state == 2)
		return;
	pd->state = 1;
	pd->chain_depth = 1;
	struct ast_str *parent = pd->node->u.profile.parent;
	if (parent) {
		struct pdef *pp = rsv_find_profile(r, parent->text);
		if (!pp) {
			rsv_diag(r, DIAG_ERROR, parent->loc, "extends", "no profile named '%s'%s",
				 parent->text, rsv_near_profile(r, parent->text));
		} else if (pp->state == 1) {
			rsv_diag(r, DIAG_ERROR, parent->loc, "extends",
			      "profile '%s' extends itself through '%s'", pd->name, parent->text);
		} else if (level >= RESOLVE_MAX_EXTENDS_DEPTH) {
			rsv_diag(r, DIAG_ERROR, parent->loc, "extends",
				 "'extends' chains longer than %d profiles are not supported",
				 RESOLVE_MAX_EXTENDS_DEPTH);
		} else {
			resolve_profile(r, pp, module, level + 1);
			if (pp->chain_depth >= RESOLVE_MAX_EXTENDS_DEPTH) {
				rsv_diag(r, DIAG_ERROR, parent->loc, "extends",
					 "'extends' chains longer than %d profiles are not supported",
					 RESOLVE_MAX_EXTENDS_DEPTH);
			} else {
				pd->parent = pp;
				pd->chain_depth = pp->chain_depth + 1;
			}
		}
	}
	pd->body = arena_alloc(r->a, sizeof(*pd->body));
	for (struct ast_node *n = pd->node->u.profile.body; n; n = n->next)
		rsv_add_item(r, pd->body, n, pd->name);
	/* chain root-first */
	size_t depth = 0;
	for (struct pdef *q = pd; q && depth <= r->profiles.n; q = q->parent)
		depth++;
	struct pdef **chain = arena_alloc(r->a, depth * sizeof(*chain));
	size_t k = depth;
	for (struct pdef *q = pd; q && k > 0; q = q->parent)
		chain[--k] = q;
	pd->ir = build_profile(r, pd->name, pd->node->u.profile.name->loc, module, chain, depth);
	pd->ir->parent = pd->parent ? pd->parent->ir : NULL;
	pd->state = 2;
}

static uint64_t fingerprint(struct rsv *r)
{
	XXH3_state_t *st = XXH3_createState();
	if (!st)
		abort();
	XXH3_64bits_reset(st);
	for (size_t i = 0; i < r->files.n; i++) {
		const struct src_file *f = r->files.v[i]->src;
		XXH3_64bits_update(st, f->name, strlen(f->name) + 1);
		XXH3_64bits_update(st, f->text, f->len + 1);
	}
	for (size_t i = 0; i < r->params.n; i++) {
		const struct ir_param *p = r->params.v[i].param;
		XXH3_64bits_update(st, p->name, strlen(p->name) + 1);
		if (p->value)
			XXH3_64bits_update(st, p->value, strlen(p->value) + 1);
	}
	uint64_t h = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	return h;
}

/* The main file's last profile, or NULL: what runs without --profile. */
static struct pdef *main_profile(const struct rsv *r, const struct src_file *main)
{
	struct pdef *last = NULL;
	for (size_t i = 0; i < r->profiles.n; i++)
		if (r->profiles.v[i]->file == main)
			last = r->profiles.v[i];
	return last;
}

/* The name of the profile the selection below will pick, known once the
 * files are read: --profile, else the main file's last profile, else the
 * module-level items as "main". */
static const char *selected_name(const struct rsv *r, const struct src_file *main)
{
	const struct pdef *pd = r->o->profile ? NULL : main_profile(r, main);
	return r->o->profile ? r->o->profile : pd ? pd->name : "main";
}

void resolve_policy(struct cage_policy *pol, const char *path, const char *text, size_t len,
		    const struct cage_options *o)
{
	struct rsv r = { .pol = pol, .a = &pol->arena, .d = &pol->diags, .o = o,
			 .realdirs = { .a = &pol->arena } };
	struct ir_policy *ir = arena_alloc(r.a, sizeof(*ir));
	pol->ir = ir;
	ir->target = o->has_target ? o->target : IR_TARGET_HOST;

	const char *home = o->home ? o->home : getenv("HOME");
	if (home && home[0] == '/') {
		char *norm;
		const char *err;
		if (path_normalize(r.a, home, strlen(home), &norm, &err) &&
		    !path_has_glob(norm, strlen(norm)) && strcmp(norm, "/") != 0) {
			r.home = norm;
			r.home_len = strlen(norm);
		}
	}
	ir->home = r.home;

	struct src_file *src = arena_alloc(r.a, sizeof(*src));
	src->name = arena_strdup(r.a, path);
	if (text) {
		src->text = arena_strndup(r.a, text, len);
		src->len = len;
	} else {
		char *t;
		size_t n;
		const char *err;
		if (!load_read(r.a, path, &t, &n, &err)) {
			struct loc none = { 0 };
			diag_add(r.d, DIAG_ERROR, none, "io", "%s", err);
			pol->io_error = true;
			return;
		}
		src->text = t;
		src->len = n;
		rsv_input(&r, INPUT_FILE, path, 0, NULL, t, n);
		char real[PATH_MAX];
		if (realpath(path, real))
			src->realpath = arena_strdup(r.a, real);
		rsv_input(&r, INPUT_REAL, path, src->realpath ? 0 : errno, src->realpath, NULL, 0);
	}
	struct rfile *main = arena_alloc(r.a, sizeof(*main));
	main->src = src;
	main->fs_dir = text ? "." : load_dirname(r.a, path);
	main->display_dir = text ? "." : load_dirname(r.a, path);
	rsv_load(&r, main, 0);

	for (size_t i = 0; i < r.files.n; i++)
		rsv_collect(&r, r.files.v[i]);
	rsv_assign_params(&r, selected_name(&r, main->src));

	struct layer module = { 0 };
	for (size_t i = 0; i < r.files.n; i++)
		for (struct ast_node *n = r.files.v[i]->ast->items; n; n = n->next)
			rsv_add_item(&r, &module, n, NULL);
	for (size_t i = 0; i < r.profiles.n; i++)
		resolve_profile(&r, r.profiles.v[i], &module, 1);

	ir->nfiles = r.files.n;
	ir->files = arena_alloc(r.a, (r.files.n + 1) * sizeof(*ir->files));
	pol->asts = arena_alloc(r.a, (r.files.n + 1) * sizeof(*pol->asts));
	/* files[0] is the main file, then the others in load order */
	size_t k = 0;
	ir->files[k] = main->src;
	pol->asts[k++] = main->ast;
	for (size_t i = 0; i < r.files.n; i++)
		if (r.files.v[i] != main) {
			ir->files[k] = r.files.v[i]->src;
			pol->asts[k++] = r.files.v[i]->ast;
		}
	ir->nparams = r.params.n;
	ir->params = arena_alloc(r.a, (r.params.n + 1) * sizeof(*ir->params));
	for (size_t i = 0; i < r.params.n; i++)
		ir->params[i] = *r.params.v[i].param;
	ir->nprofiles = r.profiles.n;
	ir->profiles = arena_alloc(r.a, (r.profiles.n + 2) * sizeof(*ir->profiles));
	for (size_t i = 0; i < r.profiles.n; i++)
		ir->profiles[i] = r.profiles.v[i]->ir;
	pol->imports = arena_alloc(r.a, (r.imports.n + 1) * sizeof(*pol->imports));
	if (r.imports.n)
		memcpy(pol->imports, r.imports.v, r.imports.n * sizeof(*pol->imports));
	pol->nimports = r.imports.n;
	pol->inputs = arena_alloc(r.a, (r.inputs.n + 1) * sizeof(*pol->inputs));
	if (r.inputs.n)
		memcpy(pol->inputs, r.inputs.v, r.inputs.n * sizeof(*pol->inputs));
	pol->ninputs = r.inputs.n;
	ir->fingerprint = fingerprint(&r);

	/* Selection: --profile, else the main file's last profile, else the
	 * module-level items alone as profile "main". */
	struct ir_profile *sel = NULL;
	if (o->profile) {
		struct pdef *pd = rsv_find_profile(&r, o->profile);
		if (pd)
			sel = pd->ir;
		else {
			struct loc none = { 0 };
			char names[512] = "";
			size_t n = 0;
			for (size_t i = 0; i < r.profiles.n && n < sizeof(names) - 64; i++)
				n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
						      i ? ", " : "", r.profiles.v[i]->name);
			diag_add(r.d, DIAG_ERROR, none, "profile", "no profile named '%s'%s%s%s",
				 o->profile, rsv_near_profile(&r, o->profile),
				 n ? "; this policy has: " : " (this policy defines none)", names);
		}
	} else {
		struct pdef *pd = main_profile(&r, main->src);
		if (pd)
			sel = pd->ir;
		if (!sel) {
			struct loc l = { .file = main->src };
			sel = build_profile(&r, "main", l, &module, NULL, 0);
			ir->profiles[ir->nprofiles++] = sel;
		}
	}
	diag_sort(r.d);
	if (pol->diags.errors == 0)
		ir->selected = sel;

	layer_free(&module);
	for (size_t i = 0; i < r.profiles.n; i++)
		layer_free(r.profiles.v[i]->body);
	VEC_FREE(r.loose_warned);
	VEC_FREE(r.files);
	VEC_FREE(r.loading);
	VEC_FREE(r.all_loaded);
	VEC_FREE(r.imports);
	VEC_FREE(r.inputs);
	VEC_FREE(r.params);
	VEC_FREE(r.lists);
	VEC_FREE(r.profiles);
	load_realdirs_free(&r.realdirs);
	rsv_names_free(&r);
}
