/*
 * test_fmt.c - the formatter: each construct's canonical form, comments and
 * blank lines kept, syntax errors refused, idempotence, and that formatting
 * never changes meaning (the IR of every profile is the same before and
 * after, locations aside) - over every .cage file in the repository and
 * over a generated set of policies written in deliberately messy layouts.
 */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cage.h"
#include "fmt.h"
#include "lint.h"
#include "lex.h"
#include "parse_ctx.h"

/* ---- helpers ---- */

/* Formats `text`; returns the malloc'd result or NULL (then *ndiag, when
 * given, holds the number of errors reported). */
static char *fmt_text(const char *name, const char *text, size_t len, size_t *nerr)
{
	struct arena a;
	arena_init(&a);
	struct diag_list d;
	diag_list_init(&d, &a);
	struct src_file f = { .name = name, .len = len };
	f.text = arena_strndup(&a, text, len);
	char *out = NULL;
	size_t outlen = 0;
	bool ok = fmt_source(&f, &a, &d, &out, &outlen);
	if (nerr)
		*nerr = d.errors;
	/* The self-check failing is a formatter bug, whatever the input. */
	for (size_t i = 0; i < d.n; i++)
		cr_expect_str_neq(d.items[i]->id, "fmt", "self-check failed on:\n%.*s", (int)len, text);
	if (ok)
		cr_assert_eq(strlen(out), outlen, "output has a NUL byte");
	diag_list_free(&d);
	arena_free(&a);
	return ok ? out : NULL;
}

static char *fmt_str(const char *text)
{
	return fmt_text("t.cage", text, strlen(text), NULL);
}

static void expect(const char *in, const char *want)
{
	char *got = fmt_str(in);
	cr_assert_not_null(got, "formatting failed for:\n%s", in);
	cr_expect_str_eq(got, want, "input:\n%s\n-- got:\n%s\n-- want:\n%s", in, got, want);
	char *again = fmt_str(got);
	cr_assert_not_null(again);
	cr_expect_str_eq(again, got, "not idempotent:\n%s\n-- second pass:\n%s", got, again);
	free(again);
	free(got);
}

/* ---- each construct ---- */

Test(fmt, version_import_param_list)
{
	expect("cage   1\n", "cage 1\n");
	expect("import   \"std/base\"\n", "import \"std/base\"\n");
	expect("param workspace:path\n", "param workspace : path\n");
	expect("param  s :path=\"/tmp/s\"\n", "param s : path = \"/tmp/s\"\n");
	expect("param p:port=8080\n", "param p : port = 8080\n");
	expect("list hosts=\"a.com\",\"b.com\" ,  \"c.com\"\n",
	       "list hosts = \"a.com\", \"b.com\", \"c.com\"\n");
}

Test(fmt, rules_and_items)
{
	expect("protect   \"~/.ssh/**\"\n", "protect \"~/.ssh/**\"\n");
	expect("allow\tread   write ws,scratch\n", "allow read write ws, scratch\n");
	expect("deny write \"{ws}/.git/hooks/**\"\n", "deny write \"{ws}/.git/hooks/**\"\n");
	expect("allow connect hosts,\"x.org:8000-8100\",\"[::1]:8080\"\n",
	       "allow connect hosts, \"x.org:8000-8100\", \"[::1]:8080\"\n");
	expect("allow read-metadata create delete exec unix mach \"/x\"\n",
	       "allow read-metadata create delete exec unix mach \"/x\"\n");
	expect("profile p {\nmode    enforce-fs\n}\n", "profile p {\n    mode enforce-fs\n}\n");
	expect("profile p {\n  env keep PATH   LANG TERM\n}\n",
	       "profile p {\n    env keep PATH LANG TERM\n}\n");
	expect("profile p {\n env set GIT_TERMINAL_PROMPT=\"0\"\n}\n",
	       "profile p {\n    env set GIT_TERMINAL_PROMPT = \"0\"\n}\n");
	expect("profile p {\n\t\tenv unset A B\n}\n", "profile p {\n    env unset A B\n}\n");
	expect("profile p {\n  private tmp  home\n}\n", "profile p {\n    private tmp home\n}\n");
}

Test(fmt, profiles)
{
	/* One-line profiles are expanded; '{' stays on the header line. */
	expect("profile task   extends  project { allow read \"~/d/**\" }\n",
	       "profile task extends project {\n    allow read \"~/d/**\"\n}\n");
	expect("profile e {}\n", "profile e {\n}\n");
	expect("profile f { allow read \"x\"\n  allow write \"y\" }\n",
	       "profile f {\n    allow read \"x\"\n    allow write \"y\"\n}\n");
	expect("profile g {\n        allow read \"x\"\n        }\n",
	       "profile g {\n    allow read \"x\"\n}\n");
}

Test(fmt, strings_reescaped)
{
	/* Every spelling of a value prints one way: the four escapes, else raw. */
	expect("profile p {\n env set X = \"a\\\"b\\\\c\\td\\ne\"\n}\n",
	       "profile p {\n    env set X = \"a\\\"b\\\\c\\td\\ne\"\n}\n");
	expect("allow read \"/caf\xc3\xa9\"\n", "allow read \"/caf\xc3\xa9\"\n");
}

