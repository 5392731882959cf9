/*
 * test_sbpl_diff.c - differential tests of the SBPL backend: the IR
 * evaluator (cage_query_*) and the independent SBPL evaluator
 * (testsuite/lib/sbpl_eval.h) must agree on what the emitted profile allows.
 *
 * Policies are generated from a fixed seed with bounded sizes, compiled
 * through the public API (cage_load_string + cage_emit "sbpl"), and queried
 * on both sides. The IR sees paths as written (/tmp/x); the SBPL side sees
 * what macOS would check after resolving the /tmp, /var and /etc links
 * (/private/tmp/x). Hostnames cannot appear in a profile, so for host queries
 * the checks are: direct egress to a non-loopback address is never allowed
 * in enforce mode, an allowed host makes the proxy port (param PROXY_PORT)
 * reachable, and loopback ports are open exactly when the policy allows them.
 *
 * Queries stay out of the areas the emitter's base rules open for every
 * process (system roots, /dev, the vetted Mach services), where the two
 * sides differ on purpose.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cage.h"
#include "sbpl_eval.h"

#define HOME "/Users/alice"
#define PROXY_PORT 47113u
#define PROXY_PORT_S "47113"

/* ---- deterministic randomness (splitmix64); state is per test ---- */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned pick(struct rng *r, unsigned n)
{
	return (unsigned)(rnd(r) % n);
}

/* ---- growable text ---- */

struct text {
	char *p;
	size_t len, cap;
};

static void put(struct text *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		while (cap < t->len + n + 1)
			cap *= 2;
		char *np = realloc(t->p, cap);
		cr_assert(np, "out of memory");
		t->p = np;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

static void puts_t(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

/* A cage string literal: `"` and `\` escaped (lang/lex.re). */
static void put_cage_string(struct text *t, const char *s)
{
	put(t, "\"", 1);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			put(t, "\\", 1);
		put(t, s, 1);
	}
	put(t, "\"", 1);
}

/* ---- the vocabulary ---- */

/* Roots outside what the base rules open. /tmp, /var and /etc exercise the
 * /private forms; "~" is HOME. */
static const char *const roots[] = {
	"~", "~/proj", "/work/w", "/tmp/t", "/var/db/v", "/etc/app",
};

/* Pattern roots whose first components are globs, so that they may match
 * below /tmp, /var or /etc: the emitter must rewrite them for /private. */
static const char *const glob_roots[] = { "/*/t", "/t?p/t", "/**/db", "/*/db/v", "/e*/app",
					  "/*", "/private/tmp/t", "/private/etc/app" };

/* Component names, half of them full of regex metacharacters, quotes and
 * backslashes that the emitter must escape in literals and regexes. */
static const char *const names[] = {
	"a", "b", "src", "x.txt", "a.b", "c+d", "(p)", "[q]", "^t", "u$", "v|w",
	"sp ace", "q\"t", "b\\s", "x.", "..x", ".git", "a-b", "star+", "w.(x)",
	"\xc3\xa9t\xc3\xa9", "\xe2\x82\xac", /* 'été', '€': characters of 2 and 3 bytes */
};

/* Glob pieces that replace one component. */
static const char *const globs[] = { "*", "*.txt", "a*", "?", "x?t", "*.(p)", "[q]*" };

static const char *const file_kw[] = { "read", "read-metadata", "write", "create",
				       "delete", "exec" };

struct gen_rule {
	char pat[512];  /* the pattern as written (with ~) */
	bool path_like; /* a file or unix target */
	bool unix_sock; /* an `allow/deny unix` target */
	bool allow;     /* an allow rule (not deny or protect) */
};

/* Builds a path pattern (as written in the policy) into out. */
static void gen_pattern(struct rng *r, char *out, size_t cap)
{
	size_t n = (size_t)snprintf(out, cap, "%s",
				    pick(r, 5) ? roots[pick(r, 6)] : glob_roots[pick(r, 8)]);
	unsigned depth = pick(r, 3);
	for (unsigned i = 0; i < depth && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "/%s", names[pick(r, 22)]);
	switch (pick(r, 6)) {
	case 0:
	case 1: /* exact */
		if (depth == 0 && n < cap)
			n += (size_t)snprintf(out + n, cap - n, "/%s", names[pick(r, 22)]);
		break;
	case 2:
	case 3: /* subtree */
		if (n < cap)
			snprintf(out + n, cap - n, "/**");
		break;
	case 4: /* glob component at the end */
		if (n < cap)
			snprintf(out + n, cap - n, "/%s", globs[pick(r, 7)]);
		break;
	default: /* ** in the middle */
		if (n < cap)
			snprintf(out + n, cap - n, "/**/%s", names[pick(r, 22)]);
		break;
	}
}

/* Turns a pattern into a concrete path that it (probably) matches, with
 * `~` expanded, component by component; then perhaps a child, a sibling
 * sharing the prefix, or the parent, to probe the pattern's edges. */
static void instantiate(struct rng *r, const char *pat, char *out, size_t cap)
{
	static const char *const fill[] = { "", "z", "a", "x.txt", "b.c" };
	size_t n = 0;
	out[0] = '\0';
	if (pat[0] == '~') {
		n = (size_t)snprintf(out, cap, "%s", HOME);
		pat++;
	}
	while (*pat == '/' && n + 300 < cap) {
		pat++;
		size_t cl = strcspn(pat, "/");
		if (cl == 2 && pat[0] == '*' && pat[1] == '*') {
			unsigned k = pick(r, 3);
			for (unsigned i = 0; i < k; i++)
				n += (size_t)snprintf(out + n, cap - n, "/%s", names[pick(r, 22)]);
		} else {
			out[n++] = '/';
			for (size_t i = 0; i < cl; i++) {
				if (pat[i] == '*')
					n += (size_t)snprintf(out + n, cap - n, "%s", fill[pick(r, 5)]);
				else if (pat[i] == '?')
					out[n++] = "aZ_("[pick(r, 4)];
				else
					out[n++] = pat[i];
			}
			out[n] = '\0';
			if (out[n - 1] == '/') /* "*" became "" */
				n += (size_t)snprintf(out + n, cap - n, "e");
		}
		pat += cl;
	}
	out[n] = '\0';
	if (n == 0)
		snprintf(out, cap, "/");
	switch (pick(r, 6)) {
	case 0: { /* a child */
		size_t l = strlen(out);
		snprintf(out + l, cap - l, "/%s", names[pick(r, 22)]);
		break;
	}
	case 1: { /* a sibling sharing the prefix */
		size_t l = strlen(out);
		snprintf(out + l, cap - l, "%s", "x");
		break;
	}
	case 2: { /* the parent */
		char *s = strrchr(out, '/');
		if (s && s != out)
			*s = '\0';
		break;
	}
	default:
		break;
	}
}

/* What macOS checks for an IR path: the /tmp, /var and /etc links resolved. */
static void resolved(const char *path, char *out, size_t cap)
{
	static const char *const links[] = { "/tmp", "/var", "/etc" };
	for (size_t i = 0; i < 3; i++) {
		size_t l = strlen(links[i]);
		if (strncmp(path, links[i], l) == 0 && (path[l] == '/' || path[l] == '\0')) {
			int n = snprintf(out, cap, "/private%s", path);
			cr_assert(n >= 0 && (size_t)n < cap, "query path too long: %s", path);
			return;
		}
	}
	snprintf(out, cap, "%s", path);
}

static const char *sbpl_op_for(const char *access)
{
	static const struct {
		const char *access, *op;
	} map[] = {
		{ "read", "file-read-data" },     { "read-metadata", "file-read-metadata" },
		{ "write", "file-write-data" },   { "create", "file-write-create" },
		{ "delete", "file-write-unlink" }, { "exec", "process-exec*" },
		{ "unix", "network-outbound" },   { "mach", "mach-lookup" },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i].access, access) == 0)
			return map[i].op;
	return NULL;
}

