/*
 * test_prx_http.c - the proxy's request-head parser, rewrite, credential
 * check and responses (runtime/proxy/prx_http.c), without sockets.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "prx_http.h"

static const struct prx_http_limits L = { 16384, 8192, 100 };

static enum prx_parse parse(const char *s, struct prx_req *r, int *st, const char **why)
{
	return prx_http_parse(s, strlen(s), &L, r, st, why);
}

static void expect_status(const char *s, int want)
{
	struct prx_req r;
	int st;
	const char *why;
	enum prx_parse p = parse(s, &r, &st, &why);
	cr_expect(p == PRX_PARSE_ERROR && st == want, "%s: got parse=%d status=%d, want %d", s, p,
		  st, want);
}

Test(prx_http, connect_ok)
{
	struct prx_req r;
	int st;
	const char *why;
	const char *s = "CONNECT Example.COM.:443 HTTP/1.1\r\nHost: x\r\n\r\nTLS";
	cr_assert_eq(parse(s, &r, &st, &why), PRX_PARSE_DONE);
	cr_expect_eq(r.kind, PRX_CONNECT);
	cr_expect_eq(r.port, 443);
	cr_expect_eq(r.host_len, strlen("Example.COM."));
	cr_expect_eq(memcmp(r.host, "Example.COM.", r.host_len), 0);
	cr_expect_eq(r.head_len, strlen(s) - 3, "leftover bytes are not part of the head");
	cr_expect_eq(r.minor, 1);
}

Test(prx_http, connect_ipv6)
{
	struct prx_req r;
	int st;
	const char *why;
	cr_assert_eq(parse("CONNECT [::1]:8080 HTTP/1.0\r\n\r\n", &r, &st, &why), PRX_PARSE_DONE);
	cr_expect_eq(r.port, 8080);
	cr_expect_eq(r.host_len, 5);
	cr_expect_eq(r.minor, 0);
}

Test(prx_http, incomplete_is_more)
{
	struct prx_req r;
	int st;
	const char *why;
	cr_expect_eq(parse("CONNECT a:1 HTTP/1.1\r\nHost: a", &r, &st, &why), PRX_PARSE_MORE);
	cr_expect_eq(parse("CONN", &r, &st, &why), PRX_PARSE_MORE);
	cr_expect_eq(parse("CONNECT a:1 HTTP/1.1\r\n\r", &r, &st, &why), PRX_PARSE_MORE);
}

Test(prx_http, errors_found_before_the_head_ends)
{
	/* No blank line yet, but already wrong: answered at once. */
	expect_status("CONNECT a:1 HTTP/1.1\r\n folded", 400);
	struct prx_req r;
	int st;
	const char *why;
	cr_expect_eq(prx_http_parse("CONNECT a\0", 10, &L, &r, &st, &why), PRX_PARSE_ERROR);
	const char nul[] = "CONNECT a:1 HTTP/1.1\r\nX: a\0";
	cr_expect_eq(prx_http_parse(nul, sizeof nul - 1, &L, &r, &st, &why), PRX_PARSE_ERROR);
}

Test(prx_http, ports)
{
	expect_status("CONNECT a HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT a: HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT a:0 HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT a:65536 HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT a:99999999999 HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT a:+1 HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT a:1x HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT ::1:80 HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT [::1]x HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT [::1 HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT []:1 HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT :80 HTTP/1.1\r\n\r\n", 400);
}

Test(prx_http, syntax)
{
	expect_status("CONNECT a:1 HTTP/1.1\n\n", 400);
	expect_status("CONNECT a:1 HTTP/1.1\r\nX: y\n\r\n", 400);
	expect_status("CONNECT  a:1 HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT a:1  HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT a:1 HTTP/1.1 \r\n\r\n", 400);
	expect_status("\r\nCONNECT a:1 HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT a:1 http/1.1\r\n\r\n", 400);
	expect_status("CONNECT a:1 HTTP/1.1\r\nHost : a\r\n\r\n", 400);
	expect_status("CONNECT a:1 HTTP/1.1\r\n: a\r\n\r\n", 400);
	expect_status("CONNECT a:1 HTTP/1.1\r\nNoColon\r\n\r\n", 400);
	expect_status("CONNECT a:1 HTTP/1.1\r\nX: a\rb\r\n\r\n", 400);
	expect_status("CONNECT a:1 HTTP/1.1\r\nX: \x7f\r\n\r\n", 400);
	expect_status("CONNECT u@a:1 HTTP/1.1\r\n\r\n", 400);
	expect_status("CONNECT a:1 HTTP/2.0\r\n\r\n", 505);
	expect_status("CONNECT a:1 HTTP/1.2\r\n\r\n", 505);
	expect_status("C@NNECT a:1 HTTP/1.1\r\n\r\n", 400);
}

