/*
 * lint_int.h - what the lint_*.c files share: the per-run context, the
 * per-profile rule index, and the helpers that turn a finding into a
 * diagnostic with notes. Not part of the library's interface.
 */
#ifndef CAGE_LINT_INT_H
#define CAGE_LINT_INT_H

#include <stdarg.h>
#include <stdint.h>

#include "lint.h"
#include "pat_rel.h"

/* One path-like rule in the index, keyed by its literal prefix. */
struct lint_rx {
	const char *key;
	uint32_t klen;
	uint32_t rule; /* index into prof->rules */
};

/* Where a finding may be silenced: the line its rule starts on. */
struct lint_anchor {
	struct diag *d;
	const struct src_file *file;
	uint32_t line, line2;
};

struct lint_ctx {
	struct cage_policy *pol;
	const struct ir_policy *ir;
	const struct lint_opts *o;
	struct diag_list *dl;
	struct arena *a;
	const struct src_file *main;

	/* the profile being checked */
	const struct ir_profile *prof;
	struct lint_rx *ix;
	size_t nix;
	uint32_t *cand; /* query results, sorted by rule index */
	size_t ncand, capcand;

	uint64_t *seen; /* dedupe: hashes of (id, locations); 0 = empty */
	size_t nseen, capseen;

	struct lint_anchor *anchors;
	size_t nanchors, capanchors;

	/* host rules keyed by their name with the labels reversed */
	struct lint_rx *hix;
	size_t nhix;
	char *hkeys;
	/* Mach rules (few; compared pairwise) */
	uint32_t *machs;
	size_t nmachs;

	/* built-in secrets as IR paths, made once per policy */
	struct lint_builtin *secrets;
	size_t nsecrets;
};

struct lint_builtin {
	struct ir_path p;
	const char *pattern, *what;
};

/* ---- lint.c ---- */
bool lint_is_std(const struct src_file *f);
/* A rule of std/guard (or of a copy of it named std/guard.cage): it
 * carves what runs code outside the cage out of writable trees, so a
 * grant around it is what it is written for. */
bool lint_is_guard(const struct src_file *f);
/* Adds a finding at `at` (a rule; its target span) unless the same id was
 * already reported for the same pair of rules. `other` may be NULL. */
__attribute__((format(printf, 5, 6))) struct diag *
lint_report(struct lint_ctx *c, const char *id, const struct ir_rule *at,
	    const struct ir_rule *other, const char *fmt, ...);
/* Same, once per `what` (a path on disk): the filesystem checks report
 * every link of a grant, not only the first. */
__attribute__((format(printf, 6, 7))) struct diag *
lint_report_each(struct lint_ctx *c, const char *id, const struct ir_rule *at,
		 const struct ir_rule *other, const char *what, const char *fmt, ...);
/* Same for a bare location (params, imports, comments); its line anchors
 * suppression. */
__attribute__((format(printf, 4, 5))) struct diag *
lint_report_loc(struct lint_ctx *c, const char *id, struct loc loc, const char *fmt, ...);
/* A note at another rule, with its import chain when it lives elsewhere. */
__attribute__((format(printf, 4, 5))) void
lint_note_rule(struct lint_ctx *c, struct diag *d, const struct ir_rule *r, const char *fmt, ...);
/* "line 4" in the same file, "std/secrets.cage:3" elsewhere. */
void lint_where(const struct lint_ctx *c, const struct ir_rule *at, const struct ir_rule *r,
		char *buf, size_t size);
/* LINT_T_* bits of the platforms whose limits apply: --target, else the
 * one the policy was compiled for. */
unsigned lint_targets(const struct lint_ctx *c);
/* The rule's target for messages, e.g. ~/.ssh (subtree) or a host:port. */
void lint_target_text(const struct ir_rule *r, char *buf, size_t size);
void lint_access_text(uint32_t access, char *buf, size_t size);
void lint_rule_text(const struct ir_rule *r, char *buf, size_t size);
/* `path` for messages: "~/..." under the home of `like`, "{param}/..." for
 * a param lint gave a placeholder value. */
void lint_show_path(const struct ir_path *like, const char *path, char *buf, size_t size);

/* ---- lint_index.c ---- */
void lint_ix_build(struct lint_ctx *c);
void lint_ix_free(struct lint_ctx *c);
/* Rules of kind `tk` whose patterns could share a path with a pattern of
 * literal prefix text[0..len) (one literal prefix is a prefix of the
 * other). Results in c->cand, ascending rule index. */
void lint_ix_comparable(struct lint_ctx *c, const char *text, size_t len, enum ir_target_kind tk);
/* Host rules that could share a (host, port) with rule r. Same output. */
void lint_ix_hosts(struct lint_ctx *c, const struct ir_rule *r);
/* The evaluator's answer for a concrete path, via the index (exact; the
 * same semantics as ir_eval_path, without the pins: a delete the rules
 * allow is allowed here, so the checks see what the rules alone say). */
void lint_eval_path(struct lint_ctx *c, uint32_t access, enum ir_target_kind tk,
		    const char *path, struct ir_verdict *v);
/* Does rule a (its target less its excepts) share a path with b /
 * hold all of b? A witness, when asked for, is a path a holds in b. */
enum pat_ans lint_path_overlap(const struct ir_rule *a, const struct ir_path *b, char *wit,
			       size_t size);
enum pat_ans lint_path_contains(const struct ir_rule *a, const struct ir_path *b);
/* Do two rules' targets overlap / does a contain b (same target kind)?
 * A protect's excepts are left out of what it holds. */
enum pat_ans lint_overlap(const struct ir_rule *a, const struct ir_rule *b);
enum pat_ans lint_contains(const struct ir_rule *a, const struct ir_rule *b);

/* ---- checks ---- */
void lint_check_order(struct lint_ctx *c);    /* unsafe-order, protect-violation */
void lint_check_dead(struct lint_ctx *c, size_t limit, bool own_only); /* dead/redundant */
void lint_check_paths(struct lint_ctx *c);
void lint_check_guard(struct lint_ctx *c);    /* guard-opened */    /* secret-exposed, broad-grant, noncanonical, writable-ancestor */
void lint_check_hosts(struct lint_ctx *c);    /* broad-host, ip-literal */
void lint_check_target(struct lint_ctx *c);   /* unsupported-on-target */
void lint_check_linux_plan(struct lint_ctx *c); /* linux-inexact */
void lint_check_fs(struct lint_ctx *c);       /* symlink-escape, hardlink-alias */
void lint_check_module(struct lint_ctx *c);   /* unused-param, unused-import (once per policy) */
void lint_group_findings(struct lint_ctx *c); /* one finding per check and rule */
void lint_apply_controls(struct lint_ctx *c); /* suppressions, -W, -Werror */

#endif
