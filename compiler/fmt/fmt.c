/*
 * fmt.c - the canonical .cage formatter (see fmt.h; style in docs/language.md).
 *
 * One pass over the tokens, comments included. Statements are collected
 * into "chunks" - the words between commas, which are the only places a
 * statement may be broken across lines - and laid out greedily within
 * FMT_WIDTH columns. Line structure the author chose survives only where
 * it carries something: a run of blank lines between statements becomes
 * one blank line, and a comment stays beside the code it was written
 * beside. The latter is not only courtesy: `cagec lint` reads a
 * "# cage: allow ID - reason" comment as applying to the code on its own
 * line or on the next line of code, so moving words onto or off a
 * comment's line could silence a finding, or revive one. Hence a
 * statement holding a comment keeps its line breaks (and is not
 * re-wrapped), and when a one-line profile is expanded, the comments that
 * were about its line go with its statement. Everything else (spacing,
 * indentation, string escapes, wrapping) is rewritten to one canonical
 * form, so fmt(fmt(x)) == fmt(x).
 */
#include "fmt.h"

#include <stdlib.h>
#include <string.h>

#include "lex.h"
#include "parse_ctx.h"
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
	bool new_line; /* a chunk that started a line in the input */
};

/* A full-line comment waiting for the unit it precedes. */
struct fmt_note {
	const char *text;
	size_t len;
	unsigned depth;
	bool blank_before;
};

struct fmt_stmt {
	struct fmt_piece *v;
	size_t n, cap;
	struct fmt_buf chunk;  /* the chunk being read */
	bool after_comma;      /* the last token was ',' or `except`: the statement continues */
	uint32_t last_line;    /* physical line of the last token */
	uint32_t chunk_line;   /* physical line of the open chunk's first token */
	uint32_t last_chunk_end; /* physical line of the last closed chunk's end */
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
	struct fmt_note *notes;   /* full-line comments not yet written */
	size_t nnotes, capnotes;
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
		.new_line = st->n > 0 && st->chunk_line != st->last_chunk_end,
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
	if (st->chunk.len == 0)
		st->chunk_line = t->loc.line;
	if (t->kind != TK_COMMA && st->chunk.len > 0)
		buf_putc(&st->chunk, ' ');
	if (t->kind == TK_STRING)
		fmt_put_string(&st->chunk, t->value ? t->value : "", t->value_len);
	else
		buf_put(&st->chunk, t->text, t->len);
	/* `except` is the other place a statement may break: it ends a
	 * chunk as a comma does, and stays at the end of its line. */
	st->after_comma = t->kind == TK_COMMA || t->kind == TK_EXCEPT;
	st->last_line = t->loc.line;
	if (st->after_comma) {
		stmt_close_chunk(s);
		st->last_chunk_end = t->loc.line;
	}
}

/* Starts an output unit (statement, full-line comment, header, '}'): at
 * most one blank line, none at the top of the file or of a profile body,
 * none before a closing brace. */
static void fmt_begin_unit(struct fmt *s, bool blank, bool closing)
{
	if (blank && s->any_output && !s->after_open && !closing)
		buf_putc(&s->out, '\n');
	s->after_open = false;
	s->any_output = true;
}

static void fmt_note_write(struct fmt *s, const struct fmt_note *n, bool blank)
{
	fmt_begin_unit(s, blank, false);
	buf_spaces(&s->out, (size_t)n->depth * FMT_INDENT);
	buf_put(&s->out, n->text, n->len);
	buf_putc(&s->out, '\n');
}

/* Writes the waiting full-line comments [from, nnotes). */
static void fmt_notes_write(struct fmt *s, size_t from)
{
	for (size_t i = from; i < s->nnotes; i++)
		fmt_note_write(s, &s->notes[i], s->notes[i].blank_before);
	s->nnotes = from;
}

/* Lays out the collected statement: chunks fill lines greedily up to
 * FMT_WIDTH columns, continuation lines are indented one more level, and
 * a comment between chunks ends its line (or sits on its own line, as
 * it did in the input). A statement holding a comment keeps the input's
 * line breaks instead, so every comment keeps the same words beside it. */
