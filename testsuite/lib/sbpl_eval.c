/*
 * sbpl_eval.c - turns SBPL s-expressions into rules and decides queries
 * against them (semantics in sbpl_eval.h).
 *
 * Accepted forms, and nothing else:
 *   (version 1)                       first form, exactly once
 *   (allow|deny OP... FILTER... MODIFIER...)
 * Filters:  literal path subpath prefix path-prefix regex path-regex
 *           global-name global-name-prefix global-name-regex
 *           remote|local tcp|udp|ip "HOST:PORT"   HOST is * or localhost
 *           remote unix-socket [(path-literal|literal|subpath|regex ...)]
 *           require-any require-all require-not
 *   and, read and checked but never decided (a query on an operation that
 *   reaches one is an error): target, socket-domain, socket-protocol,
 *   socket-type, sysctl-name[-prefix|-regex], ipc-posix-name[-prefix|-regex],
 *   local-name[-prefix|-regex];
 *   (extension "CLASS"), which never matches: extensions are tokens handed
 *   out at run time, and the process a query describes holds none
 * Strings:  "..."  #"..." (regex only)  (param "NAME")  (string-append ...)
 * Modifiers: (with report) (with no-report) (with no-log)
 *            (with send-signal SIG) (with message "...")
 */
#include "sbpl_eval.h"

#include <locale.h>
#ifdef __APPLE__
#include <xlocale.h> /* locale_t, newlocale, uselocale: not in <locale.h> there */
#endif
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "sbpl_sexp.h"

enum fkind {
	F_LITERAL, F_SUBPATH, F_PREFIX, F_REGEX, /* path */
	F_NAME, F_NAME_PREFIX, F_NAME_REGEX,     /* global-name */
	F_REMOTE, F_LOCAL,                       /* inet */
	F_UNIX,                                  /* remote unix-socket [kid] */
	F_ANY, F_ALL, F_NOT,
	F_OPAQUE, /* checked when read, but no query kind can reach it */
	F_EXTENSION, /* a sandbox extension token: our queries hold none */
};

enum nproto { NP_TCP, NP_UDP, NP_IP };

struct re_owned {
	regex_t re;
	struct re_owned *next;
};

struct filter {
	enum fkind kind;
	const char *s;
	regex_t *re;
	enum nproto proto;
	bool host_any, port_any;
	unsigned port;
	struct filter **kids;
	size_t nkids;
};

struct rule {
	bool allow, report;
	const char *message; /* (with message "..."), or NULL */
	unsigned line;
	const char **ops; /* canonical names */
	size_t nops;
	struct filter **filters;
	size_t nfilters;
};

struct sbpl_eval_profile {
	struct arena a;
	struct re_owned *regexes;
	struct rule **rules;
	size_t nrules, cap;
	const char **unknown;
	size_t nunknown, unknown_cap;
};

struct ctx {
	struct sbpl_eval_profile *p;
	const struct sbpl_eval_param *params;
	size_t nparams;
	char *err;
	size_t errlen;
};

