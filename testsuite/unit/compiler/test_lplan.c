/*
 * test_lplan.c - the Linux plan against a fixture tree made per test:
 * which Landlock grants and which mounts each kind of policy gets, and
 * which rules it refuses as inexpressible. The plan is what the launcher
 * applies, so these are the exact-meaning rules in unit form; the
 * qualification suite shows the kernel doing what the plan says.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lplan.h"
#include "cage.h"
#include "fx_policy.h"
#include "fx_tree.h"
#include "policy.h"

static struct fx_tree fx;

static void setup(void)
{
	fx_make(&fx, "lplan");
	fx_mkdirs(&fx, "w");
	fx_mkdirs(&fx, "w/src");
	fx_file(&fx, "w/src/a.c", "", 0644);
	fx_mkdirs(&fx, "w/.git");
	fx_mkdirs(&fx, "w/.git/hooks");
	fx_file(&fx, "w/.git/hooks/pre-commit", "", 0644);
	fx_mkdirs(&fx, "w/bin");
	fx_mkdirs(&fx, "w/a");
	fx_mkdirs(&fx, "w/a/b");
	fx_mkdirs(&fx, "w/a/b/c");
	fx_mkdirs(&fx, "h");
	fx_mkdirs(&fx, "h/.ssh");
	fx_file(&fx, "h/.ssh/id_rsa", "", 0644);
	fx_file(&fx, "h/notes.txt", "", 0644);
	fx_file(&fx, "h/todo.txt", "", 0644);
	fx_file(&fx, "h/.netrc", "", 0644);
	char target[PATH_MAX];
	fx_at(&fx, target, "w");
	fx_link(&fx, target, "link");
}

static void teardown(void)
{
	fx_remove(&fx);
}

struct fixture {
	cage_policy *pol;
	struct lplan plan;
};

static void plan_for(struct fixture *f, const char *body)
{
	f->pol = fx_policy(&fx, body);
	cage_print_diagnostics(f->pol, stderr, false);
	cr_assert_eq(cage_error_count(f->pol), 0);
	const char *err = NULL;
	cr_assert(lplan_build(&f->pol->arena, f->pol->ir->selected, &f->plan, &err));
}

static const struct lplan_node *node(const struct fixture *f, const char *rel)
{
	char p[512];
	snprintf(p, sizeof p, "%s%s%s", fx.root, *rel ? "/" : "", rel);
	for (size_t i = 0; i < f->plan.nnodes; i++)
		if (!strcmp(f->plan.nodes[i].path, p))
			return &f->plan.nodes[i];
	return NULL;
}

static uint64_t grant(const struct fixture *f, const char *rel)
{
	const struct lplan_node *n = node(f, rel);
	return n ? n->grant : 0;
}

static unsigned mounts(const struct fixture *f, const char *rel)
{
	const struct lplan_node *n = node(f, rel);
	return n ? n->mount : 0;
}

static bool error_mentions(const struct fixture *f, const char *needle)
{
	for (size_t i = 0; i < f->plan.nerrors; i++)
		if (strstr(f->plan.errors[i].text, needle))
			return true;
	return false;
}

TestSuite(lplan, .init = setup, .fini = teardown);

Test(lplan, subtree_read_is_one_grant_and_no_mount)
{
	struct fixture f;
	plan_for(&f, "allow read \"{r}/w/**\"");
	cr_expect_eq(grant(&f, "w"), LP_READ | LP_IOCTL_DEV);
	cr_expect_eq(f.plan.nmounts, 0);
	cr_expect_eq(f.plan.nerrors, 0);
	cage_policy_free(f.pol);
}

Test(lplan, write_deny_inside_a_writable_tree_is_a_readonly_mount)
{
	struct fixture f;
	plan_for(&f, "allow read write r\ndeny write \"{r}/w/.git/hooks/**\"");
	cr_expect(grant(&f, "") & LP_MAKE_REG);
	cr_expect(mounts(&f, "w/.git/hooks") & LPM_RDONLY);
	/* .git can be renamed by the command: it must be a mount point too,
	 * and so must w (its parent, the root, is writable). */
	cr_expect(mounts(&f, "w/.git") & LPM_PIN, "the rename attack on .git");
	cr_expect(mounts(&f, "w") & LPM_PIN);
	cr_expect_eq(f.plan.nerrors, 0);
	cage_policy_free(f.pol);
}