Test(fmt, blank_lines)
{
	expect("\n\n\ncage 1\n\n\n\nimport \"a\"\nimport \"b\"\n\n\n", "cage 1\n\nimport \"a\"\nimport \"b\"\n");
	/* None at the top or bottom of a body; runs inside it collapse. */
	expect("profile p {\n\n\n  allow read \"a\"\n\n\n\n  allow read \"b\"\n\n}\n",
	       "profile p {\n    allow read \"a\"\n\n    allow read \"b\"\n}\n");
	/* Between blocks only where there was one. */
	expect("profile a {\n}\nprofile b {\n}\n\n\nprofile c {\n}\n",
	       "profile a {\n}\nprofile b {\n}\n\nprofile c {\n}\n");
	/* Inside a wrapped statement they go. */
	expect("list l = \"a\",\n\n\n  \"b\"\n", "list l = \"a\", \"b\"\n");
}

Test(fmt, comments_kept)
{
	expect("# top   \ncage 1   # version  \n", "# top\ncage 1 # version\n");
	expect("profile p {   # why\n# inner\n   allow read \"a\"\t# a\n   # before close\n}  # end\n",
	       "profile p { # why\n    # inner\n    allow read \"a\" # a\n    # before close\n} # end\n");
	expect("profile t { allow read \"x\" } # one-liner\n",
	       "profile t {\n    allow read \"x\" # one-liner\n}\n");
	expect("profile t { allow read \"x\" # on x\n}\n",
	       "profile t {\n    allow read \"x\" # on x\n}\n");
	/* In a list that continues: after a comma, or on a line of its own. */
	expect("list l = \"a\",   # about a\n     # about b\n  \"b\",\n\"c\", \"d\"\n",
	       "list l = \"a\", # about a\n    # about b\n    \"b\",\n    \"c\", \"d\"\n");
	expect("profile p {\nallow read \"a\", # x\n\"b\"\n}\n",
	       "profile p {\n    allow read \"a\", # x\n        \"b\"\n}\n");
	/* Text inside a comment is never touched, only trailing blanks. */
	expect("#no-space  \"quoted, {braces}\"   \n", "#no-space  \"quoted, {braces}\"\n");
	expect("# cage: allow unsafe-order \xe2\x80\x94 reason\n",
	       "# cage: allow unsafe-order \xe2\x80\x94 reason\n");
	expect("# only a comment", "# only a comment\n");
	expect("cage 1\n# last, no newline", "cage 1\n# last, no newline\n");
}

Test(fmt, line_endings_and_whitespace)
{
	expect("cage 1\r\n# c \r\nprofile x {\r\n\tallow read \"a\"\r\n}", 
	       "cage 1\n# c\nprofile x {\n    allow read \"a\"\n}\n");
	expect("cage\f1\v\n", "cage 1\n");
	expect("", "");
	expect("\n\n  \n", "");
}

static void check_widths(const char *text, size_t limit)
{
	const char *line = text;
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line), cols = 0;
		for (size_t i = 0; i < n; i++)
			cols += ((unsigned char)line[i] & 0xc0) != 0x80; /* UTF-8: one per character */
		cr_expect_leq(cols, limit, "line over %zu columns: %.*s", limit, (int)n, line);
		line += n + (nl ? 1 : 0);
	}
}

Test(fmt, long_lists_wrap)
{
	char in[4096] = "profile p {\n allow connect ";
	for (int i = 0; i < 30; i++)
		snprintf(in + strlen(in), sizeof(in) - strlen(in), "%s\"host%02d.example.com:443\"",
			 i ? "," : "", i);
	strcat(in, "\n}\n");
	char *got = fmt_str(in);
	cr_assert_not_null(got);
	check_widths(got, FMT_WIDTH);
	/* Filled greedily, continuation lines one level deeper than the rule. */
	const char *want_start = "profile p {\n    allow connect \"host00.example.com:443\", "
				 "\"host01.example.com:443\", \"host02.example.com:443\",\n"
				 "        \"host03.example.com:443\", ";
	cr_expect(strncmp(got, want_start, strlen(want_start)) == 0, "got:\n%s", got);
	cr_expect(strstr(got, "\"host29.example.com:443\"\n}\n") != NULL, "got:\n%s", got);
	char *again = fmt_str(got);
	cr_expect_str_eq(again, got);
	free(again);
	free(got);

	/* Exactly 100 columns stays on one line; 101 wraps. The frame
	 * `list l = "` + `", "x"` is 16 columns. */
	char w100[256], w101[256], want101[256];
	snprintf(w100, sizeof(w100), "list l = \"%084d\", \"x\"\n", 0);
	cr_assert_eq(strlen(w100) - 1, 100);
	expect(w100, w100);
	snprintf(w101, sizeof(w101), "list l = \"%085d\", \"x\"\n", 0);
	snprintf(want101, sizeof(want101), "list l = \"%085d\",\n    \"x\"\n", 0);
	expect(w101, want101);

	/* A word that cannot fit is left whole on its own line. */
	char big[512];
	snprintf(big, sizeof(big), "list l = \"a\", \"%0150d\", \"b\"\n", 0);
	char wantbig[512];
	snprintf(wantbig, sizeof(wantbig), "list l = \"a\",\n    \"%0150d\",\n    \"b\"\n", 0);
	expect(big, wantbig);
}

