/*
 * fuzz_policy.c - libFuzzer target for the whole front end: lexer, parser,
 * resolver and IR printer on arbitrary bytes. Any input must give
 * diagnostics or IR, never a crash, a leak or undefined behaviour.
 * Imports resolve relative to the current directory, so run it in an
 * empty scratch directory.
 */
#include <stdint.h>
#include <stdio.h>

#include "cage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cage_options *o = cage_options_new();
	if (!o)
		return 0;
	cage_options_home(o, "/home/fuzz");
	cage_options_define(o, "workspace=/w");
	cage_policy *p = cage_load_string("fuzz.cage", (const char *)data, size, o);
	if (p) {
		FILE *null = fopen("/dev/null", "w");
		if (null) {
			cage_print_diagnostics(p, null, false);
			const char *err;
			for (size_t i = 0; cage_backend_name(i); i++)
				cage_emit(p, cage_backend_name(i), null, &err);
			struct cage_verdict v;
			cage_query_path(p, "read", "/w/a", &v, &err);
			cage_query_host(p, "github.com", 443, &v, &err);
			fclose(null);
		}
		cage_policy_free(p);
	}
	cage_options_free(o);
	return 0;
}
