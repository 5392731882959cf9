/*
 * test_resolve.c - imports (search path, relative, cycles, depth), params
 * (-D, defaults, types, missing), lists, extends order, path
 * normalisation and home expansion, as seen in the IR.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cage.h"
#include "policy.h"

static char tmpdir[256];

static void mk(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	cr_assert_eq(system(cmd), 0);
	*slash = '/';
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cage-resolve-XXXXXX");
	cr_assert(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(resolve, .init = setup, .fini = teardown);

static cage_policy *load_str(const char *text, cage_options *o)
{
	cage_policy *p = cage_load_string("main.cage", text, strlen(text), o);
	cr_assert(p);
	return p;
}

static bool has_diag(cage_policy *p, const char *id, const char *needle)
{
	for (size_t i = 0; i < p->diags.n; i++)
		if (strcmp(p->diags.items[i]->id, id) == 0 &&
		    (!needle || strstr(p->diags.items[i]->msg, needle)))
			return true;
	return false;
}

static cage_options *opts_home(void)
{
	cage_options *o = cage_options_new();
	cage_options_home(o, "/home/u");
	cage_options_stdlib(o, tmpdir);
	return o;
}

Test(resolve, imports_from_search_path_relative_and_stdlib)
{
	mk("std/base.cage", "cage 1\nallow read \"/usr/**\"\n");
	mk("inc/team.cage", "cage 1\nimport \"./sub/x\"\nallow read \"/team/**\"\n");
	mk("inc/sub/x.cage", "cage 1\nallow read \"/x\"\n");
	mk("proj/main.cage", "cage 1\nimport \"std/base\"\nimport \"team\"\nimport \"./local\"\n"
			     "allow read \"/main\"\n");
	mk("proj/local.cage", "cage 1\nimport \"std/base\"\nallow read \"/local\"\n");
	cage_options *o = opts_home();
	char inc[300], main[300];
	snprintf(inc, sizeof(inc), "%s/inc", tmpdir);
	snprintf(main, sizeof(main), "%s/proj/main.cage", tmpdir);
	cage_options_include(o, inc);
	cage_policy *p = cage_load_file(main, o);
	cage_print_diagnostics(p, stderr, false);
	cr_assert_eq(cage_error_count(p), 0);
	const struct ir_profile *prof = p->ir->selected;
	cr_assert_eq(prof->nrules, 5, "std/base once, despite two imports");
	const char *want[] = { "/usr/**", "/x", "/team/**", "/local", "/main" };
	for (size_t i = 0; i < 5; i++)
		cr_expect_str_eq(prof->rules[i].t.path.text, want[i]);
	cr_expect_str_eq(p->ir->files[1]->name, "std/base.cage", "stdlib files show by module name");
	cage_policy_free(p);
	cage_options_free(o);
}

Test(resolve, import_cycle_and_missing_import)
{
	mk("a.cage", "cage 1\nimport \"./b\"\n");
	mk("b.cage", "cage 1\nimport \"./a\"\nimport \"./nope\"\n");
	char main[300];
	snprintf(main, sizeof(main), "%s/a.cage", tmpdir);
	cage_options *o = opts_home();
	cage_policy *p = cage_load_file(main, o);
	cr_expect(has_diag(p, "import-cycle", NULL));
	cr_expect(has_diag(p, "import", "cannot find import './nope'"));
	/* the error inside b.cage carries the chain back to a.cage */
	for (size_t i = 0; i < p->diags.n; i++) {
		struct diag *d = p->diags.items[i];
		if (strcmp(d->id, "import-cycle") == 0) {
			cr_expect(strstr(d->loc.file->name, "b.cage") != NULL);
			cr_assert(d->notes);
			cr_expect_str_eq(d->notes->loc.file->name, main);
		}
	}
	cage_policy_free(p);
	cage_options_free(o);
}

/* Imports are told apart by their real path (resolve_load.c keeps the
 * real path of each directory on the way): one file reached through a
 * symlinked directory, a symlinked file and "..", is loaded once, and
 * its real path is realpath(3)'s. */
