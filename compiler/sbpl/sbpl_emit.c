/*
 * sbpl_emit.c - the SBPL backend: the selected profile as a Seatbelt
 * profile (see sbpl.h for the facts it relies on, docs/sbpl.md for the
 * mapping and the reasons).
 *
 * Layout of every profile, in this order because order is semantics:
 *   header comment (version, fingerprint, profile, mode, -D params)
 *   (version 1), the default rule
 *   base rules, then metadata on the ancestors of granted paths
 *   the policy's rules in IR order, protect excepted
 *   the per-run private TMPDIR / HOME (params)
 *   the protect rules, so that no allow can re-open them
 *   the proxy port (param), which no policy rule can close
 * The whole profile is built in memory and written with one fwrite, so a
 * failure never leaves half a profile behind.
 */
#include "sbpl.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cage.h"

/* ---- access bits to operations ---- */

static const char *const ops_read[] = { "file-read-data", "file-read-xattr" };
static const char *const ops_meta[] = { "file-read-metadata", "file-test-existence" };
static const char *const ops_write[] = {
	"file-write-data",  "file-write-mode", "file-write-owner", "file-write-times",
	"file-write-flags", "file-write-xattr", "file-write-acl", "file-write-finderinfo",
};
static const char *const ops_create[] = { "file-write-create", "file-link", "file-clone" };
static const char *const ops_delete[] = { "file-write-unlink" };
static const char *const ops_exec[] = { "process-exec*", "file-map-executable" };

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	uint32_t bit;
	const char *const *ops;
	size_t n;
} file_ops[] = {
	{ IR_A_READ, ops_read, N(ops_read) },
	{ IR_A_READ_META, ops_meta, N(ops_meta) },
	{ IR_A_WRITE, ops_write, N(ops_write) },
	{ IR_A_CREATE, ops_create, N(ops_create) },
	{ IR_A_DELETE, ops_delete, N(ops_delete) },
	{ IR_A_EXEC, ops_exec, N(ops_exec) },
};

const char *const *sbpl_file_ops(uint32_t bit, size_t *n)
{
	for (size_t i = 0; i < N(file_ops); i++) {
		if (file_ops[i].bit == bit) {
			*n = file_ops[i].n;
			return file_ops[i].ops;
		}
	}
	*n = 0;
	return NULL;
}

/* ---- emitter state ---- */

struct em {
	const struct ir_policy *pol;
	const struct ir_profile *prof;
	struct arena *a;
	struct sbpl_buf b;
	const char **err;
	bool ok;
	bool monitor;
	const char *tag; /* cagerun's run tag for deny rules, or NULL */
	/* The rule group being written: consecutive rules with the same head
	 * share one form, their filters OR-ed. */
	struct sbpl_buf head;
	bool open;
};

static void fail(struct em *e, const struct ir_rule *r, const char *why)
{
	if (!e->ok)
		return;
	e->ok = false;
	if (r && r->loc.file)
		*e->err = arena_printf(e->a, "%s:%u:%u: cannot write rule for SBPL: %s",
				       r->loc.file->name, r->loc.line, r->loc.col, why);
	else
		*e->err = arena_printf(e->a, "cannot write SBPL profile: %s", why);
}

static void close_group(struct em *e)
{
	if (e->open)
		sbpl_buf_puts(&e->b, ")\n");
	e->open = false;
}

/* Starts (or continues) a form whose text up to the filters is `head`. */
static void open_group(struct em *e, const struct sbpl_buf *head)
{
	if (e->open && e->head.len == head->len && memcmp(e->head.p, head->p, head->len) == 0)
		return;
	close_group(e);
	e->head.len = 0;
	sbpl_buf_putn(&e->head, head->p, head->len);
	sbpl_buf_putn(&e->b, head->p, head->len);
	sbpl_buf_puts(&e->b, "\n");
	e->open = true;
}

/* "(allow OPS" or, in monitor mode, a deny as "(allow OPS (with report)". */
static void put_action(struct em *e, struct sbpl_buf *h, bool deny)
{
	if (deny && !e->monitor)
		sbpl_buf_puts(h, "(deny");
	else
		sbpl_buf_puts(h, "(allow");
}

/* What enforce would deny carries the run tag either way: denied with it,
 * or, in monitor mode, allowed and reported with it, so that cagerun's log
 * reader finds this run's lines in both modes. */
