/*
 * target.c - host pattern and Mach service parsing (see target.h).
 *
 * Policies are strict where the proxy is lenient: the proxy must understand
 * every spelling a client might send (0x7f.1 and friends) to refuse it, but
 * a policy names addresses only in canonical form, so what a reviewer reads
 * is what is matched.
 */
#include "target.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static bool parse_port(const char *s, size_t len, uint16_t *out)
{
	if (len == 0 || len > 5)
		return false;
	unsigned v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return false;
	*out = (uint16_t)v;
	return true;
}

static bool parse_ports(struct arena *a, const char *s, size_t len, struct ir_host *h,
			const char **err)
{
	size_t count = 1;
	for (size_t i = 0; i < len; i++)
		if (s[i] == ',')
			count++;
	struct ir_port_range *r = arena_alloc(a, count * sizeof(*r));
	size_t k = 0, i = 0;
	while (i <= len) {
		size_t e = i;
		while (e < len && s[e] != ',')
			e++;
		const char *dash = memchr(s + i, '-', e - i);
		uint16_t lo, hi;
		if (dash) {
			if (!parse_port(s + i, (size_t)(dash - (s + i)), &lo) ||
			    !parse_port(dash + 1, (size_t)(s + e - dash - 1), &hi) || hi < lo) {
				*err = arena_printf(a, "bad port range '%.*s' (want LO-HI within 1-65535)",
						    (int)(e - i), s + i);
				return false;
			}
		} else if (!parse_port(s + i, e - i, &lo)) {
			*err = arena_printf(a, "bad port '%.*s' (want 1-65535)", (int)(e - i), s + i);
			return false;
		} else {
			hi = lo;
		}
		r[k].lo = lo;
		r[k].hi = hi;
		k++;
		i = e + 1;
	}
	h->ports = r;
	h->nports = k;
	return true;
}

/* Letters, digits and hyphens; no label empty, longer than 63, or with a
 * hyphen at either end; lowercased into `out`. */
static bool valid_name(const char *s, size_t len, char *out, const char **err)
{
	if (len == 0 || len > 253) {
		*err = "host name must be 1 to 253 characters";
		return false;
	}
	size_t label = 0;
	for (size_t i = 0; i <= len; i++) {
		char c = i < len ? s[i] : '.';
		if (c == '.') {
			if (label == 0) {
				*err = "empty label in host name";
				return false;
			}
			if (label > 63) {
				*err = "host name label longer than 63 characters";
				return false;
			}
			if (s[i - 1] == '-' || s[i - label] == '-') {
				*err = "host name label starts or ends with '-'";
				return false;
			}
			label = 0;
		} else if ((unsigned char)c >= 0x80) {
			*err = "non-ASCII host name: write internationalised names in punycode (xn--...)";
			return false;
		} else if (!isalnum((unsigned char)c) && c != '-') {
			*err = "host names may contain only letters, digits, '-' and '.'";
			return false;
		} else {
			label++;
		}
		if (i < len)
			out[i] = (char)tolower((unsigned char)c);
	}
	out[len] = '\0';
	return true;
}

/* "https://github.com/x" is a URL, not a host: say what to write instead
 * ("github.com:443"), the port taken from the scheme when it is known. */
bool target_reject_url(struct arena *a, const char *s, size_t len, const char **err)
{
	const char *sep = NULL;
	for (size_t i = 0; i + 3 <= len; i++)
		if (memcmp(s + i, "://", 3) == 0) {
			sep = s + i;
			break;
		}
	if (!sep)
		return false;
	size_t slen = (size_t)(sep - s);
	const char *host = sep + 3, *end = s + len;
	const char *stop = host;
	while (stop < end && *stop != '/' && *stop != '?' && *stop != '#')
		stop++;
	const char *at = memchr(host, '@', (size_t)(stop - host));
	if (at)
		host = at + 1; /* user:password@ is no part of a host rule */
	size_t hlen = (size_t)(stop - host);
	const char *close = hlen && host[0] == '[' ? memchr(host, ']', hlen) : NULL;
	bool has_port = close ? close + 1 < stop && close[1] == ':' : memchr(host, ':', hlen) != NULL;
	const char *port = has_port ? ""
			 : slen == 5 && strncmp(s, "https", 5) == 0 ? ":443"
			 : slen == 4 && strncmp(s, "http", 4) == 0 ? ":80" : "";
	if (hlen == 0)
		*err = arena_printf(a, "a URL is not a host: write the host name and port, "
				    "without the scheme");
	else
		*err = arena_printf(a, "a URL is not a host: drop the scheme '%.*s://'%s; "
				    "did you mean \"%.*s%s\"?", (int)slen, s,
				    stop < end ? " and the path" : "", (int)hlen, host, port);
	return true;
}

