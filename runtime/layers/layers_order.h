/*
 * layers_order.h - which layer a compiled item came from, and the order a
 * task layer runs in: what cagerun's composition (layers.c) and lint's
 * judgment of it in cage-lint (runtime/layers/lint/) must agree on, so
 * that lint judges the rules in the order they run.
 */
#ifndef CAGE_LAYERS_ORDER_H
#define CAGE_LAYERS_ORDER_H

#include <stdbool.h>
#include <stddef.h>

#include "cage.h"

struct src_file;
struct ir_policy;

/* The composition's root file (the text compiled), or NULL. */
const struct src_file *layers_root(const cage_policy *p);

/* The files the root imports, in order, into out[0..max) (NULL for an
 * import that failed); how many. These are the layers. */
size_t layers_imported(const cage_policy *p, const struct src_file **out, size_t max);

/* Whether `f` was first loaded through `layer` (or is it). */
bool layers_from(const struct src_file *f, const struct src_file *layer);

/* Without --profile (profile_given false): the last profile of the task
 * layer, else of a trusted project layer, else of -p's policy (under
 * --task), else the load's own choice. The layers are the root's imports:
 * their kinds, their files (NULL when an import failed) and whether each
 * is untrusted, n of each. */
void layers_select(struct ir_policy *ir, bool profile_given, const char *const *kinds,
		   const struct src_file *const *srcs, const bool *untrusted, size_t n);

/* -p POLICY --task FILE: the task's rules and environment steps, each in
 * its own order, moved after all of the policy's, and the guards derived
 * again for the new order. */
void layers_task_to_end(cage_policy *pol, const struct src_file *task);

#endif
