/*
 * layers.c - finding cagerun's layers and composing them (layers.h).
 *
 * Composition is a policy of its own, built as text: a root file that
 * imports each layer in order. The resolver then does what it does for any
 * policy (one load per file, module-level items in load order, params
 * global), so a composed policy means exactly what the same imports written
 * by hand would mean, and `cagec` can reproduce it. What the resolver does
 * not know is trust: an unapproved project layer is narrowed afterwards, in
 * the IR, by the file each rule came from (docs/security-model.md).
 */
#include "layers.h"
#include "stdlib_dir.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "cachedir.h"
#include "cli.h"
#include "hashfeed.h"
#include "layers_lint.h"
#include "layers_order.h"
#include "cage.h"
#include "policy.h"
#include "run.h"
#include "runcommon.h"
#include "trust.h"

#define fail run_fail

static char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p) {
		fputs("cagerun: out of memory\n", stderr);
		abort();
	}
	return p;
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

/* The standard library's folder: --stdlib, else the default, found once
 * per load (finding it reads the program's path and the folders around
 * it, the same answer for every module this load looks for). */
static const char *stdlib_of(struct layers *L, const cage_options *o)
{
	if (o->stdlib)
		return o->stdlib;
	if (!L->stdlib[0])
		(void)stdlib_dir_default(L->stdlib, sizeof L->stdlib);
	return L->stdlib;
}

/* The file `import "NAME"` loads, into p: -I directories, then the
 * standard library's platform folder, then its portable one. */
static bool module_path(struct layers *L, const cage_options *o, const char *name, char *p,
			size_t size)
{
	for (size_t i = 0; i < o->nincludes; i++) {
		snprintf(p, size, "%s/%s.cage", o->includes[i], name);
		if (is_file(p))
			return true;
	}
	const char *std = stdlib_of(L, o);
	snprintf(p, size, "%s/%s/%s.cage", std, ir_target_name(IR_TARGET_HOST), name);
	if (is_file(p))
		return true;
	snprintf(p, size, "%s/%s.cage", std, name);
	return is_file(p);
}

/* Whether `import "NAME"` finds a file. */
static bool module_exists(struct layers *L, const cage_options *o, const char *name)
{
	char p[2 * PATH_MAX];
	return module_path(L, o, name, p, sizeof p);
}

static void add(struct layers *L, const char *kind, const char *import)
{
	if (L->n < LAYERS_MAX) {
		L->v[L->n].kind = kind;
		L->v[L->n].import = xstrdup(import);
		L->n++;
	}
}

/* The project: the nearest .cage/policy.cage from `cwd` up to the
 * repository's root (the first directory with a .git), and the project's
 * root (the directory holding that .cage, else the repository's root,
 * else cwd). Outside a repository only cwd itself is looked at: a
 * .cage/ in /tmp or a parent folder nobody chose must not be picked up. */
static void find_project(const char *cwd, char **layer, char **root)
{
	char dir[PATH_MAX], p[PATH_MAX + 32];
	snprintf(dir, sizeof dir, "%s", cwd);
	char *repo = NULL;
	for (int depth = 0; depth < 256; depth++) {
		snprintf(p, sizeof p, "%s/.git", strcmp(dir, "/") ? dir : "");
		if (exists(p)) {
			repo = xstrdup(dir);
			break;
		}
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
	}
	*layer = NULL;
	snprintf(dir, sizeof dir, "%s", cwd);
	for (int depth = 0; depth < 256; depth++) {
		snprintf(p, sizeof p, "%s/.cage/policy.cage", strcmp(dir, "/") ? dir : "");
		if (is_file(p)) {
			*layer = xstrdup(p);
			*root = xstrdup(dir);
			break;
		}
		if (!repo || strcmp(dir, repo) == 0)
			break;
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
	}
	if (!*layer)
		*root = xstrdup(repo ? repo : cwd);
	free(repo);
}

/* A path that can be written in a policy string as it is. */
static bool nameable(const char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || *s == '{' || *s == '}' || (unsigned char)*s < 0x20)
			return false;
	return true;
}

static bool name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '-' || *s == '_' || *s == '.'))
			return false;
	return true;
}

/* Whether a layer's own text declares `param workspace` (its imports are
 * not read: a declaration there makes the first compile fail, and the
 * composition is then retried without its own). */
static bool declares_workspace(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		const char *s = line + strspn(line, " \t");
		if (strncmp(s, "param", 5) != 0 || (s[5] != ' ' && s[5] != '\t'))
			continue;
		s += 5 + strspn(s + 5, " \t");
		found = strncmp(s, "workspace", 9) == 0 && strchr(" \t:", s[9]);
	}
	fclose(f);
	return found;
}

static bool has_define(const cage_options *o, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < o->ndefines; i++)
		if (strncmp(o->defines[i], name, n) == 0 && o->defines[i][n] == '=')
			return true;
	return false;
}

/* The root file of the composition. */
static char *compose_text(const struct layers *L, bool declare_workspace)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fputs("cage 1\n# cagerun's layers, first to last; a later rule wins, protect always wins\n", f);
	for (size_t i = 0; i < L->n; i++)
		fprintf(f, "import \"%s\" # %s\n", L->v[i].import, L->v[i].kind);
	if (declare_workspace)
		fputs("param workspace : path\n", f);
	/* The user's approvals and own layers: no layer may let the command
	 * change them (protect wins wherever it is written). */
	if (L->cfgdir[0])
		fprintf(f, "protect write \"%s/**\"\n", L->cfgdir);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Each layer's file as compiled: the root's imports, in order. */
static void bind_sources(struct layers *L, const cage_policy *p)
{
	const struct src_file *imp[LAYERS_MAX];
	size_t n = layers_imported(p, imp, L->n);
	for (size_t k = 0; k < n; k++) {
		const struct src_file *s = imp[k];
		struct layer_src *ls = &L->v[k];
		ls->src = s;
		if (s) {
			ls->fp = XXH3_64bits(s->text, s->len);
			free(ls->path);
			ls->path = xstrdup(s->realpath ? s->realpath : s->name);
		}
	}
}

