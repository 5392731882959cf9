/*
 * lplan_query.c - what the Linux sandbox will do for one access, computed
 * from the plan the way the kernel computes it: the path is resolved
 * through symlinks, Landlock allows what the grants on the path and its
 * ancestors add up to, and the nearest mount above takes its share away.
 * `cagec explain --target linux` answers with this, so that explain and
 * the sandbox never disagree in silence: where the plan enforces a rule
 * more narrowly (or, for metadata, more widely) than the IR says, the
 * answer says so and why.
 */
#include "lplan_int.h"

#include <string.h>
#include <sys/stat.h>

#include <xxhash.h>

/* XXH3 rather than a byte loop: a plan's paths are long, and every
 * launch that reuses a plan indexes all of its nodes. */
static size_t node_hash(const char *s, size_t n)
{
	return (size_t)XXH3_64bits(s, n);
}

void lplan_index_nodes(struct arena *a, struct lplan *plan)
{
	size_t ns = 16;
	while (ns < plan->nnodes * 2 + 2)
		ns *= 2;
	plan->node_slots = arena_alloc(a, ns * sizeof *plan->node_slots); /* zeroed: all empty */
	plan->nslots = ns;
	for (size_t i = 0; i < plan->nnodes; i++) {
		const char *p = plan->nodes[i].path;
		size_t k = node_hash(p, strlen(p)) & (ns - 1);
		while (plan->node_slots[k])
			k = (k + 1) & (ns - 1);
		plan->node_slots[k] = i + 1;
	}
}

const struct lplan_node *lplan_node_at(const struct lplan *plan, const char *path, size_t len)
{
	if (!plan->nslots)
		return NULL;
	size_t k = node_hash(path, len) & (plan->nslots - 1);
	for (size_t s; (s = plan->node_slots[k]); k = (k + 1) & (plan->nslots - 1)) {
		const struct lplan_node *n = &plan->nodes[s - 1];
		if (!strncmp(n->path, path, len) && n->path[len] == '\0')
			return n;
	}
	return NULL;
}

static const struct lplan_node *node_at(const struct lplan *plan, const char *path)
{
	return lplan_node_at(plan, path, strlen(path));
}

/* Landlock rights at a path, and what mounts take away there: the grants
 * of the nodes at or above it, and the deepest of their mounts. */
struct rights {
	uint64_t ll, block;
	const struct lplan_node *m;
};

static void take_node(const struct lplan_node *n, bool at, struct rights *r)
{
	if (!n || !n->exists)
		return;
	/* A grant on a file covers that file only; on a directory,
	 * everything beneath it. */
	if (n->is_dir || at)
		r->ll |= n->grant;
	/* Every mount is a bind of its own with its own flags (a pin's are the
	 * filesystem's), and what is below it sees those, not an ancestor
	 * mount's: prefixes come shortest first, the deepest wins. */
	if (n->mount)
		r->m = n;
}

static void rights_at(const struct lplan *plan, const char *path, struct rights *r)
{
	memset(r, 0, sizeof *r);
	size_t len = strlen(path);
	take_node(lplan_node_at(plan, "/", 1), len == 1, r);
	/* Every longer prefix that ends at a component boundary, shortest
	 * first. */
	for (size_t k = 2; len > 1 && k <= len; k++)
		if (k == len || path[k] == '/')
			take_node(lplan_node_at(plan, path, k), k == len, r);
	if (r->m)
		r->block = r->m->mount & LPM_HIDE ? LP_ALL
			   : (r->m->mount & LPM_RDONLY ? LP_WRITEISH : 0) |
				     (r->m->mount & LPM_NOEXEC ? LP_EXECUTE : 0);
}

static bool is_mount_point(const struct lplan *plan, const char *path)
{
	const struct lplan_node *n = node_at(plan, path);
	return n && n->mount && n->exists;
}

/* The path an access acts on, as the kernel reaches it: delete and create
 * (rename and link are both) act on the name in its directory and do not
 * follow a symlink in last place; read, write and exec act on what the
 * path leads to. */
const char *lplan_query_path(struct arena *a, uint32_t access, const char *path)
{
	if (!(access & (IR_A_CREATE | IR_A_DELETE)) || !strcmp(path, "/"))
		return lplan_resolve_path(a, path);
	const char *base = strrchr(path, '/') + 1;
	const char *dir = lplan_resolve_path(a, lplan_parent_dir(a, path));
	return lplan_join(a, dir, base, strlen(base));
}

/* One access, from the rights at the path and (for create and delete) at
 * its directory. */
