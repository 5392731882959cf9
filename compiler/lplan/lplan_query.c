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

/* The node at exactly `path`, found by halving: the nodes are sorted by
 * components (lplan_path_cmp), without repeats. */
static const struct lplan_node *node_at(const struct lplan *plan, const char *path)
{
	size_t lo = 0, hi = plan->nnodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = lplan_path_cmp(plan->nodes[mid].path, path);
		if (!c)
			return &plan->nodes[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Landlock rights at `path`, and what mounts take away there: the grants
 * of the nodes at or above it, and the deepest of their mounts. */
static void take_node(const struct lplan_node *n, bool at, uint64_t *ll,
		      const struct lplan_node **mount_node)
{
	if (!n || !n->exists)
		return;
	/* A grant on a file covers that file only; on a directory,
	 * everything beneath it. */
	if (n->is_dir || at)
		*ll |= n->grant;
	if (n->mount & (LPM_HIDE | LPM_RDONLY | LPM_NOEXEC | LPM_FRESH))
		*mount_node = n; /* prefixes come shortest first: the deepest wins */
}

static void rights_at(struct arena *a, const struct lplan *plan, const char *path, uint64_t *ll,
		      uint64_t *block, const struct lplan_node **mount_node)
{
	*ll = 0;
	*block = 0;
	*mount_node = NULL;
	size_t len = strlen(path);
	take_node(node_at(plan, "/"), len == 1, ll, mount_node);
	if (len > 1) {
		/* Every prefix that ends at a component boundary. */
		char *pre = arena_strdup(a, path);
		for (size_t k = 2; k <= len; k++) {
			if (k < len && path[k] != '/')
				continue;
			pre[k] = '\0';
			take_node(node_at(plan, pre), k == len, ll, mount_node);
			pre[k] = path[k];
		}
	}
	const struct lplan_node *m = *mount_node;
	if (m) {
		if (m->mount & LPM_HIDE)
			*block = LP_ALL;
		else
			*block = (m->mount & LPM_RDONLY ? LP_WRITEISH : 0) |
				 (m->mount & LPM_NOEXEC ? LP_EXECUTE : 0);
	}
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
	return arena_printf(a, "%s/%s", strcmp(dir, "/") ? dir : "", base);
}

bool lplan_answer_at(struct arena *a, const struct lplan *plan, uint32_t access, const char *rp,
		     bool exists, bool is_dir, struct lplan_answer *ans)
{
	memset(ans, 0, sizeof *ans);
	ans->resolved = rp;
	uint64_t ll, block;
	const struct lplan_node *m;
	rights_at(a, plan, rp, &ll, &block, &m);
	bool hidden_above = m && (m->mount & LPM_HIDE) && strcmp(m->path, rp) != 0;
	switch (access) {
	case IR_A_READ_META:
		/* Landlock does not confine stat(2); only hiding does. */
		ans->allowed = !hidden_above;
		ans->why = hidden_above ? "hidden by an empty mount over a read-denied directory"
					: "Linux (Landlock) cannot deny reading metadata outside "
					  "hidden paths";
		return true;
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
		const char *par = lplan_parent_dir(a, rp);
		uint64_t pll, pblock;
		const struct lplan_node *pm;
		rights_at(a, plan, par, &pll, &pblock, &pm);
		uint64_t need = access == IR_A_CREATE ? (is_dir ? LP_MAKE_DIR : LP_MAKE_REG)
						      : (is_dir ? LP_REMOVE_DIR : LP_REMOVE_FILE);
		ans->allowed = (pll & need) && !(pblock & need);
		if (access == IR_A_DELETE && ans->allowed && is_mount_point(plan, rp)) {
			ans->allowed = false;
			ans->why = "a mount point (it is, or is above, a denied path): it can be "
				   "neither removed nor renamed";
			return true;
		}
		if (access == IR_A_CREATE && ans->allowed && exists) {
			/* A name that is there is made anew only by removing or
			 * replacing it (rename over it removes it too). */
			struct lplan_answer del;
			lplan_answer_at(a, plan, IR_A_DELETE, rp, true, is_dir, &del);
			if (!del.allowed) {
				ans->allowed = false;
				ans->why = "it exists and cannot be removed or replaced, so it "
					   "cannot be made anew";
				return true;
			}
		}
		const struct ir_rule *gr = NULL;
		if (access == IR_A_CREATE && ans->allowed &&
		    lplan_guard_denies(plan, rp, is_dir ? LPLAN_MK_DIR : LPLAN_MK_FILE, &gr)) {
			ans->allowed = false;
			ans->why = "refused by cagerun's create guard: Landlock cannot deny a "
				   "name that does not exist yet (an empty directory above a "
				   "guarded name may still be made)";
			return true;
		}
		if (!ans->allowed && !(pll & need))
			ans->why = "Landlock grants creating and deleting on the directory "
				   "that holds the path, which the policy does not grant as a whole";
		break;
	}
	default:
		return false;
	}
	if (!ans->why && m && !ans->allowed)
		ans->why = m->mount & LPM_HIDE ? "hidden by an empty read-only mount"
			   : m->mount & LPM_RDONLY ? "under a read-only mount"
						    : "under a no-exec mount";
	return true;
}

bool lplan_query(struct arena *a, const struct lplan *plan, uint32_t access, const char *path,
		 struct lplan_answer *ans)
{
	const char *rp = lplan_query_path(a, access, path);
	struct stat st;
	/* The name itself for delete and create: a symlink is a file there. */
	bool exists = (access & (IR_A_CREATE | IR_A_DELETE) ? lstat(rp, &st) : stat(rp, &st)) == 0;
	return lplan_answer_at(a, plan, access, rp, exists, exists && S_ISDIR(st.st_mode), ans);
}
