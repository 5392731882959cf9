/*
 * lplan.c - builds the Linux plan (see lplan.h) from a profile.
 *
 * The resolved rules (lplan_resolve.c) name a set of anchor paths: the
 * nodes. Between two nodes the policy's answer cannot change, so it is
 * enough to ask the IR evaluator, for each node, what it allows on the node
 * itself and strictly below it. Walking the nodes from the root down, each
 * node gets the Landlock rights it needs that its ancestors did not grant,
 * and where the ancestors grant more than the policy allows below it, a
 * mount takes the excess away: read-only for writes, no-exec for
 * execution, a hiding placeholder for reads. What neither can express is an
 * error; what is enforced more narrowly than written is a note.
 */
#include "lplan_int.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void add_msg(struct arena *a, struct lplan_msg **v, size_t *n, const struct ir_rule *r,
		    const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof buf, fmt, ap);
	/* One message per rule and text: expansions repeat themselves. */
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].rule && r && (*v)[i].rule->loc.off == r->loc.off &&
		    (*v)[i].rule->loc.file == r->loc.file && !strcmp((*v)[i].text, buf))
			return;
	struct lplan_msg *nv = arena_alloc(a, (*n + 1) * sizeof *nv);
	if (*n)
		memcpy(nv, *v, *n * sizeof *nv);
	nv[*n].rule = r;
	nv[*n].text = arena_strdup(a, buf);
	*v = nv;
	(*n)++;
}

void lplan_error(struct arena *a, struct lplan *plan, const struct ir_rule *r, const char *fmt,
		 ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_msg(a, &plan->errors, &plan->nerrors, r, fmt, ap);
	va_end(ap);
}

void lplan_note(struct arena *a, struct lplan *plan, const struct ir_rule *r, const char *fmt,
		...)
{
	va_list ap;
	va_start(ap, fmt);
	add_msg(a, &plan->notes, &plan->nnotes, r, fmt, ap);
	va_end(ap);
}

void lplan_rule_text(const struct ir_rule *r, char *buf, size_t size)
{
	char acc[128], tgt[512];
	ir_access_names(r->access, acc, sizeof acc);
	ir_target_display(r, tgt, sizeof tgt);
	if (r->loc.file)
		snprintf(buf, size, "%s:%u:%u: %s %s %s", r->loc.file->name, r->loc.line,
			 r->loc.col, ir_effect_name(r->effect), acc, tgt);
	else
		snprintf(buf, size, "%s %s %s", ir_effect_name(r->effect), acc, tgt);
}

/* IR accesses to the Landlock rights that carry them. */
static uint64_t rights_of(uint32_t acc)
{
	uint64_t r = 0;
	if (acc & IR_A_READ)
		r |= LP_READ | LP_IOCTL_DEV;
	if (acc & IR_A_WRITE)
		r |= LP_WRITE_FILE | LP_TRUNCATE | LP_IOCTL_DEV;
	if (acc & IR_A_CREATE)
		r |= LP_MAKE | LP_REFER;
	if (acc & IR_A_DELETE)
		r |= LP_REMOVE | LP_REFER;
	if (acc & IR_A_EXEC)
		r |= LP_EXECUTE;
	return r;
}

static const uint32_t probe_bits[] = { IR_A_READ, IR_A_WRITE, IR_A_CREATE, IR_A_DELETE,
				       IR_A_EXEC };

/* Whether a glob of the patterns matches `path`: elsewhere they and the
 * rules with globs expanded say the same (an expansion is a match). */
static bool glob_matches(const struct lplan *plan, const char *path)
{
	for (size_t i = 0; i < plan->gprof.nrules; i++) {
		const struct ir_path *pp = &plan->gprof.rules[i].t.path;
		if (pp->kind == IR_PAT_GLOB && lplan_may_match(pp, path) && ir_path_match(pp, path))
			return true;
	}
	return false;
}

/* What the resolved rules allow at `path`, and the rule deciding the
 * first access in `interest` that is denied (for messages). With `later`,
 * about a name made later (lplan_later_pick). */
