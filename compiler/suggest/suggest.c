/*
 * suggest.c - `cagec suggest LOG [--into POLICY]` and `cagec
 * monitor-report LOG [--detailed]` (see suggest.h).
 *
 * suggest reads the would-block and denied records, asks the policy (when
 * given) again about each, so what it already allows drops out, sets apart
 * what must not be proposed, turns the rest into targets the Linux plan
 * can grant (creating or deleting a name needs its folder: Landlock grants
 * those on the directory), collapses folders per access, and prints the
 * lines, or with --into a unified diff of the policy in `cagec fmt` form
 * with the lines added at the end of the selected profile (--write applies
 * it).
 */
#include "sg.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "fmt.h"
#include "ir.h"
#include "lint_secrets.h"
#include "load.h"
#include "mon_record.h"
#include "mon_summary.h"
#include "outfile.h"
#include "path.h"
#include "cage.h"
#include "policy.h"

enum { SG_MIN_SHARE = 3, SG_MIN_DEPTH = 2 };

/* Calls fn for every monitor record of the log; false on I/O errors. */
static bool read_log(const char *path, void (*fn)(void *, const struct mon_record *), void *ctx)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "cagec: %s: %s\n", path, strerror(errno));
		return false;
	}
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		struct mon_record r;
		if (mon_record_parse(line, &r))
			fn(ctx, &r);
	}
	bool ok = !ferror(f);
	if (!ok)
		fprintf(stderr, "cagec: %s: read error\n", path);
	free(line);
	fclose(f);
	return ok;
}

/* ---- monitor-report ---- */

static void report_add(void *ctx, const struct mon_record *r)
{
	mon_summary_add(ctx, r);
}

int monitor_report_main(int argc, char **argv)
{
	bool detailed = false;
	const char *log = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--detailed"))
			detailed = true;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			puts("usage: cagec monitor-report LOG [--detailed]\n\n"
			     "Prints the summary of a cagerun --log file: would-block first, then\n"
			     "denied, then covered; by folder (--detailed: by path) and by host.");
			return 0;
		} else if (!log && argv[i][0] != '-')
			log = argv[i];
		else {
			fprintf(stderr, "cagec monitor-report: unexpected %s\n", argv[i]);
			return 2;
		}
	}
	if (!log) {
		fputs("usage: cagec monitor-report LOG [--detailed]\n", stderr);
		return 2;
	}
	struct mon_summary s;
	mon_summary_init(&s, (size_t)1 << 22, detailed);
	bool ok = read_log(log, report_add, &s);
	if (ok && mon_summary_empty(&s))
		printf("%s: no monitor records\n", log);
	else if (ok)
		mon_summary_print(&s, stdout, "");
	mon_summary_free(&s);
	return ok ? 0 : 2;
}

/* ---- suggest ---- */

struct sg_want {
	uint32_t access;
	const char *path; /* or NULL */
	const char *host;
	unsigned port;
	const char *why; /* refused: the reason; NULL: proposed */
};

struct sg {
	struct arena a;
	cage_policy *pol;            /* NULL without --into */
	const struct ir_profile *prof;
	const char *home;
	struct ir_path *secrets;
	const struct lint_secret *sdesc;
	size_t nsecrets;
	struct sg_want *w;
	size_t n, cap;
	bool oom;
};

static bool have(const struct sg *s, const struct sg_want *x)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct sg_want *y = &s->w[i];
		if (y->access == x->access && y->port == x->port &&
		    !strcmp(y->path ? y->path : "", x->path ? x->path : "") &&
		    !strcmp(y->host ? y->host : "", x->host ? x->host : ""))
			return true;
	}
	return false;
}

static const char *rule_where(struct sg *s, const struct ir_rule *r)
{
	char acc[128], tgt[600];
	ir_access_names(r->access, acc, sizeof acc);
	ir_target_display(r, tgt, sizeof tgt);
	return arena_printf(&s->a, "%s %s %s at %s:%u", ir_effect_name(r->effect), acc, tgt,
			    r->loc.file ? r->loc.file->name : "?", r->loc.line);
}