/* The command layer's file is gone once the policy is compiled: it is
 * shown as <command>, as the composition's root is <layers>. (The name
 * is the arena's copy, owned by the load.) cage-lint does the same for
 * its load (--command). */
static void name_generated(const struct layers *L)
{
	for (size_t i = 0; i < L->n; i++)
		if (!strcmp(L->v[i].kind, "command") && L->v[i].src)
			((struct src_file *)L->v[i].src)->name = "<command>";
}

/* The index of the last layer of `kind`, or -1. */
static int index_of_kind(const struct layers *L, const char *kind)
{
	for (size_t i = L->n; i-- > 0;)
		if (!strcmp(L->v[i].kind, kind))
			return (int)i;
	return -1;
}

static const struct layer_src *layer_of_kind(const struct layers *L, const char *kind)
{
	int i = index_of_kind(L, kind);
	return i < 0 ? NULL : &L->v[i];
}

/* The profile that runs (layers_select); cage-lint chooses the same way
 * from what it is told of the layers (lint_begin). */
static void select_profile(struct layers *L, const cage_options *o)
{
	const char *kinds[LAYERS_MAX];
	const struct src_file *srcs[LAYERS_MAX];
	bool untrusted[LAYERS_MAX];
	for (size_t i = 0; i < L->n; i++) {
		kinds[i] = L->v[i].kind;
		srcs[i] = L->v[i].src;
		untrusted[i] = L->v[i].untrusted;
	}
	layers_select(L->pol->ir, o->profile != NULL, kinds, srcs, untrusted, L->n);
}

static void print_loc(FILE *f, const struct loc *l)
{
	if (l->file)
		fprintf(f, "%s:%u:%u: ", l->file->name, l->line, l->col);
}

/* An unapproved project layer keeps only what narrows: deny and protect
 * rules, `env unset`, `private`, and `mode enforce`. Its allows and
 * env keep/set are left out (each reported); a param it declares or a
 * weaker mode refuses the run, since either would change what the other
 * layers' rules mean. */
static int narrow(struct layers *L, const struct layer_src *proj, bool quiet)
{
	struct ir_policy *ir = L->pol->ir;
	struct ir_profile *p = ir->selected;
	const struct src_file *ps = proj->src;
	int rc = 0;
	for (size_t i = 0; i < ir->nparams; i++)
		if (layers_from(ir->params[i].loc.file, ps)) {
			fputs("cagerun: ", stderr);
			print_loc(stderr, &ir->params[i].loc);
			fprintf(stderr, "error: the project layer is not trusted and declares param "
					"'%s', whose value would shape the other layers' rules\n",
				ir->params[i].name);
			rc = RUN_SETUP_FAILED;
		}
	if (p->mode_loc.file && layers_from(p->mode_loc.file, ps) && p->mode != IR_MODE_ENFORCE) {
		fputs("cagerun: ", stderr);
		print_loc(stderr, &p->mode_loc);
		fprintf(stderr, "error: the project layer is not trusted and sets mode %s; only "
				"'mode enforce' may come from it\n", ir_mode_name(p->mode));
		rc = RUN_SETUP_FAILED;
	}
	if (rc)
		return fail("%s is not trusted and cannot run as it is; review it, then run "
			    "'cagerun trust' to approve it; nothing was run", proj->path);
	size_t k = 0;
	for (size_t i = 0; i < p->nrules; i++) {
		struct ir_rule *r = &p->rules[i];
		if (r->effect == IR_ALLOW && layers_from(r->loc.file, ps)) {
			if (!quiet) {
				char acc[128], tgt[512];
				ir_access_names(r->access, acc, sizeof acc);
				ir_target_display(r, tgt, sizeof tgt);
				fputs("cagerun: ", stderr);
				print_loc(stderr, &r->loc);
				fprintf(stderr, "ignored: allow %s %s (untrusted project layer)\n", acc, tgt);
			}
			L->ignored++;
			continue;
		}
		p->rules[k] = *r;
		p->rules[k].index = (uint32_t)k;
		k++;
	}
	p->nrules = k;
	/* The guards are per rule index (ir_pins.c): derived again. */
	ir_pins_build(&L->pol->arena, p);
	k = 0;
	for (size_t i = 0; i < p->nenv; i++) {
		struct ir_env_op *e = &p->env[i];
		if (e->kind != IR_ENV_UNSET && layers_from(e->loc.file, ps)) {
			if (!quiet) {
				fputs("cagerun: ", stderr);
				print_loc(stderr, &e->loc);
				fprintf(stderr, "ignored: env %s %s (untrusted project layer)\n",
					e->kind == IR_ENV_KEEP ? "keep" : "set", e->name);
			}
			L->ignored++;
			continue;
		}
		p->env[k++] = *e;
	}
	p->nenv = k;
	if (!quiet)
		fprintf(stderr, "cagerun: %s is not trusted: only its deny and protect rules apply (%zu "
				"grant%s ignored); review it, then run 'cagerun trust'\n",
			proj->path, L->ignored, L->ignored == 1 ? "" : "s");
	return 0;
}

/* What the run enforces, as one hash (what --pin holds): the mode in
 * force, private directories, limits, every rule with its excepts and
 * every environment step, in order. Comments, layout and file names do
 * not change it; any change of meaning does (hashfeed.h says how fields
 * go in). */

/* A path as the user wrote it relative to '~' stays '~'-relative, so a
 * pinned policy means the same for another home. */
static void fp_path(struct hashfeed *h, const struct ir_path *p)
{
	hf_u64(h, p->home_len ? 1 : 0);
	hf_str(h, p->text + p->home_len);
}

