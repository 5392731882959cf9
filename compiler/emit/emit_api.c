/*
 * emit_api.c - the backends' part of the public interface (cage.h):
 * naming and running a backend on a loaded policy. It lives beside the
 * backend table rather than in api.c so that a program which only loads
 * and queries policies (cagerun) does not link every emitter.
 */
#include "emit.h"
#include "cage.h"
#include "policy.h"

const char *cage_backend_name(size_t i)
{
	size_t n;
	const struct emit_backend *b = emit_backends(&n);
	return i < n ? b[i].name : NULL;
}

bool cage_emit(cage_policy *p, const char *backend, FILE *out, const char **err)
{
	const struct emit_backend *b = emit_find(backend);
	if (!b) {
		*err = "unknown backend";
		return false;
	}
	if (!p->ir || !p->ir->selected) {
		*err = "the policy has errors; nothing is emitted";
		return false;
	}
	return b->fn(p->ir, p->ir->selected, out, &p->arena, err);
}