/* `except` breaks a statement as a comma does, and stays at the end of
 * its line; a newline after it continues the statement. */
Test(fmt, protect_except)
{
	expect("protect write  \"/w/.git/**\"   except \"/w/.git/index\" ,\"/w/.git/HEAD\"\n",
	       "protect write \"/w/.git/**\" except \"/w/.git/index\", \"/w/.git/HEAD\"\n");
	expect("protect write \"/w/.git/**\" except\n\t\"/w/.git/index\"\n",
	       "protect write \"/w/.git/**\" except \"/w/.git/index\"\n");
	char in[4096] = "protect write \"{ws}/.git/**\" except ";
	for (int i = 0; i < 12; i++)
		snprintf(in + strlen(in), sizeof(in) - strlen(in), "%s\"{ws}/.git/file%02d\"",
			 i ? ", " : "", i);
	strcat(in, "\n");
	char *got = fmt_str(in);
	cr_assert_not_null(got);
	check_widths(got, FMT_WIDTH);
	char *again = fmt_str(got);
	cr_expect_str_eq(again, got);
	free(again);
	free(got);
	/* so long a first target that the break comes right after `except` */
	char big[512], want[512];
	snprintf(big, sizeof(big), "protect write \"/%090d\" except \"/%090d/x\"\n", 0, 0);
	snprintf(want, sizeof(want), "protect write \"/%090d\" except\n    \"/%090d/x\"\n", 0, 0);
	expect(big, want);
}

Test(fmt, syntax_errors_refused)
{
	static const char *bad[] = {
		"cage 1\nprofile x {\n  allow rread \"a\"\n}\n",
		"allow read \"b\\q\"\n",
		"allow read \"unterminated\n",
		"profile x {\n",
		"profile x\n{\n}\n",
		"allow read \"a\",\n",
		"cage 1 @\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t nerr = 0;
		char *got = fmt_text("t.cage", bad[i], strlen(bad[i]), &nerr);
		cr_expect_null(got, "formatted a file with a syntax error:\n%s", bad[i]);
		cr_expect_gt(nerr, 0, "no diagnostic for:\n%s", bad[i]);
		free(got);
	}
	/* A NUL byte in the middle is an error, not an end of file. */
	size_t nerr = 0;
	char *got = fmt_text("t.cage", "cage 1\n\0allow read \"/\"\n", 24, &nerr);
	cr_expect_null(got);
	cr_expect_gt(nerr, 0);
}

Test(fmt, comments_stay_beside_their_code)
{
	/* cagec lint reads "# cage: allow ID - reason" as applying to the code
	 * on its line or on the next line of code; the words on a comment's
	 * line must not change, or a finding could be silenced or revived. */

	/* A statement holding a comment keeps its line breaks, not re-wrapped
	 * even when long... */
	char in[1024], want[1024];
	snprintf(in, sizeof(in), "allow read \"/a\",\n  \"/b\", \"/**\"  # cage: allow broad-grant - r\n");
	expect(in, "allow read \"/a\",\n    \"/b\", \"/**\" # cage: allow broad-grant - r\n");
	snprintf(in, sizeof(in), "allow read \"/%090d\", \"/**\" # c\n", 0);
	expect(in, in);
	/* ... while the same statement without the comment is. */
	snprintf(in, sizeof(in), "allow read \"/a\",\n  \"/b\", \"/**\"\n");
	expect(in, "allow read \"/a\", \"/b\", \"/**\"\n");
	snprintf(in, sizeof(in), "allow read \"/%090d\", \"/**\"\n", 0);
	snprintf(want, sizeof(want), "allow read \"/%090d\",\n    \"/**\"\n", 0);
	expect(in, want);

	/* One-line profiles: a comment after '}' stays with the statement it
	 * was beside, directives above the line go into the body with it. */
	expect("profile t { allow read \"/**\" } # cage: allow broad-grant - r\n",
	       "profile t {\n    allow read \"/**\" # cage: allow broad-grant - r\n}\n");
	expect("profile e {} # empty\n", "profile e { # empty\n}\n");
	expect("profile t {\n  allow read \"/a\"\n  allow read \"/**\" } # c\n",
	       "profile t {\n    allow read \"/a\"\n    allow read \"/**\" # c\n}\n");
	expect("# about t\n# cage: allow broad-grant - r\n#  cage: allow secret-exposed - r\n"
	       "profile t { allow read \"/**\" }\n",
	       "# about t\nprofile t {\n    # cage: allow broad-grant - r\n"
	       "    #  cage: allow secret-exposed - r\n    allow read \"/**\"\n}\n");
	/* From the first directive since the last code on, with the comments
	 * and blank lines after it (lint skips those to find its line). */
	expect("cage 1\n# about t\n\n# more\n# cage: allow broad-grant - r\n\n# and why\n"
	       "profile t { allow read \"/**\" }\n",
	       "cage 1\n# about t\n\n# more\nprofile t {\n    # cage: allow broad-grant - r\n\n"
	       "    # and why\n    allow read \"/**\"\n}\n");
	expect("# cage: allow broad-grant - r\n\nprofile t { allow read \"/**\" }\n",
	       "profile t {\n    # cage: allow broad-grant - r\n    allow read \"/**\"\n}\n");
	/* Not for a profile whose statements start on the next line. */
	expect("# cage: allow broad-grant - r\nprofile t {\n  allow read \"/**\"\n}\n",
	       "# cage: allow broad-grant - r\nprofile t {\n    allow read \"/**\"\n}\n");
	expect("# cage: allow broad-grant - r\nprofile t {}\n",
	       "# cage: allow broad-grant - r\nprofile t {\n}\n");
}

