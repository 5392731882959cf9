/*
 * test_stdlib_ast.c - the standard library's syntax trees kept by the
 * build (compiler/resolve/stdlib_ast.h): every stdlib file is kept, each
 * kept tree is the one the parser makes from the file's bytes today, a
 * file changed by one byte is parsed instead, and through the compiler a
 * changed stdlib module takes effect.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cage.h"
#include "load.h"
#include "parse_ctx.h"
#include "policy.h"
#include "stdlib_ast.h"

/* The file's bytes as the resolver reads them, in a. */
static char *read_file(struct arena *a, const char *path, size_t *len)
{
	char *text;
	const char *err = NULL;
	cr_assert(load_read(a, path, &text, len, &err), "%s", err);
	return text;
}

static size_t count_cage_files(const char *dir)
{
	DIR *d = opendir(dir);
	cr_assert(d, "%s", dir);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[1024];
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		struct stat st;
		cr_assert_eq(stat(p, &st), 0);
		size_t l = strlen(e->d_name);
		if (S_ISDIR(st.st_mode))
			n += count_cage_files(p);
		else if (l > 5 && !strcmp(e->d_name + l - 5, ".cage"))
			n++;
	}
	closedir(d);
	return n;
}

static void same_loc(const struct loc *a, const struct loc *b, const char *what)
{
	cr_assert_eq(a->file, b->file, "%s: file", what);
	cr_assert_eq(a->line, b->line, "%s: line", what);
	cr_assert_eq(a->col, b->col, "%s: col", what);
	cr_assert_eq(a->off, b->off, "%s: off", what);
	cr_assert_eq(a->len, b->len, "%s: len", what);
}

static void same_strs(const struct ast_str *a, const struct ast_str *b, const char *what)
{
	for (; a || b; a = a->next, b = b->next) {
		cr_assert(a && b, "%s: word lists of different lengths", what);
		cr_assert_eq(a->len, b->len, "%s", what);
		cr_assert_str_eq(a->text, b->text, "%s", what);
		cr_assert_eq(a->is_ident, b->is_ident, "%s", what);
		same_loc(&a->loc, &b->loc, what);
	}
}

static void same_nodes(const struct ast_node *a, const struct ast_node *b, const char *file)
{
	for (; a || b; a = a->next, b = b->next) {
		cr_assert(a && b, "%s: node lists of different lengths", file);
		cr_assert_eq(a->kind, b->kind, "%s", file);
		same_loc(&a->loc, &b->loc, file);
		switch (a->kind) {
		case AST_VERSION: same_strs(a->u.version.number, b->u.version.number, file); break;
		case AST_IMPORT: same_strs(a->u.import.path, b->u.import.path, file); break;
		case AST_PARAM:
			same_strs(a->u.param.name, b->u.param.name, file);
			same_strs(a->u.param.type, b->u.param.type, file);
			same_strs(a->u.param.deflt, b->u.param.deflt, file);
			break;
		case AST_LIST:
			same_strs(a->u.list.name, b->u.list.name, file);
			same_strs(a->u.list.items, b->u.list.items, file);
			break;
		case AST_PROFILE:
			same_strs(a->u.profile.name, b->u.profile.name, file);
			same_strs(a->u.profile.parent, b->u.profile.parent, file);
			same_nodes(a->u.profile.body, b->u.profile.body, file);
			break;
		case AST_RULE:
			cr_assert_eq(a->u.rule.effect, b->u.rule.effect, "%s", file);
			cr_assert_eq(a->u.rule.access, b->u.rule.access, "%s", file);
			same_loc(&a->u.rule.access_loc, &b->u.rule.access_loc, file);
			same_loc(&a->u.rule.except_loc, &b->u.rule.except_loc, file);
			same_strs(a->u.rule.targets, b->u.rule.targets, file);
			same_strs(a->u.rule.excepts, b->u.rule.excepts, file);
			break;
		case AST_MODE: same_strs(a->u.mode.value, b->u.mode.value, file); break;
		case AST_ENV_KEEP:
		case AST_ENV_UNSET:
		case AST_PRIVATE: same_strs(a->u.names.names, b->u.names.names, file); break;
		case AST_ENV_SET:
			same_strs(a->u.env_set.name, b->u.env_set.name, file);
			same_strs(a->u.env_set.value, b->u.env_set.value, file);
			break;
		case AST_LIMIT:
			same_strs(a->u.limit.what, b->u.limit.what, file);
			same_strs(a->u.limit.number, b->u.limit.number, file);
			same_strs(a->u.limit.words, b->u.limit.words, file);
			break;
		}
	}
}