/* What the policy (or, without one, the run) said: "" when it allows x
 * by now, the explicit rule that refuses it, or NULL for a default deny. */
static const char *decided(struct sg *s, const struct mon_record *r, const struct sg_want *x)
{
	if (!s->prof)
		return r->rule ? arena_printf(&s->a, "denied by the rule at %s", r->rule) : NULL;
	struct ir_verdict v;
	if (x->host)
		ir_eval_host(s->prof, x->host, x->port, &v);
	else
		ir_eval_path(s->prof, x->access, x->path, &v);
	return v.allowed ? "" : v.rule ? rule_where(s, v.rule) : NULL;
}

/* Why x must not be proposed, or NULL. Drops (returns "") what the policy
 * already allows. */
static const char *judge(struct sg *s, const struct mon_record *r, struct sg_want *x)
{
	if (x->access == IR_A_UNIX)
		return "a unix socket: Linux cannot allow connecting to one socket and not others";
	if (x->host) {
		bool ip = strspn(x->host, "0123456789.") == strlen(x->host) || strchr(x->host, ':');
		if (ip)
			return "a direct connection to an address: under enforce only the proxy "
			       "(by name) and localhost ports reach the network";
		return decided(s, r, x);
	}
	for (size_t i = 0; i < s->nsecrets; i++)
		if (path_match(&s->secrets[i], x->path))
			return arena_printf(&s->a, "a secret location (%s, %s)", s->sdesc[i].pattern,
					    s->sdesc[i].what);
	const char *why = decided(s, r, x);
	if (why)
		return why;
	if (strpbrk(x->path, "\"\\{}*?[") || strchr(x->path, '\n'))
		return "its name has characters a policy string cannot say literally";
	return NULL;
}

static void want(struct sg *s, const struct mon_record *r, uint32_t access)
{
	struct sg_want x = { .access = access, .path = r->path, .host = r->host,
			     .port = r->port };
	if (have(s, &x))
		return;
	const char *why = judge(s, r, &x);
	if (why && !*why)
		return;
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 64;
		struct sg_want *nw = realloc(s->w, nc * sizeof *nw);
		if (!nw) {
			s->oom = true;
			return;
		}
		s->w = nw;
		s->cap = nc;
	}
	x.path = x.path ? arena_strdup(&s->a, x.path) : NULL;
	x.host = x.host ? arena_strdup(&s->a, x.host) : NULL;
	x.why = why;
	s->w[s->n++] = x;
}

static void sg_add(void *ctx, const struct mon_record *r)
{
	if (r->verdict != MON_COVERED)
		want(ctx, r, r->access);
}

static char *parent_of(struct arena *a, const char *p)
{
	const char *sl = strrchr(p, '/');
	return sl == p ? arena_strdup(a, "/") : arena_strndup(a, p, (size_t)(sl - p));
}

/* The fences: the literal folders of the secrets and of every deny and
 * protect rule, so no collapsed grant reaches one. */
static struct sg_fence fences(struct sg *s)
{
	size_t max = s->nsecrets + (s->prof ? s->prof->nrules : 0);
	const char **d = arena_alloc(&s->a, (max ? max : 1) * sizeof *d);
	size_t n = 0;
	for (size_t i = 0; i < s->nsecrets; i++)
		d[n++] = arena_strndup(&s->a, s->secrets[i].text, s->secrets[i].lit_prefix);
	for (size_t i = 0; s->prof && i < s->prof->nrules; i++) {
		const struct ir_rule *r = &s->prof->rules[i];
		if (r->effect != IR_ALLOW && r->tkind == IR_T_PATH)
			d[n++] = arena_strndup(&s->a, r->t.path.text, r->t.path.lit_prefix);
	}
	for (size_t i = 0; i < n; i++) { /* a literal prefix may end in '/' */
		size_t l = strlen(d[i]);
		if (l > 1 && d[i][l - 1] == '/')
			d[i] = arena_strndup(&s->a, d[i], l - 1);
	}
	return (struct sg_fence){ d, n };
}