Test(lplan, read_deny_hides_and_protect_wins_in_any_order)
{
	struct fixture f;
	plan_for(&f, "protect \"{r}/h/.ssh/**\"\nallow read \"{r}/h/**\"");
	cr_expect(grant(&f, "h") & LP_READ_FILE);
	cr_expect(mounts(&f, "h/.ssh") & LPM_HIDE);
	cr_expect_eq(f.plan.nerrors, 0);
	cage_policy_free(f.pol);
}

Test(lplan, a_protected_file_is_hidden_alone)
{
	struct fixture f;
	plan_for(&f, "allow read \"{r}/h/**\"\nprotect \"{r}/h/.netrc\"");
	cr_expect(mounts(&f, "h/.netrc") & LPM_HIDE);
	cr_expect_eq(mounts(&f, "h/notes.txt"), 0);
	cage_policy_free(f.pol);
}

Test(lplan, exec_deny_is_a_noexec_mount_that_keeps_writes)
{
	struct fixture f;
	plan_for(&f, "allow read write exec \"{r}/w/**\"\ndeny exec \"{r}/w/src/**\"");
	unsigned m = mounts(&f, "w/src");
	cr_expect(m & LPM_NOEXEC);
	cr_expect(!(m & LPM_RDONLY));
	cage_policy_free(f.pol);
}

Test(lplan, deep_deny_pins_every_renamable_ancestor)
{
	struct fixture f;
	plan_for(&f, "allow read write \"{r}/w/**\"\ndeny write \"{r}/w/a/b/c/**\"");
	cr_expect(mounts(&f, "w/a/b/c") & LPM_RDONLY);
	cr_expect(mounts(&f, "w/a/b") & LPM_PIN);
	cr_expect(mounts(&f, "w/a") & LPM_PIN);
	cr_expect_eq(mounts(&f, "w") & LPM_PIN, 0, "w's parent is not writable");
	cage_policy_free(f.pol);
}

Test(lplan, a_reopened_subtree_inside_a_readonly_one_is_a_fresh_mount)
{
	struct fixture f;
	plan_for(&f, "allow read write \"{r}/w/**\"\ndeny write \"{r}/w/a/**\"\n"
		     "allow write \"{r}/w/a/b/**\"");
	cr_expect(mounts(&f, "w/a") & LPM_RDONLY);
	cr_expect(mounts(&f, "w/a/b") & LPM_FRESH);
	cr_expect_eq(f.plan.nerrors, 0);
	cage_policy_free(f.pol);
}

Test(lplan, refuses_what_a_mount_cannot_express)
{
	struct fixture f;
	plan_for(&f, "allow read write \"{r}/w/**\"\ndeny delete \"{r}/w/src/**\"");
	cr_expect(error_mentions(&f, "only part of writing"));
	cage_policy_free(f.pol);

	plan_for(&f, "allow read write \"{r}/w/**\"\ndeny read \"{r}/w/src/**\"");
	cr_expect(error_mentions(&f, "cannot deny reading"), "write-only below a read deny");
	cage_policy_free(f.pol);

	plan_for(&f, "allow read \"{r}/w/**\"\ndeny read \"{r}/w/src/**\"\n"
		     "allow read \"{r}/w/src/x/**\"");
	cage_policy_free(f.pol);
}

static bool guards(const struct fixture *f, const char *rel, enum lplan_mk kind)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", fx.root, rel);
	return lplan_guard_denies(&f->plan, p, kind, NULL);
}

Test(lplan, a_missing_denied_path_the_command_could_create_is_refused)
{
	struct fixture f;
	/* Reading denied, creating allowed: once created it would be readable. */
	plan_for(&f, "allow read write \"{r}/w/**\"\ndeny read \"{r}/w/.env\"");
	cr_expect(error_mentions(&f, "does not exist"));
	cr_expect_eq(f.plan.nguards, 0);
	cage_policy_free(f.pol);

	plan_for(&f, "allow read \"{r}/w/**\"\ndeny read \"{r}/w/new/**\"");
	cr_expect_eq(f.plan.nerrors, 0, "nothing can create it: nothing to enforce");
	cage_policy_free(f.pol);
}

