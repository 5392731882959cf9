/*
 * sg.h - `cagec suggest`: from the would-block (or denied) records of a
 * monitor log to the smallest set of policy lines that covers them, and
 * `cagec monitor-report`, the run's summary again from its log.
 *
 * What may never be proposed (a path under a `protect` or any explicit deny
 * of the policy, which includes what an imported std module guards, a
 * built-in secret location, a unix socket or a direct connection to an
 * address, which no Linux policy line can open) is listed apart as
 * "wanted, refused", with the reason.
 */
#ifndef CAGE_SG_H
#define CAGE_SG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "arena.h"

struct ir_path;

/* A place no grant may reach: a collapsed tree of DIR is never made where
 * DIR holds one of these (the literal part of a pattern, a directory). */
struct sg_fence {
	const char **dirs;
	size_t n;
};

/* One grant target: an exact path or a tree (DIR and everything below it). */
struct sg_target {
	const char *path; /* for a tree: DIR */
	bool tree;
};

/* Collapses the targets of one access (sorted, duplicates and targets
 * below a tree in the set are dropped): wherever at least `min_share`
 * targets sit directly in one directory, they become one tree grant of DIR,
 * repeatedly, deepest first, except where DIR is shallower than
 * `min_depth` components, is `home` itself or one of its ancestors, or
 * holds a fence. Returns the new count; t is rewritten in place (paths
 * from `a`). */
size_t sg_collapse(struct arena *a, struct sg_target *t, size_t n, size_t min_share,
		   size_t min_depth, const char *home, const struct sg_fence *fence);

/* Whether a tree grant of dir is acceptable, by the rules above. */
bool sg_tree_allowed(const char *dir, size_t min_depth, const char *home,
		     const struct sg_fence *fence);

/* The subcommands: argv[0] is the subcommand name. Exit status 0, 1 (a
 * policy error), 2 (usage or I/O). */
int suggest_main(int argc, char **argv);
int monitor_report_main(int argc, char **argv);

#endif