static void put_report(struct em *e, struct sbpl_buf *h, bool deny)
{
	if (deny && e->monitor)
		sbpl_buf_puts(h, " (with report)");
	if (deny && e->tag)
		sbpl_buf_printf(h, " (with message \"%s\")", e->tag);
}

/* A buffer's text; "" when it never got memory (oom is reported at the end). */
static const char *cstr(const struct sbpl_buf *b)
{
	return b->p ? b->p : "";
}

/* " ; file:line:col" naming the rule's source, for readers of the profile. */
static void rule_suffix(const struct ir_rule *r, struct sbpl_buf *s)
{
	s->len = 0;
	sbpl_buf_puts(s, ""); /* never NULL, even without a location */
	if (!r->loc.file)
		return;
	sbpl_buf_puts(s, " ; ");
	sbpl_put_comment_text(s, r->loc.file->name);
	sbpl_buf_printf(s, ":%u:%u", r->loc.line, r->loc.col);
}

/* ---- rules by target kind ---- */

/* A protect with excepts is a form of its own, since the excepts belong
 * to its targets only:
 *   (deny OPS (require-all (require-any TARGET...)
 *                          (require-not (require-any EXCEPT...))))
 * The except filters are written as an allow's would be (no extra
 * literal for a subtree root), the narrower of the two spellings: a
 * path Seatbelt might not see as excepted stays protected. */
static void emit_excepted(struct em *e, const struct ir_rule *r, const struct sbpl_buf *h)
{
	close_group(e);
	struct sbpl_buf suf = { 0 };
	rule_suffix(r, &suf);
	sbpl_buf_printf(&e->b, "%s\n  (require-all%s\n    (require-any\n", cstr(h), cstr(&suf));
	struct sbpl_filter_opts o = { .deny = true, .indent = "      " };
	const char *why = NULL;
	if (!sbpl_put_path_filters(&e->b, &r->t.path, &o, &why))
		fail(e, r, why);
	sbpl_buf_puts(&e->b, "    )\n    (require-not (require-any\n");
	struct sbpl_filter_opts ox = { .deny = false, .indent = "      " };
	for (uint32_t i = 0; i < r->nexcept && e->ok; i++) {
		const struct ir_except *x = &r->except[i];
		suf.len = 0;
		sbpl_buf_puts(&suf, "");
		if (x->loc.file) {
			sbpl_buf_puts(&suf, " ; except ");
			sbpl_put_comment_text(&suf, x->loc.file->name);
			sbpl_buf_printf(&suf, ":%u:%u", x->loc.line, x->loc.col);
		}
		ox.suffix = cstr(&suf);
		if (!sbpl_put_path_filters(&e->b, &x->path, &ox, &why))
			fail(e, r, why);
	}
	sbpl_buf_puts(&e->b, "    ))\n  )\n)\n");
	sbpl_buf_free(&suf);
}

static void emit_path_rule(struct em *e, const struct ir_rule *r, bool deny)
{
	struct sbpl_buf h = { 0 }, suf = { 0 };
	put_action(e, &h, deny);
	size_t nops_total = 0;
	for (size_t i = 0; i < N(file_ops); i++) {
		if (!(r->access & file_ops[i].bit))
			continue;
		for (size_t k = 0; k < file_ops[i].n; k++) {
			sbpl_buf_puts(&h, " ");
			sbpl_buf_puts(&h, file_ops[i].ops[k]);
			nops_total++;
		}
	}
	/* A guard also keeps what it matches from being deleted (renamed
	 * away) or hard-linked, in its own place in the order (ir_pins.c). */
	if (deny && ir_is_guard(e->prof, r)) {
		if (!(r->access & IR_A_DELETE)) {
			sbpl_buf_puts(&h, " file-write-unlink");
			nops_total++;
		}
		if (!(r->access & IR_A_CREATE)) {
			sbpl_buf_puts(&h, " file-link");
			nops_total++;
		}
	}
	put_report(e, &h, deny);
	if (nops_total && r->nexcept) {
		emit_excepted(e, r, &h);
	} else if (nops_total) {
		open_group(e, &h);
		rule_suffix(r, &suf);
		struct sbpl_filter_opts o = { .deny = deny, .indent = "  ", .suffix = cstr(&suf) };
		const char *why = NULL;
		if (!sbpl_put_path_filters(&e->b, &r->t.path, &o, &why))
			fail(e, r, why);
	}
	sbpl_buf_free(&h);
	sbpl_buf_free(&suf);
}

