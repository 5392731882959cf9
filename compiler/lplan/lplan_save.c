/*
 * lplan_save.c - a plan to and from its artifact (compiler/format/pf.h,
 * docs/plan-format.md).
 *
 * The artifact names rules by their index in the selected profile; the
 * key's profile digest covers every field of those rules the planner
 * reads, so a launcher that finds an artifact under the key of the
 * profile it compiled binds the same rules the plan was built from.
 * Binding re-checks what the plan's users rely on (nodes sorted, each
 * parent the nearest ancestor, every index of the right kind) rather
 * than asserting it: the bytes came from a file.
 */
#include "lplan_int.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "hashfeed.h"
#include "path.h"

/* ---- the key ---- */

/* The digest's input (hashfeed.h), with the last location's file and its
 * name's length: rules share a few files. */
struct dg {
	struct hashfeed h;
	const struct src_file *file;
	size_t file_len;
};

static void dg_path(struct dg *d, const struct ir_path *p)
{
	hf_str(&d->h, p->text);
	hf_u64(&d->h, (uint64_t)p->home_len << 32 | (uint64_t)p->kind);
}

static void dg_loc(struct dg *d, const struct loc *l)
{
	if (!l->file || !l->file->name) {
		hf_str(&d->h, "");
	} else {
		if (l->file != d->file) {
			d->file = l->file;
			d->file_len = strlen(l->file->name);
		}
		hf_bytes(&d->h, l->file->name, d->file_len + 1);
	}
	hf_u64(&d->h, (uint64_t)l->line << 32 | l->col);
	hf_u64(&d->h, (uint64_t)l->off << 32 | l->len);
}

static void dg_rule(struct dg *d, const struct ir_rule *r)
{
	hf_u64(&d->h, (uint64_t)r->effect << 48 | (uint64_t)r->tkind << 40 | r->access);
	switch (r->tkind) {
	case IR_T_PATH:
	case IR_T_UNIX:
		dg_path(d, &r->t.path);
		break;
	case IR_T_HOST:
		hf_u64(&d->h, r->t.host.kind);
		hf_str(&d->h, r->t.host.name);
		hf_bytes(&d->h, r->t.host.addr, sizeof r->t.host.addr);
		hf_u64(&d->h, r->t.host.nports);
		for (size_t k = 0; k < r->t.host.nports; k++)
			hf_u64(&d->h, (uint64_t)r->t.host.ports[k].lo << 16 | r->t.host.ports[k].hi);
		break;
	case IR_T_MACH:
		hf_str(&d->h, r->t.mach.name);
		hf_u64(&d->h, r->t.mach.prefix);
		break;
	}
	hf_u64(&d->h, r->nexcept);
	for (uint32_t k = 0; k < r->nexcept; k++) {
		dg_path(d, &r->except[k].path);
		hf_str(&d->h, r->except[k].written);
		dg_loc(d, &r->except[k].loc);
	}
	hf_str(&d->h, r->written);
	dg_loc(d, &r->loc);
	dg_loc(d, &r->rule_loc);
	hf_str(&d->h, r->layer);
}

void lplan_profile_digest(const struct ir_profile *p, uint64_t *lo, uint64_t *hi)
{
	struct dg d = { .file = NULL };
	if (!hf_init(&d.h, true)) {
		/* No state: a digest no profile has, so nothing is reused. */
		*lo = *hi = 0;
		return;
	}
	hf_str(&d.h, p->name);
	hf_u64(&d.h, p->nrules);
	for (size_t i = 0; i < p->nrules; i++)
		dg_rule(&d, &p->rules[i]);
	XXH128_hash_t h = hf_digest128(&d.h);
	*lo = h.low64;
	*hi = h.high64;
}

void lplan_key(struct arena *a, const struct ir_policy *pol, const struct ir_profile *p,
	       uint32_t uid, const char *cwd, struct pf_key *k)
{
	memset(k, 0, sizeof *k);
	k->fingerprint = pol->fingerprint;
	lplan_profile_digest(p, &k->digest_lo, &k->digest_hi);
	k->uid = uid;
	k->home = pol->home ? pol->home : "";
	k->cwd = cwd;
	k->profile = p->name ? p->name : "";
	k->params = arena_alloc(a, (pol->nparams + 1) * sizeof *k->params);
	for (size_t i = 0; i < pol->nparams; i++) {
		k->params[i].name = pol->params[i].name;
		k->params[i].value = pol->params[i].value ? pol->params[i].value : "";
	}
	k->nparams = pol->nparams;
}

