/*
 * sbx_log.c - parsing Seatbelt's unified-log reports (see sbx_log.h).
 */
#include "sbx_log.h"

#include <stdlib.h>
#include <string.h>

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

struct agg {
	char op[64];
	char target[1024];
	unsigned long n;
};

static int by_count(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	int c = strcmp(x->op, y->op);
	return c ? c : strcmp(x->target, y->target);
}

unsigned long sbx_log_summary(FILE *in, const char *tag, FILE *out, size_t max)
{
	struct agg *v = NULL;
	size_t n = 0, cap = 0;
	unsigned long total = 0;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	while ((len = getline(&line, &lcap, in)) > 0) {
		struct sbx_report r;
		if (!sbx_log_parse_ndjson(line, (size_t)len, tag, &r) || !r.tagged || !r.deny)
			continue;
		total += r.count;
		size_t i = 0;
		while (i < n && (strcmp(v[i].op, r.op) || strcmp(v[i].target, r.target)))
			i++;
		if (i == n) {
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct agg *nv = realloc(v, nc * sizeof *nv);
				if (!nv)
					break;
				v = nv;
				cap = nc;
			}
			memset(&v[n], 0, sizeof v[n]);
			memcpy(v[n].op, r.op, sizeof r.op);
			memcpy(v[n].target, r.target, sizeof r.target);
			n++;
		}
		v[i].n += r.count;
	}
	free(line);
	if (n)
		qsort(v, n, sizeof *v, by_count);
	if (n)
		fprintf(out, "cagerun: operations the sandbox denied:\n");
	for (size_t i = 0; i < n && i < max; i++)
		fprintf(out, "cagerun:   %s %s  %lu time%s\n", v[i].op, v[i].target, v[i].n,
			v[i].n == 1 ? "" : "s");
	if (n > max)
		fprintf(out, "cagerun:   ... and %zu more\n", n - max);
	free(v);
	return total;
}
