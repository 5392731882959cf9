/*
 * test_cpt.c - proxy table lookups: rules written with the testlib (hand-
 * built IR, no front end needed), compiled by cpt_build, loaded with
 * cpt_load_mem, and every decision compared with the expected one and with
 * the naive reference evaluator in testsuite/lib/cpt_testlib.c.
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpt.h"
#include "cpt_testlib.h"
#include "cpt_write.h"

static struct tir T;
static struct cpt_table tab;

static void build(void)
{
	const char *err = NULL;
	struct cpt_error e;
	cr_assert(tir_build(&T, &err), "build: %s", err);
	cr_assert(cpt_load_mem(&tab, T.table, T.table_len, &e), "load: %s", e.msg);
}

static void setup(void)
{
	tir_init(&T);
	memset(&tab, 0, sizeof(tab));
}

static void teardown(void)
{
	cpt_close(&tab);
	tir_free(&T);
}

/* want: 'A' allowed, 'D' denied by a rule, '-' denied by default. rule: the
 * deciding rule's index (ignored for '-'). Also checks the reference. */
static void expect(const char *host, unsigned port, char want, int rule)
{
	struct cpt_result r;
	struct tref ref;
	cpt_lookup_str(&tab, host, strlen(host), port, &r);
	tref_eval(&T.prof, host, port, &ref);
	cr_assert_eq(r.allowed, ref.allowed, "%s:%u table and reference disagree", host, port);
	cr_assert_eq(r.by_default, ref.by_default, "%s:%u", host, port);
	if (!ref.by_default)
		cr_assert_eq(r.rule_index, ref.rule, "%s:%u table rule %u, reference %u", host,
			     port, r.rule_index, ref.rule);
	switch (want) {
	case 'A':
		cr_assert(r.allowed && !r.by_default, "%s:%u should be allowed", host, port);
		break;
	case 'D':
		cr_assert(!r.allowed && !r.by_default, "%s:%u should be denied by a rule", host,
			  port);
		break;
	default:
		cr_assert(!r.allowed && r.by_default, "%s:%u should be denied by default (rule %u)",
			  host, port, r.rule_index);
		return;
	}
	cr_assert_eq(r.rule_index, (uint32_t)rule, "%s:%u decided by rule %u, want %d", host, port,
		     r.rule_index, rule);
	char loc[64];
	snprintf(loc, sizeof(loc), "test.cage:%d:7", rule + 1);
	cr_assert_str_eq(r.loc, loc);
	cr_assert_str_eq(r.text, T.prof.rules[rule].written);
}

TestSuite(cpt, .init = setup, .fini = teardown);

Test(cpt, empty_table_denies_everything)
{
	build();
	expect("example.com", 443, '-', 0);
	expect("127.0.0.1", 80, '-', 0);
	cr_assert_eq(cpt_rule_count(&tab), 0);
	cr_assert_str_eq(cpt_profile(&tab), "test");
}

Test(cpt, exact_name_and_case_and_trailing_dot)
{
	tir_add(&T, IR_ALLOW, "github.com");
	build();
	expect("github.com", 443, 'A', 0);
	expect("GITHUB.com", 443, 'A', 0);
	expect("github.com.", 22, 'A', 0);
	expect("github.com..", 443, '-', 0);
	expect("api.github.com", 443, '-', 0);
	expect("hub.com", 443, '-', 0);
	expect("xgithub.com", 443, '-', 0);
	expect("github.co", 443, '-', 0);
	expect("github.com.evil.net", 443, '-', 0);
}

Test(cpt, wildcard_is_strict_subdomains_any_depth)
{
	tir_add(&T, IR_ALLOW, "*.githubusercontent.com");
	build();
	expect("raw.githubusercontent.com", 443, 'A', 0);
	expect("a.b.c.githubusercontent.com", 443, 'A', 0);
	expect("RAW.GitHubUserContent.COM.", 443, 'A', 0);
	expect("githubusercontent.com", 443, '-', 0);
	expect("xgithubusercontent.com", 443, '-', 0);
	expect("githubusercontent.com.evil", 443, '-', 0);
}

Test(cpt, apex_and_subdomains_are_separate_rules)
{
	tir_add(&T, IR_ALLOW, "example.com:443");
	tir_add(&T, IR_DENY, "*.example.com");
	tir_add(&T, IR_ALLOW, "*.cdn.example.com:443");
	build();
	expect("example.com", 443, 'A', 0);
	expect("www.example.com", 443, 'D', 1);
	expect("x.cdn.example.com", 443, 'A', 2);
	expect("x.cdn.example.com", 80, 'D', 1);
	expect("cdn.example.com", 443, 'D', 1);
}