/* ---- one compiled policy on both sides ---- */

struct pair {
	const char *src;
	cage_policy *pol;
	char *sbpl;
	size_t sbpl_len;
	struct sbpl_eval_profile *prof;
	const char *mode;
	size_t mismatches, checks, ancestor_meta;
	size_t spelling; /* checks the /private spelling's rule decided */
	/* The generated path rules, when known: ancestor-metadata grants are
	 * accepted only above an allowed pattern's literal part. */
	const struct gen_rule *rules;
	size_t nrules;
	/* The one known divergence on loopback, counted and pinned by its own
	 * test: the IR keeps "localhost", 127.0.0.1 and ::1 apart, Seatbelt's
	 * localhost covers all three, so a deny on one spelling closes the
	 * port for all (the fail-safe direction). */
	size_t loopback_spellings;
	/* IR outcomes per query kind (file, unix, mach, host): [kind][allowed] */
	size_t outcomes[4][2];
	/* Lines of the emitted profile: the base block that grants metadata on
	 * the directories leading to granted paths, and the policy's rules. */
	unsigned ancestors_line, policy_line;
	/* ... and the block that denies renaming the directories above a
	 * protected path, with the line where the block after it starts. */
	unsigned no_rename_line, protect_line;
	size_t no_rename;
};

static size_t total_mismatches;
enum { MAX_REPORTS = 12 };

static const char *line_of(const char *text, unsigned line, char *buf, size_t cap)
{
	const char *p = text;
	for (unsigned i = 1; i < line && p; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return "?";
	size_t n = strcspn(p, "\n");
	snprintf(buf, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), p);
	return buf;
}

/* 1-based line of the first line holding `needle`, 0 if none. */
static unsigned line_containing(const char *text, const char *needle)
{
	const char *p = strstr(text, needle);
	if (!p)
		return 0;
	unsigned line = 1;
	for (const char *q = text; q < p; q++)
		line += *q == '\n';
	return line;
}

/* An IR verdict with its rule text copied out: cage_verdict.rule points
 * into the policy and is overwritten by the next query. */
struct irv {
	bool allowed, by_default, protect;
	char rule[600];
	unsigned line, column;
};

static void irv_from(struct irv *o, const struct cage_verdict *v)
{
	o->allowed = v->allowed;
	o->by_default = v->by_default;
	snprintf(o->rule, sizeof(o->rule), "%s", v->rule ? v->rule : "default");
	o->protect = v->rule && strncmp(v->rule, "protect", 7) == 0;
	o->line = v->line;
	o->column = v->column;
}

static void ir_path_q(struct pair *pr, const char *access, const char *path, struct irv *o)
{
	struct cage_verdict v;
	const char *err = NULL;
	cr_assert(cage_query_path(pr->pol, access, path, &v, &err), "%s %s: %s", access, path,
		  err ? err : "?");
	irv_from(o, &v);
}

static void ir_host_q(struct pair *pr, const char *host, unsigned port, struct irv *o)
{
	struct cage_verdict v;
	const char *err = NULL;
	cr_assert(cage_query_host(pr->pol, host, port, &v, &err), "%s:%u: %s", host, port,
		  err ? err : "?");
	irv_from(o, &v);
}

/* The one documented difference between the sides: the base rules let
 * every process stat the directories that lead to a granted path
 * (realpath, getcwd), which the IR does not grant. */
static bool ancestor_of_allowed(const struct pair *pr, const char *path)
{
	if (!pr->rules)
		return true; /* hand-written cases: checked by reading them */
	char rp[1200], lit[1200];
	resolved(path, rp, sizeof(rp));
	size_t n = strlen(rp);
	for (size_t i = 0; i < pr->nrules; i++) {
		const struct gen_rule *g = &pr->rules[i];
		if (!g->allow)
			continue;
		char full[1200];
		snprintf(full, sizeof(full), "%s%s", g->pat[0] == '~' ? HOME : "",
			 g->pat + (g->pat[0] == '~'));
		size_t k = strcspn(full, "*?");
		full[k] = '\0';
		resolved(full, lit, sizeof(lit));
		/* A glob in the first component leaves "/": every root child. */
		if ((strncmp(lit, rp, n) == 0 && lit[n] == '/') || (k <= 1))
			return true;
	}
	return false;
}

static bool ancestor_metadata(struct pair *pr, const char *access, const char *path,
			      const struct irv *iv, const struct sbpl_eval_result *sv)
{
	return strcmp(access, "read-metadata") == 0 && !iv->allowed && sv->allowed &&
	       !sv->report && pr->ancestors_line && sv->line > pr->ancestors_line &&
	       sv->line < pr->policy_line && ancestor_of_allowed(pr, path);
}

/* The pins (docs/sbpl.md, "Pins"): both sides deny deleting a pinned
 * path; the profile also pins the link-resolved directories (/private,
 * /private/tmp above a pin under /tmp), which the IR, judging the /tmp
 * spelling, does not. Counted, in the stricter direction only. */