/* One line per access set, one target per line when there are several. */
struct sg_line {
	uint32_t access;
	const char *target; /* quoted text */
};

static const char *home_form(struct sg *s, const char *p)
{
	size_t h = strlen(s->home);
	if (h > 1 && !strncmp(p, s->home, h) && (p[h] == '/' || !p[h]))
		return arena_printf(&s->a, "~%s", p + h);
	return p;
}

static void access_words(uint32_t acc, char *buf, size_t size)
{
	/* `read` is contents and metadata; `write` is write, create and
	 * delete together */
	if (acc & IR_A_READ)
		acc |= IR_A_READ_META;
	if (acc & IR_A_WRITE)
		acc = (acc & ~(uint32_t)IR_A_KW_WRITE) | IR_A_WRITE | IR_A_CREATE | IR_A_DELETE;
	ir_access_names(acc, buf, size);
}

/* Whether the run created path: then it does not exist when a sandbox
 * starts, and a grant of the name alone would grant nothing (Landlock
 * rules are made on what exists); its folder must carry the grant. */
static bool created(const struct sg *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->w[i].access == IR_A_CREATE && s->w[i].path && !strcmp(s->w[i].path, path))
			return true;
	return false;
}

static size_t build_lines(struct sg *s, struct sg_line **out)
{
	static const uint32_t order[] = { IR_A_READ, IR_A_WRITE, IR_A_CREATE, IR_A_DELETE, IR_A_EXEC };
	struct sg_fence fence = fences(s);
	struct sg_line *l = arena_alloc(&s->a, (s->n * 2 + 8) * sizeof *l);
	size_t nl = 0;
	struct sg_target *t = arena_alloc(&s->a, (s->n + 1) * sizeof *t);
	for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
		size_t n = 0;
		for (size_t i = 0; i < s->n; i++) {
			struct sg_want *x = &s->w[i];
			if (x->why || !x->path)
				continue;
			/* Linux grants creating and deleting on the folder, and
			 * listing a folder only with its whole tree */
			uint32_t as = x->access == IR_A_CREATE ? IR_A_WRITE : x->access;
			if (as != order[k])
				continue;
			struct stat st;
			bool listing = x->access == IR_A_READ && stat(x->path, &st) == 0 &&
				       S_ISDIR(st.st_mode);
			bool parent = x->access == IR_A_CREATE || x->access == IR_A_DELETE ||
				      created(s, x->path);
			const char *tree = listing ? x->path : parent ? parent_of(&s->a, x->path) : NULL;
			if (tree && !sg_tree_allowed(tree, SG_MIN_DEPTH, s->home, &fence)) {
				x->why = arena_printf(&s->a,
						      "Linux can grant this only on the whole tree %s, "
						      "which is too wide or holds a secret or a denied path",
						      tree);
				continue;
			}
			t[n++] = tree ? (struct sg_target){ tree, true }
				      : (struct sg_target){ x->path, false };
		}
		n = sg_collapse(&s->a, t, n, SG_MIN_SHARE, SG_MIN_DEPTH, s->home, &fence);
		for (size_t i = 0; i < n; i++) {
			const char *p = home_form(s, t[i].path);
			const char *q = t[i].tree ? arena_printf(&s->a, "\"%s%s**\"", p,
								  strcmp(p, "/") ? "/" : "")
						  : arena_printf(&s->a, "\"%s\"", p);
			bool merged = false;
			for (size_t j = 0; j < nl && !merged; j++)
				if (!strcmp(l[j].target, q)) {
					l[j].access |= order[k];
					merged = true;
				}
			if (!merged)
				l[nl++] = (struct sg_line){ order[k], q };
		}
	}
	/* hosts, each with its port */
	for (size_t i = 0; i < s->n; i++) {
		const struct sg_want *x = &s->w[i];
		if (!x->why && x->host)
			l[nl++] = (struct sg_line){ IR_A_CONNECT,
						    arena_printf(&s->a, "\"%s:%u\"", x->host, x->port) };
	}
	*out = l;
	return nl;
}

