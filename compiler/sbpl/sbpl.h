/*
 * sbpl.h - the Seatbelt (SBPL) backend: turns the selected profile of a
 * resolved policy into a profile for /usr/bin/sandbox-exec.
 *
 * The facts this backend relies on, and where each comes from, are written
 * down in docs/sbpl.md. The two that shape everything here:
 *   - for one operation the last matching rule wins, but a rule on a
 *     specific operation beats its wildcard parent in any order, so every
 *     policy rule is written on concrete (leaf) operations only;
 *   - paths are matched after symlink resolution, so /tmp, /var and /etc
 *     are written as their /private targets.
 * The pieces below are exported for the unit tests and for the
 * differential tests that compare the IR evaluator with an SBPL evaluator.
 */
#ifndef CAGE_SBPL_H
#define CAGE_SBPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir.h"

/* Longest string literal (after escaping) we put in a profile. Seatbelt
 * rejects literals of "about 1 KiB"; we stay under that with a margin. */
#define SBPL_MAX_STRING 1000

/* Widest loopback port range written out port by port. */
#define SBPL_MAX_LOOPBACK_PORTS 1024

/* The -D parameters a profile may need; each is listed in the header
 * comment of every profile that uses it. */
#define SBPL_PARAM_PROXY_PORT "PROXY_PORT"
#define SBPL_PARAM_PRIVATE_TMP "PRIVATE_TMP"
#define SBPL_PARAM_PRIVATE_HOME "PRIVATE_HOME"

/* The backend (see emit.h for the contract). Refuses mode off. */
bool sbpl_emit(const struct ir_policy *pol, const struct ir_profile *prof, FILE *out,
	       struct arena *a, const char **err);

/* As sbpl_emit, for one cagerun run: every deny rule (and the default
 * deny) carries `(with message "TAG")`, so the unified log's lines for this
 * run end with TAG and can be told from every other sandbox's
 * (runtime/seatbelt/sbx_log.h). Monitor profiles are written as without a
 * tag: their rules allow and report. tag NULL: no message. */
bool sbpl_emit_tagged(const struct ir_policy *pol, const struct ir_profile *prof,
		      const char *tag, FILE *out, struct arena *a, const char **err);
/* Whether tag is usable: 1 to 64 of a-z, 0-9 and '-' (nothing to escape). */
bool sbpl_tag_ok(const char *tag);

/* The concrete Seatbelt operations one IR access bit (a single IR_A_* bit
 * of IR_A_FILE) is written as. No operation belongs to two bits, so the
 * IR's "last matching rule per access" is Seatbelt's "last matching rule
 * per operation". Returns NULL (and *n = 0) for other bits. */
const char *const *sbpl_file_ops(uint32_t bit, size_t *n);

/* A growable output buffer; `oom` is sticky and checked once at the end. */
struct sbpl_buf {
	char *p;
	size_t len, cap;
	bool oom;
};

void sbpl_buf_free(struct sbpl_buf *b);
void sbpl_buf_putn(struct sbpl_buf *b, const char *s, size_t n);
void sbpl_buf_puts(struct sbpl_buf *b, const char *s);
void sbpl_buf_printf(struct sbpl_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appends `s` as an SBPL string literal: double quotes around it, `"` and
 * `\` escaped. Returns false (nothing useful appended) when `s` holds a
 * control character, which no literal may carry safely, or when the
 * literal would be longer than SBPL_MAX_STRING. */
bool sbpl_put_string(struct sbpl_buf *b, const char *s, size_t n);

/* Appends `s` to a comment: control characters become '?', so text taken
 * from the policy can never end the comment and start a rule. */
void sbpl_put_comment_text(struct sbpl_buf *b, const char *s);

/* Appends `c` to a regular expression so that it matches only itself. */
void sbpl_regex_putc(struct sbpl_buf *b, char c);

/* The path filters that match, among resolved macOS paths, exactly what
 * the IR pattern matches: /tmp, /var and /etc written as /private/...,
 * globs as anchored regexes. `deny` adds the `literal` beside a `subpath`
 * (Seatbelt's subpath leaves a gap for creating the directory itself).
 * Each filter is appended as " (kind \"...\")" with `indent` before it;
 * `wrap` (e.g. "remote unix-socket") puts each filter inside that form,
 * with the unix-socket spellings of the filter kinds.
 * Returns false with *err set when a string cannot be written. */
struct sbpl_filter_opts {
	bool deny;
	bool unix_socket; /* path-literal / subpath / path-regex inside (remote unix-socket ...) */
	const char *indent;
	const char *suffix; /* appended after each filter (a comment), may be NULL */
};
bool sbpl_put_path_filters(struct sbpl_buf *b, const struct ir_path *p,
			   const struct sbpl_filter_opts *o, const char **err);

/* The anchored regex ("^...$") for an IR glob `text`, for tests and for
 * the filters above. Appends to b. */
void sbpl_glob_regex(struct sbpl_buf *b, const char *text, size_t len);

/* Writes the link-resolved form of an absolute path (/tmp -> /private/tmp,
 * likewise /var and /etc) into b. */
void sbpl_resolved_path(struct sbpl_buf *b, const char *text, size_t len);

/* ---- base rules (sbpl_base.c) ---- */

/* The rules every sandboxed process needs, written before the policy's own
 * rules so that any policy rule on the same operation overrides them. */
void sbpl_put_base(struct sbpl_buf *b, enum ir_mode mode);

/* The vetted lists, exported so tests and docs can check them. */
extern const char *const sbpl_base_mach_services[];
extern const size_t sbpl_base_nmach_services;
struct sbpl_sysctl {
	const char *name;
	bool prefix; /* written as sysctl-name-prefix */
};
extern const struct sbpl_sysctl sbpl_base_sysctls[];
extern const size_t sbpl_base_nsysctls;

#endif
