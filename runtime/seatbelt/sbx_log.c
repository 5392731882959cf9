/*
 * sbx_log.c - parsing Seatbelt's unified-log reports (see sbx_log.h).
 */
#include "sbx_log.h"

#include "ir.h"
#include "sbpl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *find(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(s + i, needle, n) == 0)
			return s + i;
	return NULL;
}

static void copy(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "N duplicate report(s) for " right before p: N, or 0. */
static unsigned long duplicates_before(const char *start, const char *p)
{
	static const char *const forms[] = { " duplicate reports for ", " duplicate report for " };
	for (size_t f = 0; f < 2; f++) {
		size_t n = strlen(forms[f]);
		if ((size_t)(p - start) < n + 1 || memcmp(p - n, forms[f], n) != 0)
			continue;
		const char *d = p - n;
		while (d > start && is_digit(d[-1]))
			d--;
		return strtoul(d, NULL, 10);
	}
	return 0;
}

bool sbx_log_parse_text(const char *s, size_t len, const char *tag, struct sbx_report *r)
{
	memset(r, 0, sizeof *r);
	const char *end = s + len;
	while (end > s && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	const char *p = find(s, (size_t)(end - s), "Sandbox: ");
	if (!p)
		return false;
	r->count = 1 + duplicates_before(s, p);
	p += strlen("Sandbox: ");
	/* NAME(PID): the first "(digits) " after the name. */
	const char *q = p;
	for (; q < end; q++) {
		if (*q != '(')
			continue;
		const char *d = q + 1;
		while (d < end && is_digit(*d))
			d++;
		if (d > q + 1 && d + 1 < end && d[0] == ')' && d[1] == ' ')
			break;
	}
	if (q >= end || q == p)
		return false;
	copy(r->process, sizeof r->process, p, (size_t)(q - p));
	r->pid = strtol(q + 1, NULL, 10);
	p = strchr(q, ')') + 2;
	static const char sys[] = "System Policy: ";
	if ((size_t)(end - p) >= sizeof sys - 1 && memcmp(p, sys, sizeof sys - 1) == 0) {
		r->system_policy = true;
		p += sizeof sys - 1;
	}
	if ((size_t)(end - p) >= 4 && memcmp(p, "deny", 4) == 0) {
		r->deny = true;
		p += 4;
	} else if ((size_t)(end - p) >= 5 && memcmp(p, "allow", 5) == 0) {
		p += 5;
	} else {
		return false;
	}
	if (p < end && *p == '(') { /* deny(1): how many times, folded by the kernel */
		const char *d = p + 1;
		while (d < end && is_digit(*d))
			d++;
		if (d >= end || *d != ')')
			return false;
		p = d + 1;
	}
	if (p >= end || *p != ' ')
		return false;
	p++;
	const char *op_end = p;
	while (op_end < end && *op_end != ' ')
		op_end++;
	if (op_end == p)
		return false;
	copy(r->op, sizeof r->op, p, (size_t)(op_end - p));
	const char *t = op_end < end ? op_end + 1 : end;
	const char *t_end = end;
	if (tag) {
		size_t tn = strlen(tag);
		if ((size_t)(t_end - op_end) >= tn + 1 && memcmp(t_end - tn, tag, tn) == 0 &&
		    t_end[-(long)tn - 1] == ' ') {
			r->tagged = true;
			t_end -= tn + 1;
			if (t > t_end)
				t = t_end;
		}
	}
	copy(r->target, sizeof r->target, t, (size_t)(t_end - t));
	return true;
}

/* The JSON string after "key": decoded into out (\uXXXX below 0x80 only;
 * others become '?', which the report text never needs). */
static bool json_string(const char *line, size_t len, const char *key, char *out, size_t cap)
{
	const char *p = find(line, len, key);
	if (!p)
		return false;
	const char *end = line + len;
	p += strlen(key);
	while (p < end && (*p == ' ' || *p == ':'))
		p++;
	if (p >= end || *p != '"')
		return false;
	size_t o = 0;
	for (p++; p < end && *p != '"'; p++) {
		char c = *p;
		if (c == '\\' && p + 1 < end) {
			c = *++p;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				if (end - p < 5)
					return false;
				char hex[5];
				memcpy(hex, p + 1, 4);
				hex[4] = '\0';
				long v = strtol(hex, NULL, 16);
				c = v > 0 && v < 0x80 ? (char)v : '?';
				p += 4;
				break;
			}
			default: break; /* \" \\ \/ */
			}
		}
		if (o + 1 < cap)
			out[o++] = c;
	}
	out[o] = '\0';
	return p < end;
}

