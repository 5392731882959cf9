/*
 * fuzz_cpt.c - libFuzzer target for the two parsers that read untrusted
 * bytes in the proxy: the table loader (a table file) and the host
 * normaliser (what a client sends in CONNECT / Host). Built only with
 * -DCAGE_FUZZ=ON and clang (see testsuite/cmake/proxy_table.cmake).
 *
 * Input starting with the table magic is loaded as a table, as it is and
 * again with its size field and checksum fixed up; whatever the loader
 * accepts is queried and dumped. Any other input is a host string:
 * normalised, checked for the invariants below, and looked up in a small
 * table built at start-up; numeric strings are checked against inet_aton().
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpt.h"
#include "cpt_format.h"
#include "cpt_write.h"
#include "host.h"

static struct cpt_table fixed;
static FILE *devnull;

static void add_rule(struct ir_rule *r, uint32_t i, enum ir_effect e, enum ir_host_kind k,
		     const char *name)
{
	memset(r, 0, sizeof(*r));
	r->index = i;
	r->effect = e;
	r->access = IR_A_CONNECT;
	r->tkind = IR_T_HOST;
	r->t.host.kind = k;
	r->t.host.name = name;
	r->written = name;
	if (k == IR_H_IPV4) {
		uint8_t a[4] = { 127, 0, 0, 1 };
		memcpy(r->t.host.addr, a, 4);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	static struct ir_rule rules[5];
	static struct ir_profile prof = { .name = "fuzz", .rules = rules, .nrules = 5 };
	static struct arena a;
	add_rule(&rules[0], 0, IR_ALLOW, IR_H_ANY, "*");
	add_rule(&rules[1], 1, IR_DENY, IR_H_SUFFIX, "example.com");
	add_rule(&rules[2], 2, IR_ALLOW, IR_H_NAME, "a.example.com");
	add_rule(&rules[3], 3, IR_PROTECT, IR_H_SUFFIX, "com");
	add_rule(&rules[4], 4, IR_ALLOW, IR_H_IPV4, "127.0.0.1");
	arena_init(&a);
	uint8_t *buf;
	size_t len;
	const char *err;
	struct cpt_error e;
	if (!cpt_build(&prof, 1, &a, &buf, &len, &err) || !cpt_load_mem(&fixed, buf, len, &e))
		abort();
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
}

/* What inet_aton() (and so getaddrinfo() for a numeric host) makes of the
 * input must be what we make of it: the same IPv4 address. */
static void check_inet_aton(const uint8_t *data, size_t size, enum host_err e,
			    const struct host_norm *h)
{
	char buf[64];
	struct in_addr a;
	if (size == 0 || size >= sizeof(buf) || memchr(data, '\0', size))
		return;
	for (size_t i = 0; i < size; i++)
		if (!strchr("0123456789abcdefABCDEFxX.", data[i]))
			return; /* inet_aton also stops at spaces; we refuse those */
	memcpy(buf, data, size);
	buf[size] = '\0';
	if (inet_aton(buf, &a) != 1)
		return;
	if (e != HOST_OK || h->kind != HOST_IPV4 || memcmp(h->addr, &a, 4) != 0)
		abort();
}

static void check_host(const uint8_t *data, size_t size)
{
	struct host_norm h, again;
	enum host_err he = host_normalize((const char *)data, size, &h);
	check_inet_aton(data, size, he, &h);
	if (he != HOST_OK) {
		struct cpt_result r;
		cpt_lookup_str(&fixed, (const char *)data, size, 443, &r);
		if (r.allowed || !r.by_default)
			abort(); /* a rejected host must be denied by default */
		return;
	}
	if (h.len != strlen(h.name) || h.len > HOST_NAME_MAX_LEN)
		abort();
	/* Normalising is idempotent: the canonical form maps to itself. */
	if (host_normalize(h.name, h.len, &again) != HOST_OK || again.kind != h.kind ||
	    strcmp(again.name, h.name) != 0 || memcmp(again.addr, h.addr, 16) != 0)
		abort();
	if (h.kind == HOST_NAME)
		for (size_t i = 0; i < h.len; i++) {
			char c = h.name[i];
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
				abort();
		}
	struct cpt_result r;
	cpt_lookup(&fixed, &h, 443, &r);
	/* `*` (rule 0) must never decide for an IP literal. */
	if (h.kind != HOST_NAME && !r.by_default && r.rule_index == 0)
		abort();
}

static void check_table(const uint8_t *data, size_t size)
{
	static const char *hosts[] = { "example.com", "a.example.com", "b.a.example.com",
				       "127.0.0.1", "[::1]", "x", "com" };
	struct cpt_table t;
	struct cpt_error e;
	if (!cpt_load_mem(&t, data, size, &e)) {
		if (e.code == CPT_E_OK || e.msg[0] == '\0')
			abort();
		return;
	}
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		struct cpt_result r;
		for (unsigned port = 0; port < 65536; port += 4099)
			cpt_lookup_str(&t, hosts[i], strlen(hosts[i]), port, &r);
	}
	cpt_dump(&t, devnull);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 7 && memcmp(data, CPT_MAGIC, 7) == 0) {
		/* A private copy of exactly `size` bytes, so ASan sees overreads. */
		uint8_t *copy = malloc(size);
		if (!copy)
			return 0;
		memcpy(copy, data, size);
		check_table(copy, size);
		/* Mutations almost never keep the checksum (or the size field)
		 * right; fix both so the structural checks get fuzzed too. */
		if (size >= CPT_HDR_SIZE + CPT_SUM_SIZE) {
			cpt_wr64(copy + CPT_H_FILESIZE, size);
			cpt_wr64(copy + size - CPT_SUM_SIZE, XXH3_64bits(copy, size - CPT_SUM_SIZE));
			check_table(copy, size);
		}
		free(copy);
	} else {
		check_host(data, size);
	}
	return 0;
}
