/*
 * stdlib_dir.c - finds the standard library without being told: relative to
 * the running program first, so that an installed tree works wherever it is
 * put (a prefix given to `cmake --install`, a package extracted into a
 * scratch root, a tree moved after installing). The paths it falls back on
 * are compiled in by CMakeLists.txt.
 */
#include "stdlib_dir.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __APPLE__
#include <mach-o/dyld.h>
#include <stdint.h>
#endif

#ifndef CAGE_STDLIB_REL
#define CAGE_STDLIB_REL "../share/cage/stdlib"
#endif

bool stdlib_program_path(char *out, size_t cap)
{
	if (cap < PATH_MAX)
		return false;
#ifdef __APPLE__
	char raw[PATH_MAX];
	uint32_t n = sizeof raw;
	if (_NSGetExecutablePath(raw, &n) != 0)
		return false;
	return realpath(raw, out) != NULL;
#else
	/* The kernel's name for the running file is already resolved: one
	 * readlink instead of realpath's one per component. Anything else
	 * (not absolute, a file since deleted) goes the long way. */
	ssize_t n = readlink("/proc/self/exe", out, PATH_MAX - 1);
	if (n > 0 && out[0] == '/') {
		out[n] = '\0';
		if (!strstr(out, " (deleted)"))
			return true;
	}
	return realpath("/proc/self/exe", out) != NULL;
#endif
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return n > 0 && strncmp(path, dir, n) == 0 && (path[n] == '/' || dir[n - 1] == '/');
}

/* A directory we may trust: resolved, a directory, writable by its owner
 * only. */
static bool trusted_dir(const char *path, char out[PATH_MAX])
{
	struct stat st;
	return realpath(path, out) && stat(out, &st) == 0 && S_ISDIR(st.st_mode) &&
	       (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

enum stdlib_origin stdlib_dir_default(char *out, size_t cap)
{
	char exe[PATH_MAX], found[PATH_MAX];
	if (stdlib_program_path(exe, sizeof exe)) {
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			char beside[PATH_MAX + sizeof CAGE_STDLIB_REL + 1];
			snprintf(beside, sizeof beside, "%s/%s", exe, CAGE_STDLIB_REL);
			if (trusted_dir(beside, found)) {
				snprintf(out, cap, "%s", found);
				return STDLIB_BESIDE_PROGRAM;
			}
			*slash = '/';
		}
#if defined(CAGE_BUILD_DIR) && defined(CAGE_SOURCE_STDLIB)
		char build[PATH_MAX];
		if (realpath(CAGE_BUILD_DIR, build) && under(exe, build)) {
			snprintf(out, cap, "%s", CAGE_SOURCE_STDLIB);
			return STDLIB_SOURCE_TREE;
		}
#endif
	}
	snprintf(out, cap, "%s", CAGE_STDLIB_DIR);
	return STDLIB_CONFIGURED;
}

const char *stdlib_origin_name(enum stdlib_origin o)
{
	switch (o) {
	case STDLIB_BESIDE_PROGRAM: return "installed beside the program";
	case STDLIB_SOURCE_TREE: return "the source tree of this build";
	case STDLIB_CONFIGURED: break;
	}
	return "the path configured at build time";
}
