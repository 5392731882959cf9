/*
 * sbpl_sexp.c - reads SBPL text into s-expressions (see sbpl_sexp.h).
 * Nesting depth and literal sizes are bounded so that a hostile or broken
 * profile produces an error, not a stack overflow.
 */
#include "sbpl_sexp.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sbpl_eval.h"

enum { SX_MAX_DEPTH = 64 };

struct reader {
	struct arena *a;
	const char *s;
	size_t len, pos;
	unsigned line, col;
	char *err;
	size_t errlen;
};

static bool fail(struct reader *r, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool fail(struct reader *r, unsigned line, unsigned col, const char *fmt, ...)
{
	if (r->errlen == 0)
		return false;
	int n = snprintf(r->err, r->errlen, "%u:%u: ", line, col);
	if (n < 0 || (size_t)n >= r->errlen)
		return false;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

static int peek(const struct reader *r)
{
	return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

static void advance(struct reader *r)
{
	if (r->s[r->pos] == '\n') {
		r->line++;
		r->col = 1;
	} else {
		r->col++;
	}
	r->pos++;
}

/* Skips blanks and `;` comments. A NUL byte is never valid SBPL text. */
static bool skip_space(struct reader *r)
{
	for (;;) {
		int c = peek(r);
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
			advance(r);
		} else if (c == ';') {
			while (peek(r) != -1 && peek(r) != '\n')
				advance(r);
		} else if (c == 0) {
			return fail(r, r->line, r->col, "NUL byte in profile text");
		} else {
			return true;
		}
	}
}

static struct sx *node(struct reader *r, enum sx_kind k, unsigned line, unsigned col)
{
	struct sx *x = arena_alloc(r->a, sizeof(*x));
	x->kind = k;
	x->line = line;
	x->col = col;
	return x;
}

/* "..." decodes \\ \" \n \t \r; #"..." keeps every backslash pair verbatim
 * because its content is handed to the regex compiler. */
static bool read_string(struct reader *r, struct sx *x, bool raw)
{
	unsigned line = r->line, col = r->col;
	advance(r); /* opening quote */
	size_t cap = 64, n = 0;
	char *buf = arena_alloc(r->a, cap);
	for (;;) {
		int c = peek(r);
		if (c == -1)
			return fail(r, line, col, "unterminated string");
		if (c == 0)
			return fail(r, r->line, r->col, "NUL byte in string");
		advance(r);
		if (c == '"')
			break;
		char out[2];
		size_t k = 0;
		if (c == '\\') {
			int e = peek(r);
			if (e == -1)
				return fail(r, line, col, "unterminated string");
			advance(r);
			if (raw) {
				out[k++] = '\\';
				out[k++] = (char)e;
			} else {
				switch (e) {
				case '\\': out[k++] = '\\'; break;
				case '"': out[k++] = '"'; break;
				case 'n': out[k++] = '\n'; break;
				case 't': out[k++] = '\t'; break;
				case 'r': out[k++] = '\r'; break;
				default:
					return fail(r, r->line, r->col - 2,
						    "unknown escape '\\%c' in string", e);
				}
			}
		} else {
			out[k++] = (char)c;
		}
		if (n + k + 1 > cap) {
			char *nb = arena_alloc(r->a, cap * 2);
			memcpy(nb, buf, n);
			buf = nb;
			cap *= 2;
		}
		memcpy(buf + n, out, k);
		n += k;
		if (n > 4 * SBPL_EVAL_MAX_STRING)
			return fail(r, line, col, "string literal longer than %d bytes",
				    4 * SBPL_EVAL_MAX_STRING);
	}
	buf[n] = '\0';
	x->text = buf;
	x->len = n;
	return true;
}

static bool is_delim(int c)
{
	return c == -1 || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	       c == '(' || c == ')' || c == '"' || c == ';';
}

static bool read_datum(struct reader *r, struct sx **out, unsigned depth);

static bool read_list(struct reader *r, struct sx *x, unsigned depth)
{
	unsigned line = x->line, col = x->col;
	if (depth > SX_MAX_DEPTH)
		return fail(r, line, col, "lists nested deeper than %d", SX_MAX_DEPTH);
	advance(r); /* ( */
	size_t cap = 4;
	x->kids = arena_alloc(r->a, cap * sizeof(*x->kids));
	for (;;) {
		if (!skip_space(r))
			return false;
		int c = peek(r);
		if (c == -1)
			return fail(r, line, col, "unbalanced '(': missing ')'");
		if (c == ')') {
			advance(r);
			return true;
		}
		struct sx *kid;
		if (!read_datum(r, &kid, depth + 1))
			return false;
		if (x->n == cap) {
			struct sx **nk = arena_alloc(r->a, 2 * cap * sizeof(*nk));
			memcpy(nk, x->kids, cap * sizeof(*nk));
			x->kids = nk;
			cap *= 2;
		}
		x->kids[x->n++] = kid;
	}
}

static bool read_datum(struct reader *r, struct sx **out, unsigned depth)
{
	unsigned line = r->line, col = r->col;
	int c = peek(r);
	struct sx *x;
	if (c == '(') {
		x = node(r, SX_LIST, line, col);
		if (!read_list(r, x, depth))
			return false;
	} else if (c == ')') {
		return fail(r, line, col, "unbalanced ')'");
	} else if (c == '"') {
		x = node(r, SX_STR, line, col);
		if (!read_string(r, x, false))
			return false;
	} else if (c == '#') {
		advance(r);
		int d = peek(r);
		if (d == '"') {
			x = node(r, SX_RSTR, line, col);
			if (!read_string(r, x, true))
				return false;
		} else if ((d == 't' || d == 'f')) {
			advance(r);
			if (!is_delim(peek(r)))
				return fail(r, line, col, "unknown '#' syntax");
			x = node(r, SX_BOOL, line, col);
			x->truth = d == 't';
		} else {
			return fail(r, line, col, "unknown '#' syntax");
		}
	} else if (c == '\'' || c == '`' || c == ',' || c == '[' || c == ']' ||
		   c == '{' || c == '}' || c == '|') {
		return fail(r, line, col, "unsupported syntax '%c'", c);
	} else {
		size_t start = r->pos;
		while (!is_delim(peek(r))) {
			int e = peek(r);
			if (e == 0 || e == '\'' || e == '`' || e == '|' || e == '#')
				return fail(r, r->line, r->col, "unexpected '%c' in symbol",
					    e ? e : '0');
			advance(r);
		}
		size_t n = r->pos - start;
		bool num = true;
		for (size_t i = 0; i < n; i++)
			if (r->s[start + i] < '0' || r->s[start + i] > '9')
				num = false;
		x = node(r, num ? SX_NUM : SX_SYM, line, col);
		x->text = arena_strndup(r->a, r->s + start, n);
		x->len = n;
	}
	*out = x;
	return true;
}

bool sbpl_eval_read(struct arena *a, const char *text, size_t len,
		    struct sx ***out, size_t *nout, char *err, size_t errlen)
{
	struct reader r = { .a = a, .s = text, .len = len, .line = 1, .col = 1,
			    .err = err, .errlen = errlen };
	size_t cap = 16, n = 0;
	struct sx **v = arena_alloc(a, cap * sizeof(*v));
	for (;;) {
		if (!skip_space(&r))
			return false;
		if (peek(&r) == -1)
			break;
		struct sx *x;
		if (!read_datum(&r, &x, 0))
			return false;
		if (n == cap) {
			struct sx **nv = arena_alloc(a, 2 * cap * sizeof(*nv));
			memcpy(nv, v, cap * sizeof(*nv));
			v = nv;
			cap *= 2;
		}
		v[n++] = x;
	}
	*out = v;
	*nout = n;
	return true;
}