static bool fail(struct ctx *c, const struct sx *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool fail(struct ctx *c, const struct sx *at, const char *fmt, ...)
{
	if (c->errlen == 0)
		return false;
	int n = snprintf(c->err, c->errlen, "%u:%u: ", at->line, at->col);
	if (n < 0 || (size_t)n >= c->errlen)
		return false;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

static bool is_sym(const struct sx *x, const char *name)
{
	return x->kind == SX_SYM && strcmp(x->text, name) == 0;
}

static const char *head(const struct sx *x)
{
	return x->kind == SX_LIST && x->n > 0 && x->kids[0]->kind == SX_SYM ?
		       x->kids[0]->text : NULL;
}

/* ---- strings: "..." | (param "N") | (string-append S...) ---- */

struct sbuf {
	char *s;
	size_t n, cap;
};

static void sbuf_add(struct arena *a, struct sbuf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *ns = arena_alloc(a, cap);
		if (b->n)
			memcpy(ns, b->s, b->n);
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static bool eval_string_into(struct ctx *c, const struct sx *x, struct sbuf *b, unsigned depth)
{
	if (depth > 16)
		return fail(c, x, "string expression nested too deeply");
	if (x->kind == SX_STR) {
		sbuf_add(&c->p->a, b, x->text, x->len);
		return true;
	}
	if (x->kind == SX_RSTR)
		return fail(c, x, "#\"...\" is a regex literal; a plain string is expected here");
	const char *h = head(x);
	if (h && strcmp(h, "param") == 0) {
		if (x->n != 2 || x->kids[1]->kind != SX_STR)
			return fail(c, x, "(param \"NAME\") takes one string");
		for (size_t i = c->nparams; i-- > 0;)
			if (strcmp(c->params[i].name, x->kids[1]->text) == 0) {
				const char *v = c->params[i].value;
				sbuf_add(&c->p->a, b, v, strlen(v));
				return true;
			}
		return fail(c, x,
			    "param \"%s\" is not set: (param) is #f and the profile does not load",
			    x->kids[1]->text);
	}
	if (h && strcmp(h, "string-append") == 0) {
		for (size_t i = 1; i < x->n; i++)
			if (!eval_string_into(c, x->kids[i], b, depth + 1))
				return false;
		return true;
	}
	return fail(c, x, "expected a string, (param \"NAME\") or (string-append ...)");
}

static bool eval_string(struct ctx *c, const struct sx *x, const char **out)
{
	struct sbuf b = { 0 };
	sbuf_add(&c->p->a, &b, "", 0);
	if (!eval_string_into(c, x, &b, 0))
		return false;
	if (memchr(b.s, '\0', b.n))
		return fail(c, x, "NUL byte in string");
	if (b.n > SBPL_EVAL_MAX_STRING)
		return fail(c, x, "string of %zu bytes: Seatbelt rejects strings longer than about %d",
			    b.n, SBPL_EVAL_MAX_STRING);
	*out = b.s;
	return true;
}

/* ---- filters ---- */

static struct filter *new_filter(struct ctx *c, enum fkind k)
{
	struct filter *f = arena_alloc(&c->p->a, sizeof(*f));
	f->kind = k;
	return f;
}

/* Seatbelt matches resolved paths: a literal or subpath that is relative or
 * holds "//", "/./", "/../" or a trailing '/' can never match, so it is an
 * emitter bug we want to see rather than a rule that silently does nothing. */
static bool check_resolved_path(struct ctx *c, const struct sx *at, const char *s)
{
	size_t n = strlen(s);
	if (s[0] != '/')
		return fail(c, at, "path \"%s\" is not absolute", s);
	if (n > 1 && s[n - 1] == '/')
		return fail(c, at, "path \"%s\" ends in '/': it never matches a resolved path", s);
	for (const char *p = s; *p; p++) {
		if (p[0] != '/')
			continue;
		if (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || p[2] == '\0')) ||
		    (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0')))
			return fail(c, at, "path \"%s\" is not normalised: it never matches a resolved path", s);
	}
	return true;
}

/* POSIX ERE stands in for Apple's regex engine. Constructs the two disagree
 * on are refused: Seatbelt silently ignores non-capturing groups, and
 * backslash-letter escapes (\d, \w, \s ...) are not portable. */
static bool compile_regex(struct ctx *c, const struct sx *at, const char *pat, regex_t **out)
{
	for (const char *p = pat; *p; p++) {
		if (p[0] == '(' && p[1] == '?')
			return fail(c, at, "regex \"%s\": '(?' groups are not supported by Seatbelt", pat);
		if (p[0] == '\\') {
			if (p[1] == '\0')
				return fail(c, at, "regex \"%s\" ends in a backslash", pat);
			if ((p[1] >= 'a' && p[1] <= 'z') || (p[1] >= 'A' && p[1] <= 'Z') ||
			    (p[1] >= '0' && p[1] <= '9'))
				return fail(c, at, "regex \"%s\": escape '\\%c' is not portable", pat, p[1]);
			p++;
		}
	}
	struct re_owned *r = arena_alloc(&c->p->a, sizeof(*r));
	/* Seatbelt's matcher works on bytes ('ü' is two of them to `[^/]`);
	 * glibc decides at compile time whether a regex matches bytes or
	 * multibyte characters, by the locale: compile in the C locale, set
	 * for this thread only, whatever the caller's locale is. */
	locale_t bytes = newlocale(LC_CTYPE_MASK, "C", (locale_t)0);
	if (bytes == (locale_t)0)
		return fail(c, at, "regex \"%s\": cannot create the C locale", pat);
	locale_t was = uselocale(bytes);
	int rc = regcomp(&r->re, pat, REG_EXTENDED | REG_NOSUB);
	uselocale(was);
	freelocale(bytes);
	if (rc != 0) {
		char msg[128];
		regerror(rc, &r->re, msg, sizeof(msg));
		return fail(c, at, "regex \"%s\": %s", pat, msg);
	}
	r->next = c->p->regexes;
	c->p->regexes = r;
	*out = &r->re;
	return true;
}

static bool regex_arg(struct ctx *c, const struct sx *x, const char **out)
{
	if (x->kind == SX_RSTR) {
		if (x->len > SBPL_EVAL_MAX_STRING)
			return fail(c, x, "regex longer than %d bytes", SBPL_EVAL_MAX_STRING);
		*out = x->text;
		return true;
	}
	return eval_string(c, x, out);
}

static bool one_arg(struct ctx *c, const struct sx *x)
{
	if (x->n != 2)
		return fail(c, x, "(%s ...) takes exactly one argument", head(x));
	return true;
}

/* "HOST:PORT" with HOST * or localhost and PORT * or 1..65535; the messages
 * are the ones sandbox-exec prints for the same mistakes. */
static bool parse_address(struct ctx *c, const struct sx *at, const char *s, struct filter *f)
{
	const char *colon = strrchr(s, ':');
	if (!colon)
		return fail(c, at, "port missing in network address \"%s\"", s);
	size_t hl = (size_t)(colon - s);
	if (hl == 1 && s[0] == '*')
		f->host_any = true;
	else if (!(hl == 9 && strncmp(s, "localhost", 9) == 0))
		return fail(c, at, "host must be * or localhost in network address \"%s\"", s);
	const char *port = colon + 1;
	if (strcmp(port, "*") == 0) {
		f->port_any = true;
		return true;
	}
	unsigned long v = 0;
	if (*port == '\0')
		return fail(c, at, "invalid port in network address \"%s\"", s);
	for (const char *p = port; *p; p++) {
		if (*p < '0' || *p > '9' || v > 65535)
			return fail(c, at, "invalid port in network address \"%s\"", s);
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v == 0 || v > 65535)
		return fail(c, at, "invalid port in network address \"%s\"", s);
	f->port = (unsigned)v;
	return true;
}

static bool parse_filter(struct ctx *c, const struct sx *x, struct filter **out, unsigned depth);

/* Filters on operations our queries never ask about (sysctl-read, signal,
 * ipc-posix-*, system-socket, mach-register); their names are those of
 * 0xbf00/simbple src/platform_data/catalina/filters.c plus the -prefix
 * forms libsandbox derives for prefix-pattern filters. */
static bool is_opaque_string_filter(const char *h)
{
	static const char *const names[] = {
		"sysctl-name", "sysctl-name-prefix", "ipc-posix-name",
		"ipc-posix-name-prefix", "local-name", "local-name-prefix",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(h, names[i]) == 0)
			return true;
	return false;
}

/* The named arguments simbple's catalina data lists for these filters. */
static bool symbol_arg_ok(const char *h, const struct sx *a)
{
	static const char *const targets[] = { "self", "pgrp", "others", "children",
						"same-sandbox", "initproc" };
	static const char *const domains[] = { "AF_UNIX", "AF_LOCAL", "AF_INET", "AF_INET6",
						"AF_ROUTE", "AF_SYSTEM", "AF_NDRV" };
	if (a->kind != SX_SYM)
		return false;
	const char *const *v = strcmp(h, "target") == 0 ? targets : domains;
	size_t n = strcmp(h, "target") == 0 ? 6 : 7;
	for (size_t i = 0; i < n; i++)
		if (strcmp(a->text, v[i]) == 0)
			return true;
	return false;
}

static bool parse_kids(struct ctx *c, const struct sx *x, struct filter *f, unsigned depth)
{
	f->nkids = x->n - 1;
	f->kids = arena_alloc(&c->p->a, (f->nkids ? f->nkids : 1) * sizeof(*f->kids));
	for (size_t i = 1; i < x->n; i++)
		if (!parse_filter(c, x->kids[i], &f->kids[i - 1], depth + 1))
			return false;
	return true;
}

static bool parse_net(struct ctx *c, const struct sx *x, struct filter *f, unsigned depth)
{
	if (x->n < 2 || x->kids[1]->kind != SX_SYM)
		return fail(c, x, "(%s ...) needs tcp, udp, ip or unix-socket", head(x));
	const char *proto = x->kids[1]->text;
	if (strcmp(proto, "unix-socket") == 0 || strcmp(proto, "unix") == 0) {
		if (f->kind != F_REMOTE)
			return fail(c, x, "only (remote unix-socket ...) is supported");
		f->kind = F_UNIX;
		if (x->n == 2)
			return true;
		if (x->n != 3)
			return fail(c, x, "(remote unix-socket FILTER) takes one path filter");
		const struct sx *k = x->kids[2];
		const char *kh = head(k);
		if (!kh || !(strcmp(kh, "path-literal") == 0 || strcmp(kh, "literal") == 0 ||
			     strcmp(kh, "path") == 0 || strcmp(kh, "subpath") == 0 ||
			     strcmp(kh, "regex") == 0 || strcmp(kh, "path-regex") == 0))
			return fail(c, k, "(remote unix-socket ...) takes a path filter");
		f->kids = arena_alloc(&c->p->a, sizeof(*f->kids));
		f->nkids = 1;
		return parse_filter(c, k, &f->kids[0], depth + 1);
	}
	if (strcmp(proto, "tcp") == 0)
		f->proto = NP_TCP;
	else if (strcmp(proto, "udp") == 0)
		f->proto = NP_UDP;
	else if (strcmp(proto, "ip") == 0)
		f->proto = NP_IP;
	else
		return fail(c, x->kids[1], "unknown protocol '%s'", proto);
	if (x->n != 3)
		return fail(c, x, "(%s %s \"HOST:PORT\") takes one address", head(x), proto);
	const char *addr;
	if (!eval_string(c, x->kids[2], &addr))
		return false;
	f->s = addr;
	return parse_address(c, x->kids[2], addr, f);
}

static bool parse_filter(struct ctx *c, const struct sx *x, struct filter **out, unsigned depth)
{
	const char *h = head(x);
	if (x->kind == SX_LIST && x->n > 0 && is_sym(x->kids[0], "with"))
		return fail(c, x, "modifier where a filter was expected");
	if (!h)
		return fail(c, x, "expected a filter");
	if (depth > 32)
		return fail(c, x, "filters nested too deeply");
	struct filter *f;
	if (strcmp(h, "literal") == 0 || strcmp(h, "path") == 0 ||
	    strcmp(h, "path-literal") == 0 || strcmp(h, "subpath") == 0) {
		f = new_filter(c, h[0] == 's' ? F_SUBPATH : F_LITERAL);
		if (!one_arg(c, x) || !eval_string(c, x->kids[1], &f->s) ||
		    !check_resolved_path(c, x->kids[1], f->s))
			return false;
	} else if (strcmp(h, "prefix") == 0 || strcmp(h, "path-prefix") == 0) {
		f = new_filter(c, F_PREFIX);
		if (!one_arg(c, x) || !eval_string(c, x->kids[1], &f->s))
			return false;
		if (f->s[0] != '/')
			return fail(c, x->kids[1], "path \"%s\" is not absolute", f->s);
	} else if (strcmp(h, "regex") == 0 || strcmp(h, "path-regex") == 0 ||
		   strcmp(h, "global-name-regex") == 0) {
		f = new_filter(c, h[0] == 'g' ? F_NAME_REGEX : F_REGEX);
		if (!one_arg(c, x) || !regex_arg(c, x->kids[1], &f->s) ||
		    !compile_regex(c, x->kids[1], f->s, &f->re))
			return false;
	} else if (strcmp(h, "global-name") == 0 || strcmp(h, "global-name-prefix") == 0) {
		f = new_filter(c, strcmp(h, "global-name") == 0 ? F_NAME : F_NAME_PREFIX);
		if (!one_arg(c, x) || !eval_string(c, x->kids[1], &f->s))
			return false;
	} else if (is_opaque_string_filter(h)) {
		f = new_filter(c, F_OPAQUE);
		if (!one_arg(c, x) || !eval_string(c, x->kids[1], &f->s))
			return false;
		f->s = arena_printf(&c->p->a, "(%s \"%s\")", h, f->s);
	} else if (strcmp(h, "ipc-posix-name-regex") == 0 || strcmp(h, "sysctl-name-regex") == 0 ||
		   strcmp(h, "local-name-regex") == 0) {
		f = new_filter(c, F_OPAQUE);
		regex_t *re;
		if (!one_arg(c, x) || !regex_arg(c, x->kids[1], &f->s) ||
		    !compile_regex(c, x->kids[1], f->s, &re))
			return false;
		f->s = arena_printf(&c->p->a, "(%s \"%s\")", h, f->s);
	} else if (strcmp(h, "extension") == 0) {
		f = new_filter(c, F_EXTENSION);
		if (!one_arg(c, x) || !eval_string(c, x->kids[1], &f->s))
			return false;
	} else if (strcmp(h, "socket-protocol") == 0 || strcmp(h, "socket-type") == 0) {
		f = new_filter(c, F_OPAQUE);
		if (!one_arg(c, x))
			return false;
		if (x->kids[1]->kind != SX_NUM && x->kids[1]->kind != SX_SYM)
			return fail(c, x->kids[1], "(%s ...) takes a number or a name", h);
		f->s = arena_printf(&c->p->a, "(%s %s)", h, x->kids[1]->text);
	} else if (strcmp(h, "target") == 0 || strcmp(h, "socket-domain") == 0) {
		f = new_filter(c, F_OPAQUE);
		if (!one_arg(c, x))
			return false;
		if (!symbol_arg_ok(h, x->kids[1]))
			return fail(c, x->kids[1], "(%s ...) does not take this argument", h);
		f->s = arena_printf(&c->p->a, "(%s %s)", h, x->kids[1]->text);
	} else if (strcmp(h, "remote") == 0 || strcmp(h, "local") == 0) {
		f = new_filter(c, h[0] == 'r' ? F_REMOTE : F_LOCAL);
		if (!parse_net(c, x, f, depth))
			return false;
	} else if (strcmp(h, "require-any") == 0 || strcmp(h, "require-all") == 0) {
		f = new_filter(c, strcmp(h, "require-any") == 0 ? F_ANY : F_ALL);
		if (x->n < 2)
			return fail(c, x, "(%s) needs at least one filter", h);
		if (!parse_kids(c, x, f, depth))
			return false;
	} else if (strcmp(h, "require-not") == 0) {
		f = new_filter(c, F_NOT);
		if (x->n != 2)
			return fail(c, x, "(require-not FILTER) takes exactly one filter");
		if (!parse_kids(c, x, f, depth))
			return false;
	} else {
		return fail(c, x, "unsupported filter '%s'", h);
	}
	*out = f;
	return true;
}

/* ---- rules ---- */

static bool valid_op_name(const char *s)
{
	if (!*s)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		      (*p == '*' && p[1] == '\0')))
			return false;
	return true;
}

static void note_unknown(struct sbpl_eval_profile *p, const char *op)
{
	for (size_t i = 0; i < p->nunknown; i++)
		if (strcmp(p->unknown[i], op) == 0)
			return;
	if (p->nunknown == p->unknown_cap) {
		size_t cap = p->unknown_cap ? 2 * p->unknown_cap : 8;
		const char **nu = arena_alloc(&p->a, cap * sizeof(*nu));
		if (p->nunknown)
			memcpy(nu, p->unknown, p->nunknown * sizeof(*nu));
		p->unknown = nu;
		p->unknown_cap = cap;
	}
	p->unknown[p->nunknown++] = op;
}

static bool parse_modifier(struct ctx *c, const struct sx *x, struct rule *r, bool *seen_noreport)
{
	if (x->n < 2 || x->kids[1]->kind != SX_SYM)
		return fail(c, x, "(with MODIFIER) needs a modifier name");
	const char *m = x->kids[1]->text;
	if (strcmp(m, "report") == 0) {
		if (x->n != 2)
			return fail(c, x, "(with report) takes no argument");
		r->report = true;
	} else if (strcmp(m, "no-report") == 0 || strcmp(m, "no-log") == 0) {
		if (x->n != 2)
			return fail(c, x, "(with %s) takes no argument", m);
		*seen_noreport = true;
	} else if (strcmp(m, "send-signal") == 0) {
		if (x->n != 3 || (x->kids[2]->kind != SX_SYM && x->kids[2]->kind != SX_NUM))
			return fail(c, x, "(with send-signal SIGNAL) takes one signal");
	} else if (strcmp(m, "message") == 0) {
		if (x->n != 3 || x->kids[2]->kind != SX_STR)
			return fail(c, x, "(with message \"...\") takes one string");
		if (r->message)
			return fail(c, x, "a rule carries one (with message ...)");
		r->message = x->kids[2]->text;
	} else {
		return fail(c, x, "unsupported modifier '%s'", m);
	}
	if (r->report && *seen_noreport)
		return fail(c, x, "a rule cannot carry both report and no-report");
	return true;
}

static bool parse_rule(struct ctx *c, const struct sx *x)
{
	struct sbpl_eval_profile *p = c->p;
	struct rule *r = arena_alloc(&p->a, sizeof(*r));
	r->allow = strcmp(head(x), "allow") == 0;
	r->line = x->line;
	r->ops = arena_alloc(&p->a, x->n * sizeof(*r->ops));
	r->filters = arena_alloc(&p->a, x->n * sizeof(*r->filters));
	bool noreport = false, seen_filter_or_mod = false;
	for (size_t i = 1; i < x->n; i++) {
		const struct sx *k = x->kids[i];
		if (k->kind == SX_SYM) {
			if (seen_filter_or_mod)
				return fail(c, k, "operation '%s' after a filter or modifier", k->text);
			if (!valid_op_name(k->text))
				return fail(c, k, "'%s' is not an operation name", k->text);
			const char *op = sbpl_eval_op_canonical(k->text);
			if (!sbpl_eval_op_find(op))
				note_unknown(p, arena_strdup(&p->a, op));
			r->ops[r->nops++] = arena_strdup(&p->a, op);
		} else if (k->kind == SX_LIST && k->n > 0 && is_sym(k->kids[0], "with")) {
			seen_filter_or_mod = true;
			if (!parse_modifier(c, k, r, &noreport))
				return false;
		} else if (k->kind == SX_LIST) {
			seen_filter_or_mod = true;
			if (!parse_filter(c, k, &r->filters[r->nfilters], 0))
				return false;
			r->nfilters++;
		} else {
			return fail(c, k, "expected an operation, a filter or (with ...)");
		}
	}
	if (r->nops == 0)
		return fail(c, x, "(%s) names no operation", head(x));
	if (p->nrules == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct rule **nr = arena_alloc(&p->a, cap * sizeof(*nr));
		if (p->nrules)
			memcpy(nr, p->rules, p->nrules * sizeof(*nr));
		p->rules = nr;
		p->cap = cap;
	}
	p->rules[p->nrules++] = r;
	return true;
}

static bool parse_forms(struct ctx *c, struct sx **forms, size_t n)
{
	bool version = false;
	for (size_t i = 0; i < n; i++) {
		const struct sx *x = forms[i];
		const char *h = head(x);
		if (!h)
			return fail(c, x, "expected a form such as (allow ...)");
		if (strcmp(h, "version") == 0) {
			if (version)
				return fail(c, x, "only one (version ...) may be given");
			if (i != 0)
				return fail(c, x, "(version 1) must be the first form");
			if (x->n != 2 || x->kids[1]->kind != SX_NUM || strcmp(x->kids[1]->text, "1") != 0)
				return fail(c, x, "unsupported version: only (version 1) exists");
			version = true;
		} else if (!version) {
			return fail(c, x, "the profile must start with (version 1)");
		} else if (strcmp(h, "allow") == 0 || strcmp(h, "deny") == 0) {
			if (!parse_rule(c, x))
				return false;
		} else {
			return fail(c, x, "unsupported form '%s'", h);
		}
	}
	if (!version) {
		struct sx at = { .line = 1, .col = 1 };
		return fail(c, &at, "no (version 1) form");
	}
	for (size_t i = 0; i < c->p->nrules; i++)
		for (size_t j = 0; j < c->p->rules[i]->nops; j++)
			if (strcmp(c->p->rules[i]->ops[j], "default") == 0 &&
			    c->p->rules[i]->nfilters == 0)
				return true;
	struct sx at = { .line = 1, .col = 1 };
	return fail(c, &at, "no filterless rule on `default` such as (deny default)");
}

struct sbpl_eval_profile *sbpl_eval_parse(const char *text, size_t len,
					  const struct sbpl_eval_param *params, size_t nparams,
					  char *err, size_t errlen)
{
	struct sbpl_eval_profile *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "0:0: out of memory");
		return NULL;
	}
	arena_init(&p->a);
	struct ctx c = { .p = p, .params = params, .nparams = nparams,
			 .err = err, .errlen = errlen };
	struct sx **forms;
	size_t n;
	if (!sbpl_eval_read(&p->a, text, len, &forms, &n, err, errlen) ||
	    !parse_forms(&c, forms, n)) {
		sbpl_eval_free(p);
		return NULL;
	}
	return p;
}

