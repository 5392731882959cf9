/*
 * ir.h - the resolved policy: one flat, ordered rule list per profile.
 *
 * Everything downstream (evaluator, checks, SBPL emitter, proxy table, the
 * runtime) reads this and nothing else. Imports, params, lists and `extends`
 * are gone by now; each rule names exactly one target and remembers where it
 * came from (file, line, column, and through loc.file->importer the import
 * chain). Paths are absolute and normalised; `~` has been expanded with the
 * policy's home directory but `home_len` remembers it so printers can show
 * `~/...` again.
 */
#ifndef CAGE_IR_H
#define CAGE_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "access.h"
#include "arena.h"
#include "diag.h"

enum ir_effect { IR_ALLOW, IR_DENY, IR_PROTECT };

enum ir_target_kind { IR_T_PATH, IR_T_HOST, IR_T_UNIX, IR_T_MACH };

/* The accesses a rule on each kind of target may name, one family per
 * kind: the resolver picks a rule's kind by its family, and the reader of
 * a kept compile holds every rule to it. */
static inline uint32_t ir_target_family(enum ir_target_kind k)
{
	switch (k) {
	case IR_T_PATH: return IR_A_FILE;
	case IR_T_HOST: return IR_A_CONNECT;
	case IR_T_UNIX: return IR_A_UNIX;
	case IR_T_MACH: return IR_A_MACH;
	}
	return 0;
}

enum ir_pat_kind {
	IR_PAT_EXACT,   /* no glob characters */
	IR_PAT_SUBTREE, /* a literal DIR, then a final "**" component: DIR and below */
	IR_PAT_GLOB,    /* anything else with *, ** or ? */
};

/* A path pattern. `text` is absolute and normalised (no "//", ".", "..",
 * trailing "/"). Glob syntax: `*` any run of characters but '/', `?` one
 * character but '/'; a `**` component matches zero or more whole
 * components, so a final `**` also matches the directory itself. `**` is
 * only ever a whole component. */
struct ir_path {
	const char *text;
	uint32_t len;
	uint32_t home_len;   /* >0: text[0..home_len) is the expanded `~` */
	uint32_t lit_prefix; /* bytes before the first glob character */
	enum ir_pat_kind kind;
};

enum ir_host_kind {
	IR_H_NAME,   /* exact name (includes "localhost") */
	IR_H_SUFFIX, /* "*.example.com": any name with one or more labels
			before "example.com", never the apex itself */
	IR_H_ANY,    /* "*": any name, but never an IP literal, "localhost"
			or a name under ".localhost" (RFC 6761 loopback names) */
	IR_H_IPV4,
	IR_H_IPV6,
};

struct ir_port_range {
	uint16_t lo, hi;
};

struct ir_host {
	enum ir_host_kind kind;
	const char *name; /* NAME: lowercased name, no trailing dot;
			     SUFFIX: the part after "*."; IP: canonical text */
	uint8_t addr[16]; /* IPV4: first 4 bytes; IPV6: all 16 */
	size_t nports;    /* 0 = every port */
	const struct ir_port_range *ports;
};

struct ir_mach {
	const char *name;
	bool prefix; /* written as "com.example.*": matches by prefix */
};

struct ir_except {
	struct ir_path path;
	const char *written; /* as written, for messages */
	struct loc loc;
};

struct ir_rule {
	uint32_t index; /* position in the profile's list, 0-based */
	enum ir_effect effect;
	uint32_t access; /* IR_A_* bits */
	enum ir_target_kind tkind;
	union {
		struct ir_path path; /* IR_T_PATH and IR_T_UNIX */
		struct ir_host host;
		struct ir_mach mach;
	} t;
	/* A protect's `except` patterns that meet this target: a path the
	 * target matches and one of these matches is left to the other
	 * rules. Each lies inside one of its statement's targets (the
	 * resolver checks); shared by the statement's rules. */
	const struct ir_except *except;
	uint32_t nexcept;
	const char *written; /* the target as written, for messages */
	struct loc loc;      /* span of the target */
	struct loc rule_loc; /* span of the effect keyword */
	const char *layer;   /* profile name, or NULL for module-level rules */
};

enum ir_mode { IR_MODE_OFF, IR_MODE_MONITOR, IR_MODE_ENFORCE_FS, IR_MODE_ENFORCE };

enum ir_env_kind { IR_ENV_KEEP, IR_ENV_SET, IR_ENV_UNSET };

