/*
 * lnx_difftest.c - the Linux sandbox against its own plan, access by
 * access. For each policy it builds a fixture tree, asks lplan_query (what
 * `cagec explain --target linux` answers) about every path and access,
 * then runs lnx_probe under the real cagerun, which tries each access for
 * real, and compares. Any disagreement fails: the plan, explain and the
 * kernel must say the same thing. Where the Linux answer differs from the
 * IR's (a documented narrowing or the metadata limit), the answer must
 * carry its reason; those are counted and printed, not failed.
 *
 * usage: lnx_difftest CAGERUN PROBE
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lplan.h"
#include "cage.h"
#include "policy.h"

#define MAXQ 4000

struct query {
	const char *acc;
	uint32_t bit;
	char path[700];
	bool expect;
	bool ir;
	const char *why;
};

static char root[300];
static int failures;

static void mkfile(const char *rel, const char *content, mode_t mode)
{
	char p[700];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, content, strlen(content)) < 0) {
		perror(p);
		exit(2);
	}
	close(fd);
	chmod(p, mode);
}

static void mkdir_rel(const char *rel)
{
	char p[700];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	if (mkdir(p, 0755) != 0) {
		perror(p);
		exit(2);
	}
}

static void fixture(void)
{
	const char *dirs[] = { "h", "h/.ssh", "h/docs", "h/bin", "w", "w/src", "w/src/sub",
			       "w/.git", "w/.git/hooks", "w/build", "w/keep", "w/keep/open",
			       "w/a", "w/a/b", "w/secret", "w/.git/objects", "w/.git/objects/ab",
			       "w/.git/refs", "w/.git/refs/heads", "w/.git/info", "w/.git/modules",
			       "w/.git/modules/a", "w/.git/modules/a/b", "w/.git/modules/a/b/hooks",
			       "w/.git/modules/a/b/objects" };
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
		mkdir_rel(dirs[i]);
	const char *files[] = { "h/.ssh/id_rsa", "h/.ssh/config", "h/notes.txt", "h/.netrc",
				"h/docs/a.md", "w/src/a.c", "w/src/sub/b.c", "w/.git/config",
				"w/.git/hooks/pre-commit", "w/keep/k.txt", "w/keep/open/o.txt",
				"w/a/b/deep.txt", "w/secret/k", "w/README", "w/.git/objects/ab/cd",
				"w/.git/refs/heads/main", "w/.git/index", "w/.git/HEAD",
				"w/.git/info/exclude", "w/.git/modules/a/b/config",
				"w/.git/modules/a/b/HEAD", "w/.git/modules/a/b/hooks/x",
				"w/.git/modules/a/b/objects/o" };
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		mkfile(files[i], "x\n", 0644);
	/* Executables: a script whose interpreter the policies allow. */
	const char *exes[] = { "h/bin/tool", "w/build/out", "w/src/run.sh", "w/src/sub/x.sh",
			       "w/a/b/y.sh" };
	for (size_t i = 0; i < sizeof exes / sizeof *exes; i++)
		mkfile(exes[i], "#!/bin/sh\nexit 0\n", 0755);
	/* Symlinks both ways between the trees: reading follows them,
	 * deleting takes the link itself (in the tree that holds it). */
	static const char *const links[][2] = { { "w/notes-link", "h/notes.txt" },
						{ "h/readme-link", "w/README" },
						{ "w/docs-link", "h/docs" },
						{ "h/src-link", "w/src" } };
	for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
		char link[700], target[700];
		snprintf(link, sizeof link, "%s/%s", root, links[i][0]);
		snprintf(target, sizeof target, "%s/%s", root, links[i][1]);
		if (symlink(target, link) != 0)
			exit(2);
	}
}

static const struct {
	const char *name;
	uint32_t bit;
} accs[] = { { "read", IR_A_READ },	  { "read-metadata", IR_A_READ_META },
	     { "write", IR_A_WRITE },	  { "exec", IR_A_EXEC },
	     { "create", IR_A_CREATE }, { "delete", IR_A_DELETE } };