static void emit_unix_rule(struct em *e, const struct ir_rule *r, bool deny)
{
	struct sbpl_buf h = { 0 }, suf = { 0 };
	put_action(e, &h, deny);
	sbpl_buf_puts(&h, " network-outbound");
	put_report(e, &h, deny);
	open_group(e, &h);
	rule_suffix(r, &suf);
	struct sbpl_filter_opts o = { .deny = deny, .unix_socket = true, .indent = "  ",
				      .suffix = cstr(&suf) };
	const char *why = NULL;
	if (!sbpl_put_path_filters(&e->b, &r->t.path, &o, &why))
		fail(e, r, why);
	sbpl_buf_free(&h);
	sbpl_buf_free(&suf);
}

static void emit_mach_rule(struct em *e, const struct ir_rule *r, bool deny)
{
	struct sbpl_buf h = { 0 }, suf = { 0 };
	put_action(e, &h, deny);
	sbpl_buf_puts(&h, " mach-lookup");
	put_report(e, &h, deny);
	open_group(e, &h);
	rule_suffix(r, &suf);
	const char *name = r->t.mach.name;
	size_t n = strlen(name);
	if (r->t.mach.prefix && n && name[n - 1] == '*')
		n--;
	sbpl_buf_printf(&e->b, "  (%s ", r->t.mach.prefix ? "global-name-prefix" : "global-name");
	if (!sbpl_put_string(&e->b, name, n))
		fail(e, r, "the service name has a control character or is too long");
	sbpl_buf_puts(&e->b, ")");
	sbpl_buf_puts(&e->b, cstr(&suf));
	sbpl_buf_puts(&e->b, "\n");
	sbpl_buf_free(&h);
	sbpl_buf_free(&suf);
}

/* SBPL's network filters know only "localhost" and "*" as hosts, so a
 * loopback rule can be written directly; every other host is the proxy's. */
static bool is_loopback(const struct ir_host *h)
{
	static const uint8_t v6_loop[16] = { [15] = 1 };
	switch (h->kind) {
	case IR_H_NAME: return strcmp(h->name, "localhost") == 0;
	case IR_H_IPV4: return h->addr[0] == 127 && h->addr[1] == 0 && h->addr[2] == 0 &&
			       h->addr[3] == 1;
	case IR_H_IPV6: return memcmp(h->addr, v6_loop, 16) == 0;
	default: return false;
	}
}

/* The host as written, for the comment that stands in for a proxy rule. */
static void put_host_text(struct sbpl_buf *b, const struct ir_host *h)
{
	switch (h->kind) {
	case IR_H_SUFFIX: sbpl_buf_puts(b, "*."); sbpl_put_comment_text(b, h->name); break;
	case IR_H_ANY: sbpl_buf_puts(b, "*"); break;
	case IR_H_IPV6: sbpl_buf_puts(b, "["); sbpl_put_comment_text(b, h->name); sbpl_buf_puts(b, "]"); break;
	default: sbpl_put_comment_text(b, h->name ? h->name : "?"); break;
	}
	for (size_t i = 0; i < h->nports; i++) {
		sbpl_buf_puts(b, i ? "," : ":");
		if (h->ports[i].lo == h->ports[i].hi)
			sbpl_buf_printf(b, "%u", h->ports[i].lo);
		else
			sbpl_buf_printf(b, "%u-%u", h->ports[i].lo, h->ports[i].hi);
	}
}

