/*
 * layers_lint.h - lint's verdict on the layers cagerun composed, asked of
 * cage-lint, a program of its own (runtime/layers/lint/), so that cagerun
 * does not carry lint's checks: the launcher enforces, the helper judges
 * (docs/architecture.md, "What cagerun links").
 *
 * cagerun refuses a project layer, or a task layer on -p, that lint finds
 * errors in, and --show lists lint's findings. It asks only when the
 * layers are compiled, not on a launch that takes a kept compile, and
 * starts the helper before its own compile of the same text, so that the
 * two compiles run side by side. This header is the one definition of
 * the exchange both sides include.
 *
 * The request is the helper's arguments and, for a composition, its text
 * on standard input:
 *
 *   cage-lint [-D NAME=VALUE]... [-I DIR]... --stdlib DIR [--home DIR]
 *             [--profile NAME] [--target T] [--layer KIND]...
 *             [--untrusted N]... [--task N] [--command N]
 *             (--file POLICY | --stdin)
 *
 * --layer: the kind of each of the root's imports, in order, and
 * --untrusted N that the Nth (from 0) is a project layer its user has not
 * approved: the profile judged is chosen from them as the launch chooses
 * (layers_select), and said back, so that the launcher can check it is
 * the one it runs. --task N: the Nth import is the task layer, whose
 * rules run last (layers_task_to_end); --command N: the Nth import is the
 * generated command layer, shown as <command>.
 *
 * The reply on standard output is LL_MAGIC, then records of NUL-ended
 * fields, the first field the record's tag:
 *
 *   "J" JUDGED           "1": compiled and linted; "0": the second load
 *                        did not compile (its diagnostics follow)
 *   "P" PROFILE          the profile judged ("" when none), once
 *   "S" FP PATH          per root import, in order: XXH3 of the bytes
 *                        compiled (16 hex digits), real path; "-" "-" for
 *                        an import that failed
 *   "D" SEV LINE COL FILE LAYER ID MSG
 *                        a diagnostic: SEV e, w or n; FILE as shown;
 *                        LAYER the real path of the root's import it came
 *                        through ("" when none); ID the check ("" none)
 *   "."                  the end: a reply without it is refused
 *
 * The helper exits 0 after the end record; anything else (missing,
 * untrusted, crashed, a malformed or oversized reply) is a failure to
 * judge, and the launcher then runs nothing.
 */
#ifndef CAGE_LAYERS_LINT_H
#define CAGE_LAYERS_LINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cage.h"

#define LL_PROGRAM "cage-lint"
#define LL_MAGIC "cage-lint 1"  /* sent with its NUL */

enum {
	LL_REPLY_MAX = 4 << 20,  /* bytes of a reply the launcher reads */
	LL_TEXT_MAX = 1 << 20,   /* bytes of a composition the helper reads */
	LL_SOURCES_MAX = 16,     /* root imports reported (LAYERS_MAX is fewer) */
};

struct ll_finding {
	char sev;           /* 'e', 'w' or 'n' */
	unsigned line, col;
	const char *file;   /* as shown */
	const char *layer;  /* the real path of the layer it came through, or "" */
	const char *id;     /* the check, or "" */
	const char *msg;
};

struct ll_source {
	bool bound;         /* false: the import failed */
	uint64_t fp;
	const char *path;
};

/* One reply, parsed. The strings point into buf; ll_verdict_free frees
 * buf and v. */
struct ll_verdict {
	char *buf;
	bool judged;
	const char *profile; /* the profile judged, "" when none */
	struct ll_finding *v;
	size_t n;
	struct ll_source src[LL_SOURCES_MAX];
	size_t nsrc;
};

struct ll_request {
	const char *text;         /* the composition, or NULL with `file` */
	const char *file;         /* -p alone: the policy file */
	const cage_options *opts; /* -D, -I, --home, --profile, target; no param function */
	const char *stdlib;       /* the standard library's folder in use */
	const char *const *kinds; /* each import's kind, nlayers of them (with text) */
	const bool *untrusted;    /* each import: an unapproved project layer */
	size_t nlayers;
	int task;                 /* the task layer's import, or -1 */
	int command;              /* the command layer's import, or -1 */
};

/* One request under way: the helper started and given its text. Zeroed
 * is "none"; one owner finishes or drops it. */
struct ll_job {
	bool on;        /* a helper to finish or drop */
	pid_t pid;
	int sock;
	int send_err;   /* errno of the text's sending, or 0 */
	char path[4096];
	char why[4096 + 200]; /* why it could not be started (on false), or "" */
};

/* Starts cage-lint on `rq` into *j (which must be zeroed or dropped): the
 * text is sent at once and the helper works while the caller goes on. A
 * failure to start is kept in *j and told by ll_finish. */
void ll_start(const struct ll_request *rq, struct ll_job *j);

/* Waits for *j's reply and parses it into *out (zeroed first); *j is done
 * with either way. false with the reason in `why` when no verdict was
 * had. */
bool ll_finish(struct ll_job *j, struct ll_verdict *out, char *why, size_t whylen);

/* Ends *j unfinished (killed and reaped); nothing when there is none. */
void ll_drop(struct ll_job *j);

/* ll_start, then ll_finish. */
bool ll_ask(const struct ll_request *rq, struct ll_verdict *out, char *why, size_t whylen);

/* Parses a reply of `len` bytes, taking `buf` (malloc'd; freed with *out,
 * or at once on failure). false with the reason in `why`. */
bool ll_parse(char *buf, size_t len, struct ll_verdict *out, char *why, size_t whylen);

void ll_verdict_free(struct ll_verdict *v);

#endif
