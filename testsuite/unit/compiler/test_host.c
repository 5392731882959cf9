/*
 * test_host.c - host normalisation and address classes (compiler/format/host.c).
 * The IPv4 cases are checked against the C library's inet_aton(), the
 * parser a resolver uses for numeric hosts, so "what the proxy thinks an
 * address is" and "where a connect() would go" cannot drift apart.
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "host.h"

static enum host_err norm(const char *s, struct host_norm *h)
{
	return host_normalize(s, strlen(s), h);
}

static void expect_name(const char *in, const char *want)
{
	struct host_norm h;
	enum host_err e = norm(in, &h);
	cr_assert_eq(e, HOST_OK, "%s: %s", in, host_err_str(e));
	cr_assert_eq(h.kind, HOST_NAME, "%s: kind %d", in, h.kind);
	cr_assert_str_eq(h.name, want, "%s", in);
	cr_assert_eq(h.len, strlen(want));
}

static void expect_err(const char *in, enum host_err want)
{
	struct host_norm h;
	enum host_err e = norm(in, &h);
	cr_assert_eq(e, want, "\"%s\": got %d (%s), want %d (%s)", in, e, host_err_str(e), want,
		     host_err_str(want));
}

static void expect_v4(const char *in, const char *want)
{
	struct host_norm h;
	enum host_err e = norm(in, &h);
	cr_assert_eq(e, HOST_OK, "%s: %s", in, host_err_str(e));
	cr_assert_eq(h.kind, HOST_IPV4, "%s", in);
	cr_assert_str_eq(h.name, want, "%s", in);
	struct in_addr a;
	cr_assert_eq(inet_pton(AF_INET, want, &a), 1);
	cr_assert_eq(memcmp(h.addr, &a, 4), 0, "%s", in);
}

static void expect_v6(const char *in, const char *want)
{
	struct host_norm h;
	enum host_err e = norm(in, &h);
	cr_assert_eq(e, HOST_OK, "%s: %s", in, host_err_str(e));
	cr_assert_eq(h.kind, HOST_IPV6, "%s", in);
	cr_assert_str_eq(h.name, want, "%s", in);
}

Test(host, names_lowercased_and_trailing_dot)
{
	expect_name("example.com", "example.com");
	expect_name("Example.COM", "example.com");
	expect_name("example.com.", "example.com");
	expect_name("GitHub.Com.", "github.com");
	expect_name("localhost", "localhost");
	expect_name("a-b.c-d.e", "a-b.c-d.e");
	expect_name("123.example", "123.example");
	expect_name("xn--bcher-kva.example", "xn--bcher-kva.example");
	expect_name("XN--BCHER-KVA.example", "xn--bcher-kva.example");
	expect_name("example.0x1g", "example.0x1g"); /* not hex, so not a number */
}

Test(host, bad_names_rejected)
{
	expect_err("", HOST_E_EMPTY);
	expect_err(".", HOST_E_EMPTY);
	expect_err("example.com..", HOST_E_LABEL_LEN); /* only one trailing dot goes */
	expect_err("a..b", HOST_E_LABEL_LEN);
	expect_err(".example.com", HOST_E_LABEL_LEN);
	expect_err("b\xc3\xbc" "cher.example", HOST_E_NON_ASCII);
	expect_err("\xff", HOST_E_NON_ASCII);
	expect_err("foo_bar.example", HOST_E_CHAR);
	expect_err("foo bar", HOST_E_CHAR);
	expect_err("foo%2ebar", HOST_E_CHAR);
	expect_err("user@example.com", HOST_E_CHAR);
	expect_err("example.com/x", HOST_E_CHAR);
	expect_err("-a.example", HOST_E_HYPHEN);
	expect_err("a-.example", HOST_E_HYPHEN);
	expect_err("[::1", HOST_E_IPV6);
	expect_err("[]", HOST_E_IPV6);
	expect_err("[1.2.3.4]", HOST_E_IPV6);
	expect_err("[fe80::1%eth0]", HOST_E_IPV6);
	expect_err("fe80::1%25eth0", HOST_E_IPV6);
	expect_err(":::", HOST_E_IPV6);
	expect_err("example.com:443", HOST_E_IPV6); /* callers split the port first */
}

Test(host, nul_byte_rejected)
{
	struct host_norm h;
	cr_assert_eq(host_normalize("evil.com\0.good.com", 18, &h), HOST_E_CHAR);
	cr_assert_eq(host_normalize("a\0", 2, &h), HOST_E_CHAR);
}

Test(host, length_limits)
{
	char buf[300];
	struct host_norm h;
	memset(buf, 'a', 63);
	cr_assert_eq(host_normalize(buf, 63, &h), HOST_OK);
	memset(buf, 'a', 64);
	cr_assert_eq(host_normalize(buf, 64, &h), HOST_E_LABEL_LEN);
	/* 253 bytes: three labels of 63 and one of 61, dot separated. */
	size_t n = 0;
	for (int l = 0; l < 3; l++) {
		memset(buf + n, 'b', 63);
		n += 63;
		buf[n++] = '.';
	}
	memset(buf + n, 'c', 61);
	n += 61;
	cr_assert_eq(n, 253);
	cr_assert_eq(host_normalize(buf, n, &h), HOST_OK);
	buf[n] = '.';
	cr_assert_eq(host_normalize(buf, n + 1, &h), HOST_OK, "253 plus the root dot");
	buf[n] = 'd';
	cr_assert_eq(host_normalize(buf, n + 1, &h), HOST_E_TOO_LONG);
}

