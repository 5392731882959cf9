/*
 * test_lex.c - the tokenizer: every token kind, exact positions (tabs and
 * UTF-8 counted as display columns), string escapes and lexical errors.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "grammar.h"
#include "lex.h"

struct fixture {
	struct arena a;
	struct diag_list d;
	struct src_file f;
	struct lexer lx;
};

static void setup_text(struct fixture *fx, const char *text, size_t len)
{
	arena_init(&fx->a);
	diag_list_init(&fx->d, &fx->a);
	memset(&fx->f, 0, sizeof(fx->f));
	fx->f.name = "t.cage";
	fx->f.text = arena_strndup(&fx->a, text, len);
	fx->f.len = len;
	lex_init(&fx->lx, &fx->f, &fx->a, &fx->d);
}

static void teardown_fx(struct fixture *fx)
{
	diag_list_free(&fx->d);
	arena_free(&fx->a);
}

static int next_kind(struct fixture *fx, struct token *t)
{
	lex_next(&fx->lx, t);
	return t->kind;
}

Test(lex, every_keyword_and_punctuation)
{
	static const struct { const char *text; int kind; } cases[] = {
		{ "cage", TK_CAGE }, { "import", TK_IMPORT }, { "param", TK_PARAM },
		{ "list", TK_LIST }, { "profile", TK_PROFILE }, { "extends", TK_EXTENDS },
		{ "allow", TK_ALLOW }, { "deny", TK_DENY }, { "protect", TK_PROTECT },
		{ "except", TK_EXCEPT }, { "mode", TK_MODE }, { "env", TK_ENV }, { "keep", TK_KEEP }, { "set", TK_SET },
		{ "unset", TK_UNSET }, { "private", TK_PRIVATE }, { "read", TK_READ },
		{ "read-metadata", TK_READ_METADATA }, { "write", TK_WRITE },
		{ "create", TK_CREATE }, { "delete", TK_DELETE }, { "exec", TK_EXEC },
		{ "connect", TK_CONNECT }, { "unix", TK_UNIX }, { "mach", TK_MACH },
		{ "workspace", TK_IDENT }, { "readme", TK_IDENT }, { "enforce-fs", TK_IDENT },
		{ "read_x", TK_IDENT }, { "42", TK_INT }, { ",", TK_COMMA }, { ":", TK_COLON },
		{ "=", TK_EQ }, { "{", TK_LBRACE }, { "}", TK_RBRACE }, { "\"s\"", TK_STRING },
		{ "\n", TK_NL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fixture fx;
		setup_text(&fx, cases[i].text, strlen(cases[i].text));
		struct token t;
		cr_expect_eq(next_kind(&fx, &t), cases[i].kind, "token %s", cases[i].text);
		cr_expect_eq(t.len, strlen(cases[i].text), "length of %s", cases[i].text);
		cr_expect_eq(next_kind(&fx, &t), LEX_EOF, "single token %s", cases[i].text);
		cr_expect_eq(fx.d.n, 0);
		teardown_fx(&fx);
	}
}

Test(lex, positions_count_tabs_and_utf8)
{
	/* line 2: a tab (to column 9), then a string holding "é" (2 bytes, one
	 * column), then an identifier right after it. */
	const char *src = "cage 1\n\tallow \"/é\" x\n";
	struct fixture fx;
	setup_text(&fx, src, strlen(src));
	struct token t;
	cr_assert_eq(next_kind(&fx, &t), TK_CAGE);
	cr_expect_eq(t.loc.line, 1);
	cr_expect_eq(t.loc.col, 1);
	cr_assert_eq(next_kind(&fx, &t), TK_INT);
	cr_expect_eq(t.loc.col, 6);
	cr_assert_eq(next_kind(&fx, &t), TK_NL);
	cr_assert_eq(next_kind(&fx, &t), TK_ALLOW);
	cr_expect_eq(t.loc.line, 2);
	cr_expect_eq(t.loc.col, 9);
	cr_assert_eq(next_kind(&fx, &t), TK_STRING);
	cr_expect_eq(t.loc.col, 15);
	cr_expect_eq(t.len, 5); /* two quotes, "/", and two bytes of UTF-8 */
	cr_expect_str_eq(t.value, "/é");
	cr_assert_eq(next_kind(&fx, &t), TK_IDENT);
	cr_expect_eq(t.loc.col, 20, "after a 2-byte character the column advances by one");
	cr_expect_eq(t.loc.off, 20);
	teardown_fx(&fx);
}

