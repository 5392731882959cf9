/*
 * prx_log.c - the proxy's access log: one JSON object per line per client
 * connection, written when the connection ends so that it carries the byte
 * counts and duration.
 *
 * Host names and reasons can come from a hostile client, so every string is
 * escaped (control bytes and non-ASCII as \u00XX: the log stays valid JSON
 * and one line, whatever was sent). Each record goes out in a single write(2)
 * so that lines from concurrent writers to an O_APPEND file never interleave.
 */
#include "prx_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct lbuf {
	char p[4096];
	size_t n;
	bool full;
};

static void lput(struct lbuf *b, const char *s, size_t n)
{
	if (b->full || sizeof b->p - b->n < n + 2) { /* keep room for "}\n" */
		b->full = true;
		return;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void lfmt(struct lbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lfmt(struct lbuf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		lput(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void lstr(struct lbuf *b, const char *key, const char *s)
{
	lfmt(b, ",\"%s\":", key);
	if (!s) {
		lput(b, "null", 4);
		return;
	}
	lput(b, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			char e[2] = { '\\', (char)*p };
			lput(b, e, 2);
		} else if (*p < 0x20 || *p >= 0x7f) {
			lfmt(b, "\\u%04x", *p);
		} else {
			lput(b, (const char *)p, 1);
		}
	}
	lput(b, "\"", 1);
}

bool prx_log_write(int fd, const struct prx_logrec *r)
{
	if (fd < 0)
		return true;
	struct lbuf b = { .n = 0, .full = false };
	time_t secs = (time_t)(r->start_real_ms / 1000);
	struct tm tm;
	if (!gmtime_r(&secs, &tm))
		memset(&tm, 0, sizeof tm);
	lfmt(&b, "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\"", tm.tm_year + 1900,
	     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	     (int)(r->start_real_ms % 1000));
	lstr(&b, "client", r->client);
	lstr(&b, "method", r->method);
	lstr(&b, "host", r->host);
	if (r->port)
		lfmt(&b, ",\"port\":%u", r->port);
	else
		lput(&b, ",\"port\":null", 12);
	lstr(&b, "decision", r->decision);
	lfmt(&b, ",\"status\":%d", r->status);
	lstr(&b, "rule", r->rule && *r->rule ? r->rule : NULL);
	lstr(&b, "reason", r->reason);
	lfmt(&b, ",\"bytes_up\":%" PRIu64 ",\"bytes_down\":%" PRIu64 ",\"duration_ms\":%" PRIu64,
	     r->bytes_up, r->bytes_down, r->duration_ms);
	if (b.full) /* never emit a cut-off, unparseable line */
		return false;
	memcpy(b.p + b.n, "}\n", 2);
	b.n += 2;
	for (size_t off = 0; off < b.n;) {
		ssize_t w = write(fd, b.p + off, b.n - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		off += (size_t)w;
	}
	return true;
}
