/*
 * fx_pattern.c - test-only: path patterns in the resolver's normal form
 * (fx_pattern.h).
 */
#include "fx_pattern.h"

#include <string.h>

#include "path.h"

bool fx_resolver_form(struct arena *a, const char *text, struct ir_path *out)
{
	char *norm;
	const char *err;
	if (!path_normalize(a, text, strlen(text), &norm, &err) || strcmp(norm, text) != 0)
		return false;
	memset(out, 0, sizeof *out);
	out->text = norm;
	path_classify(out);
	return true;
}
