/*
 * lint_runs_later.c - runs-later-writable: a grant that lets the session
 * change a place that runs code later, outside the cage (git hooks and
 * config, shell and editor startup files, agent settings, caches and tool
 * homes, PATH folders). Reported whether or not std/guard is imported: a
 * policy without it, or with its own copy that leaves an entry out, is
 * exactly what the user should hear about once, with the reason.
 *
 * The places are std/guard's own protects, loaded from the standard
 * library through the compiler (never from an -I copy, which is how a
 * user opens an entry), and the reason is the comment written above each
 * (docs/design-notes.md, "One table of what runs code later"). So the
 * module and this check cannot drift apart. "{workspace}" entries are
 * checked only when the policy has a path param of that name.
 */
#include "lint_int.h"

#include <stdlib.h>
#include <string.h>

#include "cage.h"
#include "path.h"

struct runs_later {
	const char *pattern; /* "{workspace}/...", "~/...", or absolute */
	const char *why;     /* the comment above its protect, one line */
	/* the protect's excepts (std/guard's git allowlist), same form */
	const char **except;
	uint32_t nexcept;
};

enum { WRITE_BITS = IR_A_WRITE | IR_A_CREATE | IR_A_DELETE, WHY_MAX = 600 };

/* What lint gives std/guard's workspace param when it loads the module on
 * its own: no real path starts with it. */
static const char ws_placeholder[] = "/<workspace>";

/* Start of the line before the one that starts at s, or NULL at the top
 * of the file. Walking up from the statement keeps the search linear in
 * the comment's length, where counting lines from the top for each of
 * std/guard's protects was quadratic in the module's size. */
static const char *prev_line(const struct src_file *f, const char *s)
{
	if (s <= f->text)
		return NULL;
	const char *p = s - 1; /* the newline that ends the line above */
	while (p > f->text && p[-1] != '\n')
		p--;
	return p;
}

/* The comment block right above the statement at byte `off`, joined into
 * one line in `a` (section rulers "# ----" and "# cage:" pragmas end it).
 * NULL when there is none. */