Test(resolve, an_import_reached_through_symlinks_is_one_file)
{
	mk("lib/real/mod.cage", "cage 1\nallow read \"/mod\"\n");
	mk("proj/main.cage", "cage 1\nimport \"./via/mod\"\nimport \"./file\"\n"
			     "import \"./via/../via/mod\"\nimport \"../lib/real/mod\"\n"
			     "allow read \"/main\"\n");
	char lnk[300], tgt[300], main[300], want[4096];
	snprintf(lnk, sizeof lnk, "%s/proj/via", tmpdir);
	snprintf(tgt, sizeof tgt, "%s/lib/real", tmpdir);
	cr_assert_eq(symlink(tgt, lnk), 0);
	snprintf(lnk, sizeof lnk, "%s/proj/file.cage", tmpdir);
	snprintf(tgt, sizeof tgt, "%s/lib/real/mod.cage", tmpdir);
	cr_assert_eq(symlink(tgt, lnk), 0);
	cr_assert(realpath(tgt, want));
	snprintf(main, sizeof main, "%s/proj/main.cage", tmpdir);
	cage_options *o = opts_home();
	cage_policy *p = cage_load_file(main, o);
	cage_print_diagnostics(p, stderr, false);
	cr_assert_eq(cage_error_count(p), 0);
	cr_expect_eq(p->ir->selected->nrules, 2, "the module once, through four names");
	cr_assert_eq(p->ir->nfiles, 2);
	cr_expect_str_eq(p->ir->files[1]->realpath, want);
	cage_policy_free(p);
	cage_options_free(o);
}

Test(resolve, import_depth_is_limited)
{
	for (int i = 0; i < 40; i++) {
		char name[32], text[64];
		snprintf(name, sizeof(name), "d%d.cage", i);
		snprintf(text, sizeof(text), "cage 1\nimport \"./d%d\"\n", i + 1);
		mk(name, text);
	}
	mk("d40.cage", "cage 1\n");
	char main[300];
	snprintf(main, sizeof(main), "%s/d0.cage", tmpdir);
	cage_options *o = opts_home();
	cage_policy *p = cage_load_file(main, o);
	cr_expect(has_diag(p, "import", "nested more than 32 deep"));
	cage_policy_free(p);
	cage_options_free(o);
}

Test(resolve, params_defines_defaults_and_types)
{
	cage_options *o = opts_home();
	cr_assert(cage_options_define(o, "ws=/srv//proj/./x/.."));
	cr_assert(cage_options_define(o, "api=API.Example.COM."));
	cage_policy *p = load_str("cage 1\nparam ws : path\nparam api : host\n"
				  "param tmp : path = \"~/t\"\nparam port : port = 8080\n"
				  "allow read write ws\nallow read \"{tmp}/cache/**\"\n"
				  "allow connect api\n", o);
	cage_print_diagnostics(p, stderr, false);
	cr_assert_eq(cage_error_count(p), 0);
	const struct ir_profile *prof = p->ir->selected;
	cr_assert_eq(prof->nrules, 3);
	cr_expect_str_eq(prof->rules[0].t.path.text, "/srv/proj/**");
	cr_expect_eq(prof->rules[0].t.path.kind, IR_PAT_SUBTREE);
	cr_expect_str_eq(prof->rules[1].t.path.text, "/home/u/t/cache/**");
	cr_expect_eq(prof->rules[1].t.path.home_len, strlen("/home/u"));
	cr_expect_str_eq(prof->rules[2].t.host.name, "api.example.com");
	cage_policy_free(p);
	cage_options_free(o);
}

