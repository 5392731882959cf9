/*
 * jsonl.c - the JSON-lines writer shared by the proxy log and the monitor
 * (see jsonl.h).
 */
#include "jsonl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void jl_put(struct jl_buf *b, const char *s, size_t n)
{
	if (b->full || sizeof b->p - b->n < n + 2) { /* keep room for "}\n" */
		b->full = true;
		return;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

void jl_fmt(struct jl_buf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		jl_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

void jl_str(struct jl_buf *b, const char *key, const char *s)
{
	jl_fmt(b, ",\"%s\":", key);
	if (!s) {
		jl_put(b, "null", 4);
		return;
	}
	jl_put(b, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			char e[2] = { '\\', (char)*p };
			jl_put(b, e, 2);
		} else if (*p < 0x20 || *p >= 0x7f) {
			jl_fmt(b, "\\u%04x", *p);
		} else {
			jl_put(b, (const char *)p, 1);
		}
	}
	jl_put(b, "\"", 1);
}

void jl_begin(struct jl_buf *b, int64_t real_ms)
{
	b->n = 0;
	b->full = false;
	time_t secs = (time_t)(real_ms / 1000);
	struct tm tm;
	if (!gmtime_r(&secs, &tm))
		memset(&tm, 0, sizeof tm);
	jl_fmt(b, "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\"", tm.tm_year + 1900,
	       tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	       (int)(real_ms % 1000));
}

bool jl_end_write(struct jl_buf *b, int fd)
{
	if (fd < 0)
		return true;
	if (b->full)
		return false;
	memcpy(b->p + b->n, "}\n", 2);
	b->n += 2;
	for (size_t off = 0; off < b->n;) {
		ssize_t w = write(fd, b->p + off, b->n - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		off += (size_t)w;
	}
	return true;
}