static bool protected_ancestor_unlink(struct pair *pr, const char *access, const struct irv *iv,
				      const struct sbpl_eval_result *sv)
{
	bool blocked = strcmp(pr->mode, "monitor") == 0 ? sv->report : !sv->allowed;
	return strcmp(access, "delete") == 0 && iv->allowed && blocked && pr->no_rename_line &&
	       sv->line > pr->no_rename_line &&
	       (!pr->protect_line || sv->line < pr->protect_line);
}

static void report(struct pair *pr, const char *what, const char *query, const struct irv *iv,
		   const struct sbpl_eval_result *sv)
{
	pr->mismatches++;
	if (total_mismatches++ >= MAX_REPORTS)
		return;
	char sl[512];
	cr_log_error("SBPL/IR disagreement (%s): %s\n"
		     "  IR:   %s by %s (line %u)\n"
		     "  SBPL: %s%s by line %u: %s\n"
		     "--- policy ---\n%s--- end ---",
		     what, query, iv->allowed ? "allowed" : "denied", iv->rule, iv->line,
		     sv->allowed ? "allowed" : "denied", sv->report ? " (report)" : "",
		     sv->line, line_of(pr->sbpl, sv->line, sl, sizeof(sl)), pr->src);
}

/* Loads `src` (or, when `file` is given, that file with the in-tree
 * standard library), emits SBPL and reads it back. */
static bool compile_any(struct pair *pr, const char *src, const char *file, const char **defs,
			size_t ndefs)
{
	memset(pr, 0, sizeof(*pr));
	pr->src = src ? src : file;
	cage_options *o = cage_options_new();
	cr_assert(o);
	cage_options_target(o, "macos"); /* a Seatbelt profile is macOS only */
	cage_options_home(o, HOME);
	cage_options_stdlib(o, CAGE_SOURCE_DIR "/stdlib");
	for (size_t i = 0; i < ndefs; i++)
		cr_assert(cage_options_define(o, defs[i]));
	pr->pol = file ? cage_load_file(file, o) : cage_load_string("gen.cage", src, strlen(src), o);
	cage_options_free(o);
	cr_assert(pr->pol);
	if (cage_error_count(pr->pol) != 0) {
		cage_print_diagnostics(pr->pol, stderr, false);
		cr_assert_fail("policy does not compile:\n%s", pr->src);
	}
	src = pr->src;
	FILE *f = open_memstream(&pr->sbpl, &pr->sbpl_len);
	cr_assert(f);
	const char *err = NULL;
	bool ok = cage_emit(pr->pol, "sbpl", f, &err);
	cr_assert_eq(fclose(f), 0);
	cr_assert(ok, "cage_emit sbpl failed: %s\n%s", err ? err : "?", src);
	struct sbpl_eval_param params[] = {
		{ "PROXY_PORT", PROXY_PORT_S },
		{ "PRIVATE_TMP", "/private/var/folders/cg/T/cage-tmp" },
		{ "PRIVATE_HOME", "/private/var/folders/cg/T/cage-home" },
	};
	char perr[512];
	pr->prof = sbpl_eval_parse(pr->sbpl, pr->sbpl_len, params, 3, perr, sizeof(perr));
	cr_assert(pr->prof, "emitted SBPL does not load: %s\n--- policy ---\n%s--- sbpl ---\n%s",
		  perr, src, pr->sbpl);
	pr->ancestors_line = line_containing(pr->sbpl, "; metadata on the directories leading to");
	pr->policy_line = line_containing(pr->sbpl, ";; ---- the policy's rules");
	pr->no_rename_line = line_containing(pr->sbpl, ";; ---- pinned:");
	pr->protect_line = line_containing(pr->sbpl, ";; ---- protected:");
	cr_assert(pr->policy_line, "no policy section marker in the emitted profile");
	const char *unknown;
	cr_assert_eq(sbpl_eval_unknown_ops(pr->prof, &unknown), 0,
		     "emitted SBPL names an operation not in the table: %s", unknown);
	return true;
}

static bool compile(struct pair *pr, const char *src, const char **defs, size_t ndefs)
{
	return compile_any(pr, src, NULL, defs, ndefs);
}

static void release(struct pair *pr)
{
	sbpl_eval_free(pr->prof);
	free(pr->sbpl);
	cage_policy_free(pr->pol);
}

/* "/private/tmp/x" -> "/tmp/x" (likewise var, etc); other paths as they are. */
static void tmp_spelling(const char *path, char *out, size_t cap)
{
	static const char *const links[] = { "/private/tmp", "/private/var", "/private/etc" };
	for (size_t i = 0; i < 3; i++) {
		size_t l = strlen(links[i]);
		if (strncmp(path, links[i], l) == 0 && (path[l] == '/' || path[l] == '\0')) {
			snprintf(out, cap, "%s", path + strlen("/private"));
			return;
		}
	}
	snprintf(out, cap, "%s", path);
}

/* The IR judges a path as spelled; macOS judges the file, and /tmp/x and
 * /private/tmp/x are one file. The emitter's contract (docs/sbpl.md,
 * "Paths"): below the links the /tmp spelling decides, and a rule the
 * policy itself spells /private/tmp/... covers the same files. So the
 * answer is the IR's on the /tmp spelling, unless a later rule spelled
 * /private/... (or a protect so spelled) decides the other spelling. */
static void ir_file(struct pair *pr, const char *access, const char *path, struct irv *o)
{
	char t[1200], p[1200];
	tmp_spelling(path, t, sizeof(t));
	resolved(t, p, sizeof(p));
	ir_path_q(pr, access, t, o);
	if (strcmp(t, p) == 0 || o->protect)
		return;
	struct irv q;
	ir_path_q(pr, access, p, &q);
	if (q.by_default || !strstr(q.rule, " /private/"))
		return;
	if (q.protect || o->by_default || q.line > o->line ||
	    (q.line == o->line && q.column > o->column)) {
		if (q.allowed != o->allowed)
			pr->spelling++;
		*o = q;
	}
}

