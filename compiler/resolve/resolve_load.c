/*
 * resolve_load.c - loading a policy's files: the main file and, depth
 * first, its imports, found on the search path (-I, then the standard
 * library's folder for the target, then the portable standard library) or
 * relative to the importing file. Each file is read once;
 * cycles, missing files and imports nested too deep are diagnostics.
 */
#include "resolve_int.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse_ctx.h"
#include "load.h"
#include "stdlib_ast.h"
#include "stdlib_dir.h"
#include "suggest.h"

void rsv_input(struct rsv *r, enum input_kind kind, const char *path, int err, const char *real,
	       const char *text, size_t len)
{
	struct policy_input in = { .kind = kind, .path = arena_strdup(r->a, path), .err = err,
				   .real = real ? arena_strdup(r->a, real) : NULL, .text = text,
				   .len = len };
	VEC_PUSH(r->inputs, in);
}

/* access(path, F_OK), recorded. */
static bool probe(struct rsv *r, const char *path)
{
	bool there = access(path, F_OK) == 0;
	rsv_input(r, INPUT_PROBE, path, there ? 0 : errno, NULL, NULL, 0);
	return there;
}

static struct rfile *find_loaded(struct rsv *r, const char *real)
{
	for (size_t i = 0; i < r->all_loaded.n; i++)
		if (r->all_loaded.v[i]->src->realpath &&
		    strcmp(r->all_loaded.v[i]->src->realpath, real) == 0)
			return r->all_loaded.v[i];
	return NULL;
}

static bool on_stack(struct rsv *r, const char *real)
{
	for (size_t i = 0; i < r->loading.n; i++)
		if (strcmp(r->loading.v[i], real) == 0)
			return true;
	return false;
}


static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

/* The directories a non-relative import is looked up in, in order: each
 * -I directory, then the standard library's folder for the target
 * (STDLIB/linux or STDLIB/macos: platform modules), then STDLIB itself
 * (portable modules). A module name lives in the portable tree or in both
 * platform trees, never in both kinds (testsuite/stdlib/layout.sh checks
 * the shipped library), so the order between the last two only matters
 * for a broken installation. Returns the count; `dirs` has room for
 * nincludes + 2. */
static const char *stdlib_root(struct rsv *r)
{
	if (!r->stdlib && r->o->stdlib)
		r->stdlib = r->o->stdlib;
	if (!r->stdlib) {
		char dir[PATH_MAX];
		stdlib_dir_default(dir, sizeof dir);
		r->stdlib = arena_strdup(r->a, dir);
	}
	return r->stdlib;
}

/* The -I folders, then the standard library's platform folder and its
 * shared one: the same for every import, so joined once per compile. */
static size_t search_dirs(struct rsv *r, const char ***dirs)
{
	if (!r->search) {
		const char **d = arena_alloc(r->a, (r->o->nincludes + 2) * sizeof(*d));
		size_t n = 0;
		for (size_t i = 0; i < r->o->nincludes; i++)
			d[n++] = r->o->includes[i];
		const char *std = stdlib_root(r);
		d[n++] = load_join(r->a, std, ir_target_name(r->pol->ir->target));
		d[n++] = load_join(r->a, std, "."); /* spelled like the one above */
		r->search = d;
		r->nsearch = n;
	}
	*dirs = r->search;
	return r->nsearch;
}

/* Finds the file an import names: relative ("./", "../"), absolute, or on
 * the search path (search_dirs). Standard library files are shown by their
 * name under the library ("std/secrets.cage", "linux/std/base.cage") so
 * diagnostics and golden files do not depend on where it is installed. */
/* "linux/..." or "macos/...": a platform folder of the standard library. */
static bool names_platform_dir(const char *name)
{
	return strncmp(name, "linux/", 6) == 0 || strncmp(name, "macos/", 6) == 0;
}

static bool import_locate(struct rsv *r, const struct rfile *from, const char *name,
			  char **fs_path, char **display, const char **std_base, bool *seen)
{
	*std_base = NULL;
	*seen = false; /* true when the search found it there: no second look */
	const char *file = has_suffix(name, ".cage") ? name : arena_concat(r->a, name, ".cage");
	if (strncmp(name, "./", 2) == 0 || strncmp(name, "../", 3) == 0) {
		*fs_path = load_join(r->a, from->fs_dir, file);
		*display = load_join(r->a, from->display_dir, file);
		*std_base = from->src->stdlib_root;
		return true;
	}
	if (name[0] == '/') {
		*fs_path = load_join(r->a, "/", file);
		*display = *fs_path;
		return true;
	}
	const char **dirs;
	size_t n = search_dirs(r, &dirs);
	for (size_t i = 0; i < n; i++) {
		/* A policy names modules, never platforms: the other platform's
		 * copy of a module is not reachable by spelling out its folder. */
		if (i == n - 1 && names_platform_dir(name))
			break;
		char *p = load_join(r->a, dirs[i], file);
		if (!probe(r, p))
			continue;
		*seen = true;
		*fs_path = p;
		if (i < r->o->nincludes)
			*display = p;
		else if (i == r->o->nincludes)
			*display = load_join(r->a, ir_target_name(r->pol->ir->target), file);
		else
			*display = arena_strdup(r->a, file);
		if (i >= r->o->nincludes)
			*std_base = stdlib_root(r);
		return true;
	}
	return false;
}

