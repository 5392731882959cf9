/*
 * lint_control.c - what the user says about findings: in-file suppressions
 * and the -W options.
 *
 * A suppression is a comment line
 *     # cage: allow unsafe-order, broad-grant — reason
 * that silences those ids on the next line holding code (so several
 * suppressions may stack above one rule), or the same comment at the end
 * of the rule's own line. The reason is required (after
 * "—", "–", "--", "-" or ":"), because a silenced security finding with no
 * reason is a finding nobody can review later. A suppression that silences
 * nothing is itself reported, so stale ones do not pile up.
 *
 * Comments are read from the source text, not the parser: the grammar
 * drops them, and the checker must not depend on that.
 */
#include "lint_int.h"
#include "suggest.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct supp {
	const struct src_file *file;
	struct loc loc;     /* the comment */
	uint32_t target;    /* line it applies to */
	const char *ids[8];
	bool used[8];
	size_t nids;
};

static struct loc line_loc(const struct src_file *f, uint32_t line, size_t start, size_t end)
{
	struct loc l = { .file = f, .line = line, .off = (uint32_t)start,
			 .len = (uint32_t)(end - start) };
	size_t ls = start;
	while (ls > 0 && f->text[ls - 1] != '\n')
		ls--;
	l.col = diag_display_col(f->text, ls, start);
	return l;
}

static bool is_sep(const char *s, size_t *len)
{
	if (strncmp(s, "\xe2\x80\x94", 3) == 0 || strncmp(s, "\xe2\x80\x93", 3) == 0) {
		*len = 3;
		return true;
	}
	if (s[0] == ':') {
		*len = 1;
		return true;
	}
	size_t n = 0;
	while (s[n] == '-')
		n++;
	if (n >= 1 && n <= 2 && (s[n] == ' ' || s[n] == '\t' || s[n] == '\0' || s[n] == '\n')) {
		*len = n;
		return true;
	}
	return false;
}

/* Characters of a check id as a user might write one: '_' is never part
 * of an id, but "unsafe_order" must be read whole to be reported. */
static bool supp_id_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '-' || ch == '_';
}

/* Parses one comment body (text after '#'). Returns false when it is not
 * a cage directive at all. */
static bool parse_supp(struct lint_ctx *c, const struct src_file *f, const char *s,
		       const char *end, struct loc at, struct supp *out)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if ((size_t)(end - s) < 5 || strncmp(s, "cage:", 5) != 0)
		return false;
	s += 5;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	/* Only "cage: allow ID" is a directive; any other comment that happens
	 * to start with "cage:" is prose. */
	if ((size_t)(end - s) < 6 || strncmp(s, "allow", 5) != 0 || !isspace((unsigned char)s[5]))
		return false;
	s += 5;
	const char *w0 = s;
	while (w0 < end && (*w0 == ' ' || *w0 == '\t'))
		w0++;
	const char *w1 = w0;
	bool dash = false;
	while (w1 < end && supp_id_char(*w1))
		dash |= *w1 == '-' || *w1 == '_', w1++;
	char first[64];
	snprintf(first, sizeof first, "%.*s", (int)(w1 - w0), w0);
	/* "# cage: allow reading the docs" is prose, not an id; a word that
	 * looks like an id or is close to one ("unsafe_order", "unsafe-ordr")
	 * is a directive, so a misspelt id is reported, never ignored. */
	if (!lint_check_find(first) && !dash && !lint_check_near(first, strlen(first)))
		return false;
	memset(out, 0, sizeof *out);
	out->file = f;
	out->loc = at;
	char line[1024];
	size_t n = (size_t)(end - s) < sizeof line - 1 ? (size_t)(end - s) : sizeof line - 1;
	memcpy(line, s, n);
	line[n] = '\0';
	char *p = line;
	bool sep = false;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (!*p)
			break;
		size_t sl;
		if (is_sep(p, &sl)) {
			p += sl;
			sep = true;
			break;
		}
		char *w = p;
		while (*p && supp_id_char(*p))
			p++;
		if (p == w) {
			lint_report_loc(c, "bad-suppression", at,
					"unexpected '%c' in a suppression; write '# cage: allow ID — "
					"reason'", *p);
			return false;
		}
		char id[64];
		snprintf(id, sizeof id, "%.*s", (int)(p - w), w);
		const struct lint_check *ck = lint_check_find(id);
		if (!ck) {
			const char *near = lint_check_near(id, strlen(id));
			char hint[96];
			lint_report_loc(c, "bad-suppression", at, "no check is called '%s'%s", id,
					near ? suggest_say(near, hint, sizeof hint)
					     : " (cagec lint --list-checks shows them)");
			return false;
		}
		if (out->nids < 8)
			out->ids[out->nids++] = ck->id;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (out->nids == 0) {
		lint_report_loc(c, "bad-suppression", at, "a suppression names the check it silences: "
				"'# cage: allow ID — reason'");
		return false;
	}
	if (!sep || !*p) {
		lint_report_loc(c, "bad-suppression", at, "a suppression needs a reason: "
				"'# cage: allow %s — why this is safe'", out->ids[0]);
		return false;
	}
	return true;
}

/* The '#' that starts a comment after code on this line, or NULL; a '#'
 * inside a string does not count. */
static const char *trailing_comment(const char *s, const char *e)
{
	bool in_str = false;
	for (const char *p = s; p < e; p++) {
		if (in_str && *p == '\\' && p + 1 < e)
			p++;
		else if (*p == '"')
			in_str = !in_str;
		else if (*p == '#' && !in_str)
			return p;
	}
	return NULL;
}