/* ---- meaning: the IR of every profile, without locations ---- */

/* Profile names of a text, in order. */
static size_t profile_names(const char *text, char names[][64], size_t max)
{
	struct arena a;
	arena_init(&a);
	struct diag_list d;
	diag_list_init(&d, &a);
	struct src_file f = { .name = "t.cage", .text = text, .len = strlen(text) };
	struct ast_file *af = parse_file(&f, &a, &d);
	size_t n = 0;
	for (struct ast_node *it = af->items; it && n < max; it = it->next)
		if (it->kind == AST_PROFILE)
			snprintf(names[n++], 64, "%s", it->u.profile.name->text);
	diag_list_free(&d);
	arena_free(&a);
	return n;
}

/* Required params get a value of their type so the policy resolves. */
static void define_required(const char *text, cage_options *o)
{
	struct arena a;
	arena_init(&a);
	struct diag_list d;
	diag_list_init(&d, &a);
	struct src_file f = { .name = "t.cage", .text = text, .len = strlen(text) };
	struct ast_file *af = parse_file(&f, &a, &d);
	for (struct ast_node *it = af->items; it; it = it->next) {
		if (it->kind != AST_PARAM || it->u.param.deflt)
			continue;
		const char *type = it->u.param.type->text;
		const char *v = strcmp(type, "host") == 0     ? "example.com"
				: strcmp(type, "port") == 0   ? "8080"
				: strcmp(type, "string") == 0 ? "s"
							      : "/tmp/fmt-param";
		char def[256];
		snprintf(def, sizeof(def), "%s=%s", it->u.param.name->text, v);
		cage_options_define(o, def);
	}
	diag_list_free(&d);
	arena_free(&a);
}

struct membuf {
	char *p;
	size_t n;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What cagec lint says about the policy, line numbers aside ("(line 4)",
 * "line 4 denies"), sorted: the findings must survive formatting, and
 * in particular no suppression comment may start or stop applying. */
static void lint_findings(cage_policy *p, FILE *m)
{
	size_t before = p->diags.n;
	struct lint_opts lo = { 0 };
	lint_policy(p, &lo);
	size_t n = p->diags.n - before;
	char **v = calloc(n + 1, sizeof(*v));
	cr_assert_not_null(v);
	for (size_t i = 0; i < n; i++) {
		const struct diag *d = p->diags.items[before + i];
		size_t len = strlen(d->msg);
		char *t = malloc(len + 64);
		cr_assert_not_null(t);
		size_t k = (size_t)snprintf(t, 64, "lint %d %s ", (int)d->sev, d->id);
		for (size_t j = 0; j < len;) {
			if (strncmp(d->msg + j, "line ", 5) == 0) {
				memcpy(t + k, "line ", 5);
				k += 5;
				j += 5;
				if (d->msg[j] >= '0' && d->msg[j] <= '9')
					t[k++] = 'N';
				while (d->msg[j] >= '0' && d->msg[j] <= '9')
					j++;
				continue;
			}
			t[k++] = d->msg[j++];
		}
		t[k] = '\0';
		v[i] = t;
	}
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++) {
		fprintf(m, "%s\n", v[i]);
		free(v[i]);
	}
	free(v);
}

/* Appends one profile's IR (or the diagnostics, when it has errors) to m,
 * dropping what depends on where things are written: "# file:line:col"
 * tails, the sources hash, and diagnostic positions. */
static void meaning_one(const char *name, const char *text, const char *profile, FILE *m)
{
	cage_options *o = cage_options_new();
	cage_options_home(o, "/home/u");
	if (profile)
		cage_options_profile(o, profile);
	define_required(text, o);
	cage_policy *p = cage_load_string(name, text, strlen(text), o);
	cr_assert_not_null(p);
	fprintf(m, "== profile %s\n", profile ? profile : "(default)");
	if (cage_error_count(p) > 0) {
		struct cage_diagnostic dg;
		for (size_t i = 0; cage_diagnostic_get(p, i, &dg); i++)
			fprintf(m, "diag %d %s %s\n", (int)dg.severity, dg.id ? dg.id : "", dg.message);
	} else {
		char *ir = NULL;
		size_t irlen = 0;
		FILE *mf = open_memstream(&ir, &irlen);
		cr_assert_not_null(mf);
		const char *err = NULL;
		cr_assert(cage_emit(p, "ir", mf, &err), "emit: %s", err ? err : "?");
		fclose(mf);
		for (char *line = strtok(ir, "\n"); line; line = strtok(NULL, "\n")) {
			if (strncmp(line, "# cage ir", 9) == 0)
				continue;
			char *loc = strstr(line, "  # ");
			if (loc)
				*loc = '\0';
			fprintf(m, "%s\n", line);
		}
		free(ir);
		lint_findings(p, m); /* after the IR: lint's errors count as errors */
	}
	cage_policy_free(p);
	cage_options_free(o);
}

