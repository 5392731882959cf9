/*
 * lplan.h - the Linux plan: how a profile's path rules become Landlock
 * grants and mounts on the machine that is about to run the command.
 *
 * Landlock can only allow, and it allows whole hierarchies below existing
 * inodes. A deny inside an allowed tree therefore needs a mount over the
 * denied path (read-only, no-exec, or an empty read-only filesystem that
 * hides it), and a deny of a path that does not exist yet cannot be
 * enforced at all where the command could create it. The plan works this
 * out against the real filesystem (paths resolved through symlinks, as the
 * kernel will see them), and says which rules it cannot enforce exactly
 * (errors: cagerun refuses the policy) and which it enforces more narrowly
 * than written (notes). Nothing here changes the system: mkdirs lists the
 * directories the runtime creates before starting, because the policy lets
 * the command create them anyway.
 */
#ifndef CAGE_LPLAN_H
#define CAGE_LPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir.h"

/* Landlock filesystem access rights, numbered as the kernel numbers them
 * (linux/landlock.h; ABI 1-5). Defined here so the plan is portable and
 * the system header's age does not matter. */
#define LP_EXECUTE (1ull << 0)
#define LP_WRITE_FILE (1ull << 1)
#define LP_READ_FILE (1ull << 2)
#define LP_READ_DIR (1ull << 3)
#define LP_REMOVE_DIR (1ull << 4)
#define LP_REMOVE_FILE (1ull << 5)
#define LP_MAKE_CHAR (1ull << 6)
#define LP_MAKE_DIR (1ull << 7)
#define LP_MAKE_REG (1ull << 8)
#define LP_MAKE_SOCK (1ull << 9)
#define LP_MAKE_FIFO (1ull << 10)
#define LP_MAKE_BLOCK (1ull << 11)
#define LP_MAKE_SYM (1ull << 12)
#define LP_REFER (1ull << 13)
#define LP_TRUNCATE (1ull << 14)
#define LP_IOCTL_DEV (1ull << 15)

#define LP_READ (LP_READ_FILE | LP_READ_DIR)
#define LP_MAKE (LP_MAKE_CHAR | LP_MAKE_DIR | LP_MAKE_REG | LP_MAKE_SOCK | LP_MAKE_FIFO | \
		 LP_MAKE_BLOCK | LP_MAKE_SYM)
#define LP_REMOVE (LP_REMOVE_DIR | LP_REMOVE_FILE)
/* What a read-only mount takes away. */
#define LP_WRITEISH (LP_WRITE_FILE | LP_TRUNCATE | LP_MAKE | LP_REMOVE | LP_REFER)
/* The rights Landlock accepts on a rule for a file (not a directory). */
#define LP_FILE_RIGHTS (LP_EXECUTE | LP_WRITE_FILE | LP_READ_FILE | LP_TRUNCATE | LP_IOCTL_DEV)
#define LP_ALL ((1ull << 16) - 1)

/* Mounts over a node, applied deepest first inside the sandbox's private
 * mount namespace. Any mount makes the node a mount point, which can be
 * neither renamed nor removed (EBUSY): LPM_PIN is a mount for that alone. */
enum {
	LPM_PIN = 1u << 0,    /* bind the node onto itself, flags unchanged */
	LPM_RDONLY = 1u << 1, /* ... read-only */
	LPM_NOEXEC = 1u << 2, /* ... no execution */
	LPM_HIDE = 1u << 3,   /* an empty, unreadable, read-only placeholder */
	LPM_FRESH = 1u << 4,  /* a new bind that lifts an ancestor's RDONLY/NOEXEC */
};

struct lplan_node {
	const char *path; /* resolved: absolute, no symlinks (but /proc as written) */
	bool exists, is_dir;
	bool subtree; /* the root of some rule's subtree pattern */
	bool created; /* missing; the runtime creates it (it is in mkdirs) */
	uint64_t grant;   /* Landlock rights to add here (beneath, for a directory) */
	unsigned mount;   /* LPM_* */
	const struct ir_rule *rule; /* the rule behind the mount, for messages */
	/* Working state of the plan (what applies below this node). */
	uint64_t ll, block;
	size_t parent; /* index of the nearest ancestor node, or SIZE_MAX */
};

struct lplan_msg {
	const struct ir_rule *rule; /* NULL: about the profile as a whole */
	const char *text;
};

struct lplan_port {
	uint16_t port;
	const struct ir_rule *rule;
};

/* A name the command must not create, where Landlock cannot say so: a
 * denied path missing inside a tree the command may create in (nothing
 * can be mounted on a missing name), or a glob that denies creating its
 * future matches. cagerun's create guard (runtime/linux/guard/lnx_guard.c)
 * refuses creating a name that the pattern matches and the policy denies
 * creating, and anything strictly above such a name but an empty
 * directory (see lplan_guard_denies). */