Test(cpt, ports_lists_and_ranges)
{
	tir_add(&T, IR_ALLOW, "example.com:80,443");
	tir_add(&T, IR_ALLOW, "x.org:8000-8100");
	tir_add(&T, IR_ALLOW, "y.org:22,8000-8001,9000");
	build();
	expect("example.com", 80, 'A', 0);
	expect("example.com", 443, 'A', 0);
	expect("example.com", 81, '-', 0);
	expect("x.org", 8000, 'A', 1);
	expect("x.org", 8050, 'A', 1);
	expect("x.org", 8100, 'A', 1);
	expect("x.org", 7999, '-', 0);
	expect("x.org", 8101, '-', 0);
	expect("y.org", 22, 'A', 2);
	expect("y.org", 8001, 'A', 2);
	expect("y.org", 9000, 'A', 2);
	expect("y.org", 8999, '-', 0);
	expect("y.org", 65535, '-', 0);
}

Test(cpt, last_match_wins_both_ways)
{
	tir_add(&T, IR_ALLOW, "*.example.com");
	tir_add(&T, IR_DENY, "bad.example.com");
	tir_add(&T, IR_DENY, "*.corp.example");
	tir_add(&T, IR_ALLOW, "ok.corp.example:443");
	build();
	expect("good.example.com", 443, 'A', 0);
	expect("bad.example.com", 443, 'D', 1);
	expect("x.bad.example.com", 443, 'A', 0);
	expect("ok.corp.example", 443, 'A', 3);
	expect("ok.corp.example", 80, 'D', 2);
	expect("other.corp.example", 443, 'D', 2);
}

Test(cpt, protect_beats_later_allow)
{
	tir_add(&T, IR_PROTECT, "*.secrets.example");
	tir_add(&T, IR_ALLOW, "vault.secrets.example");
	tir_add(&T, IR_ALLOW, "*");
	build();
	expect("vault.secrets.example", 443, 'D', 0);
	expect("a.secrets.example", 443, 'D', 0);
	expect("secrets.example", 443, 'A', 2);
	struct cpt_result r;
	cpt_lookup_str(&tab, "vault.secrets.example", 21, 443, &r);
	cr_assert_eq(r.effect, CPT_PROTECT);
	cr_assert_eq(r.kind, CPT_K_SUFFIX);
}

Test(cpt, protect_with_ports_only_covers_its_ports)
{
	tir_add(&T, IR_ALLOW, "*");
	tir_add(&T, IR_PROTECT, "db.example:5432");
	tir_add(&T, IR_ALLOW, "db.example");
	build();
	expect("db.example", 5432, 'D', 1);
	expect("db.example", 443, 'A', 2);
}

Test(cpt, impossible_ports_denied)
{
	tir_add(&T, IR_ALLOW, "*");
	tir_add(&T, IR_ALLOW, "127.0.0.1");
	build();
	struct cpt_result r;
	cpt_lookup_str(&tab, "example.com", 11, 1, &r);
	cr_assert(r.allowed, "control: port 1 is allowed by `*`");
	cpt_lookup_str(&tab, "example.com", 11, 0, &r);
	cr_assert(!r.allowed && r.by_default);
	cpt_lookup_str(&tab, "example.com", 11, 65536, &r);
	cr_assert(!r.allowed && r.by_default);
	cpt_lookup_str(&tab, "example.com", 11, 65536 + 443, &r);
	cr_assert(!r.allowed && r.by_default);
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	in.sin_port = htons(80);
	cpt_lookup_addr(&tab, (const struct sockaddr *)&in, &r);
	cr_assert(r.allowed, "control: 127.0.0.1:80 allowed");
	in.sin_port = 0;
	cpt_lookup_addr(&tab, (const struct sockaddr *)&in, &r);
	cr_assert(!r.allowed && r.by_default);
}

