/*
 * mon_record.h - one observed access of a monitored (or enforced) command,
 * the same on every platform: the Linux observer, the proxy in log-only
 * mode and the macOS Seatbelt log parser all produce these, and cagerun's
 * summary, the JSON-lines log, `cagec monitor-report` and `cagec suggest`
 * read them. docs/monitor.md is the schema.
 */
#ifndef CAGE_MON_RECORD_H
#define CAGE_MON_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mon_verdict {
	MON_COVERED,     /* the policy allows it */
	MON_WOULD_BLOCK, /* monitor mode: enforce would refuse it */
	MON_DENIED,      /* enforce mode: it was refused */
};

struct mon_record {
	int64_t time_ms;     /* wall clock, ms since the epoch */
	long pid;            /* 0 when unknown (the proxy does not know it) */
	const char *exe;     /* the process's executable, or NULL */
	const char *syscall; /* "openat", "connect", "CONNECT" (proxy), ... */
	uint32_t access;     /* one IR_A_* bit */
	const char *path;    /* file targets; NULL for hosts */
	const char *host;    /* host targets: name or IP literal */
	unsigned port;
	enum mon_verdict verdict;
	const char *rule;      /* "file:line:col" of the deciding rule, NULL: no rule */
	const char *rule_text; /* "allow read ~/src", or NULL */
	unsigned long count;   /* how many accesses this record stands for (>= 1) */
};

/* The access kinds as the policy language spells them: "read",
 * "read-metadata", "write", "create", "delete", "exec", "connect", "unix". */
const char *mon_access_name(uint32_t access);
bool mon_access_parse(const char *name, uint32_t *access);
const char *mon_verdict_name(enum mon_verdict v);
bool mon_verdict_parse(const char *name, enum mon_verdict *v);

/* Appends the record to fd as one JSON line (one write). */
bool mon_record_write(int fd, const struct mon_record *r);

/* Parses one line written by mon_record_write. The strings of *r point
 * into `line`, which is modified. Returns false for a line that is not a
 * monitor record (a proxy access-log line, which shares the file in
 * enforce mode, or garbage). */
bool mon_record_parse(char *line, struct mon_record *r);

#endif
