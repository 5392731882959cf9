/*
 * test_layers_lint.c - lint's verdict on cagerun's layers, asked of
 * cage-lint (runtime/layers/layers_lint.c, runtime/layers/lint/): a task
 * layer that re-opens what the policy protects is found, in its layer, in
 * the order it runs; the sources reported are the bytes compiled; a reply
 * parses back, and every cut-short or altered reply is refused; the
 * helper refuses arguments it does not take.
 *
 * The helper is found beside the test program (the build links it into
 * testsuite/).
 */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "layers_lint.h"
#include "ll_serve.h"

static char dir[] = "/tmp/cage-ll-XXXXXX";
static char layer[2][PATH_MAX + 32];
static char text[2 * (PATH_MAX + 32) + 64];

static void write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(s, f);
	cr_assert_eq(fclose(f), 0);
}

/* A policy layer protecting ~/.ssh (std/secrets) and a task layer that
 * grants reading it, composed as cagerun composes -p with --task. */
static void setup(void)
{
	cr_assert(mkdtemp(dir));
	char real[PATH_MAX];
	cr_assert(realpath(dir, real));
	snprintf(layer[0], sizeof layer[0], "%s/policy.cage", real);
	snprintf(layer[1], sizeof layer[1], "%s/task.cage", real);
	write_file(layer[0], "cage 1\nimport \"std/secrets\"\n");
	write_file(layer[1], "cage 1\nallow read \"~/.ssh/**\"\n");
	snprintf(text, sizeof text, "cage 1\nimport \"%s\" # policy\nimport \"%s\" # task\n",
		 layer[0], layer[1]);
}

static void teardown(void)
{
	unlink(layer[0]);
	unlink(layer[1]);
	rmdir(dir);
}

static uint64_t file_fp(const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	cr_assert(f);
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	return XXH3_64bits(buf, n);
}

TestSuite(layers_lint, .init = setup, .fini = teardown);

Test(layers_lint, a_task_layer_reopening_a_protect_is_found_in_its_layer)
{
	cage_options *o = cage_options_new();
	cage_options_home(o, "/home/someone");
	struct ll_request rq = { .text = text, .opts = o, .stdlib = CAGE_SOURCE_DIR "/stdlib",
				 .task = 1, .command = -1 };
	struct ll_verdict v;
	char why[512];
	cr_assert(ll_ask(&rq, &v, why, sizeof why), "%s", why);
	cr_expect(v.judged);
	cr_assert_eq(v.nsrc, 2);
	for (size_t i = 0; i < 2; i++) {
		cr_expect(v.src[i].bound);
		cr_expect_str_eq(v.src[i].path, layer[i]);
		cr_expect_eq(v.src[i].fp, file_fp(layer[i]), "layer %zu", i);
	}
	size_t in_task = 0, elsewhere = 0;
	for (size_t i = 0; i < v.n; i++)
		if (v.v[i].sev == 'e' && !strcmp(v.v[i].id, "protect-violation")) {
			if (!strcmp(v.v[i].layer, layer[1]))
				in_task++;
			else
				elsewhere++;
		}
	cr_expect_geq(in_task, 1);
	cr_expect_eq(elsewhere, 0);
	ll_verdict_free(&v);
	cage_options_free(o);
}

/* The profile judged is chosen as the launch chooses (layers_select): the
 * policy layer's last, unless the request names none of the layers. */
Test(layers_lint, the_profile_judged_is_chosen_from_the_layers)
{
	write_file(layer[0], "cage 1\nimport \"std/secrets\"\nprofile loose {\n}\n"
			     "profile strict {\n}\n");
	cage_options *o = cage_options_new();
	const char *kinds[] = { "policy", "task" };
	const bool untrusted[] = { false, false };
	struct ll_request rq = { .text = text, .opts = o, .stdlib = CAGE_SOURCE_DIR "/stdlib",
				 .kinds = kinds, .untrusted = untrusted, .nlayers = 2,
				 .task = 1, .command = -1 };
	struct ll_verdict v;
	char why[512];
	cr_assert(ll_ask(&rq, &v, why, sizeof why), "%s", why);
	cr_expect_str_eq(v.profile, "strict");
	ll_verdict_free(&v);
	/* a request that says nothing of the layers gets the load's own */
	rq.nlayers = 0;
	cr_assert(ll_ask(&rq, &v, why, sizeof why), "%s", why);
	cr_expect_str_neq(v.profile, "strict");
	ll_verdict_free(&v);
	/* one that names other layers than the text has is refused */
	const char *three[] = { "policy", "task", "project" };
	const bool none[] = { false, false, false };
	rq.kinds = three;
	rq.untrusted = none;
	rq.nlayers = 3;
	cr_expect(!ll_ask(&rq, &v, why, sizeof why));
	cage_options_free(o);
}

