/*
 * cmdres.c - resolving the command of `cagerun -- COMMAND` to the files its
 * exec needs (cmdres.h).
 *
 * The chain a kernel and a shell would follow, done statically:
 *
 *   COMMAND on PATH -> real path (symlinks) -> a binary: that file
 *                                           -> `#!INTERP`: INTERP, again
 *                                           -> `#!/usr/bin/env NAME`: NAME
 *                                              on PATH, again
 *
 * A script run by node, bun or deno (or named *.js, *.mjs, *.cjs) needs its
 * package: the nearest directory above it with a package.json, up to the
 * node_modules folder it lives in (a package manager's store when the
 * package lives in one: pnpm's .pnpm, bun's global node_modules). npm's
 * and pnpm's sh wrappers (cmd-shim: `exec node "$basedir/../pkg/cli.js"`)
 * are read for the script they run. A version manager's shim (asdf,
 * mise, volta) is followed to the program the manager would choose
 * (shims.c); that program is run instead of the shim, with the manager's
 * bin directories first on PATH, as the manager itself would run it.
 */
#include "cmdres.h"
#include "shims.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_PATH
#define O_PATH O_RDONLY /* no O_PATH here: a read-only descriptor pins as well */
#endif

enum { CMD_MAX_PATH_ENTRIES = 256, CMD_MAX_PKG_UP = 32, CMD_HEAD = 4096 };

struct ctx {
	struct cmd_res *r;
	const char *cmd, *path_env;
	char *err;
	size_t errlen;
	const char *orig_path; /* the PATH cagerun was given */
	char *path_own;        /* path_env once a shim put directories first: owned */
	bool named;            /* the file being resolved was found on PATH by name */
};

