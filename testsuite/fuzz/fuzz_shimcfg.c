/*
 * fuzz_shimcfg.c - libFuzzer target for the version managers' file
 * readers (runtime/layers/shimcfg.c). Built only with -DCAGE_FUZZ=ON and
 * clang (testsuite/cmake/fuzz_shimcfg.cmake).
 *
 * The input's first byte picks the reader (.tool-versions, mise.toml,
 * JSON), the rest is the file. Whatever it is, the reader either fails
 * with a "FILE:LINE: " message or returns what it promises: tools within
 * the bounds, each named once with at least one version, every version a
 * plain directory name, and a JSON value found only as a NUL-terminated
 * string that fits.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shimcfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_tools(const struct shc_tools *t)
{
	if (t->n > SHC_MAX_TOOLS)
		abort();
	for (size_t i = 0; i < t->n; i++) {
		const struct shc_tool *x = &t->t[i];
		if (!x->name[0] || x->nvers == 0 || x->nvers > SHC_MAX_VERS || !x->line)
			abort();
		if (shc_find(t, x->name) != x) /* named once */
			abort();
		for (size_t v = 0; v < x->nvers; v++)
			if (!x->vers[v][0] || strchr(x->vers[v], '/') || !strcmp(x->vers[v], "..") ||
			    strlen(x->vers[v]) >= SHC_NAME)
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	char err[512] = "";
	struct shc_tools *t = malloc(sizeof *t);
	if (!t)
		return 0;
	bool ok;
	switch (data[0] % 3) {
	case 0:
		ok = shc_tool_versions("f", text, len, t, err, sizeof err);
		if (ok)
			check_tools(t);
		break;
	case 1:
		ok = shc_mise_toml("f", text, len, t, err, sizeof err);
		if (ok)
			check_tools(t);
		break;
	default: {
		static const char *const path[] = { "volta", "node" };
		char out[64];
		bool found;
		ok = shc_json_str("f", text, len, path, 2, out, sizeof out, &found, err, sizeof err);
		if (ok && found && strlen(out) >= sizeof out)
			abort();
		if (ok && !found && out[0])
			abort();
		break;
	}
	}
	free(t);
	if (!ok && strncmp(err, "f:", 2) != 0)
		abort();
	return 0;
}