Test(layers_lint, a_composition_that_does_not_compile_is_not_judged)
{
	write_file(layer[1], "cage 1\nallow nonsense\n");
	cage_options *o = cage_options_new();
	struct ll_request rq = { .text = text, .opts = o, .stdlib = CAGE_SOURCE_DIR "/stdlib",
				 .task = 1, .command = -1 };
	struct ll_verdict v;
	char why[512];
	cr_assert(ll_ask(&rq, &v, why, sizeof why), "%s", why);
	cr_expect(!v.judged);
	size_t errors = 0;
	for (size_t i = 0; i < v.n; i++)
		errors += v.v[i].sev == 'e';
	cr_expect_geq(errors, 1);
	ll_verdict_free(&v);
	cage_options_free(o);
}

/* A reply as the helper writes it. */
static const char reply[] = LL_MAGIC "\0J\0" "1\0"
			    "P\0main\0"
			    "S\0" "00000000000000ff\0/l/a.cage\0"
			    "S\0-\0-\0"
			    "D\0e\0" "3\0" "12\0/l/a.cage\0/l/a.cage\0unsafe-order\0it re-opens\0"
			    "D\0w\0" "1\0" "1\0(default)\0\0\0a warning\0"
			    ".";

static bool parse_copy(const char *b, size_t n, struct ll_verdict *v)
{
	char *buf = malloc(n ? n : 1);
	cr_assert(buf);
	memcpy(buf, b, n);
	char why[256];
	return ll_parse(buf, n, v, why, sizeof why);
}

Test(layers_lint, a_reply_parses_back)
{
	struct ll_verdict v;
	cr_assert(parse_copy(reply, sizeof reply, &v));
	cr_expect(v.judged);
	cr_expect_str_eq(v.profile, "main");
	cr_assert_eq(v.nsrc, 2);
	cr_expect(v.src[0].bound);
	cr_expect_eq(v.src[0].fp, 0xff);
	cr_expect_str_eq(v.src[0].path, "/l/a.cage");
	cr_expect(!v.src[1].bound);
	cr_assert_eq(v.n, 2);
	cr_expect_eq(v.v[0].sev, 'e');
	cr_expect_eq(v.v[0].line, 3);
	cr_expect_eq(v.v[0].col, 12);
	cr_expect_str_eq(v.v[0].id, "unsafe-order");
	cr_expect_str_eq(v.v[0].msg, "it re-opens");
	cr_expect_str_eq(v.v[1].layer, "");
	ll_verdict_free(&v);
}

Test(layers_lint, every_cut_short_reply_is_refused)
{
	for (size_t n = 0; n < sizeof reply; n++) {
		struct ll_verdict v;
		cr_expect(!parse_copy(reply, n, &v), "a reply of %zu of %zu bytes", n, sizeof reply);
	}
}