static void emit_host_rule(struct em *e, const struct ir_rule *r, bool deny)
{
	const struct ir_host *h = &r->t.host;
	struct sbpl_buf suf = { 0 };
	rule_suffix(r, &suf);
	if (e->prof->mode == IR_MODE_ENFORCE_FS || !is_loopback(h)) {
		/* Not a Seatbelt rule: a comment, outside any form. */
		close_group(e);
		sbpl_buf_printf(&e->b, "; %s connect ", deny ? "deny" : "allow");
		put_host_text(&e->b, h);
		sbpl_buf_puts(&e->b, e->prof->mode == IR_MODE_ENFORCE_FS
					     ? " -- network is open in mode enforce-fs"
					     : " -- decided by the proxy");
		sbpl_buf_puts(&e->b, cstr(&suf));
		sbpl_buf_puts(&e->b, "\n");
		sbpl_buf_free(&suf);
		return;
	}
	size_t nports = 0;
	for (size_t i = 0; i < h->nports; i++)
		nports += (size_t)h->ports[i].hi - h->ports[i].lo + 1;
	if (nports > SBPL_MAX_LOOPBACK_PORTS) {
		fail(e, r, "loopback port range too wide to write port by port "
			   "(more than 1024 ports); narrow it");
		sbpl_buf_free(&suf);
		return;
	}
	struct sbpl_buf hd = { 0 };
	put_action(e, &hd, deny);
	sbpl_buf_puts(&hd, " network-outbound");
	put_report(e, &hd, deny);
	open_group(e, &hd);
	if (h->nports == 0) {
		sbpl_buf_printf(&e->b, "  (remote tcp \"localhost:*\")%s\n", cstr(&suf));
	} else {
		for (size_t i = 0; i < h->nports; i++)
			for (unsigned p = h->ports[i].lo; p <= h->ports[i].hi; p++)
				sbpl_buf_printf(&e->b, "  (remote tcp \"localhost:%u\")%s\n", p,
						cstr(&suf));
	}
	sbpl_buf_free(&hd);
	sbpl_buf_free(&suf);
}

static void emit_rule(struct em *e, const struct ir_rule *r)
{
	bool deny = r->effect != IR_ALLOW;
	switch (r->tkind) {
	case IR_T_PATH: emit_path_rule(e, r, deny); break;
	case IR_T_UNIX: emit_unix_rule(e, r, deny); break;
	case IR_T_MACH: emit_mach_rule(e, r, deny); break;
	case IR_T_HOST: emit_host_rule(e, r, deny); break;
	}
}

/* ---- analysis ---- */

/* The proxy port is opened when some host allow may survive: a `protect
 * connect "*"` (every name, every port) shadows every allow of a name, so
 * an offline profile does not even reach the proxy. */
static bool needs_proxy(const struct ir_profile *p)
{
	if (p->mode == IR_MODE_ENFORCE_FS)
		return false;
	bool names_closed = false;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->tkind == IR_T_HOST && r->effect == IR_PROTECT && r->t.host.kind == IR_H_ANY &&
		    r->t.host.nports == 0)
			names_closed = true;
	}
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->tkind != IR_T_HOST || r->effect != IR_ALLOW || is_loopback(&r->t.host))
			continue;
		bool is_name = r->t.host.kind == IR_H_NAME || r->t.host.kind == IR_H_SUFFIX ||
			       r->t.host.kind == IR_H_ANY;
		if (!(is_name && names_closed))
			return true;
	}
	return false;
}

static bool has_unix_allow(const struct ir_profile *p)
{
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].tkind == IR_T_UNIX && p->rules[i].effect == IR_ALLOW)
			return true;
	return false;
}

/* ---- ancestors of granted paths ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds every proper ancestor directory of resolved path s[0..n) (and s
 * itself when `self`), root excluded. */
static void add_ancestors(struct arena *a, const char ***v, size_t *nv, size_t *cap,
			  const char *s, size_t n, bool self)
{
	for (size_t i = 1; i <= n; i++) {
		if (i == n ? !self : s[i] != '/')
			continue;
		if (*nv == *cap) {
			*cap = *cap ? *cap * 2 : 64;
			*v = arena_grow(a, *v, *nv, *cap, sizeof **v);
		}
		(*v)[(*nv)++] = arena_strndup(a, s, i);
	}
}

/* The literal part of a pattern whose ancestors matter: text[0..*n), and
 * whether that prefix itself is one of them (*self: for a glob, the
 * directory it starts in; an exact path or a subtree root is the target). */
static void literal_dir(const struct ir_path *p, size_t *n, bool *self)
{
	switch (p->kind) {
	case IR_PAT_EXACT: *n = p->len; *self = false; return;
	case IR_PAT_SUBTREE: *n = p->len >= 3 ? p->len - 3 : 0; *self = false; return;
	case IR_PAT_GLOB: break;
	}
	size_t k = p->lit_prefix;
	while (k > 0 && p->text[k - 1] != '/')
		k--;
	*n = k > 0 ? k - 1 : 0; /* without the '/' */
	*self = true;
}

