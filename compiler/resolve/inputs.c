/*
 * inputs.c - whether what a compile looked at on disk answers as it did
 * (see inputs.h). Each record is asked again the way the resolver asked
 * it: access(2), realpath(3), the file read whole (load_read). Any
 * difference, an errno included, counts as a change.
 */
#include "inputs.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "load.h"
#include "policy.h"

static bool same(const struct policy_input *in)
{
	switch (in->kind) {
	case INPUT_PROBE: {
		int err = access(in->path, F_OK) == 0 ? 0 : errno;
		return err == in->err;
	}
	case INPUT_REAL: {
		char real[PATH_MAX];
		if (!realpath(in->path, real))
			return in->err != 0 && errno == in->err;
		return in->err == 0 && !strcmp(real, in->real);
	}
	case INPUT_FILE: {
		struct arena a;
		arena_init(&a);
		char *text;
		size_t len;
		const char *err;
		bool ok = load_read(&a, in->path, &text, &len, &err) && len == in->len &&
			  !memcmp(text, in->text, len);
		arena_free(&a);
		return ok;
	}
	}
	return false;
}

bool policy_inputs_unchanged(const struct cage_policy *p, const char **changed, size_t *n)
{
	*n = p->ninputs;
	for (size_t i = 0; i < p->ninputs; i++)
		if (!same(&p->inputs[i])) {
			*changed = p->inputs[i].path;
			return false;
		}
	return true;
}
