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

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "cli.h"
#include "lint.h"
#include "policy.h"
#include "run.h"
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

/* Whether `import "NAME"` finds a file: -I directories, then the
 * standard library's platform folder, then its portable one. */
static bool module_exists(const cage_options *o, const char *name)
{
	char p[2 * PATH_MAX];
	for (size_t i = 0; i < o->nincludes; i++) {
		snprintf(p, sizeof p, "%s/%s.cage", o->includes[i], name);
		if (is_file(p))
			return true;
	}
	char def[PATH_MAX];
	const char *std = o->stdlib;
	if (!std) {
		(void)stdlib_dir_default(def, sizeof def);
		std = def;
	}
	snprintf(p, sizeof p, "%s/%s/%s.cage", std, ir_target_name(IR_TARGET_HOST), name);
	if (is_file(p))
		return true;
	snprintf(p, sizeof p, "%s/%s.cage", std, name);
	return is_file(p);
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

static const struct src_file *main_src(const cage_policy *p)
{
	return p->ir && p->ir->nfiles ? p->ir->files[0] : NULL;
}

/* Whether `f` was first loaded through `layer` (or is it). */
static bool from_layer(const struct src_file *f, const struct src_file *layer)
{
	for (int d = 0; f && d < 64; f = f->importer, d++)
		if (f == layer)
			return true;
	return false;
}

/* Each layer's file as compiled: the root's imports, in order. */
static void bind_sources(struct layers *L, const cage_policy *p)
{
	const struct src_file *root = main_src(p);
	size_t k = 0;
	for (size_t i = 0; i < p->nimports && k < L->n; i++) {
		if (p->imports[i].from != root)
			continue;
		const struct src_file *s = p->imports[i].target;
		struct layer_src *ls = &L->v[k++];
		ls->src = s;
		if (s) {
			ls->fp = XXH3_64bits(s->text, s->len);
			free(ls->path);
			ls->path = xstrdup(s->realpath ? s->realpath : s->name);
		}
	}
}

static const struct layer_src *layer_of_kind(const struct layers *L, const char *kind)
{
	for (size_t i = L->n; i-- > 0;)
		if (!strcmp(L->v[i].kind, kind))
			return &L->v[i];
	return NULL;
}

/* Without --profile: the last profile of the task layer, else of a
 * trusted project layer, else the module-level rules alone. */
static void select_profile(struct layers *L, const cage_options *o)
{
	struct ir_policy *ir = L->pol->ir;
	if (o->profile || !ir->selected)
		return;
	static const char *const order[] = { "task", "project" };
	for (size_t k = 0; k < 2; k++) {
		const struct layer_src *ls = layer_of_kind(L, order[k]);
		if (!ls || !ls->src || ls->untrusted)
			continue;
		struct ir_profile *sel = NULL;
		for (size_t i = 0; i < ir->nprofiles; i++)
			if (ir->profiles[i]->loc.file == ls->src)
				sel = ir->profiles[i];
		if (sel) {
			ir->selected = sel;
			return;
		}
	}
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
		if (from_layer(ir->params[i].loc.file, ps)) {
			fputs("cagerun: ", stderr);
			print_loc(stderr, &ir->params[i].loc);
			fprintf(stderr, "error: the project layer is not trusted and declares param "
					"'%s', whose value would shape the other layers' rules\n",
				ir->params[i].name);
			rc = RUN_SETUP_FAILED;
		}
	if (p->mode_loc.file && from_layer(p->mode_loc.file, ps) && p->mode != IR_MODE_ENFORCE) {
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
		if (r->effect == IR_ALLOW && from_layer(r->loc.file, ps)) {
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
	k = 0;
	for (size_t i = 0; i < p->nenv; i++) {
		struct ir_env_op *e = &p->env[i];
		if (e->kind != IR_ENV_UNSET && from_layer(e->loc.file, ps)) {
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

/* What the run enforces, as one hash: the mode in force, private
 * directories, every rule and environment step in order. Comments,
 * layout and file names do not change it; any change of meaning does. */
static uint64_t effective_fingerprint(const struct ir_profile *p, int mode)
{
	XXH3_state_t *st = XXH3_createState();
	if (!st)
		abort();
	XXH3_64bits_reset(st);
	char line[1200];
	int n = snprintf(line, sizeof line, "mode %s private %d %d\n",
			 ir_mode_name((enum ir_mode)mode), p->private_tmp, p->private_home);
	XXH3_64bits_update(st, line, (size_t)n);
	for (size_t i = 0; i < p->nrules; i++) {
		char acc[128], tgt[1024];
		ir_access_names(p->rules[i].access, acc, sizeof acc);
		ir_target_display(&p->rules[i], tgt, sizeof tgt);
		n = snprintf(line, sizeof line, "%s %s %s\n", ir_effect_name(p->rules[i].effect), acc,
			     tgt);
		XXH3_64bits_update(st, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
	}
	for (size_t i = 0; i < p->nenv; i++) {
		const struct ir_env_op *e = &p->env[i];
		XXH3_64bits_update(st, &e->kind, sizeof e->kind);
		XXH3_64bits_update(st, e->name, strlen(e->name) + 1);
		if (e->value)
			XXH3_64bits_update(st, e->value, strlen(e->value) + 1);
	}
	uint64_t h = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	return h;
}

static bool parse_mode(const char *s, int *mode)
{
	for (int m = IR_MODE_OFF; m <= IR_MODE_ENFORCE; m++)
		if (!strcmp(s, ir_mode_name((enum ir_mode)m))) {
			*mode = m;
			return true;
		}
	return false;
}

/* lint on a second load of the same text: its findings must not count as
 * errors of the policy that runs. Returns the errors found in `kind`'s
 * layer (0 when there is none), SIZE_MAX when a layer changed between the
 * two loads. */
static size_t lint_layers(struct layers *L, const char *text, const cage_options *o,
			  const char *kind)
{
	L->lint = cage_load_string("<layers>", text, strlen(text), o);
	if (!L->lint || cage_error_count(L->lint) > 0 || !L->lint->ir->selected)
		return 0;
	if (L->pol->ir->selected && L->pol->ir->selected->name)
		for (size_t i = 0; i < L->lint->ir->nprofiles; i++)
			if (!strcmp(L->lint->ir->profiles[i]->name, L->pol->ir->selected->name))
				L->lint->ir->selected = L->lint->ir->profiles[i];
	struct lint_opts lo = { 0 };
	lint_policy(L->lint, &lo);
	const struct layer_src *ls = kind ? layer_of_kind(L, kind) : NULL;
	if (!ls || !ls->path)
		return 0;
	/* The findings must be about the bytes that run: a layer rewritten
	 * between the two loads is refused rather than judged by its old text. */
	struct layers seen = { .n = L->n };
	bind_sources(&seen, L->lint);
	for (size_t i = 0; i < L->n; i++) {
		free(seen.v[i].path);
		if (seen.v[i].src && L->v[i].src && seen.v[i].fp != L->v[i].fp) {
			fprintf(stderr, "cagerun: %s changed while cagerun was reading it\n",
				L->v[i].path);
			return SIZE_MAX;
		}
	}
	size_t bad = 0;
	for (size_t i = 0; i < L->lint->diags.n; i++) {
		const struct diag *d = L->lint->diags.items[i];
		const struct src_file *f = d->loc.file;
		while (f && f->importer && f->importer->importer)
			f = f->importer; /* up to the layer the root imported */
		if (d->sev != DIAG_ERROR || !f || !f->realpath || strcmp(f->realpath, ls->path))
			continue;
		fprintf(stderr, "cagerun: %s:%u:%u: error: %s [%s]\n", d->loc.file->name, d->loc.line,
			d->loc.col, d->msg, d->id ? d->id : "");
		bad++;
	}
	return bad;
}

static int load_policy_file(struct layers *L, const struct layers_req *rq)
{
	add(L, "policy", rq->policy);
	L->pol = cage_load_file(rq->policy, rq->copts);
	if (!L->pol)
		return fail("out of memory");
	cage_print_diagnostics(L->pol, stderr, cli_want_color("auto", STDERR_FILENO));
	if (cage_error_count(L->pol) > 0 || !L->pol->ir->selected)
		return fail("%s: the policy has errors; nothing was run", rq->policy);
	const struct src_file *s = main_src(L->pol);
	L->v[0].src = s;
	L->v[0].fp = XXH3_64bits(s->text, s->len);
	L->v[0].path = xstrdup(s->realpath ? s->realpath : s->name);
	if (rq->lint) {
		/* As for layers: lint a second load, whose findings count nowhere. */
		L->lint = cage_load_file(rq->policy, rq->copts);
		if (L->lint && cage_error_count(L->lint) == 0 && L->lint->ir->selected) {
			struct lint_opts lo = { 0 };
			lint_policy(L->lint, &lo);
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
	if (module_exists(rq->copts, "std/guard"))
		add(L, "defaults", "std/guard");
	add(L, "workspace", "cagerun/workspace");
	/* Toolchains, registries, GitHub, certificate status: a day's work
	 * needs them whatever the agent (docs/stdlib.md, "The baseline"). */
	if (module_exists(rq->copts, "cagerun/baseline"))
		add(L, "baseline", "cagerun/baseline");
	if (rq->argv && rq->argv[0]) {
		const char *b = strrchr(rq->argv[0], '/');
		b = b ? b + 1 : rq->argv[0];
		char p[PATH_MAX + 64];
		if (name_ok(b)) {
			snprintf(p, sizeof p, "std/agents/%s", b);
			if (module_exists(rq->copts, p))
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

static int compose(struct layers *L, const struct layers_req *rq)
{
	int rc = discover(L, rq);
	if (rc)
		return rc;
	bool declared = false;
	for (size_t i = 0; i < L->n; i++)
		if (L->v[i].import[0] == '/' && declares_workspace(L->v[i].import))
			declared = true;
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
	L->pol = cage_load_string("<layers>", text, strlen(text), rq->copts);
	if (L->pol && cage_error_count(L->pol) > 0 && !declared) {
		/* A layer's import declares workspace: the root must not. */
		char *t2 = compose_text(L, false);
		cage_policy *p2 = t2 ? cage_load_string("<layers>", t2, strlen(t2), rq->copts) : NULL;
		if (p2 && cage_error_count(p2) == 0) {
			cage_policy_free(L->pol);
			L->pol = p2;
			free(text);
			text = t2;
		} else {
			cage_policy_free(p2);
			free(t2);
		}
	}
	if (!L->pol) {
		free(text);
		return fail("out of memory");
	}
	cage_print_diagnostics(L->pol, stderr, cli_want_color("auto", STDERR_FILENO));
	if (cage_error_count(L->pol) > 0 || !L->pol->ir->selected) {
		free(text);
		return fail("the composed policy has errors (cagerun --show lists its layers); "
			    "nothing was run");
	}
	bind_sources(L, L->pol);
	struct layer_src *proj = NULL;
	for (size_t i = 0; i < L->n; i++)
		if (!strcmp(L->v[i].kind, "project") && L->v[i].src) {
			proj = &L->v[i];
			proj->untrusted = !L->cfgdir[0] ||
					  !trust_is_approved(L->cfgdir, proj->path, proj->fp);
		}
	select_profile(L, rq->copts);
	if (proj || rq->lint) {
		size_t bad = lint_layers(L, text, rq->copts, proj ? "project" : NULL);
		if (bad == SIZE_MAX) {
			free(text);
			return fail("a layer changed while it was read; nothing was run");
		}
		if (bad && proj && !rq->lint) {
			free(text);
			return fail("%s has %zu lint error%s; the project layer is refused; nothing "
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
	int rc = rq->policy ? load_policy_file(L, rq) : compose(L, rq);
	if (rc)
		return rc;
	const struct ir_profile *p = L->pol->ir->selected;
	L->mode = p->mode;
	if (rq->mode && !parse_mode(rq->mode, &L->mode))
		return fail("--mode %s: expected off, monitor, enforce-fs or enforce", rq->mode);
	L->fingerprint = effective_fingerprint(p, L->mode);
	return 0;
}

void layers_report_changes(const struct layers *L, FILE *err)
{
	for (size_t i = 0; i < L->n; i++) {
		const struct layer_src *ls = &L->v[i];
		if (!ls->path)
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
	for (size_t i = 0; i < L->n; i++) {
		free(L->v[i].import);
		free(L->v[i].path);
	}
	free(L->root);
	cage_policy_free(L->pol);
	cage_policy_free(L->lint);
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
