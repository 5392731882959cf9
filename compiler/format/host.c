/*
 * host.c - host string normalisation and address classes (see host.h).
 *
 * The rules follow what a resolver would do with the same bytes, because
 * the danger is a disagreement: if the proxy thought "0x7f.1" was a name
 * (matched by `*`) while getaddrinfo() connected to 127.0.0.1, the policy
 * would be bypassed. So a string whose last label is numeric is parsed as an
 * IPv4 literal exactly as inet_aton() does (1 to 4 parts, each decimal, octal
 * with a leading 0 or hex with 0x; the last part fills the remaining bytes)
 * and rejected when that fails - it is never looked up as a name.
 */
#include "host.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

const char *host_err_str(enum host_err e)
{
	switch (e) {
	case HOST_OK: return "ok";
	case HOST_E_EMPTY: return "empty host name";
	case HOST_E_TOO_LONG: return "host name longer than 253 bytes";
	case HOST_E_LABEL_LEN: return "empty label or label longer than 63 bytes";
	case HOST_E_NON_ASCII: return "non-ASCII byte in host name (IDNs must be sent as punycode)";
	case HOST_E_CHAR: return "character not allowed in a host name";
	case HOST_E_HYPHEN: return "label starts or ends with '-'";
	case HOST_E_IPV4: return "invalid IPv4 address";
	case HOST_E_IPV6: return "invalid IPv6 address";
	}
	return "unknown host error";
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

int host_hex_val(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Writes the dotted quad of a[0..4) into out (at least 16 bytes). */
static size_t format_v4(const uint8_t a[4], char *out)
{
	size_t n = 0;
	for (int i = 0; i < 4; i++) {
		unsigned v = a[i];
		if (v >= 100)
			out[n++] = (char)('0' + v / 100);
		if (v >= 10)
			out[n++] = (char)('0' + v / 10 % 10);
		out[n++] = (char)('0' + v % 10);
		if (i < 3)
			out[n++] = '.';
	}
	out[n] = '\0';
	return n;
}

/* One inet_aton part: "0x1f" hex, "017" octal, "17" decimal. */
static bool parse_v4_part(const char *s, size_t n, uint64_t *val)
{
	uint64_t v = 0;
	unsigned base = 10;
	size_t i = 0;

	if (n == 0)
		return false;
	if (s[0] == '0' && n > 1 && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
		if (n == 2)
			return false; /* "0x" alone: inet_aton refuses it */
	} else if (s[0] == '0') {
		base = 8;
	}
	for (; i < n; i++) {
		int d = base == 16 ? host_hex_val((unsigned char)s[i])
				   : (is_digit((unsigned char)s[i]) ? s[i] - '0' : -1);
		if (d < 0 || (unsigned)d >= base)
			return false;
		v = v * base + (unsigned)d;
		if (v > 0xffffffffu)
			return false;
	}
	*val = v;
	return true;
}

static bool parse_v4(const char *s, size_t len, uint8_t out[4])
{
	uint64_t parts[4];
	size_t np = 0, start = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		if (np == 4)
			return false;
		if (!parse_v4_part(s + start, i - start, &parts[np]))
			return false;
		np++;
		start = i + 1;
	}
	for (size_t i = 0; i + 1 < np; i++)
		if (parts[i] > 0xff)
			return false;
	uint64_t last = parts[np - 1];
	uint64_t max = np == 1 ? 0xffffffffu : (1u << (8 * (5 - np))) - 1;
	if (last > max)
		return false;
	uint32_t v = (uint32_t)last;
	for (size_t i = 0; i + 1 < np; i++)
		v |= (uint32_t)parts[i] << (24 - 8 * i);
	out[0] = (uint8_t)(v >> 24);
	out[1] = (uint8_t)(v >> 16);
	out[2] = (uint8_t)(v >> 8);
	out[3] = (uint8_t)v;
	return true;
}

/* The WHATWG URL "ends in a number" test: a last label of digits only, or
 * "0x" plus hex digits, makes the whole string an IPv4 literal. */
static bool ends_in_number(const char *s, size_t len)
{
	size_t i = len;
	while (i > 0 && s[i - 1] != '.')
		i--;
	const char *l = s + i;
	size_t n = len - i;
	if (n == 0)
		return false;
	if (n >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X')) {
		for (size_t k = 2; k < n; k++)
			if (host_hex_val((unsigned char)l[k]) < 0)
				return false;
		return true;
	}
	for (size_t k = 0; k < n; k++)
		if (!is_digit((unsigned char)l[k]))
			return false;
	return true;
}

static enum host_err set_v4(struct host_norm *out, const uint8_t a[4], bool mapped)
{
	out->kind = HOST_IPV4;
	memset(out->addr, 0, sizeof(out->addr));
	memcpy(out->addr, a, 4);
	out->v4_mapped = mapped;
	out->len = format_v4(a, out->name);
	return HOST_OK;
}

static enum host_err parse_v6(const char *s, size_t n, struct host_norm *out)
{
	char buf[INET6_ADDRSTRLEN];
	struct in6_addr a;
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	/* Only hex digits, ':' and '.' (embedded IPv4): no zone ids, no spaces. */
	if (n == 0 || n >= sizeof(buf))
		return HOST_E_IPV6;
	for (size_t i = 0; i < n; i++)
		if (host_hex_val((unsigned char)s[i]) < 0 && s[i] != ':' && s[i] != '.')
			return HOST_E_IPV6;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET6, buf, &a) != 1)
		return HOST_E_IPV6;
	if (memcmp(a.s6_addr, mapped, 12) == 0)
		return set_v4(out, a.s6_addr + 12, true);
	out->kind = HOST_IPV6;
	memcpy(out->addr, a.s6_addr, 16);
	out->v4_mapped = false;
	if (!inet_ntop(AF_INET6, &a, out->name, sizeof(out->name)))
		return HOST_E_IPV6;
	out->len = strlen(out->name);
	return HOST_OK;
}

