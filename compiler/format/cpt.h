/*
 * cpt.h - the proxy rule table at run time: load a table written by
 * `cagec --emit table` (cpt_write.c) and answer "may the sandbox
 * connect to (host, port)?" without allocating.
 *
 * The layout is specified in docs/proxy-table.md. Loading checks the whole
 * file once (magic, version, sizes, checksum, then every offset, index and
 * string), so that lookups can trust the table and stay branch-light. The
 * checksum only detects corruption; whoever can write the table can write the
 * policy, so it is not an authenticity check.
 *
 * Decisions follow the language (and ir_eval_host): among the rules
 * matching (host, port) the last one wins, except that a matching `protect`
 * always denies (the first such rule is reported); nothing matching denies. Name rules (exact, `*.suffix`, `*`) never match an IP
 * literal and IP rules never match a name.
 */
#ifndef CAGE_CPT_H
#define CAGE_CPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "host.h"

#define CPT_MAGIC "CAGECPT" /* 8 bytes with the NUL */
#define CPT_VERSION 1

enum cpt_effect { CPT_ALLOW = 0, CPT_DENY = 1, CPT_PROTECT = 2 };

/* What a rule's target is. */
enum cpt_kind {
	CPT_K_NAME = 1,   /* exact name, incl. "localhost" */
	CPT_K_SUFFIX = 2, /* "*.suffix": strict subdomains only */
	CPT_K_ANY = 3,    /* "*": every name, never an IP literal */
	CPT_K_IPV4 = 4,
	CPT_K_IPV6 = 5,
};

enum cpt_errcode {
	CPT_E_OK = 0,
	CPT_E_IO,        /* open/stat/mmap failed (errno in cpt_error.sys_errno) */
	CPT_E_TRUNCATED, /* shorter than its header or its stated size */
	CPT_E_MAGIC,     /* not a cage proxy table */
	CPT_E_VERSION,   /* a version this build cannot read */
	CPT_E_CHECKSUM,  /* the XXH3 checksum does not match: corrupted */
	CPT_E_CORRUPT,   /* structurally invalid (bad offset, count, string...) */
};

struct cpt_error {
	enum cpt_errcode code;
	int sys_errno;    /* CPT_E_IO only */
	uint64_t offset;  /* file offset the problem was found at, when known */
	char msg[200];    /* one line without the file name: print "path: msg" */
};

/* A loaded table. Fields are private to cpt.c; the struct is public only so
 * callers can keep it by value (no allocation). Zero-initialise before use. */
struct cpt_table {
	const uint8_t *base;
	size_t size;
	bool mapped; /* base is an mmap of `size` bytes */
	uint32_t nrules, nslots, nlist, nports, pool_size, nkeys;
	uint32_t flags;
	uint16_t max_probe, suffix_min, suffix_max;
	uint64_t seed, fingerprint;
	const uint8_t *rules, *slots, *list, *ports, *pool;
};

/* The answer for one lookup. Strings point into the table and live until
 * cpt_close(). */
struct cpt_result {
	bool allowed;
	bool by_default;         /* no rule matched: denied by default */
	enum cpt_effect effect;  /* of the deciding rule (unset when by_default) */
	enum cpt_kind kind;      /* of the deciding rule (unset when by_default) */
	uint32_t rule_index;     /* the rule's 0-based index in the profile */
	const char *loc;         /* "file:line:col" of the rule's target, or "" */
	const char *text;        /* the target as written in the policy, or "" */
};

/* Map `path` read-only and validate it. On failure returns false, fills *err
 * and leaves *t closed. */
bool cpt_open(struct cpt_table *t, const char *path, struct cpt_error *err);
/* Validate a table in memory; `data` must outlive the table (not copied). */
bool cpt_load_mem(struct cpt_table *t, const void *data, size_t size,
		  struct cpt_error *err);
/* Unmaps a table from cpt_open; harmless on a zeroed or memory table. */
void cpt_close(struct cpt_table *t);

/* Decide (h, port) for a normalised host (host_normalize). Port 0 and ports
 * above 65535 are denied by default whatever the rules say. */
void cpt_lookup(const struct cpt_table *t, const struct host_norm *h,
		unsigned port, struct cpt_result *r);
/* Normalise and decide. A host that does not normalise is denied by default
 * and its error is returned; HOST_OK otherwise. */
enum host_err cpt_lookup_str(const struct cpt_table *t, const char *host,
			     size_t len, unsigned port, struct cpt_result *r);

/* For the address (and port) the proxy is about to connect to after
 * resolving an allowed name: does a rule allow it *explicitly*? Only IP
 * rules naming this address count, plus - for a loopback address - rules
 * naming "localhost", both with their ports; last match wins and protect
 * wins as above. `*`, `*.suffix` and other names never count. Use it when
 * host_addr_class() is internal. IPv4-mapped IPv6 is treated as its IPv4. */
void cpt_lookup_addr(const struct cpt_table *t, const struct sockaddr *sa,
		     struct cpt_result *r);

/* Table facts, for logs and --dump-table. */
const char *cpt_profile(const struct cpt_table *t);
uint64_t cpt_fingerprint(const struct cpt_table *t);
uint32_t cpt_rule_count(const struct cpt_table *t);

const char *cpt_effect_name(enum cpt_effect e); /* "allow", "deny", "protect" */
const char *cpt_errcode_name(enum cpt_errcode c);

/* The table as stable text (cagec --dump-table). Returns false on a write
 * error. */
bool cpt_dump(const struct cpt_table *t, FILE *out);

#endif