/* Offers the modules beside where `name` was looked for in `dir`
 * ("std/secret" -> every std/NAME.cage there) to a "did you mean". */
static void import_offer_dir(struct rsv *r, struct suggest *sg, const char *dir, const char *name)
{
	const char *slash = strrchr(name, '/');
	size_t plen = slash ? (size_t)(slash + 1 - name) : 0;
	char *sub = plen ? load_join(r->a, dir, arena_strndup(r->a, name, plen)) : (char *)dir;
	DIR *d = opendir(sub);
	if (!d)
		return;
	struct dirent *e;
	/* bounded: a library directory holds tens of modules */
	for (size_t k = 0; k < 4096 && (e = readdir(d)) != NULL; k++) {
		size_t el = strlen(e->d_name);
		if (el > 5 && e->d_name[0] != '.' && strcmp(e->d_name + el - 5, ".cage") == 0)
			suggest_offer(sg, arena_printf(r->a, "%.*s%.*s", (int)plen, name, (int)(el - 5),
						       e->d_name));
	}
	closedir(d);
}

/* "; did you mean ..." for an import `name` looked for in `dir`. */
static const char *import_near(struct rsv *r, const char *dir, const char *name)
{
	struct suggest sg;
	size_t nlen = has_suffix(name, ".cage") ? strlen(name) - 5 : strlen(name);
	suggest_init(&sg, name, nlen);
	import_offer_dir(r, &sg, dir, arena_strndup(r->a, name, nlen));
	return suggest_hint(&sg, r->a);
}

/* "cannot find import" with every directory searched, in order. */
static void import_missing(struct rsv *r, struct loc at, const char *name)
{
	const char **dirs;
	size_t n = search_dirs(r, &dirs), len = 0;
	if (names_platform_dir(name))
		n--; /* import_locate does not look there for such a name */
	for (size_t i = 0; i < n; i++)
		len += strlen(dirs[i]) + 2;
	char *list = arena_alloc(r->a, len + 1);
	list[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(list, ", ");
		strcat(list, dirs[i]);
	}
	struct suggest sg;
	size_t nlen = has_suffix(name, ".cage") ? strlen(name) - 5 : strlen(name);
	suggest_init(&sg, name, nlen);
	for (size_t i = 0; i < n; i++)
		import_offer_dir(r, &sg, dirs[i], arena_strndup(r->a, name, nlen));
	/* A standard library that is not there at all is a broken or
	 * partial installation, not a misspelt import: say so. */
	const char *std = stdlib_root(r);
	bool no_std = access(std, F_OK) != 0;
	rsv_diag(r, DIAG_ERROR, at, "import", "cannot find import '%s' (searched %s)%s%s%s%s%s",
		 name, list,
		 names_platform_dir(name) ? "; a platform module is imported by its name under std/ "
					    "and chosen by --target" : "",
		 no_std ? "; the standard library directory " : "", no_std ? std : "",
		 no_std ? (r->o->stdlib ? " given by --stdlib does not exist"
					: " does not exist: is cage installed completely? "
					  "(--stdlib DIR names another)") : "",
		 suggest_hint(&sg, r->a));
}