/* Compares one file, unix or mach query. */
static void check_path(struct pair *pr, const char *access, const char *path)
{
	struct irv iv;
	if (strcmp(access, "mach") == 0)
		ir_path_q(pr, access, path, &iv);
	else
		ir_file(pr, access, path, &iv);
	struct sbpl_eval_result sv;
	char err[256], rpath[1200];
	bool ok;
	if (strcmp(access, "mach") == 0) {
		ok = sbpl_eval_decide_name(pr->prof, "mach-lookup", path, &sv, err, sizeof(err));
	} else {
		char t[1200];
		tmp_spelling(path, t, sizeof(t));
		resolved(t, rpath, sizeof(rpath));
		ok = sbpl_eval_decide_path(pr->prof, sbpl_op_for(access), rpath, &sv, err,
					   sizeof(err));
	}
	cr_assert(ok, "SBPL evaluator: %s", err);
	pr->checks++;
	int kind = strcmp(access, "unix") == 0 ? 1 : strcmp(access, "mach") == 0 ? 2 : 0;
	pr->outcomes[kind][iv.allowed]++;
	char q[1400];
	snprintf(q, sizeof(q), "%s %s (SBPL %s)", access, path, sbpl_op_for(access));
	if (ancestor_metadata(pr, access, path, &iv, &sv)) {
		pr->ancestor_meta++;
	} else if (protected_ancestor_unlink(pr, access, &iv, &sv)) {
		pr->no_rename++;
	} else if (strcmp(pr->mode, "monitor") == 0) {
		/* Nothing is blocked; exactly the would-block accesses are logged. */
		if (!sv.allowed || sv.report != !iv.allowed)
			report(pr, "monitor", q, &iv, &sv);
	} else if (sv.allowed != iv.allowed) {
		report(pr, pr->mode, q, &iv, &sv);
	}
}

static bool is_loopback(const char *h)
{
	return strcmp(h, "localhost") == 0 || strcmp(h, "127.0.0.1") == 0 || strcmp(h, "::1") == 0;
}

static bool sbpl_net(struct pair *pr, const char *host, unsigned port, struct sbpl_eval_result *sv)
{
	char err[256];
	cr_assert(sbpl_eval_decide_net(pr->prof, "network-outbound", SBPL_EVAL_TCP, host, port, sv,
				       err, sizeof(err)),
		  "SBPL evaluator: %s", err);
	return sv->allowed;
}

/* Compares one connect query; see the file comment for what is checked. */
static void check_host(struct pair *pr, const char *host, unsigned port)
{
	struct irv iv;
	ir_host_q(pr, host, port, &iv);
	struct sbpl_eval_result sv;
	char q[300];
	pr->checks++;
	pr->outcomes[3][iv.allowed]++;
	if (strcmp(pr->mode, "enforce") != 0) {
		/* enforce-fs and monitor leave the network open. */
		snprintf(q, sizeof(q), "connect %s:%u (open network)", host, port);
		if (!sbpl_net(pr, is_loopback(host) ? host : "93.184.216.34", port, &sv))
			report(pr, pr->mode, q, &iv, &sv);
		return;
	}
	if (is_loopback(host)) {
		snprintf(q, sizeof(q), "connect %s:%u (direct loopback)", host, port);
		bool s = sbpl_net(pr, host, port, &sv);
		if (s == iv.allowed)
			return;
		/* Seatbelt's localhost is every loopback spelling at once. */
		struct irv a, b, c;
		ir_host_q(pr, "localhost", port, &a);
		ir_host_q(pr, "127.0.0.1", port, &b);
		ir_host_q(pr, "::1", port, &c);
		if (iv.allowed && !s) {
			if (!a.allowed || !b.allowed || !c.allowed)
				pr->loopback_spellings++;
			else
				report(pr, "loopback allowed by policy but blocked", q, &iv, &sv);
		} else if (!a.allowed && !b.allowed && !c.allowed) {
			report(pr, "loopback port open but policy denies it", q, &iv, &sv);
		}
		return;
	}
	snprintf(q, sizeof(q), "connect %s:%u (direct egress)", host, port);
	if (sbpl_net(pr, "93.184.216.34", port, &sv))
		report(pr, "direct egress open in enforce mode", q, &iv, &sv);
	if (iv.allowed) {
		snprintf(q, sizeof(q), "connect %s:%u (via proxy localhost:%u)", host, port,
			 PROXY_PORT);
		if (!sbpl_net(pr, "localhost", PROXY_PORT, &sv))
			report(pr, "allowed host but proxy port closed", q, &iv, &sv);
	}
}

/* ---- the generator ---- */

static const char *const host_pats[] = {
	"example.com:443", "*.example.org", "api.test:80,443", "x.test:8000-8100",
	"localhost:3000", "127.0.0.1:5432", "[::1]:8080", "localhost:3000-3003", "10.1.2.3:22",
	"*:443", "localhost", "127.0.0.1:3000",
};
static const char *const host_queries[] = { "example.com", "a.example.org", "example.org",
					    "api.test", "x.test", "localhost", "127.0.0.1",
					    "::1", "10.1.2.3", "other.test" };
static const unsigned ports[] = { 443, 80, 8050, 3000, 3002, 3004, 5432, 8080, 22, 9999 };

static const char *const mach_pats[] = { "com.example.svc", "org.test.*", "com.example.other" };
static const char *const mach_queries[] = { "com.example.svc", "org.test.a", "org.test",
					    "com.example.other", "com.example.svcx" };

enum { MAX_RULES = 14 };

