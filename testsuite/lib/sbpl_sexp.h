/*
 * sbpl_sexp.h - the s-expression reader under the test-only SBPL evaluator.
 * It knows only the lexical layer of SBPL (TinyScheme syntax as used by
 * profiles): `;` comments, lists, symbols, numbers, #t/#f, "strings" with
 * escapes and #"regex literals" whose backslashes are kept for the regex.
 * Anything else (quote, vectors, block comments, characters) is an error, so
 * that nothing an emitter writes can be skipped silently.
 */
#ifndef CAGE_SBPL_SEXP_H
#define CAGE_SBPL_SEXP_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"

enum sx_kind { SX_LIST, SX_SYM, SX_STR, SX_RSTR, SX_BOOL, SX_NUM };

struct sx {
	enum sx_kind kind;
	unsigned line, col;
	const char *text; /* SYM, STR, RSTR, NUM: NUL-terminated, decoded */
	size_t len;
	bool truth;       /* BOOL */
	struct sx **kids; /* LIST */
	size_t n;
};

/* Reads every top-level datum of `text` into *out (arena-owned). Returns
 * false with "LINE:COL: message" in err. */
bool sbpl_eval_read(struct arena *a, const char *text, size_t len,
		    struct sx ***out, size_t *nout, char *err, size_t errlen);

#endif
