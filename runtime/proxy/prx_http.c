/*
 * prx_http.c - strict HTTP/1.x request-head parsing for the proxy, the
 * rewrite of absolute-form requests into origin-form, Proxy-Authorization
 * checking and the proxy's own short responses.
 *
 * Every check answers with the status RFC 9110/9112 gives it; where the RFCs
 * allow leniency (bare LF, obs-fold, leading blank lines) we refuse, because
 * the origin behind us might be lenient in a different way and the gap is
 * where request smuggling lives.
 */
#include "prx_http.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static bool is_tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Field-value bytes: HTAB, SP, VCHAR, obs-text. */
static bool is_vbyte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static bool ieq(const char *a, size_t alen, const char *lit)
{
	size_t n = strlen(lit);
	return alen == n && strncasecmp(a, lit, n) == 0;
}

#define FAIL(st, msg)            \
	do {                     \
		*status = (st);  \
		*why = (msg);    \
		return PRX_PARSE_ERROR; \
	} while (0)

/* Parses "host[:port]" (brackets for IPv6). Returns NULL or an error text. */
static const char *parse_authority(const char *s, size_t n, bool need_port, struct prx_req *req)
{
	const char *port = NULL;
	size_t plen = 0;

	if (n == 0)
		return "empty host";
	if (memchr(s, '@', n))
		return "userinfo in the request target";
	if (s[0] == '[') {
		const char *rb = memchr(s, ']', n);
		if (!rb)
			return "unterminated IPv6 literal";
		req->host = s;
		req->host_len = (size_t)(rb - s) + 1;
		size_t rest = n - req->host_len;
		if (rest > 0) {
			if (rb[1] != ':')
				return "junk after IPv6 literal";
			port = rb + 2;
			plen = rest - 1;
			if (plen == 0)
				return "empty port";
		}
	} else {
		const char *colon = memchr(s, ':', n);
		req->host = s;
		req->host_len = colon ? (size_t)(colon - s) : n;
		if (colon) {
			port = colon + 1;
			plen = n - req->host_len - 1;
			if (plen == 0)
				return "empty port";
			if (memchr(port, ':', plen))
				return "IPv6 literal without brackets";
		}
	}
	if (req->host_len == 0 || (req->host[0] == '[' && req->host_len <= 2))
		return "empty host";
	if (!port) {
		if (need_port)
			return "missing port";
		req->port = 80;
		return NULL;
	}
	if (plen > 5)
		return "bad port";
	unsigned v = 0;
	for (size_t i = 0; i < plen; i++) {
		if (port[i] < '0' || port[i] > '9')
			return "bad port";
		v = v * 10 + (unsigned)(port[i] - '0');
	}
	if (v == 0 || v > 65535)
		return "port out of range";
	req->port = v;
	return NULL;
}

static const char *const absolute_methods[] = {
	"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH",
};

/* Request line "METHOD SP target SP HTTP/d.d" without its CRLF. */
static enum prx_parse parse_request_line(const char *l, size_t n, struct prx_req *req,
					 int *status, const char **why)
{
	size_t i = 0;
	while (i < n && is_tchar((unsigned char)l[i]))
		i++;
	if (i == 0 || i >= n || l[i] != ' ')
		FAIL(400, "malformed method");
	if (i >= sizeof req->method)
		FAIL(405, "method not supported");
	memcpy(req->method, l, i);
	req->method[i] = 0;

	size_t t0 = ++i;
	while (i < n && l[i] > 0x20 && l[i] < 0x7f)
		i++;
	if (i == t0 || i >= n || l[i] != ' ')
		FAIL(400, "malformed request target");
	const char *tgt = l + t0;
	size_t tlen = i - t0;

	const char *v = l + i + 1;
	size_t vlen = n - i - 1;
	if (vlen != 8 || memcmp(v, "HTTP/", 5) != 0 || v[5] < '0' || v[5] > '9' || v[6] != '.' ||
	    v[7] < '0' || v[7] > '9')
		FAIL(400, "malformed HTTP version");
	if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
		FAIL(505, "only HTTP/1.0 and HTTP/1.1 are supported");
	req->minor = v[7] - '0';

	if (strcmp(req->method, "CONNECT") == 0) {
		req->kind = PRX_CONNECT;
		const char *e = parse_authority(tgt, tlen, true, req);
		if (e)
			FAIL(400, e);
		return PRX_PARSE_DONE;
	}
	if (tlen >= 8 && strncasecmp(tgt, "https://", 8) == 0)
		FAIL(400, "https:// targets need CONNECT");
	if (tlen < 7 || strncasecmp(tgt, "http://", 7) != 0)
		FAIL(400, "not a proxy request (needs CONNECT or an absolute http:// target)");
	bool known = false;
	for (size_t k = 0; k < sizeof absolute_methods / sizeof *absolute_methods; k++)
		known |= strcmp(req->method, absolute_methods[k]) == 0;
	if (!known)
		FAIL(405, "method not supported");
	if (memchr(tgt, '#', tlen))
		FAIL(400, "fragment in the request target");
	req->kind = PRX_ABSOLUTE;
	const char *a = tgt + 7;
	size_t alen = 0;
	while (7 + alen < tlen && a[alen] != '/' && a[alen] != '?')
		alen++;
	const char *e = parse_authority(a, alen, false, req);
	if (e)
		FAIL(400, e);
	req->path = a + alen;
	req->path_len = tlen - 7 - alen;
	return PRX_PARSE_DONE;
}