/* realpath(3), getcwd and many runtimes stat every directory on the way to
 * a file; without metadata on the ancestors of a granted tree they fail
 * even though the tree itself is granted. Only metadata, only the
 * directories on the way, and before the policy so any rule overrides. */
static void emit_ancestors(struct em *e)
{
	const char **v = NULL;
	size_t nv = 0, cap = 0;
	for (size_t i = 0; i < e->prof->nrules; i++) {
		const struct ir_rule *r = &e->prof->rules[i];
		if (r->effect != IR_ALLOW || r->tkind != IR_T_PATH || !(r->access & IR_A_FILE))
			continue;
		const struct ir_path *p = &r->t.path;
		struct sbpl_buf res = { 0 };
		size_t n;
		bool self;
		literal_dir(p, &n, &self);
		sbpl_resolved_path(&res, p->text, n);
		if (res.oom)
			e->b.oom = true;
		else
			add_ancestors(e->a, &v, &nv, &cap, res.p ? res.p : "", res.len, self);
		sbpl_buf_free(&res);
	}
	if (nv == 0)
		return;
	qsort(v, nv, sizeof(*v), cmp_str);
	sbpl_buf_puts(&e->b, "; metadata on the directories leading to granted paths (realpath, getcwd)\n"
			     "(allow file-read-metadata file-test-existence\n");
	for (size_t i = 0; i < nv && e->ok; i++) {
		if (i > 0 && strcmp(v[i], v[i - 1]) == 0)
			continue;
		sbpl_buf_puts(&e->b, "  (literal ");
		if (!sbpl_put_string(&e->b, v[i], strlen(v[i])))
			fail(e, NULL, "a granted path has a control character or is too long");
		sbpl_buf_puts(&e->b, ")\n");
	}
	sbpl_buf_puts(&e->b, ")\n\n");
}

/* A denied or protected file can be carried out of its rule by renaming
 * a directory above it (mv ~/.config/gh ~/x, then read ~/x/hosts.yml;
 * mv .git .git-old, then a fresh .git/hooks). The IR pins those
 * directories (ir_pins.c); here each pin denies file-write-unlink
 * (renaming needs it on the source) and file-link, after the policy's
 * rules so that no allow re-opens them. What the rule matches itself is
 * held by the rule's own deny (emit_path_rule). */
static void emit_move_blocks(struct em *e)
{
	if (e->prof->npins == 0)
		return;
	struct sbpl_buf h = { 0 };
	put_action(e, &h, true);
	sbpl_buf_puts(&h, " file-write-unlink file-link");
	put_report(e, &h, true);
	sbpl_buf_printf(&e->b, ";; ---- pinned: the directories above what denies and protects hold: no\n"
			       ";; deleting or renaming them away ----\n"
			       "%s\n", cstr(&h));
	sbpl_buf_free(&h);
	struct sbpl_buf suf = { 0 };
	for (size_t i = 0; i < e->prof->npins && e->ok; i++) {
		const struct ir_pin *pin = &e->prof->pins[i];
		rule_suffix(pin->guard, &suf);
		struct sbpl_filter_opts o = { .deny = true, .indent = "  ", .suffix = cstr(&suf) };
		const char *why = NULL;
		if (!sbpl_put_path_filters(&e->b, &pin->pat, &o, &why))
			fail(e, pin->guard, why);
	}
	sbpl_buf_free(&suf);
	sbpl_buf_puts(&e->b, ")\n\n");
}

/* ---- header ---- */

static const char *mode_name(enum ir_mode m)
{
	switch (m) {
	case IR_MODE_OFF: return "off";
	case IR_MODE_MONITOR: return "monitor";
	case IR_MODE_ENFORCE_FS: return "enforce-fs";
	case IR_MODE_ENFORCE: return "enforce";
	}
	return "?";
}

static const char *param_type_name(enum ir_param_type t)
{
	switch (t) {
	case IR_P_PATH: return "path";
	case IR_P_HOST: return "host";
	case IR_P_STRING: return "string";
	case IR_P_PORT: return "port";
	}
	return "?";
}

