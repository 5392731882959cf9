/*
 * lint_explain.c - `cagec explain`: why one access is allowed or denied.
 *
 * The verdict is the evaluator's (ir_eval_*), so explain can never
 * disagree with the backends; this file only adds the story around it:
 * the deciding rule with its location, and every other rule that matched
 * and lost (the earlier ones it overrode, or the allows a protect beat).
 */
#include "lint_int.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lplan.h"
#include "pat_rel.h"
#include "path.h"
#include "suggest.h"
#include "target.h"

static const struct {
	const char *name;
	uint32_t bit;
} access_words[] = {
	{ "read", IR_A_READ },     { "read-metadata", IR_A_READ_META }, { "write", IR_A_WRITE },
	{ "create", IR_A_CREATE }, { "delete", IR_A_DELETE },         { "exec", IR_A_EXEC },
	{ "unix", IR_A_UNIX },     { "mach", IR_A_MACH },             { "connect", IR_A_CONNECT },
};

static void rule_line(FILE *out, const struct ir_rule *r)
{
	char acc[128], t[1024];
	lint_access_text(r->access, acc, sizeof acc);
	lint_target_text(r, t, sizeof t);
	if (r->loc.file)
		fprintf(out, "%s:%u:%u: ", r->loc.file->name, r->loc.line, r->loc.col);
	fprintf(out, "%s %s %s", ir_effect_name(r->effect), acc, t);
	if (r->layer)
		fprintf(out, " (profile %s)", r->layer);
	fputc('\n', out);
}

/* Splits "host", "host:port", "[v6]:port"; lowercases names and strips a
 * final dot, canonicalises IPv6, as the proxy does before asking. */
static bool parse_host(struct arena *a, const char *in, char **host, unsigned *port,
		       const char **err)
{
	char *s = arena_strdup(a, in);
	*port = 443;
	char *colon = NULL;
	if (s[0] == '[') {
		char *rb = strchr(s, ']');
		if (!rb) {
			*err = "unclosed '[' in an IPv6 address";
			return false;
		}
		*rb = '\0';
		if (rb[1] == ':')
			colon = rb + 1;
		else if (rb[1]) {
			*err = "expected ':PORT' after ']'";
			return false;
		}
		s++;
	} else {
		colon = strrchr(s, ':');
		if (colon && strchr(s, ':') != colon) {
			*err = "write IPv6 addresses in brackets: [::1]:8080";
			return false;
		}
	}
	if (colon) {
		*colon = '\0';
		char *end;
		long p = strtol(colon + 1, &end, 10);
		if (!colon[1] || *end || p < 1 || p > 65535) {
			*err = "port must be 1 to 65535";
			return false;
		}
		*port = (unsigned)p;
	}
	unsigned char a6[16];
	if (strchr(s, ':')) {
		if (inet_pton(AF_INET6, s, a6) != 1) {
			*err = "bad IPv6 address";
			return false;
		}
		char canon[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, a6, canon, sizeof canon);
		*host = arena_strdup(a, canon);
		return true;
	}
	size_t n = strlen(s);
	if (n && s[n - 1] == '.')
		s[--n] = '\0';
	if (!n) {
		*err = "empty host name";
		return false;
	}
	for (char *c = s; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	*host = s;
	return true;
}

static bool rule_matches(const struct ir_rule *r, uint32_t bit, const char *target, unsigned port)
{
	if (!(r->access & bit))
		return false;
	switch (bit) {
	case IR_A_CONNECT:
		return r->tkind == IR_T_HOST && ir_host_match(&r->t.host, target, port);
	case IR_A_MACH:
		if (r->tkind != IR_T_MACH)
			return false;
		return r->t.mach.prefix
			? strncmp(target, r->t.mach.name, strlen(r->t.mach.name)) == 0
			: strcmp(target, r->t.mach.name) == 0;
	case IR_A_UNIX:
		return r->tkind == IR_T_UNIX && ir_rule_path_match(r, target);
	default:
		return r->tkind == IR_T_PATH && ir_rule_path_match(r, target);
	}
}

/* The protects whose target matches `path` but whose `except` leaves it
 * out: the reader sees the protect in the policy and should be told why
 * it did not decide. */
static void put_excepted(FILE *out, const struct ir_profile *prof, uint32_t bit, const char *path)
{
	bool any = false;
	for (size_t i = 0; i < prof->nrules; i++) {
		const struct ir_rule *r = &prof->rules[i];
		const struct ir_except *e;
		if (r->effect != IR_PROTECT || r->tkind != IR_T_PATH || !(r->access & bit) ||
		    !ir_path_match(&r->t.path, path) || !(e = ir_rule_excepted(r, path)))
			continue;
		fputs(any ? "              " : "  excepted:   ", out);
		rule_line(out, r);
		char shown[4096];
		pat_display(&e->path, e->path.text, shown, sizeof shown);
		fprintf(out, "              (does not apply: its except %s", shown);
		if (e->loc.file)
			fprintf(out, " at %s:%u:%u", e->loc.file->name, e->loc.line, e->loc.col);
		fputs(" leaves this path to the other rules)\n", out);
		any = true;
	}
}

/* The sandbox's answer is about this machine: it applies to a path that
 * exists here, or (to create it) whose directory does. Elsewhere explain
 * answers for the policy alone, as for another machine. */
static bool on_this_machine(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0)
		return true;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return stat(*dir ? dir : "/", &st) == 0 && S_ISDIR(st.st_mode);
}

