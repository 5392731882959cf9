/*
 * shimcfg.h - the version managers' own files, read as the managers read
 * them, for the command layer's shim resolution (shims.h): asdf's and
 * mise's `.tool-versions`, the subset of mise.toml that names tool
 * versions, and the JSON of volta's platform.json, its bin and package
 * records and a package.json's "volta" key.
 *
 * Each parser is strict and bounded: a file of at most SHC_MAX_FILE bytes,
 * lines of at most SHC_MAX_LINE, JSON nested at most SHC_MAX_DEPTH deep.
 * What it does not understand is an error, never a guess; errors are
 * values, "FILE:LINE: what" in the caller's buffer.
 */
#ifndef CAGE_SHIMCFG_H
#define CAGE_SHIMCFG_H

#include <stdbool.h>
#include <stddef.h>

enum {
	SHC_MAX_FILE = 1 << 20,
	SHC_MAX_LINE = 4096,
	SHC_MAX_DEPTH = 32,
	SHC_MAX_TOOLS = 64,
	SHC_MAX_VERS = 8,
	SHC_NAME = 256,
};

struct shc_tool {
	char name[SHC_NAME];               /* "nodejs", "node", "npm:@scope/pkg" */
	char vers[SHC_MAX_VERS][SHC_NAME]; /* in the file's order */
	size_t nvers;
	unsigned line; /* where it was named */
};

struct shc_tools {
	struct shc_tool t[SHC_MAX_TOOLS];
	size_t n;
};

/* Reads `path` whole. 1: *text (malloc'd, NUL-terminated, free it) and
 * *len; 0: there is no such file; -1: err says why (too large, a
 * directory, unreadable). */
int shc_read(const char *path, char **text, size_t *len, char *err, size_t errlen);

/* `.tool-versions`: `TOOL VERSION...` per line, `#` comments. */
bool shc_tool_versions(const char *file, const char *text, size_t len, struct shc_tools *out,
		       char *err, size_t errlen);

/* mise.toml's [tools] table: `name = "V"`, `name = ["V", ...]`,
 * `name = { version = "V", ... }`, `"backend:name" = ...`, and
 * `[tools.name]` tables with `version = "V"`. Other tables are skipped,
 * multi-line strings in them included. */
bool shc_mise_toml(const char *file, const char *text, size_t len, struct shc_tools *out,
		   char *err, size_t errlen);

/* The tool named `name` in t, or NULL. */
const struct shc_tool *shc_find(const struct shc_tools *t, const char *name);

/* JSON: the whole text is checked; the string at the object keys `path`
 * (npath of them) is copied to out. *found is false when a key on the
 * way is absent or the value is null; a value of another type is an
 * error. */
bool shc_json_str(const char *file, const char *text, size_t len, const char *const *path,
		  size_t npath, char *out, size_t outlen, bool *found, char *err, size_t errlen);

#endif