static uint32_t allowed_at(const struct ir_profile *dp, const struct lplan_cand *cand,
			   const struct lplan *later, const char *path, uint32_t interest,
			   const struct ir_rule **denier)
{
	uint32_t acc = 0, all = 0;
	for (size_t i = 0; i < sizeof probe_bits / sizeof *probe_bits; i++)
		all |= probe_bits[i];
	struct ir_verdict vs[6], gs[6];
	ir_eval_path_among(dp, cand->v, cand->n, all, path, vs);
#ifndef NDEBUG
	/* The candidates are every rule that can match here: the whole
	 * profile gives the same answer, rule for rule. */
	struct ir_verdict full[6];
	ir_eval_path_bits(dp, all, path, full);
	for (size_t i = 0; i < sizeof probe_bits / sizeof *probe_bits; i++) {
		unsigned k = (unsigned)__builtin_ctz(probe_bits[i]);
		assert(vs[k].allowed == full[k].allowed && vs[k].rule == full[k].rule &&
		       vs[k].pin == full[k].pin);
	}
#endif
	if (later && !glob_matches(later, path))
		later = NULL; /* the patterns and the expanded rules agree */
	if (later)
		ir_eval_path_bits(&later->gprof, all, path, gs);
	for (size_t i = 0; i < sizeof probe_bits / sizeof *probe_bits; i++) {
		unsigned k = (unsigned)__builtin_ctz(probe_bits[i]);
		const struct ir_verdict v = later ? *lplan_later_pick(&gs[k], &vs[k]) : vs[k];
		if (v.allowed)
			acc |= probe_bits[i];
		else if (denier && !*denier && (interest & probe_bits[i]) && v.rule)
			*denier = v.rule;
	}
	return acc;
}

static const char *below_probe(struct arena *a, const char *path)
{
	/* A name no rule anchors: the policy's answer for "anything else
	 * below this node". */
	return lplan_join(a, path, "\x01", 1);
}

static bool is_ancestor(const char *anc, const char *path)
{
	size_t n = strlen(anc);
	if (n == 1)
		return path[0] == '/' && path[1] != '\0';
	return strncmp(anc, path, n) == 0 && path[n] == '/';
}

bool lplan_at_or_above(const char *anc, const char *path)
{
	return !strcmp(anc, path) || is_ancestor(anc, path);
}

/* How many leading bytes x and y share, 8 at a time within the shorter
 * (sorted paths share long prefixes: the order check compares each node
 * with the one before it). */
static size_t common_prefix(const char *x, const char *y)
{
	size_t lx = strlen(x), ly = strlen(y), m = lx < ly ? lx : ly, i = 0;
	for (uint64_t a, b; m - i >= 8; i += 8) {
		memcpy(&a, x + i, sizeof a);
		memcpy(&b, y + i, sizeof b);
		if (a != b)
			break;
	}
	while (i < m && x[i] == y[i])
		i++;
	return i;
}

int lplan_path_cmp(const char *x, const char *y)
{
	/* Component by component: '/' ends a component, so it sorts before
	 * every byte a name can hold. Bytewise, `~/.claude` < `~/.claude.json`
	 * < `~/.claude/settings.json` ('.' is below '/'), and a node's
	 * descendants would not follow it without a break. */
	size_t same = common_prefix(x, y);
	x += same;
	y += same;
	for (;; x++, y++) {
		unsigned cx = (unsigned char)*x, cy = (unsigned char)*y;
		if (cx != cy) {
			unsigned kx = cx == '/' ? 1 : cx ? cx + 1 : 0;
			unsigned ky = cy == '/' ? 1 : cy ? cy + 1 : 0;
			return kx < ky ? -1 : 1;
		}
		if (!cx)
			return 0;
	}
}

static int node_cmp(const void *x, const void *y)
{
	return lplan_path_cmp(((const struct lplan_node *)x)->path,
			      ((const struct lplan_node *)y)->path);
}

/* The order link_parents and the walk from the root down rely on: strictly
 * increasing by components, so that every node's descendants follow it
 * without a break. */
static void assert_sorted(const struct lplan *plan)
{
#ifndef NDEBUG
	for (size_t i = 1; i < plan->nnodes; i++)
		assert(lplan_path_cmp(plan->nodes[i - 1].path, plan->nodes[i].path) < 0);
#else
	(void)plan;
#endif
}

