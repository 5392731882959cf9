/*
 * fuzz_lplan.c - libFuzzer target for the Linux plan builder (compiler/
 * lplan): a policy in, the plan out, and the plan judged against the IR.
 * Built only with -DCAGE_FUZZ=ON and clang (testsuite/cmake/fuzz_lplan.cmake).
 *
 * The input is a policy compiled for Linux with home and workspace inside
 * a fixture tree made once under a temporary directory (no symbolic links
 * in it, so a path there is its own resolved form). Whatever plan results,
 * it must hold together: nodes come ancestors first, each node's parent is
 * the nearest earlier node above it, mkdirs are absolute. And where the
 * plan has no errors (cagerun would run it), the plan never allows more
 * than the policy: for every path the plan names inside the fixture, and
 * for every fixture path, an access the plan allows is one the IR allows.
 * (The plan may allow less: its notes say where it is narrower.) The
 * plan only reads the filesystem; nothing here writes outside the fixture.
 */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cage.h"
#include "lplan.h"
#include "mon_record.h"
#include "policy.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[128];       /* the fixture, resolved */
static char home_def[192];   /* its home */
static char ws_def[256];     /* workspace=... */
static char *fixture[32];    /* every path of the fixture, absolute */
static size_t nfixture;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_lplan: %s\n", what);
		abort();
	}
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_fixture(void)
{
	if (root[0])
		nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void make(const char *rel, bool dir)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	if (dir) {
		check(mkdir(p, 0755) == 0, "mkdir in the fixture");
	} else {
		FILE *f = fopen(p, "w");
		check(f != NULL, "a file in the fixture");
		fclose(f);
	}
	check(nfixture < sizeof fixture / sizeof *fixture, "fixture size");
	fixture[nfixture] = strdup(p);
	check(fixture[nfixture] != NULL, "oom");
	nfixture++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	char tmpl[] = "/tmp/cage-fuzz-lplan.XXXXXX";
	check(mkdtemp(tmpl) != NULL, "mkdtemp");
	check(realpath(tmpl, root) != NULL, "realpath");
	atexit(remove_fixture);
	static const struct {
		const char *rel;
		bool dir;
	} tree[] = {
		{ "home", true },	  { "home/.ssh", true },	  { "home/.ssh/id_ed25519", false },
		{ "home/.cache", true },  { "home/.gitconfig", false },	  { "w", true },
		{ "w/src", true },	  { "w/src/main.c", false },	  { "w/.git", true },
		{ "w/.git/config", false }, { "w/.git/hooks", true },	  { "w/.env", false },
		{ "w/build", true },	  { "w/build/out.o", false },	  { "other", true },
		{ "other/secret", false },
	};
	for (size_t i = 0; i < sizeof tree / sizeof *tree; i++)
		make(tree[i].rel, tree[i].dir);
	snprintf(home_def, sizeof home_def, "%s/home", root);
	snprintf(ws_def, sizeof ws_def, "workspace=%s/w", root);
	return 0;
}

static bool in_fixture(const char *path)
{
	size_t n = strlen(root);
	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Whether the plan mounts something strictly below path. */
static bool mounted_below(const struct lplan *plan, const char *path)
{
	size_t k = strlen(path);
	for (size_t i = 0; i < plan->nnodes; i++) {
		const struct lplan_node *n = &plan->nodes[i];
		if (n->mount && strncmp(n->path, path, k) == 0 && n->path[k] == '/')
			return true;
	}
	return false;
}

/* An access the plan allows must be one the policy allows, among the
 * accesses that mean something for what is at the path, as the launch's
 * check has them (lplan_meaningful: a directory is not written or run,
 * so a policy that denies writing the directory itself, as `deny write
 * "{workspace}/"` does, is not widened by a plan that lets files below it
 * be written). Creating is judged only where nothing is, everything else
 * only where something is: an existing name cannot be made again before
 * it is deleted (and deleting is judged on its own), and nothing can be
 * read, written, run or deleted at a missing name before it is made (the
 * create guard's part, which lplan_query includes). */
static void judge(struct arena *a, const struct lplan *plan, const struct ir_profile *prof,
		  const char *path)
{
	static const uint32_t bits[] = { IR_A_READ, IR_A_WRITE, IR_A_EXEC, IR_A_CREATE, IR_A_DELETE };
	struct stat st;
	bool exists = lstat(path, &st) == 0;
	/* A symlink is judged through, as the command would use it. */
	uint32_t meaningful = lplan_meaningful(exists, exists && S_ISDIR(st.st_mode), false);
	for (size_t i = 0; i < sizeof bits / sizeof *bits; i++) {
		if ((bits[i] == IR_A_CREATE) == exists || !(meaningful & bits[i]))
			continue;
		struct lplan_answer ans;
		if (!lplan_query(a, plan, bits[i], path, &ans) || !ans.allowed)
			continue;
		struct ir_verdict iv;
		ir_eval_path(prof, bits[i], path, &iv);
		/* A delete the rules allow but a pin takes away (the IR keeps a
		 * directory above a denied name from being moved): what the plan
		 * owes is that nothing it mounts below can be moved away. */
		if (!iv.allowed && iv.pin && !mounted_below(plan, path))
			continue;
		if (!iv.allowed) {
			fprintf(stderr, "fuzz_lplan: the plan allows %s on %s, the policy does not\n",
				mon_access_name(bits[i]), path);
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cage_options *o = cage_options_new();
	if (!o)
		return 0;
	cage_options_target(o, "linux");
	cage_options_home(o, home_def);
	cage_options_define(o, ws_def);
	cage_policy *p = cage_load_string("fuzz.cage", (const char *)data, size, o);
	cage_options_free(o);
	if (!p)
		return 0;
	const struct ir_profile *prof = p->ir && cage_error_count(p) == 0 ? p->ir->selected : NULL;
	if (prof && prof->mode != IR_MODE_OFF) {
		struct arena a;
		arena_init(&a);
		struct lplan plan;
		const char *err = NULL;
		if (lplan_build(&a, prof, &plan, &err)) {
			for (size_t i = 0; i < plan.nnodes; i++) {
				const struct lplan_node *n = &plan.nodes[i];
				check(n->path && n->path[0] == '/', "a node's path is absolute");
				if (n->parent == SIZE_MAX)
					continue;
				check(n->parent < i, "ancestors come before descendants");
				const char *pp = plan.nodes[n->parent].path;
				size_t k = strlen(pp);
				check(strcmp(pp, "/") == 0 ? n->path[1] != '\0'
							   : strncmp(n->path, pp, k) == 0 && n->path[k] == '/',
				      "a node's parent is above it");
			}
			for (size_t i = 0; i < plan.nmkdirs; i++)
				check(plan.mkdirs[i][0] == '/', "mkdirs are absolute");
			if (plan.nerrors == 0) {
				for (size_t i = 0; i < plan.nnodes; i++)
					if (in_fixture(plan.nodes[i].path))
						judge(&a, &plan, prof, plan.nodes[i].path);
				for (size_t i = 0; i < nfixture; i++)
					judge(&a, &plan, prof, fixture[i]);
			}
		}
		arena_free(&a);
	}
	cage_policy_free(p);
	return 0;
}