struct lplan_guard {
	struct ir_path pat;         /* resolved like the nodes; globs kept */
	const struct ir_rule *rule; /* as the user wrote it */
};

struct lplan {
	struct lplan_node *nodes; /* ancestors before descendants */
	size_t nnodes;
	const char **mkdirs; /* created by the runtime before the sandbox starts */
	size_t nmkdirs;
	struct lplan_msg *errors; /* cannot be enforced exactly: refuse to run */
	size_t nerrors;
	struct lplan_msg *notes; /* enforced more narrowly than written */
	size_t nnotes;
	struct lplan_port *ports; /* loopback ports reachable through forwarding */
	size_t nports;
	struct lplan_guard *guards; /* names the create guard refuses */
	size_t nguards;
	/* The profile with every path rule's literal part resolved but no
	 * glob expanded: what the guard asks about names made later. */
	struct ir_profile gprof;
	/* The profile's path rules as the plan was built from them: literal
	 * parts resolved and globs expanded into the paths that exist. */
	struct ir_profile rprof;
	size_t ngrants, nmounts;
	bool is_static; /* built by lplan_build_static */
	/* Bound from an artifact without rprof (lplan_from_pf): enforceable,
	 * but neither checked (lplan_check fails it) nor written again. */
	bool no_rprof;
	/* The nodes by path, for lookups that must not depend on their order
	 * or parent links (lplan_query: what the kernel does): open
	 * addressing, slot = node index + 1, 0 empty; nslots a power of 2. */
	size_t *node_slots;
	size_t nslots;
	/* Internal to a build: every prefix the build resolved, so that the
	 * steps after the rules' own resolution look at no path twice. */
	struct lplan_rcache *rcache;
};

/* Builds the plan for profile `p` against this machine's filesystem. All
 * memory comes from `a`. Returns false only on resource exhaustion (with a
 * message in *err); inexpressible rules are plan->errors. */
bool lplan_build(struct arena *a, const struct ir_profile *p, struct lplan *plan,
		 const char **err);
/* The same for a machine the policy is written for but that this is not:
 * every path is taken as written and as existing (a directory for a
 * subtree, else whatever it is here, else a file), globs are not
 * expanded. Finds what no machine can enforce exactly; what depends on a
 * machine's files (a denied path that is missing there) only the real
 * plan finds. lint uses this unless asked to --resolve. */
bool lplan_build_static(struct arena *a, const struct ir_profile *p, struct lplan *plan,
			const char **err);

/* What the sandbox will do for one access (an IR_A_* bit) to `path`:
 * Landlock and the mounts as the kernel applies them, on the path
 * resolved through symlinks. `why` explains a refusal or a platform limit
 * (NULL when the grants simply decide). */
struct lplan_answer {
	bool allowed;
	const char *resolved;
	const char *why;
};
bool lplan_query(struct arena *a, const struct lplan *plan, uint32_t access, const char *path,
		 struct lplan_answer *ans);
/* The accesses (IR_A_* bits) that mean something for what is at a path,
 * which the launch-time check compares: a directory is neither written
 * nor run as a file, a symlink (its own path) is only made or removed,
 * and a name that is not there only comes to be by creating it. */
uint32_t lplan_meaningful(bool exists, bool is_dir, bool is_link);

/* The launch-time check (lplan_check.c): an access the sandbox would
 * allow and the policy denies. */
struct lplan_widening {
	const char *path;           /* as the plan or the policy names it */
	const char *resolved;       /* as the kernel reaches it */
	uint32_t access;            /* one IR_A_* bit */
	const struct ir_rule *rule; /* the rule that denies it; NULL: no rule allows it */
};
struct lplan_check_stats {
	size_t paths;   /* distinct resolved paths asked about */
	size_t evals;   /* IR evaluations (every access of one path each) */
	size_t queries; /* answers computed from the plan */
};
/* Asks, for every path the profile or the plan names (each rule's target,
 * each node, guard and directory created, their parents, and a name no
 * rule names below each directory), for read, write, create, delete and
 * exec, whether the sandbox the plan builds allows what the policy (its
 * rules resolved as the plan resolves them) denies. Reading metadata is
 * not asked: Landlock does not confine it. Fills *out with the
 * widenings (none: the plan is never wider than the policy on them). */
void lplan_check(struct arena *a, const struct lplan *plan, struct lplan_widening **out,
		 size_t *nout, struct lplan_check_stats *st);
/* "file:line:col: the sandbox would allow ACCESS PATH, which RULE denies" */
void lplan_widening_text(const struct lplan_widening *w, char *buf, size_t size);