/* The last node at or before `path` in the nodes' order, or SIZE_MAX. */
static size_t last_at_or_before(const struct lplan *plan, const char *path)
{
	size_t lo = 0, hi = plan->nnodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (lplan_path_cmp(plan->nodes[mid].path, path) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : SIZE_MAX;
}

/* The deepest node that is `path` or above it: its region. The nodes are
 * sorted by components and linked to their parents: that node, when
 * there is one, lies between itself and `path`, so it is the last node at
 * or before `path` or one of that node's ancestors, the first of them on
 * the parent chain that is at or above `path`. */
static const struct lplan_node *region_of(const struct lplan *plan, const char *path)
{
	const struct lplan_node *best = NULL;
	for (size_t i = last_at_or_before(plan, path); i != SIZE_MAX && !best;
	     i = plan->nodes[i].parent) {
		assert(i < plan->nnodes);
		if (lplan_at_or_above(plan->nodes[i].path, path))
			best = &plan->nodes[i];
	}
#ifndef NDEBUG
	const struct lplan_node *scan = NULL;
	for (size_t i = 0; i < plan->nnodes; i++) {
		const struct lplan_node *n = &plan->nodes[i];
		if (lplan_at_or_above(n->path, path) &&
		    (!scan || strlen(n->path) > strlen(scan->path)))
			scan = n;
	}
	assert(best == scan);
#endif
	return best;
}

/* The node named `path`, or NULL. */
static const struct lplan_node *node_named(const struct lplan *plan, const char *path)
{
	size_t i = last_at_or_before(plan, path);
	return i != SIZE_MAX && !strcmp(plan->nodes[i].path, path) ? &plan->nodes[i] : NULL;
}

/* Effective rights in the region holding `path`. */
static uint64_t region_eff(const struct lplan *plan, const char *path)
{
	const struct lplan_node *r = region_of(plan, path);
	return r ? r->ll & ~r->block : 0;
}

/* What the mounts take away in the region holding `path`. */
static uint64_t region_block(const struct lplan *plan, const char *path)
{
	const struct lplan_node *r = region_of(plan, path);
	return r ? r->block : 0;
}

char *lplan_parent_dir(struct arena *a, const char *path)
{
	const char *s = strrchr(path, '/');
	if (!s || s == path)
		return arena_strdup(a, "/");
	return arena_strndup(a, path, (size_t)(s - path));
}

static void set_nodes(struct arena *a, struct lplan *plan, const struct lplan_rules *rs)
{
	struct lplan_node *v = arena_alloc(a, (rs->n + 1) * sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < rs->n; i++) {
		const struct ir_path *pp = &rs->rules[i].t.path;
		const char *anchor = pp->kind == IR_PAT_SUBTREE
					     ? (pp->len == 3 ? "/" : arena_strndup(a, pp->text, pp->len - 3))
					     : pp->text;
		v[n].path = anchor;
		v[n].subtree = pp->kind == IR_PAT_SUBTREE;
		n++;
	}
	qsort(v, n, sizeof *v, node_cmp);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(v[m - 1].path, v[i].path))
			v[m - 1].subtree |= v[i].subtree;
		else
			v[m++] = v[i];
	}
	plan->nodes = v;
	plan->nnodes = m;
}

/* Each node's nearest ancestor node. The stack holds the chain of
 * ancestors of the node before; in sorted order, whatever of it is not
 * above this node is above none of the nodes after it either. */
void lplan_link_parents(struct arena *a, struct lplan *plan)
{
	assert_sorted(plan);
	/* A chain is at most one node per component of the deepest path. */
	size_t *stack = arena_alloc(a, (plan->nnodes + 1) * sizeof *stack), sp = 0;
	for (size_t i = 0; i < plan->nnodes; i++) {
		struct lplan_node *n = &plan->nodes[i];
		while (sp && !is_ancestor(plan->nodes[stack[sp - 1]].path, n->path))
			sp--;
		n->parent = sp ? stack[sp - 1] : SIZE_MAX;
		assert(sp <= i);
		stack[sp++] = i;
	}
#ifndef NDEBUG
	/* The parent is above the node, and no node above it is nearer. */
	for (size_t i = 0; i < plan->nnodes; i++) {
		const struct lplan_node *n = &plan->nodes[i];
		size_t near = SIZE_MAX;
		for (size_t k = 0; k < i; k++)
			if (is_ancestor(plan->nodes[k].path, n->path))
				near = k;
		assert(n->parent == near);
		assert(n->parent == SIZE_MAX || n->parent < i);
	}
#endif
}