static int by_line(const void *x, const void *y)
{
	const struct sg_line *a = x, *b = y;
	if (a->access != b->access)
		return a->access < b->access ? -1 : 1;
	return strcmp(a->target, b->target);
}

/* The new lines as policy text, indented for a profile body. */
static char *lines_text(struct sg *s, struct sg_line *l, size_t n, const char *indent)
{
	qsort(l, n, sizeof *l, by_line);
	char *text = arena_strdup(&s->a, "");
	for (size_t i = 0; i < n; i++) {
		char acc[128];
		access_words(l[i].access, acc, sizeof acc);
		text = arena_printf(&s->a, "%s%sallow %s %s\n", text, indent, acc, l[i].target);
	}
	return text;
}

static void print_refused(const struct sg *s)
{
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct sg_want *x = &s->w[i];
		if (!x->why)
			continue;
		if (!k++)
			printf("# wanted, refused (not proposed):\n");
		if (x->path)
			printf("#   %s %s: %s\n", mon_access_name(x->access), x->path, x->why);
		else
			printf("#   connect %s:%u: %s\n", x->host, x->port, x->why);
	}
}

/* Where the selected profile's closing brace is in its file's text:
 * the first '{' after the profile's name, then braces counted outside
 * strings and comments. */
static const char *profile_end(const struct ir_profile *p)
{
	const struct src_file *f = p->loc.file;
	if (!f)
		return NULL;
	const char *c = f->text + p->loc.off, *end = f->text + f->len;
	int depth = 0;
	for (; c < end; c++) {
		if (*c == '#') {
			while (c < end && *c != '\n')
				c++;
		} else if (*c == '"') {
			for (c++; c < end && *c != '"'; c++)
				if (*c == '\\')
					c++;
		} else if (*c == '{') {
			depth++;
		} else if (*c == '}' && --depth == 0) {
			return c;
		}
	}
	return NULL;
}

static bool format_text(struct sg *s, const char *name, const char *text, char **out,
			size_t *outlen)
{
	struct src_file f = { .name = name, .text = text, .len = strlen(text) };
	struct diag_list d;
	diag_list_init(&d, &s->a);
	bool ok = fmt_source(&f, &s->a, &d, out, outlen);
	diag_list_free(&d);
	return ok;
}

static int into_policy(struct sg *s, const char *path, struct sg_line *l, size_t n, bool write)
{
	const struct src_file *main_file = s->pol->ir->files[0];
	const struct ir_profile *p = s->prof;
	if (p->loc.file != main_file) {
		fprintf(stderr, "cagec suggest: profile %s is not in %s; nothing to change\n",
			p->name, path);
		return 2;
	}
	const char *close = profile_end(p);
	if (!close) {
		fprintf(stderr, "cagec suggest: cannot find the end of profile %s\n", p->name);
		return 2;
	}
	/* before the line of the closing brace, or before the brace itself */
	const char *at = close;
	while (at > main_file->text && (at[-1] == ' ' || at[-1] == '\t'))
		at--;
	bool own_line = at == main_file->text || at[-1] == '\n';
	const char *ins = lines_text(s, l, n, "    ");
	char *next = arena_printf(&s->a, "%.*s%s%s%s", (int)(at - main_file->text),
				  main_file->text, own_line ? "" : "\n", ins, at);
	char *a_fmt, *b_fmt;
	size_t a_len, b_len;
	if (!format_text(s, path, main_file->text, &a_fmt, &a_len) ||
	    !format_text(s, path, next, &b_fmt, &b_len)) {
		fprintf(stderr, "cagec suggest: %s does not format (run cagec fmt on it)\n", path);
		return 2;
	}
	int status = 0;
	if (write) {
		struct outfile of;
		char err[512];
		bool opened = outfile_open(&of, path, err, sizeof err);
		if (opened && fwrite(b_fmt, 1, b_len, of.fp) != b_len) {
			outfile_abort(&of);
			snprintf(err, sizeof err, "%s: write failed", path);
			opened = false;
		}
		if (!opened || !outfile_commit(&of, err, sizeof err)) {
			fprintf(stderr, "cagec suggest: %s\n", err);
			status = 2;
		} else {
			printf("# %s: %zu line%s added to profile %s\n", path, n, n == 1 ? "" : "s",
			       p->name);
		}
	} else {
		fmt_print_diff(stdout, path, "suggested", a_fmt, a_len, b_fmt, b_len, 0);
	}
	free(a_fmt);
	free(b_fmt);
	return status;
}