struct ir_env_op {
	enum ir_env_kind kind;
	const char *name;
	const char *value; /* IR_ENV_SET only */
	struct loc loc;
};

/* Resource limits (`limit WHAT N [UNIT] [best-effort]`, docs/language.md
 * "limit"). Across layers and `extends` the tightest value wins, so no
 * layer can loosen a bound another set. */
enum ir_limit_kind { IR_LIM_PROCESSES, IR_LIM_MEMORY, IR_LIM_TMP, IR_LIM_FILES, IR_LIM_N };

struct ir_limit {
	bool set;
	bool best_effort; /* where the platform cannot enforce it: run, and say so */
	uint64_t value;   /* a count, or bytes for memory and tmp */
	uint64_t unit;    /* bytes of the unit written (1 for counts), for display */
	struct loc loc;   /* the `limit` statement that decided it */
};

/* Directories above what a deny or protect (its guard) names: they may
 * not be deleted or renamed away, or the guard would lose its hold on a
 * file (ir_pins.c, docs/language.md "Renames and links"). */
struct ir_pin {
	struct ir_path pat;          /* the directories it covers */
	const struct ir_rule *guard; /* the deny or protect it keeps in place */
};

struct ir_profile {
	const char *name;
	struct loc loc;
	const struct ir_profile *parent;
	enum ir_mode mode;
	struct loc mode_loc; /* file == NULL: the default (enforce) */
	bool private_tmp, private_home;
	struct ir_limit limits[IR_LIM_N];
	struct ir_rule *rules;
	size_t nrules;
	struct ir_env_op *env;
	size_t nenv;
	/* Derived from the rules by ir_pins_build; none in a profile built
	 * without it. guard[i]: rule i is a guard (ir_pins.c); it also denies
	 * deleting (and linking) what it matches, in its place in the order. */
	struct ir_pin *pins;
	size_t npins;
	const bool *guard;
};

enum ir_param_type { IR_P_PATH, IR_P_HOST, IR_P_STRING, IR_P_PORT };

struct ir_param {
	const char *name;
	enum ir_param_type type;
	const char *value; /* normalised text; NULL when missing (an error) */
	bool from_define;  /* value came from -D */
	bool used;
	struct loc loc;
};

/* The platform a policy is compiled for. It chooses the standard
 * library's platform modules (STDLIB/linux/ or STDLIB/macos/, searched
 * before the portable STDLIB/) and which backends apply: a Seatbelt
 * profile is macOS only. The default is the platform cagec was built for. */
enum ir_target { IR_TARGET_MACOS, IR_TARGET_LINUX };
#ifdef __APPLE__
#define IR_TARGET_HOST IR_TARGET_MACOS
#else
#define IR_TARGET_HOST IR_TARGET_LINUX
#endif
/* "macos" / "linux": the --target spelling and the stdlib folder name. */
const char *ir_target_name(enum ir_target t);
bool ir_target_parse(const char *name, enum ir_target *out);

struct ir_policy {
	const struct src_file **files; /* load order; files[0] is the main file */
	size_t nfiles;
	enum ir_target target;
	const char *home; /* what `~` expanded to */
	uint64_t fingerprint; /* XXH3-64 over the resolved sources in load order */
	struct ir_param *params;
	size_t nparams;
	struct ir_profile **profiles; /* every profile, in definition order */
	size_t nprofiles;
	struct ir_profile *selected; /* what backends emit; NULL on errors */
};

/* ---- evaluation (eval.c) ---- */

struct ir_verdict {
	bool allowed;
	const struct ir_rule *rule; /* the deciding rule; NULL = default deny */
	/* Set when the rules allow a delete that a pin takes away; `rule` is
	 * then the pin's guard. */
	const struct ir_pin *pin;
};

/* ir_eval_path for several path accesses at once (`bits`, file accesses
 * only), each rule matched against `path` once: out[k] is the verdict for
 * the access 1u << k. The same answers as one ir_eval_path per bit, for
 * callers that ask about every access of many paths (the Linux plan). */
void ir_eval_path_bits(const struct ir_profile *p, uint32_t bits, const char *path,
		       struct ir_verdict out[6]);
/* ir_eval_path_bits over the rules p->rules[among[0..n)] only (indices
 * ascending): for a caller that knows the other rules cannot match
 * `path`. among NULL: every rule. */