/* ---- plan to artifact ---- */

/* The profile index of a rule the plan names: the rule itself, or the
 * rule a resolved copy was made from (same target span and effect). */
static uint32_t orig_index(const struct ir_profile *p, const struct ir_rule *r)
{
	if (!r)
		return PF_NONE;
	if (r >= p->rules && r < p->rules + p->nrules)
		return (uint32_t)(r - p->rules);
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *o = &p->rules[i];
		if (o->loc.file == r->loc.file && o->loc.off == r->loc.off &&
		    o->effect == r->effect && o->access == r->access && o->tkind == r->tkind)
			return (uint32_t)i;
	}
	return PF_NONE;
}

static struct pf_rule *rules_out(struct arena *a, const struct ir_profile *p,
				 const struct ir_profile *rp, size_t *n)
{
	struct pf_rule *v = arena_alloc(a, (rp->nrules + 1) * sizeof *v);
	for (size_t i = 0; i < rp->nrules; i++) {
		const struct ir_rule *r = &rp->rules[i];
		v[i].orig = orig_index(p, r);
		v[i].text = r->t.path.text;
		v[i].nexcept = r->nexcept;
		v[i].except = arena_alloc(a, (r->nexcept + 1) * sizeof *v[i].except);
		for (uint32_t k = 0; k < r->nexcept; k++)
			v[i].except[k] = r->except[k].path.text;
	}
	*n = rp->nrules;
	return v;
}

/* The lstat record of `path`, or NULL. */
static const struct pf_dep *lstat_of(const struct pf_dep *v, size_t n, const size_t *slots,
				     size_t nslots, const char *path, size_t len)
{
	size_t h = XXH3_64bits(path, len) & (nslots - 1);
	for (; slots[h]; h = (h + 1) & (nslots - 1)) {
		const struct pf_dep *d = &v[slots[h] - 1];
		if (strlen(d->path) == len && !memcmp(d->path, path, len))
			return d;
	}
	(void)n;
	return NULL;
}

/* The dependencies to keep. A stat of a path whose every directory above
 * and itself were lstat'ed in the same build, none a symlink, is that
 * last lstat again (nothing on its way can be followed), and re-observing
 * those lstats decides whether it still is: it is left out, which takes
 * about 40% of the stat calls out of every reuse. */
static struct pf_dep *deps_kept(struct arena *a, const struct lplan *plan, size_t *nout)
{
	size_t n;
	bool unstable;
	const struct pf_dep *v = lplan_deps(plan, &n, &unstable);
	size_t nslots = 16;
	while (nslots < 2 * n + 2)
		nslots *= 2;
	size_t *slots = arena_alloc(a, nslots * sizeof *slots);
	for (size_t i = 0; i < n; i++) {
		if (v[i].kind != PF_DEP_LSTAT)
			continue;
		size_t h = XXH3_64bits(v[i].path, strlen(v[i].path)) & (nslots - 1);
		while (slots[h])
			h = (h + 1) & (nslots - 1);
		slots[h] = i + 1;
	}
	struct pf_dep *out = arena_alloc(a, (n + 1) * sizeof *out);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct pf_dep *d = &v[i];
		bool same = d->kind == PF_DEP_STAT;
		for (size_t k = 1; same && d->path[k - 1]; k++) {
			if (d->path[k] != '/' && d->path[k] != '\0')
				continue;
			const struct pf_dep *l = lstat_of(v, n, slots, nslots, d->path, k);
			bool last = d->path[k] == '\0';
			same = l && (last ? l->err == d->err : l->err == 0) &&
			       (l->err || !S_ISLNK(l->mode));
			if (same && last && !l->err)
				same = l->dev == d->dev && l->ino == d->ino && l->mode == d->mode;
		}
		if (!same)
			out[m++] = *d;
	}
	*nout = m;
	return out;
}

