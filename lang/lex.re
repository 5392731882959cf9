/*
 * lex.re - the .cage tokenizer; re2c turns this into gen/lex.c.
 *
 * The input is NUL-terminated (a sentinel); a NUL before the end is an
 * error, never an early end of file, so text after it cannot hide. Strings
 * are unescaped here so that later stages see the value the user meant.
 */
#include "lex.h"

#include <stdint.h>
#include <string.h>

#include "grammar.h"

void lex_init(struct lexer *lx, const struct src_file *f, struct arena *a,
	      struct diag_list *diags)
{
	memset(lx, 0, sizeof(*lx));
	lx->file = f;
	lx->cur = f->text;
	lx->lim = f->text + f->len;
	lx->line = 1;
	lx->col = 1;
	/* A UTF-8 byte order mark, as some editors write, is not text. */
	if (f->len >= 3 && memcmp(f->text, "\xEF\xBB\xBF", 3) == 0) {
		lx->cur += 3;
		lx->col_off = 3;
	}
	lx->arena = a;
	lx->diags = diags;
}

static struct loc lex_loc(struct lexer *lx, const char *start, size_t len)
{
	size_t off = (size_t)(start - lx->file->text);
	if (lx->col_off < lx->line_start || off < lx->col_off) {
		lx->col_off = lx->line_start;
		lx->col = 1;
	}
	/* continue from the last known column */
	uint32_t col = diag_columns(lx->file->text + lx->col_off, lx->file->text + off, lx->col - 1);
	lx->col_off = off;
	lx->col = col + 1;
	struct loc l = {
		.file = lx->file,
		.line = lx->line,
		.col = col + 1,
		.off = (uint32_t)off,
		.len = (uint32_t)len,
	};
	return l;
}

/* A string byte that is its own value: not an escape, not a control. */
static bool lex_plain_strch(unsigned char c)
{
	return c >= 0x20 && c != '\\' && c != 0x7f;
}

/* The same for all 8 bytes at p: none below 0x20, none a backslash or
 * DEL (a byte equal to k leaves a zero byte in w ^ k*ones). */
static bool lex_plain_strch8(const char *p)
{
	uint64_t w;
	memcpy(&w, p, sizeof w);
	const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
	uint64_t bs = w ^ (ones * '\\'), del = w ^ (ones * 0x7f);
	uint64_t hit = ((w - ones * 0x20) & ~w) | ((bs - ones) & ~bs) | ((del - ones) & ~del);
	return (hit & highs) == 0;
}

/* Unescapes the string literal [s, e) (without its quotes). */
static void lex_string_value(struct lexer *lx, struct token *t, const char *s, const char *e)
{
	char *out = arena_alloc_raw(lx->arena, (size_t)(e - s) + 1);
	size_t n = 0;
	for (const char *p = s; p < e; p++) {
		/* the run of bytes that stand for themselves, copied at once */
		const char *q = p;
		while (e - q >= 8 && lex_plain_strch8(q))
			q += 8;
		while (q < e && lex_plain_strch((unsigned char)*q))
			q++;
		memcpy(out + n, p, (size_t)(q - p));
		n += (size_t)(q - p);
		if ((p = q) == e)
			break;
		unsigned char c = (unsigned char)*p;
		if (c == '\\' && p + 1 < e) {
			p++;
			switch (*p) {
			case '"': out[n++] = '"'; break;
			case '\\': out[n++] = '\\'; break;
			case 'n': out[n++] = '\n'; break;
			case 't': out[n++] = '\t'; break;
			default: {
				struct loc l = lex_loc(lx, p - 1, 2);
				diag_add(lx->diags, DIAG_ERROR, l, "syntax",
					 "unknown escape sequence '\\%c' (use \\\\ for a backslash)",
					 *p >= 0x20 && *p < 0x7f ? *p : '?');
				t->kind = LEX_ERROR;
				out[n++] = *p;
			}
			}
		} else if (c < 0x20 || c == 0x7f) {
			struct loc l = lex_loc(lx, p, 1);
			diag_add(lx->diags, DIAG_ERROR, l, "syntax",
				 "control character 0x%02x in string", c);
			t->kind = LEX_ERROR;
		} else {
			out[n++] = (char)c;
		}
	}
	out[n] = '\0';
	t->value = out;
	t->value_len = n;
}