static void walk(const char *dir, struct query *q, size_t *n)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) && *n + 8 < MAXQ) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char p[600];
		if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p)
			continue;
		struct stat st;
		if (lstat(p, &st) != 0)
			continue;
		bool is_dir = S_ISDIR(st.st_mode), is_link = S_ISLNK(st.st_mode);
		for (size_t i = 0; i < sizeof accs / sizeof *accs; i++) {
			uint32_t b = accs[i].bit;
			if ((b == IR_A_WRITE || b == IR_A_EXEC) && (is_dir || is_link))
				continue;
			if (b == IR_A_EXEC && !(st.st_mode & 0100))
				continue;
			if (b == IR_A_CREATE)
				continue;
			q[*n].acc = accs[i].name;
			q[*n].bit = b;
			snprintf(q[*n].path, sizeof q[*n].path, "%s", p);
			(*n)++;
		}
		if (is_dir && !is_link) {
			q[*n].acc = "create";
			q[*n].bit = IR_A_CREATE;
			snprintf(q[*n].path, sizeof q[*n].path, "%s/new-file", p);
			(*n)++;
			walk(p, q, n);
		}
	}
	closedir(d);
}

/* Deletions change the tree: they go last, files before their dirs. */
static int order(const void *x, const void *y)
{
	const struct query *a = x, *b = y;
	bool da = a->bit == IR_A_DELETE, db = b->bit == IR_A_DELETE;
	if (da != db)
		return da - db;
	if (da)
		return -strcmp(a->path, b->path);
	return 0;
}