/* Generates one policy into t and remembers its path patterns. */
static const char *gen_policy(struct rng *r, struct text *t, struct gen_rule *rules,
			      size_t *nrules)
{
	static const char *const modes[] = { "enforce", "enforce", "enforce", "enforce",
					     "enforce-fs", "monitor" };
	const char *mode = modes[pick(r, 6)];
	t->len = 0;
	puts_t(t, "cage 1\n");
	*nrules = 0;
	unsigned nprot = pick(r, 3) == 0 ? 1 + pick(r, 2) : 0;
	for (unsigned i = 0; i < nprot; i++) {
		struct gen_rule *g = &rules[(*nrules)++];
		memset(g, 0, sizeof(*g));
		gen_pattern(r, g->pat, sizeof(g->pat));
		g->path_like = true;
		puts_t(t, "protect ");
		put_cage_string(t, g->pat);
		/* Half the subtree protects leave parts of their tree out, each
		 * except inside the target as the language requires. */
		size_t pl = strlen(g->pat);
		if (pl > 3 && strcmp(g->pat + pl - 3, "/**") == 0 && pick(r, 2) == 0) {
			static const char *const tails[] = { "/%s", "/%s/**", "/*.txt", "/**/%s",
							     "/%s/*" };
			unsigned nx = 1 + pick(r, 2);
			for (unsigned k = 0; k < nx; k++) {
				struct gen_rule *x = &rules[(*nrules)++];
				memset(x, 0, sizeof(*x));
				x->path_like = true;
				int m = snprintf(x->pat, sizeof(x->pat), "%.*s", (int)(pl - 3), g->pat);
				snprintf(x->pat + m, sizeof(x->pat) - (size_t)m, tails[pick(r, 5)],
					 names[pick(r, 22)]);
				puts_t(t, k ? ", " : " except ");
				put_cage_string(t, x->pat);
			}
		}
		puts_t(t, "\n");
	}
	puts_t(t, "profile p {\n    mode ");
	puts_t(t, mode);
	puts_t(t, "\n");
	unsigned n = 1 + pick(r, MAX_RULES - 3);
	for (unsigned i = 0; i < n; i++) {
		unsigned kind = pick(r, 12);
		bool deny = pick(r, 3) == 0;
		if (kind < 7) {
			struct gen_rule *g = &rules[(*nrules)++];
			memset(g, 0, sizeof(*g));
			gen_pattern(r, g->pat, sizeof(g->pat));
			g->path_like = true;
			g->allow = !deny;
			puts_t(t, deny ? "    deny" : "    allow");
			unsigned mask = 1 + pick(r, 63);
			for (unsigned k = 0; k < 6; k++)
				if (mask & (1u << k)) {
					puts_t(t, " ");
					puts_t(t, file_kw[k]);
				}
			puts_t(t, " ");
			put_cage_string(t, g->pat);
			puts_t(t, "\n");
		} else if (kind == 7) {
			struct gen_rule *g = &rules[(*nrules)++];
			memset(g, 0, sizeof(*g));
			gen_pattern(r, g->pat, sizeof(g->pat));
			g->path_like = true;
			g->unix_sock = true;
			g->allow = !deny;
			puts_t(t, deny ? "    deny unix " : "    allow unix ");
			put_cage_string(t, g->pat);
			puts_t(t, "\n");
		} else if (kind == 8 || kind == 9 || kind == 10) {
			puts_t(t, deny ? "    deny connect " : "    allow connect ");
			put_cage_string(t, host_pats[pick(r, 12)]);
			puts_t(t, "\n");
		} else {
			puts_t(t, deny ? "    deny mach " : "    allow mach ");
			put_cage_string(t, mach_pats[pick(r, 3)]);
			puts_t(t, "\n");
		}
	}
	puts_t(t, "}\n");
	return mode;
}

static void run_queries(struct rng *r, struct pair *pr, const struct gen_rule *rules,
			size_t nrules, unsigned nq)
{
	char path[1024];
	for (unsigned i = 0; i < nq; i++) {
		unsigned k = pick(r, 12);
		if (k < 6) {
			if (nrules && pick(r, 4) != 0)
				instantiate(r, rules[pick(r, (unsigned)nrules)].pat, path, sizeof(path));
			else {
				char pat[512];
				gen_pattern(r, pat, sizeof(pat));
				instantiate(r, pat, path, sizeof(path));
			}
			if (pick(r, 8) == 0) {
				/* Ask with the /private spelling now and then. */
				char t[1024];
				resolved(path, t, sizeof(t));
				snprintf(path, sizeof(path), "%s", t);
			}
			check_path(pr, file_kw[pick(r, 6)], path);
		} else if (k == 6) {
			/* Mostly near the policy's unix targets. */
			size_t cand[MAX_RULES + 4], nc = 0;
			for (size_t j = 0; j < nrules; j++)
				if (rules[j].unix_sock)
					cand[nc++] = j;
			if (nc && pick(r, 4) != 0)
				instantiate(r, rules[cand[pick(r, (unsigned)nc)]].pat, path, sizeof(path));
			else if (nrules)
				instantiate(r, rules[pick(r, (unsigned)nrules)].pat, path, sizeof(path));
			else
				snprintf(path, sizeof(path), "/tmp/t/a");
			check_path(pr, "unix", path);
		} else if (k == 7) {
			check_path(pr, "mach", mach_queries[pick(r, 5)]);
		} else {
			check_host(pr, host_queries[pick(r, 10)], ports[pick(r, 10)]);
		}
	}
}

enum { N_POLICIES = 400, N_QUERIES = 120 };
static const uint64_t SEED = 0x5eedcafe2026ull;

Test(sbpl_diff, random_policies, .timeout = 240)
{
	/* CAGE_DIFF_SEED explores other seeds by hand; the suite uses SEED. */
	const char *env = getenv("CAGE_DIFF_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : SEED;
	struct rng r = { seed };
	struct text t = { 0 };
	struct gen_rule rules[MAX_RULES + 4];
	size_t checks = 0, bad = 0, ancestors = 0, spelling = 0, no_rename = 0, outcomes[4][2] = { { 0 } }, loopback_spellings = 0;
	total_mismatches = 0;
	for (unsigned i = 0; i < N_POLICIES; i++) {
		size_t nrules;
		struct pair pr;
		const char *mode = gen_policy(&r, &t, rules, &nrules);
		compile(&pr, t.p, NULL, 0);
		pr.mode = mode;
		pr.rules = rules;
		pr.nrules = nrules;
		run_queries(&r, &pr, rules, nrules, N_QUERIES);
		checks += pr.checks;
		bad += pr.mismatches;
		ancestors += pr.ancestor_meta;
		spelling += pr.spelling;
		no_rename += pr.no_rename;
		loopback_spellings += pr.loopback_spellings;
		for (int k = 0; k < 4; k++)
			for (int a = 0; a < 2; a++)
				outcomes[k][a] += pr.outcomes[k][a];
		release(&pr);
	}
	free(t.p);
	cr_log_info("sbpl_diff: %u policies x %u queries = %zu checks, seed 0x%llx, "
		    "%zu disagreements, %zu ancestor-metadata grants by the base rules",
		    N_POLICIES, N_QUERIES, checks, (unsigned long long)seed, bad, ancestors);
	cr_log_info("sbpl_diff: %zu checks decided by a rule on the /private spelling", spelling);
	cr_log_info("sbpl_diff: %zu deletes denied by the profile's pins only (link-resolved "
		    "directories the IR does not pin)", no_rename);
	cr_log_info("sbpl_diff: known loopback divergence: %zu checks where a deny on one "
		    "loopback spelling closes the port for all (fail-safe)", loopback_spellings);
	static const char *const kinds[] = { "file", "unix", "mach", "host" };
	for (int k = 0; k < 4; k++) {
		cr_log_info("sbpl_diff: %s queries: %zu allowed, %zu denied by the IR", kinds[k],
			    outcomes[k][1], outcomes[k][0]);
		/* Both outcomes must be common, or the comparison proves little. */
		cr_assert(outcomes[k][1] >= 100 && outcomes[k][0] >= 100,
			  "%s queries are lopsided: %zu allowed, %zu denied", kinds[k],
			  outcomes[k][1], outcomes[k][0]);
	}
	cr_assert_eq(bad, 0, "%zu of %zu checks disagree (first %d reported above)", bad, checks,
		     MAX_REPORTS);
}

/* ---- hand-written tricky cases, checked the same way ---- */

static void check_fixed(const char *policy, const char *const *queries, size_t nq,
			const char *mode, const char **defs, size_t ndefs)
{
	struct pair pr;
	total_mismatches = 0;
	compile(&pr, policy, defs, ndefs);
	pr.mode = mode;
	for (size_t i = 0; i + 1 < nq; i += 2)
		check_path(&pr, queries[i], queries[i + 1]);
	size_t bad = pr.mismatches;
	release(&pr);
	cr_assert_eq(bad, 0, "%zu disagreements (reported above)", bad);
}

#define QUERIES(...) ((const char *const[]){ __VA_ARGS__ }), \
	(sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))