static uint64_t effective_fingerprint(const struct ir_profile *p, int mode)
{
	struct hashfeed h;
	if (!hf_init(&h, false))
		abort();
	hf_str(&h, "cage effective 2");
	hf_u64(&h, (uint64_t)mode);
	hf_u64(&h, (uint64_t)p->private_tmp << 1 | (uint64_t)p->private_home);
	for (int k = 0; k < IR_LIM_N; k++) {
		const struct ir_limit *l = &p->limits[k];
		hf_u64(&h, (uint64_t)l->set << 1 | (uint64_t)l->best_effort);
		hf_u64(&h, l->set ? l->value : 0);
	}
	hf_u64(&h, p->nrules);
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		hf_u64(&h, (uint64_t)r->effect << 40 | (uint64_t)r->tkind << 32 | r->access);
		if (r->tkind == IR_T_PATH || r->tkind == IR_T_UNIX) {
			fp_path(&h, &r->t.path);
		} else {
			char tgt[1024];
			ir_target_display(r, tgt, sizeof tgt);
			hf_str(&h, tgt);
		}
		hf_u64(&h, r->nexcept);
		for (uint32_t k = 0; k < r->nexcept; k++)
			fp_path(&h, &r->except[k].path);
	}
	hf_u64(&h, p->nenv);
	for (size_t i = 0; i < p->nenv; i++) {
		const struct ir_env_op *e = &p->env[i];
		hf_u64(&h, (uint64_t)e->kind);
		hf_str(&h, e->name);
		hf_str(&h, e->value); /* NULL as "" */
	}
	return hf_digest64(&h);
}

static bool parse_mode(const char *s, int *mode)
{
	enum ir_mode m;
	if (!ir_mode_parse(s, &m))
		return false;
	*mode = (int)m;
	return true;
}

/* Whether layer i is a project layer its user has not approved, from
 * the file as it is now: what the launch will decide from the bytes it
 * compiles, unless they change in between, which lint_layers then sees. */
static bool untrusted_now(const struct layers *L, size_t i)
{
	char real[PATH_MAX], why[256];
	uint64_t fp;
	return !L->cfgdir[0] || !realpath(L->v[i].import, real) ||
	       !trust_hash_file(real, &fp, why, sizeof why) || !trust_is_approved(L->cfgdir, real, fp);
}

/* Starts lint's second load of `text` in cage-lint (layers_lint.h), just
 * before the launch's own compile of it, so that the two run side by
 * side; lint_layers takes the verdict. A job already under way (for an
 * earlier text or other options) is dropped first. */
static void lint_begin(struct layers *L, const char *text, const cage_options *o, bool task_last)
{
	ll_drop(&L->lint_job);
	const char *kinds[LAYERS_MAX];
	bool untrusted[LAYERS_MAX];
	for (size_t i = 0; i < L->n; i++) {
		kinds[i] = L->v[i].kind;
		untrusted[i] = !strcmp(L->v[i].kind, "project") && untrusted_now(L, i);
	}
	struct ll_request rq = { .text = text, .opts = o, .stdlib = stdlib_of(L, o),
				 .kinds = kinds, .untrusted = untrusted, .nlayers = L->n,
				 .task = task_last ? index_of_kind(L, "task") : -1,
				 .command = index_of_kind(L, "command") };
	ll_start(&rq, &L->lint_job);
}

/* lint's verdict, begun by lint_begin: its findings must not count as
 * errors of the policy that runs. Returns the errors found in `kind`'s
 * layer (0 when there is none), LINT_CHANGED when a layer changed between
 * the two loads or lint judged another profile than the one that runs,
 * LINT_UNJUDGED when no verdict was had (said on stderr). */
enum { LINT_CHANGED = -1, LINT_UNJUDGED = -2 };

static long lint_layers(struct layers *L, const char *kind)
{
	char why[PATH_MAX + 200];
	L->linted = true;
	if (!ll_finish(&L->lint_job, &L->lint, why, sizeof why)) {
		fprintf(stderr, "cagerun: lint's verdict on the layers: %s\n", why);
		return LINT_UNJUDGED;
	}
	/* The findings must be about the bytes that run: a layer rewritten
	 * between the two loads is refused rather than judged by its old text,
	 * and so is a second load that no longer compiles. */
	bool changed = !L->lint.judged || L->lint.nsrc != L->n;
	for (size_t i = 0; i < L->n && i < L->lint.nsrc; i++) {
		const struct ll_source *seen = &L->lint.src[i];
		if (!L->v[i].src != !seen->bound || (seen->bound && seen->fp != L->v[i].fp)) {
			fprintf(stderr, "cagerun: %s changed while cagerun was reading it\n",
				L->v[i].path ? L->v[i].path : L->v[i].kind);
			changed = true;
		}
	}
	/* And about the profile that runs: trust was read before the compile,
	 * for the helper, and after it, for the launch. */
	const struct ir_profile *sel = L->pol->ir->selected;
	if (!changed && strcmp(L->lint.profile, sel && sel->name ? sel->name : "")) {
		fprintf(stderr, "cagerun: lint judged profile '%s', the launch selected '%s' (a "
				"layer or its approval changed meanwhile)\n",
			L->lint.profile, sel && sel->name ? sel->name : "");
		changed = true;
	}
	if (changed)
		return LINT_CHANGED;
	const struct layer_src *ls = kind ? layer_of_kind(L, kind) : NULL;
	if (!ls || !ls->path)
		return 0;
	long bad = 0;
	for (size_t i = 0; i < L->lint.n; i++) {
		const struct ll_finding *d = &L->lint.v[i];
		if (d->sev != 'e' || strcmp(d->layer, ls->path))
			continue;
		fprintf(stderr, "cagerun: %s:%u:%u: error: %s [%s]\n", d->file, d->line, d->col,
			d->msg, d->id);
		bad++;
	}
	return bad;
}

