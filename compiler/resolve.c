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
#include "policy.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "../lang/parse_ctx.h"
#include "load.h"
#include "path.h"
#include "target.h"

enum { RESOLVE_MAX_IMPORT_DEPTH = 32, RESOLVE_MAX_LIST_DEPTH = 16 };

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
};

struct pdef {
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
};

__attribute__((format(printf, 5, 6))) static struct diag *
rdiag(struct rsv *r, enum diag_sev sev, struct loc loc, const char *id, const char *fmt, ...)
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

/* ---------------------------------------------------------------- loading */

static struct rfile *find_loaded(struct rsv *r, const char *real)
{
	for (size_t i = 0; i < r->all_loaded.n; i++)
		if (r->all_loaded.v[i]->src->realpath &&
		    strcmp(r->all_loaded.v[i]->src->realpath, real) == 0)
			return r->all_loaded.v[i];
	return NULL;
}

static bool on_stack(struct rsv *r, const char *real)
{
	for (size_t i = 0; i < r->loading.n; i++)
		if (strcmp(r->loading.v[i], real) == 0)
			return true;
	return false;
}

static void load_one(struct rsv *r, struct rfile *rf, size_t depth);

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

/* Finds the file an import names: relative ("./", "../"), absolute, or on
 * the search path (-I dirs, then the standard library). */
static bool import_locate(struct rsv *r, const struct rfile *from, const char *name,
			  char **fs_path, char **display)
{
	const char *file = has_suffix(name, ".cage") ? name : arena_printf(r->a, "%s.cage", name);
	if (strncmp(name, "./", 2) == 0 || strncmp(name, "../", 3) == 0) {
		*fs_path = load_join(r->a, from->fs_dir, file);
		*display = load_join(r->a, from->display_dir, file);
		return true;
	}
	if (name[0] == '/') {
		*fs_path = load_join(r->a, "/", file);
		*display = *fs_path;
		return true;
	}
	for (size_t i = 0; i < r->o->nincludes; i++) {
		char *p = load_join(r->a, r->o->includes[i], file);
		if (access(p, F_OK) == 0) {
			*fs_path = p;
			*display = p;
			return true;
		}
	}
	const char *std = r->o->stdlib ? r->o->stdlib : CAGE_STDLIB_DIR;
	*fs_path = load_join(r->a, std, file);
	*display = arena_strdup(r->a, file);
	return access(*fs_path, F_OK) == 0;
}

