/*
 * lint_paths.c - findings about what path rules grant: secret-exposed
 * (a grant reaching a known credential location, std/secrets imported or
 * not), broad-grant, noncanonical-path (judged on the text as written,
 * since the resolver normalises it away) and writable-ancestor (a writable
 * directory above a protected or read-only granted path: rename it away,
 * put your own in its place).
 */
#include "lint_int.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "lint_secrets.h"
#include "path.h"

enum { GRANT_BITS = IR_A_READ | IR_A_WRITE | IR_A_CREATE | IR_A_DELETE | IR_A_EXEC,
       WRITE_BITS = IR_A_WRITE | IR_A_CREATE | IR_A_DELETE };

/* A built-in pattern ("~/..." or absolute) as an IR path; false when it
 * needs a home directory the policy does not have. */
static bool make_pat(const struct lint_ctx *c, const char *pattern, struct ir_path *out,
		     char *buf, size_t size)
{
	memset(out, 0, sizeof *out);
	if (pattern[0] == '~') {
		if (!c->ir->home)
			return false;
		snprintf(buf, size, "%s%s", c->ir->home, pattern + 1);
		out->home_len = (uint32_t)strlen(c->ir->home);
	} else {
		snprintf(buf, size, "%s", pattern);
	}
	out->text = buf;
	path_classify(out);
	return true;
}

/* ---- secret-exposed ---- */

/* Do a protect, or a deny after A, cover all of S or all of A for `bit`? */
static bool secret_covered(struct lint_ctx *c, const struct ir_rule *A, const struct ir_path *S,
			   uint32_t bit)
{
	lint_ix_comparable(c, S->text, S->lit_prefix, A->tkind);
	for (size_t k = 0; k < c->ncand; k++) {
		const struct ir_rule *L = &c->prof->rules[c->cand[k]];
		if (!(L->access & bit) || L->effect == IR_ALLOW)
			continue;
		if (L->effect == IR_DENY && L->index < A->index)
			continue;
		if (lint_path_contains(L, S) == PAT_YES || lint_path_contains(L, &A->t.path) == PAT_YES)
			return true;
	}
	return false;
}

static void check_secrets(struct lint_ctx *c, const struct ir_rule *A)
{
	uint32_t bits = A->access & GRANT_BITS;
	if (!bits)
		return;
	char msg[2048] = "";
	size_t mlen = 0, hits = 0;
	char at[1024];
	lint_target_text(A, at, sizeof at);
	const struct ir_path *ap = &A->t.path;
	for (size_t i = 0; i < c->nsecrets; i++) {
		const struct ir_path S = c->secrets[i].p;
		const struct lint_builtin *sec = &c->secrets[i];
		char wit[1024], wd[1024];
		/* literal prefixes that disagree: no common path, no automaton */
		uint32_t m = ap->lit_prefix < S.lit_prefix ? ap->lit_prefix : S.lit_prefix;
		if (memcmp(ap->text, S.text, m) != 0)
			continue;
		if (pat_path_overlap(ap, &S, wit, sizeof wit) == PAT_NO)
			continue;
		uint32_t open = 0;
		for (uint32_t bit = 1; bit <= IR_A_EXEC; bit <<= 1)
			if ((bits & bit) && !secret_covered(c, A, &S, bit))
				open |= bit;
		if (!open)
			continue;
		if (++hits > 3)
			continue;
		bool inside = pat_path_contains(&S, &A->t.path, NULL, 0) == PAT_YES;
		bool all = !inside && pat_path_contains(&A->t.path, &S, NULL, 0) == PAT_YES;
		lint_show_path(&S, wit, wd, sizeof wd);
		int w;
		if (inside)
			w = snprintf(msg + mlen, sizeof msg - mlen, "%s%s (%s)", hits > 1 ? ", " : "",
				     sec->what, sec->pattern);
		else if (all)
			w = snprintf(msg + mlen, sizeof msg - mlen, "%s%s in %s", hits > 1 ? ", " : "",
				     sec->what, sec->pattern);
		else
			w = snprintf(msg + mlen, sizeof msg - mlen, "%s%s in %s (e.g. %s)",
				     hits > 1 ? ", " : "", sec->what, sec->pattern, wd);
		if (w > 0 && (size_t)w < sizeof msg - mlen)
			mlen += (size_t)w;
	}
	if (!hits)
		return;
	char more[64] = "";
	if (hits > 3)
		snprintf(more, sizeof more, " and %zu more", hits - 3);
	char acc[128];
	lint_access_text(bits, acc, sizeof acc);
	bool has_std = false;
	for (size_t i = 0; i < c->ir->nfiles; i++)
		has_std |= strcmp(c->ir->files[i]->name, "std/secrets.cage") == 0;
	lint_report(c, "secret-exposed", A, NULL, "allow %s %s exposes %s%s; protect %s%s or narrow "
		    "the grant", acc, at, msg, more, hits > 1 ? "them" : "it",
		    has_std ? "" : " (import \"std/secrets\")");
}