/* Gives the `cache` param (std/guard's) the private folder of `name`,
 * made now unless only --show asked; 0 or 125. */
static int give_cache(struct layers *L, const struct layers_req *rq, const char *name)
{
	char err[PATH_MAX + 200];
	cachedir_key(name, L->cache_key);
	if (!cachedir_resolve(L->cache_key, !rq->lint, L->cache, sizeof L->cache, err, sizeof err))
		return fail("the private cache: %s; nothing was run (or give -D cache=DIR)", err);
	if (!nameable(L->cache))
		return fail("the private cache %s cannot be named in a policy (quote, backslash or "
			    "brace)", L->cache);
	char def[sizeof L->cache + 8];
	snprintf(def, sizeof def, "cache=%s", L->cache);
	cage_options_define(rq->copts, def);
	return 0;
}

/* Whether std/guard (the standard library's, or a copy found first on an
 * -I folder) declares `cache` and no -D gave it. A `cache` param of the
 * policy's own is left alone: it means what that policy says. */
static bool is_guard_file(const char *n)
{
	static const char guard[] = "std/guard.cage";
	size_t nl = strlen(n), gl = sizeof guard - 1;
	return nl >= gl && !strcmp(n + nl - gl, guard) && (nl == gl || n[nl - gl - 1] == '/');
}

static bool wants_cache(const cage_policy *p)
{
	for (size_t i = 0; p->ir && i < p->ir->nparams; i++) {
		const struct ir_param *q = &p->ir->params[i];
		if (strcmp(q->name, "cache") || !q->loc.file)
			continue;
		return !q->from_define && is_guard_file(q->loc.file->name);
	}
	return false;
}

/* -p alone: the private cache's folder given while the policy compiles
 * (cage_options_param_fn), from the name of the profile that will be
 * selected, so that the policy compiles once. Only the folder's path is
 * worked out here (nothing is made): load_policy_file makes it after a
 * clean compile, and compiles again the old way should anything differ. */
struct cache_fn {
	bool used, failed;
	char key[CACHEDIR_KEY_MAX + 1];
	char path[PATH_MAX];
};

static const char *cache_fn(void *ctx, const char *param, const char *decl, const char *profile)
{
	struct cache_fn *c = ctx;
	if (strcmp(param, "cache") || !is_guard_file(decl))
		return NULL;
	char err[PATH_MAX + 200];
	cachedir_key(profile, c->key);
	if (!cachedir_resolve(c->key, false, c->path, sizeof c->path, err, sizeof err) ||
	    !nameable(c->path)) {
		c->failed = true;
		return NULL;
	}
	c->used = true;
	return c->path;
}

/* -p: the key is the selected profile's name, else the file's own. */
static void policy_key(const cage_policy *p, const char *file, char *out, size_t cap)
{
	const struct ir_profile *sel = p->ir->selected;
	if (sel && sel->name) {
		snprintf(out, cap, "%s", sel->name);
		return;
	}
	const char *b = strrchr(file, '/');
	snprintf(out, cap, "%s", b ? b + 1 : file);
	size_t n = strlen(out);
	if (n > 5 && !strcmp(out + n - 5, ".cage"))
		out[n - 5] = '\0';
}

/* The compile with cache_fn: true when it gave the folder and the compile
 * is the one the two-step way below would have made (the same key, the
 * folder made and resolved to the same path); false with L->pol freed
 * otherwise, for the two-step way. */
static bool load_with_cache_fn(struct layers *L, const struct layers_req *rq, int *rc)
{
	struct cache_fn c = { 0 };
	cage_options_param_fn(rq->copts, cache_fn, &c);
	L->pol = cage_load_file(rq->policy, rq->copts);
	cage_options_param_fn(rq->copts, NULL, NULL);
	if (!L->pol || !c.used)
		return L->pol != NULL;
	char key[256], made[CACHEDIR_KEY_MAX + 1];
	if (cage_error_count(L->pol) == 0 && L->pol->ir->selected && !c.failed) {
		policy_key(L->pol, rq->policy, key, sizeof key);
		cachedir_key(key, made);
		if (!strcmp(made, c.key)) {
			/* Made (and checked) now, and given as -D for the
			 * compiles that follow, as give_cache does. */
			*rc = give_cache(L, rq, key);
			if (*rc || !strcmp(L->cache, c.path))
				return true;
		}
	}
	cage_policy_free(L->pol);
	L->pol = NULL;
	return false;
}

static int load_policy_file(struct layers *L, const struct layers_req *rq)
{
	add(L, "policy", rq->policy);
	int rc = 0;
	if (!has_define(rq->copts, "cache") && load_with_cache_fn(L, rq, &rc)) {
		if (rc)
			return rc;
	} else {
		L->pol = cage_load_file(rq->policy, rq->copts);
	}
	if (!L->pol)
		return fail("out of memory");
	if (cage_error_count(L->pol) == 0 && L->pol->ir->selected && wants_cache(L->pol)) {
		/* What cache_fn could not give (its folder failed; it says why
		 * here): the key from the compiled profile, then a second load
		 * with the key's folder. */
		char key[256];
		policy_key(L->pol, rq->policy, key, sizeof key);
		rc = give_cache(L, rq, key);
		if (rc)
			return rc;
		cage_policy_free(L->pol);
		L->pol = cage_load_file(rq->policy, rq->copts);
		if (!L->pol)
			return fail("out of memory");
	}
	cage_print_diagnostics(L->pol, stderr, cli_want_color("auto", STDERR_FILENO));
	if (cage_error_count(L->pol) > 0 || !L->pol->ir->selected)
		return fail("%s: the policy has errors; nothing was run", rq->policy);
	const struct src_file *s = layers_root(L->pol);
	L->v[0].src = s;
	L->v[0].fp = XXH3_64bits(s->text, s->len);
	L->v[0].path = xstrdup(s->realpath ? s->realpath : s->name);
	if (rq->lint) {
		/* As for layers: lint's verdict on a second load, whose
		 * findings count nowhere. */
		char why[PATH_MAX + 200];
		struct ll_request lq = { .file = rq->policy, .opts = rq->copts,
					 .stdlib = stdlib_of(L, rq->copts), .task = -1,
					 .command = -1 };
		L->linted = true;
		if (!ll_ask(&lq, &L->lint, why, sizeof why))
			return fail("lint's verdict on %s: %s; nothing was run", rq->policy, why);
	}
	return 0;
}

