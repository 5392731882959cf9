/*
 * prx_http.h - the proxy's HTTP/1.x request-head parser and the few
 * responses it writes itself.
 *
 * The parser is strict on purpose: the proxy forwards the client's bytes to
 * an origin, so anything two HTTP implementations could read differently
 * (bare LF, obs-fold, duplicate Host, conflicting lengths, whitespace before
 * a colon) is refused with a status instead of being "repaired". It is a pure
 * function over a buffer so it can be tested and fuzzed without sockets.
 */
#ifndef CAGE_PRX_HTTP_H
#define CAGE_PRX_HTTP_H

#include <stdbool.h>
#include <stddef.h>

enum prx_kind {
	PRX_CONNECT,  /* CONNECT host:port */
	PRX_ABSOLUTE, /* METHOD http://host[:port]/path */
};

struct prx_http_limits {
	size_t max_head;      /* request line + headers + blank line */
	size_t max_line;      /* the request line alone (414 beyond) */
	unsigned max_headers; /* header fields */
};

/* Pointers point into the parsed buffer and live as long as it does. */
struct prx_req {
	enum prx_kind kind;
	char method[16];
	const char *host; /* raw authority host, brackets kept for IPv6 */
	size_t host_len;
	unsigned port;
	const char *path; /* absolute-form only: origin-form target */
	size_t path_len;
	int minor; /* HTTP/1.minor */
	const char *auth; /* Proxy-Authorization value, NULL if absent */
	size_t auth_len;
	size_t head_len; /* bytes of the head, including the blank line */
};

enum prx_parse { PRX_PARSE_MORE, PRX_PARSE_DONE, PRX_PARSE_ERROR };

/* Parses the head at the start of buf[0..len). MORE: incomplete but valid so
 * far; ERROR: *status (400, 405, 414, 431, 505) and *why (static text) say
 * what to answer. Errors are reported as soon as the offending byte arrives,
 * so a client sending garbage gets its answer without waiting for a time-out. */
enum prx_parse prx_http_parse(const char *buf, size_t len, const struct prx_http_limits *lim,
			      struct prx_req *req, int *status, const char **why);

/* The head to send to the origin for an absolute-form request: origin-form
 * request line, Host from the request target, hop-by-hop and Proxy-* fields
 * dropped, "Connection: close" added. Returns the length written, or 0 when
 * it does not fit in cap. `buf` must be the buffer `req` was parsed from. */
size_t prx_http_rewrite(const char *buf, const struct prx_req *req, char *out, size_t cap);

/* Checks "Basic base64(user:secret)" for any user, in constant time with
 * respect to the secret's content. */
bool prx_http_auth_ok(const char *val, size_t len, const char *secret);

/* A complete response with a text/plain body; returns its length or 0 when
 * it would not fit. extra: further header lines ("Name: v\r\n") or NULL. */
size_t prx_http_response(char *out, size_t cap, int status, const char *extra,
			 const char *body);
const char *prx_http_reason(int status);

#endif
