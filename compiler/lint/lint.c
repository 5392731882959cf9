/*
 * lint.c - the checker's driver: the table of check ids, which profiles
 * are checked, and how a finding becomes a diagnostic (dedupe across
 * profiles, notes at the second rule, import chains).
 *
 * Rules reach several profiles (module-level items and `extends` copy them
 * into each), so one mistake would otherwise be reported once per profile;
 * findings are keyed by id and the locations of the rules involved.
 */
#include "lint_int.h"
#include "suggest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "lint_secrets.h"
#include "path.h"

static const struct lint_check checks[] = {
	{ "unsafe-order", DIAG_ERROR, "a deny that a later allow re-opens, wholly or in part" },
	{ "protect-violation", DIAG_ERROR, "an allow that overlaps a protect (the protect wins)" },
	{ "dead-rule", DIAG_WARNING, "a rule that later rules override everywhere it matches" },
	{ "redundant-rule", DIAG_WARNING, "a rule that changes nothing: another rule already decides the same" },
	{ "symlink-escape", DIAG_ERROR, "a granted path that resolves outside its tree or into a protected path" },
	{ "writable-ancestor", DIAG_WARNING, "a writable directory above a protected (error) or granted path" },
	{ "hardlink-alias", DIAG_ERROR, "a file in a granted tree that is a hard link to a protected file" },
	{ "noncanonical-path", DIAG_WARNING, "a path written with '..', '//', a trailing '/', or a macOS alias" },
	{ "runs-later-writable", DIAG_WARNING, "a grant that makes writable what std/guard keeps: what runs code later, outside the cage (git hooks, shell startup files, caches, PATH folders, ...)" },
	{ "secret-exposed", DIAG_ERROR, "a grant that reaches a known credential location" },
	{ "broad-grant", DIAG_WARNING, "read or write of all of /, ~, /Users or /home" },
	{ "broad-host", DIAG_WARNING, "'*', a public suffix, or localhost without a port" },
	{ "ip-literal", DIAG_WARNING, "a connect rule naming an IP address instead of a host" },
	{ "unknown-param", DIAG_ERROR, "a {param} or -D name the policy does not declare" },
	{ "unused-param", DIAG_WARNING, "a param nothing refers to" },
	{ "unused-import", DIAG_WARNING, "an import that contributes nothing" },
	{ "unsupported-on-target", DIAG_WARNING, "a rule a backend cannot express as written" },
	{ "linux-inexact", DIAG_ERROR, "a rule the Linux sandbox cannot enforce exactly on this machine (cagerun refuses it)" },
	{ "unused-suppression", DIAG_WARNING, "a '# cage: allow' comment that silences nothing" },
	{ "bad-suppression", DIAG_ERROR, "a '# cage: allow' comment without a known id or a reason" },
};

const struct lint_check *lint_checks(size_t *n)
{
	*n = sizeof checks / sizeof checks[0];
	return checks;
}

const struct lint_check *lint_check_find(const char *id)
{
	for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
		if (strcmp(checks[i].id, id) == 0)
			return &checks[i];
	return NULL;
}

const char *lint_check_near(const char *id, size_t len)
{
	struct suggest sg;
	suggest_init(&sg, id, len);
	for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
		suggest_offer(&sg, checks[i].id);
	return suggest_best(&sg);
}

bool lint_parse_w(const char *arg, struct lint_override *out, bool *werror, char *err,
		  size_t errsz)
{
	memset(out, 0, sizeof *out);
	if (strcmp(arg, "error") == 0) {
		*werror = true;
		return false; /* not an override; caller checks *werror */
	}
	const char *id = arg;
	char name[64];
	if (strncmp(arg, "no-", 3) == 0) {
		id = arg + 3;
		out->off = true;
		snprintf(name, sizeof name, "%s", id);
	} else {
		const char *eq = strchr(arg, '=');
		if (!eq) {
			snprintf(err, errsz, "-W wants no-ID, ID=error|warning|note|off, or error");
			return false;
		}
		snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
		const char *v = eq + 1;
		if (strcmp(v, "error") == 0)
			out->sev = DIAG_ERROR;
		else if (strcmp(v, "warning") == 0)
			out->sev = DIAG_WARNING;
		else if (strcmp(v, "note") == 0)
			out->sev = DIAG_NOTE;
		else if (strcmp(v, "off") == 0)
			out->off = true;
		else {
			snprintf(err, errsz, "-W ID= wants error, warning, note or off");
			return false;
		}
	}
	const struct lint_check *ck = lint_check_find(name);
	if (!ck) {
		const char *near = lint_check_near(name, strlen(name));
		char hint[96];
		snprintf(err, errsz, "unknown check id '%s'%s (cagec lint --list-checks shows them)",
			 name, suggest_say(near, hint, sizeof hint));
		return false;
	}
	if (strcmp(ck->id, "unknown-param") == 0) {
		snprintf(err, errsz, "unknown-param is a compile error and cannot be changed");
		return false;
	}
	out->id = ck->id;
	return true;
}

