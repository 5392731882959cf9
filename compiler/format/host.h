/*
 * host.h - what a host string from a client really names, and what kind of
 * address the proxy is about to connect to.
 *
 * The proxy never decides on the bytes a client sent: it first turns them
 * into one canonical form (host_normalize), so that "GitHub.COM.",
 * "github.com" and "github.com" are one name, and "0x7f.1", "2130706433",
 * "0177.0.0.1", "127.1" and "[::ffff:127.0.0.1]" are all the address
 * 127.0.0.1 (parsed the way inet_aton()/getaddrinfo() would, so the proxy
 * knows what a resolver would really connect to). Everything that is neither
 * a strict LDH name nor an IP literal is rejected. Nothing here allocates.
 *
 * host_addr_class() is the second gate: after resolving an allowed name, the
 * proxy refuses internal addresses (loopback, private, metadata, ...) unless a
 * rule names them explicitly (cpt_lookup_addr in cpt.h).
 */
#ifndef CAGE_HOST_H
#define CAGE_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Longest name (no trailing dot) and label, RFC 1035 / RFC 1123. */
#define HOST_NAME_MAX_LEN 253
#define HOST_LABEL_MAX_LEN 63

enum host_kind {
	HOST_NAME, /* a DNS name: lowercase LDH labels, no trailing dot */
	HOST_IPV4, /* an IPv4 literal in any inet_aton form, or v4-mapped v6 */
	HOST_IPV6, /* an IPv6 literal (bare or in brackets) */
};

enum host_err {
	HOST_OK = 0,
	HOST_E_EMPTY,      /* "" or "." */
	HOST_E_TOO_LONG,   /* more than 253 bytes without the trailing dot */
	HOST_E_LABEL_LEN,  /* an empty label ("a..b") or one over 63 bytes */
	HOST_E_NON_ASCII,  /* a byte >= 0x80: IDNs must arrive as punycode */
	HOST_E_CHAR,       /* a byte outside letters, digits, '-' and '.' */
	HOST_E_HYPHEN,     /* a label starting or ending with '-' */
	HOST_E_IPV4,       /* ends in a number but is no valid IPv4 literal */
	HOST_E_IPV6,       /* brackets or ':' but no valid IPv6 literal */
};

struct host_norm {
	enum host_kind kind;
	/* NAME: the normalised name; IPV4: dotted quad ("127.0.0.1");
	 * IPV6: RFC 5952 text without brackets ("::1"). NUL-terminated. */
	char name[HOST_NAME_MAX_LEN + 1];
	size_t len;
	/* IPV4: addr[0..4) in network order; IPV6: all 16 bytes. */
	uint8_t addr[16];
	/* IPV4 only: written as an IPv4-mapped IPv6 literal ("[::ffff:a.b.c.d]"). */
	bool v4_mapped;
};

/* Normalise `len` bytes at `s` (not necessarily NUL-terminated; a NUL byte
 * inside is an error). Accepts a name, a dotted/numeric IPv4 literal, or an
 * IPv6 literal with or without brackets (no zone id). On error `out` is
 * unspecified. Never allocates. */
/* The value of a hex digit, -1 for anything else. */
int host_hex_val(unsigned char c);

enum host_err host_normalize(const char *s, size_t len, struct host_norm *out);
const char *host_err_str(enum host_err e);

/* The socket address for a normalised IP literal (kind IPV4 or IPV6), so the
 * proxy connects to exactly what was checked and never hands "0x7f.1" to a
 * resolver. Returns false for HOST_NAME. */
bool host_norm_sockaddr(const struct host_norm *h, unsigned port,
			struct sockaddr_storage *ss, socklen_t *sslen);

/* Address classes the proxy refuses unless a rule names them. IPv4-mapped,
 * IPv4-compatible and NAT64 (64:ff9b::/96) IPv6 addresses are classified by
 * the IPv4 address they carry. */
enum host_class {
	HOST_CLASS_PUBLIC = 0,
	HOST_CLASS_LOOPBACK,     /* 127.0.0.0/8, ::1 */
	HOST_CLASS_UNSPECIFIED,  /* 0.0.0.0/8 ("this host"), :: */
	HOST_CLASS_LINK_LOCAL,   /* 169.254.0.0/16, fe80::/10 */
	HOST_CLASS_PRIVATE,      /* 10/8, 172.16/12, 192.168/16, fec0::/10 */
	HOST_CLASS_UNIQUE_LOCAL, /* fc00::/7 */
	HOST_CLASS_CGNAT,        /* 100.64.0.0/10 */
	HOST_CLASS_MULTICAST,    /* 224.0.0.0/4, ff00::/8 */
	HOST_CLASS_RESERVED,     /* 240.0.0.0/4 incl. 255.255.255.255 */
	HOST_CLASS_METADATA,     /* 169.254.169.254, fd00:ec2::254 */
};

/* Classifies an AF_INET or AF_INET6 address; any other family (or NULL) is
 * HOST_CLASS_RESERVED so that it is refused too. */
enum host_class host_addr_class(const struct sockaddr *sa);
/* Same for raw bytes: alen 4 (IPv4) or 16 (IPv6). */
enum host_class host_addr_class_raw(const uint8_t *addr, size_t alen);
/* Stable lower-case name for logs: "public", "loopback", "link-local", ... */
const char *host_class_name(enum host_class c);
/* Everything but HOST_CLASS_PUBLIC. */
static inline bool host_class_is_internal(enum host_class c)
{
	return c != HOST_CLASS_PUBLIC;
}

#endif