Test(layers_lint, altered_replies_are_refused)
{
	static const struct {
		const char *what;
		size_t at;
		char to;
	} alter[] = {
		{ "magic", 0, 'k' },
		{ "J's value", sizeof LL_MAGIC + 2, '2' },
		{ "P's tag", sizeof LL_MAGIC + 4, 'Q' },
		{ "S's digest", sizeof LL_MAGIC + 13, 'g' },
		{ "S's path is not absolute", sizeof LL_MAGIC + 13 + 17, 'l' },
		{ "a tag", sizeof LL_MAGIC, 'X' },
	};
	for (size_t i = 0; i < sizeof alter / sizeof alter[0]; i++) {
		char b[sizeof reply];
		memcpy(b, reply, sizeof reply);
		b[alter[i].at] = alter[i].to;
		struct ll_verdict v;
		cr_expect(!parse_copy(b, sizeof b, &v), "%s", alter[i].what);
	}
	/* the end record first, then more; a second J or P; no J or P */
	static const char extra[] = LL_MAGIC "\0J\0" "1\0P\0\0.\0J\0" "1\0";
	static const char twice[] = LL_MAGIC "\0J\0" "1\0P\0\0J\0" "0\0.";
	static const char two_p[] = LL_MAGIC "\0J\0" "1\0P\0\0P\0x\0.";
	static const char none[] = LL_MAGIC "\0.";
	static const char no_p[] = LL_MAGIC "\0J\0" "1\0.";
	static const char badsev[] = LL_MAGIC "\0J\0" "1\0P\0\0D\0x\0" "1\0" "1\0f\0\0\0m\0.";
	static const char badline[] = LL_MAGIC "\0J\0" "1\0P\0\0D\0e\0" "1a\0" "1\0f\0\0\0m\0.";
	const struct {
		const char *b;
		size_t n;
	} whole[] = { { extra, sizeof extra },	 { twice, sizeof twice },     { two_p, sizeof two_p },
		      { none, sizeof none },	 { no_p, sizeof no_p },	      { badsev, sizeof badsev },
		      { badline, sizeof badline } };
	for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
		struct ll_verdict v;
		cr_expect(!parse_copy(whole[i].b, whole[i].n, &v), "case %zu", i);
	}
}

static int serve(int argc, char **argv)
{
	char *out = NULL;
	size_t n = 0;
	FILE *o = open_memstream(&out, &n);
	FILE *e = fopen("/dev/null", "w");
	FILE *in = fopen("/dev/null", "r");
	cr_assert(o && e && in);
	int rc = ll_serve(argc, argv, in, o, e);
	fclose(o);
	fclose(e);
	fclose(in);
	free(out);
	return rc;
}

Test(layers_lint, the_helper_refuses_what_it_does_not_take)
{
	char *unknown[] = { "cage-lint", "--stdlib", "/s", "--frobnicate", "x", "--stdin", NULL };
	char *no_stdlib[] = { "cage-lint", "--stdin", NULL };
	char *both[] = { "cage-lint", "--stdlib", "/s", "--stdin", "--file", "/p", NULL };
	char *big_task[] = { "cage-lint", "--stdlib", "/s", "--task", "99", "--stdin", NULL };
	char *no_value[] = { "cage-lint", "--stdlib", "/s", "--stdin", "-D", NULL };
	cr_expect_eq(serve(5, unknown), 2);
	cr_expect_eq(serve(2, no_stdlib), 2);
	cr_expect_eq(serve(6, both), 2);
	cr_expect_eq(serve(6, big_task), 2);
	cr_expect_eq(serve(5, no_value), 2);
}

/* Every option the launcher can pass at once, with a file: the helper's
 * arguments fit what is made for them (a sanitizer build checks), and a
 * request for layers a single file has not is refused. */
Test(layers_lint, every_option_at_once)
{
	write_file(layer[0], "cage 1\nparam workspace : path\nprofile main {\n}\n");
	cage_options *o = cage_options_new();
	cage_options_define(o, "workspace=/tmp");
	cage_options_include(o, "/nonexistent");
	cage_options_home(o, "/home/someone");
	cage_options_profile(o, "main");
	cr_assert(cage_options_target(o, "linux"));
	const char *kinds[] = { "policy" };
	const bool untrusted[] = { true };
	struct ll_request rq = { .file = layer[0], .opts = o, .stdlib = CAGE_SOURCE_DIR "/stdlib",
				 .kinds = kinds, .untrusted = untrusted, .nlayers = 1,
				 .task = 0, .command = 0 };
	struct ll_verdict v;
	char why[512];
	cr_expect(!ll_ask(&rq, &v, why, sizeof why));
	cr_expect(strstr(why, "exited with status 1") != NULL, "%s", why);
	cage_options_free(o);
}