/* The meaning of a whole text: the IR of every profile it defines. */
static char *meaning(const char *name, const char *text)
{
	struct membuf mb = { 0 };
	FILE *m = open_memstream(&mb.p, &mb.n);
	cr_assert_not_null(m);
	char names[256][64];
	size_t n = profile_names(text, names, 256);
	meaning_one(name, text, NULL, m);
	for (size_t i = 0; i < n; i++)
		meaning_one(name, text, names[i], m);
	fclose(m);
	return mb.p;
}

/* Comments as the lexer sees them, trailing blanks aside. */
static char *comments_of(const char *text)
{
	struct arena a;
	arena_init(&a);
	struct diag_list d;
	diag_list_init(&d, &a);
	struct src_file f = { .name = "t.cage", .text = text, .len = strlen(text) };
	struct lexer lx;
	lex_init(&lx, &f, &a, &d);
	lx.keep_comments = true;
	struct membuf mb = { 0 };
	FILE *m = open_memstream(&mb.p, &mb.n);
	for (;;) {
		struct token t;
		lex_next(&lx, &t);
		if (t.kind == LEX_EOF)
			break;
		if (t.kind != LEX_COMMENT)
			continue;
		size_t n = t.len;
		while (n > 1 && strchr(" \t\r\f\v", t.text[n - 1]))
			n--;
		fprintf(m, "%.*s\n", (int)n, t.text);
	}
	fclose(m);
	diag_list_free(&d);
	arena_free(&a);
	return mb.p;
}

/* Formats `text` and checks everything the formatter promises. Returns
 * false (without failing) when the text has syntax errors. */
static bool check_promises(const char *name, const char *text)
{
	size_t nerr = 0;
	char *once = fmt_text(name, text, strlen(text), &nerr);
	if (!once) {
		cr_expect_gt(nerr, 0, "%s: refused without a diagnostic", name);
		return false;
	}
	char *twice = fmt_text(name, once, strlen(once), NULL);
	cr_assert_not_null(twice, "%s: the formatted text does not format", name);
	cr_expect_str_eq(twice, once, "%s: not idempotent", name);

	char *m0 = meaning(name, text), *m1 = meaning(name, once);
	cr_expect_str_eq(m1, m0, "%s: formatting changed the meaning\n-- formatted:\n%s", name, once);
	char *c0 = comments_of(text), *c1 = comments_of(once);
	cr_expect_str_eq(c1, c0, "%s: comments changed", name);
	free(m0);
	free(m1);
	free(c0);
	free(c1);
	free(twice);
	free(once);
	return true;
}

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

Test(fmt, lint_suppressions_survive)
{
	/* Each policy has a suppression that silences broad-grant on some words
	 * and not on others (a grant of ~ or / is one); check_promises compares
	 * cagec lint's findings before and after formatting. */
	static const struct {
		const char *text;
		size_t broad; /* broad-grant findings left in force */
	} cases[] = {
		/* a directive at the end of a continuation line covers that line
		 * only; re-wrapping would pull the grant of ~ onto it */
		{ "cage 1\nprofile p {\n    allow read \"~/**\",\n"
		  "        \"/**\" # cage: allow broad-grant - test\n}\n", 1 },
		/* a long line with a directive at its end: wrapping would move a
		 * grant off the directive's line */
		{ "cage 1\nprofile p {\n    allow read \"~/**\", \"/opt/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/**\", "
		  "\"/opt/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/**\", \"/**\" # cage: allow broad-grant - test\n}\n", 0 },
		/* a directive above a one-line profile */
		{ "cage 1\n# cage: allow broad-grant - test\nprofile p { allow read \"/**\" }\n", 0 },
		/* ... with comments and a blank line between */
		{ "cage 1\n# cage: allow broad-grant - test\n\n# the profile\n"
		  "profile p { allow read \"/**\" }\n", 0 },
		/* a directive after a one-line profile */
		{ "cage 1\nprofile p { allow read \"/**\" } # cage: allow broad-grant - test\n", 0 },
		/* a directive after a comma, on a continuation line */
		{ "cage 1\nprofile p {\n    allow read \"~/**\",\n"
		  "        \"/**\", # cage: allow broad-grant - test\n        \"/opt/b/**\"\n}\n", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *m = meaning("t.cage", cases[i].text);
		/* once for the implicit selection, once for the profile by name */
		cr_expect_eq(count_str(m, "broad-grant"), 2 * cases[i].broad, "case %zu:\n%s", i, m);
		cr_expect(strstr(m, "unused-suppression") == NULL, "case %zu:\n%s", i, m);
		cr_expect(strstr(m, "secret-exposed") != NULL, "case %zu: lint did not run:\n%s", i, m);
		free(m);
		cr_expect(check_promises("t.cage", cases[i].text), "case %zu", i);
	}
}

/* ---- every .cage file in the repository ---- */

static size_t repo_files, repo_formatted;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	size_t n = strlen(path);
	if (type != FTW_F || n < 5 || strcmp(path + n - 5, ".cage") != 0)
		return 0;
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	static char buf[1 << 20];
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	if (strlen(buf) != len)
		return 0; /* a corpus file with a NUL byte: refused by design */
	repo_files++;
	/* Imports are resolved from the file's own directory. */
	char dir[4096];
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') - path), path);
	char cwd[4096];
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(dir), 0, "%s", dir);
	if (check_promises(strrchr(path, '/') + 1, buf))
		repo_formatted++;
	cr_assert_eq(chdir(cwd), 0);
	return 0;
}