bool sbx_log_parse_ndjson(const char *line, size_t len, const char *tag, struct sbx_report *r)
{
	char msg[2048];
	if (!json_string(line, len, "\"eventMessage\"", msg, sizeof msg))
		return false;
	return sbx_log_parse_text(msg, strlen(msg), tag, r);
}

/* Operation -> access bit, from the backend's own table (sbpl_file_ops),
 * so that a report reads back as the rule that would cover it. */
static uint32_t file_access_of(const char *op)
{
	for (uint32_t bit = 1; bit & IR_A_FILE; bit <<= 1) {
		size_t n = 0;
		const char *const *ops = sbpl_file_ops(bit, &n);
		for (size_t i = 0; i < n; i++)
			if (!strcmp(ops[i], op))
				return bit;
	}
	/* Names the table spells with a wildcard or an alias. */
	if (!strcmp(op, "process-exec") || !strcmp(op, "process-exec-interpreter"))
		return IR_A_EXEC;
	return 0;
}

bool sbx_report_record(const struct sbx_report *r, int64_t time_ms, struct mon_record *out)
{
	memset(out, 0, sizeof *out);
	out->time_ms = time_ms;
	out->pid = r->pid;
	out->exe = r->process[0] ? r->process : NULL;
	out->syscall = r->op;
	out->verdict = r->deny ? MON_DENIED : MON_WOULD_BLOCK;
	out->count = r->count ? r->count : 1;
	uint32_t a = file_access_of(r->op);
	if (a && r->target[0] == '/') {
		out->access = a;
		out->path = r->target;
		return true;
	}
	if (!strcmp(r->op, "network-outbound") && r->target[0] == '/') {
		out->access = IR_A_UNIX;
		out->path = r->target;
		return true;
	}
	if (!strcmp(r->op, "mach-lookup") && r->target[0]) {
		out->access = IR_A_MACH;
		out->host = r->target;
		return true;
	}
	const char *colon = strrchr(r->target, ':');
	if (!strncmp(r->op, "network-outbound", 16) && colon && colon[1]) {
		char *end;
		unsigned long port = strtoul(colon + 1, &end, 10);
		if (*end || port > 65535)
			return false;
		/* The host part stays in place: records keep pointers, so it
		 * is cut off in the caller's copy (sbx_log_collect). */
		out->access = IR_A_CONNECT;
		out->host = r->target;
		out->port = (unsigned)port;
		return true;
	}
	return false;
}

unsigned long sbx_log_collect(FILE *in, const char *tag, struct mon_summary *s, int log_fd,
			      unsigned long *other)
{
	unsigned long total = 0;
	*other = 0;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	struct timespec ts;
	while ((len = getline(&line, &lcap, in)) > 0) {
		struct sbx_report r;
		if (!sbx_log_parse_ndjson(line, (size_t)len, tag, &r) || (tag && !r.tagged))
			continue;
		total += r.count;
		struct mon_record rec;
		clock_gettime(CLOCK_REALTIME, &ts);
		int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
		if (!sbx_report_record(&r, now, &rec)) {
			*other += r.count;
			continue;
		}
		if (rec.access == IR_A_CONNECT)
			*strrchr(r.target, ':') = '\0';
		mon_summary_add(s, &rec);
		if (log_fd >= 0)
			(void)mon_record_write(log_fd, &rec);
	}
	free(line);
	return total;
}
