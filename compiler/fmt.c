/*
 * fmt.c - the canonical .cage formatter (see fmt.h; style in docs/language.md).
 *
 * One pass over the tokens, comments included. Statements are collected
 * into "chunks" - the words between commas, which are the only places a
 * statement may be broken across lines - and laid out greedily within
 * FMT_WIDTH columns. Line structure the author chose survives only where
 * it carries something: a comment stays on the line it was written on
 * (trailing or on its own), and a run of blank lines between statements
 * becomes one blank line. Everything else (spacing, indentation, string
 * escapes, one-line profiles) is rewritten to one canonical form, so the
 * output depends only on the tokens and comments, which is what makes
 * fmt(fmt(x)) == fmt(x).
 */
#include "fmt.h"

#include <stdlib.h>
#include <string.h>

#include "../lang/lex.h"
#include "../lang/parse_ctx.h"
#include "grammar.h"

struct fmt_buf {
	char *p;
	size_t len, cap;
};

/* A chunk of a statement (words up to and including a comma) or a comment
 * between two chunks of a statement that continues on the next line. */
struct fmt_piece {
	const char *text;
	size_t len, width;
	bool comment;
	bool own_line; /* a comment on a line of its own, not after a chunk */
};

struct fmt_stmt {
	struct fmt_piece *v;
	size_t n, cap;
	struct fmt_buf chunk;  /* the chunk being read */
	bool after_comma;      /* the last token was ',': the statement continues */
	uint32_t last_line;    /* physical line of the last token */
	const char *trail;     /* comment after the statement's last token */
	size_t trail_len;
};

struct fmt {
	struct arena *arena;
	struct fmt_buf out;
	struct fmt_stmt st;
	unsigned depth;           /* profile bodies open (0 or 1 in valid input) */
	bool pending_blank;       /* a blank line was seen since the last unit */
	bool any_output;
	bool after_open;          /* the last unit was a profile header ('{') */
	uint32_t last_unit_line;  /* physical line on which the last unit ended */
};

static void fmt_oom(void)
{
	/* Same policy as the arena: memory exhaustion is not recoverable here. */
	fputs("cage: out of memory\n", stderr);
	abort();
}

