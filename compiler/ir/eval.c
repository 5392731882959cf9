/*
 * eval.c - the one evaluator over the IR. `cagec explain`, the checker, the
 * monitor and the differential tests all ask it, so every component agrees
 * on what a policy means.
 *
 * Semantics: a `protect` rule that matches denies, whatever its position
 * (a path one of its `except` patterns matches is not matched by it);
 * otherwise the last matching rule decides; no match denies. For delete, a
 * guard (a deny or protect the session could escape by renaming) counts
 * as denying it too, and a directory above a guard is pinned (ir_pins.c):
 * deleting is also renaming away, which would carry a file out of a deny.
 */
#include "ir.h"

#include <assert.h>
#include <string.h>

#include "path.h"

bool ir_path_match(const struct ir_path *pat, const char *path)
{
	return path_match(pat, path);
}

const struct ir_except *ir_rule_excepted(const struct ir_rule *r, const char *path)
{
	for (uint32_t i = 0; i < r->nexcept; i++)
		if (path_match(&r->except[i].path, path))
			return &r->except[i];
	return NULL;
}

bool ir_rule_path_match(const struct ir_rule *r, const char *path)
{
	return path_match(&r->t.path, path) && !ir_rule_excepted(r, path);
}

bool ir_rule_matches_path(const struct ir_rule *r, uint32_t access, const char *path)
{
	if (!(r->access & access))
		return false;
	if (r->tkind != IR_T_PATH && r->tkind != IR_T_UNIX)
		return false;
	return ir_rule_path_match(r, path);
}

static bool port_ok(const struct ir_host *h, unsigned port)
{
	if (h->nports == 0)
		return true;
	for (size_t i = 0; i < h->nports; i++)
		if (port >= h->ports[i].lo && port <= h->ports[i].hi)
			return true;
	return false;
}

static bool is_ip_literal(const char *host)
{
	if (strchr(host, ':'))
		return true;
	for (const char *p = host; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '.'))
			return false;
	return true;
}

bool ir_host_is_localhost(const char *host)
{
	size_t n = strlen(host);
	return strcmp(host, "localhost") == 0 ||
	       (n > 10 && strcmp(host + n - 10, ".localhost") == 0);
}

bool ir_host_match(const struct ir_host *h, const char *host, unsigned port)
{
	if (!port_ok(h, port))
		return false;
	switch (h->kind) {
	case IR_H_ANY:
		/* "any name" is any public name: loopback is reached only through
		 * rules that name localhost (per port), never through `*`. */
		return !is_ip_literal(host) && !ir_host_is_localhost(host);
	case IR_H_SUFFIX: {
		size_t n = strlen(host), m = strlen(h->name);
		return n > m + 1 && host[n - m - 1] == '.' && strcmp(host + n - m, h->name) == 0 &&
		       !is_ip_literal(host);
	}
	default:
		return strcmp(h->name, host) == 0;
	}
}

/* Is r a guard (ir_pins.c)? guard[] is parallel to rules[]: each rule's
 * index is its place in the profile's list, which the evaluator's two
 * walks (protects first, then the last match) rely on too. */
static bool guarded(const struct ir_profile *p, const struct ir_rule *r)
{
	if (!p->guard || r->tkind != IR_T_PATH)
		return false;
	assert(r->index < p->nrules && &p->rules[r->index] == r);
	return p->guard[r->index];
}

/* A guard also denies deleting what it matches (ir_pins.c). */
static bool has_access(const struct ir_profile *p, const struct ir_rule *r, uint32_t access)
{
	return (r->access & access) || (access == IR_A_DELETE && guarded(p, r));
}

static void decide(const struct ir_profile *p, uint32_t access, enum ir_target_kind tk,
		   bool (*match)(const struct ir_rule *, const void *, unsigned),
		   const void *arg, unsigned port, struct ir_verdict *v)
{
	v->allowed = false;
	v->rule = NULL;
	v->pin = NULL;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->effect == IR_PROTECT && r->tkind == tk && has_access(p, r, access) &&
		    match(r, arg, port)) {
			v->rule = r;
			return;
		}
	}
	for (size_t i = p->nrules; i-- > 0;) {
		const struct ir_rule *r = &p->rules[i];
		if (r->tkind == tk && has_access(p, r, access) && match(r, arg, port)) {
			v->rule = r;
			v->allowed = r->effect == IR_ALLOW;
			return;
		}
	}
}

