/*
 * test_cpt_policy.c - the table round trip through the real front end:
 * policy text -> cage_load_string -> cage_emit(..., "table") -> cpt_load_mem,
 * and every lookup compared with cage_query_host (the IR evaluator), so the
 * proxy and `cagec` can never disagree about a decision or its rule.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cage.h"
#include "cpt.h"

struct compiled {
	cage_policy *pol;
	char *buf;
	size_t len;
	struct cpt_table t;
};

static void compile(struct compiled *c, const char *text, const char *profile)
{
	cage_options *o = cage_options_new();
	cr_assert(o);
	cage_options_home(o, "/home/u");
	if (profile)
		cage_options_profile(o, profile);
	c->pol = cage_load_string("p.cage", text, strlen(text), o);
	cage_options_free(o);
	cr_assert(c->pol);
	if (cage_error_count(c->pol)) {
		cage_print_diagnostics(c->pol, stderr, false);
		cr_assert_fail("policy has errors");
	}
	FILE *f = open_memstream(&c->buf, &c->len);
	const char *err = NULL;
	cr_assert(cage_emit(c->pol, "table", f, &err), "%s", err);
	cr_assert_eq(fclose(f), 0);
	struct cpt_error e;
	cr_assert(cpt_load_mem(&c->t, c->buf, c->len, &e), "%s", e.msg);
}

static void release(struct compiled *c)
{
	cpt_close(&c->t);
	free(c->buf);
	cage_policy_free(c->pol);
}

/* The table and the evaluator agree on (host, port): decision, default-ness
 * and the deciding rule's location. Hosts here are in the canonical form
 * cage_query_host expects. */
static void agree(struct compiled *c, const char *host, unsigned port)
{
	struct cage_verdict v;
	struct cpt_result r;
	const char *err = NULL;
	cr_assert(cage_query_host(c->pol, host, port, &v, &err), "%s: %s", host, err);
	cr_assert_eq(cpt_lookup_str(&c->t, host, strlen(host), port, &r), HOST_OK, "%s", host);
	cr_assert_eq(r.allowed, v.allowed, "%s:%u table %d, evaluator %d (%s)", host, port,
		     r.allowed, v.allowed, v.rule ? v.rule : "default");
	cr_assert_eq(r.by_default, v.by_default, "%s:%u", host, port);
	if (!v.by_default) {
		char loc[256];
		snprintf(loc, sizeof(loc), "%s:%u:%u", v.file, v.line, v.column);
		cr_assert_str_eq(r.loc, loc, "%s:%u (%s)", host, port, v.rule);
	}
}

static const char *hosts[] = {
	"github.com", "api.github.com", "raw.githubusercontent.com", "githubusercontent.com",
	"evil.githubusercontent.com", "a.evil.githubusercontent.com", "registry.npmjs.org",
	"example.com", "www.example.com", "x.org", "localhost", "127.0.0.1", "10.0.0.1",
	"::1", "fd00::1", "vault.secret.example", "secret.example", "other.net", "1.2.3.4",
	"deep.a.b.c.example.com",
};
static const unsigned ports[] = { 22, 80, 443, 3000, 5432, 8000, 8050, 8080, 8100, 8101 };

static void agree_all(struct compiled *c)
{
	for (size_t h = 0; h < sizeof(hosts) / sizeof(hosts[0]); h++)
		for (size_t p = 0; p < sizeof(ports) / sizeof(ports[0]); p++)
			agree(c, hosts[h], ports[p]);
}

Test(cpt_policy, round_trip_agrees_with_evaluator)
{
	static const char text[] =
		"cage 1\n"
		"list hosts = \"github.com\", \"*.githubusercontent.com:443\"\n"
		"protect connect \"*.secret.example\"\n"
		"profile base {\n"
		"    allow connect \"*\"\n"
		"    deny connect \"*.example.com:80\"\n"
		"}\n"
		"profile project extends base {\n"
		"    allow connect hosts, \"registry.npmjs.org:443\", \"example.com:80,443\"\n"
		"    allow connect \"x.org:8000-8100\", \"localhost:3000\", \"127.0.0.1:5432\"\n"
		"    allow connect \"[::1]:8080\", \"10.0.0.1\", \"vault.secret.example\"\n"
		"    deny connect \"evil.githubusercontent.com\", \"x.org:8050\"\n"
		"}\n";
	struct compiled c;
	compile(&c, text, NULL);
	cr_assert_str_eq(cpt_profile(&c.t), "project");
	agree_all(&c);
	/* A few decisions spelled out, so agreement is not agreement on nothing. */
	struct cpt_result r;
	cpt_lookup_str(&c.t, "raw.githubusercontent.com", 25, 443, &r);
	cr_assert(r.allowed);
	cr_assert_str_eq(r.text, "*.githubusercontent.com:443");
	cpt_lookup_str(&c.t, "vault.secret.example", 20, 443, &r);
	cr_assert(!r.allowed && r.effect == CPT_PROTECT);
	cr_assert_str_eq(r.loc, "p.cage:3:17");
	cpt_lookup_str(&c.t, "0x7f.1", 6, 5432, &r);
	cr_assert(r.allowed, "0x7f.1 is 127.0.0.1");
	cpt_lookup_str(&c.t, "0x7f.1", 6, 80, &r);
	cr_assert(!r.allowed && r.by_default, "`*` must not match an IP literal");
	cpt_lookup_str(&c.t, "www.example.com", 15, 80, &r);
	cr_assert(!r.allowed && !r.by_default);
	release(&c);
}

Test(cpt_policy, each_profile_gets_its_own_table)
{
	static const char text[] =
		"cage 1\n"
		"profile a { allow connect \"a.example\" }\n"
		"profile b { allow connect \"b.example\" }\n";
	struct compiled c;
	struct cpt_result r;
	compile(&c, text, "a");
	cpt_lookup_str(&c.t, "a.example", 9, 443, &r);
	cr_assert(r.allowed);
	cpt_lookup_str(&c.t, "b.example", 9, 443, &r);
	cr_assert(r.by_default);
	agree(&c, "a.example", 1);
	agree(&c, "b.example", 1);
	release(&c);
	compile(&c, text, NULL);
	cr_assert_str_eq(cpt_profile(&c.t), "b");
	cpt_lookup_str(&c.t, "b.example", 9, 443, &r);
	cr_assert(r.allowed);
	release(&c);
}

Test(cpt_policy, file_rules_do_not_enter_the_table)
{
	static const char text[] =
		"cage 1\n"
		"profile p {\n"
		"    allow read \"/tmp/**\"\n"
		"    allow connect \"a.example:443\"\n"
		"    allow unix \"/var/run/docker.sock\"\n"
		"}\n";
	struct compiled c;
	compile(&c, text, NULL);
	cr_assert_eq(cpt_rule_count(&c.t), 1);
	struct cpt_result r;
	cpt_lookup_str(&c.t, "a.example", 9, 443, &r);
	cr_assert(r.allowed);
	cr_assert_eq(r.rule_index, 1, "the profile's rule index is kept");
	release(&c);
}

Test(cpt_policy, no_host_rules_denies_everything)
{
	static const char text[] = "cage 1\nprofile p { allow read \"/tmp/**\" }\n";
	struct compiled c;
	compile(&c, text, NULL);
	cr_assert_eq(cpt_rule_count(&c.t), 0);
	agree_all(&c);
	release(&c);
}