Test(sbpl_diff, deny_inside_allow_and_allow_inside_deny)
{
	check_fixed("cage 1\nprofile p {\n"
		    "    allow read write \"~/w/**\"\n"
		    "    deny write \"~/w/.git/**\"\n"
		    "    allow write \"~/w/.git/hooks-ok/**\"\n"
		    "}\n",
		    QUERIES("write", HOME "/w/a", "write", HOME "/w/.git/config",
			    "create", HOME "/w/.git/x", "delete", HOME "/w/.git",
			    "write", HOME "/w/.git/hooks-ok/h", "read", HOME "/w/.git/config",
			    "read-metadata", HOME "/w", "write", HOME "/wx"),
		    "enforce", NULL, 0);
}

Test(sbpl_diff, later_broad_allow_overrides_earlier_deny)
{
	check_fixed("cage 1\nprofile p {\n"
		    "    deny read \"/work/w/secret/**\"\n"
		    "    allow read \"/work/w/**\"\n"
		    "}\n",
		    QUERIES("read", "/work/w/secret/k", "read-metadata", "/work/w/secret",
			    "read", "/work/w/a", "write", "/work/w/a"),
		    "enforce", NULL, 0);
}

Test(sbpl_diff, protect_except_leaves_its_excepts_to_the_rules)
{
	check_fixed("cage 1\nprotect write \"~/w/.git/**\" except \"~/w/.git/objects/**\",\n"
		    "    \"~/w/.git/index\", \"~/w/.git/*_HEAD\", \"~/w/.git/**/*.lock\"\n"
		    "profile p {\n"
		    "    allow read write \"~/w/**\"\n"
		    "    deny write \"~/w/.git/objects/info/**\"\n"
		    "}\n",
		    QUERIES("write", HOME "/w/.git/config", "create", HOME "/w/.git/hooks/x",
			    "write", HOME "/w/.git/objects/ab/cd", "create", HOME "/w/.git/objects",
			    "delete", HOME "/w/.git/objects/ab", "write", HOME "/w/.git/index",
			    "write", HOME "/w/.git/index.lock", "create", HOME "/w/.git/ORIG_HEAD",
			    "create", HOME "/w/.git/refs/heads/x.lock", "create",
			    HOME "/w/.git/objects/info/alternates", "delete", HOME "/w/.git",
			    "write", HOME "/w/.git/HEAD", "read", HOME "/w/.git/config",
			    "write", HOME "/w/.gitx"),
		    "enforce", NULL, 0);
}

Test(sbpl_diff, protect_wins_in_any_order)
{
	check_fixed("cage 1\nprotect \"~/.ssh/**\"\nprofile p {\n"
		    "    allow read write exec \"~/**\"\n"
		    "    allow read \"~/.ssh/known_hosts\"\n"
		    "}\n",
		    QUERIES("read", HOME "/.ssh/id_ed25519", "read", HOME "/.ssh/known_hosts",
			    "read-metadata", HOME "/.ssh", "write", HOME "/.ssh/config",
			    "create", HOME "/.ssh/x", "delete", HOME "/.ssh", "exec",
			    HOME "/.ssh/x", "read", HOME "/.sshx", "write", HOME "/a"),
		    "enforce", NULL, 0);
}

/* Names outside ASCII: `?` is one character in the IR ("/U?ers" covers
 * "/Uüers", where ü is two bytes, not "/Uüüers"), and the emitted regex
 * must say the same to Seatbelt's byte matcher. */
Test(sbpl_diff, wildcards_match_utf8_characters)
{
	static const char policy[] = "cage 1\nprofile p {\n"
				     "    allow read write \"/work/U?ers/**\"\n"
				     "    protect create \"/work/U?ers\"\n"
				     "    allow read \"/work/d/?\"\n"
				     "    deny read \"/work/d/??\"\n"
				     "    allow exec \"/work/b/*\xc3\xa9\"\n"
				     "}\n";
	check_fixed(policy,
		    QUERIES("read", "/work/U\xc3\xbc" "ers/a", "create", "/work/U\xc3\xbc" "ers",
			    "create", "/work/Users", "read", "/work/U\xc3\xbc\xc3\xbc" "ers/a",
			    "read", "/work/d/\xe2\x82\xac", "read", "/work/d/\xf0\x9f\x98\x80",
			    "read", "/work/d/a\xc3\xa9", "read", "/work/d/ab",
			    "exec", "/work/b/caf\xc3\xa9", "exec", "/work/b/\xc3\xa9",
			    "exec", "/work/b/e"),
		    "enforce", NULL, 0);
	/* and both sides agree on the right answer, not only with each other */
	static const struct {
		const char *access, *path;
		bool allowed;
	} want[] = {
		{ "create", "/work/U\xc3\xbc" "ers", false }, /* the protect covers it */
		{ "read", "/work/U\xc3\xbc" "ers/a", true },
		{ "read", "/work/U\xc3\xbc\xc3\xbc" "ers/a", false },
		{ "read", "/work/d/\xf0\x9f\x98\x80", true }, /* one character of four bytes */
		{ "read", "/work/d/a\xc3\xa9", false },       /* two characters: the deny */
		{ "exec", "/work/b/\xc3\xa9", true },
	};
	struct pair pr;
	compile(&pr, policy, NULL, 0);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct cage_verdict v;
		const char *err = NULL;
		cr_assert(cage_query_path(pr.pol, want[i].access, want[i].path, &v, &err), "%s",
			  err ? err : "?");
		cr_expect_eq(v.allowed, want[i].allowed, "%s %s", want[i].access, want[i].path);
	}
	release(&pr);
}

