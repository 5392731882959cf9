/*
 * gs_rules.c - what gs_find found, as rules of the selected profile
 * (gs.h): the policy's own git allowlist re-rooted onto each git
 * directory, and a protect for each configured path, all pointing at one
 * synthetic source, "<discovered>", whose lines are those rules as text.
 */
#include "gs.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_find.h"
#include "gs_keep.h"
#include "hashfeed.h"
#include "path.h"
#include "cage.h"
#include "policy.h"

/* a is b, or below it */
static bool under(const char *a, const char *b)
{
	size_t n = strlen(b);
	if (n == 1 && b[0] == '/')
		return true;
	return !strncmp(a, b, n) && (a[n] == '\0' || a[n] == '/');
}

/* The directory a path rule's matches live below: its literal part. */
static const char *rule_root(struct arena *a, const struct ir_path *p)
{
	if (p->kind == IR_PAT_EXACT)
		return p->text;
	size_t n = p->lit_prefix;
	while (n > 0 && p->text[n - 1] != '/')
		n--;
	if (n > 1)
		n--; /* the slash itself, but keep "/" */
	return arena_strndup(a, p->text, n ? n : 1);
}

static const char *workspace_of(cage_policy *pol)
{
	const struct ir_policy *ir = pol->ir;
	for (size_t i = 0; i < ir->nparams; i++) {
		const struct ir_param *p = &ir->params[i];
		char *path;
		const char *perr;
		if (p->type == IR_P_PATH && p->value && !strcmp(p->name, "workspace") &&
		    path_query(&pol->arena, ir->home, p->value, &path, &perr))
			return path;
	}
	return NULL;
}

/* Text of the synthetic source, and the rules pointing into it. */
struct out {
	struct arena *a;
	char *text;
	size_t len;
	FILE *f;
	unsigned line;
	struct ir_rule *v;
	size_t n, cap;
	const char *home;
};

/* `target` as a normalised pattern, or false with err set. */
static bool pattern(struct out *o, const char *target, struct ir_path *pp, char *err,
		    size_t errlen)
{
	char *t;
	const char *perr;
	if (!path_normalize(o->a, target, strlen(target), &t, &perr)) {
		snprintf(err, errlen, "%s: cannot be named in a policy (%s); refusing to run without "
				      "its protection", target, perr);
		return false;
	}
	if (strchr(t, '"') || strchr(t, '\n')) {
		snprintf(err, errlen, "%s: cannot be named in a policy (quote or newline); refusing "
				      "to run without its protection", t);
		return false;
	}
	memset(pp, 0, sizeof *pp);
	pp->text = t;
	size_t hl = o->home ? strlen(o->home) : 0;
	if (hl > 1 && !strncmp(t, o->home, hl) && (t[hl] == '/' || !t[hl]))
		pp->home_len = (uint32_t)hl;
	path_classify(pp);
	return true;
}

/* A protect of `target`; with a template (a rule of the policy's git
 * section), its access and its excepts, each re-rooted from `from` (the
 * workspace's .git) onto `onto`. */
static bool add_rule(struct out *o, const struct ir_rule *tmpl, const char *from,
		     const char *onto, const char *target, const char *why, char *err,
		     size_t errlen)
{
	struct ir_path tp;
	if (!pattern(o, target, &tp, err, errlen))
		return false;
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 32;
		struct ir_rule *v = realloc(o->v, cap * sizeof *v);
		if (!v)
			abort();
		o->v = v;
		o->cap = cap;
	}
	struct ir_rule *r = &o->v[o->n++];
	memset(r, 0, sizeof *r);
	r->effect = IR_PROTECT;
	r->access = tmpl ? tmpl->access : IR_A_KW_WRITE;
	r->tkind = IR_T_PATH;
	r->t.path = tp;
	r->written = tp.text;
	o->line++;
	long start = ftell(o->f);
	/* "protect write \"" is 15 bytes; the target starts after it. */
	fprintf(o->f, "protect write \"%s\"", tp.text);
	r->loc = (struct loc){ NULL, o->line, 15, (uint32_t)(start + 14),
			       (uint32_t)strlen(tp.text) + 2 };
	r->rule_loc = (struct loc){ NULL, o->line, 1, (uint32_t)start, 7 };
	size_t fl = from ? strlen(from) : 0;
	struct ir_except *ex = tmpl && tmpl->nexcept
				       ? arena_alloc(o->a, tmpl->nexcept * sizeof *ex) : NULL;
	uint32_t nex = 0;
	for (uint32_t i = 0; tmpl && i < tmpl->nexcept; i++) {
		const char *et = tmpl->except[i].path.text;
		/* One outside the git section is dropped: more stays protected. */
		if (strncmp(et, from, fl) || (et[fl] && et[fl] != '/'))
			continue;
		struct ir_except *e = &ex[nex];
		if (!pattern(o, arena_concat(o->a, onto, et + fl), &e->path, err, errlen))
			return false;
		e->written = e->path.text;
		long at = ftell(o->f);
		fprintf(o->f, "%s\"%s\"", nex ? ", " : " except ", e->path.text);
		e->loc = (struct loc){ NULL, o->line, (uint32_t)(at - start + (nex ? 3 : 9)),
				       (uint32_t)(at + (nex ? 2 : 8)),
				       (uint32_t)strlen(e->path.text) + 2 };
		nex++;
	}
	r->except = ex;
	r->nexcept = nex;
	fprintf(o->f, "  # %s\n", why);
	return true;
}

