/*
 * pf.h - the Linux plan artifact: a built, checked plan written to bytes
 * so the launcher can enforce it on a later run without planning again,
 * with the record of everything the plan was built from (docs/plan-format.md).
 *
 * This is the one definition both sides use: the compiler side turns a
 * struct lplan into a struct pf_plan and writes it (pf_write); the
 * launcher reads it (pf_read), re-observes every recorded dependency
 * (pf_deps_check) and only then binds it back to the profile
 * (lplan_from_pf). Nothing here knows the IR: rules are indices into the
 * selected profile's rule list, which the key (pf_key) pins.
 *
 * The reader trusts nothing: every count, offset and string is bounded by
 * the bytes it was given, the checksum covers the whole file, and any
 * mismatch is an error the caller answers by building afresh.
 */
#ifndef CAGE_PF_H
#define CAGE_PF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "arena.h"

/* The stat times' names: POSIX 2008's, or Darwin's own. */
#ifdef __APPLE__
#define PF_MTIM st_mtimespec
#define PF_CTIM st_ctimespec
#else
#define PF_MTIM st_mtim
#define PF_CTIM st_ctim
#endif

#define PF_MAGIC "CAGEPLN\0"
#define PF_VERSION 2
#define PF_NONE UINT32_MAX /* "no rule" in a rule index */

/* What a dependency is: which call the planner made on the path. Each
 * records the lstat(2) (stat(2) for PF_DEP_STAT and PF_DEP_LIST) that
 * call's answer depends on; a link adds its text, a listing its
 * directory's modification and change times. */
enum pf_dep_kind {
	PF_DEP_LSTAT = 1, /* lstat: exists, type, identity */
	PF_DEP_STAT = 2,  /* stat (symlinks followed) */
	PF_DEP_LINK = 3,  /* readlink: the link's text */
	PF_DEP_LIST = 4,  /* opendir/readdir: the directory's entries */
	PF_DEP_KIND_MAX = 4,
};

struct pf_dep {
	uint8_t kind; /* enum pf_dep_kind */
	const char *path;
	int32_t err; /* 0: the stat succeeded; else its errno */
	uint64_t dev, ino;
	uint32_t mode;
	int64_t mtime_s, mtime_ns, ctime_s, ctime_ns; /* PF_DEP_LIST only; else 0 */
	const char *target; /* PF_DEP_LINK: the link's text ("" when unreadable) */
	/* PF_DEP_LIST read whole (pf_list_read): its entries, so that a
	 * directory whose times moved but whose entries are the same (a file
	 * saved through a temporary name) is still the listing the plan was
	 * built from. Times all 0 with entries: too recent to be trusted, the
	 * entries are compared every time. */
	bool listed;
	size_t nentries;
	const char *const *entry_names; /* sorted by strcmp */
	const unsigned char *entry_types; /* d_type of each */
};

/* A directory's entries, read whole and sorted by name: what a plan build
 * lists and what a launch re-reads to compare. */
struct pf_listing {
	const char **names;   /* in `a`, sorted by strcmp */
	unsigned char *types; /* d_type of each */
	size_t n;
};
/* At most this many entries are read (more than any caller visits: the
 * planner's glob budget is 20,000), and at most PF_LIST_KEEP are kept in
 * a record (a larger directory is left to its times alone). */
#define PF_LIST_MAX 65536
#define PF_LIST_KEEP 4096
/* Reads `path` into *out: 1 when read whole, 0 when it holds more than
 * PF_LIST_MAX entries (out has the first PF_LIST_MAX read, sorted), -1
 * with errno when it cannot be opened or read. "." and ".." are left
 * out. */
int pf_list_read(struct arena *a, const char *path, struct pf_listing *out);
/* Whether l holds exactly the entries recorded in d. */
bool pf_list_same(const struct pf_listing *l, const struct pf_dep *d);

/* Observes `path` as a dependency of `kind` would (the stat, and for a
 * link its text), into *d (strings in `a`). *st gets the stat when it
 * succeeded. The planner records with this and the launcher re-validates
 * with it, so both look at a path the same way. */