static bool refuse(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool refuse(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return false;
}

static void step(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void step(struct ctx *c, const char *fmt, ...)
{
	if (c->r->nsteps >= CMD_MAX_STEPS)
		return;
	char buf[2 * PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	char *s = strdup(buf);
	if (s)
		c->r->steps[c->r->nsteps++] = s;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

/* A path a policy string names as it is: no quote, backslash, param brace,
 * glob character or control character. */
static bool cmd_nameable(const char *s)
{
	for (; *s; s++)
		if (strchr("\"\\{}*?[]", *s) || (unsigned char)*s < 0x20)
			return false;
	return true;
}

/* The first PATH entry holding an executable regular file `name`, as
 * execvp(3) looks (an empty entry is the current directory). */
static bool find_on_path(const char *name, const char *path_env, char *out, size_t outlen)
{
	struct stat st;
	if (strchr(name, '/')) {
		snprintf(out, outlen, "%s", name);
		return stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0;
	}
	const char *p = path_env && *path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
	for (int i = 0; i < CMD_MAX_PATH_ENTRIES; i++) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		int w = n ? snprintf(out, outlen, "%.*s/%s", (int)n, p, name)
			  : snprintf(out, outlen, "./%s", name);
		if (w > 0 && (size_t)w < outlen && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(out, X_OK) == 0)
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

/* `real` (a real path) pinned by an O_PATH descriptor while it and every
 * directory above it are checked: none may be writable by others, except
 * a sticky directory (/tmp) whose entry on the way is root's or ours. */
static bool pin_check(struct ctx *c, const char *real, struct stat *st)
{
	int fd = open(real, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return refuse(c, "%s: %s", real, strerror(errno));
	bool ok = fstat(fd, st) == 0;
	close(fd);
	if (!ok)
		return refuse(c, "%s: %s", real, strerror(errno));
	if (st->st_mode & S_IWOTH)
		return refuse(c, "%s is writable by others: anyone could replace what runs (chmod o-w "
				 "it)", real);
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", real);
	uid_t below_uid = st->st_uid, me = geteuid();
	for (int depth = 0; depth < PATH_MAX / 2; depth++) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		struct stat ds;
		if (lstat(dir, &ds) != 0)
			return refuse(c, "%s: %s", dir, strerror(errno));
		if ((ds.st_mode & S_IWOTH) &&
		    !((ds.st_mode & S_ISVTX) && (below_uid == 0 || below_uid == me)))
			return refuse(c, "%s, above %s, is writable by others: anyone could replace what "
					 "runs (chmod o-w it)", dir, real);
		below_uid = ds.st_uid;
		if (!strcmp(dir, "/"))
			break;
	}
	return true;
}

static bool add_grant(struct ctx *c, const char *path, bool tree, const char *why)
{
	struct cmd_res *r = c->r;
	for (size_t i = 0; i < r->n; i++) {
		size_t n = strlen(r->g[i].path);
		if (!strcmp(r->g[i].path, path) ||
		    (r->g[i].tree && !strncmp(r->g[i].path, path, n) && path[n] == '/'))
			return true; /* already granted */
	}
	if (!cmd_nameable(path))
		return refuse(c, "%s cannot be named in a policy (quote, backslash, brace or glob "
				 "character); install it under a plainer path", path);
	if (r->n >= CMD_MAX_GRANTS)
		return refuse(c, "%s: more than %d files to grant", c->cmd, CMD_MAX_GRANTS);
	char *p = strdup(path);
	if (!p)
		return refuse(c, "out of memory");
	r->g[r->n++] = (struct cmd_grant){ p, tree, why };
	return true;
}

/* Reads the start of a file (for `#!` and shim formats); 0 when it cannot
 * be read, as for an execute-only binary. */
static size_t read_head(const char *real, char *buf, size_t len)
{
	int fd = open(real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	n = n < 0 ? 0 : n;
	buf[n] = '\0';
	return (size_t)n;
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

/* A JavaScript entry point's package: the nearest directory above it with
 * a package.json, not above the node_modules folder it is in; widened to
 * the store a package manager keeps the package's dependencies in. */
static bool grant_js(struct ctx *c, const char *real)
{
	char dir[PATH_MAX], pj[PATH_MAX + 16];
	snprintf(dir, sizeof dir, "%s", real);
	struct stat st;
	for (int i = 0; i < CMD_MAX_PKG_UP; i++) {
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
		if (!strcmp(base_name(dir), "node_modules"))
			break;
		snprintf(pj, sizeof pj, "%s/package.json", dir);
		if (stat(pj, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		/* pnpm: dependencies are siblings in the virtual store; bun's
		 * global install hoists them beside the package. */
		static const char *const stores[] = { "/node_modules/.pnpm/",
						      "/.bun/install/global/node_modules/" };
		for (size_t k = 0; k < 2; k++) {
			char *s = strstr(dir, stores[k]);
			if (s) {
				s[strlen(stores[k]) - 1] = '\0';
				step(c, "%s: its package's dependencies are in the store %s", real, dir);
				return add_grant(c, dir, true, "its package manager's store");
			}
		}
		step(c, "%s: in the package %s", real, dir);
		return add_grant(c, dir, true, "its package");
	}
	return add_grant(c, real, false, "the script");
}

static bool resolve_file(struct ctx *c, const char *path, int depth, const char *why);
static bool grant_program(struct ctx *c, const char *real, const char *why);

/* NAME on PATH as the interpreter of `script` (`#!/usr/bin/env NAME`, or a
 * wrapper's `exec NAME`). */
static bool resolve_named(struct ctx *c, const char *name, const char *script, int depth)
{
	char found[PATH_MAX];
	if (!find_on_path(name, c->path_env, found, sizeof found))
		return refuse(c, "%s runs %s, which is not on PATH (%s)", script, name,
			      c->path_env ? c->path_env : "unset");
	step(c, "%s: %s on PATH is %s", script, name, found);
	c->named = true;
	return resolve_file(c, found, depth + 1, "its interpreter");
}

static bool is_js_runtime(const char *name)
{
	return !strcmp(name, "node") || !strcmp(name, "nodejs") || !strcmp(name, "bun") ||
	       !strcmp(name, "deno");
}

/* npm's and pnpm's sh wrapper (cmd-shim): the script named after the last
 * "$basedir/ in its exec lines, the interpreter before it (`node`, or
 * "$basedir/node" when that exists). */
static bool resolve_cmd_shim(struct ctx *c, const char *path, const char *real, const char *text,
			     int depth, bool *handled)
{
	*handled = false;
	const char *last = NULL;
	for (const char *s = strstr(text, "exec "); s; s = strstr(s + 5, "exec ")) {
		const char *eol = strchr(s, '\n');
		for (const char *q = strstr(s, "\"$basedir/"); q && (!eol || q < eol);
		     q = strstr(q + 1, "\"$basedir/"))
			if (strncmp(q, "\"$basedir/node\"", 15) != 0)
				last = q;
	}
	if (!last)
		return true;
	const char *rel = last + 10, *end = strchr(rel, '"');
	if (!end || end - rel >= PATH_MAX / 2)
		return true;
	*handled = true;
	/* $basedir is dirname "$0": where the wrapper was found, not its
	 * real path. */
	char target[PATH_MAX], dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	int tn = snprintf(target, sizeof target, "%s/%.*s", slash ? dir : ".", (int)(end - rel),
			  rel);
	if (tn < 0 || (size_t)tn >= sizeof target)
		return refuse(c, "%s: the script it runs has too long a path", path);
	step(c, "%s: a package manager's wrapper for %s", path, target);
	if (!add_grant(c, real, false, "the wrapper"))
		return false;
	char rt[PATH_MAX], node[PATH_MAX + 8];
	if (!realpath(target, rt))
		return refuse(c, "%s (run by %s): %s", target, path, strerror(errno));
	struct stat st;
	if (!pin_check(c, rt, &st) || !grant_js(c, rt))
		return false;
	snprintf(node, sizeof node, "%s/node", slash ? dir : ".");
	if (access(node, X_OK) == 0)
		return resolve_file(c, node, depth + 1, "its interpreter");
	return resolve_named(c, "node", path, depth);
}

static bool resolve_script(struct ctx *c, const char *path, const char *real, const char *head,
			   int depth, const char *why)
{
	const char *nl = strchr(head, '\n');
	char line[512];
	if (!nl || nl - head >= (ptrdiff_t)sizeof line)
		return refuse(c, "%s: its #! line is longer than %zu bytes", real, sizeof line - 1);
	memcpy(line, head, (size_t)(nl - head));
	line[nl - head] = '\0';
	char *s = line + 2;
	s += strspn(s, " \t");
	char *interp = s;
	s += strcspn(s, " \t");
	if (*s)
		*s++ = '\0';
	s += strspn(s, " \t");
	if (!*interp)
		return refuse(c, "%s: an empty #! line", real);
	step(c, "%s: #!%s%s%s", real, interp, *s ? " " : "", s);
	/* `env [-S] [-i] NAME ...`: NAME on PATH */
	char name[256] = "";
	if (!strcmp(base_name(interp), "env")) {
		char *w = s;
		while (*w) {
			size_t n = strcspn(w, " \t");
			if (w[0] != '-' && !memchr(w, '=', n)) {
				snprintf(name, sizeof name, "%.*s", (int)n, w);
				break;
			}
			w += n;
			w += strspn(w, " \t");
		}
		if (!*name)
			return refuse(c, "%s: #!%s %s names no program", real, interp, s);
		if (!resolve_file(c, interp, depth + 1, "its interpreter's launcher") ||
		    !resolve_named(c, name, real, depth))
			return false;
	} else {
		snprintf(name, sizeof name, "%s", base_name(interp));
		if (!resolve_file(c, interp, depth + 1, "its interpreter"))
			return false;
	}
	if (is_js_runtime(name) || has_suffix(real, ".js") || has_suffix(real, ".mjs") ||
	    has_suffix(real, ".cjs"))
		return grant_js(c, real);
	bool handled;
	if (!resolve_cmd_shim(c, path, real, head, depth, &handled))
		return false;
	return handled || grant_program(c, real, why);
}

/* A program installed by Homebrew (a real path through PREFIX/Cellar/)
 * loads its own loader and libraries from PREFIX (PREFIX/lib/ld.so and
 * PREFIX/opt/): the prefix is granted, which holds installed software
 * only. */
static bool grant_brew(struct ctx *c, const char *real, bool *handled)
{
	*handled = false;
	const char *cel = strstr(real, "/Cellar/");
	if (!cel || cel == real)
		return true;
	char prefix[PATH_MAX], probe[PATH_MAX + 16];
	snprintf(prefix, sizeof prefix, "%.*s", (int)(cel - real), real);
	struct stat st;
	snprintf(probe, sizeof probe, "%s/bin", prefix);
	if (stat(probe, &st) != 0 || !S_ISDIR(st.st_mode))
		return true;
	*handled = true;
	step(c, "%s: installed by Homebrew under %s", real, prefix);
	return pin_check(c, prefix, &st) && add_grant(c, prefix, true, "its Homebrew prefix");
}

/* A program or script file: that file, or its Homebrew prefix. */
static bool grant_program(struct ctx *c, const char *real, const char *why)
{
	bool brew;
	if (!grant_brew(c, real, &brew))
		return false;
	return brew || add_grant(c, real, false, why);
}

/* PATH with dir put first, as the manager does for what it runs. */
static bool path_prepend(struct ctx *c, const char *dir)
{
	struct cmd_res *r = c->r;
	size_t pl = r->path_prefix ? strlen(r->path_prefix) : 0;
	for (const char *p = r->path_prefix; p && *p;) {
		size_t n = strcspn(p, ":");
		if (n == strlen(dir) && !strncmp(p, dir, n))
			return true;
		p += n + (p[n] == ':');
	}
	char *np = malloc(pl + strlen(dir) + 2);
	if (!np)
		return refuse(c, "out of memory");
	sprintf(np, "%s%s%s", r->path_prefix ? r->path_prefix : "", pl ? ":" : "", dir);
	free(r->path_prefix);
	r->path_prefix = np;
	const char *orig = c->orig_path && *c->orig_path ? c->orig_path : "/usr/local/bin:/usr/bin:/bin";
	char *full = malloc(strlen(np) + strlen(orig) + 2);
	if (!full)
		return refuse(c, "out of memory");
	sprintf(full, "%s:%s", np, orig);
	free(c->path_own);
	c->path_own = full;
	c->path_env = full;
	return true;
}

/* A version manager's shim: the program the manager would choose, its
 * install trees granted, its bin directories first on PATH. At the top
 * (COMMAND itself) that program is what cagerun runs; below, the shim was
 * found on PATH by an interpreter's name and the PATH now finds the
 * program first. */
static bool resolve_shim(struct ctx *c, const char *path, enum shim_kind k, int depth, bool named)
{
	if (depth > 0 && !named)
		return refuse(c, "%s is %s %s shim run by its path; the program it chooses cannot be "
				 "run in its place: name the program's own path instead", path,
			      k == SHIM_ASDF ? "an" : "a", shim_kind_name(k));
	struct shim_res *s = malloc(sizeof *s);
	char cwd[PATH_MAX], prog[PATH_MAX];
	if (!s)
		return refuse(c, "out of memory");
	bool ok = getcwd(cwd, sizeof cwd) != NULL;
	if (!ok)
		refuse(c, "the current directory: %s", strerror(errno));
	ok = ok && shim_resolve(k, path, cwd, s, c->err, c->errlen);
	if (ok)
		step(c, "%s: %s %s shim: %s %s from %s", path, k == SHIM_ASDF ? "an" : "a", s->manager,
		     s->tool, s->version, s->from);
	for (size_t i = 0; ok && i < s->ntrees; i++) {
		char real[PATH_MAX];
		struct stat st;
		ok = realpath(s->tree[i], real) ? pin_check(c, real, &st) &&
							add_grant(c, real, true, s->tree_why[i])
						: refuse(c, "%s: %s", s->tree[i], strerror(errno));
	}
	for (size_t i = 0; ok && i < s->nbins; i++) {
		char real[PATH_MAX];
		ok = realpath(s->bin[i], real) ? path_prepend(c, real)
					       : refuse(c, "%s: %s", s->bin[i], strerror(errno));
	}
	snprintf(prog, sizeof prog, "%s", s->program);
	free(s);
	if (!ok)
		return false;
	/* both are written into the generated layer's comments */
	if (!cmd_nameable(prog) || (c->r->path_prefix && !cmd_nameable(c->r->path_prefix)))
		return refuse(c, "%s cannot be named in a policy (quote, backslash, brace, glob or "
				 "control character); install it under a plainer path", prog);
	if (depth == 0 && !(c->r->exec = strdup(prog)))
		return refuse(c, "out of memory");
	step(c, "%s: %s runs %s", path, shim_kind_name(k), prog);
	return resolve_file(c, prog, depth + 1, "the program");
}

static bool resolve_file(struct ctx *c, const char *path, int depth, const char *why)
{
	bool named = c->named;
	c->named = false;
	if (depth > CMD_MAX_DEPTH)
		return refuse(c, "%s: more than %d interpreters deep", path, CMD_MAX_DEPTH);
	char real[PATH_MAX];
	if (!realpath(path, real))
		return refuse(c, "%s: %s", path, strerror(errno));
	if (strcmp(path, real))
		step(c, "%s -> %s", path, real);
	struct stat st;
	if (!pin_check(c, real, &st))
		return false;
	if (!S_ISREG(st.st_mode))
		return refuse(c, "%s is not a regular file", real);
	char head[CMD_HEAD + 1];
	size_t n = read_head(real, head, sizeof head);
	enum shim_kind k = shim_detect(real, head, base_name(path));
	if (k != SHIM_NONE)
		return resolve_shim(c, path, k, depth, named);
	if (n >= 2 && head[0] == '#' && head[1] == '!')
		return resolve_script(c, path, real, head, depth, why);
	return grant_program(c, real, why);
}

enum cmd_status cmd_resolve(const char *cmd, const char *path_env, struct cmd_res *r, char *err,
			    size_t errlen)
{
	memset(r, 0, sizeof *r);
	err[0] = '\0';
	char found[PATH_MAX];
	if (!find_on_path(cmd, path_env, found, sizeof found))
		return CMD_NOT_FOUND;
	r->found = strdup(found);
	if (!r->found) {
		snprintf(err, errlen, "out of memory");
		return CMD_REFUSED;
	}
	struct ctx c = { r, cmd, path_env, err, errlen, path_env, NULL, false };
	/* The directory it was found in too: whoever may write there can
	 * point the name elsewhere. */
	char dir[PATH_MAX], real[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", found);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	struct stat st;
	if (slash && (!realpath(dir[0] ? dir : "/", real) || !pin_check(&c, real, &st))) {
		/* nothing owned yet: path_own is set only by resolve_file */
		if (!err[0])
			snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return CMD_REFUSED;
	}
	bool ok = resolve_file(&c, found, 0, "the program");
	free(c.path_own);
	return ok ? CMD_OK : CMD_REFUSED;
}

char *cmd_layer_text(const struct cmd_res *r, const char *cmd)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fprintf(f, "cage 1\n# cagerun's command layer: what starting %s needs, resolved from\n"
		   "# PATH before the sandbox started (%s)\n", cmd, r->found);
	if (r->exec)
		fprintf(f, "# a version manager's shim: cagerun runs %s, PATH starting with %s\n",
			r->exec, r->path_prefix ? r->path_prefix : "");
	for (size_t i = 0; i < r->n; i++)
		fprintf(f, "allow read exec \"%s%s\" # %s\n", r->g[i].path, r->g[i].tree ? "/**" : "",
			r->g[i].why);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void cmd_res_free(struct cmd_res *r)
{
	free(r->found);
	free(r->exec);
	free(r->path_prefix);
	for (size_t i = 0; i < r->nsteps; i++)
		free(r->steps[i]);
	for (size_t i = 0; i < r->n; i++)
		free(r->g[i].path);
	memset(r, 0, sizeof *r);
}