static void buf_reserve(struct fmt_buf *b, size_t more)
{
	if (more > SIZE_MAX / 4 - b->len)
		fmt_oom();
	if (b->len + more + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *np = realloc(b->p, cap);
	if (!np)
		fmt_oom();
	b->p = np;
	b->cap = cap;
	b->p[b->len] = '\0';
}

static void buf_put(struct fmt_buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void buf_putc(struct fmt_buf *b, char c)
{
	buf_put(b, &c, 1);
}

static void buf_spaces(struct fmt_buf *b, size_t n)
{
	buf_reserve(b, n);
	memset(b->p + b->len, ' ', n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* Display columns: a UTF-8 sequence counts as one (continuation bytes
 * 0x80-0xbf add nothing), as diag_display_col counts them. */
static size_t fmt_width(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	return w;
}

/* A string literal from its value: the lexer's four escapes and nothing
 * else, so every way of writing the same value prints the same. Values
 * hold no other control characters (the lexer rejects them). */
static void fmt_put_string(struct fmt_buf *b, const char *v, size_t n)
{
	buf_putc(b, '"');
	for (size_t i = 0; i < n; i++) {
		switch (v[i]) {
		case '"': buf_put(b, "\\\"", 2); break;
		case '\\': buf_put(b, "\\\\", 2); break;
		case '\n': buf_put(b, "\\n", 2); break;
		case '\t': buf_put(b, "\\t", 2); break;
		default: buf_putc(b, v[i]); break;
		}
	}
	buf_putc(b, '"');
}

/* A comment without trailing blanks (and without the '\r' of CRLF files). */
static size_t fmt_comment_len(const struct token *t)
{
	size_t n = t->len;
	while (n > 1 && (t->text[n - 1] == ' ' || t->text[n - 1] == '\t' || t->text[n - 1] == '\r' ||
			 t->text[n - 1] == '\f' || t->text[n - 1] == '\v'))
		n--;
	return n;
}

static void stmt_push(struct fmt *s, struct fmt_piece p)
{
	struct fmt_stmt *st = &s->st;
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 16;
		struct fmt_piece *nv = realloc(st->v, cap * sizeof(*nv));
		if (!nv)
			fmt_oom();
		st->v = nv;
		st->cap = cap;
	}
	st->v[st->n++] = p;
}

static void stmt_close_chunk(struct fmt *s)
{
	struct fmt_stmt *st = &s->st;
	if (st->chunk.len == 0)
		return;
	struct fmt_piece p = {
		.text = arena_strndup(s->arena, st->chunk.p, st->chunk.len),
		.len = st->chunk.len,
		.width = fmt_width(st->chunk.p, st->chunk.len),
	};
	stmt_push(s, p);
	st->chunk.len = 0;
}

static bool stmt_empty(const struct fmt *s)
{
	return s->st.n == 0 && s->st.chunk.len == 0;
}

static void stmt_add_token(struct fmt *s, const struct token *t)
{
	struct fmt_stmt *st = &s->st;
	if (t->kind != TK_COMMA && st->chunk.len > 0)
		buf_putc(&st->chunk, ' ');
	if (t->kind == TK_STRING)
		fmt_put_string(&st->chunk, t->value ? t->value : "", t->value_len);
	else
		buf_put(&st->chunk, t->text, t->len);
	st->after_comma = t->kind == TK_COMMA;
	if (st->after_comma)
		stmt_close_chunk(s);
	st->last_line = t->loc.line;
}

/* Starts an output unit (statement, full-line comment, header, '}'): at
 * most one blank line, none at the top of the file or of a profile body,
 * none before a closing brace. */
static void fmt_begin_unit(struct fmt *s, bool closing)
{
	if (s->pending_blank && s->any_output && !s->after_open && !closing)
		buf_putc(&s->out, '\n');
	s->pending_blank = false;
	s->after_open = false;
	s->any_output = true;
}

/* Lays out the collected statement: chunks fill lines greedily up to
 * FMT_WIDTH columns, continuation lines are indented one more level, and
 * a comment between chunks ends its line (or sits on its own line, as
 * it did in the input). */
static void fmt_flush(struct fmt *s)
{
	struct fmt_stmt *st = &s->st;
	stmt_close_chunk(s);
	if (st->n == 0)
		return;
	fmt_begin_unit(s, false);
	size_t ind = (size_t)s->depth * FMT_INDENT, cont = ind + FMT_INDENT, col = 0;
	bool line_open = false, first = true;
	struct fmt_buf *o = &s->out;
	for (size_t i = 0; i < st->n; i++) {
		const struct fmt_piece *p = &st->v[i];
		if (p->comment) {
			if (p->own_line || !line_open) {
				if (line_open)
					buf_putc(o, '\n');
				buf_spaces(o, cont);
			} else {
				buf_putc(o, ' ');
			}
			buf_put(o, p->text, p->len);
			buf_putc(o, '\n');
			line_open = false;
			continue;
		}
		if (!line_open) {
			size_t start = first ? ind : cont;
			buf_spaces(o, start);
			col = start;
		} else if (col + 1 + p->width <= FMT_WIDTH) {
			buf_putc(o, ' ');
			col++;
		} else {
			buf_putc(o, '\n');
			buf_spaces(o, cont);
			col = cont;
		}
		buf_put(o, p->text, p->len);
		col += p->width;
		line_open = true;
		first = false;
	}
	if (st->trail) {
		buf_putc(o, ' ');
		buf_put(o, st->trail, st->trail_len);
	}
	buf_putc(o, '\n');
	s->last_unit_line = st->last_line;
	st->n = 0;
	st->chunk.len = 0;
	st->after_comma = false;
	st->trail = NULL;
	st->trail_len = 0;
}

static void fmt_comment(struct fmt *s, const struct token *t)
{
	struct fmt_stmt *st = &s->st;
	size_t n = fmt_comment_len(t);
	if (!stmt_empty(s)) {
		if (st->after_comma) {
			struct fmt_piece p = {
				.text = t->text, .len = n, .comment = true,
				.own_line = t->loc.line != st->last_line,
			};
			stmt_push(s, p);
		} else {
			st->trail = t->text;
			st->trail_len = n;
		}
		return;
	}
	if (s->any_output && t->loc.line == s->last_unit_line) {
		/* After a '{' or '}' on the same line: keep it there. */
		s->out.len--; /* the unit's '\n' */
		buf_putc(&s->out, ' ');
		buf_put(&s->out, t->text, n);
		buf_putc(&s->out, '\n');
		return;
	}
	fmt_begin_unit(s, false);
	buf_spaces(&s->out, (size_t)s->depth * FMT_INDENT);
	buf_put(&s->out, t->text, n);
	buf_putc(&s->out, '\n');
	s->last_unit_line = t->loc.line;
}

/* ---- self-check ---- */

struct fmt_sig {
	int kind;
	const char *text;
	size_t len;
};

struct fmt_sigs {
	struct fmt_sig *v;
	size_t n, cap;
};

static void sigs_push(struct fmt_sigs *s, int kind, const char *text, size_t len)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct fmt_sig *nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			fmt_oom();
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = (struct fmt_sig){ kind, text, len };
}

/* What the parser sees (statement-ending newlines as the parser keeps
 * them, string values rather than spellings) plus every comment's text.
 * Two texts with equal signatures mean the same policy. */
static bool fmt_signature(const struct src_file *f, struct arena *a, struct fmt_sigs *toks,
			  struct fmt_sigs *comments)
{
	struct diag_list scratch;
	diag_list_init(&scratch, a);
	struct lexer lx;
	lex_init(&lx, f, a, &scratch);
	lx.keep_comments = true;
	int prev = TK_NL;
	for (;;) {
		struct token t;
		lex_next(&lx, &t);
		if (t.kind == LEX_COMMENT) {
			sigs_push(comments, t.kind, t.text, fmt_comment_len(&t));
			continue;
		}
		if (t.kind == LEX_ERROR)
			break;
		/* A newline after '{' is an empty body line: it means nothing. */
		if (t.kind == TK_NL && (prev == TK_COMMA || prev == TK_NL || prev == TK_LBRACE))
			continue;
		if ((t.kind == LEX_EOF || t.kind == TK_RBRACE) && prev != TK_NL)
			sigs_push(toks, TK_NL, "", 0);
		if (t.kind == LEX_EOF)
			break;
		if (t.kind == TK_NL)
			sigs_push(toks, t.kind, "", 0);
		else if (t.kind == TK_STRING)
			sigs_push(toks, t.kind, t.value ? t.value : "", t.value_len);
		else
			sigs_push(toks, t.kind, t.text, t.len);
		prev = t.kind;
	}
	bool ok = scratch.errors == 0;
	diag_list_free(&scratch);
	return ok;
}

static bool sigs_equal(const struct fmt_sigs *x, const struct fmt_sigs *y)
{
	if (x->n != y->n)
		return false;
	for (size_t i = 0; i < x->n; i++)
		if (x->v[i].kind != y->v[i].kind || x->v[i].len != y->v[i].len ||
		    memcmp(x->v[i].text, y->v[i].text, x->v[i].len) != 0)
			return false;
	return true;
}

static bool fmt_self_check(const struct src_file *in, const char *text, size_t len,
			   struct arena *a)
{
	struct src_file outf = *in;
	outf.text = text;
	outf.len = len;
	struct diag_list scratch;
	diag_list_init(&scratch, a);
	parse_file(&outf, a, &scratch);
	bool ok = scratch.errors == 0;
	diag_list_free(&scratch);
	struct fmt_sigs ti = { 0 }, ci = { 0 }, to = { 0 }, co = { 0 };
	ok = ok && fmt_signature(in, a, &ti, &ci) && fmt_signature(&outf, a, &to, &co) &&
	     sigs_equal(&ti, &to) && sigs_equal(&ci, &co);
	free(ti.v);
	free(ci.v);
	free(to.v);
	free(co.v);
	return ok;
}

/* ---- driver ---- */

bool fmt_source(const struct src_file *f, struct arena *a, struct diag_list *diags,
		char **out, size_t *outlen)
{
	*out = NULL;
	*outlen = 0;
	size_t errors = diags->errors;
	parse_file(f, a, diags);
	if (diags->errors > errors)
		return false;

	struct fmt s = { .arena = a };
	struct diag_list scratch;
	diag_list_init(&scratch, a);
	struct lexer lx;
	lex_init(&lx, f, a, &scratch);
	lx.keep_comments = true;
	bool line_has_content = false;
	for (;;) {
		struct token t;
		lex_next(&lx, &t);
		if (t.kind == LEX_EOF)
			break;
		switch (t.kind) {
		case LEX_COMMENT:
			fmt_comment(&s, &t);
			line_has_content = true;
			break;
		case TK_NL:
			if (!stmt_empty(&s) && !s.st.after_comma)
				fmt_flush(&s);
			else if (stmt_empty(&s) && !line_has_content)
				s.pending_blank = true;
			line_has_content = false;
			break;
		case TK_LBRACE:
			stmt_add_token(&s, &t);
			fmt_flush(&s);
			s.depth++;
			s.after_open = true;
			line_has_content = true;
			break;
		case TK_RBRACE:
			fmt_flush(&s);
			if (s.depth > 0)
				s.depth--;
			fmt_begin_unit(&s, true);
			buf_spaces(&s.out, (size_t)s.depth * FMT_INDENT);
			buf_put(&s.out, "}\n", 2);
			s.last_unit_line = t.loc.line;
			line_has_content = true;
			break;
		default:
			stmt_add_token(&s, &t);
			line_has_content = true;
			break;
		}
	}
	fmt_flush(&s);
	bool lex_ok = scratch.errors == 0;
	diag_list_free(&scratch);
	free(s.st.v);
	free(s.st.chunk.p);
	if (!s.out.p)
		buf_reserve(&s.out, 0); /* an empty file formats to an empty text */

	if (!lex_ok || !fmt_self_check(f, s.out.p, s.out.len, a)) {
		struct loc l = { .file = f };
		diag_add(diags, DIAG_ERROR, l, "fmt",
			 "the formatter's output failed its self-check (it would not mean the same "
			 "policy); the file is left as it is - please report this");
		free(s.out.p);
		return false;
	}
	*out = s.out.p;
	*outlen = s.out.len;
	return true;
}
