/*
 * sbpl_pat.c - IR path patterns as Seatbelt path filters, and the string
 * and regex escaping every part of the SBPL backend goes through.
 *
 * Seatbelt matches the resolved path of a file, so a rule on /tmp/x must be
 * written on /private/tmp/x (likewise /var and /etc). Exact paths and
 * subtrees are rewritten by prefix. A glob whose first component is itself
 * a pattern ("/t?p/x", or a star as the whole first component) may match
 * below a link too, so for
 * each link we compute what is left of the glob after it has consumed
 * "/tmp/" (a derivative, run on a small NFA of the glob) and write that
 * remainder under /private/tmp, while the glob's own regex is kept off
 * /private/{tmp,var,etc}. The result matches a resolved path under a link
 * target exactly when the IR pattern matches its /tmp spelling, and any
 * other path exactly when the IR pattern matches it.
 */
#include "sbpl.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- output buffer ---- */

static void buf_reserve(struct sbpl_buf *b, size_t extra)
{
	if (b->oom)
		return;
	if (b->cap - b->len > extra)
		return;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap - b->len <= extra) {
		if (cap > SIZE_MAX / 2) {
			b->oom = true;
			return;
		}
		cap *= 2;
	}
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return;
	}
	b->p = p;
	b->cap = cap;
}

