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

/* The composition's root file (the text compiled), or NULL. */
const struct src_file *layers_root(const cage_policy *p);

/* The files the root imports, in order, into out[0..max) (NULL for an
 * import that failed); how many. These are the layers. */
size_t layers_imported(const cage_policy *p, const struct src_file **out, size_t max);

/* Whether `f` was first loaded through `layer` (or is it). */
bool layers_from(const struct src_file *f, const struct src_file *layer);

/* -p POLICY --task FILE: the task's rules and environment steps, each in
 * its own order, moved after all of the policy's, and the guards derived
 * again for the new order. */
void layers_task_to_end(cage_policy *pol, const struct src_file *task);

#endif