/* A node that exists: grant what is missing, mount away the excess. */
static void plan_existing(struct arena *a, struct lplan *plan, const struct ir_profile *dp,
			  const struct lplan_cand *cand, struct lplan_node *n,
			  const struct lplan_node *par)
{
	const struct ir_rule *denier = NULL, *sdenier = NULL;
	uint32_t self = allowed_at(dp, cand, NULL, n->path, IR_A_FILE, &sdenier);
	uint32_t below = n->is_dir
				 ? allowed_at(dp, cand, NULL, below_probe(a, n->path), IR_A_FILE, &denier)
				 : self;
	if (!n->is_dir)
		denier = sdenier;
	uint64_t want = rights_of(below);
	if (!n->is_dir)
		want &= LP_FILE_RIGHTS;
	uint64_t inh_ll = par ? par->ll : 0, block = par ? par->block : 0;
	if (block == LP_ALL) { /* inside a hidden tree */
		if (want)
			lplan_error(a, plan, denier,
				    "%s is inside a tree this policy hides from reading; Linux "
				    "cannot re-open a path below a read-denied directory",
				    n->path);
		n->ll = inh_ll;
		n->block = block;
		return;
	}
	n->grant = want & ~inh_ll;
	uint64_t ll = inh_ll | n->grant;
	if (want & block) {
		n->mount |= LPM_FRESH;
		block = 0;
	}
	uint64_t excess = (ll & ~block) & ~want;
	if (!n->is_dir)
		excess &= LP_FILE_RIGHTS;
	if (excess & LP_READ) {
		if (want & ~LP_IOCTL_DEV)
			lplan_error(a, plan, denier,
				    "Linux cannot deny reading %s while allowing other access to "
				    "it (reads are denied by hiding the path, which denies all)",
				    n->path);
		n->mount |= LPM_HIDE;
		block = LP_ALL;
	} else {
		if (excess & LP_WRITEISH) {
			if (want & LP_WRITEISH)
				lplan_error(a, plan, denier,
					    "Linux cannot deny only part of writing below %s "
					    "(a read-only mount denies write, create and delete "
					    "together); deny them all there",
					    n->path);
			n->mount |= LPM_RDONLY;
			block |= LP_WRITEISH;
		}
		if (excess & LP_EXECUTE) {
			n->mount |= LPM_NOEXEC;
			block |= LP_EXECUTE;
		}
	}
	if (n->mount & (LPM_HIDE | LPM_RDONLY | LPM_NOEXEC))
		n->rule = denier;
	n->ll = ll;
	n->block = block;

	/* The node itself: listing a directory, deleting or renaming it. */
	if (n->is_dir && (self & IR_A_READ) && !(below & IR_A_READ))
		lplan_note(a, plan, NULL,
			   "listing the directory %s alone cannot be granted on Linux "
			   "(Landlock grants whole trees); it stays unreadable",
			   n->path);
	if (n->is_dir && !(self & IR_A_READ) && (below & IR_A_READ) && !(n->mount & LPM_HIDE))
		lplan_error(a, plan, sdenier,
			    "Linux cannot deny listing %s while allowing reads below it", n->path);
	if (!par)
		return;
	uint64_t at_parent = par->ll & ~par->block;
	uint64_t rm = n->is_dir ? LP_REMOVE_DIR : LP_REMOVE_FILE;
	/* Pinned where it may not be removed, or may not be made anew (a
	 * name removed could be created again: Landlock cannot refuse it). */
	uint64_t mk = n->is_dir ? LP_MAKE_DIR : LP_MAKE_REG;
	if ((at_parent & rm) && (!(self & IR_A_DELETE) ||
				 ((at_parent & mk) && !(self & IR_A_CREATE))) && !n->mount) {
		n->mount |= LPM_PIN;
		n->rule = sdenier;
	}
}