Test(fmt, every_repository_file)
{
	static const char *dirs[] = { "examples", "stdlib", "testsuite" };
	for (size_t i = 0; i < 3; i++) {
		char root[4096];
		snprintf(root, sizeof(root), "%s/%s", CAGE_SOURCE_DIR, dirs[i]);
		if (access(root, F_OK) == 0)
			cr_assert_eq(nftw(root, visit, 16, FTW_PHYS), 0, "%s", root);
	}
	cr_log_info("%zu .cage files, %zu without syntax errors checked", repo_files, repo_formatted);
}

/* ---- generated policies in messy layouts ---- */

struct rng {
	uint64_t s;
};

static uint32_t rnd(struct rng *r, uint32_t n)
{
	/* xorshift64*: deterministic across runs and machines. */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (uint32_t)((r->s * 2685821657736338717ULL) >> 33) % n;
}

struct gen {
	struct rng content, layout;
	bool comments; /* add comments and blank lines (else only spacing varies) */
	FILE *m;
	int profiles;
};

static void g_space(struct gen *g)
{
	static const char *sp[] = { " ", " ", "  ", "\t", " \t ", "   " };
	fputs(sp[rnd(&g->layout, 6)], g->m);
}

static void g_opt_space(struct gen *g)
{
	if (rnd(&g->layout, 2))
		g_space(g);
}

static void g_comment(struct gen *g)
{
	static const char *c[] = { "# why", "#tight", "# \"quoted\", {x} = y", "# caf\xc3\xa9",
				   "# cage: allow unsafe-order \xe2\x80\x94 reason" };
	fputs(c[rnd(&g->content, 5)], g->m);
	if (rnd(&g->layout, 3) == 0)
		fputs("   ", g->m); /* trailing blanks */
}

/* End of a statement: maybe a trailing comment, a newline, maybe blanks. */
static void g_eol(struct gen *g)
{
	if (g->comments && rnd(&g->content, 4) == 0) {
		g_space(g);
		g_comment(g);
	}
	fputc('\n', g->m);
	if (g->comments) {
		uint32_t k = rnd(&g->content, 6);
		for (uint32_t i = 0; i < (k >= 3 ? k - 2 : 0); i++)
			fputs(rnd(&g->layout, 2) ? "\n" : "  \n", g->m);
		if (rnd(&g->content, 5) == 0) {
			g_comment(g);
			fputc('\n', g->m);
		}
	}
}

static void g_indent(struct gen *g)
{
	static const char *ind[] = { "", "  ", "    ", "\t", "        " };
	fputs(ind[rnd(&g->layout, 5)], g->m);
}

/* A comma-separated list of n words made by `word`, wrapped at random. */
static void g_list(struct gen *g, unsigned n, void (*word)(struct gen *, unsigned))
{
	for (unsigned i = 0; i < n; i++) {
		if (i) {
			g_opt_space(g);
			fputc(',', g->m);
			if (g->comments && rnd(&g->content, 8) == 0) {
				g_space(g);
				g_comment(g);
				fputc('\n', g->m);
				g_indent(g);
			} else if (rnd(&g->layout, 4) == 0) {
				fputc('\n', g->m);
				g_indent(g);
			} else {
				g_opt_space(g);
			}
		}
		word(g, i);
	}
}

static void w_path(struct gen *g, unsigned i)
{
	static const char *p[] = { "\"/opt/homebrew/**\"", "\"~/src/**\"", "\"{ws}/build\"",
				   "\"/usr/bin/git\"", "ws", "\"/tmp/a b/*.log\"", "\"~/.config/x?\"",
				   "\"/data/caf\xc3\xa9\"" };
	(void)i;
	fputs(p[rnd(&g->content, 8)], g->m);
}

static void w_host(struct gen *g, unsigned i)
{
	/* Index 0 names the list, so the list's own definition skips it. */
	static const char *h[] = { "hosts", "\"github.com\"", "\"*.example.org:443\"",
				   "\"x.org:8000-8100\"", "\"[::1]:8080\"", "\"127.0.0.1:5432\"",
				   "\"registry.npmjs.org:443\"", "\"example.com:80,443\"" };
	(void)i;
	fputs(h[rnd(&g->content, 8)], g->m);
}

