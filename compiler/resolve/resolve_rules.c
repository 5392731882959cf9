/*
 * resolve_rules.c - one item of a profile body or module into a layer:
 * rules (one IR rule per target, with its kind checked against the
 * accesses), mode, env and private.
 */
#include "resolve_int.h"
#include "suggest.h"

#include "pat_rel.h"
#include "path.h"
#include "target.h"

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
			rsv_diag(r, DIAG_ERROR, w->loc, "path",
			      "'%s' is not an absolute path; for a host, write 'allow connect \"%s\"'",
			      text, text);
		else
			rsv_diag(r, DIAG_ERROR, w->loc, "path",
			      "relative path '%s': paths start with '/', '~' or a path {param}", text);
		return false;
	}
	char *e = rsv_expand_home(r, text, w->loc, &hl);
	if (!e)
		return false;
	char *norm;
	const char *err;
	if (!path_normalize(r->a, e, strlen(e), &norm, &err)) {
		rsv_diag(r, DIAG_ERROR, w->loc, "path", "bad path '%s': %s", text, err);
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

/* A protect's `except` patterns, each checked to lie inside one of the
 * statement's targets: an except outside them would except nothing, and
 * most likely names a path the author thinks is protected. */
static struct ir_except *make_excepts(struct rsv *r, struct ast_node *n, enum ir_target_kind tk,
				      const rword_vec *targets, const struct ir_path *tpaths,
				      uint32_t *count)
{
	*count = 0;
	if (!n->u.rule.excepts)
		return NULL;
	if (tk != IR_T_PATH) {
		rsv_diag(r, DIAG_ERROR, n->u.rule.except_loc, "except",
			 "'except' takes paths: it needs file accesses (read, write, ...)");
		return NULL;
	}
	rword_vec words = { 0 };
	for (struct ast_str *w = n->u.rule.excepts; w; w = w->next)
		rsv_expand_word(r, w, &words, 0);
	struct ir_except *ex = arena_alloc(r->a, (words.n ? words.n : 1) * sizeof *ex);
	uint32_t m = 0;
	for (size_t i = 0; i < words.n; i++) {
		struct ir_except *e = &ex[m];
		memset(e, 0, sizeof *e);
		if (!make_path(r, &words.v[i], &e->path))
			continue;
		e->written = words.v[i].written;
		e->loc = words.v[i].loc;
		bool inside = false;
		for (size_t k = 0; k < targets->n && !inside; k++)
			inside = tpaths[k].text && pat_path_contains(&tpaths[k], &e->path, NULL, 0) == PAT_YES;
		if (!inside) {
			rsv_diag(r, DIAG_ERROR, e->loc, "except",
				 "except '%s' is not inside any target of this protect", e->written);
			continue;
		}
		m++;
	}
	VEC_FREE(words);
	*count = m;
	return ex;
}

/* The excepts of a statement that meet one of its targets: those are
 * the ones that can leave a path of it out. */
static void rule_excepts(struct rsv *r, struct ir_rule *rule, const struct ir_except *ex, uint32_t n)
{
	if (!n)
		return;
	/* Room for all, filled by one overlap question each (the expensive
	 * part of a protect with many excepts); the unused tail stays in
	 * the arena. */
	struct ir_except *v = arena_alloc(r->a, n * sizeof *v);
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++)
		/* An except inside the target's tree meets it (or matches
		 * nothing, and then leaves nothing out either way). */
		if (pat_path_inside_tree(&rule->t.path, &ex[i].path) ||
		    pat_path_overlap(&rule->t.path, &ex[i].path, NULL, 0) != PAT_NO)
			v[m++] = ex[i];
	if (m) {
		rule->except = v;
		rule->nexcept = m;
	}
}