/* ---- broad-grant ---- */

static void check_broad(struct lint_ctx *c, const struct ir_rule *A)
{
	uint32_t bits = A->access & (IR_A_READ | WRITE_BITS);
	if (!bits)
		return;
	/* containing "D/ **" needs a literal prefix no longer than "D/" */
	size_t longest = c->ir->home ? strlen(c->ir->home) + 1 : 0;
	if (longest < 7)
		longest = 7; /* "/Users/" */
	if (A->t.path.lit_prefix > longest)
		return;
	static const struct {
		const char *pat, *what;
	} roots[] = {
		{ "/**", "/ (the whole filesystem)" },
		{ "/Users/**", "/Users (every user's home)" },
		{ "/home/**", "/home (every user's home)" },
		{ "~/**", "~ (the whole home directory)" },
	};
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
		struct ir_path R;
		char buf[1024];
		if (!make_pat(c, roots[i].pat, &R, buf, sizeof buf))
			continue;
		if (pat_path_contains(&A->t.path, &R, NULL, 0) != PAT_YES)
			continue;
		char at[1024], acc[128];
		lint_target_text(A, at, sizeof at);
		lint_access_text(bits, acc, sizeof acc);
		lint_report(c, "broad-grant", A, NULL,
			    "allow %s %s grants all of %s; grant the directories the task needs",
			    acc, at, roots[i].what);
		return;
	}
}

/* ---- noncanonical-path ---- */

static bool comp_prefix(const char *t, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(t, dir, n) == 0 && (t[n] == '\0' || t[n] == '/');
}

static void check_canonical(struct lint_ctx *c, const struct ir_rule *A)
{
	const char *w = A->written;
	const char *parts[5];
	size_t np = 0;
	bool trailing = false;
	if (w && (w[0] == '/' || w[0] == '~' || w[0] == '{')) {
		size_t n = strlen(w);
		bool dot = false, dotdot = false;
		for (size_t i = 0; i < n; i++) {
			if (w[i] != '/')
				continue;
			size_t e = i + 1;
			while (e < n && w[e] != '/')
				e++;
			if (e - i - 1 == 1 && w[i + 1] == '.')
				dot = true;
			if (e - i - 1 == 2 && w[i + 1] == '.' && w[i + 2] == '.')
				dotdot = true;
		}
		trailing = n > 1 && w[n - 1] == '/';
		if (dotdot)
			parts[np++] = "a '..' component";
		if (dot)
			parts[np++] = "a '.' component";
		if (strstr(w, "//"))
			parts[np++] = "'//'";
		if (trailing)
			parts[np++] = "a trailing '/'";
	}
	unsigned targets = lint_targets(c);
	const char *alias = NULL;
	static const char *aliases[] = { "/tmp", "/var", "/etc" };
	if (targets & LINT_T_MACOS)
		for (size_t i = 0; i < 3 && !alias; i++)
			if (comp_prefix(A->t.path.text, aliases[i]))
				alias = aliases[i];
	if (!np && !alias)
		return;
	char fix[1100], why[512] = "", shown[1100];
	size_t wl = 0;
	if (alias)
		snprintf(fix, sizeof fix, "/private%s", A->t.path.text);
	else
		lint_show_path(&A->t.path, A->t.path.text, fix, sizeof fix);
	for (size_t i = 0; i < np; i++) {
		int k = snprintf(why + wl, sizeof why - wl, "%s%s",
				 i == 0 ? "" : i + 1 == np ? " and " : ", ", parts[i]);
		if (k > 0 && (size_t)k < sizeof why - wl)
			wl += (size_t)k;
	}
	if (w && (w[0] == '/' || w[0] == '~' || w[0] == '{'))
		snprintf(shown, sizeof shown, "path \"%s\"", w);
	else
		lint_show_path(&A->t.path, A->t.path.text, shown, sizeof shown);
	char aliasmsg[320] = "";
	if (alias)
		snprintf(aliasmsg, sizeof aliasmsg,
			 "%son macOS %s is a symlink to /private%s: the sandbox sees the resolved "
			 "path (the SBPL backend rewrites the rule), while checks and explain "
			 "compare paths as written", np ? "; " : "", alias, alias);
	lint_report(c, "noncanonical-path", A, NULL, "%s %s%s%s; write \"%s\"%s", shown,
		    np ? "has " : "is not canonical: ", why, aliasmsg, fix,
		    trailing && A->t.path.kind == IR_PAT_EXACT
			    ? " (the directory itself; add \"/**\" for what is below)" : "");
}