static void do_imports(struct rsv *r, struct rfile *rf, size_t depth)
{
	for (struct ast_node *n = rf->ast->items; n; n = n->next) {
		if (n->kind != AST_IMPORT)
			continue;
		struct ast_str *s = n->u.import.path;
		struct policy_import rec = { .from = rf->src, .loc = s->loc };
		char *fs_path = NULL, *display = NULL;
		if (s->len == 0 || memchr(s->text, '\0', s->len) || s->len != strlen(s->text)) {
			rdiag(r, DIAG_ERROR, s->loc, "import", "empty import name");
			VEC_PUSH(r->imports, rec);
			continue;
		}
		if (!import_locate(r, rf, s->text, &fs_path, &display)) {
			rdiag(r, DIAG_ERROR, s->loc, "import",
			      "cannot find import '%s' (searched %zu -I director%s and the standard library)",
			      s->text, r->o->nincludes, r->o->nincludes == 1 ? "y" : "ies");
			VEC_PUSH(r->imports, rec);
			continue;
		}
		char real[PATH_MAX];
		if (access(fs_path, F_OK) != 0) {
			rdiag(r, DIAG_ERROR, s->loc, "import", "cannot find import '%s' (no file %s)",
			      s->text, fs_path);
			VEC_PUSH(r->imports, rec);
			continue;
		}
		if (!realpath(fs_path, real)) {
			rdiag(r, DIAG_ERROR, s->loc, "import", "cannot open import '%s' (%s): %s",
			      s->text, fs_path, strerror(errno));
			VEC_PUSH(r->imports, rec);
			continue;
		}
		if (on_stack(r, real)) {
			struct diag *d = rdiag(r, DIAG_ERROR, s->loc, "import-cycle",
					       "import cycle: '%s' is already being imported", display);
			(void)d;
			VEC_PUSH(r->imports, rec);
			continue;
		}
		struct rfile *done = find_loaded(r, real);
		if (done) {
			rec.target = done->src;
			VEC_PUSH(r->imports, rec);
			continue;
		}
		if (depth + 1 > RESOLVE_MAX_IMPORT_DEPTH) {
			rdiag(r, DIAG_ERROR, s->loc, "import",
			      "imports nested more than %d deep", RESOLVE_MAX_IMPORT_DEPTH);
			VEC_PUSH(r->imports, rec);
			continue;
		}
		char *text;
		size_t len;
		const char *err;
		if (!load_read(r->a, fs_path, &text, &len, &err)) {
			rdiag(r, DIAG_ERROR, s->loc, "import", "%s", err);
			VEC_PUSH(r->imports, rec);
			continue;
		}
		struct rfile *child = arena_alloc(r->a, sizeof(*child));
		struct src_file *src = arena_alloc(r->a, sizeof(*src));
		src->name = display;
		src->realpath = arena_strdup(r->a, real);
		src->text = text;
		src->len = len;
		src->importer = rf->src;
		src->import_line = s->loc.line;
		src->import_col = s->loc.col;
		child->src = src;
		child->fs_dir = load_dirname(r->a, fs_path);
		child->display_dir = load_dirname(r->a, display);
		rec.target = src;
		VEC_PUSH(r->imports, rec);
		load_one(r, child, depth + 1);
	}
}

static void check_nul(struct rsv *r, struct src_file *f, bool *binary)
{
	const char *nul = memchr(f->text, '\0', f->len);
	*binary = nul != NULL;
	if (nul) {
		size_t off = (size_t)(nul - f->text);
		uint32_t line = 1;
		size_t ls = 0;
		for (size_t i = 0; i < off; i++)
			if (f->text[i] == '\n') {
				line++;
				ls = i + 1;
			}
		struct loc l = { .file = f, .line = line, .col = diag_display_col(f->text, ls, off),
				 .off = (uint32_t)off, .len = 1 };
		rdiag(r, DIAG_ERROR, l, "syntax",
		      "NUL byte in policy text (is this a binary file?)");
	}
}

static void check_version(struct rsv *r, struct rfile *rf)
{
	struct ast_node *first = rf->ast->items;
	bool seen = false;
	for (struct ast_node *n = first; n; n = n->next) {
		if (n->kind != AST_VERSION)
			continue;
		if (seen || n != first) {
			rdiag(r, DIAG_ERROR, n->loc, "version",
			      "the version line must be the first statement, and only once");
			continue;
		}
		seen = true;
		if (strcmp(n->u.version.number->text, "1") != 0)
			rdiag(r, DIAG_ERROR, n->u.version.number->loc, "version",
			      "unsupported language version %s (this cagec understands 1)",
			      n->u.version.number->text);
	}
	if (!first || first->kind != AST_VERSION) {
		if (rf->ast->syntax_errors && !first)
			return; /* nothing parsed: the syntax errors say enough */
		struct loc l = { .file = rf->src, .line = 1, .col = 1, .off = 0,
				 .len = rf->src->len ? 1 : 0 };
		if (l.len && (rf->src->text[0] == '\n' || rf->src->text[0] == '\r'))
			l.len = 0;
		rdiag(r, DIAG_ERROR, l, "version",
		      "missing version line: a policy starts with 'cage 1'");
	}
}

