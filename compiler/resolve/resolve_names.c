/*
 * resolve_names.c - the resolver's names: params (types, -D values,
 * defaults), lists and profiles, and the expansion of words that use them
 * ({param} interpolation, bare params, nested lists, `~`).
 */
#include "resolve_int.h"
#include "suggest.h"

#include <xxhash.h>

#include "path.h"
#include "target.h"

enum name_kind { NAME_PARAM, NAME_LIST, NAME_PROFILE };

static const char *name_at(const struct rsv *r, enum name_kind k, size_t i)
{
	switch (k) {
	case NAME_PARAM: return r->params.v[i].param->name;
	case NAME_LIST: return r->lists.v[i].name;
	default: return r->profiles.v[i]->name;
	}
}

static struct name_index *index_of(struct rsv *r, enum name_kind k)
{
	return k == NAME_PARAM ? &r->param_ix : k == NAME_LIST ? &r->list_ix : &r->profile_ix;
}

/* Position + 1 of `name` among the kind's entries, 0 when absent. */
static size_t name_find(struct rsv *r, enum name_kind k, const char *name, size_t len)
{
	const struct name_index *ix = index_of(r, k);
	if (!ix->cap)
		return 0;
	size_t mask = ix->cap - 1;
	for (size_t h = XXH3_64bits(name, len) & mask;; h = (h + 1) & mask) {
		size_t v = ix->slot[h];
		if (!v)
			return 0;
		const char *cand = name_at(r, k, v - 1);
		if (strlen(cand) == len && memcmp(cand, name, len) == 0)
			return v;
	}
}

static void name_put(size_t *slots, size_t cap, const char *name, size_t pos)
{
	size_t mask = cap - 1;
	size_t h = XXH3_64bits(name, strlen(name)) & mask;
	while (slots[h])
		h = (h + 1) & mask;
	slots[h] = pos + 1;
}

/* Records that entry `pos` of the kind's vector is called what it is called. */
static void name_add(struct rsv *r, enum name_kind k, size_t pos)
{
	struct name_index *ix = index_of(r, k);
	if (2 * (ix->n + 1) > ix->cap) {
		size_t cap = ix->cap ? ix->cap * 2 : 64;
		size_t *slots = calloc(cap, sizeof(*slots));
		if (!slots) {
			fputs("cage: out of memory\n", stderr);
			abort();
		}
		for (size_t i = 0; i < ix->cap; i++)
			if (ix->slot[i])
				name_put(slots, cap, name_at(r, k, ix->slot[i] - 1), ix->slot[i] - 1);
		free(ix->slot);
		ix->slot = slots;
		ix->cap = cap;
	}
	name_put(ix->slot, ix->cap, name_at(r, k, pos), pos);
	ix->n++;
}

void rsv_names_free(struct rsv *r)
{
	free(r->param_ix.slot);
	free(r->list_ix.slot);
	free(r->profile_ix.slot);
}

struct ir_param *rsv_find_param(struct rsv *r, const char *name, size_t len)
{
	size_t v = name_find(r, NAME_PARAM, name, len);
	return v ? r->params.v[v - 1].param : NULL;
}

struct ldef *rsv_find_list(struct rsv *r, const char *name)
{
	size_t v = name_find(r, NAME_LIST, name, strlen(name));
	return v ? &r->lists.v[v - 1] : NULL;
}

struct pdef *rsv_find_profile(struct rsv *r, const char *name)
{
	size_t v = name_find(r, NAME_PROFILE, name, strlen(name));
	return v ? r->profiles.v[v - 1] : NULL;
}

static bool name_taken(struct rsv *r, const struct ast_str *name, const char *what)
{
	struct loc prev = { 0 };
	bool taken = false;
	struct ir_param *p = rsv_find_param(r, name->text, name->len);
	struct ldef *l = rsv_find_list(r, name->text);
	if (p) {
		taken = true;
		prev = p->loc;
	} else if (l) {
		taken = true;
		prev = l->node->u.list.name->loc;
	}
	if (taken) {
		struct diag *d = rsv_diag(r, DIAG_ERROR, name->loc, "redefinition",
				       "%s '%s' reuses a name that is already defined", what, name->text);
		diag_note(r->d, d, prev, "'%s' was first defined here", name->text);
	}
	return taken;
}

static const char *param_type_names[] = { "path", "host", "string", "port" };

/* Returns the home-expanded absolute text of a path written by the user,
 * or NULL after reporting why not. */