/* What discovery takes from the policy, before any rule is added. */
struct gs_ctx {
	const char *ws, *dotgit;
	size_t dl;
	const struct ir_rule **src; /* the policy's git allowlist: its protects under dotgit */
	size_t nsrc;
	const char **roots; /* where the command may write */
	size_t nroots;
	bool whole; /* a protect of the whole of dotgit */
	uint64_t key_hi, key_lo; /* the digest of gs_find's inputs */
};

/* The digest of what gs_find reads besides the disk: the user, the
 * workspace, the home, the writable roots, and the environment that
 * names git's configuration files (gs_find.c, load_outer). */
static void ctx_key(struct gs_ctx *c, const char *home)
{
	struct hashfeed h;
	XXH128_hash_t d = { 0, 0 };
	if (hf_init(&h, true)) {
		static const char *const env[] = { "GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL",
						   "XDG_CONFIG_HOME" };
		hf_str(&h, "git found 2");
		hf_u64(&h, (uint64_t)geteuid());
		hf_str(&h, c->ws);
		hf_str(&h, home);
		hf_u64(&h, c->nroots);
		for (size_t i = 0; i < c->nroots; i++)
			hf_str(&h, c->roots[i]);
		for (size_t i = 0; i < 3; i++) {
			const char *v = getenv(env[i]);
			hf_str(&h, v ? "=" : "-"); /* set, even to "", or not */
			hf_str(&h, v);
		}
		d = hf_digest128(&h);
	}
	c->key_hi = d.high64;
	c->key_lo = d.low64;
}

/* False when the policy has no git section to extend. */
static bool ctx_of(cage_policy *pol, struct gs_ctx *c)
{
	memset(c, 0, sizeof *c);
	if (!pol->ir || !pol->ir->selected)
		return false;
	struct ir_profile *p = pol->ir->selected;
	struct arena *a = &pol->arena;
	c->ws = workspace_of(pol);
	if (!c->ws)
		return false;
	c->dotgit = arena_printf(a, "%s/.git", strcmp(c->ws, "/") ? c->ws : "");
	c->dl = strlen(c->dotgit);
	c->src = arena_alloc(a, (p->nrules + 1) * sizeof *c->src);
	c->roots = arena_alloc(a, (p->nrules + 1) * sizeof *c->roots);
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->tkind != IR_T_PATH)
			continue;
		if (r->effect == IR_PROTECT && under(r->t.path.text, c->dotgit))
			c->src[c->nsrc++] = r;
		if (r->effect == IR_ALLOW && (r->access & IR_A_KW_WRITE))
			c->roots[c->nroots++] = rule_root(a, &r->t.path);
	}
	if (!c->nsrc)
		return false;
	/* A protect of the whole of {workspace}/.git already gives every git
	 * directory below it (submodules, linked worktrees' state) the rules
	 * written for them there. */
	for (size_t i = 0; i < c->nsrc; i++)
		c->whole |= c->src[i]->t.path.kind == IR_PAT_SUBTREE &&
			    c->src[i]->t.path.len == c->dl + 3 &&
			    !strncmp(c->src[i]->t.path.text, c->dotgit, c->dl);
	ctx_key(c, pol->ir->home);
	return true;
}

