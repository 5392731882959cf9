/*
 * pat_rel.h - exact relations between rule targets: do two patterns share a
 * path (overlap), does one cover every path of the other (contains), and
 * which part of one the other covers.
 *
 * The checker's findings ("this allow re-opens what line 4 denies") are only
 * as good as these answers, so they are decided, not guessed: path globs are
 * compared as automata over a small alphabet (the literal characters of both
 * patterns, '/', '.', and one "any other character" class) intersected with
 * the language of normalised absolute paths. `~/.ssh-backup` is not under
 * `~/.ssh` and below; `~/ ** /id_*` (spaces added) overlaps `~/.ssh/id_rsa`.
 *
 * Path semantics follow ir.h: `*` any run without '/', `?` one character but
 * '/', `**` any run including '/'; a final slash-doublestar also matches
 * the directory itself and one in the middle also matches a single "/". Only
 * normalised paths count (absolute, no "//", no "." or ".." component, no
 * trailing '/' except the root).
 *
 * Witnesses and counterexamples are concrete paths (shortest first), so
 * messages can say "e.g. ~/.ssh/id_" instead of hand-waving.
 */
#ifndef CAGE_PAT_REL_H
#define CAGE_PAT_REL_H

#include <stdbool.h>
#include <stddef.h>

#include "ir.h"

enum pat_ans {
	PAT_NO = 0,
	PAT_YES = 1,
	/* The state budget ran out (only pathological globs such as long runs
	 * of '?' after '**' get there) or memory did: no answer. Callers must
	 * treat this conservatively and say so. */
	PAT_UNKNOWN = 2,
};

/* Room for a witness path: a pattern's length plus what the search adds. */
#define PAT_WITNESS_MAX 8192

/* Is there a normalised path that both patterns match? On PAT_YES and when
 * `wit` is not NULL, a shortest such path is written there (truncated to
 * `size`, always NUL-terminated). */
enum pat_ans pat_glob_overlap(const char *a, size_t alen, const char *b, size_t blen,
			      char *wit, size_t size);
/* Does `a` match every normalised path `b` matches? On PAT_NO and when `cex`
 * is not NULL, a shortest path b matches and a does not is written there. */
enum pat_ans pat_glob_contains(const char *a, size_t alen, const char *b, size_t blen,
			       char *cex, size_t size);
/* Does the pattern match this (normalised) path? */
bool pat_glob_match(const char *pat, size_t plen, const char *path, size_t len);

enum pat_ans pat_path_overlap(const struct ir_path *a, const struct ir_path *b,
			      char *wit, size_t size);
/* True when A is a tree ("DIR" then a final "**" component) and B's literal start lies at or below
 * DIR, so that A contains B; answered from the text alone. False says
 * nothing. */
bool pat_path_inside_tree(const struct ir_path *a, const struct ir_path *b);
enum pat_ans pat_path_contains(const struct ir_path *a, const struct ir_path *b,
			       char *cex, size_t size);

/* The part of `b` that `a` covers. */
enum pat_cover_kind {
	PAT_COVER_NONE,    /* no path in common */
	PAT_COVER_ALL,     /* a covers all of b */
	PAT_COVER_INSIDE,  /* a lies strictly inside b: the part is a itself */
	PAT_COVER_SOME,    /* neither contains the other; `example` is shared */
	PAT_COVER_UNKNOWN, /* budget exhausted; treat as overlapping */
};

struct pat_cover {
	enum pat_cover_kind kind;
	char example[PAT_WITNESS_MAX]; /* a path in both (ALL, INSIDE, SOME) */
};

void pat_path_cover(const struct ir_path *a, const struct ir_path *b,
		    struct pat_cover *out);

/* `path` as the user would write it: "~/..." when it starts with the
 * home prefix of `like` (text[0..home_len)). */
void pat_display(const struct ir_path *like, const char *path, char *buf, size_t size);

/* ---- hosts ---- */

/* Is there a (host, port) both match? Witness like "x.example.com:443". */
bool pat_host_overlap(const struct ir_host *a, const struct ir_host *b,
		      char *wit, size_t size);
/* Does `a` match every (host, port) `b` matches? */
bool pat_host_contains(const struct ir_host *a, const struct ir_host *b);

/* ---- Mach service names (exact or prefix) ---- */
bool pat_mach_overlap(const struct ir_mach *a, const struct ir_mach *b);
bool pat_mach_contains(const struct ir_mach *a, const struct ir_mach *b);

#endif