Test(cpt, star_never_matches_ip_literals_or_localhost)
{
	tir_add(&T, IR_ALLOW, "*");
	build();
	expect("anything.example", 443, 'A', 0);
	expect("localhost", 3000, '-', 0);
	expect("LocalHost.", 3000, '-', 0);
	expect("app.localhost", 3000, '-', 0);
	expect("notlocalhost", 3000, 'A', 0);
	expect("127.0.0.1", 80, '-', 0);
	expect("0x7f.1", 80, '-', 0);
	expect("2130706433", 80, '-', 0);
	expect("127.1", 80, '-', 0);
	expect("[::1]", 80, '-', 0);
	expect("[::ffff:127.0.0.1]", 80, '-', 0);
	expect("169.254.169.254", 80, '-', 0);
	expect("1.2.3.4.5", 80, '-', 0);
	expect("bad_name.example", 80, '-', 0);
	struct cpt_result r;
	cr_assert_eq(cpt_lookup_str(&tab, "bad_name.example", 16, 80, &r), HOST_E_CHAR);
}

Test(cpt, ip_rules_match_every_spelling)
{
	tir_add(&T, IR_ALLOW, "127.0.0.1:5432");
	tir_add(&T, IR_ALLOW, "[::1]:8080");
	tir_add(&T, IR_DENY, "10.0.0.1");
	tir_add(&T, IR_ALLOW, "[::ffff:10.0.0.2]:443");
	build();
	expect("127.0.0.1", 5432, 'A', 0);
	expect("127.1", 5432, 'A', 0);
	expect("0x7f.1", 5432, 'A', 0);
	expect("2130706433", 5432, 'A', 0);
	expect("0177.0.0.1", 5432, 'A', 0);
	expect("[::ffff:127.0.0.1]", 5432, 'A', 0);
	expect("127.0.0.1", 5433, '-', 0);
	expect("127.0.0.2", 5432, '-', 0);
	expect("[::1]", 8080, 'A', 1);
	expect("[0:0::1]", 8080, 'A', 1);
	expect("::1", 8080, 'A', 1);
	expect("[::1]", 5432, '-', 0);
	expect("10.0.0.1", 443, 'D', 2);
	expect("10.1", 443, 'D', 2); /* 10.1 is 10.0.0.1 */
	expect("10.0.0.2", 443, 'A', 3);
	expect("[::ffff:a00:2]", 443, 'A', 3);
	expect("localhost", 5432, '-', 0); /* a name: IP rules do not match it */
}

Test(cpt, suffix_ending_in_a_number_refused)
{
	tir_add(&T, IR_ALLOW, "*.0.0.1"); /* not a normalised name: refused below */
	const char *err = NULL;
	cr_assert_not(tir_build(&T, &err));
	cr_assert(strstr(err, "test.cage:1:7") != NULL, "%s", err);
}

Test(cpt, writer_refuses_names_that_cannot_match)
{
	static const char *bad[] = { "Upper.example", "trailing.example.", "under_score.example",
				     "b\xc3\xbc\x63her.example", "1.2.3.4.5", "-x.example" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tir t;
		const char *err = NULL;
		tir_init(&t);
		tir_add(&t, IR_ALLOW, bad[i]);
		/* tir_add normalises good names; force the raw text in. */
		t.prof.rules[0].t.host.kind = IR_H_NAME;
		t.prof.rules[0].t.host.name = bad[i];
		cr_assert_not(tir_build(&t, &err), "%s accepted", bad[i]);
		cr_assert(strstr(err, "not a normalised host name") != NULL, "%s", err);
		tir_free(&t);
	}
}

Test(cpt, non_connect_rules_are_left_out)
{
	tir_add(&T, IR_ALLOW, "a.example");
	tir_add(&T, IR_ALLOW, "b.example");
	T.prof.rules[1].access = IR_A_READ; /* not a connect rule: not the proxy's */
	build();
	cr_assert_eq(cpt_rule_count(&tab), 1);
	struct cpt_result r;
	cpt_lookup_str(&tab, "a.example", 9, 1, &r);
	cr_assert(r.allowed);
	cpt_lookup_str(&tab, "b.example", 9, 1, &r);
	cr_assert(r.by_default);
}

Test(cpt, same_key_many_rules)
{
	tir_add(&T, IR_ALLOW, "x.example:1-100");
	tir_add(&T, IR_DENY, "x.example:50");
	tir_add(&T, IR_ALLOW, "x.example:50-60");
	tir_add(&T, IR_DENY, "x.example:60");
	build();
	expect("x.example", 1, 'A', 0);
	expect("x.example", 50, 'A', 2);
	expect("x.example", 55, 'A', 2);
	expect("x.example", 60, 'D', 3);
	expect("x.example", 61, 'A', 0);
	expect("x.example", 101, '-', 0);
}

static void sa4(struct sockaddr_storage *ss, const char *ip, unsigned port)
{
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	cr_assert_eq(inet_pton(AF_INET, ip, &in->sin_addr), 1);
}

