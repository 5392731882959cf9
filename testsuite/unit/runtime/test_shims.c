/*
 * test_shims.c - version managers' shims through the command layer's
 * resolver (runtime/layers/shims.c via cmd_resolve): what runs in the
 * shim's place, the PATH the manager would give it, the trees granted,
 * and the refusals (a plugin name or package name that would leave the
 * manager's tree, an extends cycle). testsuite/layers/shims_test.sh runs
 * the same layouts through cagerun.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmdres.h"
#include "fx_tree.h"

static struct fx_tree fx;
static char oldcwd[PATH_MAX];

static void setup(void)
{
	fx_make(&fx, "shims");
	cr_assert(getcwd(oldcwd, sizeof oldcwd));
	setenv("HOME", fx.root, 1);
	unsetenv("VOLTA_HOME");
	unsetenv("ASDF_DATA_DIR");
	unsetenv("ASDF_NODEJS_VERSION");
}

static void teardown(void)
{
	cr_assert(chdir(oldcwd) == 0);
	fx_remove(&fx);
}

static void cd(const char *rel)
{
	char p[PATH_MAX];
	fx_at(&fx, p, rel);
	cr_assert(chdir(p) == 0, "%s", p);
}

static bool grants_tree(const struct cmd_res *r, const char *rel)
{
	char p[PATH_MAX];
	fx_at(&fx, p, rel);
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->g[i].path, p) && r->g[i].tree)
			return true;
	return false;
}

static enum cmd_status resolve(const char *cmd, const char *bin, struct cmd_res *r, char *err,
			       size_t errlen)
{
	char path[PATH_MAX + 32];
	fx_at(&fx, path, bin);
	strcat(path, ":/usr/bin:/bin");
	return cmd_resolve(cmd, path, r, err, errlen);
}

static const char node_prog[] = "\177ELF a stand-in\n";

TestSuite(shims, .init = setup, .fini = teardown);

Test(shims, volta_project_over_default)
{
	fx_file(&fx, ".volta/bin/volta-shim", node_prog, 0755);
	fx_link(&fx, "volta-shim", ".volta/bin/node");
	fx_file(&fx, ".volta/tools/image/node/18.0.0/bin/node", node_prog, 0755);
	fx_file(&fx, ".volta/tools/image/node/20.0.0/bin/node", node_prog, 0755);
	fx_file(&fx, ".volta/tools/user/platform.json", "{\"node\":{\"runtime\":\"18.0.0\",\"npm\":null}}", 0644);
	fx_file(&fx, "ws/package.json", "{\"volta\":{\"node\":\"20.0.0\"}}", 0644);
	cd("ws");
	struct cmd_res r;
	char err[4096], want[PATH_MAX];
	cr_assert_eq(resolve("node", ".volta/bin", &r, err, sizeof err), CMD_OK, "%s", err);
	fx_at(&fx, want, ".volta/tools/image/node/20.0.0/bin/node");
	cr_assert_str_eq(r.exec, want);
	fx_at(&fx, want, ".volta/tools/image/node/20.0.0/bin");
	cr_assert_str_eq(r.path_prefix, want);
	cr_assert(grants_tree(&r, ".volta/tools/image/node/20.0.0"));
	cr_assert_eq(r.n, 1);
	char *text = cmd_layer_text(&r, "node");
	cr_assert(text && strstr(text, "# a version manager's shim: cagerun runs "));
	free(text);
	cmd_res_free(&r);
	/* outside the project: the default */
	cd(".");
	cr_assert_eq(resolve("node", ".volta/bin", &r, err, sizeof err), CMD_OK, "%s", err);
	cr_assert(strstr(r.exec, "/node/18.0.0/bin/node"), "%s", r.exec);
	cmd_res_free(&r);
}

Test(shims, volta_extends_cycle)
{
	fx_file(&fx, ".volta/bin/volta-shim", node_prog, 0755);
	fx_link(&fx, "volta-shim", ".volta/bin/node");
	fx_file(&fx, "ws/package.json", "{\"volta\":{\"extends\":\"./other.json\"}}", 0644);
	fx_file(&fx, "ws/other.json", "{\"volta\":{\"extends\":\"./package.json\"}}", 0644);
	cd("ws");
	struct cmd_res r;
	char err[4096];
	cr_assert_eq(resolve("node", ".volta/bin", &r, err, sizeof err), CMD_REFUSED);
	cr_assert(strstr(err, "\"extends\" in a row"), "%s", err);
	cmd_res_free(&r);
	/* an extends naming nothing: the file that names it is in the message */
	fx_file(&fx, "ws/other.json", "{\"volta\":{\"extends\":\"./gone.json\"}}", 0644);
	char want[PATH_MAX + 64], other[PATH_MAX];
	fx_at(&fx, other, "ws/other.json");
	snprintf(want, sizeof want, "named by \"extends\" in %s: No such file", other);
	cr_assert_eq(resolve("node", ".volta/bin", &r, err, sizeof err), CMD_REFUSED);
	cr_assert(strstr(err, want), "%s", err);
	cmd_res_free(&r);
}

Test(shims, volta_package_name_stays_in_images)
{
	fx_file(&fx, ".volta/bin/volta-shim", node_prog, 0755);
	fx_link(&fx, "volta-shim", ".volta/bin/tool");
	fx_file(&fx, ".volta/tools/user/bins/tool.json",
	             "{\"name\":\"tool\",\"package\":\"@a/../../x\",\"platform\":{\"node\":\"20.0.0\"}}", 0644);
	cd(".");
	struct cmd_res r;
	char err[4096];
	cr_assert_eq(resolve("tool", ".volta/bin", &r, err, sizeof err), CMD_REFUSED);
	cr_assert(strstr(err, "names no package"), "%s", err);
	cmd_res_free(&r);
}