Test(lplan, a_missing_name_whose_creation_is_denied_is_guarded)
{
	const enum lplan_mk D = LPLAN_MK_DIR, F = LPLAN_MK_FILE, T = LPLAN_MK_TREE;
	struct fixture f;
	plan_for(&f, "allow read write \"{r}/w/**\"\ndeny write \"{r}/w/new/hooks/**\"\n"
		     "deny write \"{r}/w/.envrc\"\ndeny write \"{r}/w/.c/settings.json\"\n"
		     "deny write \"{r}/w/.git/modules/**/hooks/**\"\n"
		     "allow write \"{r}/w/.c/settings.json.example\"");
	cr_expect_eq(f.plan.nerrors, 0);
	cr_expect_eq(f.plan.nguards, 4);
	/* The names themselves, and what is below a guarded tree. */
	cr_expect(guards(&f, "w/.envrc", F));
	cr_expect(guards(&f, "w/.envrc", D));
	cr_expect(guards(&f, "w/new/hooks", D));
	cr_expect(guards(&f, "w/new/hooks/pre-commit", F));
	cr_expect(guards(&f, "w/.c/settings.json", F));
	cr_expect(guards(&f, "w/.git/modules/a/b/hooks/x", F));
	/* Strictly above a guarded name: an empty directory may be made,
	 * nothing else (a moved tree, a link, a file) may take the name. */
	cr_expect(!guards(&f, "w/new", D));
	cr_expect(guards(&f, "w/new", F));
	cr_expect(guards(&f, "w/new", T));
	cr_expect(!guards(&f, "w/.c", D));
	cr_expect(guards(&f, "w/.c", F));
	cr_expect(guards(&f, "w/.git", F));
	cr_expect(guards(&f, "w/.git/modules", T));
	/* Inside a glob's part, only a tree could bring a match along: git
	 * writes the files of a submodule's repository there. */
	cr_expect(!guards(&f, "w/.git/modules/sub", D));
	cr_expect(!guards(&f, "w/.git/modules/sub/HEAD", F));
	cr_expect(guards(&f, "w/.git/modules/sub", T));
	/* Everything else, and what a later rule allows again. */
	cr_expect(!guards(&f, "w/.envrc2", F));
	cr_expect(!guards(&f, "w/src/.envrc", T));
	cr_expect(!guards(&f, "w/.c/other.json", T));
	cr_expect(!guards(&f, "w/.c/settings.json.example", F));
	cr_expect(!guards(&f, "w/.git/description", T));
	cage_policy_free(f.pol);
}

Test(lplan, existing_directories_above_a_guarded_name_are_pinned)
{
	struct fixture f;
	/* w/.git exists, w/.git/modules does not: the IR pins .git (moving
	 * it aside would carry the guarded names out of their rules), so the
	 * plan makes it a mount point although nothing below it is mounted. */
	plan_for(&f, "allow read write \"{r}/w/**\"\n"
		     "deny write \"{r}/w/.git/modules/**/hooks/**\"\n"
		     "deny write \"{r}/w/a/b/new/x\"");
	cr_expect_eq(f.plan.nerrors, 0);
	cr_expect(mounts(&f, "w/.git") & LPM_PIN);
	cr_expect(mounts(&f, "w/a") & LPM_PIN);
	cr_expect(mounts(&f, "w/a/b") & LPM_PIN);
	/* w's parent is not writable: w cannot be moved, no pin needed. */
	cr_expect(!(mounts(&f, "w") & LPM_PIN));
	cr_expect(!(mounts(&f, "w/src") & LPM_PIN));
	cage_policy_free(f.pol);
}

Test(lplan, exact_files_and_globs_are_granted_one_by_one)
{
	struct fixture f;
	plan_for(&f, "allow read \"{r}/h/*.txt\"\nallow read write \"{r}/h/.netrc\"");
	cr_expect_eq(grant(&f, "h/notes.txt"), LP_READ_FILE | LP_IOCTL_DEV);
	cr_expect_eq(grant(&f, "h/todo.txt"), LP_READ_FILE | LP_IOCTL_DEV);
	cr_expect_eq(grant(&f, "h/.netrc"),
		     LP_READ_FILE | LP_WRITE_FILE | LP_TRUNCATE | LP_IOCTL_DEV,
		     "a file carries file rights only");
	cr_expect_eq(grant(&f, "h"), 0, "the directory itself gets nothing");
	cage_policy_free(f.pol);
}