static void sa6(struct sockaddr_storage *ss, const char *ip, unsigned port)
{
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons((uint16_t)port);
	cr_assert_eq(inet_pton(AF_INET6, ip, &in6->sin6_addr), 1);
}

static bool addr_allowed(const struct sockaddr_storage *ss)
{
	struct cpt_result r;
	cpt_lookup_addr(&tab, (const struct sockaddr *)ss, &r);
	return r.allowed;
}

Test(cpt, explicit_allow_of_internal_addresses)
{
	struct sockaddr_storage ss;
	tir_add(&T, IR_ALLOW, "*");
	tir_add(&T, IR_ALLOW, "*.internal.example");
	tir_add(&T, IR_ALLOW, "localhost:3000");
	tir_add(&T, IR_ALLOW, "10.1.2.3:443");
	tir_add(&T, IR_ALLOW, "[fd00::5]");
	tir_add(&T, IR_DENY, "127.0.0.1:3000");
	tir_add(&T, IR_ALLOW, "127.0.0.2:3000");
	build();
	/* `*` and suffixes never vouch for an address. */
	sa4(&ss, "192.168.1.1", 443);
	cr_assert_not(addr_allowed(&ss));
	sa4(&ss, "169.254.169.254", 80);
	cr_assert_not(addr_allowed(&ss));
	/* localhost:3000 covers loopback on 3000 only... */
	sa4(&ss, "127.0.0.5", 3000);
	cr_assert(addr_allowed(&ss));
	sa6(&ss, "::1", 3000);
	cr_assert(addr_allowed(&ss));
	sa6(&ss, "::ffff:127.0.0.9", 3000);
	cr_assert(addr_allowed(&ss));
	sa4(&ss, "127.0.0.5", 3001);
	cr_assert_not(addr_allowed(&ss));
	/* ...and a later deny of the literal still wins for that address. */
	sa4(&ss, "127.0.0.1", 3000);
	cr_assert_not(addr_allowed(&ss));
	sa4(&ss, "127.0.0.2", 3000);
	cr_assert(addr_allowed(&ss));
	/* IP rules with their ports. */
	sa4(&ss, "10.1.2.3", 443);
	cr_assert(addr_allowed(&ss));
	sa4(&ss, "10.1.2.3", 80);
	cr_assert_not(addr_allowed(&ss));
	sa6(&ss, "::ffff:10.1.2.3", 443);
	cr_assert(addr_allowed(&ss));
	sa6(&ss, "fd00::5", 1);
	cr_assert(addr_allowed(&ss));
	/* localhost never extends to non-loopback. */
	sa4(&ss, "10.0.0.1", 3000);
	cr_assert_not(addr_allowed(&ss));
	struct sockaddr un = { .sa_family = AF_UNIX };
	struct cpt_result r;
	cpt_lookup_addr(&tab, &un, &r);
	cr_assert(!r.allowed && r.by_default);
}

/* Random policies over a small vocabulary, every query checked against the
 * reference evaluator. Deterministic seed: a failure reproduces. */