static bool match_path(const struct ir_rule *r, const void *arg, unsigned port)
{
	(void)port;
	return ir_rule_path_match(r, arg);
}

static bool match_host(const struct ir_rule *r, const void *arg, unsigned port)
{
	return ir_host_match(&r->t.host, arg, port);
}

static bool match_mach(const struct ir_rule *r, const void *arg, unsigned port)
{
	(void)port;
	const char *s = arg;
	if (r->t.mach.prefix)
		return strncmp(s, r->t.mach.name, strlen(r->t.mach.name)) == 0;
	return strcmp(s, r->t.mach.name) == 0;
}

void ir_eval_path(const struct ir_profile *p, uint32_t access, const char *path,
		  struct ir_verdict *v)
{
	decide(p, access, access == IR_A_UNIX ? IR_T_UNIX : IR_T_PATH, match_path, path, 0, v);
	/* Deleting is also renaming away: a pinned path stays where it is. */
	if (access == IR_A_DELETE && v->allowed) {
		const struct ir_pin *pin = ir_pinned(p, path);
		if (pin) {
			v->allowed = false;
			v->rule = pin->guard;
			v->pin = pin;
		}
	}
}

/* The accesses among `want` that rule r decides (has_access, for many). */
static uint32_t access_of(const struct ir_profile *p, const struct ir_rule *r, uint32_t want)
{
	uint32_t b = r->access & want;
	if ((want & IR_A_DELETE) && guarded(p, r))
		b |= IR_A_DELETE;
	return b;
}

static void settle(struct ir_verdict out[6], uint32_t *open, uint32_t b,
		   const struct ir_rule *r, bool allowed)
{
	for (uint32_t m = b; m; m &= m - 1) {
		struct ir_verdict *v = &out[__builtin_ctz(m)];
		v->allowed = allowed;
		v->rule = r;
	}
	*open &= ~b;
}

void ir_eval_path_among(const struct ir_profile *p, const uint32_t *among, size_t n,
			uint32_t bits, const char *path, struct ir_verdict out[6])
{
	memset(out, 0, 6 * sizeof *out);
	uint32_t open = bits & IR_A_FILE;
	if (!among)
		n = p->nrules;
	/* decide(), every access in one walk: protects first, in order... */
	for (size_t k = 0; k < n && open; k++) {
		const struct ir_rule *r = &p->rules[among ? among[k] : k];
		uint32_t b;
		if (r->effect == IR_PROTECT && r->tkind == IR_T_PATH &&
		    (b = access_of(p, r, open)) && ir_rule_path_match(r, path))
			settle(out, &open, b, r, false);
	}
	/* ...then the last matching rule. */
	for (size_t k = n; k-- > 0 && open;) {
		const struct ir_rule *r = &p->rules[among ? among[k] : k];
		uint32_t b;
		if (r->tkind == IR_T_PATH && (b = access_of(p, r, open)) &&
		    ir_rule_path_match(r, path))
			settle(out, &open, b, r, r->effect == IR_ALLOW);
	}
	struct ir_verdict *del = &out[__builtin_ctz(IR_A_DELETE)];
	if ((bits & IR_A_DELETE) && del->allowed) {
		const struct ir_pin *pin = ir_pinned(p, path);
		if (pin) {
			del->allowed = false;
			del->rule = pin->guard;
			del->pin = pin;
		}
	}
}

void ir_eval_path_bits(const struct ir_profile *p, uint32_t bits, const char *path,
		       struct ir_verdict out[6])
{
	ir_eval_path_among(p, NULL, 0, bits, path, out);
}

void ir_eval_host(const struct ir_profile *p, const char *host, unsigned port,
		  struct ir_verdict *v)
{
	decide(p, IR_A_CONNECT, IR_T_HOST, match_host, host, port, v);
}

void ir_eval_mach(const struct ir_profile *p, const char *service, struct ir_verdict *v)
{
	decide(p, IR_A_MACH, IR_T_MACH, match_mach, service, 0, v);
}