char *rsv_expand_home(struct rsv *r, const char *s, struct loc loc, uint32_t *home_len)
{
	*home_len = 0;
	if (s[0] != '~')
		return (char *)s;
	if (s[1] != '\0' && s[1] != '/') {
		rsv_diag(r, DIAG_ERROR, loc, "path", "'~user' is not supported; write '~/' or an absolute path");
		return NULL;
	}
	if (!r->home) {
		rsv_diag(r, DIAG_ERROR, loc, "path",
		      "'~' needs a home directory: set HOME or pass --home DIR");
		return NULL;
	}
	*home_len = (uint32_t)r->home_len;
	return arena_concat(r->a, r->home, s + 1);
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
		char *e = rsv_expand_home(r, v, loc, &hl);
		if (!e)
			return false;
		char *norm;
		if (!path_normalize(r->a, e, strlen(e), &norm, &err)) {
			/* -D project=. : the shell knows the absolute path */
			if (p->from_define && v[0] != '/' && v[0] != '~')
				err = arena_printf(r->a, "%s; give an absolute path, e.g. -D %s=\"$PWD%s%s\"",
						   err, p->name,
						   strcmp(v, ".") == 0 || strcmp(v, "./") == 0 ? "" : "/",
						   strcmp(v, ".") == 0 || strcmp(v, "./") == 0 ? ""
						   : strncmp(v, "./", 2) == 0 ? v + 2 : v);
			break;
		}
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
	rsv_diag(r, DIAG_ERROR, loc, "param", "bad value '%s' for %s param '%s': %s", v,
	      param_type_names[p->type], p->name, err);
	return false;
}

void rsv_collect(struct rsv *r, struct rfile *rf)
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
				rsv_diag(r, DIAG_ERROR, type->loc, "param",
				      "unknown param type '%s' (path, host, string or port)%s", type->text,
				      suggest_hint_among(r->a, type->text,
							 (const char *const[]){ "path", "host", "string",
										"port", NULL }));
				p->type = IR_P_STRING;
			} else {
				p->type = (enum ir_param_type)t;
			}
			struct pnode pn = { n, p };
			VEC_PUSH(r->params, pn);
			name_add(r, NAME_PARAM, r->params.n - 1);
		} else if (n->kind == AST_LIST) {
			if (name_taken(r, n->u.list.name, "list"))
				continue;
			struct ldef l = { .name = n->u.list.name->text, .node = n };
			VEC_PUSH(r->lists, l);
			name_add(r, NAME_LIST, r->lists.n - 1);
		} else if (n->kind == AST_PROFILE) {
			struct pdef *prev = rsv_find_profile(r, n->u.profile.name->text);
			if (prev) {
				struct diag *d = rsv_diag(r, DIAG_ERROR, n->u.profile.name->loc, "redefinition",
						       "profile '%s' is defined twice", prev->name);
				diag_note(r->d, d, prev->node->u.profile.name->loc, "first defined here");
				continue;
			}
			struct pdef *p = arena_alloc(r->a, sizeof(*p));
			p->name = n->u.profile.name->text;
			p->node = n;
			p->file = rf->src;
			VEC_PUSH(r->profiles, p);
			name_add(r, NAME_PROFILE, r->profiles.n - 1);
		}
	}
}

const char *rsv_near_name(struct rsv *r, const char *name, size_t len, bool lists)
{
	struct suggest sg;
	suggest_init(&sg, name, len);
	for (size_t i = 0; i < r->params.n; i++)
		suggest_offer(&sg, r->params.v[i].param->name);
	for (size_t i = 0; lists && i < r->lists.n; i++)
		suggest_offer(&sg, r->lists.v[i].name);
	return suggest_hint(&sg, r->a);
}

const char *rsv_near_profile(struct rsv *r, const char *name)
{
	struct suggest sg;
	suggest_init(&sg, name, strlen(name));
	for (size_t i = 0; i < r->profiles.n; i++)
		suggest_offer(&sg, r->profiles.v[i]->name);
	return suggest_hint(&sg, r->a);
}