void sbpl_buf_free(struct sbpl_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

void sbpl_buf_putn(struct sbpl_buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void sbpl_buf_puts(struct sbpl_buf *b, const char *s)
{
	sbpl_buf_putn(b, s, strlen(s));
}

void sbpl_buf_printf(struct sbpl_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	buf_reserve(b, (size_t)n + 1);
	if (b->oom)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* ---- strings, comments, regex characters ---- */

static bool is_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

bool sbpl_put_string(struct sbpl_buf *b, const char *s, size_t n)
{
	size_t esc = 2;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (is_ctl(c))
			return false;
		esc += (c == '"' || c == '\\') ? 2 : 1;
	}
	if (esc > SBPL_MAX_STRING)
		return false;
	buf_reserve(b, esc);
	if (b->oom)
		return true; /* reported once by the caller */
	char *o = b->p + b->len;
	*o++ = '"';
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			*o++ = '\\';
		*o++ = s[i];
	}
	*o++ = '"';
	*o = '\0';
	b->len += esc;
	return true;
}

void sbpl_put_comment_text(struct sbpl_buf *b, const char *s)
{
	for (; *s; s++) {
		char c = is_ctl((unsigned char)*s) ? '?' : *s;
		sbpl_buf_putn(b, &c, 1);
	}
}

void sbpl_regex_putc(struct sbpl_buf *b, char c)
{
	if (strchr(".[]()*+?{}^$|\\", c) && c != '\0')
		sbpl_buf_putn(b, "\\", 1);
	sbpl_buf_putn(b, &c, 1);
}

/* ---- links ---- */

static const char *const links[] = { "tmp", "var", "etc" };
enum { NLINKS = sizeof(links) / sizeof(links[0]) };

/* Length of the link prefix ("/tmp") that `text` lies in or equals, 0 if
 * none: "/tmp" and "/tmp/..." do, "/tmpx" does not. */
static size_t link_prefix(const char *text, size_t len)
{
	for (size_t i = 0; i < NLINKS; i++) {
		size_t l = 1 + strlen(links[i]);
		if (len >= l && text[0] == '/' && memcmp(text + 1, links[i], l - 1) == 0 &&
		    (len == l || text[l] == '/'))
			return l;
	}
	return 0;
}

void sbpl_resolved_path(struct sbpl_buf *b, const char *text, size_t len)
{
	if (link_prefix(text, len))
		sbpl_buf_puts(b, "/private");
	sbpl_buf_putn(b, text, len);
}

/* ---- globs ---- */

enum tok_kind {
	T_LIT,  /* one literal byte */
	T_Q,    /* ?    one character but '/': a UTF-8 sequence, not a byte */
	T_STAR, /* *    any run without '/' */
	T_STAR1, /* *   as a whole component: one or more bytes but '/' */
	T_DCOMP, /* "/" + a whole `**` component: zero or more components */
};

struct tok {
	enum tok_kind k;
	char c;
};

/* Tokenises an IR glob (ir.h: `**` is always a whole component, matching
 * zero or more components). `toks` must have room for `len` entries.
 * A `**` component and the '/' before it become one token, (/.*)?, which
 * on normalised paths matches exactly zero or more "/component". */
static size_t tokenize(const char *s, size_t len, struct tok *toks)
{
	size_t n = 0, i = 0;
	while (i < len) {
		if (s[i] == '/' && i + 2 < len && s[i + 1] == '*' && s[i + 2] == '*' &&
		    (i + 3 == len || s[i + 3] == '/')) {
			toks[n++] = (struct tok){ T_DCOMP, 0 };
			i += 3;
			continue;
		}
		if (s[i] == '*' && i > 0 && s[i - 1] == '/' && (i + 1 == len || s[i + 1] == '/'))
			toks[n++] = (struct tok){ T_STAR1, 0 }; /* components are never empty */
		else if (s[i] == '*')
			toks[n++] = (struct tok){ T_STAR, 0 };
		else if (s[i] == '?')
			toks[n++] = (struct tok){ T_Q, 0 };
		else
			toks[n++] = (struct tok){ T_LIT, s[i] };
		i++;
	}
	return n;
}

/* One character but '/' for a byte matcher (Seatbelt's regexes match
 * bytes): a byte that does not continue a UTF-8 sequence, then the
 * continuation bytes after it, so `?` takes all of 'ü' as the IR does.
 * `*` can stay `[^/]*`: what follows it in a regex never starts with a
 * continuation byte, so it can only stop between characters. Exact for
 * names that are valid UTF-8, which are the only names APFS and HFS+
 * store. */
#define SBPL_REGEX_CHAR "[^/\x80-\xbf][\x80-\xbf]*"

static void put_toks(struct sbpl_buf *b, const struct tok *t, size_t from, size_t n)
{
	for (size_t i = from; i < n; i++) {
		switch (t[i].k) {
		case T_LIT: sbpl_regex_putc(b, t[i].c); break;
		case T_Q: sbpl_buf_puts(b, SBPL_REGEX_CHAR); break;
		case T_STAR: sbpl_buf_puts(b, "[^/]*"); break;
		case T_STAR1: sbpl_buf_puts(b, "[^/]+"); break;
		case T_DCOMP: sbpl_buf_puts(b, "(/.*)?"); break;
		}
	}
}

void sbpl_glob_regex(struct sbpl_buf *b, const char *text, size_t len)
{
	struct tok *t = malloc((len ? len : 1) * sizeof(*t));
	if (!t) {
		b->oom = true;
		return;
	}
	size_t n = tokenize(text, len, t);
	sbpl_buf_puts(b, "^");
	put_toks(b, t, 0, n);
	sbpl_buf_puts(b, "$");
	free(t);
}

/* An NFA state: token index and, for T_DCOMP, whether its '/' has been
 * read (sub 1: inside the ".*"), for T_STAR1 whether a byte has been read.
 * Index n is the accepting state. */
struct st {
	uint32_t i, sub;
};

struct stset {
	struct st *v;
	size_t n;
};

static bool set_has(const struct stset *s, struct st x)
{
	for (size_t k = 0; k < s->n; k++)
		if (s->v[k].i == x.i && s->v[k].sub == x.sub)
			return true;
	return false;
}

static void set_add(struct stset *s, struct st x)
{
	if (!set_has(s, x))
		s->v[s->n++] = x;
}

/* Adds the states reachable without consuming input. */
static void closure(struct stset *s, const struct tok *t, size_t n)
{
	for (size_t k = 0; k < s->n; k++) {
		struct st x = s->v[k];
		if (x.i >= n)
			continue;
		if ((t[x.i].k == T_STAR && x.sub == 0) || t[x.i].k == T_DCOMP ||
		    (t[x.i].k == T_STAR1 && x.sub == 1))
			set_add(s, (struct st){ x.i + 1, 0 });
	}
}

static void step(const struct stset *from, struct stset *to, const struct tok *t,
		 size_t n, char c)
{
	to->n = 0;
	for (size_t k = 0; k < from->n; k++) {
		struct st x = from->v[k];
		if (x.i >= n)
			continue;
		const struct tok *tk = &t[x.i];
		switch (tk->k) {
		case T_LIT:
			if (c == tk->c)
				set_add(to, (struct st){ x.i + 1, 0 });
			break;
		case T_Q:
			if (c != '/')
				set_add(to, (struct st){ x.i + 1, 0 });
			break;
		case T_STAR:
			if (c != '/')
				set_add(to, x);
			break;
		case T_STAR1:
			if (c != '/')
				set_add(to, (struct st){ x.i, 1 });
			break;
		case T_DCOMP:
			if (x.sub == 1 || c == '/')
				set_add(to, (struct st){ x.i, 1 });
			break;
		}
	}
}

/* The regex for what a state still has to match. */
static void put_remainder(struct sbpl_buf *b, const struct tok *t, size_t n, struct st x)
{
	if (x.i >= n)
		return;
	if (t[x.i].k == T_DCOMP && x.sub == 1) {
		sbpl_buf_puts(b, ".*");
		put_toks(b, t, x.i + 1, n);
	} else if (t[x.i].k == T_STAR1 && x.sub == 1) {
		sbpl_buf_puts(b, "[^/]*");
		put_toks(b, t, x.i + 1, n);
	} else {
		put_toks(b, t, x.i, n);
	}
}

/* ---- filters ---- */

struct filt_ctx {
	struct sbpl_buf *b;
	const struct sbpl_filter_opts *o;
	const char **err;
	bool ok;
};

/* F_REGEX_GUARDED: a regex that must not decide the link targets, which
 * the per-link variants decide instead. */
enum fkind { F_LITERAL, F_SUBPATH, F_REGEX, F_REGEX_GUARDED };

static const char link_targets_re[] = "^/private/(tmp|var|etc)(/.*)?$";

static void put_filter(struct filt_ctx *fc, enum fkind k, const char *s, size_t n)
{
	static const char *const file_names[] = { "literal", "subpath", "regex", "regex" };
	static const char *const unix_names[] = { "path-literal", "subpath", "path-regex",
						   "path-regex" };
	struct sbpl_buf *b = fc->b;
	if (!fc->ok)
		return;
	sbpl_buf_puts(b, fc->o->indent ? fc->o->indent : "");
	if (k == F_REGEX_GUARDED)
		sbpl_buf_puts(b, "(require-all ");
	if (fc->o->unix_socket)
		sbpl_buf_printf(b, "(remote unix-socket (%s ", unix_names[k]);
	else
		sbpl_buf_printf(b, "(%s ", file_names[k]);
	if (!sbpl_put_string(b, s, n)) {
		*fc->err = "a path or pattern has a control character or is longer than "
			   "a Seatbelt string may be (1000 bytes escaped)";
		fc->ok = false;
		return;
	}
	sbpl_buf_puts(b, fc->o->unix_socket ? "))" : ")");
	if (k == F_REGEX_GUARDED) {
		if (fc->o->unix_socket)
			sbpl_buf_puts(b, " (require-not (remote unix-socket (path-regex ");
		else
			sbpl_buf_puts(b, " (require-not (regex ");
		sbpl_put_string(b, link_targets_re, sizeof(link_targets_re) - 1);
		sbpl_buf_puts(b, fc->o->unix_socket ? "))))" : ")))");
	}
	if (fc->o->suffix)
		sbpl_buf_puts(b, fc->o->suffix);
	sbpl_buf_puts(b, "\n");
}

/* Writes a literal-path filter for the resolved form of text[0..len). */
static void put_resolved(struct filt_ctx *fc, enum fkind k, const char *text, size_t len)
{
	struct sbpl_buf tmp = { 0 };
	sbpl_resolved_path(&tmp, text, len);
	if (tmp.oom) {
		fc->b->oom = true;
	} else {
		put_filter(fc, k, tmp.p, tmp.len);
	}
	sbpl_buf_free(&tmp);
}

static void put_glob(struct filt_ctx *fc, const struct ir_path *p)
{
	size_t len = p->len;
	struct tok *t = malloc((len ? len : 1) * sizeof(*t));
	struct st *pool = malloc(2 * 2 * (len + 2) * sizeof(*pool));
	if (!t || !pool) {
		fc->b->oom = true;
		free(t);
		free(pool);
		return;
	}
	size_t n = tokenize(p->text, len, t);
	/* The first path component: literal when lit_prefix reaches past it. */
	const char *slash = memchr(p->text + 1, '/', len - 1);
	size_t seg_end = slash ? (size_t)(slash - p->text) : len;
	bool first_literal = p->lit_prefix >= seg_end && (slash != NULL);
	size_t lp = first_literal ? link_prefix(p->text, len) : 0;

	/* A glob starting with a literal component other than a link matches
	 * no link target: its regex alone is exact. A glob starting with a
	 * pattern could match /private/tmp/... by the letters of "private"
	 * (/STAR/STAR/x) where the IR, spelling the path /tmp/..., says no: its
	 * regex is kept off the link targets, and the variants below decide
	 * them from the /tmp spelling. */
	if (lp == 0) {
		struct sbpl_buf re = { 0 };
		sbpl_glob_regex(&re, p->text, len);
		if (re.oom)
			fc->b->oom = true;
		else
			put_filter(fc, first_literal ? F_REGEX : F_REGEX_GUARDED, re.p, re.len);
		sbpl_buf_free(&re);
	}
	if (!first_literal || lp) {
		size_t cap = 2 * (len + 2); /* distinct states: (token, sub) */
		struct stset a = { pool, 0 }, c = { pool + cap, 0 };
		for (size_t li = 0; li < NLINKS && fc->ok; li++) {
			char pre[8];
			size_t pl = (size_t)snprintf(pre, sizeof(pre), "/%s/", links[li]);
			a.n = 0;
			set_add(&a, (struct st){ 0, 0 });
			bool exact = false;
			for (size_t k = 0; k < pl; k++) {
				closure(&a, t, n);
				if (k == pl - 1) {
					/* before the final '/': does the glob match "/tmp" itself? */
					for (size_t m = 0; m < a.n; m++)
						if (a.v[m].i >= n)
							exact = true;
				}
				step(&a, &c, t, n, pre[k]);
				struct stset sw = a;
				a = c;
				c = sw;
			}
			if (exact)
				put_resolved(fc, F_LITERAL, pre, pl - 1);
			for (size_t m = 0; m < a.n && fc->ok; m++) {
				if (a.v[m].i >= n)
					continue; /* "/tmp/" itself is never a path */
				struct sbpl_buf re = { 0 };
				sbpl_buf_printf(&re, "^/private/%s/", links[li]);
				put_remainder(&re, t, n, a.v[m]);
				sbpl_buf_puts(&re, "$");
				if (re.oom)
					fc->b->oom = true;
				else
					put_filter(fc, F_REGEX, re.p, re.len);
				sbpl_buf_free(&re);
			}
		}
	}
	free(t);
	free(pool);
}

bool sbpl_put_path_filters(struct sbpl_buf *b, const struct ir_path *p,
			   const struct sbpl_filter_opts *o, const char **err)
{
	struct filt_ctx fc = { b, o, err, true };
	switch (p->kind) {
	case IR_PAT_EXACT:
		put_resolved(&fc, F_LITERAL, p->text, p->len);
		break;
	case IR_PAT_SUBTREE: {
		/* DIR is everything before the final slash and double star. */
		size_t dl = p->len >= 3 ? p->len - 3 : 0;
		if (dl == 0) {
			put_filter(&fc, F_SUBPATH, "/", 1);
			break;
		}
		if (o->deny && !o->unix_socket)
			put_resolved(&fc, F_LITERAL, p->text, dl);
		put_resolved(&fc, F_SUBPATH, p->text, dl);
		break;
	}
	case IR_PAT_GLOB:
		put_glob(&fc, p);
		break;
	}
	return fc.ok;
}