static const char suggest_usage[] =
	"usage: cagec suggest LOG [--into POLICY [--write]] [-D NAME=VALUE]... [-I DIR]...\n"
	"                         [--profile NAME]\n"
	"\n"
	"Proposes the smallest set of policy lines that allows what a monitored run\n"
	"(cagerun --mode monitor --log LOG) would have blocked. With --into, a unified\n"
	"diff of POLICY in `cagec fmt` form, the lines added at the end of the\n"
	"selected profile (--write applies it); accesses the policy allows by now\n"
	"drop out. What must not be proposed (protected, denied, secret) is listed\n"
	"apart as \"wanted, refused\".\n";

int suggest_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_POLICY_LONGOPTS,
		{ "into", required_argument, NULL, 'i' },
		{ "write", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sg s;
	memset(&s, 0, sizeof s);
	arena_init(&s.a);
	cage_options *opts = cage_options_new();
	const char *into = NULL, *log = NULL;
	bool write = false;
	int c, status = 2;
	opterr = 0;
	optind = 1;
	while (opts && (c = getopt_long(argc, argv, ":D:I:hw", longopts, NULL)) != -1) {
		if (c == 'i')
			into = optarg;
		else if (c == 'w')
			write = true;
		else if (c == 'h') {
			fputs(suggest_usage, stdout);
			status = 0;
			goto out;
		} else if (c == '?' || c == ':' || cli_policy_opt(c, optarg, opts) <= 0) {
			fputs(suggest_usage, stderr);
			goto out;
		}
	}
	if (!opts || optind != argc - 1 || (write && !into)) {
		fputs(suggest_usage, stderr);
		goto out;
	}
	log = argv[optind];
	const char *home = getenv("HOME");
	s.home = home && *home ? home : "/";
	if (into) {
		s.pol = cage_load_file(into, opts);
		if (!s.pol)
			goto out;
		cage_print_diagnostics(s.pol, stderr, cli_want_color("auto", 2));
		if (cage_error_count(s.pol) || !s.pol->ir || !s.pol->ir->selected) {
			status = 1;
			goto out;
		}
		s.prof = s.pol->ir->selected;
		s.home = s.pol->ir->home;
	}
	size_t ns;
	s.sdesc = lint_secrets(&ns);
	s.secrets = arena_alloc(&s.a, ns * sizeof *s.secrets);
	for (size_t i = 0; i < ns; i++) {
		const char *pat = s.sdesc[i].pattern;
		const char *p = pat[0] == '~' ? arena_printf(&s.a, "%s%s", strcmp(s.home, "/") ? s.home : "",
							     pat + 1)
					      : pat;
		struct ir_path *ip = &s.secrets[s.nsecrets++];
		ip->text = p;
		ip->len = (uint32_t)strlen(p);
		path_classify(ip);
	}
	if (!read_log(log, sg_add, &s))
		goto out;
	if (s.oom) {
		fputs("cagec suggest: out of memory\n", stderr);
		goto out;
	}
	struct sg_line *l;
	size_t n = build_lines(&s, &l);
	print_refused(&s);
	if (!n) {
		printf("# nothing to add: every access the log wants is allowed or refused\n");
		status = 0;
	} else if (into) {
		status = into_policy(&s, into, l, n, write);
	} else {
		fputs(lines_text(&s, l, n, ""), stdout);
		status = 0;
	}
out:
	free(s.w);
	cage_policy_free(s.pol);
	cage_options_free(opts);
	arena_free(&s.a);
	return status;
}