void lplan_to_pf(struct arena *a, const struct lplan *plan, const struct ir_profile *p,
		 struct pf_plan *out)
{
	memset(out, 0, sizeof *out);
	out->nrules = (uint32_t)p->nrules;
	out->nodes = arena_alloc(a, (plan->nnodes + 1) * sizeof *out->nodes);
	for (size_t i = 0; i < plan->nnodes; i++) {
		const struct lplan_node *n = &plan->nodes[i];
		struct pf_node *o = &out->nodes[i];
		o->path = n->path;
		o->flags = (uint8_t)((n->exists ? PF_N_EXISTS : 0) | (n->is_dir ? PF_N_DIR : 0) |
				     (n->subtree ? PF_N_SUBTREE : 0) | (n->created ? PF_N_CREATED : 0));
		o->mount = n->mount;
		o->grant = n->grant;
		o->ll = n->ll;
		o->block = n->block;
		o->rule = orig_index(p, n->rule);
		o->parent = n->parent == SIZE_MAX ? PF_NONE : (uint32_t)n->parent;
	}
	out->nnodes = plan->nnodes;
	out->mkdirs = (const char **)plan->mkdirs;
	out->nmkdirs = plan->nmkdirs;
	out->notes = arena_alloc(a, (plan->nnotes + 1) * sizeof *out->notes);
	for (size_t i = 0; i < plan->nnotes; i++) {
		out->notes[i].rule = orig_index(p, plan->notes[i].rule);
		out->notes[i].text = plan->notes[i].text;
	}
	out->nnotes = plan->nnotes;
	out->ports = arena_alloc(a, (plan->nports + 1) * sizeof *out->ports);
	for (size_t i = 0; i < plan->nports; i++) {
		out->ports[i].port = plan->ports[i].port;
		out->ports[i].rule = orig_index(p, plan->ports[i].rule);
	}
	out->nports = plan->nports;
	out->guards = arena_alloc(a, (plan->nguards + 1) * sizeof *out->guards);
	for (size_t i = 0; i < plan->nguards; i++) {
		out->guards[i].pattern = plan->guards[i].pat.text;
		out->guards[i].rule = orig_index(p, plan->guards[i].rule);
	}
	out->nguards = plan->nguards;
	out->gprof = rules_out(a, p, &plan->gprof, &out->ngprof);
	out->rprof = rules_out(a, p, &plan->rprof, &out->nrprof);
	out->ngrants = plan->ngrants;
	out->nmounts = plan->nmounts;
	out->deps = deps_kept(a, plan, &out->ndeps);
}

void lplan_artifact(struct arena *a, const struct lplan *plan, const struct ir_policy *pol,
		    const struct ir_profile *p, uint32_t uid, const char *cwd, struct pf_plan *out)
{
	assert(!plan->no_rprof);
	lplan_to_pf(a, plan, p, out);
	lplan_key(a, pol, p, uid, cwd, &out->key);
}

/* ---- artifact to plan ---- */

static bool bad(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static bool bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return false;
}

static const struct ir_rule *rule_at(const struct ir_profile *p, uint32_t i)
{
	return i == PF_NONE ? NULL : &p->rules[i];
}

/* Absolute and normalised, as every path the planner makes is: no empty,
 * "." or ".." component, no trailing '/' (but "/" itself). Only what
 * follows each '/' needs a look; the bytes of a name are skipped in a
 * tight loop ('.' and '\0', which end or matter, are below '/'). */
static bool normal(const char *p)
{
	if (p[0] != '/')
		return false;
	if (!p[1])
		return true;
	const unsigned char *c = (const unsigned char *)p;
	for (;;) {
		const unsigned char *n = c + 1; /* the component after the '/' at c */
		if (n[0] == '/' || n[0] == '\0')
			return false;
		if (n[0] == '.') {
			size_t d = n[1] == '.' ? 2 : 1;
			if (n[d] == '/' || n[d] == '\0')
				return false;
		}
		for (c = n + 1;; c++) { /* on to the next '/', or the end */
			while (*c > '/')
				c++;
			if (*c == '/')
				break;
			if (*c == '\0')
				return true;
		}
	}
}