static bool parse_len(const char *v, size_t n, unsigned long long *out)
{
	if (n == 0 || n > 18)
		return false;
	unsigned long long x = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		x = x * 10 + (unsigned)(v[i] - '0');
	}
	*out = x;
	return true;
}

/* Checks the bytes of an unterminated line so that garbage is refused as it
 * arrives, not when the head time-out fires. */
static bool partial_ok(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == '\r' && i + 1 == n)
			break;
		if (!is_vbyte(c))
			return false;
	}
	return true;
}

enum prx_parse prx_http_parse(const char *buf, size_t len, const struct prx_http_limits *lim,
			      struct prx_req *req, int *status, const char **why)
{
	memset(req, 0, sizeof *req);
	*status = 0;
	*why = NULL;

	const char *lf = memchr(buf, '\n', len);
	if (!lf) {
		if (!partial_ok(buf, len))
			FAIL(400, "invalid byte in request line");
		if (len > lim->max_line)
			FAIL(414, "request line too long");
		if (len > lim->max_head)
			FAIL(431, "request head too large");
		return PRX_PARSE_MORE;
	}
	size_t ll = (size_t)(lf - buf);
	if (ll == 0 || buf[ll - 1] != '\r')
		FAIL(400, "bare LF");
	if (ll - 1 > lim->max_line)
		FAIL(414, "request line too long");
	if (!partial_ok(buf, ll - 1) || memchr(buf, '\r', ll - 1))
		FAIL(400, "invalid byte in request line");
	enum prx_parse r = parse_request_line(buf, ll - 1, req, status, why);
	if (r == PRX_PARSE_ERROR)
		return r;

	size_t pos = ll + 1, nhdr = 0;
	bool have_host = false, have_cl = false, have_te = false;
	unsigned long long cl = 0;
	for (;;) {
		if (pos > lim->max_head)
			FAIL(431, "request head too large");
		const char *p = buf + pos;
		size_t rest = len - pos;
		if (rest > 0 && (p[0] == ' ' || p[0] == '\t'))
			FAIL(400, "obsolete line folding");
		lf = memchr(p, '\n', rest);
		if (!lf) {
			if (!partial_ok(p, rest))
				FAIL(400, "invalid byte in header");
			if (len > lim->max_head)
				FAIL(431, "request head too large");
			return PRX_PARSE_MORE;
		}
		size_t n = (size_t)(lf - p);
		if (n == 0 || p[n - 1] != '\r')
			FAIL(400, "bare LF");
		n--; /* without CR */
		if (n == 0) {
			req->head_len = pos + 2;
			break;
		}
		if (++nhdr > lim->max_headers)
			FAIL(431, "too many header fields");
		size_t k = 0;
		while (k < n && is_tchar((unsigned char)p[k]))
			k++;
		if (k == 0 || k >= n || p[k] != ':')
			FAIL(400, "malformed header field name");
		size_t v0 = k + 1, v1 = n;
		for (size_t i = v0; i < v1; i++)
			if (!is_vbyte((unsigned char)p[i]))
				FAIL(400, "invalid byte in header");
		while (v0 < v1 && (p[v0] == ' ' || p[v0] == '\t'))
			v0++;
		while (v1 > v0 && (p[v1 - 1] == ' ' || p[v1 - 1] == '\t'))
			v1--;
		const char *v = p + v0;
		size_t vl = v1 - v0;
		if (ieq(p, k, "host")) {
			if (have_host)
				FAIL(400, "duplicate Host");
			have_host = true;
		} else if (ieq(p, k, "content-length")) {
			unsigned long long x;
			if (!parse_len(v, vl, &x))
				FAIL(400, "invalid Content-Length");
			if (have_cl && x != cl)
				FAIL(400, "conflicting Content-Length");
			have_cl = true;
			cl = x;
		} else if (ieq(p, k, "transfer-encoding")) {
			have_te = true;
		} else if (ieq(p, k, "proxy-authorization")) {
			if (req->auth)
				FAIL(400, "duplicate Proxy-Authorization");
			req->auth = v;
			req->auth_len = vl;
		}
		pos += n + 2;
	}
	if (req->head_len > lim->max_head)
		FAIL(431, "request head too large");
	if (have_cl && have_te)
		FAIL(400, "both Content-Length and Transfer-Encoding");
	if (req->kind == PRX_CONNECT && (have_te || cl > 0))
		FAIL(400, "CONNECT with a body");
	if (req->kind == PRX_ABSOLUTE && req->minor == 1 && !have_host)
		FAIL(400, "HTTP/1.1 request without Host");
	return PRX_PARSE_DONE;
}