void ir_eval_path_among(const struct ir_profile *p, const uint32_t *among, size_t n,
			uint32_t bits, const char *path, struct ir_verdict out[6]);
/* `access` is one IR_A_* bit; `path` absolute and normalised. */
void ir_eval_path(const struct ir_profile *p, uint32_t access,
		  const char *path, struct ir_verdict *v);
/* `host` lowercased, no trailing dot (or an IP literal in canonical form). */
void ir_eval_host(const struct ir_profile *p, const char *host, unsigned port,
		  struct ir_verdict *v);
void ir_eval_mach(const struct ir_profile *p, const char *service,
		  struct ir_verdict *v);

/* ---- pins, renames and links (ir_pins.c) ---- */

/* Fills p->pins from p->rules (allocated in a). */
void ir_pins_build(struct arena *a, struct ir_profile *p);
/* The first pin covering `path`, or NULL. */
const struct ir_pin *ir_pinned(const struct ir_profile *p, const char *path);
/* Is rule r a guard of p? */
bool ir_is_guard(const struct ir_profile *p, const struct ir_rule *r);
/* Is `path` held in place: pinned, or its delete decided by a guard? The
 * source of a hard link must not be. */
bool ir_held(const struct ir_profile *p, const char *path, struct ir_verdict *v);

enum ir_move_kind { IR_MOVE_RENAME, IR_MOVE_LINK };

/* rename(src, dst) or link(src, dst): allowed when the source may leave
 * (rename: delete at src; link: src is not pinned), the destination may be
 * created, and the destination grants no file access the source lacks. */
struct ir_move_verdict {
	bool allowed;
	struct ir_verdict src; /* rename: delete at src; link: what holds src, if anything */
	struct ir_verdict dst; /* create at dst */
	uint32_t gained;       /* IR_A_* bits dst grants and src does not */
	struct ir_verdict gain_src, gain_dst; /* the first gained bit at each end */
};
void ir_eval_move(const struct ir_profile *p, enum ir_move_kind kind, const char *src,
		  const char *dst, struct ir_move_verdict *v);

bool ir_rule_matches_path(const struct ir_rule *r, uint32_t access, const char *path);
/* Does the rule's path target match `path`, its excepts left out? */
bool ir_rule_path_match(const struct ir_rule *r, const char *path);
/* The first of the rule's excepts that matches `path`, or NULL. */
const struct ir_except *ir_rule_excepted(const struct ir_rule *r, const char *path);
bool ir_path_match(const struct ir_path *pat, const char *path);
bool ir_host_match(const struct ir_host *h, const char *host, unsigned port);
/* "localhost" or a name ending in ".localhost". */
bool ir_host_is_localhost(const char *host);

/* ---- text form (ir_print.c) ---- */

const char *ir_effect_name(enum ir_effect e);
const char *ir_mode_name(enum ir_mode m);
/* The mode ir_mode_name names `name` (false, and nothing set, for none). */
bool ir_mode_parse(const char *name, enum ir_mode *out);
/* Writes "read write" style keyword list for an access mask into buf. */
void ir_access_names(uint32_t access, char *buf, size_t size);
/* Path as the user would write it: "~/..." when home-relative. */
void ir_path_display(const struct ir_path *p, char *buf, size_t size);
void ir_host_display(const struct ir_host *h, char *buf, size_t size);
/* A rule's target as the user would write it (path, host or service). */
void ir_target_display(const struct ir_rule *r, char *buf, size_t size);
/* "processes", "memory", "tmp", "files". */
const char *ir_limit_name(enum ir_limit_kind k);
/* Does the kind take a size unit (memory, tmp)? */
bool ir_limit_sized(enum ir_limit_kind k);
/* The value as written: "2048", "8 GiB" (plus " best-effort" when marked
 * and `mark` is true). */
void ir_limit_display(const struct ir_limit *l, bool mark, char *buf, size_t size);
/* The tighter of two limits into *dst (a limit not set is no bound; on equal
 * values an enforced one beats a best-effort one). */
void ir_limit_merge(struct ir_limit *dst, const struct ir_limit *src);
void ir_print_profile(FILE *out, const struct ir_policy *pol, const struct ir_profile *p);
/* The "ir" backend (an emit_fn, emit.h): a header line, then the profile. */
bool emit_ir(const struct ir_policy *pol, const struct ir_profile *prof, FILE *out,
	     struct arena *a, const char **err);

#endif