Test(host, ipv4_tricks)
{
	expect_v4("127.0.0.1", "127.0.0.1");
	expect_v4("127.1", "127.0.0.1");
	expect_v4("127.0.1", "127.0.0.1");
	expect_v4("0x7f.1", "127.0.0.1");
	expect_v4("0X7F.0.0.1", "127.0.0.1");
	expect_v4("2130706433", "127.0.0.1");
	expect_v4("0x7f000001", "127.0.0.1");
	expect_v4("017700000001", "127.0.0.1");
	expect_v4("0177.0.0.1", "127.0.0.1");
	expect_v4("0177.0.0.01", "127.0.0.1");
	expect_v4("127.0.0.1.", "127.0.0.1");
	expect_v4("169.254.43518", "169.254.169.254");
	expect_v4("0xa9fea9fe", "169.254.169.254");
	expect_v4("0", "0.0.0.0");
	expect_v4("4294967295", "255.255.255.255");
	expect_v4("1.2.3.4", "1.2.3.4");
}

Test(host, ipv4_invalid_never_a_name)
{
	expect_err("256.0.0.1", HOST_E_IPV4);
	expect_err("1.2.3.4.5", HOST_E_IPV4);
	expect_err("4294967296", HOST_E_IPV4);
	expect_err("1.16777216", HOST_E_IPV4);
	expect_err("08.0.0.1", HOST_E_IPV4);
	expect_err("0x.1", HOST_E_IPV4);
	expect_err("0x", HOST_E_IPV4);
	expect_err("example.123", HOST_E_IPV4);
	expect_err("example.0x7f", HOST_E_IPV4);
	expect_err("99999999999999999999", HOST_E_IPV4);
}

/* Every form inet_aton() accepts we read as the same address, and every
 * all-numeric form it rejects we reject. */
Test(host, ipv4_agrees_with_inet_aton)
{
	static const char *cases[] = {
		"1", "1.2", "1.2.3", "1.2.3.4", "0x1.0x2.0x3.0x4", "01.02.03.04", "0.0.0.0",
		"255.255.255.255", "255.255.65535", "255.16777215", "0xffffffff", "037777777777",
		"1.256.3.4", "1.2.65536", "00000000000000000001", "0x00000000001", "09",
		"1.2.3.4.5", "1..2", "0xffffffff1", "2130706433", "0177.1", "0x7f.1",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct in_addr a;
		struct host_norm h;
		int ok = inet_aton(cases[i], &a);
		enum host_err e = norm(cases[i], &h);
		if (ok) {
			cr_assert_eq(e, HOST_OK, "%s accepted by inet_aton", cases[i]);
			cr_assert_eq(h.kind, HOST_IPV4, "%s", cases[i]);
			cr_assert_eq(memcmp(h.addr, &a, 4), 0, "%s", cases[i]);
		} else {
			cr_assert_neq(e, HOST_OK, "%s rejected by inet_aton", cases[i]);
		}
	}
}

Test(host, ipv6_forms)
{
	expect_v6("[::1]", "::1");
	expect_v6("::1", "::1");
	expect_v6("[0:0:0:0:0:0:0:1]", "::1");
	expect_v6("[2001:DB8::1]", "2001:db8::1");
	expect_v6("[fd00:ec2::254]", "fd00:ec2::254");
	expect_v6("[::]", "::");
	/* v4-mapped becomes the IPv4 address it carries */
	struct host_norm h;
	cr_assert_eq(norm("[::ffff:127.0.0.1]", &h), HOST_OK);
	cr_assert_eq(h.kind, HOST_IPV4);
	cr_assert(h.v4_mapped);
	cr_assert_str_eq(h.name, "127.0.0.1");
	cr_assert_eq(norm("[::FFFF:7f00:1]", &h), HOST_OK);
	cr_assert_eq(h.kind, HOST_IPV4);
	cr_assert_str_eq(h.name, "127.0.0.1");
}

Test(host, sockaddr_of_literal)
{
	struct host_norm h;
	struct sockaddr_storage ss;
	socklen_t len;
	cr_assert_eq(norm("0x7f.1", &h), HOST_OK);
	cr_assert(host_norm_sockaddr(&h, 8080, &ss, &len));
	const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
	cr_assert_eq(in->sin_family, AF_INET);
	cr_assert_eq(ntohs(in->sin_port), 8080);
	cr_assert_eq(ntohl(in->sin_addr.s_addr), 0x7f000001u);
	cr_assert_eq(len, sizeof(struct sockaddr_in));
	cr_assert_eq(norm("[::1]", &h), HOST_OK);
	cr_assert(host_norm_sockaddr(&h, 1, &ss, &len));
	cr_assert_eq(ss.ss_family, AF_INET6);
	cr_assert_eq(norm("example.com", &h), HOST_OK);
	cr_assert_not(host_norm_sockaddr(&h, 1, &ss, &len));
}