static void load_one(struct rsv *r, struct rfile *rf, size_t depth)
{
	rf->src->id = (int)r->all_loaded.n; /* pre-order: the main file is 0 */
	VEC_PUSH(r->all_loaded, rf);
	bool binary;
	check_nul(r, rf->src, &binary);
	if (binary) {
		rf->ast = arena_alloc(r->a, sizeof(*rf->ast));
		rf->ast->src = rf->src;
	} else {
		rf->ast = parse_file(rf->src, r->a, r->d);
		check_version(r, rf);
	}
	const char *real = rf->src->realpath ? rf->src->realpath : "";
	VEC_PUSH(r->loading, real);
	do_imports(r, rf, depth);
	r->loading.n--;
	VEC_PUSH(r->files, rf);
}

/* ---------------------------------------------------------------- names */

static struct ir_param *find_param(struct rsv *r, const char *name, size_t len)
{
	for (size_t i = 0; i < r->params.n; i++) {
		const char *pn = r->params.v[i].param->name;
		if (strlen(pn) == len && memcmp(pn, name, len) == 0)
			return r->params.v[i].param;
	}
	return NULL;
}

static struct ldef *find_list(struct rsv *r, const char *name)
{
	for (size_t i = 0; i < r->lists.n; i++)
		if (strcmp(r->lists.v[i].name, name) == 0)
			return &r->lists.v[i];
	return NULL;
}

static struct pdef *find_profile(struct rsv *r, const char *name)
{
	for (size_t i = 0; i < r->profiles.n; i++)
		if (strcmp(r->profiles.v[i]->name, name) == 0)
			return r->profiles.v[i];
	return NULL;
}

static bool name_taken(struct rsv *r, const struct ast_str *name, const char *what)
{
	struct loc prev = { 0 };
	bool taken = false;
	struct ir_param *p = find_param(r, name->text, name->len);
	struct ldef *l = find_list(r, name->text);
	if (p) {
		taken = true;
		prev = p->loc;
	} else if (l) {
		taken = true;
		prev = l->node->u.list.name->loc;
	}
	if (taken) {
		struct diag *d = rdiag(r, DIAG_ERROR, name->loc, "redefinition",
				       "%s '%s' reuses a name that is already defined", what, name->text);
		diag_note(r->d, d, prev, "'%s' was first defined here", name->text);
	}
	return taken;
}

static const char *param_type_names[] = { "path", "host", "string", "port" };

/* Returns the home-expanded absolute text of a path written by the user,
 * or NULL after reporting why not. */
static char *expand_home(struct rsv *r, const char *s, struct loc loc, uint32_t *home_len)
{
	*home_len = 0;
	if (s[0] != '~')
		return (char *)s;
	if (s[1] != '\0' && s[1] != '/') {
		rdiag(r, DIAG_ERROR, loc, "path", "'~user' is not supported; write '~/' or an absolute path");
		return NULL;
	}
	if (!r->home) {
		rdiag(r, DIAG_ERROR, loc, "path",
		      "'~' needs a home directory: set HOME or pass --home DIR");
		return NULL;
	}
	*home_len = (uint32_t)r->home_len;
	return arena_printf(r->a, "%s%s", r->home, s + 1);
}

static bool check_param_value(struct rsv *r, struct ir_param *p, const char *v, struct loc loc)
{
	const char *err = NULL;
	switch (p->type) {
	case IR_P_PATH: {
		if (path_has_glob(v, strlen(v)) || strchr(v, '{') || strchr(v, '}')) {
			err = "a path param must be a plain path (no '*', '?', '{' or '}')";
			break;
		}
		uint32_t hl;
		char *e = expand_home(r, v, loc, &hl);
		if (!e)
			return false;
		char *norm;
		if (!path_normalize(r->a, e, strlen(e), &norm, &err))
			break;
		/* Keep the value as written relative to ~ so that display stays
		 * home-relative; normalisation happens again after interpolation. */
		p->value = v[0] == '~' ? v : norm;
		return true;
	}
	case IR_P_HOST: {
		struct ir_host h;
		if (!target_parse_host(r->a, v, strlen(v), &h, &err))
			break;
		p->value = v;
		return true;
	}
	case IR_P_PORT: {
		char *end;
		long n = strtol(v, &end, 10);
		if (*v == '\0' || *end != '\0' || n < 1 || n > 65535) {
			err = "a port is a number from 1 to 65535";
			break;
		}
		p->value = v;
		return true;
	}
	case IR_P_STRING:
		p->value = v;
		return true;
	}
	rdiag(r, DIAG_ERROR, loc, "param", "bad value '%s' for %s param '%s': %s", v,
	      param_type_names[p->type], p->name, err);
	return false;
}