unsigned lint_targets(const struct lint_ctx *c)
{
	if (c->o->targets)
		return c->o->targets;
	return c->ir->target == IR_TARGET_LINUX ? LINT_T_LINUX : LINT_T_MACOS;
}

/* Standard library files are shown as "std/..." (portable) or
 * "linux/std/...", "macos/std/..." (platform modules; see resolve_load.c). */
bool lint_is_std(const struct src_file *f)
{
	if (!f || !f->importer)
		return false;
	const char *n = f->name;
	if (strncmp(n, "linux/", 6) == 0 || strncmp(n, "macos/", 6) == 0)
		n += 6;
	return strncmp(n, "std/", 4) == 0;
}

bool lint_is_guard(const struct src_file *f)
{
	/* the standard library's, or a user's copy that `import "std/guard"`
	 * finds first on an -I folder (docs/stdlib.md, opening a guarded file) */
	if (!f || !f->importer)
		return false;
	static const char name[] = "std/guard.cage";
	size_t n = strlen(f->name), k = sizeof name - 1;
	return n >= k && strcmp(f->name + n - k, name) == 0 &&
	       (n == k || f->name[n - k - 1] == '/');
}

/* A path lint invented for a param without a value ("/<name>...") is shown
 * as the user wrote it: "{name}...". */
static void unplaceholder(char *buf)
{
	if (buf[0] != '/' || buf[1] != '<')
		return;
	char *close = strchr(buf, '>');
	if (!close)
		return;
	buf[0] = '{';
	memmove(buf + 1, buf + 2, (size_t)(close - buf - 2));
	close[-1] = '}';
	memmove(close, close + 1, strlen(close + 1) + 1);
}

void lint_show_path(const struct ir_path *like, const char *path, char *buf, size_t size)
{
	pat_display(like, path, buf, size);
	unplaceholder(buf);
}

void lint_target_text(const struct ir_rule *r, char *buf, size_t size)
{
	/* paths through lint_show_path: it shows a missing param's placeholder
	 * as {name} */
	if (r->tkind == IR_T_PATH || r->tkind == IR_T_UNIX)
		lint_show_path(&r->t.path, r->t.path.text, buf, size);
	else
		ir_target_display(r, buf, size);
}

/* In the policy's own words: `read` stands for contents (with or without
 * metadata), `write` for modifying (with or without create and delete). */
void lint_access_text(uint32_t a, char *buf, size_t size)
{
	static const struct {
		uint32_t bit, unless;
		const char *word;
	} words[] = {
		{ IR_A_READ, 0, "read" },
		{ IR_A_READ_META, IR_A_READ, "read-metadata" },
		{ IR_A_WRITE, 0, "write" },
		{ IR_A_CREATE, IR_A_WRITE, "create" },
		{ IR_A_DELETE, IR_A_WRITE, "delete" },
		{ IR_A_EXEC, 0, "exec" },
		{ IR_A_CONNECT, 0, "connect" },
		{ IR_A_UNIX, 0, "unix" },
		{ IR_A_MACH, 0, "mach" },
	};
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		if (!(a & words[i].bit) || (a & words[i].unless))
			continue;
		int w = snprintf(buf + n, size - n, "%s%s", n ? " " : "", words[i].word);
		if (w < 0 || (size_t)w >= size - n)
			break;
		n += (size_t)w;
	}
}