static void run_policy(const char *name, const char *body, const char *cagerun,
		       const char *probe)
{
	char pol_path[700], qpath[700], text[4096];
	snprintf(pol_path, sizeof pol_path, "%.300s/%s.cage", root, name);
	snprintf(text, sizeof text,
		 "cage 1\nparam r : path\nparam probe : path\nprofile t {\n"
		 "  allow read exec \"/usr/**\", \"/lib/**\", \"/lib64/**\", \"/bin/**\", "
		 "\"/etc/**\", \"/proc/**\"\n"
		 "  allow read exec probe\n%s\n}\n",
		 body);
	FILE *f = fopen(pol_path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		exit(2);

	char dr[400], dp[700], probe_dir[600];
	snprintf(dr, sizeof dr, "r=%s", root);
	snprintf(probe_dir, sizeof probe_dir, "%s", probe);
	*strrchr(probe_dir, '/') = '\0';
	snprintf(dp, sizeof dp, "probe=%s", probe_dir);
	cage_options *o = cage_options_new();
	cage_options_define(o, dr);
	cage_options_define(o, dp);
	cage_policy *pol = cage_load_file(pol_path, o);
	cage_options_free(o);
	cage_print_diagnostics(pol, stderr, false);
	if (cage_error_count(pol)) {
		fprintf(stderr, "FAIL %s: policy does not compile\n", name);
		failures++;
		cage_policy_free(pol);
		return;
	}
	struct lplan plan;
	const char *err = NULL;
	lplan_build(&pol->arena, pol->ir->selected, &plan, &err);
	if (plan.nerrors) {
		fprintf(stderr, "FAIL %s: the plan refuses it: %s\n", name, plan.errors[0].text);
		failures++;
		cage_policy_free(pol);
		return;
	}
	static struct query q[MAXQ];
	size_t n = 0;
	char sub[400];
	snprintf(sub, sizeof sub, "%s/h", root);
	walk(sub, q, &n);
	snprintf(sub, sizeof sub, "%s/w", root);
	walk(sub, q, &n);
	/* Names that do not exist: what the create guard decides. */
	static const char *const fresh[] = { "w/.envrc", "w/.vscode", "w/src/.claude",
					     "w/src/.claude2", "w/.envrc.example", "w/.git/commondir",
					     "w/.git/index.lock", "w/.git/info/attributes",
					     "w/.git/modules/a/b/index.lock", "w/.git/modules/a/b/commondir",
					     "w/.git/modules/c", "w/.git/worktrees" };
	for (size_t k = 0; k < sizeof fresh / sizeof *fresh && n < MAXQ; k++, n++) {
		q[n].acc = "create";
		q[n].bit = IR_A_CREATE;
		snprintf(q[n].path, sizeof q[n].path, "%s/%s", root, fresh[k]);
	}
	qsort(q, n, sizeof *q, order);
	snprintf(qpath, sizeof qpath, "%.300s/%s.queries", root, name);
	f = fopen(qpath, "w");
	if (!f)
		exit(2);
	size_t narrow = 0, wide = 0, allowed = 0;
	for (size_t i = 0; i < n; i++) {
		struct lplan_answer a;
		lplan_query(&pol->arena, &plan, q[i].bit, q[i].path, &a);
		struct ir_verdict v;
		ir_eval_path(pol->ir->selected, q[i].bit, q[i].path, &v);
		q[i].expect = a.allowed;
		q[i].ir = v.allowed;
		q[i].why = a.why;
		/* The IR refuses deleting what a deny holds, because deleting is
		 * also renaming away (docs/language.md, "Renames and links"). On
		 * Linux the held path is behind a mount: a plain unlink may pass
		 * (a noexec mount allows it), a rename out fails with EXDEV. */
		if (!q[i].why && q[i].bit == IR_A_DELETE && a.allowed && !v.allowed && v.rule &&
		    (v.pin || ir_is_guard(pol->ir->selected, v.rule)))
			q[i].why = "Linux allows a plain unlink of a held path; renaming it out "
				   "crosses its mount and fails";
		allowed += a.allowed;
		if (a.allowed != v.allowed) {
			if (a.allowed)
				wide++;
			else
				narrow++;
			if (!q[i].why && q[i].bit != IR_A_READ_META) {
				fprintf(stderr,
					"FAIL %s: %s %s: Linux %s, IR %s, and no reason given\n",
					name, q[i].acc, q[i].path, a.allowed ? "allows" : "denies",
					v.allowed ? "allows" : "denies");
				failures++;
			}
		}
		fprintf(f, "%s %s\n", q[i].acc, q[i].path);
	}
	fclose(f);

	char cmd[3000];
	snprintf(cmd, sizeof cmd,
		 "cd / && env -i PATH=/usr/bin:/bin HOME=/nonexistent %s -p %s -D %s -D %s "
		 "--mode enforce-fs -- %s < %s",
		 cagerun, pol_path, dr, dp, probe, qpath);
	FILE *out = popen(cmd, "r");
	if (!out)
		exit(2);
	char line[1200];
	size_t i = 0, mismatches = 0;
	while (fgets(line, sizeof line, out) && i < n) {
		char acc[32], path[700], verdict[16];
		if (sscanf(line, "%31s %699s %15s", acc, path, verdict) != 3)
			continue;
		if (strcmp(acc, q[i].acc) || strcmp(path, q[i].path)) {
			fprintf(stderr, "FAIL %s: probe out of step at %s %s\n", name, acc, path);
			failures++;
			break;
		}
		bool got = !strcmp(verdict, "allowed");
		if (got != q[i].expect) {
			fprintf(stderr, "FAIL %s: %s %s: sandbox %s, plan %s (IR %s)%s%s\n", name,
				acc, path, got ? "allows" : "denies",
				q[i].expect ? "allows" : "denies", q[i].ir ? "allows" : "denies",
				q[i].why ? ": " : "", q[i].why ? q[i].why : "");
			mismatches++;
		}
		i++;
	}
	int st = pclose(out);
	if (i != n) {
		fprintf(stderr, "FAIL %s: the probe answered %zu of %zu queries (status %d)\n",
			name, i, n, st);
		failures++;
	}
	failures += mismatches != 0;
	printf("%s: %zu queries, %zu allowed; %zu mismatches; vs the IR: %zu narrower, "
	       "%zu wider (metadata, symlinks followed)\n",
	       name, n, allowed, mismatches, narrow, wide);
	if (allowed == 0 || allowed == n) {
		fprintf(stderr, "FAIL %s: a one-sided case proves nothing\n", name);
		failures++;
	}
	cage_policy_free(pol);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: lnx_difftest CAGERUN PROBE\n");
		return 2;
	}
	const char *cases[][2] = {
		{ "agent",
		  "  allow read \"{r}/h/**\"\n  protect \"{r}/h/.ssh/**\"\n  protect \"{r}/h/.netrc\"\n"
		  "  allow read write exec \"{r}/w/**\"\n  deny write \"{r}/w/.git/hooks/**\"\n"
		  "  deny exec \"{r}/w/build/**\"\n"
		  "  deny read write exec \"{r}/w/secret/**\"\n" },
		{ "narrow",
		  "  allow read write \"{r}/w/**\"\n  deny write \"{r}/w/keep/**\"\n"
		  "  allow write \"{r}/w/keep/open/**\"\n  allow read \"{r}/h/notes.txt\"\n"
		  "  allow read exec \"{r}/h/bin/*\"\n  allow read write \"{r}/h/docs/a.md\"\n"
		  "  deny write \"{r}/w/a/b/**\"\n" },
		/* Mounts inside mounts: each is a bind of its own, so a
		 * read-only one inside a no-exec tree must be no-exec too, and
		 * a no-exec one inside a read-only tree read-only too. */
		{ "nested",
		  "  allow read \"{r}/h/**\"\n"
		  "  allow read write exec \"{r}/w/**\"\n  deny exec \"{r}/w/src/**\"\n"
		  "  deny write \"{r}/w/src/sub/**\"\n  deny write \"{r}/w/a/**\"\n"
		  "  deny exec \"{r}/w/a/b/**\"\n" },
		/* Denied names that do not exist in a writable tree: the
		 * create guard, not Landlock, keeps them from being made. */
		{ "guard",
		  "  allow read \"{r}/h/**\"\n"
		  "  allow read write \"{r}/w/**\"\n  deny write \"{r}/w/.envrc\"\n"
		  "  deny write \"{r}/w/.vscode/**\"\n"
		  "  deny write \"{r}/w/src/.claude/settings.json\"\n" },
		/* A protect with excepts: read-only mounts on what it holds
		 * that exists, the create guard for new names, and the
		 * excepted paths left to the workspace grant. */
		{ "except",
		  "  allow read \"{r}/h/**\"\n"
		  "  allow read write \"{r}/w/**\"\n"
		  "  protect write \"{r}/w/.git/**\" except \"{r}/w/.git/objects/**\",\n"
		  "    \"{r}/w/.git/refs/**\", \"{r}/w/.git/index\", \"{r}/w/.git/index.lock\",\n"
		  "    \"{r}/w/.git/HEAD\", \"{r}/w/.git/modules/**/objects/**\",\n"
		  "    \"{r}/w/.git/modules/**/HEAD\", \"{r}/w/.git/modules/**/index.lock\"\n" },
	};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		char tmpl[] = "/tmp/cage-difftest.XXXXXX";
		if (!mkdtemp(tmpl) || !realpath(tmpl, root))
			return 2;
		chmod(root, 0755);
		fixture();
		run_policy(cases[c][0], cases[c][1], argv[1], argv[2]);
		char rm[400];
		snprintf(rm, sizeof rm, "rm -rf '%s'", root);
		if (system(rm) != 0)
			failures++;
	}
	printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
	return failures ? 1 : 0;
}