static void collect(struct rsv *r, struct rfile *rf)
{
	for (struct ast_node *n = rf->ast->items; n; n = n->next) {
		if (n->kind == AST_PARAM) {
			struct ast_str *name = n->u.param.name, *type = n->u.param.type;
			if (name_taken(r, name, "param"))
				continue;
			struct ir_param *p = arena_alloc(r->a, sizeof(*p));
			p->name = name->text;
			p->loc = name->loc;
			size_t t;
			for (t = 0; t < 4; t++)
				if (strcmp(type->text, param_type_names[t]) == 0)
					break;
			if (t == 4) {
				rdiag(r, DIAG_ERROR, type->loc, "param",
				      "unknown param type '%s' (path, host, string or port)", type->text);
				p->type = IR_P_STRING;
			} else {
				p->type = (enum ir_param_type)t;
			}
			struct pnode pn = { n, p };
			VEC_PUSH(r->params, pn);
		} else if (n->kind == AST_LIST) {
			if (name_taken(r, n->u.list.name, "list"))
				continue;
			struct ldef l = { .name = n->u.list.name->text, .node = n };
			VEC_PUSH(r->lists, l);
		} else if (n->kind == AST_PROFILE) {
			struct pdef *prev = find_profile(r, n->u.profile.name->text);
			if (prev) {
				struct diag *d = rdiag(r, DIAG_ERROR, n->u.profile.name->loc, "redefinition",
						       "profile '%s' is defined twice", prev->name);
				diag_note(r->d, d, prev->node->u.profile.name->loc, "first defined here");
				continue;
			}
			struct pdef *p = arena_alloc(r->a, sizeof(*p));
			p->name = n->u.profile.name->text;
			p->node = n;
			p->file = rf->src;
			VEC_PUSH(r->profiles, p);
		}
	}
}

static void assign_params(struct rsv *r)
{
	/* -D first: each must name a declared param. */
	for (size_t i = 0; i < r->o->ndefines; i++) {
		const char *def = r->o->defines[i];
		const char *eq = strchr(def, '=');
		struct loc none = { 0 };
		struct ir_param *p = find_param(r, def, (size_t)(eq - def));
		if (!p) {
			rdiag(r, DIAG_ERROR, none, "unknown-param",
			      "-D %.*s: the policy declares no param of that name", (int)(eq - def), def);
			continue;
		}
		if (p->from_define) {
			rdiag(r, DIAG_ERROR, none, "param", "-D %s given more than once", p->name);
			continue;
		}
		p->from_define = true;
		struct loc ploc = p->loc;
		if (!check_param_value(r, p, arena_strdup(r->a, eq + 1), ploc))
			p->value = NULL;
	}
	for (size_t i = 0; i < r->params.n; i++) {
		struct ir_param *p = r->params.v[i].param;
		struct ast_node *n = r->params.v[i].node;
		if (p->from_define)
			continue;
		if (n->u.param.deflt) {
			check_param_value(r, p, n->u.param.deflt->text, n->u.param.deflt->loc);
		} else {
			rdiag(r, DIAG_ERROR, p->loc, "param",
			      "param '%s' has no value: give it with -D %s=%s", p->name, p->name,
			      p->type == IR_P_PATH ? "PATH" : p->type == IR_P_HOST ? "HOST"
			      : p->type == IR_P_PORT ? "PORT" : "VALUE");
		}
	}
}

/* ---------------------------------------------------------------- targets */

