/*
 * fuzz_monitor.c - libFuzzer target for the monitor's record readers: the
 * JSON-lines log that `cagec monitor-report` and `cagec suggest` read
 * (compiler/format/mon_record.c, a line at a time, as compiler/suggest does)
 * and the Seatbelt log lines cagerun turns into records on macOS
 * (runtime/seatbelt/sbx_log.c). Built only with -DCAGE_FUZZ=ON and clang
 * (testsuite/cmake/fuzz_monitor.cmake).
 *
 * Every line is parsed as a record; what parses has one access bit and a
 * count of at least 1, is counted into a summary as monitor-report counts
 * it, and written back with mon_record_write and parsed again: the same
 * record must come back, and written again, the same line. The whole input is also read as `log stream
 * --style ndjson` output, and every line as a report's text.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mon_record.h"
#include "mon_summary.h"
#include "sbx_log.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A line longer than this is parsed but not written back (the pipe must
 * hold the record's line, escapes and all). */
enum { ROUND_TRIP_MAX = 4096 };

static int rt[2]; /* the round trip's pipe */
static FILE *devnull;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_monitor: %s\n", what);
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	check(pipe(rt) == 0, "pipe");
	check(fcntl(rt[0], F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	devnull = fopen("/dev/null", "w");
	check(devnull != NULL, "/dev/null");
	return 0;
}

/* Writes r and returns the line (in buf, NUL-terminated). */
static size_t write_back(const struct mon_record *r, char *buf, size_t cap)
{
	check(mon_record_write(rt[1], r), "mon_record_write");
	size_t n = 0;
	for (;;) {
		check(n < cap - 1, "the written line fits");
		ssize_t k = read(rt[0], buf + n, cap - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	check(n > 0 && buf[n - 1] == '\n', "one whole line was written");
	buf[n] = '\0';
	check(memchr(buf, '\n', n - 1) == NULL, "exactly one line was written");
	return n;
}

/* A written line parses back to the same record, and writing that gives
 * the same line again. (Not the parsed input's very bytes: the writer
 * escapes what is not valid UTF-8.) */
static void round_trip(const struct mon_record *r)
{
	static char one[8 * ROUND_TRIP_MAX + 1024], two[sizeof one], parsed[sizeof one];
	size_t n1 = write_back(r, one, sizeof one);
	memcpy(parsed, one, n1 + 1);
	struct mon_record b;
	check(mon_record_parse(parsed, &b), "a written record parses");
	check(b.time_ms == r->time_ms, "the time comes back");
	check(b.pid == r->pid, "the pid comes back");
	check(b.access == r->access, "the access comes back");
	/* A port is written for a host only (a file record's is meaningless). */
	check(!r->host || b.port == r->port, "the port comes back");
	check(b.verdict == r->verdict, "the verdict comes back");
	check(b.count == r->count, "the count comes back");
	check(!b.exe == !r->exe && !b.syscall == !r->syscall && !b.path == !r->path &&
		      !b.host == !r->host && !b.rule == !r->rule && !b.rule_text == !r->rule_text,
	      "the same strings come back");
	size_t n2 = write_back(&b, two, sizeof two);
	check(n1 == n2 && memcmp(one, two, n1) == 0, "a written line is written again the same");
}

static void one_line(struct mon_summary *s, const char *line, size_t len)
{
	char *copy = malloc(len + 1);
	check(copy != NULL, "oom");
	memcpy(copy, line, len);
	copy[len] = '\0';
	struct mon_record r;
	if (mon_record_parse(copy, &r)) {
		check(r.access != 0 && (r.access & (r.access - 1)) == 0, "one access bit");
		check(strcmp(mon_access_name(r.access), "?") != 0, "a named access");
		check(r.count >= 1, "a count of at least 1");
		mon_summary_add(s, &r);
		if (len <= ROUND_TRIP_MAX)
			round_trip(&r);
	}
	free(copy);
	struct sbx_report rep;
	if (sbx_log_parse_text(line, len, "cage-00ff", &rep)) {
		struct mon_record rr;
		if (sbx_report_record(&rep, 0, &rr))
			mon_summary_add(s, &rr);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mon_summary s;
	mon_summary_init(&s, 64, false);
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		one_line(&s, p, len);
		p += len + (nl != NULL);
	}
	mon_summary_print(&s, devnull, "  ");
	mon_summary_free(&s);

	/* The whole input as `log stream --style ndjson` output. */
	if (size > 0) {
		FILE *in = fmemopen((void *)data, size, "r");
		if (in) {
			struct mon_summary t;
			mon_summary_init(&t, 64, true);
			unsigned long other = 0;
			sbx_log_collect(in, "cage-00ff", &t, -1, &other);
			mon_summary_print(&t, devnull, "");
			mon_summary_free(&t);
			fclose(in);
		}
	}
	return 0;
}