Test(lex, string_escapes)
{
	const char *src = "\"a\\\"b\\\\c\\n\\t\"";
	struct fixture fx;
	setup_text(&fx, src, strlen(src));
	struct token t;
	cr_assert_eq(next_kind(&fx, &t), TK_STRING);
	cr_expect_str_eq(t.value, "a\"b\\c\n\t");
	cr_expect_eq(fx.d.n, 0);
	teardown_fx(&fx);
}

Test(lex, bad_escape_and_unterminated_string_are_located)
{
	const char *src = "\"a\\qb\"\n\"open";
	struct fixture fx;
	setup_text(&fx, src, strlen(src));
	struct token t;
	cr_expect_eq(next_kind(&fx, &t), TK_STRING);
	cr_assert_eq(fx.d.n, 1);
	cr_expect_eq(fx.d.items[0]->loc.col, 3);
	cr_expect_eq(next_kind(&fx, &t), TK_NL);
	cr_expect_eq(next_kind(&fx, &t), TK_STRING);
	cr_assert_eq(fx.d.n, 2);
	cr_expect(strstr(fx.d.items[1]->msg, "unterminated") != NULL);
	cr_expect_eq(fx.d.items[1]->loc.line, 2);
	teardown_fx(&fx);
}

Test(lex, comments_skipped_or_kept)
{
	const char *src = "allow # trailing\n# full line\n";
	struct fixture fx;
	setup_text(&fx, src, strlen(src));
	struct token t;
	cr_expect_eq(next_kind(&fx, &t), TK_ALLOW);
	cr_expect_eq(next_kind(&fx, &t), TK_NL);
	cr_expect_eq(next_kind(&fx, &t), TK_NL);
	cr_expect_eq(next_kind(&fx, &t), LEX_EOF);
	teardown_fx(&fx);

	setup_text(&fx, src, strlen(src));
	fx.lx.keep_comments = true;
	cr_expect_eq(next_kind(&fx, &t), TK_ALLOW);
	cr_expect_eq(next_kind(&fx, &t), LEX_COMMENT);
	cr_expect_eq(t.len, strlen("# trailing"));
	cr_expect_eq(t.loc.col, 7);
	teardown_fx(&fx);
}

Test(lex, nul_byte_is_an_error_not_the_end)
{
	const char src[] = "allow\0deny";
	struct fixture fx;
	setup_text(&fx, src, sizeof(src) - 1);
	struct token t;
	cr_expect_eq(next_kind(&fx, &t), TK_ALLOW);
	cr_expect_eq(next_kind(&fx, &t), LEX_ERROR);
	cr_expect_eq(next_kind(&fx, &t), TK_DENY, "text after a NUL must still be read");
	cr_expect_eq(next_kind(&fx, &t), LEX_EOF);
	cr_expect_eq(fx.d.errors, 1);
	teardown_fx(&fx);
}

Test(lex, stray_characters_are_errors_with_location)
{
	const char *src = "allow @ \xc3\xa9";
	struct fixture fx;
	setup_text(&fx, src, strlen(src));
	struct token t;
	cr_expect_eq(next_kind(&fx, &t), TK_ALLOW);
	cr_expect_eq(next_kind(&fx, &t), LEX_ERROR);
	cr_expect_eq(next_kind(&fx, &t), LEX_ERROR);
	cr_expect_eq(next_kind(&fx, &t), LEX_EOF);
	cr_assert_eq(fx.d.n, 2);
	cr_expect_eq(fx.d.items[0]->loc.col, 7);
	cr_expect(strstr(fx.d.items[0]->msg, "'@'") != NULL);
	cr_expect_eq(fx.d.items[1]->loc.col, 9);
	teardown_fx(&fx);
}