enum host_err host_normalize(const char *s, size_t len, struct host_norm *out)
{
	if (len == 0)
		return HOST_E_EMPTY;
	if (s[0] == '[') {
		if (len < 2 || s[len - 1] != ']')
			return HOST_E_IPV6;
		return parse_v6(s + 1, len - 2, out);
	}
	bool colon = false;
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)s[i] >= 0x80)
			return HOST_E_NON_ASCII;
		if (s[i] == ':')
			colon = true;
	}
	if (colon)
		return parse_v6(s, len, out);

	if (s[len - 1] == '.')
		len--; /* one trailing dot: the root; "a.." stays an empty label */
	if (len == 0)
		return HOST_E_EMPTY;
	if (len > HOST_NAME_MAX_LEN)
		return HOST_E_TOO_LONG;

	/* Characters before numbers, so "1.2.3.4_" is a character error. */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!(is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '-' || c == '.'))
			return HOST_E_CHAR;
	}
	if (ends_in_number(s, len)) {
		uint8_t a[4];
		if (!parse_v4(s, len, a))
			return HOST_E_IPV4;
		return set_v4(out, a, false);
	}

	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.') {
			unsigned char c = (unsigned char)s[i];
			out->name[i] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
			continue;
		}
		size_t ll = i - start;
		if (ll == 0 || ll > HOST_LABEL_MAX_LEN)
			return HOST_E_LABEL_LEN;
		if (s[start] == '-' || s[i - 1] == '-')
			return HOST_E_HYPHEN;
		if (i < len)
			out->name[i] = '.';
		start = i + 1;
	}
	out->name[len] = '\0';
	out->len = len;
	out->kind = HOST_NAME;
	out->v4_mapped = false;
	memset(out->addr, 0, sizeof(out->addr));
	return HOST_OK;
}

bool host_norm_sockaddr(const struct host_norm *h, unsigned port,
			struct sockaddr_storage *ss, socklen_t *sslen)
{
	memset(ss, 0, sizeof(*ss));
	if (h->kind == HOST_IPV4) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		memcpy(&in->sin_addr, h->addr, 4);
		*sslen = sizeof(*in);
		return true;
	}
	if (h->kind == HOST_IPV6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		memcpy(&in6->sin6_addr, h->addr, 16);
		*sslen = sizeof(*in6);
		return true;
	}
	return false;
}

