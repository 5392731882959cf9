/*
 * fx_tree.h - test-only helpers for unit tests that lay out a scratch
 * directory tree (an install, a home): a private root under /tmp, paths
 * under it, files with their parent folders, links, and removal. Each
 * aborts the test program on failure (a bug in the test or the machine).
 */
#ifndef CAGE_FX_TREE_H
#define CAGE_FX_TREE_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

struct fx_tree {
	char root[256]; /* a real path */
};

/* Makes a fresh directory /tmp/cage-TAG.XXXXXX. */
void fx_make(struct fx_tree *t, const char *tag);
/* Removes it and all below it. */
void fx_remove(struct fx_tree *t);
/* out = ROOT/rel. */
void fx_at(const struct fx_tree *t, char out[PATH_MAX], const char *rel);
/* ROOT/rel and the folders above it. */
void fx_mkdirs(const struct fx_tree *t, const char *rel);
/* ROOT/rel holding text, with mode; its folders made as needed. */
void fx_file(const struct fx_tree *t, const char *rel, const char *text, mode_t mode);
/* ROOT/rel, a symbolic link to target. */
void fx_link(const struct fx_tree *t, const char *target, const char *rel);

#endif
