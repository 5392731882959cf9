/*
 * sbpl_eval.h - an independent evaluator for Seatbelt profiles (SBPL), for
 * tests only. No Mac runs our test suite, so the emitted profile's meaning
 * is checked by reading it back: sbpl_eval_parse() reads the text the way
 * libsandbox would (refusing every form it does not understand, with a line
 * number, instead of skipping it) and sbpl_eval_decide() answers "is OPERATION on
 * this path / address / service allowed, and which rule said so".
 *
 * Decision rules implemented (the unit tests cite a public source for each):
 *  - Operations fall back along the table in sbpl_ops.c, e.g.
 *    file-read-data -> file-read* -> file* -> default; an operation that is
 *    not in the table falls back to `default`.
 *  - At each operation on that chain, the rules that carry filters are tried
 *    from last to first; the first that matches decides (last match wins).
 *  - If none matches, the last filterless rule on that operation decides,
 *    wherever it stands in the file: a filterless rule is that operation's
 *    default, it does not override a filtered rule written before it.
 *  - Otherwise the next operation up the chain is tried. So a rule on a
 *    specific operation beats a rule on its wildcard parent in any order.
 *  - The filters of one rule are OR-ed; require-all ANDs, require-not negates.
 *
 * Only the filters, modifiers and forms an emitter needs are accepted; the
 * list is in sbpl_eval.c. A profile must put a rule on `default` (we do not
 * guess the built-in default), and every (param "X") must be given: libsandbox
 * makes an unset param #f, which breaks the profile, so that is an error here.
 */
#ifndef CAGE_SBPL_EVAL_H
#define CAGE_SBPL_EVAL_H

#include <stdbool.h>
#include <stddef.h>

/* Seatbelt rejects string literals somewhere around 1 KiB; be strict. */
#define SBPL_EVAL_MAX_STRING 1024

/* ---- the operation table (sbpl_ops.c) ---- */
struct sbpl_eval_op {
	const char *name;
	const char *parent; /* fallback operation; "default" for itself */
};

const struct sbpl_eval_op *sbpl_eval_op_table(size_t *n);
/* NULL when the operation is not in the table (aliases are resolved). */
const struct sbpl_eval_op *sbpl_eval_op_find(const char *name);
/* The operation an alias such as `process-exec` stands for, else `name`. */
const char *sbpl_eval_op_canonical(const char *name);

/* ---- loading ---- */
struct sbpl_eval_param {
	const char *name, *value; /* sandbox-exec -D name=value */
};

struct sbpl_eval_profile;

/* Parses and checks `text` with the given params bound. Returns NULL and
 * writes "LINE:COL: message" into err on any problem. Params are bound at
 * parse time because libsandbox evaluates them while loading: a profile
 * that needs an unset param does not load at all. */
struct sbpl_eval_profile *sbpl_eval_parse(const char *text, size_t len,
					  const struct sbpl_eval_param *params, size_t nparams,
					  char *err, size_t errlen);
void sbpl_eval_free(struct sbpl_eval_profile *p);

size_t sbpl_eval_rule_count(const struct sbpl_eval_profile *p);
/* How many distinct operations the profile names that the table lacks;
 * *first (if not NULL) gets one of them. */
size_t sbpl_eval_unknown_ops(const struct sbpl_eval_profile *p, const char **first);

/* ---- deciding ---- */
enum sbpl_eval_qkind {
	SBPL_EVAL_Q_PATH, /* file operations; also network-outbound to a unix socket */
	SBPL_EVAL_Q_NET,  /* network operations on an inet address */
	SBPL_EVAL_Q_NAME, /* mach-lookup and friends: a service name */
};

enum sbpl_eval_proto { SBPL_EVAL_TCP, SBPL_EVAL_UDP };

struct sbpl_eval_query {
	enum sbpl_eval_qkind kind;
	const char *path;     /* PATH: absolute, as the kernel sees it (resolved) */
	enum sbpl_eval_proto proto; /* NET: remote endpoint */
	const char *host;     /* NET: "localhost", an IP literal, or a name */
	unsigned port;        /* NET */
	const char *name;     /* NAME */
};

struct sbpl_eval_result {
	bool allowed;
	bool by_default;  /* decided by a rule on `default` */
	bool report;      /* the deciding rule carries (with report) */
	const char *message; /* its (with message "...") text, or NULL; points
				into the profile */
	unsigned line;    /* line of the deciding rule */
	const char *op;   /* operation the deciding rule was written on; points
			     into the profile, the table or `operation` */
};

/* Returns false with a message in err when the query cannot be decided
 * (e.g. a `local` filter that needs the local address we were not given). */
bool sbpl_eval_decide(const struct sbpl_eval_profile *p, const char *operation,
		      const struct sbpl_eval_query *q, struct sbpl_eval_result *out,
		      char *err, size_t errlen);

/* Shorthands for the common query kinds; same contract as sbpl_eval_decide. */
bool sbpl_eval_decide_path(const struct sbpl_eval_profile *p, const char *operation,
			   const char *path, struct sbpl_eval_result *out,
			   char *err, size_t errlen);
bool sbpl_eval_decide_net(const struct sbpl_eval_profile *p, const char *operation,
			  enum sbpl_eval_proto proto, const char *host, unsigned port,
			  struct sbpl_eval_result *out, char *err, size_t errlen);
bool sbpl_eval_decide_name(const struct sbpl_eval_profile *p, const char *operation,
			   const char *name, struct sbpl_eval_result *out,
			   char *err, size_t errlen);

#endif