/* The composition's root, just loaded into L->pol: its diagnostics
 * printed, each layer bound to its file. 0, or 125 saying `what`. */
static int root_loaded(struct layers *L, const char *what)
{
	if (!L->pol)
		return fail("out of memory");
	cage_print_diagnostics(L->pol, stderr, cli_want_color("auto", STDERR_FILENO));
	if (cage_error_count(L->pol) > 0 || !L->pol->ir->selected)
		return fail("%s; nothing was run", what);
	bind_sources(L, L->pol);
	return 0;
}

/* -p POLICY --task FILE: the policy as written, then the task layer on
 * top (task_to_end says in which order). The policy's profile runs; a
 * task may add grants, denies and environment steps, and is refused when
 * it re-opens what the policy denies or protects (lint's findings in the
 * task file), declares a profile, or unsets nothing but keeps or sets a
 * variable the policy unsets. */
static int load_policy_task(struct layers *L, const struct layers_req *rq)
{
	char real[2][PATH_MAX];
	const char *given[2] = { rq->policy, rq->task };
	for (int i = 0; i < 2; i++) {
		if (!realpath(given[i], real[i]))
			return fail("%s%s: %s; nothing was run", i ? "--task " : "-p ", given[i],
				    strerror(errno));
		if (!nameable(real[i]))
			return fail("%s cannot be named in a policy (quote, backslash or brace)", real[i]);
	}
	add(L, "policy", real[0]);
	add(L, "task", real[1]);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return fail("out of memory");
	fprintf(f, "cage 1\n# -p POLICY --task FILE: the task's rules come after all of the "
		   "policy's\nimport \"%s\" # policy\nimport \"%s\" # task\n", real[0], real[1]);
	if (fclose(f) != 0) {
		free(text);
		return fail("out of memory");
	}
	/* lint's compile begins beside the launch's last one: the second,
	 * with the cache's -D, when the policy has std/guard's cache (one
	 * helper, not one begun and dropped), else the first. */
	L->pol = cage_load_string("<layers>", text, strlen(text), rq->copts);
	int rc = root_loaded(L, "-p with --task: the policy or the task has errors");
	if (!rc && !wants_cache(L->pol)) {
		lint_begin(L, text, rq->copts, true);
	} else if (!rc) {
		/* The private cache of the policy as for -p alone (the task
		 * declares no profile): keyed, then compiled again with it. */
		char key[256];
		select_profile(L, rq->copts);
		policy_key(L->pol, real[0], key, sizeof key);
		rc = give_cache(L, rq, key);
		if (!rc) {
			lint_begin(L, text, rq->copts, true); /* with the cache's -D */
			cage_policy_free(L->pol);
			L->pol = cage_load_string("<layers>", text, strlen(text), rq->copts);
			rc = root_loaded(L, "-p with --task: the policy or the task has errors");
		}
	}
	if (rc) {
		free(text);
		return rc;
	}
	const struct layer_src *task = &L->v[1];
	struct ir_policy *ir = L->pol->ir;
	for (size_t i = 0; i < ir->nprofiles; i++)
		if (layers_from(ir->profiles[i]->loc.file, task->src)) {
			fputs("cagerun: ", stderr);
			print_loc(stderr, &ir->profiles[i]->loc);
			fprintf(stderr, "error: with -p, the task layer's rules are written at module "
					"level; its profile '%s' would not run\n", ir->profiles[i]->name);
			rc = RUN_SETUP_FAILED;
		}
	select_profile(L, rq->copts);
	/* `env unset` is how a policy keeps a variable out: the task may not
	 * bring it back. */
	const struct ir_profile *sel = ir->selected;
	for (size_t i = 0; i < sel->nenv; i++) {
		const struct ir_env_op *t = &sel->env[i];
		if (t->kind == IR_ENV_UNSET || !layers_from(t->loc.file, task->src))
			continue;
		for (size_t j = 0; j < sel->nenv; j++) {
			const struct ir_env_op *u = &sel->env[j];
			if (u->kind == IR_ENV_UNSET && !layers_from(u->loc.file, task->src) &&
			    !strcmp(u->name, t->name)) {
				fputs("cagerun: ", stderr);
				print_loc(stderr, &t->loc);
				fprintf(stderr, "error: the task layer %s %s, which the policy unsets\n",
					t->kind == IR_ENV_KEEP ? "keeps" : "sets", t->name);
				rc = RUN_SETUP_FAILED;
				break;
			}
		}
	}
	layers_task_to_end(L->pol, task->src);
	long bad = rc ? 0 : lint_layers(L, "task");
	free(text);
	if (rc)
		return fail("%s: a task layer cannot run as it is; nothing was run", task->path);
	if (bad == LINT_UNJUDGED)
		return fail("a task layer on -p is run only after lint judged it; nothing was run");
	if (bad == LINT_CHANGED)
		return fail("a layer changed while it was read; nothing was run");
	if (bad && !rq->lint)
		return fail("%s has %ld lint error%s; a task layer on -p %s may add grants and denies "
			    "but not re-open what the policy denies or protects; nothing was run",
			    task->path, bad, bad == 1 ? "" : "s", rq->policy);
	return 0;
}

/* TMP/cage-command.UID, made 0700 if it is not there, opened and pinned
 * only if it is this user's own directory that nobody else may enter: the
 * place of the command layer's file. -1 when it is someone else's. */
