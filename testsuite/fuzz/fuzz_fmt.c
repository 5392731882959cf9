/*
 * fuzz_fmt.c - libFuzzer target for the formatter: on arbitrary bytes it
 * must either refuse (syntax errors) or produce text that formats to
 * itself, and its self-check (output means the same policy) must never
 * fail - that would be a formatter bug, so it aborts to be reported.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool fuzz_fmt(const char *text, size_t len, char **out, size_t *outlen)
{
	struct arena a;
	arena_init(&a);
	struct diag_list d;
	diag_list_init(&d, &a);
	char *copy = arena_strndup(&a, text, len); /* the formatter wants a NUL sentinel */
	struct src_file f = { .name = "fuzz.cage", .text = copy, .len = len };
	bool ok = fmt_source(&f, &a, &d, out, outlen);
	for (size_t i = 0; i < d.n; i++)
		if (strcmp(d.items[i]->id, "fmt") == 0)
			abort(); /* the self-check failed */
	diag_list_free(&d);
	arena_free(&a);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *once = NULL, *twice = NULL;
	size_t n1 = 0, n2 = 0;
	if (!fuzz_fmt((const char *)data, size, &once, &n1))
		return 0;
	if (!fuzz_fmt(once, n1, &twice, &n2) || n1 != n2 || memcmp(once, twice, n1) != 0)
		abort(); /* not idempotent */
	free(once);
	free(twice);
	return 0;
}
