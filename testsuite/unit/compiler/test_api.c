/*
 * test_api.c - the embedding interface, using nothing but cage.h: what an
 * agent host sees (load from file and string, read diagnostics, query,
 * emit).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>

#include "cage.h"
#include "fx_tree.h"

/* Emits `backend` to memory; returns the text (caller frees) or NULL with
 * *err set. */
static char *emit_to_string(cage_policy *p, const char *backend, const char **err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	cr_assert(mem);
	bool ok = cage_emit(p, backend, mem, err);
	fclose(mem);
	if (!ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

Test(api, load_string_query_and_emit)
{
	cage_options *o = cage_options_new();
	cr_assert(o);
	cr_assert(cage_options_define(o, "ws=/srv/p"));
	cr_assert(!cage_options_define(o, "no-equals-sign"));
	cage_options_home(o, "/home/u");
	const char *text = "cage 1\nparam ws : path\nprofile p {\n"
			   "    allow read write ws\n    deny write \"{ws}/.git/**\"\n"
			   "    allow connect \"github.com:443\"\n}\n";
	cage_policy *p = cage_load_string("embedded.cage", text, strlen(text), o);
	cr_assert(p);
	cr_expect_eq(cage_error_count(p), 0);

	struct cage_verdict v;
	const char *err = NULL;
	cr_assert(cage_query_path(p, "write", "/srv/p/.git/config", &v, &err));
	cr_expect(!v.allowed);
	cr_expect_str_eq(v.file, "embedded.cage");
	cr_expect_eq(v.line, 5);
	cr_assert(cage_query_path(p, "write", "/srv/p/main.c", &v, &err));
	cr_expect(v.allowed);
	cr_assert(cage_query_host(p, "github.com", 443, &v, &err));
	cr_expect(v.allowed);
	cr_assert(cage_query_host(p, "github.com", 22, &v, &err));
	cr_expect(!v.allowed);
	cr_expect(v.by_default);
	cr_expect(!cage_query_path(p, "frobnicate", "/x", &v, &err));
	cr_expect(!cage_query_path(p, "read", "/a/*", &v, &err), "queries name one path");

	char *buf = emit_to_string(p, "ir", &err);
	cr_assert(buf, "%s", err);
	cr_expect(strstr(buf, "deny write \"/srv/p/.git/**\"") != NULL, "%s", buf);
	free(buf);
	cr_expect(!cage_emit(p, "no-such-backend", stdout, &err));

	bool has_ir = false;
	for (size_t i = 0; cage_backend_name(i); i++)
		has_ir |= strcmp(cage_backend_name(i), "ir") == 0;
	cr_expect(has_ir);
	cage_policy_free(p);
	cage_options_free(o);
}

Test(api, diagnostics_are_values)
{
	const char *text = "cage 1\nallow read \"relative\"\nallow bogus \"/x\"\n";
	cage_policy *p = cage_load_string("bad.cage", text, strlen(text), NULL);
	cr_assert(p);
	cr_expect_eq(cage_error_count(p), 2);
	cr_assert_eq(cage_diagnostic_count(p), 2);
	struct cage_diagnostic d;
	cr_assert(cage_diagnostic_get(p, 0, &d));
	cr_expect_eq(d.severity, CAGE_ERROR);
	cr_expect_str_eq(d.file, "bad.cage");
	cr_expect_eq(d.line, 2);
	cr_expect_eq(d.column, 12);
	cr_expect_str_eq(d.id, "path");
	cr_assert(cage_diagnostic_get(p, 1, &d));
	cr_expect_eq(d.line, 3);
	cr_expect(!cage_diagnostic_get(p, 2, &d));

	struct cage_verdict v;
	const char *err = NULL;
	cr_expect(!cage_query_path(p, "read", "/x", &v, &err), "a broken policy answers nothing");
	cr_expect(err != NULL);
	cr_expect(!cage_emit(p, "ir", stdout, &err));

	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	cage_print_diagnostics(p, mem, false);
	fclose(mem);
	cr_expect(strstr(buf, "bad.cage:2:12: error: relative path 'relative'") != NULL, "%s", buf);
	cr_expect(strstr(buf, "\n allow read \"relative\"\n            ^~~~~~~~~~\n") != NULL, "%s", buf);
	free(buf);
	cage_policy_free(p);
}

Test(api, load_file_errors)
{
	cage_policy *p = cage_load_file("/nonexistent/policy.cage", NULL);
	cr_assert(p);
	cr_expect_eq(cage_error_count(p), 1);
	struct cage_diagnostic d;
	cr_assert(cage_diagnostic_get(p, 0, &d));
	cr_expect_str_eq(d.id, "io");
	cr_expect(strstr(d.message, "No such file") != NULL);
	cage_policy_free(p);

	p = cage_load_file("/", NULL);
	cr_assert(cage_diagnostic_get(p, 0, &d));
	cr_expect(strstr(d.message, "is a directory") != NULL);
	cage_policy_free(p);
	cr_expect_str_eq(cage_version(), CAGE_VERSION_STRING);
}

/* The target picks the stdlib's platform module behind one import name,
 * is recorded in the IR, and a Seatbelt profile is refused for Linux. */
Test(api, target_selects_platform_modules)
{
	const char *text = "cage 1\nimport \"std/base\"\n";
	const char *err = NULL;
	static const struct { const char *target, *head, *module; } cases[] = {
		{ "linux", "# cage ir 1; target linux;", "linux/std/base.cage" },
		{ "macos", "# cage ir 1; target macos;", "macos/std/base.cage" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cage_options *o = cage_options_new();
		cr_assert(o);
		cage_options_stdlib(o, CAGE_SOURCE_DIR "/stdlib");
		cage_options_home(o, "/home/u");
		cr_assert(cage_options_target(o, cases[i].target));
		cage_policy *p = cage_load_string("t.cage", text, strlen(text), o);
		cr_assert(p);
		cr_assert_eq(cage_error_count(p), 0);
		char *ir = emit_to_string(p, "ir", &err);
		cr_assert(ir, "%s", err);
		cr_expect(strncmp(ir, cases[i].head, strlen(cases[i].head)) == 0, "%s", ir);
		cr_expect(strstr(ir, cases[i].module) != NULL, "%s", ir);
		free(ir);
		char *sb = emit_to_string(p, "sbpl", &err);
		if (strcmp(cases[i].target, "linux") == 0) {
			cr_expect(sb == NULL, "a Seatbelt profile for Linux");
			cr_expect(strstr(err, "compiled for linux") != NULL, "%s", err);
		} else {
			cr_expect(sb != NULL, "%s", err);
		}
		free(sb);
		cage_policy_free(p);
		cage_options_free(o);
	}
	cage_options *o = cage_options_new();
	cr_assert(o);
	cr_expect(!cage_options_target(o, "windows"));
	cr_expect(!cage_options_target(o, "Linux"), "names are exact");
	cr_expect(!cage_options_target(o, NULL));
	cage_options_free(o);
}

/* cage_options_param_fn: asked for each param no -D gave, with the
 * profile the selection will pick; its value is exactly a -D's. */
struct param_calls {
	int n;
	char seen[4][3][64]; /* param, decl, profile */
};

static const char *give_cache(void *ctx, const char *param, const char *decl,
			      const char *profile)
{
	struct param_calls *c = ctx;
	if (c->n < 4) {
		snprintf(c->seen[c->n][0], 64, "%s", param);
		snprintf(c->seen[c->n][1], 64, "%s", decl);
		snprintf(c->seen[c->n][2], 64, "%s", profile);
	}
	c->n++;
	return strcmp(param, "cache") ? NULL : "/given";
}

static const char param_text[] = "cage 1\nparam cache : path = \"/default\"\n"
				 "param other : path = \"/o\"\n"
				 "profile first {\n    allow read other\n}\n"
				 "profile second {\n    allow read cache\n}\n";

static cage_policy *load_params(cage_options *o)
{
	cage_policy *p = cage_load_string("embedded.cage", param_text, sizeof param_text - 1, o);
	cr_assert(p);
	cr_assert_eq(cage_error_count(p), 0);
	return p;
}

Test(api, param_fn_gives_what_a_define_would)
{
	struct param_calls c = { 0 };
	cage_options *o = cage_options_new();
	cage_options_param_fn(o, give_cache, &c);
	cage_policy *p = load_params(o);
	cr_assert_eq(c.n, 2, "once per param: %d", c.n);
	for (int i = 0; i < 2; i++) {
		cr_expect_str_eq(c.seen[i][1], "embedded.cage");
		cr_expect_str_eq(c.seen[i][2], "second", "the main file's last profile");
	}
	struct cage_verdict v;
	const char *err = NULL;
	cr_assert(cage_query_path(p, "read", "/given/x", &v, &err));
	cr_expect(v.allowed);
	cr_assert(cage_query_path(p, "read", "/default/x", &v, &err));
	cr_expect(!v.allowed, "the declared default is not taken");
	char *via_fn = emit_to_string(p, "ir", &err);
	cr_assert(via_fn, "%s", err);

	/* The same policy with -D cache=/given: the same IR, byte for byte. */
	cage_options *d = cage_options_new();
	cr_assert(cage_options_define(d, "cache=/given"));
	cage_policy *q = load_params(d);
	char *via_define = emit_to_string(q, "ir", &err);
	cr_assert(via_define, "%s", err);
	cr_expect_str_eq(via_fn, via_define);

	/* A -D wins: the function is not asked for that param. */
	struct param_calls c2 = { 0 };
	cage_options_param_fn(d, give_cache, &c2);
	cage_policy *r = load_params(d);
	cr_expect_eq(c2.n, 1);
	cr_expect_str_eq(c2.seen[0][0], "other");

	/* --profile names the profile it is asked with; NULL turns it off. */
	struct param_calls c3 = { 0 };
	cage_options *f = cage_options_new();
	cage_options_profile(f, "first");
	cage_options_param_fn(f, give_cache, &c3);
	cage_policy *s = load_params(f);
	cr_expect_str_eq(c3.seen[0][2], "first");
	cage_options_param_fn(f, NULL, NULL);
	cage_policy *t = load_params(f);
	cr_expect_eq(c3.n, 2, "not asked once turned off");

	free(via_fn);
	free(via_define);
	cage_policy_free(p);
	cage_policy_free(q);
	cage_policy_free(r);
	cage_policy_free(s);
	cage_policy_free(t);
	cage_options_free(o);
	cage_options_free(d);
	cage_options_free(f);
}

/* A scratch folder with a policy importing ./a and the module "m" from -I
 * d1 then d2 (only d2 has it): the looks a load takes, asked again. */
Test(api, inputs_unchanged_until_a_file_or_probe_differs)
{
	struct fx_tree t;
	fx_make(&t, "inputs");
	char d1[PATH_MAX], d2[PATH_MAX], pol[PATH_MAX];
	fx_at(&t, d1, "d1");
	fx_at(&t, d2, "d2");
	fx_at(&t, pol, "p.cage");
	fx_mkdirs(&t, "d1");
	fx_file(&t, "p.cage", "cage 1\nimport \"./a\"\nimport \"m\"\nprofile p {\n}\n", 0644);
	fx_file(&t, "a.cage", "cage 1\n", 0644);
	fx_file(&t, "d2/m.cage", "cage 1\n", 0644);
	cage_options *o = cage_options_new();
	cage_options_include(o, d1);
	cage_options_include(o, d2);
	cage_policy *p = cage_load_file(pol, o);
	cr_assert_eq(cage_error_count(p), 0);
	const char *changed = NULL;
	size_t n = 0;
	cr_expect(cage_inputs_unchanged(p, &changed, &n));
	cr_expect_geq(n, 6, "the main file, ./a, and m probed on both -I folders: %zu", n);

	fx_file(&t, "a.cage", "cage 1\n\n", 0644); /* one byte more */
	cr_expect(!cage_inputs_unchanged(p, &changed, &n));
	cr_expect(changed && strstr(changed, "a.cage"), "%s", changed ? changed : "(none)");
	fx_file(&t, "a.cage", "cage 1\n", 0644);
	cr_expect(cage_inputs_unchanged(p, &changed, &n));

	fx_file(&t, "d1/m.cage", "cage 1\n", 0644); /* the same bytes, found first now */
	cr_expect(!cage_inputs_unchanged(p, &changed, &n));
	cr_expect(changed && strstr(changed, "/d1/"), "%s", changed ? changed : "(none)");

	cage_policy_free(p);
	cage_options_free(o);
	fx_remove(&t);
}

Test(api, options_same_as_the_compile_sees_them)
{
	cage_options *a = cage_options_new(), *b = cage_options_new();
	cr_assert(cage_options_define(a, "ws=/w"));
	cr_assert(cage_options_define(b, "ws=/w"));
	cage_options_include(a, "/i");
	cage_options_include(b, "/i");
	cr_expect(cage_options_same(a, b));
	cage_options_home(b, "/h");
	cr_expect(!cage_options_same(a, b), "--home differs");
	cage_options_home(a, "/h");
	cr_expect(cage_options_same(a, b));
	cr_assert(cage_options_define(a, "cache=/c"));
	cr_expect(!cage_options_same(a, b), "one more -D");
	cr_assert(cage_options_define(b, "cache=/d"));
	cr_expect(!cage_options_same(a, b), "a -D's value differs");
	cage_options_free(a);
	cage_options_free(b);
}