static int own_command_dir(const char *tmp, char *dir, size_t n)
{
	snprintf(dir, n, "%s/cage-command.%u", tmp, (unsigned)geteuid());
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -1;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
			(st.st_mode & 077) != 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Whether `name` in dfd holds exactly `text` (a regular file of this user's). */
static bool holds(int dfd, const char *name, const char *text, size_t n)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		  (size_t)st.st_size == n;
	char *buf = ok ? malloc(n + 1) : NULL;
	ok = ok && buf && read(fd, buf, n + 1) == (ssize_t)n && memcmp(buf, text, n) == 0;
	free(buf);
	close(fd);
	return ok;
}

/* Writes text as `name` in dfd whole (run_replace_at), so that a compile
 * reading it meanwhile reads the old whole or the new. */
static bool write_whole(int dfd, const char *name, const char *text, size_t n)
{
	char part[128];
	snprintf(part, sizeof part, "%s.%d.part", name, (int)getpid());
	(void)unlinkat(dfd, part, 0); /* one left by a killed cagerun whose pid we now have */
	enum run_replace_step step;
	return run_replace_at(dfd, name, part, text, n, &step);
}

/* Command layers not written or read for 30 days (a command since
 * upgraded or removed) go when a new one is written, so that the
 * directory stays as small as the commands in use. A launch that needs
 * one of them again writes it again. */
static void prune_command_dir(int dfd)
{
	int own = dup(dfd); /* closedir closes what fdopendir was given */
	DIR *d = own >= 0 ? fdopendir(own) : NULL;
	if (!d) {
		if (own >= 0)
			close(own);
		return;
	}
	time_t old = time(NULL) - 30 * 24 * 3600;
	struct dirent *e;
	for (int i = 0; i < 4096 && (e = readdir(d)); i++) {
		struct stat st;
		if (strncmp(e->d_name, "command-", 8) != 0 ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (st.st_mtime < old && st.st_atime < old)
			(void)unlinkat(dfd, e->d_name, 0);
	}
	closedir(d);
}

/* The command layer (cmdres.h): a file the composition imports, named by
 * its text in a directory only this user may enter (own_command_dir),
 * so that the same resolution composes the same policy, fingerprint and
 * kept plan on every launch. It is written again unless it already holds
 * exactly this text, and the compile must have read exactly this text
 * (compose checks), so a file changed meanwhile cannot widen the policy.
 * Where that directory cannot be had, a fresh directory of this run's
 * own, removed once the policy is compiled (command_layer_remove).
 * Nothing when COMMAND is not on PATH: the exec says so (127). */
static int command_layer(struct layers *L, const char *cmd)
{
	char err[2 * PATH_MAX];
	enum cmd_status st = cmd_resolve(cmd, getenv("PATH"), &L->cmd, err, sizeof err);
	if (st == CMD_NOT_FOUND)
		return 0;
	if (st == CMD_REFUSED)
		return fail("%s: %s; nothing was run", cmd, err);
	char *text = cmd_layer_text(&L->cmd, cmd);
	if (!text)
		return fail("out of memory");
	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	size_t n = strlen(text);
	char dir[PATH_MAX], name[64], file[PATH_MAX + 64], real[PATH_MAX];
	int dfd = own_command_dir(tmp, dir, sizeof dir);
	if (dfd >= 0) {
		snprintf(name, sizeof name, "command-%016" PRIx64 ".cage",
			 (uint64_t)XXH3_64bits(text, n));
	} else {
		snprintf(dir, sizeof dir, "%s/cage-command.XXXXXX", tmp);
		if (!mkdtemp(dir) ||
		    (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			int e = errno;
			free(text);
			return fail("cannot make a directory in %s: %s; nothing was run", tmp,
				    strerror(e));
		}
		snprintf(L->cmd_dir, sizeof L->cmd_dir, "%s", dir);
		snprintf(name, sizeof name, "command.cage");
	}
	snprintf(file, sizeof file, "%s/%s", dir, name);
	if (!holds(dfd, name, text, n)) {
		if (!write_whole(dfd, name, text, n)) {
			int e = errno;
			close(dfd);
			free(text);
			return fail("cannot write %s: %s; nothing was run", file, strerror(e));
		}
		if (!L->cmd_dir[0])
			prune_command_dir(dfd);
	}
	close(dfd);
	L->cmd_text = text;
	if (!realpath(file, real) || !nameable(real))
		return fail("%s cannot be named in a policy; set TMPDIR to a plainer directory; "
			    "nothing was run", file);
	add(L, "command", real);
	return 0;
}

/* The command layer as compiled is the text cagerun wrote (command_layer). */
static bool command_layer_intact(const struct layers *L)
{
	const struct layer_src *c = layer_of_kind(L, "command");
	const struct src_file *s = c ? c->src : NULL;
	return !c || (s && L->cmd_text && s->len == strlen(L->cmd_text) &&
		      memcmp(s->text, L->cmd_text, s->len) == 0);
}

static void command_layer_remove(struct layers *L)
{
	if (!L->cmd_dir[0])
		return; /* none, or kept by its text (command_layer) */
	char file[PATH_MAX + 32];
	snprintf(file, sizeof file, "%s/command.cage", L->cmd_dir);
	(void)unlink(file);
	(void)rmdir(L->cmd_dir);
	L->cmd_dir[0] = '\0';
}

/* The composed policy must let the command start: a later layer's deny
 * or a protect over what the command layer grants would end in a 126
 * from inside, so it is refused here, naming the rule. */
static int command_check(const struct layers *L, const char *cmd)
{
	const struct ir_profile *p = L->pol->ir->selected;
	static const uint32_t acc[] = { IR_A_READ, IR_A_EXEC };
	for (size_t i = 0; i < L->cmd.n; i++) {
		const struct cmd_grant *g = &L->cmd.g[i];
		char probe[PATH_MAX + 16];
		snprintf(probe, sizeof probe, g->tree ? "%s/package.json" : "%s", g->path);
		for (size_t k = 0; k < 2; k++) {
			struct ir_verdict v;
			ir_eval_path(p, acc[k], probe, &v);
			if (v.allowed)
				continue;
			char tgt[1024] = "", where[PATH_MAX + 32] = "no rule";
			if (v.rule) {
				ir_target_display(v.rule, tgt, sizeof tgt);
				snprintf(where, sizeof where, "%s:%u (%s %s)",
					 v.rule->loc.file ? v.rule->loc.file->name : "(default)",
					 v.rule->loc.line, ir_effect_name(v.rule->effect), tgt);
			}
			return fail("%s: %s (%s) is denied %s by %s, so the command cannot start; nothing "
				    "was run. To allow it, add after that rule: allow read exec \"%s%s\"%s",
				    cmd, probe, g->why, k ? "exec" : "read", where, g->path,
				    g->tree ? "/**" : "",
				    v.rule && v.rule->effect == IR_PROTECT ? " (a protect cannot be undone: "
									      "move the program instead)" : "");
		}
	}
	return 0;
}

/* Finds the layers (in order) and the project's root. */
static int discover(struct layers *L, const struct layers_req *rq)
{
	char err[256];
	if (!trust_config_dir(L->cfgdir, sizeof L->cfgdir, err, sizeof err))
		L->cfgdir[0] = '\0';
	else if (!nameable(L->cfgdir))
		return fail("%s cannot be named in a policy (quote, backslash or brace)", L->cfgdir);
	/* Made now so that its protect holds on Linux, which can only take
	 * away what exists; where it cannot be made, the protect still
	 * refuses a run that would let the command create it. */
	else
		(void)trust_make_dir(L->cfgdir, err, sizeof err);
	add(L, "defaults", "std/base");
	add(L, "defaults", "std/secrets");
	/* The guard module lands in the standard library separately; until a
	 * build has it, the defaults are the two modules above. */
	if (module_exists(L, rq->copts, "std/guard"))
		add(L, "defaults", "std/guard");
	/* Resource bounds; an -I directory may hold the user's own. */
	if (module_exists(L, rq->copts, "std/limits"))
		add(L, "defaults", "std/limits");
	add(L, "workspace", "cagerun/workspace");
	/* Toolchains, registries, GitHub, certificate status: a day's work
	 * needs them whatever the agent (docs/stdlib.md, "The baseline"). */
	if (module_exists(L, rq->copts, "cagerun/baseline"))
		add(L, "baseline", "cagerun/baseline");
	int rc = rq->argv && rq->argv[0] ? command_layer(L, rq->argv[0]) : 0;
	if (rc)
		return rc;
	if (rq->argv && rq->argv[0]) {
		const char *b = strrchr(rq->argv[0], '/');
		b = b ? b + 1 : rq->argv[0];
		char p[PATH_MAX + 64];
		if (name_ok(b)) {
			snprintf(p, sizeof p, "std/agents/%s", b);
			if (module_exists(L, rq->copts, p))
				add(L, "agent", p);
			snprintf(p, sizeof p, "%s/agents/%s.cage", L->cfgdir, b);
			if (L->cfgdir[0] && is_file(p))
				add(L, "agent", p);
		}
	}
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return fail("getcwd: %s", strerror(errno));
	char *proj = NULL;
	find_project(cwd, &proj, &L->root);
	if (proj) {
		char real[PATH_MAX];
		if (!realpath(proj, real)) {
			int e = errno;
			fail("%s: %s", proj, strerror(e));
			free(proj);
			return RUN_SETUP_FAILED;
		}
		free(proj);
		if (!nameable(real))
			return fail("%s cannot be named in a policy (quote, backslash or brace)", real);
		add(L, "project", real);
	}
	if (rq->task) {
		char real[PATH_MAX];
		if (!realpath(rq->task, real))
			return fail("--task %s: %s; nothing was run", rq->task, strerror(errno));
		if (!nameable(real))
			return fail("%s cannot be named in a policy (quote, backslash or brace)", real);
		add(L, "task", real);
	}
	if (!nameable(L->root))
		return fail("the project's root %s cannot be named in a policy", L->root);
	const char *home = getenv("HOME");
	if (!has_define(rq->copts, "workspace") &&
	    (!strcmp(L->root, "/") || (home && !strcmp(L->root, home))))
		return fail("the project's root would be %s; run from a project's folder, or give "
			    "-D workspace=DIR; nothing was run", L->root);
	return 0;
}

int layers_discover(struct layers *L, const struct layers_req *rq)
{
	assert(!rq->policy && !L->discovered);
	int rc = discover(L, rq);
	L->discovered = rc == 0;
	return rc;
}

static int compose(struct layers *L, const struct layers_req *rq)
{
	int rc = L->discovered ? 0 : layers_discover(L, rq);
	if (rc)
		return rc;
	/* A layer that declares the param itself (std/guard does, and it is
	 * a default layer) must not meet the root's declaration: that first
	 * compile would only fail and be made again without it. */
	bool declared = false;
	for (size_t i = 0; i < L->n && !declared; i++) {
		char p[2 * PATH_MAX];
		if (L->v[i].import[0] == '/')
			declared = declares_workspace(L->v[i].import);
		else if (module_path(L, rq->copts, L->v[i].import, p, sizeof p))
			declared = declares_workspace(p);
	}
	/* The agent's private caches (std/guard's `cache`): the agent layer's
	 * name, the command's base name. */
	if (module_exists(L, rq->copts, "std/guard") && !has_define(rq->copts, "cache")) {
		const char *b = rq->argv && rq->argv[0] ? strrchr(rq->argv[0], '/') : NULL;
		b = b ? b + 1 : rq->argv && rq->argv[0] ? rq->argv[0] : "default";
		rc = give_cache(L, rq, b);
		if (rc)
			return rc;
	}
	if (!has_define(rq->copts, "workspace")) {
		char *def = malloc(strlen(L->root) + 16);
		if (!def)
			return fail("out of memory");
		sprintf(def, "workspace=%s", L->root);
		cage_options_define(rq->copts, def);
		free(def);
	}
	char *text = compose_text(L, !declared);
	if (!text)
		return fail("out of memory");
	/* lint judges a project layer (and everything under --show): begun
	 * now, beside the compile. */
	bool judge = rq->lint || index_of_kind(L, "project") >= 0;
	if (judge)
		lint_begin(L, text, rq->copts, false);
	L->pol = cage_load_string("<layers>", text, strlen(text), rq->copts);
	if (L->pol && cage_error_count(L->pol) > 0 && !declared) {
		/* A layer's import declares workspace: the root must not. */
		char *t2 = compose_text(L, false);
		cage_policy *p2 = t2 ? cage_load_string("<layers>", t2, strlen(t2), rq->copts) : NULL;
		if (p2 && cage_error_count(p2) == 0) {
			if (judge)
				lint_begin(L, t2, rq->copts, false);
			cage_policy_free(L->pol);
			L->pol = p2;
			free(text);
			text = t2;
		} else {
			cage_policy_free(p2);
			free(t2);
		}
	}
	if ((rc = root_loaded(L, "the composed policy has errors (cagerun --show lists its "
				 "layers)"))) {
		free(text);
		return rc;
	}
	if (!command_layer_intact(L)) {
		free(text);
		return fail("the command layer changed while it was read; nothing was run");
	}
	name_generated(L);
	struct layer_src *proj = NULL;
	for (size_t i = 0; i < L->n; i++)
		if (!strcmp(L->v[i].kind, "project") && L->v[i].src) {
			proj = &L->v[i];
			proj->untrusted = !L->cfgdir[0] ||
					  !trust_is_approved(L->cfgdir, proj->path, proj->fp);
		}
	select_profile(L, rq->copts);
	if (proj || rq->lint) {
		long bad = lint_layers(L, proj ? "project" : NULL);
		if (bad == LINT_UNJUDGED) {
			free(text);
			return fail("a project layer is run only after lint judged it; nothing was run");
		}
		if (bad == LINT_CHANGED) {
			free(text);
			return fail("a layer changed while it was read; nothing was run");
		}
		if (bad && proj && !rq->lint) {
			free(text);
			return fail("%s has %ld lint error%s; the project layer is refused; nothing "
				    "was run", proj->path, bad, bad == 1 ? "" : "s");
		}
	}
	free(text);
	if (proj && proj->untrusted)
		return narrow(L, proj, rq->quiet);
	return 0;
}

int layers_load(struct layers *L, const struct layers_req *rq)
{
	int rc = rq->policy && rq->task ? load_policy_task(L, rq)
		 : rq->policy		? load_policy_file(L, rq)
					: compose(L, rq);
	command_layer_remove(L);
	if (!rc && L->cmd.found)
		rc = command_check(L, rq->argv[0]);
	if (rc)
		return rc;
	return layers_set_mode(L, rq->mode);
}

int layers_check_command(const struct layers *L, const struct layers_req *rq)
{
	return L->cmd.found ? command_check(L, rq->argv[0]) : 0;
}

int layers_set_mode(struct layers *L, const char *mode)
{
	const struct ir_profile *p = L->pol->ir->selected;
	L->mode = p->mode;
	if (mode && !parse_mode(mode, &L->mode))
		return fail("--mode %s: expected off, monitor, enforce-fs or enforce", mode);
	L->fingerprint = effective_fingerprint(p, L->mode);
	return 0;
}

void layers_report_changes(const struct layers *L, FILE *err)
{
	for (size_t i = 0; i < L->n; i++) {
		const struct layer_src *ls = &L->v[i];
		if (!ls->path || !strcmp(ls->kind, "command")) /* generated, not a file of yours */
			continue;
		uint64_t now;
		char why[512];
		if (!trust_hash_file(ls->path, &now, why, sizeof why))
			fprintf(err, "cagerun: %s layer %s is gone or unreadable since the start (%s); "
				     "restart to apply\n", ls->kind, ls->path, why);
		else if (now != ls->fp)
			fprintf(err, "cagerun: %s layer %s changed during the run; this run kept the "
				     "policy it started with; restart to apply\n", ls->kind, ls->path);
	}
}

void layers_free(struct layers *L)
{
	free(L->cmd_text);
	L->cmd_text = NULL;
	for (size_t i = 0; i < L->n; i++) {
		free(L->v[i].import);
		free(L->v[i].path);
	}
	free(L->root);
	command_layer_remove(L);
	cmd_res_free(&L->cmd);
	cage_policy_free(L->pol);
	ll_drop(&L->lint_job);
	ll_verdict_free(&L->lint);
	memset(L, 0, sizeof *L);
}

int layers_trust(const char *file)
{
	char cfg[4096], err[600], real[PATH_MAX];
	char *found = NULL, *root = NULL;
	if (!file) {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof cwd))
			return fail("getcwd: %s", strerror(errno));
		find_project(cwd, &found, &root);
		free(root);
		if (!found)
			return fail("no .cage/policy.cage here or above (up to the repository's root) "
				    "to trust");
		file = found;
	}
	bool ok = realpath(file, real) != NULL;
	free(found);
	if (!ok)
		return fail("%s: %s", file, strerror(errno));
	uint64_t fp;
	if (!trust_config_dir(cfg, sizeof cfg, err, sizeof err) ||
	    !trust_hash_file(real, &fp, err, sizeof err) ||
	    !trust_approve(cfg, real, fp, err, sizeof err))
		return fail("%s", err);
	printf("cagerun: trusted %s (xxh3:%016" PRIx64 "); editing it revokes this\n", real, fp);
	return 0;
}