Test(sbpl_diff, tmp_var_etc_are_private)
{
	check_fixed("cage 1\nprofile p {\n"
		    "    allow read write \"/tmp/build/**\"\n"
		    "    allow read \"/etc/app.conf\"\n"
		    "    allow write \"/var/db/v/*.log\"\n"
		    "    deny write \"/tmp/build/keep\"\n"
		    "}\n",
		    QUERIES("write", "/tmp/build/o.o", "read", "/tmp/build", "write",
			    "/tmp/build/keep", "read", "/etc/app.conf", "read", "/etc/app.confx",
			    "write", "/var/db/v/a.log", "write", "/var/db/v/d/a.log", "write",
			    "/tmp/buildx"),
		    "enforce", NULL, 0);
}

/* The glob "/STAR/STAR" matches "/private/tmp" by its letters but not
 * "/tmp"; below a link the /tmp spelling decides. A rule the policy spells
 * /private/... covers the same file as its /tmp spelling, in any order. */
Test(sbpl_diff, tmp_spellings_are_one_file)
{
	check_fixed("cage 1\nprofile p {\n"
		    "    allow read write exec \"/*/*\"\n"
		    "    deny read \"/etc\"\n"
		    "}\n",
		    QUERIES("exec", "/tmp", "write", "/var", "read", "/etc", "read", "/tmp",
			    "read", "/tmp/x", "write", "/work/x", "read", "/private/tmp",
			    "write", "/private/tmp/x"),
		    "enforce", NULL, 0);
	check_fixed("cage 1\nprofile p {\n"
		    "    allow read \"/tmp/**\"\n"
		    "    deny read \"/private/tmp/secret\"\n"
		    "    allow write \"/private/etc/app/**\"\n"
		    "    deny write \"/etc/app/keep\"\n"
		    "}\n",
		    QUERIES("read", "/tmp/secret", "read", "/private/tmp/secret", "read", "/tmp/a",
			    "read", "/private/tmp/a", "write", "/etc/app/x", "write",
			    "/private/etc/app/x", "write", "/etc/app/keep", "write",
			    "/private/etc/app/keep"),
		    "enforce", NULL, 0);
}

Test(sbpl_diff, regex_metacharacters_quotes_and_backslashes)
{
	check_fixed("cage 1\nprofile p {\n"
		    "    allow read \"/work/a.b/*.txt\"\n"
		    "    allow read \"/work/(p)+[q]/**\"\n"
		    "    allow write \"/work/^t$|u/?\"\n"
		    "    allow read write \"/work/q\\\"t/b\\\\s/**\"\n"
		    "    deny read \"/work/q\\\"t/b\\\\s/*.key\"\n"
		    "}\n",
		    QUERIES("read", "/work/a.b/x.txt", "read", "/work/aXb/x.txt", "read",
			    "/work/a.b/x.txtx", "read", "/work/a.b/d/x.txt", "read",
			    "/work/(p)+[q]/z", "read", "/work/p+[q]/z", "read",
			    "/work/(p)[q]/z", "write", "/work/^t$|u/a", "write",
			    "/work/^t$|u/ab", "write", "/work/t$|u/a", "write", "/work/^t$/a",
			    "read", "/work/q\"t/b\\s/f", "write", "/work/q\"t/b\\s/f", "read",
			    "/work/q\"t/b\\s/a.key", "read", "/work/q\"t/bs/f", "read",
			    "/work/qt/b\\s/f"),
		    "enforce", NULL, 0);
}

Test(sbpl_diff, monitor_blocks_nothing_and_reports_would_block)
{
	check_fixed("cage 1\nprofile p {\n    mode monitor\n"
		    "    allow read \"~/w/**\"\n"
		    "    deny read \"~/w/secret\"\n"
		    "}\n",
		    QUERIES("read", HOME "/w/a", "read", HOME "/w/secret", "write", HOME "/w/a",
			    "exec", "/work/x"),
		    "monitor", NULL, 0);
}

/* Braces cannot be written in a cage string (they interpolate params), but
 * a -D value may carry them into a path. */
Test(sbpl_diff, braces_from_a_param)
{
	const char *defs[] = { "odd=/work/r{1,2}s" };
	check_fixed("cage 1\nparam odd : string\nprofile p {\n"
		    "    allow read \"{odd}/**\"\n"
		    "    deny read \"{odd}/x*\"\n"
		    "}\n",
		    QUERIES("read", "/work/r{1,2}s/a", "read", "/work/r{1,2}s/xa", "read",
			    "/work/r1s/a", "read", "/work/r{1,2}s", "read", "/work/r{1,2}sx"),
		    "enforce", defs, 1);
}

static void check_fixed_hosts(const char *policy, const char *const *hosts, const unsigned *hports,
			      size_t n, const char *mode)
{
	struct pair pr;
	total_mismatches = 0;
	compile(&pr, policy, NULL, 0);
	pr.mode = mode;
	for (size_t i = 0; i < n; i++)
		check_host(&pr, hosts[i], hports[i]);
	size_t bad = pr.mismatches;
	release(&pr);
	cr_assert_eq(bad, 0, "%zu disagreements (reported above)", bad);
}

Test(sbpl_diff, network_only_through_the_proxy)
{
	static const char *const hosts[] = { "example.com", "example.com", "a.example.org",
					     "10.1.2.3", "localhost", "127.0.0.1", "::1",
					     "localhost", "other.test" };
	static const unsigned hp[] = { 443, 80, 443, 22, 3000, 3000, 3000, 3001, 443 };
	check_fixed_hosts("cage 1\nprofile p {\n"
			  "    allow connect \"example.com:443\", \"*.example.org\", \"10.1.2.3:22\"\n"
			  "    allow connect \"localhost:3000\"\n"
			  "}\n",
			  hosts, hp, 9, "enforce");
}

/* ---- loopback: where the two sides cannot agree today ----
 * Seatbelt names loopback only as "localhost", which covers 127.0.0.1 and
 * ::1 too; the IR keeps the three spellings apart and lets `*` match the
 * name "localhost". The tests below pin what each side says, so that a
 * change on either side shows up here; the random test counts these cases
 * separately instead of failing on them. */

static bool ir_host(cage_policy *p, const char *host, unsigned port)
{
	struct cage_verdict v;
	const char *err = NULL;
	cr_assert(cage_query_host(p, host, port, &v, &err), "%s", err ? err : "?");
	return v.allowed;
}

/* `*` is any public name: it never covers localhost, in the IR as in the
 * profile (which opens only the proxy port for it). */