/* Every suppression in file f, with the line each applies to. */
static size_t scan_file(struct lint_ctx *c, const struct src_file *f, struct supp **out)
{
	size_t n = 0, cap = 0;
	*out = NULL;
	size_t npending = 0; /* suppressions waiting for their line of code */
	uint32_t line = 1;
	const char *t = f->text, *e = f->text + f->len;
	for (const char *ls = t; ls < e; line++) {
		const char *le = memchr(ls, '\n', (size_t)(e - ls));
		if (!le)
			le = e;
		const char *q = ls;
		while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q < le && *q == '#') {
			struct supp s;
			struct loc at = line_loc(f, line, (size_t)(q - t), (size_t)(le - t));
			if (parse_supp(c, f, q + 1, le, at, &s)) {
				if (n == cap) {
					cap = cap ? cap * 2 : 8;
					struct supp *nv = realloc(*out, cap * sizeof *nv);
					if (!nv)
						break;
					*out = nv;
				}
				(*out)[n++] = s;
				npending++;
			}
		} else if (q < le) {
			/* code: the pending suppressions apply to this line */
			for (size_t i = n - npending; i < n; i++)
				(*out)[i].target = line;
			npending = 0;
			/* and so does one at the end of it, after the code */
			const char *h = trailing_comment(q, le);
			struct supp s;
			if (h) {
				struct loc at = line_loc(f, line, (size_t)(h - t), (size_t)(le - t));
				if (parse_supp(c, f, h + 1, le, at, &s)) {
					if (n == cap) {
						cap = cap ? cap * 2 : 8;
						struct supp *nv = realloc(*out, cap * sizeof *nv);
						if (!nv)
							break;
						*out = nv;
					}
					s.target = line;
					(*out)[n++] = s;
				}
			}
		}
		ls = le + 1;
	}
	return n;
}

static void remove_diag(struct diag_list *dl, size_t i)
{
	memmove(dl->items + i, dl->items + i + 1, (dl->n - i - 1) * sizeof *dl->items);
	dl->n--;
}

static void recount(struct diag_list *dl)
{
	dl->errors = dl->warnings = 0;
	for (size_t i = 0; i < dl->n; i++) {
		if (dl->items[i]->sev == DIAG_ERROR)
			dl->errors++;
		else if (dl->items[i]->sev == DIAG_WARNING)
			dl->warnings++;
	}
}

static bool is_suppressed(const struct lint_ctx *c, struct diag *d, struct supp *s, size_t ns)
{
	const struct lint_anchor *an = NULL;
	for (size_t i = 0; i < c->nanchors; i++)
		if (c->anchors[i].d == d) {
			an = &c->anchors[i];
			break;
		}
	if (!an)
		return false;
	bool hit = false;
	for (size_t i = 0; i < ns; i++) {
		if (s[i].file != an->file || !s[i].target ||
		    (s[i].target != an->line && s[i].target != an->line2))
			continue;
		for (size_t k = 0; k < s[i].nids; k++)
			if (strcmp(s[i].ids[k], d->id) == 0) {
				s[i].used[k] = true;
				hit = true;
			}
	}
	return hit;
}

void lint_apply_controls(struct lint_ctx *c)
{
	struct diag_list *dl = c->dl;
	/* Scan each file that has findings, plus the main file (for unused
	 * suppressions). Files are few; findings may be many. */
	for (size_t fi = 0; fi < c->ir->nfiles; fi++) {
		const struct src_file *f = c->ir->files[fi];
		bool relevant = f == c->main;
		for (size_t i = 0; i < c->nanchors && !relevant; i++)
			relevant = c->anchors[i].file == f;
		if (!relevant)
			continue;
		struct supp *s;
		size_t ns = scan_file(c, f, &s);
		for (size_t i = 0; i < dl->n;) {
			struct diag *d = dl->items[i];
			if (d->loc.file == f && lint_check_find(d->id) && is_suppressed(c, d, s, ns))
				remove_diag(dl, i);
			else
				i++;
		}
		if (f == c->main)
			for (size_t i = 0; i < ns; i++) {
				char ids[512] = "";
				size_t n = 0, nu = 0;
				for (size_t k = 0; k < s[i].nids; k++) {
					if (s[i].used[k])
						continue;
					int w = snprintf(ids + n, sizeof ids - n, "%s%s", nu ? ", " : "",
							 s[i].ids[k]);
					if (w > 0 && (size_t)w < sizeof ids - n)
						n += (size_t)w;
					nu++;
				}
				if (nu)
					lint_report_loc(c, "unused-suppression", s[i].loc,
							"this suppression of %s silences nothing%s", ids,
							s[i].target ? "" : " (no rule follows it)");
			}
		free(s);
	}
	/* -W ID=..., -W no-ID */
	for (size_t i = 0; i < dl->n;) {
		struct diag *d = dl->items[i];
		bool removed = false;
		for (size_t k = 0; k < c->o->nov; k++) {
			if (strcmp(c->o->ov[k].id, d->id) != 0)
				continue;
			if (c->o->ov[k].off) {
				remove_diag(dl, i);
				removed = true;
				break;
			}
			d->sev = c->o->ov[k].sev;
		}
		if (!removed)
			i++;
	}
	if (c->o->werror)
		for (size_t i = 0; i < dl->n; i++)
			if (dl->items[i]->sev == DIAG_WARNING)
				dl->items[i]->sev = DIAG_ERROR;
	recount(dl);
}
