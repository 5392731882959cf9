/*
 * test_lex_columns.c - the lexer counts display columns on from the
 * previous token (so a policy on one long line lexes in linear time); the
 * result must be exactly what counting from the start of the line gives,
 * with tabs, multibyte characters and errors (which report positions inside
 * a token) mixed in, on the first line and after a newline.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "lex.h"

Test(lex_columns, same_as_counting_from_line_start)
{
	static const char *pieces[] = { "allow", "\t", " ", "\"caf\xc3\xa9\"", ",", "\"\\q\"",
					"\xc3\xa9", "#c\xc3\xa9", "\n", "read", "\"\t\"", "@", "  \t" };
	char text[8192];
	size_t n = 0;
	uint64_t s = 88172645463325252ULL;
	while (n < sizeof(text) - 64) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		const char *p = pieces[s % (sizeof(pieces) / sizeof(pieces[0]))];
		memcpy(text + n, p, strlen(p));
		n += strlen(p);
		if (s % 5 == 0)
			text[n++] = ' ';
	}
	text[n] = '\0';
	struct arena a;
	arena_init(&a);
	struct diag_list d;
	diag_list_init(&d, &a);
	struct src_file f = { .name = "t.cage", .text = text, .len = n };
	struct lexer lx;
	lex_init(&lx, &f, &a, &d);
	lx.keep_comments = true;
	size_t tokens = 0;
	for (;;) {
		struct token t;
		lex_next(&lx, &t);
		size_t ls = t.loc.off;
		while (ls > 0 && text[ls - 1] != '\n')
			ls--;
		cr_assert_eq(t.loc.col, diag_display_col(text, ls, t.loc.off),
			     "token %zu at byte %u", tokens, t.loc.off);
		tokens++;
		if (t.kind == LEX_EOF)
			break;
	}
	cr_expect_gt(tokens, 500);
	cr_expect_gt(d.n, 10, "the mix should include lexical errors");
	for (size_t i = 0; i < d.n; i++) {
		const struct loc *l = &d.items[i]->loc;
		size_t ls = l->off;
		while (ls > 0 && text[ls - 1] != '\n')
			ls--;
		cr_expect_eq(l->col, diag_display_col(text, ls, l->off), "diagnostic %zu", i);
	}
	diag_list_free(&d);
	arena_free(&a);
}
