/*
 * diag.h - source files, locations and diagnostics.
 *
 * Every message the compiler produces is a value in a diag_list, carrying the
 * file, line, display column and byte span it is about, so the caller decides
 * how (and whether) to print it. Rendering follows gcc:
 *     file:line:col: error: message [id]
 *      line text
 *          ^~~~~
 * followed by notes (the second rule of a two-rule finding, the import chain).
 */
#ifndef CAGE_DIAG_H
#define CAGE_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "arena.h"

/* A loaded source file. Files are owned by the policy's arena. */
struct src_file {
	const char *name;     /* as shown in diagnostics (stable, relative) */
	const char *realpath; /* resolved path used for cycle detection; may be NULL */
	const char *text;     /* NUL-terminated copy of the contents */
	size_t len;
	int id;
	/* The standard library directory this file's name is relative to
	 * ("std/secrets.cage"), NULL for the user's own files. */
	const char *stdlib_root;
	/* Where this file was first imported from (NULL for the main file). */
	const struct src_file *importer;
	uint32_t import_line, import_col;
};

struct loc {
	const struct src_file *file; /* NULL: no source location (e.g. -D) */
	uint32_t line, col;          /* 1-based; col is the display column */
	uint32_t off, len;           /* byte span in file->text */
};

enum diag_sev { DIAG_NOTE, DIAG_WARNING, DIAG_ERROR };

struct diag_note {
	struct loc loc;
	const char *msg;
	struct diag_note *next;
};

struct diag {
	enum diag_sev sev;
	struct loc loc;
	const char *id; /* stable check id, e.g. "syntax", "unsafe-order" */
	const char *msg;
	struct diag_note *notes, **notes_tail;
};

struct diag_list {
	struct arena *arena;
	struct diag **items;
	size_t n, cap;
	size_t errors, warnings;
	size_t max_errors; /* 0 = unlimited; beyond it diagnostics are counted, not kept */
	size_t dropped;
};

void diag_list_init(struct diag_list *dl, struct arena *a);
void diag_list_free(struct diag_list *dl); /* frees the item vector only */

struct diag *diag_add(struct diag_list *dl, enum diag_sev sev, struct loc loc,
		      const char *id, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void diag_note(struct diag_list *dl, struct diag *d, struct loc loc,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Display column (1-based) of byte offset `off` in `text`, counting from the
 * start of its line: tabs advance to the next multiple of 8, a UTF-8 sequence
 * counts as one column (as gcc's -fdiagnostics-column-unit=display). */
uint32_t diag_display_col(const char *text, size_t line_start, size_t off);
/* The same count carried on: the 0-based column after the bytes [s, e)
 * when s is at 0-based column col (the lexer goes token by token; the
 * newline after a comment spans the whole comment, so plain ASCII is
 * counted 8 bytes at a time). */
uint32_t diag_columns(const char *s, const char *e, uint32_t col);

/* The import chain of `file` as notes, innermost first. */
void diag_add_import_chain(struct diag_list *dl, struct diag *d,
			   const struct src_file *file);

/* Orders diagnostics by file and position (stable). */
void diag_sort(struct diag_list *dl);
void diag_render_one(FILE *out, const struct diag *d, bool color);
void diag_render(FILE *out, const struct diag_list *dl, bool color);
const char *diag_sev_name(enum diag_sev sev);

#endif