Test(lplan, rules_follow_symlinks_as_the_kernel_does)
{
	struct fixture f;
	plan_for(&f, "allow read \"{r}/link/**\"");
	cr_expect(grant(&f, "w") & LP_READ_FILE, "the grant lands on the link's target");
	cr_expect_null(node(&f, "link"));
	cage_policy_free(f.pol);
}

Test(lplan, loopback_ports_and_unix_sockets)
{
	struct fixture f;
	plan_for(&f, "allow connect \"localhost:3000\", \"localhost:8000-8002\"\n"
		     "deny connect \"localhost:8001\"");
	cr_expect_eq(f.plan.nports, 3);
	for (size_t i = 0; i < f.plan.nports; i++)
		cr_expect_neq(f.plan.ports[i].port, 8001, "a later deny wins");
	cage_policy_free(f.pol);

	plan_for(&f, "allow connect \"localhost\"");
	cr_expect(error_mentions(&f, "every loopback port"));
	cage_policy_free(f.pol);

	plan_for(&f, "allow unix \"/run/docker.sock\"");
	cr_expect(error_mentions(&f, "unix sockets"));
	cage_policy_free(f.pol);
}

Test(lplan, a_missing_tree_the_command_may_create_is_created_first)
{
	struct fixture f;
	plan_for(&f, "allow read write \"{r}/h/.agent/**\"\nallow read \"{r}/h/.cache/**\"");
	char want[512];
	snprintf(want, sizeof want, "%s/h/.agent", fx.root);
	cr_assert_eq(f.plan.nmkdirs, 1);
	cr_expect_str_eq(f.plan.mkdirs[0], want);
	cr_expect(grant(&f, "h/.agent") & LP_MAKE_REG, "granted as if it existed");
	cr_expect_eq(grant(&f, "h/.cache"), 0, "read-only: nothing to create, nothing granted");
	bool noted = false;
	for (size_t i = 0; i < f.plan.nnotes; i++)
		noted |= strstr(f.plan.notes[i].text, "h/.cache does not exist") != NULL;
	cr_expect(noted, "the skipped grant is reported");
	cage_policy_free(f.pol);

	plan_for(&f, "allow read write \"{r}/nowhere/deeper/**\"");
	cr_expect_eq(f.plan.nmkdirs, 0, "only when the parent exists");
	cage_policy_free(f.pol);
}

Test(lplan, a_mount_inside_another_carries_its_flags_too)
{
	/* Each mount is a bind of its own: what is below it has its flags
	 * only, so a no-exec mount inside a read-only tree must be read-only
	 * too, and a read-only one inside a no-exec tree no-exec too. */
	struct fixture f;
	plan_for(&f, "allow read write exec \"{r}/w/**\"\ndeny write \"{r}/w/a/**\"\n"
		     "deny exec \"{r}/w/a/b/**\"\ndeny exec \"{r}/w/src/**\"\n"
		     "deny write \"{r}/w/src/sub/**\"");
	cr_expect_eq(f.plan.nerrors, 0);
	cr_expect_eq(mounts(&f, "w/a/b") & (LPM_RDONLY | LPM_NOEXEC), LPM_RDONLY | LPM_NOEXEC);
	cage_policy_free(f.pol);
	fx_mkdirs(&fx, "w/src/sub");
	plan_for(&f, "allow read write exec \"{r}/w/**\"\ndeny exec \"{r}/w/src/**\"\n"
		     "deny write \"{r}/w/src/sub/**\"");
	cr_expect_eq(mounts(&f, "w/src/sub") & (LPM_RDONLY | LPM_NOEXEC), LPM_RDONLY | LPM_NOEXEC);
	cage_policy_free(f.pol);
}

Test(lplan, a_file_that_may_not_be_made_anew_is_pinned)
{
	/* Deleting it is allowed, creating it is not: once deleted, Landlock
	 * could not refuse the new name, so it stays (a mount point). */
	struct fixture f;
	plan_for(&f, "allow read write \"{r}/w/**\"\ndeny create \"{r}/w/src/a.c\"");
	cr_expect(mounts(&f, "w/src/a.c") & LPM_PIN);
	cr_expect_eq(f.plan.nerrors, 0);
	cage_policy_free(f.pol);
}

