/*
 * fx_tree.c - scratch directory trees for unit tests (fx_tree.h).
 */
#include "fx_tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void fx_die(const char *what, const char *path)
{
	fprintf(stderr, "fx_tree: %s %s: %s\n", what, path, strerror(errno));
	abort();
}

void fx_make(struct fx_tree *t, const char *tag)
{
	char tmpl[128], real[PATH_MAX];
	snprintf(tmpl, sizeof tmpl, "/tmp/cage-%.40s.XXXXXX", tag);
	if (!mkdtemp(tmpl) || !realpath(tmpl, real) || strlen(real) >= sizeof t->root)
		fx_die("mkdtemp", tmpl);
	/* The length was checked above; memcpy, since gcc at -O0 cannot see
	 * that and warns about snprintf's truncation. */
	memcpy(t->root, real, strlen(real) + 1);
}

void fx_remove(struct fx_tree *t)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->root);
	if (system(cmd) != 0)
		fx_die("rm -rf", t->root);
}

void fx_at(const struct fx_tree *t, char out[PATH_MAX], const char *rel)
{
	int n = snprintf(out, PATH_MAX, "%s/%.3000s", t->root, rel);
	if (n <= 0 || n >= PATH_MAX)
		fx_die("too long a path under", t->root);
}

void fx_mkdirs(const struct fx_tree *t, const char *rel)
{
	char p[PATH_MAX];
	fx_at(t, p, rel);
	for (char *s = p + strlen(t->root) + 1;; s++) {
		char c = *s;
		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			fx_die("mkdir", p);
		*s = c;
		if (!c)
			break;
	}
}

void fx_file(const struct fx_tree *t, const char *rel, const char *text, mode_t mode)
{
	char p[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	if (slash) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - rel), rel);
		fx_mkdirs(t, dir);
	}
	fx_at(t, p, rel);
	FILE *f = fopen(p, "w");
	if (!f)
		fx_die("fopen", p);
	fputs(text, f);
	if (fclose(f) != 0 || chmod(p, mode) != 0)
		fx_die("write", p);
}

void fx_link(const struct fx_tree *t, const char *target, const char *rel)
{
	char p[PATH_MAX];
	fx_at(t, p, rel);
	if (symlink(target, p) != 0)
		fx_die("symlink", p);
}
