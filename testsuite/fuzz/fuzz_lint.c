/*
 * fuzz_lint.c - libFuzzer target for the checker and the pattern relations.
 *
 * Every input is linted as a policy (text, JSON and SARIF written to
 * /dev/null): no crash, leak or undefined behaviour. Its first two lines,
 * taken as path patterns, also go through pat_rel, and the answers are
 * checked against the matcher: an overlap witness must match both
 * patterns, a containment counterexample must match one and not the other.
 * A wrong answer aborts, so the fuzzer reports it like a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lint.h"
#include "pat_rel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_relations(const char *a, size_t al, const char *b, size_t bl)
{
	char w[PAT_WITNESS_MAX];
	enum pat_ans o = pat_glob_overlap(a, al, b, bl, w, sizeof w);
	if (o == PAT_YES && (!pat_glob_match(a, al, w, strlen(w)) ||
			     !pat_glob_match(b, bl, w, strlen(w))))
		abort();
	enum pat_ans c = pat_glob_contains(a, al, b, bl, w, sizeof w);
	if (c == PAT_NO && (pat_glob_match(a, al, w, strlen(w)) ||
			    !pat_glob_match(b, bl, w, strlen(w))))
		abort();
	/* containment implies overlap unless b is empty */
	if (c == PAT_YES && o == PAT_NO &&
	    pat_glob_overlap(b, bl, b, bl, NULL, 0) == PAT_YES)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *t = (const char *)data;
	const char *nl = memchr(t, '\n', size);
	if (nl && size < 512) {
		const char *b = nl + 1;
		const char *nl2 = memchr(b, '\n', size - (size_t)(b - t));
		size_t bl = nl2 ? (size_t)(nl2 - b) : size - (size_t)(b - t);
		size_t al = (size_t)(nl - t);
		if (al && bl && t[0] == '/' && b[0] == '/' && !memchr(t, 0, al) && !memchr(b, 0, bl))
			check_relations(t, al, b, bl);
	}
	cage_options *o = cage_options_new();
	if (!o)
		return 0;
	cage_options_home(o, "/home/fuzz");
	cage_options_define(o, "workspace=/w");
	cage_policy *p = cage_load_string("fuzz.cage", t, size, o);
	if (p) {
		struct lint_opts lo = { .targets = LINT_T_MACOS | LINT_T_LINUX };
		lint_policy(p, &lo);
		FILE *null = fopen("/dev/null", "w");
		if (null) {
			diag_render(null, &p->diags, false);
			lint_write_json(null, &p, 1);
			lint_write_sarif(null, &p, 1);
			fclose(null);
		}
		cage_policy_free(p);
	}
	cage_options_free(o);
	return 0;
}