/* Narrows `loc` (a string token) to where `needle` appears in its raw text. */
static struct loc sub_loc(struct loc loc, const char *needle, size_t nlen)
{
	if (!loc.file || loc.off + loc.len > loc.file->len)
		return loc;
	const char *raw = loc.file->text + loc.off;
	for (size_t i = 0; i + nlen <= loc.len; i++)
		if (memcmp(raw + i, needle, nlen) == 0) {
			struct loc l = loc;
			l.off += (uint32_t)i;
			l.len = (uint32_t)nlen;
			l.col += (uint32_t)i; /* same line, no tabs inside strings */
			return l;
		}
	return loc;
}

/* Replaces each {name} with the param's value. */
static char *interpolate(struct rsv *r, const struct ast_str *s, bool *ok)
{
	*ok = true;
	if (!memchr(s->text, '{', s->len) && !memchr(s->text, '}', s->len))
		return (char *)s->text;
	size_t cap = s->len + 1;
	char *out = malloc(cap);
	size_t n = 0;
	for (size_t i = 0; i < s->len;) {
		char c = s->text[i];
		const char *add = NULL;
		size_t alen = 0;
		if (c == '{') {
			const char *close = memchr(s->text + i, '}', s->len - i);
			if (!close) {
				rdiag(r, DIAG_ERROR, s->loc, "syntax", "unmatched '{' in '%s'", s->text);
				*ok = false;
				break;
			}
			size_t nl = (size_t)(close - (s->text + i + 1));
			struct ir_param *p = find_param(r, s->text + i + 1, nl);
			if (!p) {
				struct loc l = sub_loc(s->loc, s->text + i, nl + 2);
				rdiag(r, DIAG_ERROR, l, "unknown-param", "no param named '%.*s'",
				      (int)nl, s->text + i + 1);
				*ok = false;
			} else {
				p->used = true;
				if (!p->value)
					*ok = false;
				else {
					add = p->value;
					alen = strlen(add);
				}
			}
			i += nl + 2;
		} else if (c == '}') {
			rdiag(r, DIAG_ERROR, s->loc, "syntax", "unmatched '}' in '%s'", s->text);
			*ok = false;
			break;
		} else {
			add = s->text + i;
			alen = 1;
			i++;
		}
		if (add) {
			if (n + alen + 1 > cap) {
				cap = (n + alen + 1) * 2;
				char *nb = realloc(out, cap);
				if (!nb) {
					free(out);
					fputs("cage: out of memory\n", stderr);
					abort();
				}
				out = nb;
			}
			memcpy(out + n, add, alen);
			n += alen;
		}
	}
	char *res = arena_strndup(r->a, out, n);
	free(out);
	return res;
}

/* A resolved word: the text to parse as a target and where it came from. */
struct rword {
	const char *text;
	struct loc loc;
	bool subtree; /* a bare path param: the directory and all below */
	const char *written;
};

static void expand_word(struct rsv *r, struct ast_str *w, void *out_vec, size_t depth);

typedef VEC(struct rword) rword_vec;

static void expand_list(struct rsv *r, struct ldef *l, struct ast_str *use, rword_vec *out,
			size_t depth)
{
	if (l->state == 1 || depth > RESOLVE_MAX_LIST_DEPTH) {
		rdiag(r, DIAG_ERROR, use->loc, "list", "list '%s' refers to itself", l->name);
		return;
	}
	l->state = 1;
	for (struct ast_str *it = l->node->u.list.items; it; it = it->next)
		expand_word(r, it, out, depth + 1);
	l->state = 0;
}

static void expand_word(struct rsv *r, struct ast_str *w, void *out_vec, size_t depth)
{
	rword_vec *out = out_vec;
	if (!w->is_ident) {
		bool ok;
		char *t = interpolate(r, w, &ok);
		if (!ok)
			return;
		struct rword rw = { .text = t, .loc = w->loc, .written = w->text };
		VEC_PUSH(*out, rw);
		return;
	}
	struct ir_param *p = find_param(r, w->text, w->len);
	if (p) {
		p->used = true;
		if (!p->value)
			return;
		struct rword rw = { .text = p->value, .loc = w->loc, .subtree = p->type == IR_P_PATH,
				    .written = w->text };
		VEC_PUSH(*out, rw);
		return;
	}
	struct ldef *l = find_list(r, w->text);
	if (l) {
		expand_list(r, l, w, out, depth);
		return;
	}
	rdiag(r, DIAG_ERROR, w->loc, "unknown-name",
	      "'%s' is neither a param nor a list (write paths and hosts in quotes)", w->text);
}

