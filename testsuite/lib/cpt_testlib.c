/*
 * cpt_testlib.c - see cpt_testlib.h. The reference decision is written
 * independently of compiler/format/cpt.c (a linear scan over the rules), so a
 * disagreement points at a bug in one of them.
 */
#include "cpt_testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpt_write.h"
#include "host.h"

static void die(const char *what, const char *s)
{
	fprintf(stderr, "cpt_testlib: %s: %s\n", what, s);
	abort();
}

void tir_init(struct tir *t)
{
	memset(t, 0, sizeof(*t));
	arena_init(&t->a);
	t->file.name = "test.cage";
	t->file.text = "";
	t->prof.name = "test";
}

void tir_free(struct tir *t)
{
	free(t->prof.rules);
	arena_free(&t->a);
}

static void parse_ports(struct tir *t, struct ir_host *h, const char *s)
{
	size_t n = 1;
	for (const char *p = s; *p; p++)
		n += *p == ',';
	struct ir_port_range *pr = arena_alloc(&t->a, n * sizeof(*pr));
	for (size_t i = 0; i < n; i++) {
		char *end;
		unsigned long lo = strtoul(s, &end, 10), hi = lo;
		if (end == s)
			die("bad port", s);
		if (*end == '-') {
			s = end + 1;
			hi = strtoul(s, &end, 10);
		}
		if (lo > 65535 || hi > 65535 || (*end && *end != ','))
			die("bad port", s);
		pr[i].lo = (uint16_t)lo;
		pr[i].hi = (uint16_t)hi;
		s = *end ? end + 1 : end;
	}
	h->ports = pr;
	h->nports = n;
}

void tir_add(struct tir *t, enum ir_effect e, const char *target)
{
	if (t->prof.nrules == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->prof.rules = realloc(t->prof.rules, t->cap * sizeof(struct ir_rule));
		if (!t->prof.rules)
			die("out of memory", target);
	}
	struct ir_rule *r = &t->prof.rules[t->prof.nrules];
	memset(r, 0, sizeof(*r));
	r->index = (uint32_t)t->prof.nrules;
	r->effect = e;
	r->access = IR_A_CONNECT;
	r->tkind = IR_T_HOST;
	r->written = arena_strdup(&t->a, target);
	r->loc.file = &t->file;
	r->loc.line = r->index + 1;
	r->loc.col = 7;
	r->rule_loc = r->loc;
	r->layer = "test";

	const char *hend, *ports = NULL;
	const char *hs = target;
	if (target[0] == '[') {
		const char *rb = strchr(target, ']');
		if (!rb)
			die("bad target", target);
		hend = rb + 1;
		if (*hend == ':')
			ports = hend + 1;
		else if (*hend)
			die("bad target", target);
	} else {
		const char *c = strchr(target, ':');
		hend = c ? c : target + strlen(target);
		ports = c ? c + 1 : NULL;
	}
	char *host = arena_strndup(&t->a, hs, (size_t)(hend - hs));
	struct ir_host *h = &r->t.host;
	if (strcmp(host, "*") == 0) {
		h->kind = IR_H_ANY;
		h->name = "*";
	} else if (strncmp(host, "*.", 2) == 0) {
		h->kind = IR_H_SUFFIX;
		h->name = host + 2;
	} else {
		struct host_norm n;
		if (host_normalize(host, strlen(host), &n) != HOST_OK) {
			/* Kept verbatim: lets tests feed the writer names it must refuse. */
			h->kind = IR_H_NAME;
			h->name = host;
		} else if (n.kind == HOST_NAME) {
			h->kind = IR_H_NAME;
			h->name = arena_strdup(&t->a, n.name);
		} else if (n.kind == HOST_IPV4 && !n.v4_mapped) {
			h->kind = IR_H_IPV4;
			memcpy(h->addr, n.addr, 4);
			h->name = arena_strdup(&t->a, n.name);
		} else {
			h->kind = IR_H_IPV6;
			if (n.kind == HOST_IPV4) { /* mapped: the IR keeps it as IPv6 */
				memset(h->addr, 0, 10);
				h->addr[10] = h->addr[11] = 0xff;
				memcpy(h->addr + 12, n.addr, 4);
			} else {
				memcpy(h->addr, n.addr, 16);
			}
			h->name = arena_strdup(&t->a, n.name);
		}
	}
	if (ports)
		parse_ports(t, h, ports);
	t->prof.nrules++;
}

bool tir_build(struct tir *t, const char **err)
{
	return cpt_build(&t->prof, 0x1234, &t->a, &t->table, &t->table_len, err);
}

static bool ref_match(const struct ir_host *rh, const struct host_norm *q, unsigned port)
{
	bool hit = false;
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	switch (rh->kind) {
	case IR_H_NAME:
		hit = q->kind == HOST_NAME && strcmp(q->name, rh->name) == 0;
		break;
	case IR_H_SUFFIX: {
		size_t sl = strlen(rh->name);
		hit = q->kind == HOST_NAME && q->len > sl + 1 &&
		      strcmp(q->name + q->len - sl, rh->name) == 0 && q->name[q->len - sl - 1] == '.';
		break;
	}
	case IR_H_ANY: /* any public name: never localhost or *.localhost */
		hit = q->kind == HOST_NAME && strcmp(q->name, "localhost") != 0 &&
		      !(q->len > 10 && strcmp(q->name + q->len - 10, ".localhost") == 0);
		break;
	case IR_H_IPV4:
		hit = q->kind == HOST_IPV4 && memcmp(q->addr, rh->addr, 4) == 0;
		break;
	case IR_H_IPV6:
		if (memcmp(rh->addr, mapped, 12) == 0)
			hit = q->kind == HOST_IPV4 && memcmp(q->addr, rh->addr + 12, 4) == 0;
		else
			hit = q->kind == HOST_IPV6 && memcmp(q->addr, rh->addr, 16) == 0;
		break;
	}
	if (!hit || rh->nports == 0)
		return hit;
	for (size_t i = 0; i < rh->nports; i++)
		if (port >= rh->ports[i].lo && port <= rh->ports[i].hi)
			return true;
	return false;
}

void tref_eval(const struct ir_profile *p, const char *host, unsigned port, struct tref *r)
{
	struct host_norm q;
	r->allowed = false;
	r->by_default = true;
	r->rule = 0;
	if (host_normalize(host, strlen(host), &q) != HOST_OK)
		return;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *x = &p->rules[i];
		if (x->tkind != IR_T_HOST || !(x->access & IR_A_CONNECT) ||
		    !ref_match(&x->t.host, &q, port))
			continue;
		r->by_default = false;
		r->rule = x->index;
		r->allowed = x->effect == IR_ALLOW;
		if (x->effect == IR_PROTECT)
			return; /* the first matching protect decides */
	}
}