static void emit_header(struct em *e, bool proxy)
{
	struct sbpl_buf *b = &e->b;
	const struct ir_profile *p = e->prof;
	sbpl_buf_printf(b, ";; Seatbelt profile generated by cagec %s. Do not edit: change the\n"
			   ";; .cage sources and compile again.\n",
			CAGE_VERSION_STRING);
	sbpl_buf_printf(b, ";; source fingerprint: xxh3:%016" PRIx64 "\n", e->pol->fingerprint);
	sbpl_buf_puts(b, ";; profile: ");
	sbpl_put_comment_text(b, p->name ? p->name : "main");
	sbpl_buf_printf(b, "   mode: %s\n", mode_name(p->mode));
	bool any = proxy || p->private_tmp || p->private_home;
	if (!any) {
		sbpl_buf_puts(b, ";; sandbox-exec parameters: none\n");
	} else {
		sbpl_buf_puts(b, ";; sandbox-exec parameters (all required: a missing -D breaks the\n"
				 ";; profile; cagerun always passes them):\n");
		if (proxy)
			sbpl_buf_puts(b, ";;   -D " SBPL_PARAM_PROXY_PORT
					 "=PORT   TCP port of cagerun's filtering proxy on localhost\n");
		if (p->private_tmp)
			sbpl_buf_puts(b, ";;   -D " SBPL_PARAM_PRIVATE_TMP
					 "=DIR   this run's private TMPDIR, resolved (/private/var/...)\n");
		if (p->private_home)
			sbpl_buf_puts(b, ";;   -D " SBPL_PARAM_PRIVATE_HOME
					 "=DIR  this run's private HOME, resolved\n");
	}
	if (e->pol->nparams) {
		sbpl_buf_puts(b, ";; policy params, already substituted into the rules:\n");
		for (size_t i = 0; i < e->pol->nparams; i++) {
			const struct ir_param *q = &e->pol->params[i];
			sbpl_buf_puts(b, ";;   ");
			sbpl_put_comment_text(b, q->name);
			sbpl_buf_printf(b, " : %s = ", param_type_name(q->type));
			sbpl_put_comment_text(b, q->value ? q->value : "(missing)");
			sbpl_buf_puts(b, q->from_define ? " (from -D)\n" : "\n");
		}
	}
	sbpl_buf_puts(b, "\n");
}

/* ---- the profile ---- */

static void emit_tail_dirs(struct em *e)
{
	const struct ir_profile *p = e->prof;
	if (!p->private_tmp && !p->private_home)
		return;
	sbpl_buf_puts(&e->b, ";; ---- this run's private directories (created by cagerun) ----\n");
	/* TMPDIR: build tools compile and run test binaries there (go test). */
	if (p->private_tmp) {
		sbpl_buf_puts(&e->b, "(allow");
		for (size_t i = 0; i < N(file_ops); i++)
			for (size_t k = 0; k < file_ops[i].n; k++)
				sbpl_buf_printf(&e->b, " %s", file_ops[i].ops[k]);
		sbpl_buf_puts(&e->b, "\n  (subpath (param \"" SBPL_PARAM_PRIVATE_TMP "\"))\n)\n");
	}
	if (p->private_home) {
		sbpl_buf_puts(&e->b, "(allow");
		for (size_t i = 0; i < N(file_ops); i++) {
			if (file_ops[i].bit == IR_A_EXEC)
				continue;
			for (size_t k = 0; k < file_ops[i].n; k++)
				sbpl_buf_printf(&e->b, " %s", file_ops[i].ops[k]);
		}
		sbpl_buf_puts(&e->b, "\n  (subpath (param \"" SBPL_PARAM_PRIVATE_HOME "\"))\n)\n");
	}
	sbpl_buf_puts(&e->b, "\n");
}

bool sbpl_emit(const struct ir_policy *pol, const struct ir_profile *prof, FILE *out,
	       struct arena *a, const char **err)
{
	return sbpl_emit_tagged(pol, prof, NULL, out, a, err);
}

bool sbpl_tag_ok(const char *tag)
{
	size_t n = 0;
	for (; tag[n]; n++)
		if (!((tag[n] >= 'a' && tag[n] <= 'z') || (tag[n] >= '0' && tag[n] <= '9') ||
		      tag[n] == '-'))
			return false;
	return n > 0 && n <= 64;
}

