/*
 * shims.c - asdf, mise and volta shims followed to the program they run
 * (shims.h), from the managers' files alone.
 *
 *   asdf   ~/.asdf/shims/NAME: `# asdf-plugin: PLUGIN VERSION` lines,
 *          `exec asdf exec "NAME"`; the version from ASDF_PLUGIN_VERSION,
 *          else the nearest .tool-versions up from the current directory,
 *          else ~/.tool-versions; the first of its versions the shim lists
 *          and that is installed: ASDF_DATA_DIR/installs/PLUGIN/V/bin/NAME
 *   mise   .../mise/shims/NAME -> the mise binary; the first tool of the
 *          closest config file (mise.toml and friends, .tool-versions, up
 *          from the current directory, then the global config.toml) whose
 *          install has bin/NAME: MISE_DATA_DIR/installs/TOOL/V/bin/NAME
 *   volta  ~/.volta/bin/NAME -> volta-shim; node, npm, npx, pnpm, yarn
 *          from the nearest package.json's "volta" key (and its
 *          `extends`), else tools/user/platform.json; a package's binary
 *          from tools/user/bins/NAME.json, in tools/image/packages/PKG
 *
 * Anything a manager would compute by running a script (an asdf plugin's
 * list-bin-paths or exec-env, a mise or volta hook) is refused, never
 * guessed: cagerun runs nothing of the user's before the cage is up.
 */
#include "shims.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SHIM_MAX_UP = 128, SHIM_MAX_EXTENDS = 8, SHIM_MAX_DIRENTS = 4096 };

struct sctx {
	const char *path, *name, *cwd;
	struct shim_res *r;
	char *err;
	size_t errlen;
};