/* "allow read ~/src" for messages. */
void lint_rule_text(const struct ir_rule *r, char *buf, size_t size)
{
	char acc[128], t[1024];
	lint_access_text(r->access, acc, sizeof acc);
	lint_target_text(r, t, sizeof t);
	snprintf(buf, size, "%s %s %s", ir_effect_name(r->effect), acc, t);
}

void lint_where(const struct lint_ctx *c, const struct ir_rule *at, const struct ir_rule *r,
		char *buf, size_t size)
{
	(void)c;
	if (at && r->loc.file == at->loc.file)
		snprintf(buf, size, "line %u", r->loc.line);
	else if (r->loc.file)
		snprintf(buf, size, "%s:%u", r->loc.file->name, r->loc.line);
	else
		snprintf(buf, size, "a rule");
}

/* ---- dedupe ---- */

static bool seen_add(struct lint_ctx *c, uint64_t h)
{
	if (h == 0)
		h = 1;
	if ((c->nseen + 1) * 2 > c->capseen) {
		size_t cap = c->capseen ? c->capseen * 2 : 256;
		uint64_t *n = calloc(cap, sizeof *n);
		if (!n)
			return true; /* out of memory: report again rather than lose it */
		for (size_t i = 0; i < c->capseen; i++)
			if (c->seen[i]) {
				size_t p = c->seen[i] & (cap - 1);
				while (n[p])
					p = (p + 1) & (cap - 1);
				n[p] = c->seen[i];
			}
		free(c->seen);
		c->seen = n;
		c->capseen = cap;
	}
	size_t p = h & (c->capseen - 1);
	while (c->seen[p]) {
		if (c->seen[p] == h)
			return false;
		p = (p + 1) & (c->capseen - 1);
	}
	c->seen[p] = h;
	c->nseen++;
	return true;
}

static uint64_t key_of(const char *id, const struct loc *a, const struct loc *b)
{
	struct {
		char id[32];
		int fa, fb;
		uint32_t oa, ob, la, lb;
	} k;
	memset(&k, 0, sizeof k);
	snprintf(k.id, sizeof k.id, "%s", id);
	k.fa = a->file ? a->file->id : -1;
	k.oa = a->off;
	k.la = a->line;
	if (b) {
		k.fb = b->file ? b->file->id : -1;
		k.ob = b->off;
		k.lb = b->line;
	}
	return XXH3_64bits(&k, sizeof k);
}

static void anchor_add(struct lint_ctx *c, struct diag *d, const struct src_file *f,
		       uint32_t line, uint32_t line2)
{
	if (c->nanchors == c->capanchors) {
		size_t cap = c->capanchors ? c->capanchors * 2 : 64;
		struct lint_anchor *n = realloc(c->anchors, cap * sizeof *n);
		if (!n)
			return;
		c->anchors = n;
		c->capanchors = cap;
	}
	c->anchors[c->nanchors++] = (struct lint_anchor){ d, f, line, line2 };
}

static enum diag_sev default_sev(const char *id)
{
	const struct lint_check *ck = lint_check_find(id);
	return ck ? ck->sev : DIAG_WARNING;
}

static struct diag *vreport(struct lint_ctx *c, const char *id, enum diag_sev sev,
			    struct loc loc, const char *fmt, va_list ap)
{
	char msg[4096];
	vsnprintf(msg, sizeof msg, fmt, ap);
	struct diag *d = diag_add(c->dl, sev, loc, id, "%s", msg);
	if (loc.file)
		diag_add_import_chain(c->dl, d, loc.file);
	return d;
}

/* A finding at rule `at` unless `key` was reported already. */
static struct diag *vreport_at(struct lint_ctx *c, const char *id, const struct ir_rule *at,
			       uint64_t key, const char *fmt, va_list ap)
{
	if (!seen_add(c, key))
		return NULL;
	struct diag *d = vreport(c, id, default_sev(id), at->loc, fmt, ap);
	anchor_add(c, d, at->loc.file, at->rule_loc.line, at->loc.line);
	return d;
}

struct diag *lint_report(struct lint_ctx *c, const char *id, const struct ir_rule *at,
			 const struct ir_rule *other, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct diag *d = vreport_at(c, id, at, key_of(id, &at->loc, other ? &other->loc : NULL),
				    fmt, ap);
	va_end(ap);
	return d;
}