static void add_mkdir(struct arena *a, struct lplan *plan, const char *path)
{
	const char **v = arena_alloc(a, (plan->nmkdirs + 1) * sizeof *v);
	if (plan->nmkdirs)
		memcpy(v, plan->mkdirs, plan->nmkdirs * sizeof *v);
	v[plan->nmkdirs++] = path;
	plan->mkdirs = v;
}

static bool dir_exists(const struct lplan *plan, const char *path)
{
	struct stat st;
	return lplan_stat(plan->rcache, path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A node that does not exist: it cannot carry a grant or a mount. Returns
 * true when the runtime will create it instead (the caller then plans it
 * as an existing directory). */
static bool plan_missing(struct arena *a, struct lplan *plan, const struct ir_profile *dp,
			 const struct lplan_cand *cand, struct lplan_node *n,
			 const struct lplan_node *par)
{
	const struct ir_rule *denier = NULL;
	/* It is a name made later: the patterns say what it may become. */
	const struct lplan *later = plan->is_static ? NULL : plan;
	uint32_t self = allowed_at(dp, cand, later, n->path, IR_A_FILE, &denier);
	uint32_t below = allowed_at(dp, cand, later, below_probe(a, n->path), IR_A_FILE, &denier);
	uint64_t eff = par ? par->ll & ~par->block : 0;
	n->ll = par ? par->ll : 0;
	n->block = par ? par->block : 0;
	/* The root of a subtree grant that lets the command create it, in a
	 * directory that exists: creating it first is what the policy allows
	 * anyway, and the grant can then be made (an agent's ~/.codex on its
	 * first run, say). */
	if (n->subtree && (self & IR_A_CREATE) && below &&
	    dir_exists(plan, lplan_parent_dir(a, n->path))) {
		add_mkdir(a, plan, n->path);
		n->exists = n->is_dir = n->created = true;
		return true;
	}
	uint64_t want = rights_of(self | below);
	/* The node itself and what lies below it are asked apart: a denied
	 * file in an allowed tree has everything allowed below it. */
	const uint64_t cover = LP_READ | LP_WRITEISH | LP_EXECUTE;
	bool uncovered = (eff & LP_MAKE) && ((eff & ~rights_of(self) & cover) ||
					     (eff & ~rights_of(below) & cover));
	/* Whether the policy lets the command create it matters only where
	 * something below could be made that the policy does not cover. */
	struct ir_verdict cv = { 0 };
	if (uncovered) {
		ir_eval_path(dp, IR_A_CREATE, n->path, &cv);
		if (later && glob_matches(plan, n->path)) {
			struct ir_verdict gv;
			ir_eval_path(&plan->gprof, IR_A_CREATE, n->path, &gv);
			cv = *lplan_later_pick(&gv, &cv);
		}
	}
	if (uncovered && !cv.allowed) {
		/* The policy denies creating it: cagerun's create guard keeps
		 * the name from coming to exist, and a path that cannot exist
		 * needs nothing else. */
		lplan_guard_add(a, plan,
				n->subtree ? lplan_join(a, n->path, "**", 2) : n->path,
				cv.rule ? cv.rule : denier);
	} else if (uncovered)
		lplan_error(a, plan, denier,
			    "%s does not exist, and the command could create it: Linux can "
			    "only deny reading, writing or running a path that exists. Deny "
			    "creating it too (cagerun's create guard then keeps it from being "
			    "created), create it before running, or remove the rule",
			    n->path);
	else if (want & ~eff & (LP_READ | LP_WRITEISH | LP_EXECUTE))
		lplan_note(a, plan, NULL,
			   "%s does not exist: what the policy grants there is not granted "
			   "until it does (Landlock grants paths that exist)",
			   n->path);
	return false;
}

/* Every existing directory above a denied path (a mount node) or above a
 * guarded name that the command could rename or remove becomes a mount
 * point, so the denial cannot be moved aside: the IR pins the same
 * directories (a guarded name's `.git`, say, whether or not the hooks
 * below it exist yet). */
static void pin_ancestors(struct arena *a, struct lplan *plan)
{
	size_t n0 = plan->nnodes;
	struct lplan_node *extra = NULL;
	size_t nextra = 0;
	for (size_t i = 0; i < n0 + plan->nguards; i++) {
		const char *seed;
		const struct ir_rule *why;
		if (i < n0) {
			const struct lplan_node *n = &plan->nodes[i];
			if (!(n->mount & (LPM_HIDE | LPM_RDONLY | LPM_NOEXEC | LPM_PIN)))
				continue;
			seed = n->path;
			why = n->rule;
		} else {
			/* Above what a glob can match: from its anchor up. */
			const struct lplan_guard *g = &plan->guards[i - n0];
			/* The directory before its first glob (its literal
			 * path when it has none): what the IR pins above. */
			seed = lplan_anchor(a, &g->pat);
			if (g->pat.kind == IR_PAT_GLOB)
				seed = lplan_join(a, seed, "*", 1);
			why = g->rule;
		}
		for (char *d = lplan_parent_dir(a, seed); strcmp(d, "/");
		     d = lplan_parent_dir(a, d)) {
			if (!(region_eff(plan, lplan_parent_dir(a, d)) & (LP_REMOVE_DIR | LP_REFER)))
				continue;
			if (i >= n0 && !dir_exists(plan, d))
				continue; /* nothing to move yet; the create guard decides */
			const struct lplan_node *named = node_named(plan, d);
			bool have = named && named->mount;
			for (size_t k = 0; k < nextra && !have; k++)
				have = !strcmp(extra[k].path, d);
			if (have)
				continue;
			struct lplan_node *nx = arena_alloc(a, (nextra + 1) * sizeof *nx);
			if (nextra)
				memcpy(nx, extra, nextra * sizeof *nx);
			memset(&nx[nextra], 0, sizeof *nx);
			nx[nextra].path = d;
			nx[nextra].exists = nx[nextra].is_dir = true;
			nx[nextra].mount = LPM_PIN;
			nx[nextra].block = region_block(plan, d);
			nx[nextra].rule = why;
			extra = nx;
			nextra++;
		}
	}
	if (!nextra)
		return;
	/* Existing nodes that are pinned dirs: mark them instead of adding. */
	struct lplan_node *all = arena_alloc(a, (plan->nnodes + nextra) * sizeof *all);
	memcpy(all, plan->nodes, plan->nnodes * sizeof *all);
	size_t m = plan->nnodes;
	for (size_t k = 0; k < nextra; k++) {
		bool merged = false;
		for (size_t i = 0; i < plan->nnodes; i++)
			if (!strcmp(all[i].path, extra[k].path)) {
				all[i].mount |= LPM_PIN;
				if (!all[i].rule)
					all[i].rule = extra[k].rule;
				merged = true;
			}
		if (!merged)
			all[m++] = extra[k];
	}
	qsort(all, m, sizeof *all, node_cmp);
	plan->nodes = all;
	plan->nnodes = m;
}

/* A mount is a bind of its own: what is below it has its flags, not an
 * ancestor mount's (each is cloned before its ancestors, and the
 * ancestor's flags are set on the top of its clone only). So every mount
 * carries what is taken away where it sits: a no-exec mount or a pin
 * inside a read-only tree is read-only too, a read-only one inside a
 * no-exec tree no-exec too. */
static void carry_flags(struct lplan *plan)
{
	for (size_t i = 0; i < plan->nnodes; i++) {
		struct lplan_node *n = &plan->nodes[i];
		if (!n->mount || (n->mount & LPM_HIDE))
			continue;
		if (n->block & LP_WRITEISH)
			n->mount |= LPM_RDONLY;
		if (n->block & LP_EXECUTE)
			n->mount |= LPM_NOEXEC;
	}
}

static void add_port(struct arena *a, struct lplan *plan, unsigned port, const struct ir_rule *r)
{
	for (size_t i = 0; i < plan->nports; i++)
		if (plan->ports[i].port == port)
			return;
	struct lplan_port *v = arena_alloc(a, (plan->nports + 1) * sizeof *v);
	if (plan->nports)
		memcpy(v, plan->ports, plan->nports * sizeof *v);
	v[plan->nports].port = (uint16_t)port;
	v[plan->nports].rule = r;
	plan->ports = v;
	plan->nports++;
}

/* Loopback ports the sandbox may reach (forwarded into its network
 * namespace), and rules Linux cannot confine as written. */
static void plan_network(struct arena *a, const struct ir_profile *p, struct lplan *plan)
{
	enum { MAX_PORTS = 256 };
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		if (r->effect == IR_ALLOW && r->tkind == IR_T_UNIX)
			lplan_error(a, plan, r,
				    "Linux cannot limit which unix sockets a command connects to "
				    "(Landlock ABI 7 does not cover them), so cagerun refuses "
				    "`allow unix` rather than allow every socket");
		if (r->effect != IR_ALLOW || r->tkind != IR_T_HOST)
			continue;
		const struct ir_host *h = &r->t.host;
		const char *name = NULL;
		if (h->kind == IR_H_NAME && !strcmp(h->name, "localhost"))
			name = "localhost";
		else if (h->kind == IR_H_IPV4 && !memcmp(h->addr, "\x7f\0\0\x01", 4))
			name = "127.0.0.1";
		else if (h->kind == IR_H_IPV6 && !strcmp(h->name, "::1"))
			name = "::1";
		if (!name)
			continue;
		if (h->nports == 0) {
			lplan_error(a, plan, r,
				    "every loopback port cannot be forwarded into the sandbox; "
				    "name the ports (\"localhost:3000\")");
			continue;
		}
		for (size_t k = 0; k < h->nports; k++) {
			if ((unsigned)(h->ports[k].hi - h->ports[k].lo) >= MAX_PORTS) {
				lplan_error(a, plan, r,
					    "more than %d loopback ports cannot be forwarded into "
					    "the sandbox",
					    MAX_PORTS);
				break;
			}
			for (unsigned port = h->ports[k].lo; port <= h->ports[k].hi; port++) {
				struct ir_verdict v;
				ir_eval_host(p, name, port, &v);
				if (v.allowed)
					add_port(a, plan, port, r);
			}
		}
	}
	if (plan->nports > MAX_PORTS)
		lplan_error(a, plan, NULL, "more than %d loopback ports to forward", MAX_PORTS);
}

static bool build(struct arena *a, const struct ir_profile *p, struct lplan *plan,
		  bool is_static)
{
	memset(plan, 0, sizeof *plan);
	plan->is_static = is_static;
	plan->rcache = lplan_rcache_new(a);
	struct lplan_rules rs = { 0 };
	lplan_resolve_rules(a, p, &rs, plan);
	struct ir_profile dp = { 0 };
	dp.name = p->name;
	dp.rules = rs.rules;
	dp.nrules = rs.n;
	plan->rprof = dp;

	if (!is_static)
		lplan_guard_prepare(a, p, plan);
	set_nodes(a, plan, &rs);
	for (size_t i = 0; i < plan->nnodes; i++) {
		struct lplan_node *n = &plan->nodes[i];
		struct stat st;
		bool here = lplan_stat(plan->rcache, n->path, &st) == 0;
		n->exists = here || is_static;
		n->is_dir = is_static && n->subtree ? true : here && S_ISDIR(st.st_mode);
	}
	lplan_link_parents(a, plan);
	/* A node's candidates are filtered from its parent's: the parent is
	 * above it (lplan_link_parents asserts it), so they hold all of its. */
	struct lplan_anchors an;
	lplan_anchors_init(a, &dp, &an);
	struct lplan_cand *cand = arena_alloc(a, (plan->nnodes + 1) * sizeof *cand);
	for (size_t i = 0; i < plan->nnodes; i++) {
		struct lplan_node *n = &plan->nodes[i];
		const struct lplan_node *par = n->parent == SIZE_MAX ? NULL : &plan->nodes[n->parent];
		lplan_cand_filter(a, &an, par ? &cand[n->parent] : &an.all, n->path, &cand[i]);
		if (n->exists || plan_missing(a, plan, &dp, &cand[i], n, par))
			plan_existing(a, plan, &dp, &cand[i], n, par);
	}
	if (!is_static)
		lplan_guard_globs(a, p, plan, region_eff);
	pin_ancestors(a, plan);
	lplan_link_parents(a, plan);
	carry_flags(plan);
	lplan_index_nodes(a, plan);
	for (size_t i = 0; i < plan->nnodes; i++) {
		plan->ngrants += plan->nodes[i].grant != 0;
		plan->nmounts += plan->nodes[i].mount != 0;
	}
	plan_network(a, p, plan);
	return true;
}

bool lplan_build(struct arena *a, const struct ir_profile *p, struct lplan *plan,
		 const char **err)
{
	(void)err;
	return build(a, p, plan, false);
}

bool lplan_build_static(struct arena *a, const struct ir_profile *p, struct lplan *plan,
			const char **err)
{
	(void)err;
	return build(a, p, plan, true);
}

static void rights_text(uint64_t r, char *buf, size_t size)
{
	static const char *const names[] = { "execute", "write_file", "read_file", "read_dir",
					     "remove_dir", "remove_file", "make_char", "make_dir",
					     "make_reg", "make_sock", "make_fifo", "make_block",
					     "make_sym", "refer", "truncate", "ioctl_dev" };
	size_t n = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < 16; i++)
		if (r & (1ull << i)) {
			int w = snprintf(buf + n, size - n, "%s%s", n ? "," : "", names[i]);
			if (w < 0 || (size_t)w >= size - n)
				return;
			n += (size_t)w;
		}
}