void pf_observe(struct arena *a, enum pf_dep_kind kind, const char *path, struct pf_dep *d,
		struct stat *st);
/* Whether two observations of the same path agree. */
bool pf_dep_same(const struct pf_dep *x, const struct pf_dep *y);
/* Re-observes every dependency: true when all agree; else false with
 * *bad the index of the first that does not. A listing read whole agrees
 * when its stat does but for the times and it holds the same entries. */
bool pf_deps_check(struct arena *a, const struct pf_dep *deps, size_t n, size_t *bad);
/* A directory changed so recently (its change time less than 50 ms old,
 * 2.1 s where the time has no nanoseconds) that one more change could
 * leave its times as they are: a listing of it must not be kept. */
bool pf_changed_recently(const struct stat *st);
/* For a directory stat'ed as *before and then read: whether its times
 * can be trusted to show a later change. Not when it changed recently
 * (pf_changed_recently), or is not what it was, or its times moved while
 * it was read; its entries must then be compared instead. */
bool pf_listing_racy(const char *path, const struct stat *before);

/* A rule of a resolved profile (the plan's guard and check profiles):
 * the selected profile's rule `orig` with its target resolved to
 * `text`, and its excepts (when `nexcept` is not 0: as many as orig
 * has, in its order) resolved to `except[]`. */
struct pf_rule {
	uint32_t orig;
	const char *text;
	uint32_t nexcept;
	const char **except;
};

struct pf_node {
	const char *path;
	uint8_t flags; /* PF_N_* */
	uint32_t mount; /* LPM_* */
	uint64_t grant, ll, block;
	uint32_t rule;   /* index in the profile, or PF_NONE */
	uint32_t parent; /* index of the nearest ancestor node, or PF_NONE */
};
enum { PF_N_EXISTS = 1, PF_N_DIR = 2, PF_N_SUBTREE = 4, PF_N_CREATED = 8, PF_N_KNOWN = 15 };

struct pf_msg {
	uint32_t rule;
	const char *text;
};

struct pf_port {
	uint16_t port;
	uint32_t rule;
};

struct pf_guard {
	const char *pattern;
	uint32_t rule;
};

struct pf_param {
	const char *name, *value; /* value "" when missing */
};

/* What the plan was built for: two plans with equal keys were built from
 * the same rules (the profile's digest covers every rule the planner
 * reads) by the same user with the same home, in the same directory. */
struct pf_key {
	uint64_t fingerprint;    /* XXH3-64 of the policy's sources in load order */
	uint64_t digest_lo, digest_hi; /* XXH3-128 of the selected profile's rules */
	uint32_t uid;
	const char *home, *cwd, *profile;
	struct pf_param *params;
	size_t nparams;
};

struct pf_plan {
	struct pf_key key;
	uint32_t nrules; /* rules in the selected profile (bounds every index) */
	struct pf_node *nodes;
	size_t nnodes;
	const char **mkdirs;
	size_t nmkdirs;
	struct pf_msg *notes;
	size_t nnotes;
	struct pf_port *ports;
	size_t nports;
	struct pf_guard *guards;
	size_t nguards;
	struct pf_rule *gprof, *rprof;
	size_t ngprof, nrprof;
	uint64_t ngrants, nmounts;
	struct pf_dep *deps;
	size_t ndeps;
};

/* Bytes of `p` into *out (allocated in `a`). */
void pf_write(struct arena *a, const struct pf_plan *p, uint8_t **out, size_t *len);
/* Parses an artifact: false with the reason in err on any malformation
 * (truncated, bad magic, version, checksum, an index out of bounds, an
 * unknown flag, trailing bytes). Strings are copied into `a`. After a
 * false return *p is not to be read. */
bool pf_read(struct arena *a, const uint8_t *buf, size_t len, struct pf_plan *p, char *err,
	     size_t errlen);
/* Whether two keys are the same key. */
bool pf_key_same(const struct pf_key *x, const struct pf_key *y);
/* The key as 32 hex digits: the artifact's file name in the cache. */
void pf_key_name(const struct pf_key *k, char out[33]);

#endif