static void w_host_literal(struct gen *g, unsigned i)
{
	(void)i;
	static const char *h[] = { "\"github.com\"", "\"*.example.org:443\"", "\"x.org:8000-8100\"",
				   "\"[::1]:8080\"", "\"127.0.0.1:5432\"", "\"example.com:80,443\"" };
	fputs(h[rnd(&g->content, 6)], g->m);
}

static void g_rule(struct gen *g)
{
	static const char *eff[] = { "allow", "deny", "protect" };
	static const char *acc[] = { "read", "write", "read-metadata", "create", "delete", "exec" };
	fputs(eff[rnd(&g->content, 3)], g->m);
	uint32_t kind = rnd(&g->content, 5);
	if (kind == 0) {
		g_space(g);
		fputs("connect", g->m);
		g_space(g);
		g_list(g, 1 + rnd(&g->content, 12), w_host);
	} else if (kind == 1) {
		g_space(g);
		fputs(rnd(&g->content, 2) ? "unix \"/var/run/docker.sock\"" : "mach \"com.apple.trustd.agent\"",
		      g->m);
	} else {
		unsigned na = 1 + rnd(&g->content, 3);
		unsigned used = 0;
		for (unsigned i = 0; i < na; i++) {
			unsigned k = rnd(&g->content, 6);
			if (used & (1u << k))
				continue;
			used |= 1u << k;
			g_space(g);
			fputs(acc[k], g->m);
		}
		g_space(g);
		g_list(g, 1 + rnd(&g->content, 6), w_path);
	}
}

static void g_item(struct gen *g)
{
	uint32_t k = rnd(&g->content, 10);
	switch (k) {
	case 0:
		fputs("mode", g->m);
		g_space(g);
		fputs((const char *[]){ "off", "monitor", "enforce-fs", "enforce" }[rnd(&g->content, 4)], g->m);
		break;
	case 1:
		fputs("env", g->m);
		g_space(g);
		fputs("keep", g->m);
		g_space(g);
		fputs("PATH", g->m);
		g_space(g);
		fputs("LANG", g->m);
		break;
	case 2:
		fputs("env", g->m);
		g_space(g);
		fputs("set", g->m);
		g_space(g);
		fputs("GIT_X", g->m);
		g_opt_space(g);
		fputc('=', g->m);
		g_opt_space(g);
		fputs((const char *[]){ "\"0\"", "\"a\\\"b\"", "\"back\\\\slash\"", "\"t\\tn\\n\"" }
			      [rnd(&g->content, 4)], g->m);
		break;
	case 3:
		fputs("env unset", g->m);
		g_space(g);
		fputs("AWS_SECRET", g->m);
		break;
	case 4:
		fputs("private", g->m);
		g_space(g);
		fputs(rnd(&g->content, 2) ? "tmp" : "tmp home", g->m);
		break;
	default:
		g_rule(g);
	}
}

static void g_profile(struct gen *g)
{
	fprintf(g->m, "profile");
	g_space(g);
	fprintf(g->m, "p%d", g->profiles);
	if (g->profiles > 0 && rnd(&g->content, 2)) {
		g_space(g);
		fputs("extends", g->m);
		g_space(g);
		fprintf(g->m, "p%u", rnd(&g->content, (uint32_t)g->profiles));
	}
	g->profiles++;
	g_opt_space(g);
	fputc('{', g->m);
	unsigned n = rnd(&g->content, 7);
	if (n <= 1 && rnd(&g->layout, 2)) {
		/* One line: `{ item }` or `{}`. */
		if (n) {
			g_opt_space(g);
			g_item(g);
		}
		g_opt_space(g);
		fputc('}', g->m);
		g_eol(g);
		return;
	}
	if (g->comments && rnd(&g->content, 3) == 0) {
		g_space(g);
		g_comment(g);
	}
	fputc('\n', g->m);
	for (unsigned i = 0; i < n; i++) {
		g_indent(g);
		g_item(g);
		g_eol(g);
	}
	g_indent(g);
	fputc('}', g->m);
	g_eol(g);
}

static char *generate(uint64_t content_seed, uint64_t layout_seed, bool comments)
{
	struct membuf mb = { 0 };
	struct gen g = { .content = { content_seed * 0x9e3779b97f4a7c15ULL + 1 },
			 .layout = { layout_seed * 0xbf58476d1ce4e5b9ULL + 7 },
			 .comments = comments };
	g.m = open_memstream(&mb.p, &mb.n);
	cr_assert_not_null(g.m);
	fputs("cage", g.m);
	g_space(&g);
	fputs("1", g.m);
	g_eol(&g);
	fputs("param", g.m);
	g_space(&g);
	fputs("ws", g.m);
	g_opt_space(&g);
	fputc(':', g.m);
	g_opt_space(&g);
	fputs("path", g.m);
	g_opt_space(&g);
	fputc('=', g.m);
	g_opt_space(&g);
	fputs("\"/work/ws\"", g.m);
	g_eol(&g);
	fputs("list", g.m);
	g_space(&g);
	fputs("hosts", g.m);
	g_opt_space(&g);
	fputc('=', g.m);
	g_opt_space(&g);
	g_list(&g, 1 + rnd(&g.content, 20), w_host_literal);
	g_eol(&g);
	unsigned top = rnd(&g.content, 4);
	for (unsigned i = 0; i < top; i++) {
		g_rule(&g);
		g_eol(&g);
	}
	unsigned np = 1 + rnd(&g.content, 5);
	for (unsigned i = 0; i < np; i++)
		g_profile(&g);
	fclose(g.m);
	return mb.p;
}