static void do_imports(struct rsv *r, struct rfile *rf, size_t depth)
{
	for (struct ast_node *n = rf->ast->items; n; n = n->next) {
		if (n->kind != AST_IMPORT)
			continue;
		struct ast_str *s = n->u.import.path;
		struct policy_import rec = { .from = rf->src, .loc = s->loc };
		char *fs_path = NULL, *display = NULL;
		const char *std_base = NULL;
		bool seen;
		if (s->len == 0 || memchr(s->text, '\0', s->len) || s->len != strlen(s->text)) {
			rsv_diag(r, DIAG_ERROR, s->loc, "import", "empty import name");
			VEC_PUSH(r->imports, rec);
			continue;
		}
		if (!import_locate(r, rf, s->text, &fs_path, &display, &std_base, &seen)) {
			import_missing(r, s->loc, s->text);
			VEC_PUSH(r->imports, rec);
			continue;
		}
		char real[PATH_MAX];
		if (!seen && !probe(r, fs_path)) {
			rsv_diag(r, DIAG_ERROR, s->loc, "import", "cannot find import '%s' (no file %s)%s",
				 s->text, fs_path,
				 s->text[0] == '/' ? "" : import_near(r, rf->fs_dir, s->text));
			VEC_PUSH(r->imports, rec);
			continue;
		}
		bool got = load_realpath(&r->realdirs, fs_path, real);
		int rerr = errno;
		rsv_input(r, INPUT_REAL, fs_path, got ? 0 : rerr, got ? real : NULL, NULL, 0);
		if (!got) {
			rsv_diag(r, DIAG_ERROR, s->loc, "import", "cannot open import '%s' (%s): %s",
			      s->text, fs_path, strerror(rerr));
			VEC_PUSH(r->imports, rec);
			continue;
		}
		if (on_stack(r, real)) {
			struct diag *d = rsv_diag(r, DIAG_ERROR, s->loc, "import-cycle",
					       "import cycle: '%s' is already being imported", display);
			(void)d;
			VEC_PUSH(r->imports, rec);
			continue;
		}
		struct rfile *done = find_loaded(r, real);
		if (done) {
			rec.target = done->src;
			VEC_PUSH(r->imports, rec);
			continue;
		}
		if (depth + 1 > RESOLVE_MAX_IMPORT_DEPTH) {
			rsv_diag(r, DIAG_ERROR, s->loc, "import",
			      "imports nested more than %d deep", RESOLVE_MAX_IMPORT_DEPTH);
			VEC_PUSH(r->imports, rec);
			continue;
		}
		char *text;
		size_t len;
		const char *err;
		if (!load_read(r->a, fs_path, &text, &len, &err)) {
			rsv_diag(r, DIAG_ERROR, s->loc, "import", "%s", err);
			VEC_PUSH(r->imports, rec);
			continue;
		}
		rsv_input(r, INPUT_FILE, fs_path, 0, NULL, text, len);
		struct rfile *child = arena_alloc(r->a, sizeof(*child));
		struct src_file *src = arena_alloc(r->a, sizeof(*src));
		src->name = display;
		src->realpath = arena_strdup(r->a, real);
		src->stdlib_root = std_base;
		src->text = text;
		src->len = len;
		src->importer = rf->src;
		src->import_line = s->loc.line;
		src->import_col = s->loc.col;
		child->src = src;
		child->fs_dir = load_dirname(r->a, fs_path);
		child->display_dir = load_dirname(r->a, display);
		rec.target = src;
		VEC_PUSH(r->imports, rec);
		rsv_load(r, child, depth + 1);
	}
}

static void check_nul(struct rsv *r, struct src_file *f, bool *binary)
{
	const char *nul = memchr(f->text, '\0', f->len);
	*binary = nul != NULL;
	if (nul) {
		size_t off = (size_t)(nul - f->text);
		uint32_t line = 1;
		size_t ls = 0;
		for (size_t i = 0; i < off; i++)
			if (f->text[i] == '\n') {
				line++;
				ls = i + 1;
			}
		struct loc l = { .file = f, .line = line, .col = diag_display_col(f->text, ls, off),
				 .off = (uint32_t)off, .len = 1 };
		rsv_diag(r, DIAG_ERROR, l, "syntax",
		      "NUL byte in policy text (is this a binary file?)");
	}
}

static void check_version(struct rsv *r, struct rfile *rf)
{
	struct ast_node *first = rf->ast->items;
	bool seen = false;
	for (struct ast_node *n = first; n; n = n->next) {
		if (n->kind != AST_VERSION)
			continue;
		if (seen || n != first) {
			rsv_diag(r, DIAG_ERROR, n->loc, "version",
			      "the version line must be the first statement, and only once");
			continue;
		}
		seen = true;
		if (strcmp(n->u.version.number->text, "1") != 0)
			rsv_diag(r, DIAG_ERROR, n->u.version.number->loc, "version",
			      "unsupported language version %s (this cagec understands 1)",
			      n->u.version.number->text);
	}
	if (!first || first->kind != AST_VERSION) {
		if (rf->ast->syntax_errors && !first)
			return; /* nothing parsed: the syntax errors say enough */
		struct loc l = { .file = rf->src, .line = 1, .col = 1, .off = 0,
				 .len = rf->src->len ? 1 : 0 };
		if (l.len && (rf->src->text[0] == '\n' || rf->src->text[0] == '\r'))
			l.len = 0;
		rsv_diag(r, DIAG_ERROR, l, "version",
		      "missing version line: a policy starts with 'cage 1'");
	}
}

void rsv_load(struct rsv *r, struct rfile *rf, size_t depth)
{
	rf->src->id = (int)r->all_loaded.n; /* pre-order: the main file is 0 */
	VEC_PUSH(r->all_loaded, rf);
	bool binary;
	check_nul(r, rf->src, &binary);
	if (binary) {
		rf->ast = arena_alloc(r->a, sizeof(*rf->ast));
		rf->ast->src = rf->src;
	} else {
		/* The standard library's own files come parsed with the build
		 * (stdlib_ast.h); any other bytes are parsed here. */
		rf->ast = rf->src->stdlib_root ? stdlib_ast_find(rf->src, r->a) : NULL;
		if (!rf->ast)
			rf->ast = parse_file(rf->src, r->a, r->d);
		check_version(r, rf);
	}
	const char *real = rf->src->realpath ? rf->src->realpath : "";
	VEC_PUSH(r->loading, real);
	do_imports(r, rf, depth);
	r->loading.n--;
	VEC_PUSH(r->files, rf);
}
