/*
 * sbx_log.h - reading Seatbelt's reports from the unified log.
 *
 * The kernel logs a sandbox decision as (sender "Sandbox", process kernel)
 *
 *   Sandbox: NAME(PID) deny(1) OPERATION [TARGET]
 *   Sandbox: NAME(PID) System Policy: deny(1) OPERATION [TARGET]
 *   N duplicate report(s) for Sandbox: NAME(PID) deny(1) OPERATION [TARGET]
 *
 * and, for rules carrying (with report) in monitor mode, the same with
 * `allow` in place of `deny`. A rule with (with message "TAG") has TAG at
 * the end of its line (cagerun selects its run's lines with `log stream
 * --predicate 'eventMessage ENDSWITH "TAG"'`). `log stream --style ndjson`
 * writes one JSON object per line whose "eventMessage" holds that text.
 * The formats and where each was seen are in docs/cagerun.md ("Seatbelt's
 * reports"); the tests use lines quoted from public reports.
 */
#ifndef CAGE_SBX_LOG_H
#define CAGE_SBX_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mon_record.h"
#include "mon_summary.h"

/* One decision as the line says it: who, what operation on what, denied
 * or allowed-with-report, and how many times. sbx_report_record turns it
 * into the monitor's record (mon_record.h), the same as Linux's. */
struct sbx_report {
	char process[64];
	long pid;
	bool deny;            /* false: allowed, reported (monitor mode) */
	bool system_policy;   /* "System Policy:": the platform's, not ours */
	unsigned long count;  /* 1 + duplicates folded into this line */
	char op[64];
	char target[1024];    /* "" when the operation names none */
	bool tagged;          /* the line ended with the tag asked for */
};

/* Parses one message (or a whole text line around it: a "kernel: (Sandbox)"
 * or syslog prefix is skipped). tag: when not NULL, a trailing " TAG" is
 * taken off the target and sets r->tagged. False when the text is no
 * sandbox report. */
bool sbx_log_parse_text(const char *s, size_t len, const char *tag, struct sbx_report *r);

/* Parses one line of `log stream --style ndjson`: its "eventMessage"
 * string, decoded, then as above. */
bool sbx_log_parse_ndjson(const char *line, size_t len, const char *tag, struct sbx_report *r);

/* The monitor record of a report (its strings point into r): file
 * operations become their access (the inverse of sbpl_file_ops),
 * network-outbound to a path `unix`, to HOST:PORT `connect`, mach-lookup
 * `mach` (the service as host, port 0); denied in enforce, would-block
 * for an allow-with-report. False for operations no policy rule names
 * (sysctl, IOKit, process-info, ...). */
bool sbx_report_record(const struct sbx_report *r, int64_t time_ms, struct mon_record *out);

/* Reads `log stream --style ndjson` output: every report of this run (the
 * tag's) goes into s and, with log_fd >= 0, as a record line into the log.
 * Returns how many such reports were read; *other counts those no record
 * can carry (they are in the total, not in s). */
unsigned long sbx_log_collect(FILE *in, const char *tag, struct mon_summary *s, int log_fd,
			      unsigned long *other);

#endif
