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

/* Landlock rights at `path`, and what mounts take away there. */
static void rights_at(const struct lplan *plan, const char *path, uint64_t *ll,
		      uint64_t *block, const struct lplan_node **mount_node)
{
	*ll = 0;
	*block = 0;
	*mount_node = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < plan->nnodes; i++) {
		const struct lplan_node *n = &plan->nodes[i];
		if (!n->exists || !lplan_at_or_above(n->path, path))
			continue;
		bool at = strcmp(n->path, path) == 0;
		/* A grant on a file covers that file only; on a directory,
		 * everything beneath it. */
		if (n->is_dir || at)
			*ll |= n->grant;
		if (n->mount & (LPM_HIDE | LPM_RDONLY | LPM_NOEXEC | LPM_FRESH)) {
			size_t len = strlen(n->path);
			if (len >= best_len) {
				best_len = len;
				*mount_node = n;
			}
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
	for (size_t i = 0; i < plan->nnodes; i++)
		if (plan->nodes[i].mount && plan->nodes[i].exists && !strcmp(plan->nodes[i].path, path))
			return true;
	return false;
}

bool lplan_query(struct arena *a, const struct lplan *plan, uint32_t access, const char *path,
		 struct lplan_answer *ans)
{
	memset(ans, 0, sizeof *ans);
	ans->resolved = lplan_resolve_path(a, path);
	const char *rp = ans->resolved;
	struct stat st;
	bool exists = stat(rp, &st) == 0;
	bool is_dir = exists && S_ISDIR(st.st_mode);
	uint64_t ll, block;
	const struct lplan_node *m;
	rights_at(plan, rp, &ll, &block, &m);
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
		rights_at(plan, par, &pll, &pblock, &pm);
		uint64_t need = access == IR_A_CREATE ? (is_dir ? LP_MAKE_DIR : LP_MAKE_REG)
						      : (is_dir ? LP_REMOVE_DIR : LP_REMOVE_FILE);
		ans->allowed = (pll & need) && !(pblock & need);
		if (access == IR_A_DELETE && ans->allowed && is_mount_point(plan, rp)) {
			ans->allowed = false;
			ans->why = "a mount point (it is, or is above, a denied path): it can be "
				   "neither removed nor renamed";
			return true;
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