/* gs_find, then only what the command could change: res->v filtered. */
static bool find(cage_policy *pol, const struct gs_ctx *c, struct gs_result *res,
		 const struct gs_keep *keep, char *err, size_t errlen)
{
	struct arena *a = &pol->arena;
	res->active = true;
	res->workspace = arena_strdup(a, c->ws);
	struct gs_find_in in = { a, c->ws, pol->ir->home, c->roots, c->nroots, keep };
	if (!gs_find(&in, res, err, errlen))
		return false;
	size_t k = 0;
	for (size_t i = 0; i < res->n; i++) {
		struct gs_item *it = &res->v[i];
		bool w = false;
		for (size_t j = 0; j < c->nroots && !w; j++)
			w = under(it->path, c->roots[j]) || under(c->roots[j], it->path);
		/* The workspace's own .git has the policy's rules already. */
		bool covered = it->kind == GS_GITDIR &&
			       (!strcmp(it->path, c->dotgit) ||
				(c->whole && under(it->path, c->dotgit)));
		if (w && !covered)
			res->v[k++] = *it;
	}
	res->n = k;
	return true;
}

/* The rules of res's items, added to the selected profile. */
static bool apply(cage_policy *pol, const struct gs_ctx *c, struct gs_result *res, char *err,
		  size_t errlen)
{
	res->nrules = 0;
	if (!res->n)
		return true; /* nothing found: the profile as it is */
	struct ir_profile *p = pol->ir->selected;
	struct arena *a = &pol->arena;
	struct out o = { .a = a, .home = pol->ir->home };
	o.f = open_memstream(&o.text, &o.len);
	if (!o.f) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	bool ok = true;
	for (size_t i = 0; ok && i < res->n; i++) {
		const struct gs_item *it = &res->v[i];
		if (it->kind == GS_GITDIR) {
			for (size_t j = 0; ok && j < c->nsrc; j++) {
				const struct ir_rule *s = c->src[j];
				const char *t = arena_concat(a, it->path, s->t.path.text + c->dl);
				char *why = arena_printf(a, "%s, as %s:%u", it->why,
							 s->loc.file ? s->loc.file->name : "?",
							 s->loc.line);
				ok = add_rule(&o, s, c->dotgit, it->path, t, why, err, errlen);
			}
		} else {
			const char *t = it->subtree ? arena_printf(a, "%s/**", strcmp(it->path, "/")
									? it->path : "")
						    : it->path;
			ok = add_rule(&o, NULL, NULL, NULL, t, it->why, err, errlen);
		}
	}
	if (fclose(o.f) != 0 && ok) {
		snprintf(err, errlen, "out of memory");
		ok = false;
	}
	if (!ok) {
		free(o.text);
		free(o.v);
		return false;
	}
	struct src_file *sf = arena_alloc(a, sizeof *sf);
	sf->name = "<discovered>";
	sf->text = arena_strndup(a, o.text ? o.text : "", o.len);
	sf->len = o.len;
	sf->id = -1;
	free(o.text);
	if (o.n) {
		struct ir_rule *nr = arena_alloc(a, (p->nrules + o.n) * sizeof *nr);
		memcpy(nr, p->rules, p->nrules * sizeof *nr);
		for (size_t i = 0; i < o.n; i++) {
			o.v[i].loc.file = sf;
			o.v[i].rule_loc.file = sf;
			for (uint32_t j = 0; j < o.v[i].nexcept; j++)
				((struct ir_except *)o.v[i].except)[j].loc.file = sf;
			nr[p->nrules + i] = o.v[i];
		}
		p->rules = nr;
		p->nrules += o.n;
		for (size_t i = 0; i < p->nrules; i++)
			p->rules[i].index = (uint32_t)i;
		ir_pins_build(a, p);
	}
	res->nrules = o.n;
	free(o.v);
	return true;
}

/* What was found, kept for the next launch's gs_assume. */
static void keep_found(cage_policy *pol, const struct gs_ctx *c, const struct gs_result *res,
		       const struct gs_keep *keep)
{
	if (!keep || !keep->store || !keep->found)
		return;
	struct gs_found f = { c->ws, c->key_hi, c->key_lo, res->v, res->n, res->scanned,
			      res->truncated };
	char name[48];
	uint8_t *b;
	size_t n;
	gs_found_name(c->key_hi, c->key_lo, name);
	gs_found_write(&pol->arena, &f, &b, &n);
	keep->store(keep->ctx, name, b, n);
}