static bool looks_like_host(const char *s)
{
	const char *dot = strchr(s, '.');
	return dot && !strchr(s, '/') && dot != s;
}

static bool make_path(struct rsv *r, const struct rword *w, struct ir_path *out)
{
	uint32_t hl;
	const char *text = w->text;
	if (w->subtree)
		text = strcmp(text, "/") == 0 ? "/**" : arena_printf(r->a, "%s/**", text);
	if (text[0] != '/' && text[0] != '~') {
		if (looks_like_host(text))
			rdiag(r, DIAG_ERROR, w->loc, "path",
			      "'%s' is not an absolute path; for a host, write 'allow connect \"%s\"'",
			      text, text);
		else
			rdiag(r, DIAG_ERROR, w->loc, "path",
			      "relative path '%s': paths start with '/', '~' or a path {param}", text);
		return false;
	}
	char *e = expand_home(r, text, w->loc, &hl);
	if (!e)
		return false;
	char *norm;
	const char *err;
	if (!path_normalize(r->a, e, strlen(e), &norm, &err)) {
		rdiag(r, DIAG_ERROR, w->loc, "path", "bad path '%s': %s", text, err);
		return false;
	}
	memset(out, 0, sizeof(*out));
	out->text = norm;
	/* `~/..` and friends leave the home directory: then it is not home-relative. */
	if (hl && (strncmp(norm, r->home, hl) != 0 || (norm[hl] != '\0' && norm[hl] != '/')))
		hl = 0;
	out->home_len = hl;
	path_classify(out);
	return true;
}

static void add_rule(struct rsv *r, struct layer *L, struct ast_node *n, const char *layer_name)
{
	uint32_t acc = n->u.rule.access;
	enum ir_effect eff = n->u.rule.effect == AST_ALLOW ? IR_ALLOW
			   : n->u.rule.effect == AST_DENY  ? IR_DENY
							    : IR_PROTECT;
	if (acc == 0) {
		if (eff != IR_PROTECT) {
			rdiag(r, DIAG_ERROR, n->loc, "access",
			      "this rule names no access (read, write, exec, connect, ...)");
			return;
		}
		acc = IR_A_FILE;
	}
	int families = !!(acc & IR_A_FILE) + !!(acc & IR_A_CONNECT) + !!(acc & IR_A_UNIX) +
		       !!(acc & IR_A_MACH);
	if (families > 1) {
		rdiag(r, DIAG_ERROR, n->u.rule.access_loc, "access",
		      "file accesses, 'connect', 'unix' and 'mach' take different targets; "
		      "write them as separate rules");
		return;
	}
	enum ir_target_kind tk = (acc & IR_A_FILE)      ? IR_T_PATH
			       : (acc & IR_A_CONNECT) ? IR_T_HOST
			       : (acc & IR_A_UNIX)    ? IR_T_UNIX
						      : IR_T_MACH;
	rword_vec words = { 0 };
	for (struct ast_str *w = n->u.rule.targets; w; w = w->next)
		expand_word(r, w, &words, 0);
	for (size_t i = 0; i < words.n; i++) {
		struct rword *w = &words.v[i];
		struct ir_rule rule = { .effect = eff, .access = acc, .tkind = tk, .loc = w->loc,
					.rule_loc = n->loc, .layer = layer_name,
					.written = w->written };
		const char *err;
		bool ok = true;
		switch (tk) {
		case IR_T_PATH:
		case IR_T_UNIX:
			ok = make_path(r, w, &rule.t.path);
			break;
		case IR_T_HOST:
			if (w->subtree || w->text[0] == '/' || w->text[0] == '~') {
				rdiag(r, DIAG_ERROR, w->loc, "host",
				      "'connect' takes host names, not paths (for a socket file use 'unix')");
				ok = false;
			} else if (!target_parse_host(r->a, w->text, strlen(w->text), &rule.t.host, &err)) {
				rdiag(r, DIAG_ERROR, w->loc, "host", "bad host '%s': %s", w->text, err);
				ok = false;
			}
			break;
		case IR_T_MACH:
			if (!target_parse_mach(r->a, w->text, strlen(w->text), &rule.t.mach, &err)) {
				rdiag(r, DIAG_ERROR, w->loc, "mach", "bad Mach service '%s': %s", w->text, err);
				ok = false;
			}
			break;
		}
		if (ok)
			VEC_PUSH(L->rules, rule);
	}
	VEC_FREE(words);
}