Test(fmt, generated_policies_keep_meaning)
{
	for (uint64_t seed = 1; seed <= 300; seed++) {
		char *text = generate(seed, seed, true);
		cr_assert(check_promises("gen.cage", text), "generated policy does not parse:\n%s", text);
		free(text);
	}
}

Test(fmt, layout_does_not_matter)
{
	/* The same policy written in different layouts formats identically:
	 * the output depends on the tokens only (comments and blank lines are
	 * left out here, since those are kept where they were written). */
	for (uint64_t seed = 1; seed <= 200; seed++) {
		char *a = generate(seed, seed, false), *b = generate(seed, seed + 1000, false);
		char *fa = fmt_str(a), *fb = fmt_str(b);
		cr_assert_not_null(fa, "%s", a);
		cr_assert_not_null(fb, "%s", b);
		cr_expect_str_eq(fa, fb, "layouts differ:\n%s\n-- and --\n%s", a, b);
		check_widths(fa, FMT_WIDTH);
		free(a);
		free(b);
		free(fa);
		free(fb);
	}
}

Test(fmt, meaning_check_can_fail)
{
	/* The comparison above is only worth something if it sees changes:
	 * a different target, order or profile must show. */
	const char *base = "cage 1\nprofile p {\n    allow read \"/a\"\n    deny read \"/a/b\"\n}\n";
	const char *other[] = {
		"cage 1\nprofile p {\n    allow read \"/a\"\n    deny read \"/a/c\"\n}\n",
		"cage 1\nprofile p {\n    deny read \"/a/b\"\n    allow read \"/a\"\n}\n",
		"cage 1\nprofile p {\n    allow read \"/a\"\n    deny write \"/a/b\"\n}\n",
		"cage 1\nprofile q {\n    allow read \"/a\"\n    deny read \"/a/b\"\n}\n",
	};
	char *m0 = meaning("t.cage", base);
	cr_assert(strstr(m0, "allow read \"/a\"") != NULL, "%s", m0);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		char *m1 = meaning("t.cage", other[i]);
		cr_expect_str_neq(m0, m1, "not told apart:\n%s", other[i]);
		free(m1);
	}
	free(m0);
	/* Locations alone do not count. */
	char *a = meaning("t.cage", base);
	char *b = meaning("t.cage", "\n\ncage 1\nprofile p { allow read \"/a\"\n  deny read \"/a/b\" }\n");
	cr_expect_str_eq(a, b);
	free(a);
	free(b);
}

Test(fmt, generated_policies_resolve)
{
	/* Most generated policies must resolve cleanly, or the meaning check
	 * would only be comparing error messages. */
	size_t clean = 0;
	for (uint64_t seed = 1; seed <= 300; seed++) {
		char *text = generate(seed, seed, true);
		char *m = meaning("gen.cage", text);
		if (!strstr(m, "\ndiag ") && strncmp(m, "== profile (default)\ndiag", 25) != 0)
			clean++;
		free(m);
		free(text);
	}
	cr_log_info("%zu of 300 generated policies resolve without errors", clean);
	cr_expect_geq(clean, 250, "only %zu of 300 generated policies resolve", clean);
}

Test(fmt, mutated_policies)
{
	/* Damaged input: either refused with a syntax diagnostic or formatted
	 * with every promise kept - never a self-check failure, never a crash. */
	static const char ins[] = ",{}\"#\n \\=:a1";
	size_t refused = 0, formatted = 0;
	for (uint64_t seed = 1; seed <= 400; seed++) {
		char *text = generate(seed, seed * 7, true);
		struct rng r = { seed * 0x2545f4914f6cdd1dULL + 3 };
		size_t n = strlen(text);
		for (int k = 0; k < 3 && n > 1; k++) {
			size_t at = rnd(&r, (uint32_t)n);
			if (rnd(&r, 2)) {
				memmove(text + at, text + at + 1, n - at); /* delete one byte */
				n--;
			} else {
				char *t2 = realloc(text, n + 2);
				cr_assert_not_null(t2);
				text = t2;
				memmove(text + at + 1, text + at, n - at + 1);
				text[at] = ins[rnd(&r, sizeof(ins) - 1)];
				n++;
			}
		}
		if (check_promises("mut.cage", text))
			formatted++;
		else
			refused++;
		free(text);
	}
	cr_log_info("mutated: %zu formatted, %zu refused", formatted, refused);
	cr_expect_gt(refused, 0);
	cr_expect_gt(formatted, 0);
}
