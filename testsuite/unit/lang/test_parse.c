/*
 * test_parse.c - the grammar: every construct builds the right AST node,
 * and error recovery reports every syntax error of a file in one run.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ir.h"
#include "parse_ctx.h"

struct parsed {
	struct arena a;
	struct diag_list d;
	struct src_file f;
	struct ast_file *ast;
};

static void parse_text(struct parsed *p, const char *text)
{
	arena_init(&p->a);
	diag_list_init(&p->d, &p->a);
	memset(&p->f, 0, sizeof(p->f));
	p->f.name = "t.cage";
	p->f.len = strlen(text);
	p->f.text = arena_strndup(&p->a, text, p->f.len);
	p->ast = parse_file(&p->f, &p->a, &p->d);
}

static void done(struct parsed *p)
{
	diag_list_free(&p->d);
	arena_free(&p->a);
}

static size_t count(const struct ast_node *n)
{
	size_t k = 0;
	for (; n; n = n->next)
		k++;
	return k;
}

static size_t count_str(const struct ast_str *s)
{
	size_t k = 0;
	for (; s; s = s->next)
		k++;
	return k;
}

Test(parse, every_statement_kind)
{
	struct parsed p;
	parse_text(&p,
		   "cage 1\n"
		   "import \"std/base\"\n"
		   "param ws : path\n"
		   "param port : port = 8080\n"
		   "list hosts = \"a.com\", \"b.com\",\n"
		   "             other\n"
		   "protect \"~/.ssh/**\"\n"
		   "profile base {\n"
		   "    mode monitor\n"
		   "    allow read write ws\n"
		   "    allow connect hosts\n"
		   "    env keep PATH HOME\n"
		   "    env set A = \"b\"\n"
		   "    env unset X Y\n"
		   "    private tmp home\n"
		   "}\n"
		   "profile task extends base { deny exec \"/bin/sh\" }\n");
	cr_assert_eq(p.d.n, 0, "no diagnostics expected");
	struct ast_node *n = p.ast->items;
	enum ast_kind want[] = { AST_VERSION, AST_IMPORT, AST_PARAM, AST_PARAM, AST_LIST,
				 AST_RULE, AST_PROFILE, AST_PROFILE };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++, n = n->next) {
		cr_assert(n != NULL, "statement %zu missing", i);
		cr_expect_eq(n->kind, want[i], "statement %zu", i);
	}
	cr_expect(n == NULL);

	n = p.ast->items->next->next;
	cr_expect_str_eq(n->u.param.name->text, "ws");
	cr_expect_null(n->u.param.deflt);
	cr_expect_str_eq(n->next->u.param.deflt->text, "8080");
	struct ast_node *list = n->next->next;
	cr_expect_eq(count_str(list->u.list.items), 3, "a newline after ',' continues the list");
	cr_expect(list->u.list.items->next->next->is_ident);

	struct ast_node *protect = list->next;
	cr_expect_eq(protect->u.rule.effect, AST_PROTECT);
	cr_expect_eq(protect->u.rule.access, 0);

	struct ast_node *base = protect->next;
	cr_expect_str_eq(base->u.profile.name->text, "base");
	cr_expect_eq(count(base->u.profile.body), 7);
	struct ast_node *rule = base->u.profile.body->next;
	cr_expect_eq(rule->u.rule.access, IR_A_KW_READ | IR_A_KW_WRITE);
	cr_expect_eq(rule->u.rule.access_loc.col, 11);
	cr_expect_eq(rule->u.rule.access_loc.len, strlen("read write"));

	struct ast_node *task = base->next;
	cr_expect_str_eq(task->u.profile.parent->text, "base");
	cr_expect_eq(count(task->u.profile.body), 1, "a one-line profile body");
	cr_expect_eq(task->u.profile.body->u.rule.effect, AST_DENY);
	done(&p);
}

Test(parse, protect_except)
{
	struct parsed p;
	parse_text(&p, "cage 1\n"
		       "protect write \"/w/.git/**\", \"/v/.git/**\" except\n"
		       "    \"/w/.git/index\", objs\n"
		       "protect \"/x/**\"\n");
	cr_assert_eq(p.d.n, 0, "no diagnostics expected");
	struct ast_node *r = p.ast->items->next;
	cr_expect_eq(count_str(r->u.rule.targets), 2);
	cr_expect_eq(count_str(r->u.rule.excepts), 2, "a newline after except continues the rule");
	cr_expect(r->u.rule.excepts->next->is_ident);
	cr_expect_eq(r->u.rule.except_loc.line, 2);
	cr_expect_null(r->next->u.rule.excepts);
	done(&p);

	parse_text(&p, "cage 1\nallow read \"/w/**\" except \"/w/x\"\n"
		       "protect \"/w/**\" except\n");
	cr_expect_eq(p.d.n, 2, "except on an allow, and except with no path");
	done(&p);
}

Test(parse, recovery_reports_every_error)
{
	struct parsed p;
	parse_text(&p,
		   "cage 1\n"
		   "allow read\n"              /* 2: missing target */
		   "allow read \"/ok\"\n"
		   "deny write \"/a\" \"/b\"\n"  /* 4: missing comma */
		   "profile p {\n"
		   "    allow = \"/x\"\n"       /* 6: stray '=' */
		   "    allow read \"/fine\"\n"
		   "    mode\n"                 /* 8: missing mode */
		   "}\n"
		   "param : path\n"             /* 10: missing name */
		   "allow read \"/last\"\n");
	cr_assert_eq(p.d.errors, 5, "got %zu errors", p.d.errors);
	unsigned lines[] = { 2, 4, 6, 8, 10 };
	for (size_t i = 0; i < 5; i++)
		cr_expect_eq(p.d.items[i]->loc.line, lines[i], "error %zu on line %u", i,
			     p.d.items[i]->loc.line);
	/* the good statements around the errors still made it into the tree */
	size_t rules = 0, profiles = 0;
	for (struct ast_node *n = p.ast->items; n; n = n->next) {
		rules += n->kind == AST_RULE;
		profiles += n->kind == AST_PROFILE;
	}
	cr_expect_eq(rules, 2);
	cr_expect_eq(profiles, 1);
	done(&p);
}

Test(parse, unknown_access_word_is_named)
{
	struct parsed p;
	parse_text(&p, "cage 1\nallow raed \"/a\"\n");
	cr_assert_eq(p.d.errors, 1);
	cr_expect(strstr(p.d.items[0]->msg, "'raed' is not an access") != NULL, "%s",
		  p.d.items[0]->msg);
	cr_expect_eq(p.d.items[0]->loc.col, 7);
	done(&p);
}

Test(parse, unclosed_profile_reports_end_of_file)
{
	struct parsed p;
	parse_text(&p, "cage 1\nprofile p {\n  allow read \"/a\"\n");
	cr_assert_geq(p.d.errors, 1);
	cr_expect(strstr(p.d.items[p.d.n - 1]->msg, "end of file") != NULL, "%s",
		  p.d.items[p.d.n - 1]->msg);
	done(&p);
}

Test(parse, error_flood_is_capped)
{
	struct arena a;
	arena_init(&a);
	size_t n = 20000;
	char *text = arena_alloc(&a, n * 2 + 1);
	for (size_t i = 0; i < n; i++) {
		text[2 * i] = '{';
		text[2 * i + 1] = '\n';
	}
	struct parsed p;
	parse_text(&p, text);
	cr_expect_leq(p.d.n, 60, "diagnostics are capped, got %zu", p.d.n);
	cr_expect_geq(p.d.errors, 50);
	done(&p);
	arena_free(&a);
}