void rsv_assign_params(struct rsv *r, const char *profile)
{
	/* -D first: each must name a declared param. */
	for (size_t i = 0; i < r->o->ndefines; i++) {
		const char *def = r->o->defines[i];
		const char *eq = strchr(def, '=');
		struct loc none = { 0 };
		struct ir_param *p = rsv_find_param(r, def, (size_t)(eq - def));
		if (!p) {
			rsv_diag(r, DIAG_ERROR, none, "unknown-param",
			      "-D %.*s: the policy declares no param of that name%s", (int)(eq - def), def,
			      rsv_near_name(r, def, (size_t)(eq - def), false));
			continue;
		}
		if (p->from_define) {
			rsv_diag(r, DIAG_ERROR, none, "param", "-D %s given more than once", p->name);
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
		const char *v = r->o->param_fn
					? r->o->param_fn(r->o->param_ctx, p->name,
							 p->loc.file ? p->loc.file->name : "", profile)
					: NULL;
		if (v) {
			/* As a -D would be: the same flag, the same check. */
			p->from_define = true;
			if (!check_param_value(r, p, arena_strdup(r->a, v), p->loc))
				p->value = NULL;
			continue;
		}
		if (n->u.param.deflt) {
			check_param_value(r, p, n->u.param.deflt->text, n->u.param.deflt->loc);
		} else {
			rsv_diag(r, DIAG_ERROR, p->loc, "param",
			      "param '%s' has no value: give it with -D %s=%s", p->name, p->name,
			      p->type == IR_P_PATH ? "PATH" : p->type == IR_P_HOST ? "HOST"
			      : p->type == IR_P_PORT ? "PORT" : "VALUE");
		}
	}
}

/* ---- words: interpolation and expansion of params and lists ---- */

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
char *rsv_interpolate(struct rsv *r, const struct ast_str *s, bool *ok)
{
	*ok = true;
	if (!memchr(s->text, '{', s->len) && !memchr(s->text, '}', s->len))
		return (char *)s->text;
	/* Built on the stack, on the heap only when it outgrows that (a
	 * path with its params in is rarely a few hundred bytes). */
	char stack[1024];
	stack[0] = '\0';
	size_t cap = sizeof stack;
	char *out = stack;
	size_t n = 0;
	for (size_t i = 0; i < s->len;) {
		char c = s->text[i];
		const char *add = NULL;
		size_t alen = 0;
		if (c == '{') {
			const char *close = memchr(s->text + i, '}', s->len - i);
			if (!close) {
				rsv_diag(r, DIAG_ERROR, s->loc, "syntax", "unmatched '{' in '%s'", s->text);
				*ok = false;
				break;
			}
			size_t nl = (size_t)(close - (s->text + i + 1));
			struct ir_param *p = rsv_find_param(r, s->text + i + 1, nl);
			if (!p) {
				struct loc l = sub_loc(s->loc, s->text + i, nl + 2);
				rsv_diag(r, DIAG_ERROR, l, "unknown-param", "no param named '%.*s'%s",
				      (int)nl, s->text + i + 1, rsv_near_name(r, s->text + i + 1, nl, false));
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
			rsv_diag(r, DIAG_ERROR, s->loc, "syntax", "unmatched '}' in '%s'", s->text);
			*ok = false;
			break;
		} else {
			/* the literal run up to the next brace, in one piece */
			size_t j = i + 1;
			while (j < s->len && s->text[j] != '{' && s->text[j] != '}')
				j++;
			add = s->text + i;
			alen = j - i;
			i = j;
		}
		if (add) {
			if (n + alen + 1 > cap) {
				cap = (n + alen + 1) * 2;
				char *nb = out == stack ? malloc(cap) : realloc(out, cap);
				if (!nb) {
					fputs("cage: out of memory\n", stderr);
					abort();
				}
				if (out == stack)
					memcpy(nb, stack, n);
				out = nb;
			}
			memcpy(out + n, add, alen);
			n += alen;
		}
	}
	char *res = arena_strndup(r->a, out, n);
	if (out != stack)
		free(out);
	return res;
}

static void expand_list(struct rsv *r, struct ldef *l, struct ast_str *use, rword_vec *out,
			size_t depth)
{
	if (l->state == 1) {
		rsv_diag(r, DIAG_ERROR, use->loc, "list", "list '%s' refers to itself", l->name);
		return;
	}
	if (depth > RESOLVE_MAX_LIST_DEPTH) {
		rsv_diag(r, DIAG_ERROR, use->loc, "list", "lists nested more than %d deep",
			 RESOLVE_MAX_LIST_DEPTH);
		return;
	}
	l->state = 1;
	for (struct ast_str *it = l->node->u.list.items; it; it = it->next)
		rsv_expand_word(r, it, out, depth + 1);
	l->state = 0;
}

void rsv_expand_word(struct rsv *r, struct ast_str *w, rword_vec *out, size_t depth)
{
	/* Lists that name lists several times grow exponentially with depth:
	 * count every step so such a policy fails fast instead of hanging. */
	if (++r->expand_steps > RESOLVE_MAX_EXPANSION) {
		if (r->expand_steps == RESOLVE_MAX_EXPANSION + 1)
			rsv_diag(r, DIAG_ERROR, w->loc, "too-large",
				 "policy too large: its lists and rules expand to more than %d targets",
				 RESOLVE_MAX_EXPANSION);
		return;
	}
	if (!w->is_ident) {
		bool ok;
		char *t = rsv_interpolate(r, w, &ok);
		if (!ok)
			return;
		struct rword rw = { .text = t, .loc = w->loc, .written = w->text };
		VEC_PUSH(*out, rw);
		return;
	}
	struct ir_param *p = rsv_find_param(r, w->text, w->len);
	if (p) {
		p->used = true;
		if (!p->value)
			return;
		struct rword rw = { .text = p->value, .loc = w->loc, .subtree = p->type == IR_P_PATH,
				    .written = w->text };
		VEC_PUSH(*out, rw);
		return;
	}
	struct ldef *l = rsv_find_list(r, w->text);
	if (l) {
		expand_list(r, l, w, out, depth);
		return;
	}
	const char *near = rsv_near_name(r, w->text, w->len, true);
	rsv_diag(r, DIAG_ERROR, w->loc, "unknown-name", "'%s' is neither a param nor a list%s",
		 w->text, *near ? near : " (write paths and hosts in quotes)");
}