static enum host_class cls(const char *lit)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	if (strchr(lit, ':')) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		cr_assert_eq(inet_pton(AF_INET6, lit, &in6->sin6_addr), 1, "%s", lit);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		cr_assert_eq(inet_pton(AF_INET, lit, &in->sin_addr), 1, "%s", lit);
	}
	return host_addr_class((const struct sockaddr *)&ss);
}

#define CLS(lit, want)                                                                     \
	cr_assert_eq(cls(lit), want, "%s: %s, want %s", lit, host_class_name(cls(lit)),   \
		     host_class_name(want))

Test(host, address_classes_v4)
{
	CLS("127.0.0.1", HOST_CLASS_LOOPBACK);
	CLS("127.255.255.254", HOST_CLASS_LOOPBACK);
	CLS("0.0.0.0", HOST_CLASS_UNSPECIFIED);
	CLS("0.1.2.3", HOST_CLASS_UNSPECIFIED);
	CLS("10.0.0.1", HOST_CLASS_PRIVATE);
	CLS("172.16.0.1", HOST_CLASS_PRIVATE);
	CLS("172.31.255.255", HOST_CLASS_PRIVATE);
	CLS("172.32.0.1", HOST_CLASS_PUBLIC);
	CLS("172.15.255.255", HOST_CLASS_PUBLIC);
	CLS("192.168.1.1", HOST_CLASS_PRIVATE);
	CLS("192.169.1.1", HOST_CLASS_PUBLIC);
	CLS("169.254.1.1", HOST_CLASS_LINK_LOCAL);
	CLS("169.254.169.254", HOST_CLASS_METADATA);
	CLS("100.64.0.1", HOST_CLASS_CGNAT);
	CLS("100.127.255.255", HOST_CLASS_CGNAT);
	CLS("100.128.0.1", HOST_CLASS_PUBLIC);
	CLS("100.63.255.255", HOST_CLASS_PUBLIC);
	CLS("224.0.0.1", HOST_CLASS_MULTICAST);
	CLS("239.255.255.255", HOST_CLASS_MULTICAST);
	CLS("240.0.0.1", HOST_CLASS_RESERVED);
	CLS("255.255.255.255", HOST_CLASS_RESERVED);
	CLS("8.8.8.8", HOST_CLASS_PUBLIC);
	CLS("1.1.1.1", HOST_CLASS_PUBLIC);
}

Test(host, address_classes_v6)
{
	CLS("::1", HOST_CLASS_LOOPBACK);
	CLS("::", HOST_CLASS_UNSPECIFIED);
	CLS("::ffff:127.0.0.1", HOST_CLASS_LOOPBACK);
	CLS("::ffff:169.254.169.254", HOST_CLASS_METADATA);
	CLS("::ffff:10.1.2.3", HOST_CLASS_PRIVATE);
	CLS("::ffff:8.8.8.8", HOST_CLASS_PUBLIC);
	CLS("::127.0.0.1", HOST_CLASS_LOOPBACK);
	CLS("64:ff9b::a9fe:a9fe", HOST_CLASS_METADATA);
	CLS("64:ff9b::808:808", HOST_CLASS_PUBLIC);
	CLS("64:ff9b:1::1", HOST_CLASS_PRIVATE);
	CLS("2002:7f00:1::1", HOST_CLASS_LOOPBACK);
	CLS("fe80::1", HOST_CLASS_LINK_LOCAL);
	CLS("febf::1", HOST_CLASS_LINK_LOCAL);
	CLS("fec0::1", HOST_CLASS_PRIVATE);
	CLS("fc00::1", HOST_CLASS_UNIQUE_LOCAL);
	CLS("fdff::1", HOST_CLASS_UNIQUE_LOCAL);
	CLS("fd00:ec2::254", HOST_CLASS_METADATA);
	CLS("ff02::1", HOST_CLASS_MULTICAST);
	CLS("2001:4860:4860::8888", HOST_CLASS_PUBLIC);
}

Test(host, other_families_refused)
{
	struct sockaddr sa = { .sa_family = AF_UNIX };
	cr_assert_eq(host_addr_class(&sa), HOST_CLASS_RESERVED);
	cr_assert_eq(host_addr_class(NULL), HOST_CLASS_RESERVED);
	cr_assert(host_class_is_internal(HOST_CLASS_RESERVED));
	cr_assert_not(host_class_is_internal(HOST_CLASS_PUBLIC));
	uint8_t meta[4] = { 169, 254, 169, 254 };
	cr_assert_eq(host_addr_class_raw(meta, 4), HOST_CLASS_METADATA);
	cr_assert_eq(host_addr_class_raw(meta, 3), HOST_CLASS_RESERVED);
}