static bool no(struct sctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool no(struct sctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return false;
}

static const char *base(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

const char *shim_kind_name(enum shim_kind k)
{
	return k == SHIM_ASDF ? "asdf" : k == SHIM_MISE ? "mise" : k == SHIM_VOLTA ? "volta" : "";
}

enum shim_kind shim_detect(const char *real, const char *head, const char *name)
{
	const char *b = base(real);
	if (!strncmp(head, "#!", 2) && strstr(head, "\n# asdf-plugin: ") &&
	    strstr(head, " exec \"") && strstr(head, "asdf exec"))
		return SHIM_ASDF;
	if ((!strcmp(b, "mise") || !strcmp(b, "rtx")) && strcmp(name, b))
		return SHIM_MISE;
	if (!strcmp(b, "volta-shim") && strcmp(name, "volta") && strcmp(name, b))
		return SHIM_VOLTA;
	return SHIM_NONE;
}

static bool is_exec_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* An absolute directory from $var, else HOME/fallback; false when
 * neither can be formed. */
static bool env_dir(char *out, size_t len, const char *var, const char *fallback)
{
	const char *v = var ? getenv(var) : NULL;
	if (v && v[0] == '/')
		return (size_t)snprintf(out, len, "%s", v) < len;
	const char *home = getenv("HOME");
	if (!home || home[0] != '/')
		return false;
	return (size_t)snprintf(out, len, "%s/%s", home, fallback) < len;
}

static bool fmt(char *out, size_t len, const char *f, ...) __attribute__((format(printf, 3, 4)));
static bool fmt(char *out, size_t len, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(out, len, f, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

/* Reads and parses one config file; 0 absent, 1 parsed, -1 error. */
typedef bool (*parse_fn)(const char *, const char *, size_t, struct shc_tools *, char *, size_t);
static int load_tools(struct sctx *c, const char *file, parse_fn parse, struct shc_tools *t)
{
	char *text;
	size_t len;
	int rc = shc_read(file, &text, &len, c->err, c->errlen);
	if (rc <= 0)
		return rc;
	bool ok = parse(file, text, len, t, c->err, c->errlen);
	free(text);
	return ok ? 1 : -1;
}

static void set_from(struct sctx *c, const char *file, unsigned line)
{
	if (line)
		snprintf(c->r->from, sizeof c->r->from, "%s:%u", file, line);
	else
		snprintf(c->r->from, sizeof c->r->from, "%s", file);
}

static bool add_tree(struct sctx *c, const char *dir, const char *why, bool bin)
{
	struct shim_res *r = c->r;
	if (r->ntrees >= SHIM_MAX_TREES)
		return no(c, "%s: more than %d install trees", c->path, SHIM_MAX_TREES);
	snprintf(r->tree[r->ntrees], PATH_MAX, "%s", dir);
	r->tree_why[r->ntrees++] = why;
	if (bin && !fmt(r->bin[r->nbins++], PATH_MAX, "%s/bin", dir))
		return no(c, "%s/bin: too long a path", dir);
	return true;
}

/* ---- asdf ---- */

struct asdf_plugin {
	char name[SHC_NAME];
	char vers[SHC_MAX_VERS][SHC_NAME];
	size_t nvers;
};

/* A plugin name names a directory: asdf allows [a-z0-9_-]. */
static bool plugin_name_ok(const char *n)
{
	if (!*n)
		return false;
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= '0' && *n <= '9') || *n == '_' || *n == '-'))
			return false;
	return true;
}

/* The shim's `# asdf-plugin: NAME VERSION` lines, grouped by plugin in
 * their order. */
static bool asdf_shim_lines(struct sctx *c, struct asdf_plugin *p, size_t *np)
{
	char *text;
	size_t len;
	int rc = shc_read(c->path, &text, &len, c->err, c->errlen);
	if (rc <= 0)
		return rc == 0 ? no(c, "%s: %s", c->path, strerror(ENOENT)) : false;
	*np = 0;
	unsigned line = 0;
	bool ok = true;
	for (char *s = text, *nl; ok && s && *s; s = nl ? nl + 1 : NULL) {
		nl = strchr(s, '\n');
		if (nl)
			*nl = '\0';
		line++;
		if (strncmp(s, "# asdf-plugin: ", 15))
			continue;
		char name[SHC_NAME], ver[SHC_NAME], extra;
		if (strlen(s) >= SHC_NAME || sscanf(s + 15, "%255s %255s %c", name, ver, &extra) != 2 ||
		    !plugin_name_ok(name)) {
			ok = no(c, "%s:%u: not a `# asdf-plugin: PLUGIN VERSION` line", c->path, line);
			break;
		}
		size_t i = 0;
		while (i < *np && strcmp(p[i].name, name))
			i++;
		if (i == *np) {
			if (*np >= 8) {
				ok = no(c, "%s:%u: more than 8 plugins", c->path, line);
				break;
			}
			memset(&p[i], 0, sizeof p[i]);
			snprintf(p[i].name, SHC_NAME, "%s", name);
			(*np)++;
		}
		if (p[i].nvers < SHC_MAX_VERS)
			snprintf(p[i].vers[p[i].nvers++], SHC_NAME, "%s", ver);
	}
	free(text);
	if (ok && !*np)
		return no(c, "%s: an asdf shim that names no plugin", c->path);
	return ok;
}

/* The versions asdf would use for `plugin`, and where they were set;
 * *found false when nothing sets one. */
static bool asdf_versions(struct sctx *c, const char *plugin, const char *tvname,
			  struct shc_tool *out, bool *found)
{
	*found = false;
	char var[SHC_NAME + 16];
	snprintf(var, sizeof var, "ASDF_%s_VERSION", plugin);
	for (char *s = var + 5; *s; s++)
		*s = *s == '-' ? '_' : (char)(*s >= 'a' && *s <= 'z' ? *s - 32 : *s);
	const char *ev = getenv(var);
	if (ev) {
		char line[SHC_NAME * 2];
		struct shc_tools t;
		if (!fmt(line, sizeof line, "%s %s", plugin, ev))
			return no(c, "%s: too long", var);
		if (!shc_tool_versions(var, line, strlen(line), &t, c->err, c->errlen))
			return false;
		*out = t.t[0];
		set_from(c, var, 0);
		*found = true;
		return true;
	}
	char dir[PATH_MAX], file[PATH_MAX + SHC_NAME];
	snprintf(dir, sizeof dir, "%s", c->cwd);
	struct shc_tools *t = malloc(sizeof *t);
	if (!t)
		return no(c, "out of memory");
	bool ok = true;
	for (int up = 0; ok && up <= SHIM_MAX_UP; up++) {
		bool home = up == SHIM_MAX_UP;
		if (home && !env_dir(dir, sizeof dir, NULL, "."))
			break;
		if (!fmt(file, sizeof file, "%s/%s", strcmp(dir, "/") ? dir : "", tvname)) {
			ok = no(c, "%s: too long a path", dir);
			break;
		}
		int rc = load_tools(c, file, shc_tool_versions, t);
		if (rc < 0) {
			ok = false;
			break;
		}
		const struct shc_tool *tl = rc ? shc_find(t, plugin) : NULL;
		if (tl) {
			*out = *tl;
			set_from(c, file, tl->line);
			*found = true;
			break;
		}
		if (home)
			break;
		if (!strcmp(dir, "/"))
			up = SHIM_MAX_UP - 1; /* then $HOME, as asdf does */
		else {
			char *sl = strrchr(dir, '/');
			if (sl == dir)
				sl[1] = '\0';
			else
				*sl = '\0';
		}
	}
	free(t);
	return ok;
}

static bool asdf_resolve(struct sctx *c)
{
	struct asdf_plugin plugins[8];
	size_t np = 0;
	if (!asdf_shim_lines(c, plugins, &np))
		return false;
	char data[PATH_MAX], cfg[PATH_MAX];
	if (!env_dir(data, sizeof data, "ASDF_DATA_DIR", ".asdf"))
		return no(c, "asdf: neither ASDF_DATA_DIR nor HOME is set to an absolute path");
	/* legacy version files (.nvmrc, ...) are read by plugin scripts */
	if (env_dir(cfg, sizeof cfg, "ASDF_CONFIG_FILE", ".asdfrc")) {
		char *text;
		size_t len;
		char e[512];
		if (shc_read(cfg, &text, &len, e, sizeof e) == 1) {
			bool legacy = false;
			for (char *s = text; s; s = strchr(s, '\n'), s = s ? s + 1 : NULL) {
				char v[16];
				if (sscanf(s, " legacy_version_file = %15s", v) == 1 && !strncmp(v, "yes", 3))
					legacy = true;
			}
			free(text);
			if (legacy)
				return no(c, "asdf: %s sets legacy_version_file = yes, whose files a "
					     "plugin's script reads; cagerun runs no script outside the cage: "
					     "set the version in a .tool-versions instead", cfg);
		}
	}
	const char *tvname = getenv("ASDF_DEFAULT_TOOL_VERSIONS_FILENAME");
	if (!tvname || !*tvname || strchr(tvname, '/'))
		tvname = ".tool-versions";
	char missing[3 * PATH_MAX] = "";
	for (size_t i = 0; i < np; i++) {
		struct shc_tool want;
		bool found;
		if (!asdf_versions(c, plugins[i].name, tvname, &want, &found))
			return false;
		if (!found)
			continue;
		char pdir[PATH_MAX];
		if (!fmt(pdir, sizeof pdir, "%s/plugins/%s/bin", data, plugins[i].name))
			return no(c, "asdf: too long a path");
		static const char *const scripts[] = { "list-bin-paths", "exec-env", "exec-path" };
		for (size_t k = 0; k < 3; k++) {
			char sp[PATH_MAX + 32];
			if (fmt(sp, sizeof sp, "%s/%s", pdir, scripts[k]) && access(sp, F_OK) == 0)
				return no(c, "asdf: the %s plugin has %s, a script asdf runs to find the "
					     "program; cagerun runs nothing outside the cage: put the "
					     "program's directory first on PATH (asdf where %s)", plugins[i].name,
					  sp, plugins[i].name);
		}
		for (size_t v = 0; v < want.nvers; v++) {
			const char *ver = want.vers[v];
			if (!strcmp(ver, "system") || !strncmp(ver, "path:", 5) || !strncmp(ver, "ref:", 4))
				return no(c, "asdf: %s is \"%s\" in %s, which cagerun does not follow; set "
					     "an installed version there", plugins[i].name, ver, c->r->from);
			bool listed = false;
			for (size_t s = 0; s < plugins[i].nvers; s++)
				listed = listed || !strcmp(plugins[i].vers[s], ver);
			char inst[PATH_MAX];
			if (!fmt(inst, sizeof inst, "%s/installs/%s/%s", data, plugins[i].name, ver) ||
			    !fmt(c->r->program, sizeof c->r->program, "%s/bin/%s", inst, c->name))
				return no(c, "asdf: too long a path");
			if (listed && is_exec_file(c->r->program)) {
				snprintf(c->r->tool, SHC_NAME, "%s", plugins[i].name);
				snprintf(c->r->version, SHC_NAME, "%s", ver);
				return add_tree(c, inst, "its asdf install", true);
			}
			if (!missing[0])
				snprintf(missing, sizeof missing, "%s %s (from %s) %s", plugins[i].name, ver,
					 c->r->from, listed ? "has no bin/ program of that name" :
					 "is not installed");
		}
	}
	if (missing[0])
		return no(c, "asdf: %s; install it (asdf install), or add the line `%s %s` to %s/%s, "
			     "then run cagerun again", missing, plugins[0].name, plugins[0].vers[0], c->cwd,
			  tvname);
	return no(c, "asdf: no version of %s is set for %s; add the line `%s %s` to %s/%s or "
		     "~/%s", plugins[0].name, c->cwd, plugins[0].name, plugins[0].vers[0], c->cwd,
		  tvname, tvname);
}

/* ---- mise ---- */

/* mise's directory name for a tool: its short name, kebab-cased
 * ("npm:@scope/pkg" -> "npm-scope-pkg"). */
static void mise_dirname(const char *tool, char *out, size_t len)
{
	if (!strncmp(tool, "core:", 5))
		tool += 5;
	size_t k = 0;
	bool sep = false;
	for (const char *s = tool; *s && k + 2 < len; s++) {
		char ch = *s;
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
		if (!alnum) {
			sep = k > 0;
			continue;
		}
		if (ch >= 'A' && ch <= 'Z') {
			if (k && s > tool && s[-1] >= 'a' && s[-1] <= 'z')
				sep = true;
			ch = (char)(ch + 32);
		}
		if (sep)
			out[k++] = '-';
		sep = false;
		out[k++] = ch;
	}
	out[k] = '\0';
}

/* Compares dotted versions numerically where both parts are numbers. */
static int vercmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			char *ea, *eb;
			unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
			if (x != y)
				return x < y ? -1 : 1;
			a = ea;
			b = eb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

/* The installed version mise uses for `want` in root: the directory of
 * that name (mise links fuzzy versions such as `20` to the newest
 * match), else the newest `want.*` (or any, for `latest`). Only names
 * starting with a digit count: mise's own links (`latest`, `lts`) are
 * not versions. */
static bool mise_installed(const char *root, const char *want, char *ver, size_t verlen)
{
	char p[PATH_MAX];
	/* `prefix:1.16`: the newest whose name starts so, no exact match */
	bool prefix = !strncmp(want, "prefix:", 7);
	if (prefix)
		want += 7;
	if (!prefix && strcmp(want, "latest") && fmt(p, sizeof p, "%s/%s", root, want) && is_dir(p))
		return (size_t)snprintf(ver, verlen, "%s", want) < verlen;
	DIR *d = opendir(root);
	if (!d)
		return false;
	size_t wl = strlen(want);
	bool any = !strcmp(want, "latest");
	ver[0] = '\0';
	struct dirent *e;
	for (int i = 0; i < SHIM_MAX_DIRENTS && (e = readdir(d)); i++) {
		const char *n = e->d_name;
		if (n[0] == '.' || (!any && (strncmp(n, want, wl) || (!prefix && n[wl] != '.'))) ||
		    !(n[0] >= '0' && n[0] <= '9') || strlen(n) >= verlen)
			continue;
		if (fmt(p, sizeof p, "%s/%s", root, n) && is_dir(p) && (!ver[0] || vercmp(n, ver) > 0))
			snprintf(ver, verlen, "%s", n);
	}
	closedir(d);
	return ver[0] != '\0';
}

/* A tool's version from MISE_TOOL_VERSION, else as configured. */
static const char *mise_env_version(const char *tool, char *var, size_t len)
{
	char d[SHC_NAME];
	mise_dirname(tool, d, sizeof d);
	snprintf(var, len, "MISE_%s_VERSION", d);
	for (char *s = var; *s; s++)
		*s = *s == '-' ? '_' : (char)(*s >= 'a' && *s <= 'z' ? *s - 32 : *s);
	return getenv(var);
}

/* Tries one configured tool: true with *hit when its install has NAME. */
static bool mise_try(struct sctx *c, const char *installs, const struct shc_tool *t,
		     const char *from, unsigned line, bool *hit, char *missing, size_t mlen)
{
	*hit = false;
	char var[SHC_NAME + 16], dn[SHC_NAME], root[PATH_MAX], ver[SHC_NAME], inst[PATH_MAX];
	const char *ev = mise_env_version(t->name, var, sizeof var);
	mise_dirname(t->name, dn, sizeof dn);
	if (!fmt(root, sizeof root, "%s/%s", installs, dn))
		return no(c, "mise: too long a path");
	size_t nv = ev ? 1 : t->nvers;
	for (size_t v = 0; v < nv; v++) {
		const char *want = ev ? ev : t->vers[v];
		if (!strncmp(want, "path:", 5) || !strncmp(want, "ref:", 4) || !strncmp(want, "sub-", 4) ||
		    !strcmp(want, "system") || !strcmp(want, "lts") || strchr(want, '/'))
			return no(c, "mise: %s = \"%s\" (%s), which cagerun does not follow; set an "
				     "installed version there", t->name, want, ev ? var : from);
		if (!mise_installed(root, want, ver, sizeof ver)) {
			if (!missing[0])
				snprintf(missing, mlen, "%s %s (from %s%s%u) is not installed: no %s/%s",
					 t->name, want, ev ? var : from, ev ? "" : ":", ev ? 0 : line, root,
					 want);
			continue;
		}
		if (!fmt(inst, sizeof inst, "%s/%s", root, ver) ||
		    !fmt(c->r->program, sizeof c->r->program, "%s/bin/%s", inst, c->name))
			return no(c, "mise: too long a path");
		if (!is_exec_file(c->r->program))
			return true; /* this tool does not provide NAME */
		snprintf(c->r->tool, SHC_NAME, "%s", t->name);
		snprintf(c->r->version, SHC_NAME, "%s", ver);
		if (ev)
			set_from(c, var, 0);
		else
			set_from(c, from, line);
		*hit = true;
		return add_tree(c, inst, "its mise install", true);
	}
	return true;
}

/* mise's config files in one directory, the one that wins first. */
static const char *const mise_files[] = {
	".mise.local.toml", "mise.local.toml", ".rtx.local.toml", "mise/config.local.toml",
	".mise/config.local.toml", ".config/mise.local.toml", ".config/mise/mise.local.toml",
	".config/mise/config.local.toml", ".mise.toml", "mise.toml", ".rtx.toml",
	"mise/config.toml", ".mise/config.toml", ".config/mise.toml", ".config/mise/mise.toml",
	".config/mise/config.toml", ".tool-versions",
};

/* The directories up from the current one, then the global file: the
 * first config (in precedence) with a tool providing NAME wins. 1: found,
 * -1: none, 0: an error (in c->err). */
static int mise_walk(struct sctx *c, const char *installs, const char *global, bool gok,
		     struct shc_tools *t, struct shc_tools *seen, char *missing, size_t mlen,
		     char *first, size_t flen)
{
	char dir[PATH_MAX], file[PATH_MAX + 64];
	seen->n = 0;
	snprintf(dir, sizeof dir, "%s", c->cwd);
	for (int up = 0; up <= SHIM_MAX_UP; up++) {
		bool glob = up == SHIM_MAX_UP;
		size_t nf = glob ? 1 : sizeof mise_files / sizeof *mise_files;
		for (size_t f = 0; f < nf && (!glob || gok); f++) {
			if (glob)
				snprintf(file, sizeof file, "%s", global);
			else if (!fmt(file, sizeof file, "%s/%s", strcmp(dir, "/") ? dir : "",
				      mise_files[f]))
				return no(c, "%s: too long a path", dir);
			bool tv = !glob ? !strcmp(mise_files[f], ".tool-versions") : !strstr(file, ".toml");
			int rc = load_tools(c, file, tv ? shc_tool_versions : shc_mise_toml, t);
			if (rc < 0)
				return 0;
			if (rc == 0)
				continue;
			if (!first[0])
				snprintf(first, flen, "%s", file);
			for (size_t i = 0; i < t->n; i++) {
				/* a closer file's version of a tool overrides the rest */
				if (shc_find(seen, t->t[i].name))
					continue;
				if (seen->n >= SHC_MAX_TOOLS) {
					no(c, "mise: more than %d tools configured", SHC_MAX_TOOLS);
					return 0;
				}
				snprintf(seen->t[seen->n++].name, SHC_NAME, "%s", t->t[i].name);
				bool hit;
				if (!mise_try(c, installs, &t->t[i], file, t->t[i].line, &hit, missing, mlen))
					return 0;
				if (hit)
					return 1;
			}
		}
		if (glob)
			break;
		if (!strcmp(dir, "/")) {
			up = SHIM_MAX_UP - 1;
			continue;
		}
		char *sl = strrchr(dir, '/');
		if (sl == dir)
			sl[1] = '\0';
		else
			*sl = '\0';
	}
	return -1;
}

static bool mise_resolve(struct sctx *c)
{
	char data[PATH_MAX], installs[PATH_MAX], global[PATH_MAX];
	const char *xd = getenv("XDG_DATA_HOME");
	if (getenv("MISE_DATA_DIR") || !xd || xd[0] != '/') {
		if (!env_dir(data, sizeof data, "MISE_DATA_DIR", ".local/share/mise"))
			return no(c, "mise: neither MISE_DATA_DIR nor HOME is set to an absolute path");
	} else if (!fmt(data, sizeof data, "%s/mise", xd)) {
		return no(c, "mise: too long a path");
	}
	const char *id = getenv("MISE_INSTALLS_DIR");
	if (!fmt(installs, sizeof installs, "%s", id && id[0] == '/' ? id : data) ||
	    (!(id && id[0] == '/') && !fmt(installs, sizeof installs, "%s/installs", data)))
		return no(c, "mise: too long a path");
	const char *gf = getenv("MISE_GLOBAL_CONFIG_FILE"), *xc = getenv("XDG_CONFIG_HOME");
	const char *cd = getenv("MISE_CONFIG_DIR");
	bool gok = gf && gf[0] == '/' ? fmt(global, sizeof global, "%s", gf)
		   : cd && cd[0] == '/' ? fmt(global, sizeof global, "%s/config.toml", cd)
		   : xc && xc[0] == '/' ? fmt(global, sizeof global, "%s/mise/config.toml", xc)
					: env_dir(global, sizeof global, NULL, ".config/mise/config.toml");
	char missing[3 * PATH_MAX] = "", first[PATH_MAX + 64] = "";
	struct shc_tools *t = malloc(2 * sizeof *t);
	if (!t)
		return no(c, "out of memory");
	int hit = mise_walk(c, installs, global, gok, t, t + 1, missing, sizeof missing, first,
			    sizeof first);
	free(t);
	if (hit >= 0)
		return hit == 1;
	/* a tool named only by its environment variable */
	struct shc_tool only = { .nvers = 0 };
	snprintf(only.name, SHC_NAME, "%s", c->name);
	char var[SHC_NAME + 16];
	if (mise_env_version(c->name, var, sizeof var)) {
		bool h;
		if (!mise_try(c, installs, &only, var, 0, &h, missing, sizeof missing))
			return false;
		if (h)
			return true;
	}
	if (missing[0])
		return no(c, "mise: %s; run `mise install` (outside the cage), then cagerun again",
			  missing);
	return no(c, "mise: no configured tool has bin/%s (%s); add a line `TOOL = \"VERSION\"` "
		     "under [tools] in %s/mise.toml or %s", c->name,
		  first[0] ? "the first config read was" : "no config file was found", c->cwd,
		  gok ? global : "~/.config/mise/config.toml");
}

/* ---- volta ---- */

static bool json_get(struct sctx *c, const char *file, const char *text, size_t len,
		     const char *k1, const char *k2, char *out, size_t outlen, bool *found)
{
	const char *path[2] = { k1, k2 };
	return shc_json_str(file, text, len, path, k2 ? 2 : 1, out, outlen, found, c->err,
			    c->errlen);
}

struct volta_platform {
	char node[SHC_NAME], npm[SHC_NAME], pnpm[SHC_NAME], yarn[SHC_NAME];
	char from[2 * PATH_MAX];       /* where node was set */
	char tool_from[2 * PATH_MAX];  /* where pnpm or yarn was */
};

/* The nearest package.json up from the current directory that is not a
 * dependency (its parent is not node_modules), as volta finds a project;
 * "" when there is none. */
static void volta_project(const char *cwd, char *out, size_t len)
{
	char dir[PATH_MAX], pj[PATH_MAX + 16];
	snprintf(dir, sizeof dir, "%s", cwd);
	out[0] = '\0';
	for (int up = 0; up < SHIM_MAX_UP; up++) {
		char *sl = strrchr(dir, '/');
		if (!sl)
			return;
		/* a dependency: its parent directory is node_modules */
		*sl = '\0';
		bool dep = !strcmp(base(dir), "node_modules");
		*sl = '/';
		if (!dep && fmt(pj, sizeof pj, "%s/package.json", strcmp(dir, "/") ? dir : "") &&
		    access(pj, F_OK) == 0) {
			if ((size_t)snprintf(out, len, "%s", pj) >= len)
				out[0] = '\0';
			return;
		}
		if (!strcmp(dir, "/"))
			return;
		if (sl == dir)
			sl[1] = '\0';
		else
			*sl = '\0';
	}
}

/* The project's platform: its "volta" key and those it extends. */
static bool volta_project_platform(struct sctx *c, const char *pj, struct volta_platform *p,
				   bool *found)
{
	*found = false;
	char file[PATH_MAX], next[PATH_MAX];
	snprintf(file, sizeof file, "%s", pj);
	for (int hop = 0; hop <= SHIM_MAX_EXTENDS; hop++) {
		if (hop == SHIM_MAX_EXTENDS)
			return no(c, "volta: %s: more than %d \"extends\" in a row (a cycle?)", pj,
				  SHIM_MAX_EXTENDS);
		char *text;
		size_t len;
		int rc = shc_read(file, &text, &len, c->err, c->errlen);
		if (rc <= 0)
			return rc == 0 ? no(c, "volta: %s, named by \"extends\", does not exist", file)
				       : false;
		char v[SHC_NAME];
		bool f1, f2, f3;
		bool ok = json_get(c, file, text, len, "volta", "node", v, sizeof v, &f1);
		if (ok && f1 && !p->node[0]) {
			snprintf(p->node, sizeof p->node, "%s", v);
			snprintf(p->from, sizeof p->from, "%s", file);
		}
		ok = ok && json_get(c, file, text, len, "volta", "npm", v, sizeof v, &f2);
		if (ok && f2 && !p->npm[0])
			snprintf(p->npm, sizeof p->npm, "%s", v);
		for (int k = 0; ok && k < 2; k++) {
			char *dst = k ? p->yarn : p->pnpm;
			ok = json_get(c, file, text, len, "volta", k ? "yarn" : "pnpm", v, sizeof v, &f2);
			if (ok && f2 && !dst[0]) {
				snprintf(dst, SHC_NAME, "%s", v);
				snprintf(p->tool_from, sizeof p->tool_from, "%s", file);
			}
		}
		ok = ok && json_get(c, file, text, len, "volta", "extends", next, sizeof next, &f3);
		free(text);
		if (!ok)
			return false;
		if (!f3)
			break;
		if (next[0] != '/') {
			char d[PATH_MAX];
			snprintf(d, sizeof d, "%s", file);
			*strrchr(d, '/') = '\0';
			char joined[PATH_MAX];
			if (!fmt(joined, sizeof joined, "%s/%s", d, next))
				return no(c, "volta: too long a path");
			snprintf(next, sizeof next, "%s", joined);
		}
		/* named as it is, for --show and the errors */
		char real[PATH_MAX];
		if (!realpath(next, real))
			return no(c, "volta: %s, named by \"extends\" in %s: %s", next, file,
				  strerror(errno));
		snprintf(file, sizeof file, "%s", real);
	}
	*found = p->node[0] != '\0';
	if (!*found && (p->npm[0]))
		return no(c, "volta: %s pins npm but no node; add \"node\": \"VERSION\" to its "
			     "\"volta\" key", pj);
	return true;
}

static bool volta_version_ok(const char *v)
{
	if (!*v || strchr(v, '/') || !strcmp(v, "..") || !strcmp(v, "."))
		return false;
	for (; *v; v++)
		if (!((*v >= '0' && *v <= '9') || *v == '.' || *v == '-' || *v == '+' ||
		      (*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z')))
			return false;
	return true;
}

/* The default platform: node and npm when `node_too` (no project pins
 * node), and pnpm and yarn where the project pins none, as volta merges
 * them. *found: a default node was read. */
static bool volta_default_platform(struct sctx *c, const char *vh, struct volta_platform *p,
				   bool node_too, bool *found)
{
	*found = false;
	char file[PATH_MAX];
	if (!fmt(file, sizeof file, "%s/tools/user/platform.json", vh))
		return no(c, "volta: too long a path");
	char *text;
	size_t len;
	int rc = shc_read(file, &text, &len, c->err, c->errlen);
	if (rc <= 0)
		return rc == 0;
	struct volta_platform d = { "", "", "", "", "", "" };
	bool f2, fp, fy;
	bool ok = json_get(c, file, text, len, "node", "runtime", d.node, sizeof d.node, found) &&
		  json_get(c, file, text, len, "node", "npm", d.npm, sizeof d.npm, &f2) &&
		  json_get(c, file, text, len, "pnpm", NULL, d.pnpm, sizeof d.pnpm, &fp) &&
		  json_get(c, file, text, len, "yarn", NULL, d.yarn, sizeof d.yarn, &fy);
	free(text);
	if (!ok)
		return false;
	if (node_too) {
		snprintf(p->node, sizeof p->node, "%s", d.node);
		snprintf(p->npm, sizeof p->npm, "%s", d.npm);
		snprintf(p->from, sizeof p->from, "%s", file);
	}
	for (int k = 0; k < 2; k++) {
		char *dst = k ? p->yarn : p->pnpm, *src = k ? d.yarn : d.pnpm;
		if (!dst[0] && src[0]) {
			snprintf(dst, SHC_NAME, "%s", src);
			snprintf(p->tool_from, sizeof p->tool_from, "%s", file);
		}
	}
	return true;
}

/* The node image for p (and npm's, when pinned) as trees, with bins. */
static bool volta_images(struct sctx *c, const char *vh, const struct volta_platform *p)
{
	char img[PATH_MAX];
	if (!volta_version_ok(p->node) || (p->npm[0] && !volta_version_ok(p->npm)))
		return no(c, "volta: %s: a version that cannot name a directory", p->from);
	if (p->npm[0]) {
		if (!fmt(img, sizeof img, "%s/tools/image/npm/%s", vh, p->npm))
			return no(c, "volta: too long a path");
		if (!is_dir(img))
			return no(c, "volta: npm %s (from %s) is not installed: no %s; run `volta fetch "
				     "npm@%s`, then cagerun again", p->npm, p->from, img, p->npm);
		if (!add_tree(c, img, "its volta npm image", true))
			return false;
	}
	if (!fmt(img, sizeof img, "%s/tools/image/node/%s", vh, p->node))
		return no(c, "volta: too long a path");
	if (!is_dir(img))
		return no(c, "volta: node %s (from %s) is not installed: no %s; run `volta fetch "
			     "node@%s`, then cagerun again", p->node, p->from, img, p->node);
	return add_tree(c, img, "its volta node image", true);
}

static bool volta_resolve(struct sctx *c)
{
	char vh[PATH_MAX], pj[PATH_MAX];
	if (!env_dir(vh, sizeof vh, "VOLTA_HOME", ".volta"))
		return no(c, "volta: neither VOLTA_HOME nor HOME is set to an absolute path");
	volta_project(c->cwd, pj, sizeof pj);
	static const char *const platform_tools[] = { "node", "npm", "npx",	 "pnpm",
						       "pnpx", "yarn", "yarnpkg" };
	size_t tool = SIZE_MAX;
	for (size_t i = 0; i < sizeof platform_tools / sizeof *platform_tools; i++)
		if (!strcmp(c->name, platform_tools[i]))
			tool = i;
	struct volta_platform p = { "", "", "", "", "", "" };
	bool found = false, dfound;
	if (tool != SIZE_MAX) {
		if (pj[0] && !volta_project_platform(c, pj, &p, &found))
			return false;
		if (!volta_default_platform(c, vh, &p, !found, &dfound))
			return false;
		found = found || dfound;
		if (!found)
			return no(c, "volta: no node version for %s: neither a \"volta\" key in %s nor "
				     "a default in %s/tools/user/platform.json; add \"volta\": { \"node\": "
				     "\"VERSION\" } to %s, or run `volta install node`", c->cwd,
				  pj[0] ? pj : "a package.json", vh, pj[0] ? pj : "package.json");
		/* pnpm and yarn are tools of their own, run on the platform's node */
		const char *pm = tool >= 5 ? "yarn" : tool >= 3 ? "pnpm" : NULL;
		const char *pv = tool >= 5 ? p.yarn : p.pnpm;
		char img[PATH_MAX];
		if (pm && !pv[0])
			return no(c, "volta: no %s version for %s; add \"%s\": \"VERSION\" to the "
				     "\"volta\" key of %s, or run `volta install %s`", pm, c->cwd, pm,
				  pj[0] ? pj : "package.json", pm);
		if (pm) {
			if (!volta_version_ok(pv) || !fmt(img, sizeof img, "%s/tools/image/%s/%s", vh, pm, pv))
				return no(c, "volta: %s: the %s version cannot name a directory", p.tool_from, pm);
			if (!is_dir(img))
				return no(c, "volta: %s %s (from %s) is not installed: no %s; run `volta fetch "
					     "%s@%s`, then cagerun again", pm, pv, p.tool_from, img, pm, pv);
			if (!add_tree(c, img, pm[0] == 'y' ? "its volta yarn image" : "its volta pnpm image",
				      true))
				return false;
		}
		snprintf(c->r->tool, SHC_NAME, "%s", pm ? pm : "node");
		snprintf(c->r->version, sizeof c->r->version, "%s", pm ? pv : p.node);
		snprintf(c->r->from, sizeof c->r->from, "%s", pm ? p.tool_from : p.from);
		if (!volta_images(c, vh, &p))
			return false;
		/* npm and npx from npm's image when it is pinned, pnpm and yarn from
		 * their own (the first bin), node from node's (the last) */
		const char *bin = strcmp(c->name, "node") ? c->r->bin[0] : c->r->bin[c->r->nbins - 1];
		return fmt(c->r->program, sizeof c->r->program, "%s/%s", bin, c->name) ||
		       no(c, "volta: too long a path");
	}
	/* a package's binary, installed with `volta install PKG` */
	char bins[PATH_MAX + SHC_NAME], pkg[SHC_NAME];
	if (!fmt(bins, sizeof bins, "%s/tools/user/bins/%s.json", vh, c->name))
		return no(c, "volta: too long a path");
	char *text;
	size_t len;
	int rc = shc_read(bins, &text, &len, c->err, c->errlen);
	if (rc <= 0)
		return rc == 0 ? no(c, "volta: no installed package provides %s (no %s); run `volta "
				       "install PACKAGE`, then cagerun again", c->name, bins)
			       : false;
	bool fp, fn, fm;
	bool ok = json_get(c, bins, text, len, "package", NULL, pkg, sizeof pkg, &fp) &&
		  json_get(c, bins, text, len, "platform", "node", p.node, sizeof p.node, &fn) &&
		  json_get(c, bins, text, len, "platform", "npm", p.npm, sizeof p.npm, &fm);
	free(text);
	if (!ok)
		return false;
	const char *slash = strchr(pkg, '/');
	if (!fp || !fn || !pkg[0] || strstr(pkg, "..") || pkg[0] == '/' || pkg[0] == '.' ||
	    (slash && (pkg[0] != '@' || strchr(slash + 1, '/') || !slash[1])))
		return no(c, "volta: %s names no package or no platform node", bins);
	snprintf(p.from, sizeof p.from, "%s", bins);
	/* volta runs the project's own copy when the project depends on it */
	if (pj[0]) {
		static const char *const deps[] = { "dependencies", "devDependencies" };
		for (size_t i = 0; i < 2; i++) {
			char *pt;
			size_t pl;
			char v[SHC_NAME];
			bool has;
			if (shc_read(pj, &pt, &pl, c->err, c->errlen) != 1)
				return no(c, "volta: %s: cannot be read", pj);
			bool jok = json_get(c, pj, pt, pl, deps[i], pkg, v, sizeof v, &has);
			free(pt);
			if (!jok)
				return false;
			if (has)
				return no(c, "volta: %s lists %s in \"%s\", so volta would run the "
					     "project's own copy; run it by its path "
					     "(node_modules/.bin/%s)", pj, pkg, deps[i], c->name);
		}
	}
	char img[PATH_MAX];
	if (!fmt(img, sizeof img, "%s/tools/image/packages/%s", vh, pkg) ||
	    !fmt(c->r->program, sizeof c->r->program, "%s/bin/%s", img, c->name))
		return no(c, "volta: too long a path");
	if (!is_exec_file(c->r->program))
		return no(c, "volta: %s (from %s) is not installed: no %s; run `volta install %s`, "
			     "then cagerun again", pkg, bins, c->r->program, pkg);
	snprintf(c->r->tool, SHC_NAME, "%s", pkg);
	snprintf(c->r->version, sizeof c->r->version, "(node %s)", p.node);
	snprintf(c->r->from, sizeof c->r->from, "%s", bins);
	char prog[PATH_MAX];
	snprintf(prog, sizeof prog, "%s", c->r->program);
	if (!add_tree(c, img, "its volta package image", false) || !volta_images(c, vh, &p))
		return false;
	snprintf(c->r->program, sizeof c->r->program, "%s", prog);
	return true;
}

bool shim_resolve(enum shim_kind k, const char *path, const char *cwd, struct shim_res *out,
		  char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	out->manager = shim_kind_name(k);
	struct sctx c = { path, base(path), cwd, out, err, errlen };
	switch (k) {
	case SHIM_ASDF:
		return asdf_resolve(&c);
	case SHIM_MISE:
		return mise_resolve(&c);
	case SHIM_VOLTA:
		return volta_resolve(&c);
	case SHIM_NONE:
		break;
	}
	return no(&c, "%s: not a version manager's shim", path);
}