static bool env_name_ok(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_' ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static void add_item(struct rsv *r, struct layer *L, struct ast_node *n, const char *layer_name)
{
	switch (n->kind) {
	case AST_RULE:
		add_rule(r, L, n, layer_name);
		break;
	case AST_MODE: {
		static const char *names[] = { "off", "monitor", "enforce-fs", "enforce" };
		const char *v = n->u.mode.value->text;
		size_t m;
		for (m = 0; m < 4; m++)
			if (strcmp(v, names[m]) == 0)
				break;
		if (m == 4) {
			rdiag(r, DIAG_ERROR, n->u.mode.value->loc, "mode",
			      "unknown mode '%s' (off, monitor, enforce-fs or enforce)", v);
			break;
		}
		L->has_mode = true;
		L->mode = (enum ir_mode)m;
		L->mode_loc = n->u.mode.value->loc;
		break;
	}
	case AST_ENV_KEEP:
	case AST_ENV_UNSET:
		for (struct ast_str *s = n->u.names.names; s; s = s->next) {
			if (!env_name_ok(s->text)) {
				rdiag(r, DIAG_ERROR, s->loc, "env", "bad environment variable name '%s'", s->text);
				continue;
			}
			struct ir_env_op op = { .kind = n->kind == AST_ENV_KEEP ? IR_ENV_KEEP : IR_ENV_UNSET,
						.name = s->text, .loc = s->loc };
			VEC_PUSH(L->env, op);
		}
		break;
	case AST_ENV_SET: {
		struct ast_str *s = n->u.env_set.name;
		if (!env_name_ok(s->text)) {
			rdiag(r, DIAG_ERROR, s->loc, "env", "bad environment variable name '%s'", s->text);
			break;
		}
		bool ok;
		char *v = interpolate(r, n->u.env_set.value, &ok);
		if (!ok)
			break;
		if (strlen(v) != n->u.env_set.value->len && !strchr(n->u.env_set.value->text, '{')) {
			rdiag(r, DIAG_ERROR, n->u.env_set.value->loc, "env", "NUL byte in value");
			break;
		}
		struct ir_env_op op = { .kind = IR_ENV_SET, .name = s->text, .value = v, .loc = s->loc };
		VEC_PUSH(L->env, op);
		break;
	}
	case AST_PRIVATE:
		for (struct ast_str *s = n->u.names.names; s; s = s->next) {
			if (strcmp(s->text, "tmp") == 0)
				L->private_tmp = true;
			else if (strcmp(s->text, "home") == 0)
				L->private_home = true;
			else
				rdiag(r, DIAG_ERROR, s->loc, "private",
				      "unknown private area '%s' (tmp or home)", s->text);
		}
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------- profiles */

static struct ir_profile *build_profile(struct rsv *r, const char *name, struct loc loc,
					const struct layer *module, struct pdef **chain, size_t nchain)
{
	struct ir_profile *p = arena_alloc(r->a, sizeof(*p));
	p->name = name;
	p->loc = loc;
	size_t nrules = module->rules.n, nenv = module->env.n;
	for (size_t i = 0; i < nchain; i++) {
		nrules += chain[i]->body->rules.n;
		nenv += chain[i]->body->env.n;
	}
	p->rules = arena_alloc(r->a, (nrules ? nrules : 1) * sizeof(*p->rules));
	p->env = arena_alloc(r->a, (nenv ? nenv : 1) * sizeof(*p->env));
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
	}
	for (size_t i = 0; i < p->nrules; i++)
		p->rules[i].index = (uint32_t)i;
	return p;
}

static void layer_free(struct layer *L)
{
	if (!L)
		return;
	VEC_FREE(L->rules);
	VEC_FREE(L->env);
}

static void resolve_profile(struct rsv *r, struct pdef *pd, const struct layer *module)
{
	if (pd->state == 2)
		return;
	pd->state = 1;
	struct ast_str *parent = pd->node->u.profile.parent;
	if (parent) {
		struct pdef *pp = find_profile(r, parent->text);
		if (!pp) {
			rdiag(r, DIAG_ERROR, parent->loc, "extends", "no profile named '%s'", parent->text);
		} else if (pp->state == 1) {
			rdiag(r, DIAG_ERROR, parent->loc, "extends",
			      "profile '%s' extends itself through '%s'", pd->name, parent->text);
		} else {
			resolve_profile(r, pp, module);
			pd->parent = pp;
		}
	}
	pd->body = arena_alloc(r->a, sizeof(*pd->body));
	for (struct ast_node *n = pd->node->u.profile.body; n; n = n->next)
		add_item(r, pd->body, n, pd->name);
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

void resolve_policy(struct cage_policy *pol, const char *path, const char *text, size_t len,
		    const struct cage_options *o)
{
	struct rsv r = { .pol = pol, .a = &pol->arena, .d = &pol->diags, .o = o };
	struct ir_policy *ir = arena_alloc(r.a, sizeof(*ir));
	pol->ir = ir;

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
		char real[PATH_MAX];
		if (realpath(path, real))
			src->realpath = arena_strdup(r.a, real);
	}
	struct rfile *main = arena_alloc(r.a, sizeof(*main));
	main->src = src;
	main->fs_dir = text ? "." : load_dirname(r.a, path);
	main->display_dir = text ? "." : load_dirname(r.a, path);
	load_one(&r, main, 0);

	for (size_t i = 0; i < r.files.n; i++)
		collect(&r, r.files.v[i]);
	assign_params(&r);

	struct layer module = { 0 };
	for (size_t i = 0; i < r.files.n; i++)
		for (struct ast_node *n = r.files.v[i]->ast->items; n; n = n->next)
			add_item(&r, &module, n, NULL);
	for (size_t i = 0; i < r.profiles.n; i++)
		resolve_profile(&r, r.profiles.v[i], &module);

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
	ir->fingerprint = fingerprint(&r);

	/* Selection: --profile, else the main file's last profile, else the
	 * module-level items alone as profile "main". */
	struct ir_profile *sel = NULL;
	if (o->profile) {
		struct pdef *pd = find_profile(&r, o->profile);
		if (pd)
			sel = pd->ir;
		else {
			struct loc none = { 0 };
			char names[512] = "";
			size_t n = 0;
			for (size_t i = 0; i < r.profiles.n && n < sizeof(names) - 64; i++)
				n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
						      i ? ", " : "", r.profiles.v[i]->name);
			diag_add(r.d, DIAG_ERROR, none, "profile", "no profile named '%s'%s%s",
				 o->profile, n ? "; this policy has: " : " (this policy defines none)",
				 names);
		}
	} else {
		for (size_t i = 0; i < r.profiles.n; i++)
			if (r.profiles.v[i]->file == main->src)
				sel = r.profiles.v[i]->ir;
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
	VEC_FREE(r.files);
	VEC_FREE(r.loading);
	VEC_FREE(r.all_loaded);
	VEC_FREE(r.imports);
	VEC_FREE(r.params);
	VEC_FREE(r.lists);
	VEC_FREE(r.profiles);
}