Test(shims, asdf_env_over_files)
{
	fx_file(&fx, ".asdf/shims/node",
	             "#!/usr/bin/env bash\n# asdf-plugin: nodejs 18.0.0\n# asdf-plugin: nodejs 20.0.0\n"
	             "exec asdf exec \"node\" \"$@\"\n", 0755);
	fx_file(&fx, ".asdf/installs/nodejs/18.0.0/bin/node", node_prog, 0755);
	fx_file(&fx, ".asdf/installs/nodejs/20.0.0/bin/node", node_prog, 0755);
	fx_file(&fx, "ws/.tool-versions", "nodejs 20.0.0\n", 0644);
	cd("ws");
	struct cmd_res r;
	char err[4096];
	cr_assert_eq(resolve("node", ".asdf/shims", &r, err, sizeof err), CMD_OK, "%s", err);
	cr_assert(strstr(r.exec, "/nodejs/20.0.0/bin/node"), "%s", r.exec);
	cr_assert(grants_tree(&r, ".asdf/installs/nodejs/20.0.0"));
	cmd_res_free(&r);
	setenv("ASDF_NODEJS_VERSION", "18.0.0", 1);
	cr_assert_eq(resolve("node", ".asdf/shims", &r, err, sizeof err), CMD_OK, "%s", err);
	cr_assert(strstr(r.exec, "/nodejs/18.0.0/bin/node"), "%s", r.exec);
	cmd_res_free(&r);
	/* a version the shim does not list is not used, even if installed */
	setenv("ASDF_NODEJS_VERSION", "19.0.0", 1);
	fx_file(&fx, ".asdf/installs/nodejs/19.0.0/bin/node", node_prog, 0755);
	cr_assert_eq(resolve("node", ".asdf/shims", &r, err, sizeof err), CMD_REFUSED);
	cr_assert(strstr(err, "asdf: nodejs 19.0.0 (from ASDF_NODEJS_VERSION) is not installed"),
		  "%s", err);
	cmd_res_free(&r);
}

Test(shims, asdf_plugin_name_stays_in_installs)
{
	fx_file(&fx, ".asdf/shims/node",
	             "#!/usr/bin/env bash\n# asdf-plugin: ../../x 1.0\nexec asdf exec \"node\" \"$@\"\n", 0755);
	fx_file(&fx, "ws/.tool-versions", "../../x 1.0\n", 0644);
	cd("ws");
	struct cmd_res r;
	char err[4096];
	cr_assert_eq(resolve("node", ".asdf/shims", &r, err, sizeof err), CMD_REFUSED);
	cr_assert(strstr(err, ":2: not a `# asdf-plugin: PLUGIN VERSION` line"), "%s", err);
	cmd_res_free(&r);
}

Test(shims, shim_by_path_in_a_shebang)
{
	fx_file(&fx, ".volta/bin/volta-shim", node_prog, 0755);
	fx_link(&fx, "volta-shim", ".volta/bin/node");
	char script[PATH_MAX + 64], p[PATH_MAX];
	fx_at(&fx, p, ".volta/bin/node");
	snprintf(script, sizeof script, "#!%s\n", p);
	fx_file(&fx, "bin/tool", script, 0755);
	cd(".");
	struct cmd_res r;
	char err[4096];
	cr_assert_eq(resolve("tool", "bin", &r, err, sizeof err), CMD_REFUSED);
	cr_assert(strstr(err, "is a volta shim run by its path"), "%s", err);
	cmd_res_free(&r);
}

Test(shims, mise_fuzzy_versions)
{
	unsetenv("MISE_DATA_DIR");
	unsetenv("MISE_INSTALLS_DIR");
	unsetenv("MISE_NODE_VERSION");
	unsetenv("XDG_DATA_HOME");
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("MISE_GLOBAL_CONFIG_FILE");
	unsetenv("MISE_CONFIG_DIR");
	fx_file(&fx, "mise-bin/mise", node_prog, 0755);
	fx_mkdirs(&fx, ".local/share/mise/shims");
	char target[PATH_MAX];
	fx_at(&fx, target, "mise-bin/mise");
	fx_link(&fx, target, ".local/share/mise/shims/node");
	static const char *const vers[] = { "18.1.0", "18.10.0", "18.9.0", "20.0.0", "180.0.0" };
	for (size_t i = 0; i < 5; i++) {
		char rel[128];
		snprintf(rel, sizeof rel, ".local/share/mise/installs/node/%s/bin/node", vers[i]);
		fx_file(&fx, rel, node_prog, 0755);
	}
	static const struct {
		const char *toml, *want;
	} cases[] = {
		{ "[tools]\nnode = \"18\"\n", "/node/18.10.0/bin/node" }, /* numeric, not text, order */
		{ "[tools]\nnode = \"prefix:18\"\n", "/node/180.0.0/bin/node" },
		{ "[tools]\nnode = \"latest\"\n", "/node/180.0.0/bin/node" },
		{ "[tools]\nnode = \"18.9.0\"\n", "/node/18.9.0/bin/node" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		fx_file(&fx, "ws/mise.toml", cases[i].toml, 0644);
		cd("ws");
		struct cmd_res r;
		char err[4096];
		cr_assert_eq(resolve("node", ".local/share/mise/shims", &r, err, sizeof err), CMD_OK,
			     "%zu: %s", i, err);
		cr_assert(strstr(r.exec, cases[i].want), "%zu: %s", i, r.exec);
		cmd_res_free(&r);
	}
}