/* Why a delete the rules allow is refused: the path is pinned. */
static void put_pin(FILE *out, const struct ir_pin *pin)
{
	char shown[4096];
	pat_display(&pin->pat, pin->pat.text, shown, sizeof shown);
	fprintf(out, "              (%s is pinned, a directory above what the rule names:\n"
		     "              deleting or renaming it would carry a file out of this rule)\n",
		shown);
}

/* A guard decided a delete its own accesses do not name. */
static bool put_held(FILE *out, const struct ir_profile *prof, const struct ir_verdict *v,
		     uint32_t bit)
{
	if (v->pin) {
		put_pin(out, v->pin);
		return true;
	}
	if (bit == IR_A_DELETE && !v->allowed && v->rule && !(v->rule->access & IR_A_DELETE) &&
	    ir_is_guard(prof, v->rule)) {
		fputs("              (a deny or protect also keeps what it matches from being deleted,\n"
		      "              renamed away or linked: that would carry it out of the rule)\n",
		      out);
		return true;
	}
	return false;
}

static void show_path(const struct cage_policy *pol, const char *norm, char *buf, size_t size)
{
	size_t h = pol->ir->home ? strlen(pol->ir->home) : 0;
	if (h && strncmp(norm, pol->ir->home, h) == 0 && (norm[h] == '/' || !norm[h]))
		snprintf(buf, size, "~%s", norm + h);
	else
		snprintf(buf, size, "%s", norm);
}

static void move_part(FILE *out, struct cage_policy *pol, const char *label, const char *what,
		      const char *shown, const struct ir_verdict *v, uint32_t bit)
{
	fprintf(out, "  %-11s %s %s: %s", label, what, shown, v->allowed ? "allowed" : "denied");
	if (!v->rule) {
		fputs(v->allowed ? "\n" : " (no rule matches: the default deny)\n", out);
		return;
	}
	fputs(" by ", out);
	rule_line(out, v->rule);
	put_held(out, pol->ir->selected, v, bit);
}

bool lint_explain_move(FILE *out, struct cage_policy *pol, const char *op, const char *src,
		       const char *dst, bool *allowed, const char **err)
{
	const struct ir_profile *prof = pol->ir ? pol->ir->selected : NULL;
	if (!prof) {
		*err = "the policy has errors; it cannot be explained";
		return false;
	}
	enum ir_move_kind kind;
	if (strcmp(op, "rename") == 0)
		kind = IR_MOVE_RENAME;
	else if (strcmp(op, "link") == 0)
		kind = IR_MOVE_LINK;
	else {
		*err = "two paths go with rename or link only";
		return false;
	}
	char *s, *d;
	if (!path_query(&pol->arena, pol->ir->home, src, &s, err) ||
	    !path_query(&pol->arena, pol->ir->home, dst, &d, err))
		return false;
	struct ir_move_verdict mv;
	ir_eval_move(prof, kind, s, d, &mv);
	*allowed = mv.allowed;
	char ss[4096], ds[4096];
	show_path(pol, s, ss, sizeof ss);
	show_path(pol, d, ds, sizeof ds);
	fprintf(out, "%s: %s %s %s (profile %s)\n", mv.allowed ? "allowed" : "denied", op, ss, ds,
		prof->name);
	if (kind == IR_MOVE_RENAME)
		move_part(out, pol, "source:", "delete", ss, &mv.src, IR_A_DELETE);
	else if (!mv.src.allowed)
		move_part(out, pol, "source:", "link from", ss, &mv.src, IR_A_DELETE);
	else
		fprintf(out, "  %-11s link from %s: allowed (not pinned)\n", "source:", ss);
	move_part(out, pol, "target:", "create", ds, &mv.dst, IR_A_CREATE);
	if (mv.gained) {
		char acc[128];
		lint_access_text(mv.gained, acc, sizeof acc);
		fprintf(out, "  %-11s %s grants %s, which %s does not: the new name may not grant\n"
			     "              more than the old (docs/language.md, \"Renames and links\")\n",
			"gains:", ds, acc, ss);
		move_part(out, pol, "", "at the source,", ss, &mv.gain_src, mv.gained & -mv.gained);
		move_part(out, pol, "", "at the target,", ds, &mv.gain_dst, mv.gained & -mv.gained);
	} else {
		fprintf(out, "  %-11s none: %s grants nothing %s does not\n", "gains:", ds, ss);
	}
	return true;
}

