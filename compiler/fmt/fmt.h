/*
 * fmt.h - the canonical formatter behind `cagec fmt`.
 *
 * The formatter works on the token stream, comments included, rather than
 * on the AST, so that nothing the author wrote can fall through the cracks.
 * It refuses files with syntax errors, and it checks its own output before
 * handing it back: the output must parse, and its tokens (string values,
 * names, statement ends) and comments must be exactly those of the input.
 * A formatter bug therefore shows up as an error, never as a changed policy.
 * The canonical style is documented in docs/language.md, "Formatting".
 */
#ifndef CAGE_FMT_H
#define CAGE_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "arena.h"
#include "diag.h"

/* Lines longer than this many display columns are wrapped after commas. */
enum { FMT_WIDTH = 100, FMT_INDENT = 4 };

/* Formats f->text (NUL-terminated, f->len bytes). On success returns true
 * and *out is a malloc'd NUL-terminated canonical text of *outlen bytes,
 * owned by the caller. On failure returns false with the reasons in diags
 * (syntax errors of the input, or a failed self-check); *out is NULL.
 * Arena `a` holds scratch data (and the diagnostics' text). */
bool fmt_source(const struct src_file *f, struct arena *a, struct diag_list *diags,
		char **out, size_t *outlen);

/* A minimal unified diff of a -> b (shortest edit script, hunks with
 * context, as diff -u), headed "--- name" / "+++ name (label)"; past
 * max_lines changed lines it stops on a hunk boundary and says how many
 * hunks it left out (0: no cap). What it prints always applies. */
void fmt_print_diff(FILE *out, const char *name, const char *label, const char *a, size_t alen,
		    const char *b, size_t blen, size_t max_lines);

/* The `cagec fmt` command: argv[0] is "fmt". Writes formatted text or
 * reports to `out`, diagnostics and errors to `err`. Returns the exit
 * status: 0 ok, 1 a file has syntax errors or (with --check) would change,
 * 2 usage or I/O error. */
int fmt_command(int argc, char **argv, FILE *out, FILE *err);

#endif