Test(resolve, param_errors)
{
	cage_options *o = opts_home();
	cr_assert(cage_options_define(o, "nosuch=1"));
	cr_assert(cage_options_define(o, "port=70000"));
	cage_policy *p = load_str("cage 1\nparam ws : path\nparam port : port\n"
				  "param x : colour\nallow read \"{ws}/a\", \"{missing}/b\"\n", o);
	cr_expect(has_diag(p, "param", "param 'ws' has no value"));
	cr_expect(has_diag(p, "unknown-param", "-D nosuch"));
	cr_expect(has_diag(p, "param", "bad value '70000'"));
	cr_expect(has_diag(p, "param", "unknown param type 'colour'"));
	cr_expect(has_diag(p, "unknown-param", "no param named 'missing'"));
	/* the unknown-param caret sits on "{missing}" exactly */
	for (size_t i = 0; i < p->diags.n; i++)
		if (strstr(p->diags.items[i]->msg, "'missing'")) {
			cr_expect_eq(p->diags.items[i]->loc.col, 23);
			cr_expect_eq(p->diags.items[i]->loc.len, strlen("{missing}"));
		}
	cr_expect_null(p->ir->selected);
	cage_policy_free(p);
	cage_options_free(o);
}

Test(resolve, extends_order_and_layers)
{
	cage_options *o = opts_home();
	cage_policy *p = load_str("cage 1\n"
				  "allow read \"/module\"\n"
				  "profile agent { allow read \"/agent\" \n mode monitor }\n"
				  "profile project extends agent { allow read \"/project\" }\n"
				  "profile task extends project { allow read \"/task\" }\n", o);
	cr_assert_eq(cage_error_count(p), 0);
	const struct ir_profile *t = p->ir->selected;
	cr_expect_str_eq(t->name, "task", "the last profile is selected by default");
	cr_assert_eq(t->nrules, 4);
	const char *want[] = { "/module", "/agent", "/project", "/task" };
	for (size_t i = 0; i < 4; i++)
		cr_expect_str_eq(t->rules[i].t.path.text, want[i]);
	cr_expect_eq(t->mode, IR_MODE_MONITOR, "mode is inherited");
	cr_expect_str_eq(t->parent->name, "project");
	cage_policy_free(p);

	cage_options_profile(o, "agent");
	p = load_str("cage 1\nprofile agent { allow read \"/a\" }\nprofile b extends agent {}\n", o);
	cr_assert_eq(cage_error_count(p), 0);
	cr_expect_str_eq(p->ir->selected->name, "agent");
	cage_policy_free(p);

	cage_options_profile(o, NULL);
	p = load_str("cage 1\nprofile a extends b {}\nprofile b extends a {}\nprofile c extends zz {}\n", o);
	cr_expect(has_diag(p, "extends", "extends itself"));
	cr_expect(has_diag(p, "extends", "no profile named 'zz'"));
	cage_policy_free(p);
	cage_options_free(o);
}

Test(resolve, lists_and_names)
{
	cage_options *o = opts_home();
	cage_policy *p = load_str("cage 1\nlist a = \"x.com\", b\nlist b = \"y.com:443\"\n"
				  "list loop = loop\n"
				  "allow connect a\nallow connect loop\nallow read nothing\n", o);
	cr_expect(has_diag(p, "list", "refers to itself"));
	cr_expect(has_diag(p, "unknown-name", "'nothing'"));
	cage_policy_free(p);
	p = load_str("cage 1\nlist a = \"x.com\", b\nlist b = \"y.com:443\"\nallow connect a\n", o);
	cr_assert_eq(cage_error_count(p), 0);
	cr_assert_eq(p->ir->selected->nrules, 2);
	cr_expect_str_eq(p->ir->selected->rules[1].t.host.name, "y.com");
	cr_expect_eq(p->ir->selected->rules[1].t.host.ports[0].lo, 443);
	cage_policy_free(p);
	cage_options_free(o);
}