/* The path text of an artifact, borrowed: pf_read copied it into the
 * arena the plan lives in, as the nodes' paths are. */
static bool classify(struct ir_path *pp, const char *text)
{
	memset(pp, 0, sizeof *pp);
	if (!normal(text))
		return false;
	pp->text = text;
	path_classify(pp);
	return true;
}

/* A resolved text that is its rule's own (most are: nothing on the way
 * was a symlink, no glob was expanded) takes the classification the
 * compiler gave that text, which path_normalize made: the file's bytes
 * are checked by being equal to it, not walked again. */
static bool classify_as(const struct ir_path *compiled, struct ir_path *pp, const char *text)
{
	if (strcmp(text, compiled->text) != 0)
		return classify(pp, text);
	*pp = *compiled;
	pp->home_len = 0;
	pp->text = text;
	assert(normal(text) && pp->len == strlen(text));
	return true;
}

static bool rules_in(struct arena *a, const struct ir_profile *p, const struct pf_rule *v,
		     size_t n, struct ir_profile *out, char *err, size_t errlen)
{
	/* each element is assigned whole below; only the spare one is zeroed */
	struct ir_rule *rs = arena_alloc_raw(a, (n + 1) * sizeof *rs);
	memset(&rs[n], 0, sizeof *rs);
	for (size_t i = 0; i < n; i++) {
		const struct ir_rule *o = &p->rules[v[i].orig];
		if (o->tkind != IR_T_PATH)
			return bad(err, errlen, "resolved rule %zu names a rule that is not a path rule", i);
		if (v[i].nexcept && v[i].nexcept != o->nexcept)
			return bad(err, errlen, "resolved rule %zu has %u excepts, its rule %u",
				   i, v[i].nexcept, o->nexcept);
		rs[i] = *o;
		rs[i].index = (uint32_t)i;
		if (!classify_as(&o->t.path, &rs[i].t.path, v[i].text))
			return bad(err, errlen, "resolved rule %zu: path is not absolute and normalised", i);
		rs[i].except = NULL;
		rs[i].nexcept = v[i].nexcept;
		if (v[i].nexcept) {
			struct ir_except *e = arena_alloc(a, v[i].nexcept * sizeof *e);
			for (uint32_t k = 0; k < v[i].nexcept; k++) {
				e[k] = o->except[k];
				if (!classify_as(&o->except[k].path, &e[k].path, v[i].except[k]))
					return bad(err, errlen, "resolved rule %zu: except is not absolute and normalised", i);
			}
			rs[i].except = e;
		}
	}
	memset(out, 0, sizeof *out);
	out->name = p->name;
	out->rules = rs;
	out->nrules = n;
	return true;
}