static const char *comment_above(struct arena *a, const struct src_file *f, uint32_t off)
{
	const char *stmt = f->text + (off < f->len ? off : f->len);
	while (stmt > f->text && stmt[-1] != '\n')
		stmt--;
	const char *first = stmt;
	for (const char *s; (s = prev_line(f, first)) != NULL; first = s) {
		const char *t = s + strspn(s, " \t");
		if (*t != '#' || !strncmp(t, "# ----", 6) || !strncmp(t, "# cage:", 7))
			break;
	}
	if (first == stmt)
		return NULL;
	char buf[WHY_MAX];
	size_t n = 0;
	bool cut = false;
	for (const char *l = first; l < stmt; l += strcspn(l, "\n") + 1) {
		const char *s = l + strspn(l, " \t");
		s += strspn(s, "#");
		s += strspn(s, " \t");
		size_t k = strcspn(s, "\n");
		if (n && n + 1 < sizeof buf)
			buf[n++] = ' ';
		if (k > sizeof buf - 1 - n) {
			k = sizeof buf - 1 - n;
			cut = true;
		}
		memcpy(buf + n, s, k);
		n += k;
	}
	/* A comment longer than the message allows ends at its last whole
	 * sentence, not in the middle of a word. */
	if (cut) {
		size_t e = n;
		while (e > 1 && !(buf[e - 2] == '.' && buf[e - 1] == ' '))
			e--;
		if (e > 1)
			n = e - 1;
	}
	while (n && (buf[n - 1] == '.' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return arena_strdup(a, buf);
}

/* A pattern of the loaded std/guard as "{workspace}/...", "~/..." or
 * absolute, in c's arena. */
static const char *entry_text(struct lint_ctx *c, const struct ir_path *p)
{
	const char *t = p->text;
	size_t wl = sizeof ws_placeholder - 1;
	if (!strncmp(t, ws_placeholder, wl) && (t[wl] == '/' || !t[wl]))
		return arena_concat(c->a, "{workspace}", t + wl);
	if (p->home_len)
		return arena_concat(c->a, "~", t + p->home_len);
	return arena_strdup(c->a, t);
}

/* std/guard's protects as entries, kept in c's arena. Loaded once per
 * lint run; none when the standard library has no std/guard. */
static size_t load_entries(struct lint_ctx *c, struct runs_later **out)
{
	*out = NULL;
	cage_options *o = cage_options_new();
	if (!o)
		return 0;
	if (c->o->stdlib)
		cage_options_stdlib(o, c->o->stdlib);
	if (c->ir->home)
		cage_options_home(o, c->ir->home);
	(void)cage_options_target(o, ir_target_name(c->ir->target));
	char def[64];
	snprintf(def, sizeof def, "workspace=%s", ws_placeholder);
	cage_options_define(o, def);
	static const char text[] = "cage 1\nimport \"std/guard\"\n";
	cage_policy *g = cage_load_string("<runs-later>", text, sizeof text - 1, o);
	cage_options_free(o);
	size_t n = 0;
	if (g && g->ir && g->ir->selected && cage_error_count(g) == 0) {
		const struct ir_profile *p = g->ir->selected;
		*out = arena_alloc(c->a, (p->nrules + 1) * sizeof **out);
		for (size_t i = 0; i < p->nrules; i++) {
			const struct ir_rule *r = &p->rules[i];
			if (r->effect != IR_PROTECT || r->tkind != IR_T_PATH ||
			    !(r->access & WRITE_BITS) || !lint_is_guard(r->loc.file))
				continue;
			struct runs_later *e = &(*out)[n++];
			e->pattern = entry_text(c, &r->t.path);
			e->nexcept = r->nexcept;
			e->except = arena_alloc(c->a, (r->nexcept + 1) * sizeof *e->except);
			for (uint32_t k = 0; k < r->nexcept; k++)
				e->except[k] = entry_text(c, &r->except[k].path);
			e->why = comment_above(c->a, r->loc.file, r->rule_loc.off);
			if (!e->why)
				e->why = "std/guard keeps it";
		}
	}
	cage_policy_free(g);
	return n;
}

static const char *workspace_of(const struct lint_ctx *c)
{
	for (size_t i = 0; i < c->ir->nparams; i++) {
		const struct ir_param *q = &c->ir->params[i];
		if (q->type == IR_P_PATH && q->value && strcmp(q->name, "workspace") == 0)
			return q->value;
	}
	return NULL;
}

/* An entry's pattern as an IR pattern of this policy (in c's arena);
 * false when the policy lacks what it needs. */
static bool entry_pat(struct lint_ctx *c, const char *ws, const char *pattern,
		      struct ir_path *out)
{
	memset(out, 0, sizeof *out);
	static const char wsk[] = "{workspace}";
	if (strncmp(pattern, wsk, sizeof wsk - 1) == 0) {
		if (!ws)
			return false;
		out->text = arena_concat(c->a, strcmp(ws, "/") ? ws : "", pattern + sizeof wsk - 1);
	} else if (pattern[0] == '~') {
		if (!c->ir->home)
			return false;
		out->text = arena_concat(c->a, c->ir->home, pattern + 1);
		out->home_len = (uint32_t)strlen(c->ir->home);
	} else {
		out->text = pattern;
	}
	path_classify(out);
	return true;
}

/* An entry of this policy: its pattern and excepts as IR patterns. */
struct entry_paths {
	struct ir_path pat;
	struct ir_path *xs;
	uint32_t nxs;
};

static bool entry_paths(struct lint_ctx *c, const char *ws, const struct runs_later *e,
			struct entry_paths *out)
{
	if (!entry_pat(c, ws, e->pattern, &out->pat))
		return false;
	out->xs = arena_alloc(c->a, (e->nexcept + 1) * sizeof *out->xs);
	out->nxs = 0;
	for (uint32_t k = 0; k < e->nexcept; k++)
		if (entry_pat(c, ws, e->except[k], &out->xs[out->nxs]))
			out->nxs++;
	return true;
}

/* Does one of the entry's excepts hold all of p? An except with p's own
 * text holds it, and is the usual answer: the policy's copy of a std/guard
 * protect lists the entry's own excepts. Looking for it first spares the
 * glob search against each of the others (the answer is the same, since
 * any one YES is enough). */
static bool in_except(const struct entry_paths *E, const struct ir_path *p)
{
	for (uint32_t k = 0; k < E->nxs; k++)
		if (E->xs[k].len == p->len && memcmp(E->xs[k].text, p->text, p->len) == 0)
			return true;
	for (uint32_t k = 0; k < E->nxs; k++)
		if (pat_path_contains(&E->xs[k], p, NULL, 0) == PAT_YES)
			return true;
	return false;
}

/* Does rule L hold all of the entry (its pattern less its excepts)? */
static bool holds(const struct ir_rule *L, const struct entry_paths *E)
{
	if (!E->nxs)
		return lint_path_contains(L, &E->pat) == PAT_YES;
	if (pat_path_contains(&L->t.path, &E->pat, NULL, 0) != PAT_YES)
		return false;
	/* L may leave out only what the entry leaves out too */
	for (uint32_t k = 0; k < L->nexcept; k++)
		if (!in_except(E, &L->except[k].path))
			return false;
	return true;
}

/* Does a protect, or a deny after A, keep `bits` of all of the entry? */
static bool kept(struct lint_ctx *c, const struct ir_rule *A, const struct entry_paths *EP,
		 uint32_t bits)
{
	const struct ir_path *E = &EP->pat;
	lint_ix_comparable(c, E->text, E->lit_prefix, IR_T_PATH);
	for (size_t k = 0; k < c->ncand; k++) {
		const struct ir_rule *L = &c->prof->rules[c->cand[k]];
		if (L->effect == IR_ALLOW || (L->access & bits) != bits)
			continue;
		if (L->effect == IR_DENY && L->index < A->index)
			continue;
		if (holds(L, EP))
			return true;
		/* std/guard's git allowlist: its excepts name what git writes,
		 * and a submodule named like one of those (".../objects") meets
		 * them only by name; docs/stdlib.md says why that opens nothing
		 * a new repository in the workspace would not. */
		if (L->nexcept && lint_is_guard(L->loc.file) &&
		    pat_path_contains(&L->t.path, E, NULL, 0) == PAT_YES)
			return true;
	}
	return false;
}

static void check_grant(struct lint_ctx *c, const char *ws, const struct ir_rule *A,
			const struct runs_later *ents, size_t nents)
{
	uint32_t bits = A->access & WRITE_BITS;
	size_t n = 0, first = 0;
	char list[1024] = "";
	size_t len = 0;
	for (size_t i = 0; i < nents; i++) {
		struct entry_paths EP;
		if (!entry_paths(c, ws, &ents[i], &EP))
			continue;
		const struct ir_path *E = &EP.pat;
		if (pat_path_overlap(&A->t.path, E, NULL, 0) == PAT_NO || in_except(&EP, &A->t.path) ||
		    kept(c, A, &EP, bits))
			continue;
		if (n == 0)
			first = i;
		if (n < 3) {
			char shown[1024];
			lint_show_path(E, E->text, shown, sizeof shown);
			int w = snprintf(list + len, sizeof list - len, "%s%s", n ? ", " : "", shown);
			if (w > 0 && (size_t)w < sizeof list - len)
				len += (size_t)w;
		}
		n++;
	}
	if (!n)
		return;
	char rt[1200], more[64] = "";
	lint_rule_text(A, rt, sizeof rt);
	if (n > 3)
		snprintf(more, sizeof more, " and %zu more", n - 3);
	lint_report(c, "runs-later-writable", A, NULL,
		    "%s lets the session write in %s%s, where code runs from later, outside the "
		    "cage (std/guard: %s%s); import \"std/guard\", or suppress this with the "
		    "reason if it is meant",
		    rt, list, more, ents[first].why, n > 1 ? "; the others run code too" : "");
}

void lint_check_runs_later(struct lint_ctx *c)
{
	const char *ws = workspace_of(c);
	for (size_t i = 0; i < c->prof->nrules; i++) {
		const struct ir_rule *A = &c->prof->rules[i];
		if (A->effect != IR_ALLOW || A->tkind != IR_T_PATH || !(A->access & WRITE_BITS) ||
		    lint_is_std(A->loc.file))
			continue;
		if (!c->runs_later_loaded) {
			c->nruns_later = load_entries(c, &c->runs_later);
			c->runs_later_loaded = true;
		}
		check_grant(c, ws, A, c->runs_later, c->nruns_later);
	}
}