static void add_rule(struct rsv *r, struct layer *L, struct ast_node *n, const char *layer_name)
{
	uint32_t acc = n->u.rule.access;
	enum ir_effect eff = n->u.rule.effect == AST_ALLOW ? IR_ALLOW
			   : n->u.rule.effect == AST_DENY  ? IR_DENY
							    : IR_PROTECT;
	if (acc == 0) {
		if (eff != IR_PROTECT) {
			rsv_diag(r, DIAG_ERROR, n->loc, "access",
			      "this rule names no access (read, write, exec, connect, ...)");
			return;
		}
		acc = IR_A_FILE;
	}
	/* The target's kind follows from the one family the access is in. */
	enum ir_target_kind tk = IR_T_MACH;
	int families = 0;
	for (int k = IR_T_PATH; k <= IR_T_MACH; k++)
		if (acc & ir_target_family((enum ir_target_kind)k)) {
			tk = (enum ir_target_kind)k;
			families++;
		}
	if (families > 1) {
		rsv_diag(r, DIAG_ERROR, n->u.rule.access_loc, "access",
		      "file accesses, 'connect', 'unix' and 'mach' take different targets; "
		      "write them as separate rules");
		return;
	}
	rword_vec words = { 0 };
	for (struct ast_str *w = n->u.rule.targets; w; w = w->next)
		rsv_expand_word(r, w, &words, 0);
	struct ir_rule *built = arena_alloc(r->a, (words.n ? words.n : 1) * sizeof *built);
	bool *okv = arena_alloc(r->a, (words.n ? words.n : 1) * sizeof *okv);
	struct ir_path *tpaths = arena_alloc(r->a, (words.n ? words.n : 1) * sizeof *tpaths);
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
				rsv_diag(r, DIAG_ERROR, w->loc, "host",
				      "'connect' takes host names, not paths (for a socket file use 'unix')");
				ok = false;
			} else if (!target_parse_host(r->a, w->text, strlen(w->text), &rule.t.host, &err)) {
				rsv_diag(r, DIAG_ERROR, w->loc, "host", "bad host '%s': %s", w->text, err);
				ok = false;
			}
			break;
		case IR_T_MACH:
			if (!target_parse_mach(r->a, w->text, strlen(w->text), &rule.t.mach, &err)) {
				rsv_diag(r, DIAG_ERROR, w->loc, "mach", "bad Mach service '%s': %s", w->text, err);
				ok = false;
			}
			break;
		}
		okv[i] = ok;
		built[i] = rule;
		memset(&tpaths[i], 0, sizeof tpaths[i]);
		if (ok && (tk == IR_T_PATH || tk == IR_T_UNIX))
			tpaths[i] = rule.t.path;
	}
	uint32_t nex;
	struct ir_except *ex = make_excepts(r, n, tk, &words, tpaths, &nex);
	for (size_t i = 0; i < words.n; i++) {
		if (!okv[i])
			continue;
		rule_excepts(r, &built[i], ex, nex);
		VEC_PUSH(L->rules, built[i]);
	}
	VEC_FREE(words);
}

bool rsv_env_name_ok(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_' ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

void rsv_add_item(struct rsv *r, struct layer *L, struct ast_node *n, const char *layer_name)
{
	switch (n->kind) {
	case AST_RULE:
		add_rule(r, L, n, layer_name);
		break;
	case AST_MODE: {
		static const char *const names[] = { "off", "monitor", "enforce-fs", "enforce", NULL };
		const char *v = n->u.mode.value->text;
		size_t m;
		for (m = 0; m < 4; m++)
			if (strcmp(v, names[m]) == 0)
				break;
		if (m == 4) {
			rsv_diag(r, DIAG_ERROR, n->u.mode.value->loc, "mode",
			      "unknown mode '%s' (off, monitor, enforce-fs or enforce)%s", v,
			      suggest_hint_among(r->a, v, names));
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
			if (!rsv_env_name_ok(s->text)) {
				rsv_diag(r, DIAG_ERROR, s->loc, "env", "bad environment variable name '%s'", s->text);
				continue;
			}
			struct ir_env_op op = { .kind = n->kind == AST_ENV_KEEP ? IR_ENV_KEEP : IR_ENV_UNSET,
						.name = s->text, .loc = s->loc };
			VEC_PUSH(L->env, op);
		}
		break;
	case AST_ENV_SET: {
		struct ast_str *s = n->u.env_set.name;
		if (!rsv_env_name_ok(s->text)) {
			rsv_diag(r, DIAG_ERROR, s->loc, "env", "bad environment variable name '%s'", s->text);
			break;
		}
		bool ok;
		char *v = rsv_interpolate(r, n->u.env_set.value, &ok);
		if (!ok)
			break;
		if (strlen(v) != n->u.env_set.value->len && !strchr(n->u.env_set.value->text, '{')) {
			rsv_diag(r, DIAG_ERROR, n->u.env_set.value->loc, "env", "NUL byte in value");
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
				rsv_diag(r, DIAG_ERROR, s->loc, "private",
				      "unknown private area '%s' (tmp or home)%s", s->text,
				      suggest_hint_among(r->a, s->text,
							 (const char *const[]){ "tmp", "home", NULL }));
		}
		break;
	case AST_LIMIT:
		rsv_add_limit(r, L, n);
		break;
	default:
		break;
	}
}