bool lplan_from_pf(struct arena *a, const struct pf_plan *in, const struct ir_profile *p,
		   bool with_rprof, struct lplan *plan, char *err, size_t errlen)
{
	memset(plan, 0, sizeof *plan);
	if (in->nrules != p->nrules)
		return bad(err, errlen, "the plan was built for %u rules, the profile has %zu",
			   in->nrules, p->nrules);
	/* every field of every node is set below (parent by
	 * lplan_link_parents); only the spare one is zeroed */
	struct lplan_node *nodes = arena_alloc_raw(a, (in->nnodes + 1) * sizeof *nodes);
	memset(&nodes[in->nnodes], 0, sizeof *nodes);
	for (size_t i = 0; i < in->nnodes; i++) {
		const struct pf_node *o = &in->nodes[i];
		struct lplan_node *n = &nodes[i];
		if (!normal(o->path))
			return bad(err, errlen, "node %zu: path is not absolute and normalised", i);
		if (i && lplan_path_cmp(in->nodes[i - 1].path, o->path) >= 0)
			return bad(err, errlen, "node %zu: nodes are not in order", i);
		n->path = o->path;
		n->exists = o->flags & PF_N_EXISTS;
		n->is_dir = o->flags & PF_N_DIR;
		n->subtree = o->flags & PF_N_SUBTREE;
		n->created = o->flags & PF_N_CREATED;
		n->grant = o->grant;
		n->mount = o->mount;
		n->ll = o->ll;
		n->block = o->block;
		n->rule = rule_at(p, o->rule);
	}
	plan->nodes = nodes;
	plan->nnodes = in->nnodes;
	/* The users of the plan walk parent links: recompute them and
	 * refuse a file whose links say otherwise. */
	lplan_link_parents(a, plan);
	for (size_t i = 0; i < in->nnodes; i++) {
		size_t want = in->nodes[i].parent == PF_NONE ? SIZE_MAX : in->nodes[i].parent;
		if (nodes[i].parent != want)
			return bad(err, errlen, "node %zu: parent is not its nearest ancestor", i);
	}
	plan->mkdirs = arena_alloc(a, (in->nmkdirs + 1) * sizeof *plan->mkdirs);
	for (size_t i = 0; i < in->nmkdirs; i++) {
		if (!normal(in->mkdirs[i]))
			return bad(err, errlen, "directory to create %zu is not absolute and normalised", i);
		plan->mkdirs[i] = in->mkdirs[i];
	}
	plan->nmkdirs = in->nmkdirs;
	plan->notes = arena_alloc(a, (in->nnotes + 1) * sizeof *plan->notes);
	for (size_t i = 0; i < in->nnotes; i++) {
		plan->notes[i].rule = rule_at(p, in->notes[i].rule);
		plan->notes[i].text = in->notes[i].text;
	}
	plan->nnotes = in->nnotes;
	plan->ports = arena_alloc(a, (in->nports + 1) * sizeof *plan->ports);
	for (size_t i = 0; i < in->nports; i++) {
		plan->ports[i].port = in->ports[i].port;
		plan->ports[i].rule = rule_at(p, in->ports[i].rule);
	}
	plan->nports = in->nports;
	plan->guards = arena_alloc(a, (in->nguards + 1) * sizeof *plan->guards);
	for (size_t i = 0; i < in->nguards; i++) {
		if (!classify(&plan->guards[i].pat, in->guards[i].pattern))
			return bad(err, errlen, "guard %zu: pattern is not absolute and normalised", i);
		plan->guards[i].rule = rule_at(p, in->guards[i].rule);
	}
	plan->nguards = in->nguards;
	if (!rules_in(a, p, in->gprof, in->ngprof, &plan->gprof, err, errlen) ||
	    (with_rprof && !rules_in(a, p, in->rprof, in->nrprof, &plan->rprof, err, errlen)))
		return false;
	if (!with_rprof) {
		plan->rprof.name = p->name;
		plan->no_rprof = true;
	}
	plan->ngrants = in->ngrants;
	plan->nmounts = in->nmounts;
	plan->rcache = lplan_rcache_new(a);
	lplan_index_nodes(a, plan);
	return true;
}

/* ---- the "plan" backend ---- */

bool lplan_emit_artifact(const struct ir_policy *pol, const struct ir_profile *prof, FILE *out,
			 struct arena *a, const char **err)
{
	struct lplan plan;
	if (!lplan_build(a, prof, &plan, err))
		return false;
	if (plan.nerrors) {
		*err = arena_printf(a, "%zu rule%s cannot be enforced exactly on Linux here (see "
				       "--emit linux); cagerun refuses this policy",
				    plan.nerrors, plan.nerrors == 1 ? "" : "s");
		return false;
	}
	struct lplan_widening *w;
	size_t nw;
	lplan_check(a, &plan, &w, &nw, NULL);
	if (nw) {
		*err = arena_printf(a, "the plan is wider than the policy at %zu point%s (see --emit "
				       "linux); no artifact is written",
				    nw, nw == 1 ? "" : "s");
		return false;
	}
	size_t ndeps;
	bool unstable;
	lplan_deps(&plan, &ndeps, &unstable);
	if (unstable) {
		*err = "files the plan depends on changed while it was built; try again";
		return false;
	}
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd)) {
		*err = arena_printf(a, "getcwd: %s", strerror(errno));
		return false;
	}
	struct pf_plan pf;
	lplan_artifact(a, &plan, pol, prof, (uint32_t)geteuid(), cwd, &pf);
	uint8_t *b;
	size_t n;
	pf_write(a, &pf, &b, &n);
	if (fwrite(b, 1, n, out) != n) {
		*err = "cannot write the plan";
		return false;
	}
	return true;
}