bool gs_extend(cage_policy *pol, struct gs_result *res, const struct gs_keep *keep, char *err,
	       size_t errlen)
{
	memset(res, 0, sizeof *res);
	err[0] = '\0';
	struct gs_ctx c;
	if (!ctx_of(pol, &c))
		return true;
	if (!find(pol, &c, res, keep, err, errlen) || !apply(pol, &c, res, err, errlen))
		return false;
	keep_found(pol, &c, res, keep);
	return true;
}

bool gs_assume(cage_policy *pol, struct gs_assumed *as, const struct gs_keep *keep)
{
	memset(as, 0, sizeof *as);
	struct arena *a = &pol->arena;
	struct gs_ctx *c = arena_alloc(a, sizeof *c);
	if (!keep || !keep->load || !ctx_of(pol, c))
		return false;
	char name[48], err[256];
	const uint8_t *b;
	size_t n;
	struct gs_found f;
	gs_found_name(c->key_hi, c->key_lo, name);
	if (!keep->load(keep->ctx, a, name, &b, &n) || !gs_found_read(a, b, n, &f) ||
	    strcmp(f.workspace, c->ws) || f.key_hi != c->key_hi || f.key_lo != c->key_lo)
		return false;
	struct gs_result *res = &as->res;
	res->active = true;
	res->workspace = arena_strdup(a, c->ws);
	res->scanned = f.scanned;
	res->truncated = f.truncated;
	if (f.n) {
		if (!(res->v = malloc(f.n * sizeof *res->v)))
			return false;
		memcpy(res->v, f.v, f.n * sizeof *res->v);
	}
	res->n = f.n;
	struct ir_profile *p = pol->ir->selected;
	as->rules = p->rules;
	as->nrules = p->nrules;
	if (!apply(pol, c, res, err, sizeof err)) {
		/* A record whose paths cannot be rules is no guess: ignored. */
		gs_result_free(res);
		memset(as, 0, sizeof *as);
		return false;
	}
	as->ctx = c;
	as->on = true;
	return true;
}

static bool same_items(const struct gs_result *x, const struct gs_result *y)
{
	if (x->n != y->n || x->truncated != y->truncated)
		return false;
	for (size_t i = 0; i < x->n; i++) {
		const struct gs_item *a = &x->v[i], *b = &y->v[i];
		if (a->kind != b->kind || a->subtree != b->subtree || strcmp(a->path, b->path) ||
		    strcmp(a->why, b->why))
			return false;
	}
	return true;
}

enum gs_confirmed gs_confirm(cage_policy *pol, struct gs_assumed *as, const struct gs_keep *keep,
			     struct gs_result *now, char *err, size_t errlen)
{
	assert(as->on && as->ctx);
	memset(now, 0, sizeof *now);
	err[0] = '\0';
	as->on = false;
	if (!find(pol, as->ctx, now, keep, err, errlen))
		return GS_FAILED;
	if (same_items(&as->res, now)) {
		now->nrules = as->res.nrules;
		return GS_SAME;
	}
	/* The assumed rules out (pins with them), the ones found in. */
	struct ir_profile *p = pol->ir->selected;
	p->rules = as->rules;
	p->nrules = as->nrules;
	ir_pins_build(&pol->arena, p);
	if (!apply(pol, as->ctx, now, err, errlen))
		return GS_FAILED;
	keep_found(pol, as->ctx, now, keep);
	return GS_CHANGED;
}

void gs_print(const struct gs_result *res, FILE *out)
{
	if (!res->active) {
		fputs("\ndiscovered: nothing looked for (the policy has no protect rules under "
		      "{workspace}/.git to extend)\n", out);
		return;
	}
	fprintf(out, "\ndiscovered: git paths in writable trees, protected for this run "
		     "(%zu rule%s; scan of %s: %zu entr%s%s):\n",
		res->nrules, res->nrules == 1 ? "" : "s", res->workspace, res->scanned,
		res->scanned == 1 ? "y" : "ies",
		res->truncated ? ", STOPPED at a bound: deeper repositories were not looked for" : "");
	static const char *const kind[] = { "git dir", "git file", "configured" };
	for (size_t i = 0; i < res->n; i++) {
		const struct gs_item *it = &res->v[i];
		fprintf(out, "  %-10s %s%s   [%s]\n", kind[it->kind], it->path,
			it->subtree ? "/**" : "", it->why);
	}
	if (!res->n)
		fputs("  none\n", out);
}

void gs_result_free(struct gs_result *res)
{
	free(res->v);
	memset(res, 0, sizeof *res);
}
