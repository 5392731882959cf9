/*
 * fuzz_prx_http.c - libFuzzer target for the proxy's request-head parser,
 * the absolute-form rewrite and the Proxy-Authorization check: the bytes a
 * hostile client controls before any policy decision. Built only with
 * -DCAGE_FUZZ=ON and clang (testsuite/cmake/proxy.cmake).
 *
 * Besides "no crash, no sanitizer report", it checks what the rest of the
 * proxy relies on: a parsed head lies inside the input, ports are 1..65535,
 * and a rewritten head is well formed (CRLF only, no NUL, no Proxy-* field,
 * ends with the blank line) whatever the client sent.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "prx_http.h"

static void check(int ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Small limits so that the limit paths are reached often. */
	const struct prx_http_limits lim = { 512, 256, 8 };
	struct prx_req r;
	int st;
	const char *why;
	const char *buf = (const char *)data;
	enum prx_parse p = prx_http_parse(buf, size, &lim, &r, &st, &why);
	if (p == PRX_PARSE_ERROR) {
		check(st >= 400 && st <= 505 && why != NULL);
		return 0;
	}
	if (p == PRX_PARSE_MORE)
		return 0;
	check(r.head_len >= 4 && r.head_len <= size && r.head_len <= lim.max_head);
	check(memcmp(buf + r.head_len - 4, "\r\n\r\n", 4) == 0);
	check(r.port >= 1 && r.port <= 65535);
	check(r.host >= buf && r.host + r.host_len <= buf + r.head_len && r.host_len > 0);
	if (r.auth)
		(void)prx_http_auth_ok(r.auth, r.auth_len, "0123456789abcdef0123456789abcdef");
	if (r.kind != PRX_ABSOLUTE)
		return 0;
	char out[1024];
	size_t n = prx_http_rewrite(buf, &r, out, sizeof out);
	if (n == 0)
		return 0;
	check(n >= 4 && memcmp(out + n - 4, "\r\n\r\n", 4) == 0);
	for (size_t i = 0; i < n; i++) {
		check(out[i] != 0);
		if (out[i] == '\n')
			check(i > 0 && out[i - 1] == '\r');
		if (i > 0 && out[i - 1] == '\n' && i + 6 <= n)
			check(strncasecmp(out + i, "proxy-", 6) != 0);
	}
	return 0;
}