Test(sbpl_diff, any_host_never_covers_localhost)
{
	struct pair pr;
	compile(&pr, "cage 1\nprofile p {\n    allow connect \"*:443\"\n}\n", NULL, 0);
	struct sbpl_eval_result sv;
	cr_assert_not(ir_host(pr.pol, "localhost", 443));
	cr_assert_not(ir_host(pr.pol, "dev.localhost", 443));
	cr_assert_not(ir_host(pr.pol, "127.0.0.1", 443));
	cr_assert(ir_host(pr.pol, "example.com", 443));
	cr_assert_not(sbpl_net(&pr, "localhost", 443, &sv));
	cr_assert(sbpl_net(&pr, "localhost", PROXY_PORT, &sv));
	release(&pr);
}

/* The known divergence: a deny of one loopback spelling closes the port for
 * every spelling in the profile (fail-safe), while the IR still allows the
 * others. */
Test(sbpl_diff, known_loopback_spellings_are_one_endpoint_in_sbpl)
{
	struct pair pr;
	compile(&pr, "cage 1\nprofile p {\n    allow connect \"localhost:3000\"\n"
		     "    deny connect \"127.0.0.1:3000\"\n}\n", NULL, 0);
	struct sbpl_eval_result sv;
	cr_assert(ir_host(pr.pol, "localhost", 3000));
	cr_assert_not(ir_host(pr.pol, "127.0.0.1", 3000));
	cr_assert_not(sbpl_net(&pr, "localhost", 3000, &sv));
	cr_assert_not(sbpl_net(&pr, "127.0.0.1", 3000, &sv));
	cr_assert_not(sbpl_net(&pr, "::1", 3000, &sv));
	release(&pr);
}

/* Found by this test once: with `*` covering localhost in the IR, the
 * policy denied localhost:443 while the profile allowed it. Now `*` never
 * covers localhost, and both allow it. */
Test(sbpl_diff, deny_any_host_after_loopback_allow)
{
	struct pair pr;
	compile(&pr, "cage 1\nprofile p {\n    allow connect \"localhost\"\n"
		     "    deny connect \"*:443\"\n}\n", NULL, 0);
	struct sbpl_eval_result sv;
	cr_assert(ir_host(pr.pol, "localhost", 443));
	cr_assert(sbpl_net(&pr, "localhost", 443, &sv));
	cr_assert_not(ir_host(pr.pol, "example.com", 443));
	release(&pr);
}

/* ---- the examples, with the standard library ---- */

/* Queries a reviewer asks of every example: secrets, the workspace and its
 * .git, system roots, temp, the agents' own state, caches. Each is asked
 * for every file access; what the base rules alone grant is never asked. */
static const char *const example_paths[] = {
	HOME "/.ssh/id_ed25519", HOME "/.ssh", HOME "/.aws/credentials", HOME "/.gnupg/pubring.kbx",
	HOME "/.netrc", HOME "/.docker/config.json", HOME "/.kube/config",
	HOME "/.config/gh/hosts.yml", HOME "/.git-credentials",
	HOME "/Library/Keychains/login.keychain-db", HOME "/Documents/notes.txt",
	HOME "/src/app", HOME "/src/app/main.go", HOME "/src/app/.git/hooks/pre-commit",
	HOME "/src/app/.git/config", HOME "/src/app/.git/HEAD", HOME "/src/app/.codex/x",
	HOME "/src/other/x", HOME "/.codex/config.toml", HOME "/.claude/settings.json",
	HOME "/.claude.json", HOME "/.gemini/settings.json", HOME "/go/pkg/mod/x/y.go",
	HOME "/Library/Caches/go-build/ab/cd", HOME "/.npm/_cacache/x", HOME "/.cache/pip/x",
	"/usr/bin/git", "/usr/lib/libSystem.B.dylib", "/bin/sh", "/System/Library/Frameworks/x",
	"/Library/Developer/CommandLineTools/usr/bin/clang", "/opt/homebrew/bin/node",
	"/tmp/x", "/tmp/build/y", "/var/folders/ab/T/x", "/etc/hosts", "/etc/ssl/cert.pem",
	"/var/log/system.log", "/Applications/Safari.app/x",
};

static const char *const example_hosts[] = { "github.com", "api.github.com", "api.openai.com",
					     "api.anthropic.com", "registry.npmjs.org",
					     "pypi.org", "example.com", "localhost", "127.0.0.1" };
static const unsigned example_ports[] = { 443, 80, 22, 3000 };
static const char *const example_mach[] = { "com.apple.trustd.agent", "com.apple.SecurityServer",
					    "com.apple.securityd.xpc", "com.apple.pasteboard.1" };

static void check_example(const char *name)
{
	char file[1024];
	snprintf(file, sizeof(file), "%s/examples/%s.cage", CAGE_SOURCE_DIR, name);
	const char *defs[] = { "workspace=" HOME "/src/app" };
	struct pair pr;
	total_mismatches = 0;
	compile_any(&pr, NULL, file, defs, 1);
	pr.mode = strcmp(name, "monitor-first") == 0 ? "monitor" : "enforce";
	for (size_t i = 0; i < sizeof(example_paths) / sizeof(example_paths[0]); i++)
		for (size_t k = 0; k < 6; k++)
			check_path(&pr, file_kw[k], example_paths[i]);
	for (size_t i = 0; i < sizeof(example_paths) / sizeof(example_paths[0]); i++)
		check_path(&pr, "unix", example_paths[i]);
	for (size_t i = 0; i < sizeof(example_mach) / sizeof(example_mach[0]); i++)
		check_path(&pr, "mach", example_mach[i]);
	for (size_t i = 0; i < sizeof(example_hosts) / sizeof(example_hosts[0]); i++)
		for (size_t k = 0; k < sizeof(example_ports) / sizeof(example_ports[0]); k++)
			check_host(&pr, example_hosts[i], example_ports[k]);
	size_t bad = pr.mismatches;
	cr_log_info("sbpl_diff: example %s: %zu checks, IR allowed %zu of %zu file queries",
		    name, pr.checks, pr.outcomes[0][1], pr.outcomes[0][0] + pr.outcomes[0][1]);
	release(&pr);
	cr_assert_eq(bad, 0, "example %s: %zu disagreements (reported above)", name, bad);
}

Test(sbpl_diff, example_claude_code) { check_example("claude-code"); }
Test(sbpl_diff, example_codex) { check_example("codex"); }
Test(sbpl_diff, example_gemini) { check_example("gemini"); }
Test(sbpl_diff, example_go_offline) { check_example("go-offline"); }
Test(sbpl_diff, example_layered) { check_example("layered"); }
Test(sbpl_diff, example_monitor_first) { check_example("monitor-first"); }
