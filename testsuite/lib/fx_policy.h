/*
 * fx_policy.h - test-only: a profile compiled over a fixture tree (see
 * fx_tree.h), for the unit tests of the Linux plan and its artifact. The
 * body's rules name the tree as the path param `r`; `~` is a home that
 * does not exist, so nothing of the machine's own home leaks in.
 */
#ifndef CAGE_FX_POLICY_H
#define CAGE_FX_POLICY_H

#include "cage.h"
#include "fx_tree.h"

/* "cage 1 / param r : path / profile t { BODY }" with -D r=ROOT, for the
 * Linux target. The policy may carry errors: callers assert what they
 * expect. Aborts on out-of-memory, as fx_tree's helpers do on failure. */
cage_policy *fx_policy(const struct fx_tree *t, const char *body);

#endif