/* ---- writable-ancestor ---- */

/* Length of the directory a pattern is rooted at: DIR of "DIR/ **", the
 * path of an exact pattern, the last directory of a glob's literal part. */
static size_t base_len(const struct ir_path *p)
{
	if (p->kind == IR_PAT_EXACT)
		return p->len;
	if (p->kind == IR_PAT_SUBTREE)
		return p->len - 3;
	size_t l = p->lit_prefix;
	while (l > 0 && p->text[l - 1] != '/')
		l--;
	return l ? l - 1 : 0;
}

struct wcache {
	uint64_t *key;
	const struct ir_rule **val;
	size_t cap;
};

/* The rule that makes directory `dir` writable (create, delete or write
 * in it), or NULL. Cached: ancestors are shared by many rules. */
static const struct ir_rule *writable_by(struct lint_ctx *c, struct wcache *wc, const char *dir)
{
	uint64_t h = XXH3_64bits(dir, strlen(dir)) | 1;
	size_t p = 0;
	if (wc->cap) {
		p = h & (wc->cap - 1);
		for (size_t probe = 0; probe < wc->cap && wc->key[p]; probe++) {
			if (wc->key[p] == h)
				return wc->val[p];
			p = (p + 1) & (wc->cap - 1);
		}
	}
	const struct ir_rule *found = NULL;
	static const uint32_t bits[] = { IR_A_DELETE, IR_A_CREATE, IR_A_WRITE };
	for (size_t i = 0; i < 3 && !found; i++) {
		struct ir_verdict v;
		lint_eval_path(c, bits[i], IR_T_PATH, dir, &v);
		if (v.allowed)
			found = v.rule;
	}
	if (wc->cap) {
		p = h & (wc->cap - 1);
		size_t probe = 0;
		while (wc->key[p] && probe++ < wc->cap)
			p = (p + 1) & (wc->cap - 1);
		if (!wc->key[p]) {
			wc->key[p] = h;
			wc->val[p] = found;
		}
	}
	return found;
}

static void report_ancestor(struct lint_ctx *c, const struct ir_rule *W, const struct ir_rule *P,
			    const char *dir, bool pinned)
{
	if (lint_is_std(W->loc.file))
		return;
	char wt[1200], pt[1024], dd[1024], where[512];
	struct ir_path tmp = P->t.path;
	lint_rule_text(W, wt, sizeof wt);
	lint_target_text(P, pt, sizeof pt);
	lint_show_path(&tmp, dir, dd, sizeof dd);
	lint_where(c, W, P, where, sizeof where);
	const char *verb = P->effect == IR_PROTECT ? "protects" : "denies";
	struct diag *d;
	if (P->effect == IR_ALLOW) {
		d = lint_report(c, "writable-ancestor", W, P,
				"%s makes %s writable, above %s that %s grants without write: "
				"it can be renamed away and replaced",
				wt, dd, pt, where);
		lint_note_rule(c, d, P, "granted here");
	} else if (pinned) {
		/* The backends keep it in place, at a price the user should know:
		 * those directories cannot be deleted or renamed by anything. */
		d = lint_report(c, "writable-ancestor", W, P,
				"%s makes %s writable, above %s that %s %s: renaming it would carry "
				"that out of the rule, so %s is pinned (it cannot be deleted, "
				"renamed or linked); keep what must stay out of reach outside "
				"writable trees",
				wt, dd, pt, where, verb, dd);
		lint_note_rule(c, d, P, "%s here", P->effect == IR_PROTECT ? "protected" : "denied");
	} else {
		d = lint_report(c, "writable-ancestor", W, P,
				"%s makes %s writable, above %s that %s %s: the agent can "
				"rename it away and put its own in its place",
				wt, dd, pt, where, verb);
		if (d && d->sev != DIAG_ERROR) {
			/* an open hole: an error, not a warning */
			if (d->sev == DIAG_WARNING)
				c->dl->warnings--;
			d->sev = DIAG_ERROR;
			c->dl->errors++;
		}
		lint_note_rule(c, d, P, "%s here", P->effect == IR_PROTECT ? "protected" : "denied");
	}
}