Test(stdlib_ast, every_stdlib_file_is_kept)
{
	size_t n = count_cage_files(CAGE_SOURCE_DIR "/stdlib");
	cr_assert_gt(n, 0);
	cr_assert_eq(stdlib_ast_count(), n, "kept %zu of %zu stdlib files (one with a diagnostic "
					     "is left out: fix it)", stdlib_ast_count(), n);
}

Test(stdlib_ast, each_kept_tree_is_what_the_parser_makes)
{
	for (size_t i = 0; i < stdlib_ast_count(); i++) {
		const struct sast_file *k = stdlib_ast_file(i);
		char path[1024];
		snprintf(path, sizeof path, "%s/stdlib/%s", CAGE_SOURCE_DIR, k->name);
		struct src_file f = { .name = k->name, .stdlib_root = "x" };
		struct arena a;
		arena_init(&a);
		f.text = read_file(&a, path, &f.len);
		struct diag_list dl;
		diag_list_init(&dl, &a);
		struct ast_file *parsed = parse_file(&f, &a, &dl);
		cr_assert_eq(dl.n, 0, "%s", path);
		struct ast_file *kept = stdlib_ast_find(&f, &a);
		cr_assert(kept, "%s: no kept tree for its bytes (the build's copy is stale?)", path);
		cr_assert_eq(kept->src, &f);
		cr_assert(kept->items, "%s: an empty tree", path);
		same_nodes(parsed->items, kept->items, path);
		diag_list_free(&dl);
		arena_free(&a);
	}
}

Test(stdlib_ast, one_byte_changed_is_not_the_kept_tree)
{
	cr_assert_gt(stdlib_ast_count(), 0);
	const struct sast_file *k = stdlib_ast_file(0);
	char path[1024];
	snprintf(path, sizeof path, "%s/stdlib/%s", CAGE_SOURCE_DIR, k->name);
	struct arena a;
	arena_init(&a);
	size_t len;
	char *text = read_file(&a, path, &len);
	struct src_file f = { .name = k->name, .stdlib_root = "x", .text = text, .len = len };
	cr_assert(stdlib_ast_find(&f, &a), "the unchanged bytes find their tree");
	text[len - 1] = text[len - 1] == ' ' ? '\t' : ' ';
	cr_expect_null(stdlib_ast_find(&f, &a), "one byte changed");
	text[len - 1] = '\n';
	f.len = len - 1;
	cr_expect_null(stdlib_ast_find(&f, &a), "one byte shorter");
	arena_free(&a);
}

/* Through the compiler: a standard library folder whose std/base.cage is
 * the source tree's own plus one rule. The module compiles with the rule,
 * so the kept tree of the unchanged file was not taken for it. */
Test(stdlib_ast, a_changed_stdlib_module_takes_effect)
{
	char dir[] = "/tmp/cage-stdlib-ast-XXXXXX";
	cr_assert(mkdtemp(dir));
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "cp -R '%s/stdlib/.' '%s/' && printf 'allow read \"/only-in-the-copy\"\\n' "
				  ">> '%s/linux/std/base.cage'",
		 CAGE_SOURCE_DIR, dir, dir);
	cr_assert_eq(system(cmd), 0);
	const char *text = "cage 1\nimport \"std/base\"\nprofile p {\n}\n";
	bool found[2] = { false, false };
	for (int pass = 0; pass < 2; pass++) {
		cage_options *o = cage_options_new();
		cage_options_home(o, "/home/u");
		cage_options_target(o, "linux");
		cage_options_stdlib(o, pass == 0 ? CAGE_SOURCE_DIR "/stdlib" : dir);
		cage_policy *p = cage_load_string("main.cage", text, strlen(text), o);
		cr_assert(p);
		cage_print_diagnostics(p, stderr, false);
		cr_assert_eq(cage_error_count(p), 0);
		const struct ir_profile *prof = p->ir->selected;
		for (size_t i = 0; i < prof->nrules; i++)
			if (prof->rules[i].t.path.text &&
			    !strcmp(prof->rules[i].t.path.text, "/only-in-the-copy"))
				found[pass] = true;
		cage_policy_free(p);
		cage_options_free(o);
	}
	cr_expect(!found[0], "the source tree's std/base has no such rule");
	cr_expect(found[1], "the changed copy's rule is compiled");
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}