Test(lplan, a_glob_that_denies_later_names_less_than_their_directory_is_refused)
{
	/* A *.json made later would be deletable: Landlock grants what the
	 * directory grants. Denying creating them too makes it a guard. */
	struct fixture f;
	plan_for(&f, "allow read write \"{r}/w/**\"\nprotect delete \"{r}/w/*.json\"");
	cr_expect(error_mentions(&f, "a name made later that matches"));
	cage_policy_free(f.pol);
	plan_for(&f, "allow read write \"{r}/w/**\"\nprotect delete create \"{r}/w/*.json\"");
	cr_expect_eq(f.plan.nerrors, 0);
	cr_expect_gt(f.plan.nguards, 0);
	cage_policy_free(f.pol);
}

/* A protect with excepts: what it holds and exists is mounted read-only
 * entry by entry, the directory holding both is only pinned, the excepts
 * get nothing, and new names are the create guard's, which lets what the
 * excepts name be made and refuses the rest. */
Test(lplan, a_protect_with_excepts_mounts_what_it_holds)
{
	const enum lplan_mk F = LPLAN_MK_FILE, D = LPLAN_MK_DIR;
	fx_mkdirs(&fx, "w/.git/objects");
	fx_mkdirs(&fx, "w/.git/objects/ab");
	fx_file(&fx, "w/.git/config", "", 0644);
	fx_file(&fx, "w/.git/index", "", 0644);
	struct fixture f;
	plan_for(&f, "allow read write \"{r}/w/**\"\n"
		     "protect write \"{r}/w/.git/**\" except \"{r}/w/.git/objects/**\",\n"
		     "    \"{r}/w/.git/index\", \"{r}/w/.git/index.lock\"");
	cr_expect_eq(f.plan.nerrors, 0);
	cr_expect_eq(mounts(&f, "w/.git"), LPM_PIN, "pinned, not read-only: locks are made in it");
	cr_expect(mounts(&f, "w/.git/hooks") & LPM_RDONLY);
	cr_expect(mounts(&f, "w/.git/config") & LPM_RDONLY);
	cr_expect_eq(mounts(&f, "w/.git/objects"), 0);
	cr_expect_eq(mounts(&f, "w/.git/index"), 0);
	cr_expect(guards(&f, "w/.git/commondir", F));
	cr_expect(guards(&f, "w/.git/info", D));
	cr_expect(!guards(&f, "w/.git/index.lock", F));
	cr_expect(!guards(&f, "w/.git/objects/ab/cd", F));
	cr_expect(!guards(&f, "w/.git/objects/cd", D));
	cage_policy_free(f.pol);
}

/* Reached through a symlink, the tree is walked where it is, and the
 * excepts move with it. */
Test(lplan, a_protect_with_excepts_follows_a_symlinked_tree)
{
	const enum lplan_mk F = LPLAN_MK_FILE;
	fx_mkdirs(&fx, "w/.git/objects");
	struct fixture f;
	plan_for(&f, "allow read write \"{r}/w/**\"\n"
		     "protect write \"{r}/link/.git/**\" except \"{r}/link/.git/objects/**\"");
	cr_expect_eq(f.plan.nerrors, 0);
	cr_expect(mounts(&f, "w/.git/hooks") & LPM_RDONLY);
	cr_expect_eq(mounts(&f, "w/.git/objects"), 0);
	cr_expect(!guards(&f, "w/.git/objects/x", F));
	cr_expect(guards(&f, "w/.git/config", F));
	cage_policy_free(f.pol);
}

/* A tree too big to walk entry by entry is refused, not planned wider. */
Test(lplan, a_protect_with_excepts_over_a_huge_tree_is_refused)
{
	fx_mkdirs(&fx, "w/big");
	char rel[64];
	for (int i = 0; i <= 20000; i++) {
		snprintf(rel, sizeof rel, "w/big/f%d", i);
		fx_file(&fx, rel, "", 0644);
	}
	struct fixture f;
	plan_for(&f, "allow read write \"{r}/w/**\"\n"
		     "protect write \"{r}/w/big/**\" except \"{r}/w/big/*/keep\"");
	cr_expect(error_mentions(&f, "too big to plan entry by entry"));
	cage_policy_free(f.pol);
}