static enum host_class class_v4(const uint8_t *a)
{
	if (a[0] == 0)
		return HOST_CLASS_UNSPECIFIED;
	if (a[0] == 127)
		return HOST_CLASS_LOOPBACK;
	if (a[0] == 169 && a[1] == 254)
		return a[2] == 169 && a[3] == 254 ? HOST_CLASS_METADATA : HOST_CLASS_LINK_LOCAL;
	if (a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) ||
	    (a[0] == 192 && a[1] == 168))
		return HOST_CLASS_PRIVATE;
	if (a[0] == 100 && (a[1] & 0xc0) == 64)
		return HOST_CLASS_CGNAT;
	if (a[0] >= 224 && a[0] <= 239)
		return HOST_CLASS_MULTICAST;
	if (a[0] >= 240)
		return HOST_CLASS_RESERVED;
	return HOST_CLASS_PUBLIC;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static enum host_class class_v6(const uint8_t *a)
{
	static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	static const uint8_t ec2_meta[16] = { 0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54 };

	if (all_zero(a, 15))
		return a[15] == 0 ? HOST_CLASS_UNSPECIFIED
		       : a[15] == 1 ? HOST_CLASS_LOOPBACK : class_v4(a + 12);
	/* IPv4-mapped (::ffff:0:0/96) and IPv4-compatible (::/96): the kernel
	 * or a relay ends up at the IPv4 address they carry. */
	if (all_zero(a, 10) && ((a[10] == 0xff && a[11] == 0xff) || (a[10] == 0 && a[11] == 0)))
		return class_v4(a + 12);
	if (memcmp(a, nat64, 12) == 0) /* 64:ff9b::/96, RFC 6052 */
		return class_v4(a + 12);
	if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b &&
	    a[4] == 0x00 && a[5] == 0x01) /* 64:ff9b:1::/48, local-use NAT64 */
		return HOST_CLASS_PRIVATE;
	if (a[0] == 0x20 && a[1] == 0x02) { /* 6to4 2002:V4ADDR::/48 */
		enum host_class c = class_v4(a + 2);
		if (c != HOST_CLASS_PUBLIC)
			return c;
	}
	if (memcmp(a, ec2_meta, 16) == 0)
		return HOST_CLASS_METADATA;
	if ((a[0] & 0xfe) == 0xfc)
		return HOST_CLASS_UNIQUE_LOCAL;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return HOST_CLASS_LINK_LOCAL;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
		return HOST_CLASS_PRIVATE; /* site-local, deprecated but routable inside */
	if (a[0] == 0xff)
		return HOST_CLASS_MULTICAST;
	return HOST_CLASS_PUBLIC;
}

enum host_class host_addr_class_raw(const uint8_t *addr, size_t alen)
{
	if (alen == 4)
		return class_v4(addr);
	if (alen == 16)
		return class_v6(addr);
	return HOST_CLASS_RESERVED;
}

enum host_class host_addr_class(const struct sockaddr *sa)
{
	if (!sa)
		return HOST_CLASS_RESERVED;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		return class_v4((const uint8_t *)&in->sin_addr);
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		return class_v6(in6->sin6_addr.s6_addr);
	}
	return HOST_CLASS_RESERVED;
}

const char *host_class_name(enum host_class c)
{
	switch (c) {
	case HOST_CLASS_PUBLIC: return "public";
	case HOST_CLASS_LOOPBACK: return "loopback";
	case HOST_CLASS_UNSPECIFIED: return "unspecified";
	case HOST_CLASS_LINK_LOCAL: return "link-local";
	case HOST_CLASS_PRIVATE: return "private";
	case HOST_CLASS_UNIQUE_LOCAL: return "unique-local";
	case HOST_CLASS_CGNAT: return "cgnat";
	case HOST_CLASS_MULTICAST: return "multicast";
	case HOST_CLASS_RESERVED: return "reserved";
	case HOST_CLASS_METADATA: return "metadata";
	}
	return "reserved";
}