bool sbpl_emit_tagged(const struct ir_policy *pol, const struct ir_profile *prof,
		      const char *tag, FILE *out, struct arena *a, const char **err)
{
	if (tag && !sbpl_tag_ok(tag)) {
		*err = "a run tag is 1 to 64 of a-z, 0-9 and -";
		return false;
	}
	if (!prof)
		prof = pol->selected;
	if (!prof) {
		*err = "no profile selected";
		return false;
	}
	/* The policy was resolved with the other platform's stdlib modules:
	 * its rules name Linux paths, which a Seatbelt profile must not get. */
	if (pol->target != IR_TARGET_MACOS) {
		*err = arena_printf(a, "a Seatbelt profile is for macOS, and this policy was compiled "
				       "for %s (compile it with --target macos)",
				    ir_target_name(pol->target));
		return false;
	}
	if (prof->mode == IR_MODE_OFF) {
		*err = arena_printf(a, "mode off: no profile (profile '%s' runs without a sandbox; "
				       "there is nothing to write)",
				    prof->name ? prof->name : "main");
		return false;
	}
	struct em e = { .pol = pol, .prof = prof, .a = a, .err = err, .ok = true,
			.monitor = prof->mode == IR_MODE_MONITOR, .tag = tag };
	bool proxy = needs_proxy(prof);

	emit_header(&e, proxy);
	sbpl_buf_puts(&e.b, "(version 1)\n");
	if (e.monitor && tag)
		sbpl_buf_printf(&e.b, "; monitor: nothing is blocked; what enforce would block is reported\n"
				      "(allow default (with report) (with message \"%s\"))\n\n", tag);
	else if (e.monitor)
		sbpl_buf_puts(&e.b, "; monitor: nothing is blocked; what enforce would block is reported\n"
				    "(allow default (with report))\n\n");
	else if (tag)
		sbpl_buf_printf(&e.b, "(deny default (with message \"%s\"))\n\n", tag);
	else
		sbpl_buf_puts(&e.b, "(deny default)\n\n");
	sbpl_put_base(&e.b, prof->mode);
	if (has_unix_allow(prof))
		sbpl_buf_puts(&e.b, "; the policy allows unix sockets: creating AF_UNIX sockets is needed\n"
				    "(allow system-socket (socket-domain AF_UNIX))\n\n");
	emit_ancestors(&e);

	sbpl_buf_puts(&e.b, ";; ---- the policy's rules, in order (last match wins) ----\n");
	for (size_t i = 0; i < prof->nrules && e.ok; i++)
		if (prof->rules[i].effect != IR_PROTECT)
			emit_rule(&e, &prof->rules[i]);
	close_group(&e);
	sbpl_buf_puts(&e.b, "\n");

	emit_tail_dirs(&e);

	emit_move_blocks(&e);

	bool any_protect = false;
	for (size_t i = 0; i < prof->nrules && e.ok; i++) {
		if (prof->rules[i].effect != IR_PROTECT)
			continue;
		if (!any_protect)
			sbpl_buf_puts(&e.b, ";; ---- protected: last, so no allow above can re-open them ----\n");
		any_protect = true;
		emit_rule(&e, &prof->rules[i]);
	}
	close_group(&e);
	if (any_protect)
		sbpl_buf_puts(&e.b, "\n");
	if (proxy) {
		/* Last of all: the proxy is cagerun's, not a policy service, so no
		 * loopback deny or protect may cut it off. */
		sbpl_buf_puts(&e.b, ";; ---- egress: only cagerun's proxy, which filters host names ----\n"
				    "(allow network-outbound (remote tcp (string-append \"localhost:\" "
				    "(param \"" SBPL_PARAM_PROXY_PORT "\"))))\n\n");
	}
	sbpl_buf_puts(&e.b, ";; end of profile\n");

	bool ok = e.ok;
	if (ok && (e.b.oom || e.head.oom)) {
		*err = "out of memory while writing the SBPL profile";
		ok = false;
	}
	if (ok && fwrite(e.b.p, 1, e.b.len, out) != e.b.len) {
		*err = "cannot write the SBPL profile";
		ok = false;
	}
	sbpl_buf_free(&e.b);
	sbpl_buf_free(&e.head);
	return ok;
}