void lplan_print(FILE *out, const struct lplan *plan)
{
	char rt[256], rule[1200];
	for (size_t i = 0; i < plan->nmkdirs; i++)
		fprintf(out, "mkdir %s\n", plan->mkdirs[i]);
	for (size_t i = 0; i < plan->nnodes; i++) {
		const struct lplan_node *n = &plan->nodes[i];
		if (n->grant) {
			rights_text(n->grant, rt, sizeof rt);
			fprintf(out, "grant %s %s\n", n->path, rt);
		}
		if (n->mount) {
			fprintf(out, "mount %s%s%s%s%s%s", n->path,
				n->mount & LPM_HIDE ? " hide" : "",
				n->mount & LPM_RDONLY ? " ro" : "",
				n->mount & LPM_NOEXEC ? " noexec" : "",
				n->mount & LPM_FRESH ? " fresh" : "",
				n->mount & LPM_PIN ? " pin" : "");
			if (n->rule) {
				lplan_rule_text(n->rule, rule, sizeof rule);
				fprintf(out, "  # %s", rule);
			}
			fputc('\n', out);
		}
	}
	for (size_t i = 0; i < plan->nports; i++)
		fprintf(out, "forward 127.0.0.1:%u\n", plan->ports[i].port);
	for (size_t i = 0; i < plan->nguards; i++) {
		fprintf(out, "guard %s", plan->guards[i].pat.text);
		if (plan->guards[i].rule) {
			lplan_rule_text(plan->guards[i].rule, rule, sizeof rule);
			fprintf(out, "  # %s", rule);
		}
		fputc('\n', out);
	}
	for (size_t i = 0; i < plan->nnotes; i++)
		fprintf(out, "note %s\n", plan->notes[i].text);
	for (size_t i = 0; i < plan->nerrors; i++)
		fprintf(out, "error %s\n", plan->errors[i].text);
}

bool lplan_emit(const struct ir_policy *pol, const struct ir_profile *prof, FILE *out,
		struct arena *a, const char **err)
{
	(void)pol;
	struct lplan plan;
	if (!lplan_build(a, prof, &plan, err))
		return false;
	lplan_print(out, &plan);
	struct lplan_widening *w;
	size_t nw;
	lplan_check(a, &plan, &w, &nw, NULL);
	char text[2400];
	for (size_t i = 0; i < nw; i++) {
		lplan_widening_text(&w[i], text, sizeof text);
		fprintf(out, "wider %s\n", text);
	}
	if (nw) {
		*err = arena_printf(a, "the plan is wider than the policy at %zu point%s (a bug in "
				       "the plan); cagerun refuses this policy",
				    nw, nw == 1 ? "" : "s");
		return false;
	}
	if (plan.nerrors) {
		*err = arena_printf(a, "%zu rule%s cannot be enforced exactly on Linux here; "
				       "cagerun refuses this policy",
				    plan.nerrors, plan.nerrors == 1 ? "" : "s");
		return false;
	}
	return true;
}