/* One access's answer: the policy's (the evaluator's) and, for a path on
 * this machine with a Linux target, the sandbox's from the plan. */
struct explain_ans {
	struct ir_verdict v;
	struct lplan_answer la;
	bool linux_differs, allowed;
};

static void explain_eval(struct cage_policy *pol, const struct ir_profile *prof, uint32_t bit,
			 const char *what, unsigned port, struct lplan *plan, bool have_plan,
			 struct explain_ans *a)
{
	memset(a, 0, sizeof *a);
	if (bit == IR_A_CONNECT)
		ir_eval_host(prof, what, port, &a->v);
	else if (bit == IR_A_MACH)
		ir_eval_mach(prof, what, &a->v);
	else
		ir_eval_path(prof, bit, what, &a->v);
	a->allowed = a->v.allowed;
	/* On Linux the answer is what the sandbox on this machine will do
	 * (lplan_query), which can differ from the policy's for reasons the
	 * plan names; say both rather than disagree in silence. */
	if (have_plan && lplan_query(&pol->arena, plan, bit, what, &a->la) &&
	    a->la.allowed != a->v.allowed) {
		a->linux_differs = true;
		a->allowed = a->la.allowed;
	}
}

static const char *access_word(uint32_t bit)
{
	for (size_t i = 0; i < sizeof access_words / sizeof access_words[0]; i++)
		if (access_words[i].bit == bit)
			return access_words[i].name;
	return "?";
}

/* The access named on the command line as a set of IR_A_* bits: `read`
 * and `write` mean in a query what they mean in a rule (read also reads
 * metadata; write also creates and deletes). */
static uint32_t explain_access(const char *access)
{
	if (strcmp(access, "read") == 0)
		return IR_A_KW_READ;
	if (strcmp(access, "write") == 0)
		return IR_A_KW_WRITE;
	for (size_t i = 0; i < sizeof access_words / sizeof access_words[0]; i++)
		if (strcmp(access, access_words[i].name) == 0)
			return access_words[i].bit;
	return 0;
}

