/*
 * sg_collapse.c - folding many grants that share a folder into one grant
 * of the folder (see sg_collapse in suggest.h). Deepest folders first, so
 * that ~/.cache/pip/http/a, b, c become one tree grant of ~/.cache/pip/http before
 * anyone looks at ~/.cache.
 */
#include "sg.h"

#include <stdlib.h>
#include <string.h>

static bool at_or_below(const char *dir, const char *path)
{
	size_t n = strlen(dir);
	if (n == 1)
		return path[0] == '/';
	return !strncmp(dir, path, n) && (path[n] == '/' || !path[n]);
}

static int by_path(const void *x, const void *y)
{
	const struct sg_target *a = x, *b = y;
	int c = strcmp(a->path, b->path);
	return c ? c : (int)b->tree - (int)a->tree; /* the tree first */
}

static size_t depth(const char *p)
{
	size_t d = 0;
	for (; *p; p++)
		d += *p == '/';
	return p[-1] == '/' ? 0 : d;
}

/* Sorts, and drops duplicates and anything below a tree of the set. */
static size_t tidy(struct sg_target *t, size_t n)
{
	qsort(t, n, sizeof *t, by_path);
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		bool covered = false;
		for (size_t j = 0; j < w && !covered; j++)
			covered = (t[j].tree && at_or_below(t[j].path, t[i].path)) ||
				  (!t[j].tree && !t[i].tree && !strcmp(t[j].path, t[i].path));
		if (!covered)
			t[w++] = t[i];
	}
	return w;
}

bool sg_tree_allowed(const char *dir, size_t min_depth, const char *home,
			 const struct sg_fence *fence)
{
	if (depth(dir) < min_depth)
		return false;
	if (home && at_or_below(dir, home))
		return false;
	for (size_t i = 0; fence && i < fence->n; i++)
		if (at_or_below(dir, fence->dirs[i]))
			return false;
	return true;
}

size_t sg_collapse(struct arena *a, struct sg_target *t, size_t n, size_t min_share,
		   size_t min_depth, const char *home, const struct sg_fence *fence)
{
	n = tidy(t, n);
	for (;;) {
		/* the deepest directory holding min_share targets directly */
		const char *best = NULL;
		size_t best_depth = 0;
		for (size_t i = 0; i < n; i++) {
			const char *sl = strrchr(t[i].path, '/');
			size_t len = sl == t[i].path ? 1 : (size_t)(sl - t[i].path);
			char *dir = arena_strndup(a, t[i].path, len);
			size_t d = len == 1 ? 0 : depth(dir);
			if (best && d <= best_depth)
				continue;
			size_t share = 0;
			for (size_t j = 0; j < n; j++) {
				const char *s2 = strrchr(t[j].path, '/');
				size_t l2 = s2 == t[j].path ? 1 : (size_t)(s2 - t[j].path);
				share += l2 == len && !strncmp(t[j].path, dir, len);
			}
			if (share >= min_share && sg_tree_allowed(dir, min_depth, home, fence)) {
				best = dir;
				best_depth = d;
			}
		}
		if (!best)
			return n;
		struct sg_target tree = { best, true };
		size_t w = 0;
		for (size_t i = 0; i < n; i++)
			if (!at_or_below(best, t[i].path))
				t[w++] = t[i];
		t[w++] = tree;
		n = tidy(t, w);
	}
}