/* The walk decides which entries of a protect's tree get mounts by the
 * relations of each except to each entry (lplan_except.c, with shortcuts
 * for exact, subtree and single-depth patterns): over random excepts on
 * a git-like tree, the plan must answer every write and create exactly as
 * the evaluator does. */
Test(lplan, a_protect_with_random_excepts_plans_what_the_ir_says)
{
	static const char *const tree[] = {
		"w/.git/objects", "w/.git/objects/ab", "w/.git/refs", "w/.git/refs/heads",
		"w/.git/info", "w/.git/logs", "w/.git/modules", "w/.git/modules/a",
		"w/.git/modules/a/b", "w/.git/modules/a/b/hooks", "w/.git/modules/a/b/objects",
		"w/.git/modules/objects", "w/.git/rebase-merge",
	};
	static const char *const files[] = {
		"w/.git/config", "w/.git/HEAD", "w/.git/ORIG_HEAD", "w/.git/index",
		"w/.git/objects/ab/cd", "w/.git/refs/heads/main", "w/.git/info/exclude",
		"w/.git/logs/HEAD", "w/.git/modules/a/b/config", "w/.git/modules/a/b/HEAD",
		"w/.git/modules/a/b/hooks/x", "w/.git/modules/a/b/objects/o",
		"w/.git/modules/objects/config", "w/.git/rebase-merge/done", "w/.git/x.lock",
	};
	static const char *const pool[] = {
		"objects/**", "refs/**", "index", "HEAD", "*_HEAD", "*.lock", "info/refs",
		"modules/**/objects/**", "modules/**/HEAD", "modules/*/b/hooks/**", "logs/**",
		"**/done", "rebase-*/**", "modules/**/config", "modules/a", "info/*",
	};
	for (size_t i = 0; i < sizeof tree / sizeof *tree; i++)
		fx_mkdirs(&fx, tree[i]);
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		fx_file(&fx, files[i], "", 0644);
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	size_t checked = 0, denied = 0;
	for (int round = 0; round < 40; round++) {
		char body[4096];
		int n = snprintf(body, sizeof body, "allow read write \"{r}/w/**\"\n"
					      "protect write \"{r}/w/.git/**\" except ");
		unsigned k = 1 + (unsigned)(seed % 5);
		for (unsigned j = 0; j < k; j++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			n += snprintf(body + n, sizeof body - (size_t)n, "%s\"{r}/w/.git/%s\"",
				      j ? ", " : "", pool[(seed >> 33) % (sizeof pool / sizeof *pool)]);
		}
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		struct fixture f;
		plan_for(&f, body);
		cr_assert_eq(f.plan.nerrors, 0, "%s", body);
		const struct ir_profile *p = f.pol->ir->selected;
		for (size_t i = 0; i < sizeof files / sizeof *files + sizeof tree / sizeof *tree; i++) {
			bool is_file = i < sizeof files / sizeof *files;
			const char *rel = is_file ? files[i] : tree[i - sizeof files / sizeof *files];
			char path[512];
			snprintf(path, sizeof path, "%s/%s%s", fx.root, rel, is_file ? "" : "/new");
			uint32_t bit = is_file ? IR_A_WRITE : IR_A_CREATE;
			struct lplan_answer a;
			struct ir_verdict v;
			cr_assert(lplan_query(&f.pol->arena, &f.plan, bit, path, &a));
			ir_eval_path(p, bit, path, &v);
			bool ans = a.allowed;
			if (!is_file && a.allowed)
				ans = !lplan_guard_denies(&f.plan, path, LPLAN_MK_FILE, NULL);
			cr_expect_eq(ans, v.allowed, "%s %s: plan %d, IR %d\n%s",
				     is_file ? "write" : "create", path, ans, v.allowed, body);
			checked++;
			denied += !v.allowed;
		}
		cage_policy_free(f.pol);
	}
	cr_expect(denied > 50 && denied < checked - 50, "lopsided: %zu of %zu denied", denied, checked);
}