static void answer(struct arena *a, const struct lplan *plan, uint32_t access, const char *rp,
		   bool exists, bool is_dir, const struct rights *here, const struct rights *dir,
		   struct lplan_answer *ans)
{
	memset(ans, 0, sizeof *ans);
	ans->resolved = rp;
	const struct lplan_node *m = here->m;
	uint64_t ll = here->ll, block = here->block;
	bool hidden_above = m && (m->mount & LPM_HIDE) && strcmp(m->path, rp) != 0;
	if (m && !(m->mount & (LPM_HIDE | LPM_RDONLY | LPM_NOEXEC)))
		m = NULL; /* a pin or a fresh bind takes nothing away */
	switch (access) {
	case IR_A_READ_META:
		/* Landlock does not confine stat(2); only hiding does. */
		ans->allowed = !hidden_above;
		ans->why = hidden_above ? "hidden by an empty mount over a read-denied directory"
					: "Linux (Landlock) cannot deny reading metadata outside "
					  "hidden paths";
		return;
	case IR_A_READ: {
		uint64_t need = is_dir ? LP_READ_DIR : LP_READ_FILE;
		ans->allowed = (ll & need) && !(block & need);
		break;
	}
	case IR_A_WRITE:
		ans->allowed = (ll & LP_WRITE_FILE) && !(block & LP_WRITE_FILE);
		break;
	case IR_A_EXEC:
		ans->allowed = (ll & LP_EXECUTE) && !(block & LP_EXECUTE);
		break;
	case IR_A_CREATE:
	case IR_A_DELETE: {
		uint64_t need = access == IR_A_CREATE ? (is_dir ? LP_MAKE_DIR : LP_MAKE_REG)
						      : (is_dir ? LP_REMOVE_DIR : LP_REMOVE_FILE);
		ans->allowed = (dir->ll & need) && !(dir->block & need);
		if (access == IR_A_DELETE && ans->allowed && is_mount_point(plan, rp)) {
			ans->allowed = false;
			ans->why = "a mount point (it is, or is above, a denied path): it can be "
				   "neither removed nor renamed";
			return;
		}
		if (access == IR_A_CREATE && ans->allowed && exists) {
			/* A name that is there is made anew only by removing or
			 * replacing it (rename over it removes it too). */
			struct lplan_answer del;
			answer(a, plan, IR_A_DELETE, rp, true, is_dir, here, dir, &del);
			if (!del.allowed) {
				ans->allowed = false;
				ans->why = "it exists and cannot be removed or replaced, so it "
					   "cannot be made anew";
				return;
			}
		}
		const struct ir_rule *gr = NULL;
		if (access == IR_A_CREATE && ans->allowed &&
		    lplan_guard_denies(plan, rp, is_dir ? LPLAN_MK_DIR : LPLAN_MK_FILE, &gr)) {
			ans->allowed = false;
			ans->why = "refused by cagerun's create guard: Landlock cannot deny a "
				   "name that does not exist yet (an empty directory above a "
				   "guarded name may still be made)";
			return;
		}
		if (!ans->allowed && !(dir->ll & need))
			ans->why = "Landlock grants creating and deleting on the directory "
				   "that holds the path, which the policy does not grant as a whole";
		/* What a mount takes away here is the directory's. */
		m = dir->m && (dir->m->mount & (LPM_HIDE | LPM_RDONLY | LPM_NOEXEC)) ? dir->m : NULL;
		break;
	}
	default:
		return;
	}
	if (!ans->why && m && !ans->allowed)
		ans->why = m->mount & LPM_HIDE ? "hidden by an empty read-only mount"
			   : m->mount & LPM_RDONLY ? "under a read-only mount"
						    : "under a no-exec mount";
}

void lplan_answer_bits(struct arena *a, const struct lplan *plan, uint32_t bits, const char *rp,
		       bool exists, bool is_dir, struct lplan_answer out[6])
{
	struct rights here, dir = { 0 };
	rights_at(plan, rp, &here);
	if (bits & (IR_A_CREATE | IR_A_DELETE))
		rights_at(plan, lplan_parent_dir(a, rp), &dir);
	for (uint32_t m = bits & IR_A_FILE; m; m &= m - 1)
		answer(a, plan, m & -m, rp, exists, is_dir, &here, &dir, &out[__builtin_ctz(m)]);
}

bool lplan_answer_at(struct arena *a, const struct lplan *plan, uint32_t access, const char *rp,
		     bool exists, bool is_dir, struct lplan_answer *ans)
{
	if (!(access & IR_A_FILE) || (access & (access - 1)))
		return false;
	struct lplan_answer out[6];
	lplan_answer_bits(a, plan, access, rp, exists, is_dir, out);
	*ans = out[__builtin_ctz(access)];
	return true;
}

bool lplan_query(struct arena *a, const struct lplan *plan, uint32_t access, const char *path,
		 struct lplan_answer *ans)
{
	const char *rp = lplan_query_path(a, access, path);
	struct stat st;
	/* The name itself for delete and create: a symlink is a file there. */
	bool exists = (access & (IR_A_CREATE | IR_A_DELETE) ? lstat(rp, &st) : stat(rp, &st)) == 0;
	if (!lplan_answer_at(a, plan, access, rp, exists, exists && S_ISDIR(st.st_mode), ans))
		return false;
	if (!ans->why && strcmp(rp, path))
		ans->why = access & (IR_A_CREATE | IR_A_DELETE)
				   ? "the directory that holds it is reached through a symlink, "
				     "which the kernel follows"
				   : "the kernel follows symlinks on the way and in last place: the "
				     "answer is for where the path leads";
	return true;
}