/* What a creation puts at a name, for the create guard: an empty
 * directory holds nothing; a file (regular, device, FIFO, socket, a hard
 * link, a renamed non-directory) holds nothing below it; a tree (a
 * symlink, a renamed directory) may bring names below it. */
enum lplan_mk { LPLAN_MK_DIR, LPLAN_MK_FILE, LPLAN_MK_TREE };

/* Whether creating `path` (absolute, resolved) as `kind` is refused by
 * the plan's create guard: the path matches a guard and the policy
 * denies creating it; or it is a file or tree strictly above a guard's
 * literal directory (a `.git` file that points git elsewhere, a moved
 * tree holding `.claude/settings.json`); or it is a tree that could hold
 * a later match of a guard's glob part. *why is the rule, for messages. */
bool lplan_guard_denies(const struct lplan *plan, const char *path, enum lplan_mk kind,
			const struct ir_rule **why);

/* Whether `path` (absolute, resolved) lies in the tree of a protect that
 * guards it, excepts or not: there a symbolic link may not be made. The
 * excepts name files an agent or git outside the cage goes on writing
 * (~/.claude/history.jsonl, .git/logs/HEAD), and a link made there would
 * send that write to a file the command chose (~/.bashrc). *why is the
 * protect. */
bool lplan_guard_in_protect(const struct lplan *plan, const char *path,
			    const struct ir_rule **why);

/* Orders paths component by component ("/a" < "/a/b" < "/a.json"): the
 * order of plan->nodes, in which a node's descendants follow it. */
int lplan_path_cmp(const char *x, const char *y);

/* A rule's location and text, "file:line:col: allow read ~/x", for messages. */
void lplan_rule_text(const struct ir_rule *r, char *buf, size_t size);

/* ---- the plan artifact (lplan_save.c, compiler/format/pf.h) ---- */

struct pf_dep;
struct pf_plan;
struct pf_key;
/* What the build (and a plan check after it) looked at on the disk:
 * the plan's dependencies. *unstable: some path answered differently
 * during the build, so no one state of the disk explains the plan and
 * it must not be kept. */
const struct pf_dep *lplan_deps(const struct lplan *plan, size_t *n, bool *unstable);
/* XXH3-128 over everything of the profile's rules a plan build reads. */
void lplan_profile_digest(const struct ir_profile *p, uint64_t *lo, uint64_t *hi);
/* The plan of profile `p` as an artifact (strings shared with the plan;
 * the key's fields are the caller's). */
void lplan_to_pf(struct arena *a, const struct lplan *plan, const struct ir_profile *p,
		 struct pf_plan *out);
/* A plan read from an artifact, bound to profile `p` (the one its key
 * names): false with the reason in err when it does not fit it (a rule
 * index of another kind of rule, nodes out of order, a parent that is not
 * the nearest ancestor). Check errors and notes are as written. The
 * plan borrows in's strings: they must live as long as it does.
 * `with_rprof`: also bind the profile the plan was built from (rprof),
 * which only lplan_check and lplan_artifact read. A launch enforcing a
 * kept plan needs neither (the plan was checked when it was built, and
 * its key and dependencies say it is that plan) and leaves it out: about
 * 70 KB fewer to write with examples/claude-code.cage. */
bool lplan_from_pf(struct arena *a, const struct pf_plan *in, const struct ir_profile *p,
		   bool with_rprof, struct lplan *plan, char *err, size_t errlen);
/* The artifact of a plan built and checked just now, with its key for
 * profile `p` of policy `pol` (uid, cwd: the caller's). */
void lplan_artifact(struct arena *a, const struct lplan *plan, const struct ir_policy *pol,
		    const struct ir_profile *p, uint32_t uid, const char *cwd, struct pf_plan *out);
/* Only the key (no plan): what a launcher looks the artifact up by. */
void lplan_key(struct arena *a, const struct ir_policy *pol, const struct ir_profile *p,
	       uint32_t uid, const char *cwd, struct pf_key *out);

/* The "linux" backend: builds the plan and prints it (errors included). */
bool lplan_emit(const struct ir_policy *pol, const struct ir_profile *prof, FILE *out,
		struct arena *a, const char **err);

/* The "plan" backend: builds the plan, checks it against the policy and
 * writes its artifact (uid and cwd: this process's). Fails, writing
 * nothing, where cagerun would refuse the plan. */
bool lplan_emit_artifact(const struct ir_policy *pol, const struct ir_profile *prof, FILE *out,
			 struct arena *a, const char **err);

/* Text form of the plan, one line per grant and mount (cagec --emit linux). */
void lplan_print(FILE *out, const struct lplan *plan);

#endif
