/*
 * inputs.c - whether what a compile looked at on disk answers as it did
 * (see inputs.h). Each record is asked again the way the resolver asked
 * it: access(2), the real path (load_realpath), the file read whole
 * (load_read). Any difference, an errno included, counts as a change.
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

static bool same(const struct policy_input *in, struct load_realdirs *dirs)
{
	switch (in->kind) {
	case INPUT_PROBE: {
		int err = access(in->path, F_OK) == 0 ? 0 : errno;
		return err == in->err;
	}
	case INPUT_REAL: {
		char real[PATH_MAX];
		if (!load_realpath(dirs, in->path, real))
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
	/* Asked as the resolver asked, directories kept for this pass only. */
	struct arena a;
	arena_init(&a);
	struct load_realdirs dirs = { .a = &a };
	bool all = true;
	for (size_t i = 0; all && i < p->ninputs; i++)
		if (!same(&p->inputs[i], &dirs)) {
			*changed = p->inputs[i].path;
			all = false;
		}
	load_realdirs_free(&dirs);
	arena_free(&a);
	return all;
}