/*!re2c
	re2c:api:style = free-form;
	re2c:define:YYCTYPE = "unsigned char";
	re2c:define:YYCURSOR = "cur";
	re2c:define:YYMARKER = "lx->marker";
	re2c:yyfill:enable = 0;
	re2c:flags:utf-8 = 0;

	ident = [a-zA-Z_][a-zA-Z0-9_-]*;
	int = [0-9]+;
	strch = [^"\\\n\x00] | "\\" [^\n\x00];
*/

void lex_next(struct lexer *lx, struct token *t)
{
	const unsigned char *cur;
	const unsigned char *start;
again:
	cur = (const unsigned char *)lx->cur;
	start = cur;
	memset(t, 0, sizeof(*t));
	/*!re2c
	"\x00" {
		if ((const char *)cur - 1 >= lx->lim) {
			lx->cur = lx->lim;
			t->kind = LEX_EOF;
			t->text = lx->lim;
			t->loc = lex_loc(lx, lx->lim, 0);
			return;
		}
		lx->cur = (const char *)cur;
		diag_add(lx->diags, DIAG_ERROR, lex_loc(lx, (const char *)start, 1),
			 "syntax", "NUL byte in policy text");
		t->kind = LEX_ERROR;
		return;
	}
	[ \t\r\f\v]+ { lx->cur = (const char *)cur; goto again; }
	"\n" {
		t->kind = TK_NL;
		t->text = (const char *)start;
		t->len = 1;
		t->loc = lex_loc(lx, (const char *)start, 1);
		lx->cur = (const char *)cur;
		lx->line++;
		lx->line_start = (size_t)(lx->cur - lx->file->text);
		return;
	}
	"#" {
		/* The rest of the line, up to a newline or a NUL (the end's
		 * sentinel or an error for the next token): what [^\n\x00]*
		 * would match, found by the C library rather than the DFA. */
		cur += strcspn((const char *)cur, "\n");
		lx->cur = (const char *)cur;
		if (!lx->keep_comments)
			goto again;
		t->kind = LEX_COMMENT;
		goto done;
	}
	"cage"          { t->kind = TK_CAGE; goto tok; }
	"import"        { t->kind = TK_IMPORT; goto tok; }
	"param"         { t->kind = TK_PARAM; goto tok; }
	"list"          { t->kind = TK_LIST; goto tok; }
	"profile"       { t->kind = TK_PROFILE; goto tok; }
	"extends"       { t->kind = TK_EXTENDS; goto tok; }
	"allow"         { t->kind = TK_ALLOW; goto tok; }
	"deny"          { t->kind = TK_DENY; goto tok; }
	"protect"       { t->kind = TK_PROTECT; goto tok; }
	"except"        { t->kind = TK_EXCEPT; goto tok; }
	"mode"          { t->kind = TK_MODE; goto tok; }
	"env"           { t->kind = TK_ENV; goto tok; }
	"keep"          { t->kind = TK_KEEP; goto tok; }
	"set"           { t->kind = TK_SET; goto tok; }
	"unset"         { t->kind = TK_UNSET; goto tok; }
	"private"       { t->kind = TK_PRIVATE; goto tok; }
	"limit"         { t->kind = TK_LIMIT; goto tok; }
	"read"          { t->kind = TK_READ; goto tok; }
	"read-metadata" { t->kind = TK_READ_METADATA; goto tok; }
	"write"         { t->kind = TK_WRITE; goto tok; }
	"create"        { t->kind = TK_CREATE; goto tok; }
	"delete"        { t->kind = TK_DELETE; goto tok; }
	"exec"          { t->kind = TK_EXEC; goto tok; }
	"connect"       { t->kind = TK_CONNECT; goto tok; }
	"unix"          { t->kind = TK_UNIX; goto tok; }
	"mach"          { t->kind = TK_MACH; goto tok; }
	ident           { t->kind = TK_IDENT; goto tok; }
	int             { t->kind = TK_INT; goto tok; }
	","             { t->kind = TK_COMMA; goto tok; }
	":"             { t->kind = TK_COLON; goto tok; }
	"="             { t->kind = TK_EQ; goto tok; }
	"{"             { t->kind = TK_LBRACE; goto tok; }
	"}"             { t->kind = TK_RBRACE; goto tok; }
	["] strch* ["] {
		t->kind = TK_STRING;
		lx->cur = (const char *)cur;
		t->text = (const char *)start;
		t->len = (size_t)(cur - start);
		t->loc = lex_loc(lx, t->text, t->len);
		lex_string_value(lx, t, t->text + 1, (const char *)cur - 1);
		if (t->kind == LEX_ERROR)
			t->kind = TK_STRING; /* reported; keep parsing with the value */
		return;
	}
	["] strch* {
		/* Unterminated: report it and carry on as if the line closed it. */
		t->kind = TK_STRING;
		lx->cur = (const char *)cur;
		t->text = (const char *)start;
		t->len = (size_t)(cur - start);
		t->loc = lex_loc(lx, t->text, t->len);
		diag_add(lx->diags, DIAG_ERROR, t->loc, "syntax", "unterminated string");
		lex_string_value(lx, t, t->text + 1, (const char *)cur);
		return;
	}
	[\x80-\xff]+ {
		lx->cur = (const char *)cur;
		diag_add(lx->diags, DIAG_ERROR, lex_loc(lx, (const char *)start, (size_t)(cur - start)),
			 "syntax", "unexpected non-ASCII text outside a string");
		t->kind = LEX_ERROR;
		goto done;
	}
	* {
		lx->cur = (const char *)cur;
		unsigned char c = *start;
		if (c >= 0x20 && c < 0x7f)
			diag_add(lx->diags, DIAG_ERROR, lex_loc(lx, (const char *)start, 1),
				 "syntax", "unexpected character '%c'", c);
		else
			diag_add(lx->diags, DIAG_ERROR, lex_loc(lx, (const char *)start, 1),
				 "syntax", "unexpected byte 0x%02x", c);
		t->kind = LEX_ERROR;
		goto done;
	}
	*/