struct diag *lint_report_each(struct lint_ctx *c, const char *id, const struct ir_rule *at,
			      const struct ir_rule *other, const char *what, const char *fmt, ...)
{
	uint64_t k = key_of(id, &at->loc, other ? &other->loc : NULL);
	va_list ap;
	va_start(ap, fmt);
	struct diag *d = vreport_at(c, id, at, (k ^ XXH3_64bits(what, strlen(what))) | 1, fmt, ap);
	va_end(ap);
	return d;
}

struct diag *lint_report_loc(struct lint_ctx *c, const char *id, struct loc loc,
			     const char *fmt, ...)
{
	if (!seen_add(c, key_of(id, &loc, NULL)))
		return NULL;
	va_list ap;
	va_start(ap, fmt);
	struct diag *d = vreport(c, id, default_sev(id), loc, fmt, ap);
	va_end(ap);
	anchor_add(c, d, loc.file, loc.line, loc.line);
	return d;
}

void lint_note_rule(struct lint_ctx *c, struct diag *d, const struct ir_rule *r,
		    const char *fmt, ...)
{
	if (!d)
		return;
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	diag_note(c->dl, d, r->loc, "%s", msg);
	if (r->loc.file && r->loc.file != d->loc.file)
		diag_add_import_chain(c->dl, d, r->loc.file);
}

/* ---- driver ---- */

static bool profile_checked(const struct lint_ctx *c, const struct ir_profile *p)
{
	if (p == c->ir->selected)
		return true;
	return p->loc.file == c->main;
}

/* Module-level rules come first in every profile; they are all a profile
 * made of them alone would hold. */
static size_t module_prefix(const struct ir_profile *p)
{
	size_t m = 0;
	while (m < p->nrules && p->rules[m].layer == NULL)
		m++;
	return m;
}

void lint_policy(struct cage_policy *pol, const struct lint_opts *o)
{
	struct lint_ctx c = { .pol = pol, .ir = pol->ir, .o = o, .dl = &pol->diags,
			      .a = &pol->arena };
	if (!pol->ir || !pol->ir->selected || pol->diags.errors)
		return;
	c.main = pol->ir->files[0];
	size_t ns;
	const struct lint_secret *sec = lint_secrets(&ns);
	c.secrets = arena_alloc(c.a, (ns + 1) * sizeof *c.secrets);
	for (size_t i = 0; i < ns; i++) {
		if (sec[i].pattern[0] == '~' && !c.ir->home)
			continue;
		struct lint_builtin *b = &c.secrets[c.nsecrets++];
		b->pattern = sec[i].pattern;
		b->what = sec[i].what;
		if (sec[i].pattern[0] == '~') {
			b->p.text = arena_printf(c.a, "%s%s", c.ir->home, sec[i].pattern + 1);
			b->p.home_len = (uint32_t)strlen(c.ir->home);
		} else {
			b->p.text = sec[i].pattern;
		}
		path_classify(&b->p);
	}
	bool module_done = false;
	for (size_t i = 0; i < c.ir->nprofiles; i++) {
		const struct ir_profile *p = c.ir->profiles[i];
		if (!profile_checked(&c, p))
			continue;
		c.prof = p;
		lint_ix_build(&c);
		lint_check_order(&c);
		if (!module_done) {
			/* dead/redundant of module-level rules: decided in the
			 * module-level prefix, which every profile starts with */
			lint_check_dead(&c, module_prefix(p), false);
			module_done = true;
		}
		lint_check_dead(&c, p->nrules, true);
		lint_check_paths(&c);
		lint_check_runs_later(&c);
		lint_check_hosts(&c);
		lint_check_target(&c);
		lint_check_linux_plan(&c);
		if (o->resolve || (o->root && o->root[0]))
			lint_check_fs(&c);
		lint_ix_free(&c);
	}
	c.prof = NULL;
	lint_check_module(&c);
	lint_group_findings(&c);
	lint_apply_controls(&c);
	diag_sort(c.dl);
	free(c.cand);
	free(c.seen);
	free(c.anchors);
}