static void fmt_flush(struct fmt *s)
{
	struct fmt_stmt *st = &s->st;
	stmt_close_chunk(s);
	if (st->n == 0)
		return;
	fmt_notes_write(s, 0);
	fmt_begin_unit(s, s->pending_blank, false);
	s->pending_blank = false;
	bool keep = st->trail != NULL;
	for (size_t i = 0; i < st->n && !keep; i++)
		keep = st->v[i].comment;
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
		} else if (keep ? !p->new_line : col + 1 + p->width <= FMT_WIDTH) {
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

/* Appends a comment to the last line written. */
static void fmt_append_comment(struct fmt *s, const char *text, size_t n)
{
	s->out.len--; /* the line's '\n' */
	buf_putc(&s->out, ' ');
	buf_put(&s->out, text, n);
	buf_putc(&s->out, '\n');
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
	if (s->any_output && s->nnotes == 0 && t->loc.line == s->last_unit_line) {
		/* After a '{' or '}' on the same line: keep it there. */
		fmt_append_comment(s, t->text, n);
		return;
	}
	if (s->nnotes == s->capnotes) {
		size_t cap = s->capnotes ? s->capnotes * 2 : 16;
		struct fmt_note *nv = realloc(s->notes, cap * sizeof(*nv));
		if (!nv)
			fmt_oom();
		s->notes = nv;
		s->capnotes = cap;
	}
	s->notes[s->nnotes++] = (struct fmt_note){
		.text = t->text, .len = n, .depth = s->depth, .blank_before = s->pending_blank,
	};
	s->pending_blank = false;
}

/* "# cage: ..." - the comments cagec lint reads as directives. */
static bool fmt_is_directive(const struct fmt_note *n)
{
	size_t i = 1;
	while (i < n->len && (n->text[i] == ' ' || n->text[i] == '\t'))
		i++;
	return n->len - i >= 5 && memcmp(n->text + i, "cage:", 5) == 0;
}

/* The token stream with one token of lookahead. */
struct fmt_lex {
	struct lexer lx;
	struct token peeked;
	bool has_peeked;
};

static void fmt_next(struct fmt_lex *l, struct token *t)
{
	if (l->has_peeked) {
		*t = l->peeked;
		l->has_peeked = false;
	} else {
		lex_next(&l->lx, t);
	}
}

static const struct token *fmt_peek(struct fmt_lex *l)
{
	if (!l->has_peeked) {
		lex_next(&l->lx, &l->peeked);
		l->has_peeked = true;
	}
	return &l->peeked;
}

/* '{' ends a profile header. When a statement follows on the same line (a
 * one-line profile), directives above the header were about that
 * statement's line, so they move into the body above it. */
static void fmt_open(struct fmt *s, struct fmt_lex *l, const struct token *brace)
{
	stmt_add_token(s, brace);
	const struct token *nx = fmt_peek(l);
	bool item_follows = nx->loc.line == brace->loc.line && nx->kind != LEX_COMMENT &&
			    nx->kind != TK_RBRACE && nx->kind != TK_NL && nx->kind != LEX_EOF;
	/* lint applies a directive to the next line of code however many
	 * comment and blank lines come between, so of the comments since the
	 * last code, the ones from the first directive on move (in order). */
	size_t keep = s->nnotes;
	if (item_follows)
		for (size_t i = s->nnotes; i > 0; i--)
			if (fmt_is_directive(&s->notes[i - 1]))
				keep = i - 1;
	size_t nmove = s->nnotes - keep;
	struct fmt_note *moved = NULL;
	if (nmove) {
		moved = malloc(nmove * sizeof(*moved));
		if (!moved)
			fmt_oom();
		memcpy(moved, s->notes + keep, nmove * sizeof(*moved));
		s->nnotes = keep;
	}
	fmt_flush(s);
	s->depth++;
	s->after_open = true;
	for (size_t i = 0; i < nmove; i++) {
		moved[i].depth = s->depth;
		fmt_note_write(s, &moved[i], i > 0 && moved[i].blank_before);
	}
	free(moved);
	if (nmove)
		s->last_unit_line = 0; /* the statement is not on the header's line now */
}

/* '}' ends a body. A comment after it on the same line was beside the
 * body's last statement when that shared the line (or beside the header,
 * for `{}`), and stays with it. */
static void fmt_close(struct fmt *s, struct fmt_lex *l, const struct token *brace)
{
	const struct token *nx = fmt_peek(l);
	bool comment_after = nx->kind == LEX_COMMENT && nx->loc.line == brace->loc.line;
	if (!stmt_empty(s)) {
		if (comment_after) {
			s->st.trail = nx->text;
			s->st.trail_len = fmt_comment_len(nx);
			l->has_peeked = false;
		}
		fmt_flush(s);
	} else if (comment_after && s->after_open && s->nnotes == 0 &&
		   s->last_unit_line == brace->loc.line) {
		fmt_append_comment(s, nx->text, fmt_comment_len(nx));
		l->has_peeked = false;
	}
	fmt_notes_write(s, 0);
	if (s->depth > 0)
		s->depth--;
	fmt_begin_unit(s, false, true);
	s->pending_blank = false;
	buf_spaces(&s->out, (size_t)s->depth * FMT_INDENT);
	buf_put(&s->out, "}\n", 2);
	s->last_unit_line = brace->loc.line;
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
		if (t.kind == TK_NL && (prev == TK_COMMA || prev == TK_EXCEPT || prev == TK_NL ||
					prev == TK_LBRACE))
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
	struct fmt_lex l = { .has_peeked = false };
	lex_init(&l.lx, f, a, &scratch);
	l.lx.keep_comments = true;
	bool line_has_content = false;
	for (;;) {
		struct token t;
		fmt_next(&l, &t);
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
			fmt_open(&s, &l, &t);
			line_has_content = true;
			break;
		case TK_RBRACE:
			fmt_close(&s, &l, &t);
			line_has_content = true;
			break;
		default:
			stmt_add_token(&s, &t);
			line_has_content = true;
			break;
		}
	}
	fmt_flush(&s);
	fmt_notes_write(&s, 0);
	bool lex_ok = scratch.errors == 0;
	diag_list_free(&scratch);
	free(s.st.v);
	free(s.st.chunk.p);
	free(s.notes);
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