static void check_ancestors(struct lint_ctx *c, struct wcache *wc, const struct ir_rule *P)
{
	const struct ir_path *pp = &P->t.path;
	bool guard = P->effect != IR_ALLOW;
	if (guard) {
		/* std/guard is written for writable trees; its pins hold it */
		if (lint_is_guard(P->loc.file) || !(P->access & IR_A_FILE))
			return;
	} else {
		if ((P->access & WRITE_BITS) || lint_is_std(P->loc.file) || pp->kind == IR_PAT_GLOB)
			return;
		/* a grant inside a protect is protect-violation's business */
		lint_ix_comparable(c, pp->text, pp->lit_prefix, IR_T_PATH);
		for (size_t k = 0; k < c->ncand; k++) {
			const struct ir_rule *Q = &c->prof->rules[c->cand[k]];
			if (Q->effect == IR_PROTECT && (Q->access & P->access) &&
			    lint_path_overlap(Q, pp, NULL, 0) != PAT_NO)
				return;
		}
	}
	size_t bl = base_len(pp);
	char *dir = malloc(pp->len + 2);
	if (!dir)
		return;
	memcpy(dir, pp->text, bl);
	dir[bl] = '\0';
	if (bl == 0)
		strcpy(dir, "/");
	if (!guard && writable_by(c, wc, dir)) {
		free(dir); /* the granted path is writable itself: nothing to swap */
		return;
	}
	/* A glob's files sit directly in its base, so the base counts too; so
	 * does the directory of "D/ **", which the rule names itself and which
	 * can be renamed like any other entry of its parent. */
	bool include_self = pp->kind == IR_PAT_GLOB || pp->kind == IR_PAT_SUBTREE;
	bool named_dir = pp->kind == IR_PAT_SUBTREE;
	for (;;) {
		if (include_self) {
			const struct ir_rule *W;
			if (named_dir) {
				/* only deleting (renaming) D itself matters here;
				 * what may be created in D is the rule's own business */
				struct ir_verdict v;
				lint_eval_path(c, IR_A_DELETE, IR_T_PATH, dir, &v);
				W = v.allowed ? v.rule : NULL;
				named_dir = false;
			} else {
				W = writable_by(c, wc, dir);
			}
			if (W && W != P) {
				report_ancestor(c, W, P, dir, guard && ir_pinned(c->prof, dir));
				break;
			}
		}
		include_self = true;
		if (strcmp(dir, "/") == 0)
			break;
		char *s = strrchr(dir, '/');
		if (s == dir)
			strcpy(dir, "/");
		else
			*s = '\0';
	}
	free(dir);
}

void lint_check_paths(struct lint_ctx *c)
{
	const struct ir_profile *p = c->prof;
	struct wcache wc = { 0 };
	wc.cap = 1024;
	while (wc.cap < p->nrules * 4)
		wc.cap *= 2;
	wc.key = calloc(wc.cap, sizeof *wc.key);
	wc.val = calloc(wc.cap, sizeof *wc.val);
	if (!wc.key || !wc.val) {
		free(wc.key);
		free(wc.val);
		wc = (struct wcache){ 0 };
	}
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->tkind != IR_T_PATH && r->tkind != IR_T_UNIX)
			continue;
		if (r->tkind == IR_T_PATH)
			check_ancestors(c, &wc, r);
		if (lint_is_std(r->loc.file))
			continue;
		check_canonical(c, r);
		if (r->effect != IR_ALLOW || r->tkind != IR_T_PATH)
			continue;
		check_broad(c, r);
		check_secrets(c, r);
	}
	free(wc.key);
	free(wc.val);
}
