/*
 * test_cmdres.c - the command layer's resolver (runtime/layers/cmdres.c)
 * on fixture installs in a scratch directory: a symlink to a script with
 * `#!/usr/bin/env node` in a package, npm's sh wrapper, not found, the
 * interpreter depth bound, a directory others may write, a name no policy
 * string can hold; and run_proxy_fit, which sizes the proxy's slots to the
 * open-files limit.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmdres.h"
#include "fx_tree.h"
#include "prx.h"
#include "runcommon.h"

static struct fx_tree fx;

static void setup(void)
{
	fx_make(&fx, "cmdres");
}

static void teardown(void)
{
	fx_remove(&fx);
}

/* Whether r grants `rel` under the fixture root (tree: DIR and all below it). */
static bool grants(const struct cmd_res *r, const char *rel, bool tree)
{
	char p[PATH_MAX];
	if (rel[0] == '/')
		snprintf(p, sizeof p, "%s", rel);
	else
		fx_at(&fx, p, rel);
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->g[i].path, p) && r->g[i].tree == tree)
			return true;
	return false;
}

TestSuite(cmdres, .init = setup, .fini = teardown);

Test(cmdres, nvm_layout)
{
	fx_mkdirs(&fx, "bin");
	fx_mkdirs(&fx, "lib/node_modules/pkg/bin");
	fx_file(&fx, "lib/node_modules/pkg/package.json", "{}\n", 0644);
	fx_file(&fx, "lib/node_modules/pkg/bin/cli.js", "#!/usr/bin/env node\n", 0755);
	fx_file(&fx, "bin/node", "\177ELF not really\n", 0755);
	fx_link(&fx, "../lib/node_modules/pkg/bin/cli.js", "bin/tool");
	char path[PATH_MAX + 16], err[2048], env[PATH_MAX];
	fx_at(&fx, path, "bin");
	strcat(path, ":/usr/bin:/bin");
	struct cmd_res r;
	cr_assert_eq(cmd_resolve("tool", path, &r, err, sizeof err), CMD_OK, "%s", err);
	cr_assert(realpath("/usr/bin/env", env));
	cr_assert(grants(&r, env, false), "env");
	cr_assert(grants(&r, "bin/node", false), "node beside it");
	cr_assert(grants(&r, "lib/node_modules/pkg", true), "the package");
	cr_assert_eq(r.n, 3);
	char *text = cmd_layer_text(&r, "tool");
	cr_assert(text && strstr(text, "allow read exec \""));
	cr_assert(strstr(text, "/lib/node_modules/pkg/**\" # its package"));
	free(text);
	cmd_res_free(&r);
}

Test(cmdres, npm_wrapper)
{
	fx_mkdirs(&fx, "w/pkg");
	fx_file(&fx, "w/pkg/package.json", "{}\n", 0644);
	fx_file(&fx, "w/pkg/cli.js", "// no #! line\n", 0644);
	fx_file(&fx, "w/node", "\177ELF\n", 0755);
	fx_file(&fx, "w/tool",
	             "#!/bin/sh\nbasedir=$(dirname \"$0\")\n"
	             "if [ -x \"$basedir/node\" ]; then\n"
	             "  exec \"$basedir/node\"  \"$basedir/pkg/cli.js\" \"$@\"\nfi\n",
	             0755);
	char path[PATH_MAX], err[2048];
	fx_at(&fx, path, "w");
	struct cmd_res r;
	cr_assert_eq(cmd_resolve("tool", path, &r, err, sizeof err), CMD_OK, "%s", err);
	cr_assert(grants(&r, "w/tool", false), "the wrapper");
	cr_assert(grants(&r, "w/pkg", true), "the script's package");
	cr_assert(grants(&r, "w/node", false), "$basedir/node");
	cmd_res_free(&r);
}

Test(cmdres, not_found)
{
	char path[PATH_MAX], err[2048];
	fx_at(&fx, path, "nowhere");
	struct cmd_res r;
	cr_assert_eq(cmd_resolve("no-such-tool", path, &r, err, sizeof err), CMD_NOT_FOUND);
	cmd_res_free(&r);
}

Test(cmdres, depth_bound)
{
	fx_mkdirs(&fx, "d");
	char text[PATH_MAX + 8], rel[32], err[2048], path[PATH_MAX];
	/* s0 -> s1 -> ... -> s6, each the next's interpreter */
	for (int i = 0; i < 7; i++) {
		char next[PATH_MAX];
		snprintf(rel, sizeof rel, "d/s%d", i + 1);
		fx_at(&fx, next, rel);
		snprintf(text, sizeof text, "#!%s\n", next);
		snprintf(rel, sizeof rel, "d/s%d", i);
		fx_file(&fx, rel, text, 0755);
	}
	fx_file(&fx, "d/s7", "\177ELF\n", 0755);
	fx_at(&fx, path, "d");
	struct cmd_res r;
	cr_assert_eq(cmd_resolve("s0", path, &r, err, sizeof err), CMD_REFUSED);
	cr_assert(strstr(err, "more than 4 interpreters deep"), "%s", err);
	cmd_res_free(&r);
}

Test(cmdres, writable_by_others)
{
	fx_mkdirs(&fx, "o/bin");
	fx_file(&fx, "o/bin/tool", "\177ELF\n", 0755);
	char dir[PATH_MAX], path[PATH_MAX], err[2048];
	fx_at(&fx, dir, "o");
	cr_assert(chmod(dir, 0777) == 0);
	fx_at(&fx, path, "o/bin");
	struct cmd_res r;
	cr_assert_eq(cmd_resolve("tool", path, &r, err, sizeof err), CMD_REFUSED);
	cr_assert(strstr(err, "is writable by others"), "%s", err);
	cmd_res_free(&r);
	/* control: the same without o+w */
	cr_assert(chmod(dir, 0755) == 0);
	cr_assert_eq(cmd_resolve("tool", path, &r, err, sizeof err), CMD_OK, "%s", err);
	cmd_res_free(&r);
}

Test(cmdres, unnameable)
{
	fx_mkdirs(&fx, "we*ird");
	fx_file(&fx, "we*ird/tool", "\177ELF\n", 0755);
	char path[PATH_MAX], err[2048];
	fx_at(&fx, path, "we*ird");
	struct cmd_res r;
	cr_assert_eq(cmd_resolve("tool", path, &r, err, sizeof err), CMD_REFUSED);
	cr_assert(strstr(err, "cannot be named in a policy"), "%s", err);
	cmd_res_free(&r);
}

Test(proxy_fit, sized_to_the_limit)
{
	struct rlimit rl;
	cr_assert(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	struct prx_limits l;
	prx_limits_default(&l);
	rl.rlim_cur = 1024;
	cr_assert(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	cr_assert_eq(run_proxy_fit(&l, false), 0);
	cr_assert_eq(l.max_conns, (1024 - 32) / 6);
	cr_assert_leq(prx_fds_needed(l.max_conns), 1024);
	/* --max-conns given: kept, for the proxy to refuse */
	prx_limits_default(&l);
	cr_assert_eq(run_proxy_fit(&l, true), 0);
	cr_assert_eq(l.max_conns, 1024);
	rl.rlim_cur = 150;
	cr_assert(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	prx_limits_default(&l);
	cr_assert_eq(run_proxy_fit(&l, false), 125);
}