Test(cpt, differential_against_reference)
{
	static const char *names[] = { "a.example", "b.a.example", "c.b.a.example", "example",
				       "x.org", "localhost", "10.0.0.1", "[::1]", "127.0.0.1",
				       "[fd00::1]", "*.example", "*.a.example", "*", "*.org" };
	static const char *queries[] = { "a.example", "b.a.example", "c.b.a.example",
					 "d.c.b.a.example", "example", "x.org", "y.x.org", "org",
					 "localhost", "10.0.0.1", "10.1", "[::1]", "::1",
					 "127.1", "[fd00::1]", "A.EXAMPLE.", "other.net" };
	static const char *ports[] = { "", ":80", ":443", ":80,443", ":1-1000", ":443-443" };
	static const unsigned qports[] = { 80, 443, 22, 1000, 1001 };
	unsigned seed = 12345;
	for (int round = 0; round < 300; round++) {
		struct tir t;
		tir_init(&t);
		int n = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 12;
		for (int i = 0; i < n; i++) {
			char tgt[64];
			seed = seed * 1103515245 + 12345;
			unsigned x = seed >> 8;
			snprintf(tgt, sizeof(tgt), "%s%s", names[x % 14], ports[(x / 14) % 6]);
			enum ir_effect e = (x / 84) % 7 == 0 ? IR_PROTECT
					   : (x / 84) % 3 == 0 ? IR_DENY : IR_ALLOW;
			tir_add(&t, e, tgt);
		}
		const char *err = NULL;
		struct cpt_table tb;
		struct cpt_error ce;
		cr_assert(tir_build(&t, &err), "%s", err);
		cr_assert(cpt_load_mem(&tb, t.table, t.table_len, &ce), "%s", ce.msg);
		for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++)
			for (size_t p = 0; p < sizeof(qports) / sizeof(qports[0]); p++) {
				struct cpt_result r;
				struct tref ref;
				cpt_lookup_str(&tb, queries[q], strlen(queries[q]), qports[p], &r);
				tref_eval(&t.prof, queries[q], qports[p], &ref);
				cr_assert_eq(r.allowed, ref.allowed, "round %d %s:%u", round,
					     queries[q], qports[p]);
				cr_assert_eq(r.by_default, ref.by_default, "round %d %s:%u", round,
					     queries[q], qports[p]);
				if (!ref.by_default)
					cr_assert_eq(r.rule_index, ref.rule, "round %d %s:%u", round,
						     queries[q], qports[p]);
				/* And the foundation's evaluator, on the canonical form. */
				struct host_norm h;
				struct ir_verdict iv;
				cr_assert_eq(host_normalize(queries[q], strlen(queries[q]), &h), HOST_OK);
				ir_eval_host(&t.prof, h.name, qports[p], &iv);
				cr_assert_eq(r.allowed, iv.allowed, "round %d %s:%u vs ir_eval_host",
					     round, queries[q], qports[p]);
				cr_assert_eq(r.by_default, iv.rule == NULL, "round %d %s:%u", round,
					     queries[q], qports[p]);
				if (iv.rule)
					cr_assert_eq(r.rule_index, iv.rule->index, "round %d %s:%u", round,
						     queries[q], qports[p]);
			}
		cpt_close(&tb);
		tir_free(&t);
	}
}

Test(cpt, output_is_deterministic)
{
	tir_add(&T, IR_ALLOW, "a.example:443");
	tir_add(&T, IR_DENY, "*.b.example");
	tir_add(&T, IR_ALLOW, "10.0.0.1");
	build();
	struct tir t2;
	const char *err;
	tir_init(&t2);
	tir_add(&t2, IR_ALLOW, "a.example:443");
	tir_add(&t2, IR_DENY, "*.b.example");
	tir_add(&t2, IR_ALLOW, "10.0.0.1");
	cr_assert(tir_build(&t2, &err));
	cr_assert_eq(t2.table_len, T.table_len);
	cr_assert_eq(memcmp(t2.table, T.table, T.table_len), 0);
	tir_free(&t2);
}

Test(cpt, open_by_mmap_and_dump)
{
	tir_add(&T, IR_ALLOW, "github.com:443");
	tir_add(&T, IR_DENY, "*.evil.example:80,8000-8100");
	tir_add(&T, IR_ALLOW, "[::1]:8080");
	tir_add(&T, IR_PROTECT, "*");
	build();
	char path[] = "/tmp/cage-test-cpt-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, T.table, T.table_len), (ssize_t)T.table_len);
	close(fd);
	struct cpt_table m;
	struct cpt_error e;
	cr_assert(cpt_open(&m, path, &e), "%s", e.msg);
	unlink(path);
	cr_assert(m.mapped);
	struct cpt_result r;
	cpt_lookup_str(&m, "github.com", 10, 443, &r);
	cr_assert(!r.allowed && r.effect == CPT_PROTECT && r.rule_index == 3);

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cr_assert(cpt_dump(&m, f));
	fclose(f);
	cr_assert(strstr(text, "profile: test\n"), "%s", text);
	cr_assert(strstr(text, "rule 0 allow name github.com ports 443 at test.cage:1:7 "
			       "\"github.com:443\"\n"), "%s", text);
	cr_assert(strstr(text, "rule 1 deny suffix *.evil.example ports 80,8000-8100 at "
			       "test.cage:2:7"), "%s", text);
	cr_assert(strstr(text, "rule 2 allow ipv6 [::1] ports 8080 at"), "%s", text);
	cr_assert(strstr(text, "rule 3 protect any * ports * at"), "%s", text);
	free(text);
	cpt_close(&m);
	cr_assert_null(m.base);

	cr_assert_not(cpt_open(&m, "/nonexistent/cage.cpt", &e));
	cr_assert_eq(e.code, CPT_E_IO);
	cr_assert_not(cpt_open(&m, "/tmp", &e));
	cr_assert_eq(e.code, CPT_E_IO);
}