tok:
	lx->cur = (const char *)cur;
done:
	t->text = (const char *)start;
	t->len = (size_t)((const unsigned char *)lx->cur - start);
	t->loc = lex_loc(lx, t->text, t->len);
}

const char *lex_token_name(int kind)
{
	switch (kind) {
	case LEX_EOF: return "end of file";
	case TK_NL: return "end of line";
	case TK_IDENT: return "name";
	case TK_INT: return "number";
	case TK_STRING: return "string";
	case TK_COMMA: return "','";
	case TK_COLON: return "':'";
	case TK_EQ: return "'='";
	case TK_LBRACE: return "'{'";
	case TK_RBRACE: return "'}'";
	case TK_CAGE: return "'cage'";
	case TK_IMPORT: return "'import'";
	case TK_PARAM: return "'param'";
	case TK_LIST: return "'list'";
	case TK_PROFILE: return "'profile'";
	case TK_EXTENDS: return "'extends'";
	case TK_ALLOW: return "'allow'";
	case TK_DENY: return "'deny'";
	case TK_PROTECT: return "'protect'";
	case TK_EXCEPT: return "'except'";
	case TK_MODE: return "'mode'";
	case TK_ENV: return "'env'";
	case TK_KEEP: return "'keep'";
	case TK_SET: return "'set'";
	case TK_UNSET: return "'unset'";
	case TK_PRIVATE: return "'private'";
	case TK_LIMIT: return "'limit'";
	case TK_READ: return "'read'";
	case TK_READ_METADATA: return "'read-metadata'";
	case TK_WRITE: return "'write'";
	case TK_CREATE: return "'create'";
	case TK_DELETE: return "'delete'";
	case TK_EXEC: return "'exec'";
	case TK_CONNECT: return "'connect'";
	case TK_UNIX: return "'unix'";
	case TK_MACH: return "'mach'";
	default: return "token";
	}
}