/* ---- rewrite ---- */

struct tok {
	const char *p;
	size_t n;
};

static bool is_hop(const char *name, size_t n, const struct tok *conn, size_t nconn)
{
	static const char *const hop[] = { "connection", "keep-alive", "te", "trailer",
					   "upgrade", "host" };
	for (size_t i = 0; i < sizeof hop / sizeof *hop; i++)
		if (ieq(name, n, hop[i]))
			return true;
	if (n >= 6 && strncasecmp(name, "proxy-", 6) == 0)
		return true;
	for (size_t i = 0; i < nconn; i++)
		if (conn[i].n == n && strncasecmp(conn[i].p, name, n) == 0)
			return true;
	return false;
}

struct out {
	char *p;
	size_t n, cap;
	bool full;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->full || o->cap - o->n < n) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->n, s, n);
	o->n += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

size_t prx_http_rewrite(const char *buf, const struct prx_req *req, char *outp, size_t cap)
{
	struct out o = { outp, 0, cap, false };
	const char *lf = memchr(buf, '\n', req->head_len);
	if (!lf || req->kind != PRX_ABSOLUTE)
		return 0;
	const char *hdr0 = lf + 1, *end = buf + req->head_len - 2;

	/* Headers named in Connection are hop-by-hop too (RFC 9110 7.6.1). */
	struct tok conn[16];
	size_t nconn = 0;
	for (const char *p = hdr0; p < end;) {
		const char *e = memchr(p, '\r', (size_t)(end - p));
		const char *colon = memchr(p, ':', (size_t)(e - p));
		if (ieq(p, (size_t)(colon - p), "connection")) {
			const char *q = colon + 1;
			while (q < e && nconn < 16) {
				while (q < e && (*q == ' ' || *q == '\t' || *q == ','))
					q++;
				const char *t = q;
				while (q < e && is_tchar((unsigned char)*q))
					q++;
				if (q > t)
					conn[nconn++] = (struct tok){ t, (size_t)(q - t) };
				while (q < e && *q != ',')
					q++;
			}
		}
		p = e + 2;
	}

	puts_(&o, req->method);
	put(&o, " ", 1);
	if (req->path_len == 0 || req->path[0] != '/')
		put(&o, "/", 1);
	put(&o, req->path, req->path_len);
	puts_(&o, req->minor ? " HTTP/1.1\r\nHost: " : " HTTP/1.0\r\nHost: ");
	put(&o, req->host, req->host_len);
	if (req->port != 80) {
		char pb[8];
		int pn = snprintf(pb, sizeof pb, ":%u", req->port);
		put(&o, pb, (size_t)pn);
	}
	put(&o, "\r\n", 2);
	for (const char *p = hdr0; p < end;) {
		const char *e = memchr(p, '\r', (size_t)(end - p));
		const char *colon = memchr(p, ':', (size_t)(e - p));
		if (!is_hop(p, (size_t)(colon - p), conn, nconn))
			put(&o, p, (size_t)(e - p) + 2);
		p = e + 2;
	}
	puts_(&o, "Connection: close\r\n\r\n");
	return o.full ? 0 : o.n;
}

/* ---- Proxy-Authorization ---- */

static int b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

bool prx_http_auth_ok(const char *val, size_t len, const char *secret)
{
	if (!val || len < 6 || strncasecmp(val, "basic ", 6) != 0)
		return false;
	size_t i = 6;
	while (i < len && val[i] == ' ')
		i++;
	unsigned char dec[384];
	size_t dn = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (; i < len && val[i] != '='; i++) {
		int v = b64val((unsigned char)val[i]);
		if (v < 0 || dn >= sizeof dec)
			return false;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			dec[dn++] = (unsigned char)(acc >> bits);
		}
	}
	for (; i < len; i++)
		if (val[i] != '=')
			return false;
	unsigned char *colon = memchr(dec, ':', dn);
	if (!colon)
		return false;
	const unsigned char *pw = colon + 1;
	size_t pwn = dn - (size_t)(pw - dec), sn = strlen(secret);
	/* Compare over the secret's full length whatever the input is, so the
	 * time taken says nothing about how much of a guess was right. */
	unsigned diff = pwn != sn;
	for (size_t k = 0; k < sn; k++)
		diff |= (unsigned)(unsigned char)secret[k] ^ (k < pwn ? pw[k] : 0u);
	return diff == 0;
}

/* ---- responses ---- */

const char *prx_http_reason(int status)
{
	switch (status) {
	case 200: return "Connection established";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 405: return "Method Not Allowed";
	case 407: return "Proxy Authentication Required";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

size_t prx_http_response(char *out, size_t cap, int status, const char *extra, const char *body)
{
	int n = snprintf(out, cap,
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n%s\r\n%s",
			 status, prx_http_reason(status), strlen(body), extra ? extra : "", body);
	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}