Test(resolve, path_normalisation_and_errors)
{
	cage_options *o = opts_home();
	cage_policy *p = load_str("cage 1\nallow read \"/a//b/./c/../d/\", \"~\", \"~/x/../../y\", "
				  "\"/t/*.log\", \"/t/**/x\", \"/\"\n", o);
	cr_assert_eq(cage_error_count(p), 0);
	const struct ir_profile *t = p->ir->selected;
	cr_expect_str_eq(t->rules[0].t.path.text, "/a/b/d");
	cr_expect_str_eq(t->rules[1].t.path.text, "/home/u");
	cr_expect_eq(t->rules[1].t.path.home_len, 7);
	cr_expect_str_eq(t->rules[2].t.path.text, "/home/y");
	cr_expect_eq(t->rules[2].t.path.home_len, 0, "~/../.. leaves home: not home-relative");
	cr_expect_eq(t->rules[3].t.path.kind, IR_PAT_GLOB);
	cr_expect_eq(t->rules[3].t.path.lit_prefix, 3);
	cr_expect_eq(t->rules[4].t.path.kind, IR_PAT_GLOB);
	cr_expect_eq(t->rules[5].t.path.kind, IR_PAT_EXACT);
	cage_policy_free(p);

	p = load_str("cage 1\nallow read \"rel\", \"/a/../..\", \"/a/b**\", \"~bob/x\", \"/x/*/../y\"\n", o);
	cr_expect(has_diag(p, "path", "relative path 'rel'"));
	cr_expect(has_diag(p, "path", "climbs above"));
	cr_expect(has_diag(p, "path", "whole path component"));
	cr_expect(has_diag(p, "path", "'~user'"));
	cr_expect(has_diag(p, "path", "after a wildcard"));
	cage_policy_free(p);
	cage_options_free(o);
}

Test(resolve, version_line)
{
	cage_options *o = opts_home();
	cage_policy *p = load_str("allow read \"/a\"\n", o);
	cr_expect(has_diag(p, "version", "missing version line"));
	cage_policy_free(p);
	p = load_str("cage 2\n", o);
	cr_expect(has_diag(p, "version", "unsupported language version 2"));
	cage_policy_free(p);
	p = load_str("", o);
	cr_expect(has_diag(p, "version", NULL));
	cage_policy_free(p);
	cage_options_free(o);
}

Test(resolve, hosts_and_mach)
{
	cage_options *o = opts_home();
	cage_policy *p = load_str("cage 1\nallow connect \"*.Example.com:80,443,8000-8100\", \"*\", "
				  "\"10.0.0.1\", \"[::1]:22\", \"localhost:3000\"\n"
				  "allow mach \"com.apple.trustd.agent\", \"com.example.*\"\n", o);
	cage_print_diagnostics(p, stderr, false);
	cr_assert_eq(cage_error_count(p), 0);
	const struct ir_rule *r = p->ir->selected->rules;
	cr_expect_eq(r[0].t.host.kind, IR_H_SUFFIX);
	cr_expect_str_eq(r[0].t.host.name, "example.com");
	cr_expect_eq(r[0].t.host.nports, 3);
	cr_expect_eq(r[0].t.host.ports[2].hi, 8100);
	cr_expect_eq(r[1].t.host.kind, IR_H_ANY);
	cr_expect_eq(r[2].t.host.kind, IR_H_IPV4);
	cr_expect_eq(r[3].t.host.kind, IR_H_IPV6);
	cr_expect_str_eq(r[3].t.host.name, "::1");
	cr_expect_eq(r[4].t.host.kind, IR_H_NAME);
	cr_expect(r[6].t.mach.prefix);
	cage_policy_free(p);

	p = load_str("cage 1\nallow connect \"a.*.com\", \"x.com:0\", \"::1\", \"bücher.de\", "
		     "\"0x7f.1\", \"-a.com\"\nallow mach \"com.x*\"\n"
		     "allow read connect \"/a\"\nallow \"/b\"\n", o);
	cr_expect_eq(cage_error_count(p), 9, "got %zu", cage_error_count(p));
	cr_expect(has_diag(p, "host", "punycode"));
	cr_expect(has_diag(p, "access", "separate rules"));
	cr_expect(has_diag(p, "access", "names no access"));
	cage_policy_free(p);
	cage_options_free(o);
}
