/*
 * gs_config.h - a small, strict reader of git's configuration files, for
 * the launch-time git discovery (gs.h). cagerun must not run git before
 * the cage exists (it is slow, and it would run the user's git, hooks and
 * fsmonitor outside the cage), so it reads the files git reads itself.
 *
 * The syntax is git's (git-config(1), "CONFIGURATION FILE"): sections
 * `[s]`, `[s "sub"]` and the old `[s.sub]`, keys, quoted values with the
 * escapes \n \t \b \\ \", continuation lines, `#` and `;` comments, a
 * UTF-8 byte order mark, CRLF. Names are lowercased as git lowercases
 * them (section and key; a quoted subsection keeps its case). Anything git
 * refuses is refused here too, and a few things git accepts but that this
 * reader cannot follow safely are refused as well (a NUL byte, a
 * `%(prefix)` include): the caller then refuses the run rather than skip
 * a file. Differentially tested against `git config --list --show-origin
 * --includes -z` (testsuite/gitscan/).
 *
 * Includes: `include.path` and every `includeIf.COND.path` are followed
 * whatever COND says (a condition such as `onbranch:` can turn true when
 * the session switches branch), depth-first where they appear, as git
 * does, at most GS_CFG_MAX_DEPTH deep. A missing include is not an error
 * (git ignores it) but is recorded: the session could create it.
 */
#ifndef CAGE_GS_CONFIG_H
#define CAGE_GS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

enum {
	GS_CFG_MAX_DEPTH = 10,         /* git's own include depth limit */
	GS_CFG_MAX_FILES = 64,         /* files read, includes counted */
	GS_CFG_MAX_BYTES = 1 << 20,    /* per file */
	GS_CFG_MAX_ENTRIES = 1 << 16,  /* over all files */
};

struct gs_cfg_entry {
	char *key;          /* "section.sub.name": section and name lowercased */
	char *value;        /* NULL: the key had no '=' (boolean true) */
	const char *origin; /* the file, as git shows it (files[] of the set) */
	unsigned line;
};

struct gs_cfg_file {
	char *path;   /* as git names it: the top file as given, includes joined */
	bool missing; /* does not exist (an include git skips) */
	bool is_include;
};

struct gs_cfg {
	struct gs_cfg_entry *v;
	size_t n, cap;
	struct gs_cfg_file *files;
	size_t nfiles, fcap;
	const char *home; /* for `~/` in include paths; may be NULL */
};

/* An error, as "FILE:LINE: message". */
struct gs_err {
	char msg[1024];
};

/* Parses text[0..len) from `origin` and appends its entries (includes are
 * not followed). False with *e set on a line git refuses or this reader
 * will not interpret. */
bool gs_cfg_parse(struct gs_cfg *c, const char *text, size_t len, const char *origin,
		  struct gs_err *e);

/* Reads `path` and every file it includes. A missing `path` is recorded
 * as missing, not an error. */
bool gs_cfg_load(struct gs_cfg *c, const char *path, struct gs_err *e);

/* An include's value as a path: `~/` from home, `~user/` from the
 * password database, relative to the directory of `from` (as git joins
 * them). NULL with *e set when it cannot be expanded (`%(prefix)`, an
 * unknown user); malloc'd. */
char *gs_cfg_expand_path(const struct gs_cfg *c, const char *value, const char *from,
			 struct gs_err *e);

/* The last value of `key` (lowercased, exact), or NULL; *found says
 * whether it was set at all. */
const char *gs_cfg_get(const struct gs_cfg *c, const char *key, bool *found);

void gs_cfg_free(struct gs_cfg *c);

#endif