void sbpl_eval_free(struct sbpl_eval_profile *p)
{
	if (!p)
		return;
	for (struct re_owned *r = p->regexes; r; r = r->next)
		regfree(&r->re);
	arena_free(&p->a);
	free(p);
}

size_t sbpl_eval_rule_count(const struct sbpl_eval_profile *p)
{
	return p->nrules;
}

size_t sbpl_eval_unknown_ops(const struct sbpl_eval_profile *p, const char **first)
{
	if (first)
		*first = p->nunknown ? p->unknown[0] : NULL;
	return p->nunknown;
}

/* ---- deciding ---- */

/* What `localhost` in a network address covers, as measured on macOS:
 * 127.0.0.1, ::1 and 0.0.0.0, but not the rest of 127/8. */
static bool is_localhost(const char *h)
{
	return strcmp(h, "localhost") == 0 || strcmp(h, "127.0.0.1") == 0 ||
	       strcmp(h, "::1") == 0 || strcmp(h, "0.0.0.0") == 0;
}

/* 1 match, 0 no match, -1 undecidable (message in err). */
static int match(const struct filter *f, const struct sbpl_eval_query *q, char *err, size_t errlen)
{
	switch (f->kind) {
	case F_LITERAL:
		return q->kind == SBPL_EVAL_Q_PATH && strcmp(q->path, f->s) == 0;
	case F_SUBPATH: {
		if (q->kind != SBPL_EVAL_Q_PATH)
			return 0;
		size_t n = strlen(f->s);
		if (n == 1)
			return 1; /* (subpath "/") */
		return strncmp(q->path, f->s, n) == 0 &&
		       (q->path[n] == '\0' || q->path[n] == '/');
	}
	case F_PREFIX:
		return q->kind == SBPL_EVAL_Q_PATH && strncmp(q->path, f->s, strlen(f->s)) == 0;
	case F_REGEX:
		return q->kind == SBPL_EVAL_Q_PATH && regexec(f->re, q->path, 0, NULL, 0) == 0;
	case F_NAME:
		return q->kind == SBPL_EVAL_Q_NAME && strcmp(q->name, f->s) == 0;
	case F_NAME_PREFIX:
		return q->kind == SBPL_EVAL_Q_NAME && strncmp(q->name, f->s, strlen(f->s)) == 0;
	case F_NAME_REGEX:
		return q->kind == SBPL_EVAL_Q_NAME && regexec(f->re, q->name, 0, NULL, 0) == 0;
	case F_OPAQUE:
		snprintf(err, errlen, "%s cannot be decided by this evaluator", f->s);
		return -1;
	case F_EXTENSION:
		return 0;
	case F_REMOTE:
		if (q->kind != SBPL_EVAL_Q_NET)
			return 0;
		if (f->proto == NP_TCP && q->proto != SBPL_EVAL_TCP)
			return 0;
		if (f->proto == NP_UDP && q->proto != SBPL_EVAL_UDP)
			return 0;
		if (!f->host_any && !is_localhost(q->host))
			return 0;
		return f->port_any || f->port == q->port;
	case F_LOCAL:
		if (q->kind != SBPL_EVAL_Q_NET)
			return 0;
		if (f->host_any && f->port_any)
			return 1; /* every socket has some local endpoint */
		snprintf(err, errlen, "(local %s) needs the local address, which queries do not carry",
			 f->s);
		return -1;
	case F_UNIX:
		if (q->kind != SBPL_EVAL_Q_PATH)
			return 0;
		return f->nkids ? match(f->kids[0], q, err, errlen) : 1;
	case F_ANY:
		for (size_t i = 0; i < f->nkids; i++) {
			int m = match(f->kids[i], q, err, errlen);
			if (m != 0)
				return m;
		}
		return 0;
	case F_ALL:
		for (size_t i = 0; i < f->nkids; i++) {
			int m = match(f->kids[i], q, err, errlen);
			if (m != 1)
				return m;
		}
		return 1;
	case F_NOT: {
		int m = match(f->kids[0], q, err, errlen);
		return m < 0 ? m : !m;
	}
	}
	return 0;
}

