/*
 * fx_policy.c - a profile compiled over a fixture tree (fx_policy.h).
 */
#include "fx_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cage_policy *fx_policy(const struct fx_tree *t, const char *body)
{
	size_t cap = strlen(body) + 64;
	char *text = malloc(cap);
	char def[sizeof t->root + 4];
	cage_options *o = cage_options_new();
	if (!text || !o) {
		fprintf(stderr, "fx_policy: out of memory\n");
		abort();
	}
	snprintf(text, cap, "cage 1\nparam r : path\nprofile t {\n%s\n}\n", body);
	snprintf(def, sizeof def, "r=%s", t->root);
	cage_options_define(o, def);
	cage_options_home(o, "/nonexistent-home");
	cage_options_target(o, "linux");
	cage_policy *pol = cage_load_string("t.cage", text, strlen(text), o);
	cage_options_free(o);
	free(text);
	return pol;
}