bool lint_explain(FILE *out, struct cage_policy *pol, const char *access, const char *target,
		  bool *allowed, const char **err)
{
	const struct ir_profile *prof = pol->ir ? pol->ir->selected : NULL;
	if (!prof) {
		*err = "the policy has errors; it cannot be explained";
		return false;
	}
	uint32_t set = explain_access(access);
	if (!set) {
		struct suggest sg;
		suggest_init(&sg, access, strlen(access));
		for (size_t i = 0; i < sizeof access_words / sizeof access_words[0]; i++)
			suggest_offer(&sg, access_words[i].name);
		*err = arena_printf(&pol->arena, "'%s' is not an access (read, read-metadata, write, "
				    "create, delete, exec, unix, mach, connect)%s", access,
				    suggest_hint(&sg, &pol->arena));
		return false;
	}
	const char *what = target;
	unsigned port = 0;
	char shown[8192];
	if (set == IR_A_CONNECT) {
		char *host;
		if (target_reject_url(&pol->arena, target, strlen(target), err) ||
		    !parse_host(&pol->arena, target, &host, &port, err)) {
			*err = arena_printf(&pol->arena, "'%s': %s", target, *err);
			return false;
		}
		what = host;
		snprintf(shown, sizeof shown, "%s%s%s:%u", strchr(host, ':') ? "[" : "", host,
			 strchr(host, ':') ? "]" : "", port);
	} else if (set == IR_A_MACH) {
		snprintf(shown, sizeof shown, "%s", target);
	} else {
		char *norm;
		if (!path_query(&pol->arena, pol->ir->home, target, &norm, err)) {
			*err = arena_printf(&pol->arena, "'%s': %s", target, *err);
			return false;
		}
		what = norm;
		size_t h = pol->ir->home ? strlen(pol->ir->home) : 0;
		if (h && strncmp(norm, pol->ir->home, h) == 0 && (norm[h] == '/' || !norm[h]))
			snprintf(shown, sizeof shown, "~%s", norm + h);
		else
			snprintf(shown, sizeof shown, "%s", norm);
	}
	struct lplan plan;
	bool have_plan = pol->ir->target == IR_TARGET_LINUX && (set & IR_A_FILE) &&
			 on_this_machine(what) && lplan_build(&pol->arena, prof, &plan, err);
	/* Every access of the set; the story is told for the first one denied
	 * (or the first one, when all are allowed), the others that answer
	 * differently are named after it. */
	struct explain_ans ans[16];
	uint32_t bits[16];
	size_t nb = 0, main_i = 0;
	*allowed = true;
	for (uint32_t b = 1; b && nb < 16; b <<= 1) {
		if (!(set & b))
			continue;
		bits[nb] = b;
		explain_eval(pol, prof, b, what, port, &plan, have_plan, &ans[nb]);
		if (!ans[nb].allowed && *allowed) {
			*allowed = false;
			main_i = nb;
		}
		nb++;
	}
	const struct explain_ans *m = &ans[main_i];
	if (m->linux_differs)
		fprintf(out, "%s: %s %s (profile %s, on Linux; the policy alone says %s)\n",
			*allowed ? "allowed" : "denied", access, shown, prof->name,
			m->v.allowed ? "allowed" : "denied");
	else
		fprintf(out, "%s: %s %s (profile %s)\n", *allowed ? "allowed" : "denied", access,
			shown, prof->name);
	if (nb > 1) {
		/* "read" is a set: say which parts answer how */
		fprintf(out, "  %s means:", access);
		for (size_t i = 0; i < nb; i++)
			fprintf(out, "%s %s (%s)", i ? "," : "", access_word(bits[i]),
				ans[i].allowed ? "allowed" : "denied");
		fputc('\n', out);
	}
	if (m->linux_differs)
		fprintf(out, "  on Linux:   %s%s%s\n",
			m->la.why ? m->la.why
				  : "nothing grants it on this machine (Landlock grants paths that exist)",
			strcmp(m->la.resolved, what) ? "; the path resolves to " : "",
			strcmp(m->la.resolved, what) ? m->la.resolved : "");
	if (have_plan && plan.nerrors)
		fprintf(out, "  note:       cagerun refuses this policy on this machine: %zu rule%s "
			     "cannot be enforced exactly (cagec --emit linux lists them)\n",
			plan.nerrors, plan.nerrors == 1 ? "" : "s");
	bool mixed = false;
	for (size_t i = 0; i < nb; i++)
		mixed |= ans[i].allowed != *allowed;
	if (mixed)
		fprintf(out, "  for %s:\n", access_word(bits[main_i]));
	if (!m->v.rule) {
		fputs("  decided by: no rule matches, so the default deny applies\n", out);
	} else {
		fputs("  decided by: ", out);
		rule_line(out, m->v.rule);
		if (!put_held(out, prof, &m->v, bits[main_i])) {
			if (m->v.rule->effect == IR_PROTECT)
				fputs("              (a protect decides wherever it matches, in any "
				      "order)\n", out);
			else
				fputs("              (the last matching rule decides)\n", out);
			bool any = false;
			for (size_t i = 0; i < prof->nrules; i++) {
				const struct ir_rule *r = &prof->rules[i];
				if (r == m->v.rule || !rule_matches(r, bits[main_i], what, port))
					continue;
				fputs(any ? "              " : "  overrode:   ", out);
				rule_line(out, r);
				any = true;
			}
		}
	}
	if (bits[main_i] & IR_A_FILE)
		put_excepted(out, prof, bits[main_i], what);
	/* the accesses of the set that answer otherwise, each with its rule */
	for (size_t i = 0; i < nb; i++) {
		if (i == main_i || ans[i].allowed == *allowed)
			continue;
		fprintf(out, "  but %s is %s: ", access_word(bits[i]),
			ans[i].allowed ? "allowed" : "denied");
		if (ans[i].linux_differs)
			fprintf(out, "on Linux, %s\n", ans[i].la.why ? ans[i].la.why : "by the plan");
		else if (ans[i].v.rule)
			rule_line(out, ans[i].v.rule);
		else
			fputs("no rule matches (default deny)\n", out);
	}
	return true;
}