static bool rule_on(const struct rule *r, const char *op)
{
	for (size_t i = 0; i < r->nops; i++)
		if (strcmp(r->ops[i], op) == 0)
			return true;
	return false;
}

static void decided(struct sbpl_eval_result *out, const struct rule *r, const char *op)
{
	out->allowed = r->allow;
	out->report = r->report;
	out->message = r->message;
	out->line = r->line;
	out->op = op;
	out->by_default = strcmp(op, "default") == 0;
}

bool sbpl_eval_decide(const struct sbpl_eval_profile *p, const char *operation,
		      const struct sbpl_eval_query *q, struct sbpl_eval_result *out,
		      char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if ((q->kind == SBPL_EVAL_Q_PATH && !q->path) || (q->kind == SBPL_EVAL_Q_NET && !q->host) ||
	    (q->kind == SBPL_EVAL_Q_NAME && !q->name)) {
		snprintf(err, errlen, "query without its argument");
		return false;
	}
	const char *op = sbpl_eval_op_canonical(operation);
	/* The table is a tree rooted at `default`; the bound only guards
	 * against a broken table. */
	for (unsigned hop = 0; hop < 16; hop++) {
		for (size_t i = p->nrules; i-- > 0;) {
			const struct rule *r = p->rules[i];
			if (r->nfilters == 0 || !rule_on(r, op))
				continue;
			for (size_t k = 0; k < r->nfilters; k++) {
				int m = match(r->filters[k], q, err, errlen);
				if (m < 0)
					return false;
				if (m) {
					decided(out, r, op);
					return true;
				}
			}
		}
		for (size_t i = p->nrules; i-- > 0;) {
			const struct rule *r = p->rules[i];
			if (r->nfilters == 0 && rule_on(r, op)) {
				decided(out, r, op);
				return true;
			}
		}
		if (strcmp(op, "default") == 0)
			break;
		const struct sbpl_eval_op *info = sbpl_eval_op_find(op);
		op = info ? info->parent : "default";
	}
	snprintf(err, errlen, "no rule decides %s (the profile has no rule on default)", operation);
	return false;
}

bool sbpl_eval_decide_path(const struct sbpl_eval_profile *p, const char *operation,
			   const char *path, struct sbpl_eval_result *out, char *err, size_t errlen)
{
	struct sbpl_eval_query q = { .kind = SBPL_EVAL_Q_PATH, .path = path };
	return sbpl_eval_decide(p, operation, &q, out, err, errlen);
}

bool sbpl_eval_decide_net(const struct sbpl_eval_profile *p, const char *operation,
			  enum sbpl_eval_proto proto, const char *host, unsigned port,
			  struct sbpl_eval_result *out, char *err, size_t errlen)
{
	struct sbpl_eval_query q = { .kind = SBPL_EVAL_Q_NET, .proto = proto, .host = host, .port = port };
	return sbpl_eval_decide(p, operation, &q, out, err, errlen);
}

bool sbpl_eval_decide_name(const struct sbpl_eval_profile *p, const char *operation,
			   const char *name, struct sbpl_eval_result *out, char *err, size_t errlen)
{
	struct sbpl_eval_query q = { .kind = SBPL_EVAL_Q_NAME, .name = name };
	return sbpl_eval_decide(p, operation, &q, out, err, errlen);
}