bool target_parse_host(struct arena *a, const char *s, size_t len, struct ir_host *h,
		       const char **err)
{
	memset(h, 0, sizeof(*h));
	if (target_reject_url(a, s, len, err))
		return false;
	const char *host = s, *ports = NULL;
	size_t hlen = len, plen = 0;
	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close) {
			*err = "missing ']' after IPv6 address";
			return false;
		}
		host = s + 1;
		hlen = (size_t)(close - host);
		size_t rest = len - (size_t)(close + 1 - s);
		if (rest > 0) {
			if (close[1] != ':') {
				*err = "expected ':port' after ']'";
				return false;
			}
			ports = close + 2;
			plen = rest - 1;
		}
		char tmp[64];
		if (hlen >= sizeof(tmp)) {
			*err = "bad IPv6 address";
			return false;
		}
		memcpy(tmp, host, hlen);
		tmp[hlen] = '\0';
		if (inet_pton(AF_INET6, tmp, h->addr) != 1) {
			*err = "bad IPv6 address";
			return false;
		}
		char canon[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, h->addr, canon, sizeof(canon));
		h->kind = IR_H_IPV6;
		h->name = arena_strdup(a, canon);
	} else {
		const char *colon = memchr(s, ':', len);
		if (colon) {
			if (memchr(colon + 1, ':', len - (size_t)(colon + 1 - s))) {
				*err = "IPv6 addresses must be written in brackets: [::1]:port";
				return false;
			}
			hlen = (size_t)(colon - s);
			ports = colon + 1;
			plen = len - hlen - 1;
		}
		if (hlen > 0 && host[hlen - 1] == '.')
			hlen--; /* the root label: "github.com." is "github.com" */
		char *name = arena_alloc(a, hlen + 1);
		if (hlen == 1 && host[0] == '*') {
			h->kind = IR_H_ANY;
			h->name = "*";
		} else if (hlen > 2 && host[0] == '*' && host[1] == '.') {
			if (memchr(host + 2, '*', hlen - 2)) {
				*err = "'*' may appear only as the whole first label ('*.example.com')";
				return false;
			}
			if (!valid_name(host + 2, hlen - 2, name, err))
				return false;
			h->kind = IR_H_SUFFIX;
			h->name = name;
		} else if (memchr(host, '*', hlen)) {
			*err = "'*' may appear only as the whole first label ('*.example.com')";
			return false;
		} else {
			if (!valid_name(host, hlen, name, err))
				return false;
			uint8_t v4[4];
			bool all_numeric = true;
			for (size_t i = 0; i < hlen; i++)
				if (!isdigit((unsigned char)host[i]) && host[i] != '.')
					all_numeric = false;
			if (all_numeric) {
				/* inet_pton accepts only the canonical dotted quad,
				 * which is what we want a reviewer to read. */
				if (inet_pton(AF_INET, name, v4) != 1) {
					*err = "bad IPv4 address (write four decimal parts: 10.0.0.1)";
					return false;
				}
				memcpy(h->addr, v4, 4);
				h->kind = IR_H_IPV4;
			} else {
				const char *dot = strrchr(name, '.');
				const char *tld = dot ? dot + 1 : name;
				if (isdigit((unsigned char)tld[0]) && strspn(tld, "0123456789") == strlen(tld) &&
				    dot) {
					*err = "a host name cannot end in a numeric label";
					return false;
				}
				h->kind = IR_H_NAME;
			}
			h->name = name;
		}
	}
	if (ports && !parse_ports(a, ports, plen, h, err))
		return false;
	return true;
}

bool target_parse_mach(struct arena *a, const char *s, size_t len, struct ir_mach *out,
		       const char **err)
{
	memset(out, 0, sizeof(*out));
	if (len == 0 || len > 512) {
		*err = "Mach service names must be 1 to 512 characters";
		return false;
	}
	size_t n = len;
	if (s[len - 1] == '*') {
		out->prefix = true;
		n--;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!isalnum(c) && c != '.' && c != '-' && c != '_') {
			*err = "Mach service names may contain only letters, digits, '.', '-' and '_' "
			       "(and a final '*' for a prefix)";
			return false;
		}
	}
	if (out->prefix && (n == 0 || s[n - 1] != '.')) {
		*err = "a Mach service prefix must end in '.*' (e.g. 'com.example.*')";
		return false;
	}
	out->name = arena_strndup(a, s, n);
	return true;
}