Test(prx_http, fields)
{
	expect_status("GET http://a/ HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 400);
	expect_status("GET http://a/ HTTP/1.1\r\n\r\n", 400); /* 1.1 without Host */
	expect_status("POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n", 400);
	expect_status("POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400);
	expect_status("POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n"
		      "Content-Length: 2\r\n\r\n",
		      400);
	expect_status("POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n"
		      "Transfer-Encoding: chunked\r\n\r\n",
		      400);
	expect_status("CONNECT a:1 HTTP/1.1\r\nContent-Length: 1\r\n\r\n", 400);
	expect_status("CONNECT a:1 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
	expect_status("CONNECT a:1 HTTP/1.1\r\nProxy-Authorization: a\r\n"
		      "Proxy-Authorization: b\r\n\r\n",
		      400);
	struct prx_req r;
	int st;
	const char *why;
	cr_expect_eq(parse("POST http://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
			   "content-length: 5\r\n\r\n",
			   &r, &st, &why),
		     PRX_PARSE_DONE, "equal duplicates are allowed (RFC 9112 6.3)");
	cr_expect_eq(parse("GET http://a/ HTTP/1.0\r\n\r\n", &r, &st, &why), PRX_PARSE_DONE);
}

Test(prx_http, methods_and_targets)
{
	expect_status("GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	expect_status("GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	expect_status("GET https://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	expect_status("GET ftp://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	expect_status("TRACE http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 405);
	expect_status("BREW http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 405);
	expect_status("AVERYLONGMETHODNAMEX http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", 405);
	expect_status("GET http://a/#f HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	expect_status("GET http://u:p@a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	expect_status("GET http:/// HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	expect_status("GET http://a:/ HTTP/1.1\r\nHost: a\r\n\r\n", 400);
	expect_status("CONNECT http://a:1 HTTP/1.1\r\n\r\n", 400);
}

Test(prx_http, limits)
{
	static char big[40000];
	size_t n = (size_t)sprintf(big, "GET http://a/");
	memset(big + n, 'a', 9000);
	strcpy(big + n + 9000, " HTTP/1.1\r\nHost: a\r\n\r\n");
	expect_status(big, 414);
	/* Unterminated line over the limit: 414 as soon as it is known. */
	big[n + 9000] = 0;
	expect_status(big, 414);

	n = (size_t)sprintf(big, "CONNECT a:1 HTTP/1.1\r\n");
	while (n < 17000)
		n += (size_t)sprintf(big + n, "X: %090d\r\n", 1);
	expect_status(big, 431); /* head over 16 KiB, even without its end */
	strcpy(big + n, "\r\n");
	expect_status(big, 431);

	n = (size_t)sprintf(big, "CONNECT a:1 HTTP/1.1\r\n");
	for (int i = 0; i < 101; i++)
		n += (size_t)sprintf(big + n, "X%d: 1\r\n", i);
	strcpy(big + n, "\r\n");
	expect_status(big, 431);
}

Test(prx_http, rewrite)
{
	const char *s = "GET http://Ex.com:8080?q=1 HTTP/1.1\r\nHost: other\r\n"
			"Proxy-Authorization: Basic eDp5\r\nProxy-Connection: keep-alive\r\n"
			"Connection: keep-alive, X-Private\r\nX-Private: 1\r\nKeep-Alive: 300\r\n"
			"TE: trailers\r\nUpgrade: h2c\r\nAccept: */*\r\nX-Proxy-Like: kept\r\n\r\n";
	struct prx_req r;
	int st;
	const char *why;
	cr_assert_eq(parse(s, &r, &st, &why), PRX_PARSE_DONE);
	char out[1024];
	size_t n = prx_http_rewrite(s, &r, out, sizeof out);
	cr_assert_gt(n, 0);
	out[n] = 0;
	cr_expect_str_eq(out, "GET /?q=1 HTTP/1.1\r\nHost: Ex.com:8080\r\nAccept: */*\r\n"
			      "X-Proxy-Like: kept\r\nConnection: close\r\n\r\n");
	cr_expect_eq(prx_http_rewrite(s, &r, out, 20), 0, "too small: 0, never truncated");
}

Test(prx_http, rewrite_default_port_and_path)
{
	const char *s = "HEAD http://a.example HTTP/1.0\r\n\r\n";
	struct prx_req r;
	int st;
	const char *why;
	cr_assert_eq(parse(s, &r, &st, &why), PRX_PARSE_DONE);
	cr_expect_eq(r.port, 80);
	char out[256];
	size_t n = prx_http_rewrite(s, &r, out, sizeof out);
	out[n] = 0;
	cr_expect_str_eq(out, "HEAD / HTTP/1.0\r\nHost: a.example\r\nConnection: close\r\n\r\n");
}

Test(prx_http, auth)
{
	/* "anyone:s3cret", "x:s3cret", "x:s3cre", "x:s3crett", "nocolon" */
	cr_expect(prx_http_auth_ok("Basic YW55b25lOnMzY3JldA==", 26, "s3cret"));
	cr_expect(prx_http_auth_ok("basic   eDpzM2NyZXQ=", 20, "s3cret"));
	cr_expect(!prx_http_auth_ok("Basic eDpzM2NyZQ==", 18, "s3cret"));
	cr_expect(!prx_http_auth_ok("Basic eDpzM2NyZXR0", 18, "s3cret"));
	cr_expect(!prx_http_auth_ok("Basic bm9jb2xvbg==", 18, "s3cret"));
	cr_expect(!prx_http_auth_ok("Bearer eDpzM2NyZXQ=", 19, "s3cret"));
	cr_expect(!prx_http_auth_ok("Basic eDpz*2NyZXQ=", 18, "s3cret"));
	cr_expect(!prx_http_auth_ok("Basic eDpzM2NyZXQ=x", 19, "s3cret"));
	cr_expect(!prx_http_auth_ok(NULL, 0, "s3cret"));
}

Test(prx_http, responses)
{
	char out[512];
	size_t n = prx_http_response(out, sizeof out, 403, NULL, "no\n");
	cr_assert_gt(n, 0);
	out[n] = 0;
	cr_expect_str_eq(out, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
			      "Content-Length: 3\r\nConnection: close\r\n\r\nno\n");
	cr_expect_eq(prx_http_response(out, 10, 403, NULL, "no\n"), 0);
}
