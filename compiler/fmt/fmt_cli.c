/*
 * fmt_cli.c - `cagec fmt`: files in, canonical text out (see fmt.h).
 *
 * Three ways to use it: print one file formatted, --check (list the files
 * that would change with a diff, exit 1: for CI and pre-commit) and -w
 * (rewrite changed files in place). A rewrite goes through outfile.h, so a
 * policy file is either the old text or the complete new one, never a
 * truncated mix; files that are already canonical are not touched at all.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fmt.h"
#include "load.h"
#include "outfile.h"
#include "suggest.h"

/* Darwin spells the nanosecond modification time st_mtimespec. */
#ifdef __APPLE__
#define st_mtim st_mtimespec
#endif

enum { FMT_EXIT_CHANGED = 1, FMT_EXIT_USAGE = 2 };

/* How many changed lines of one file --check shows before it stops. */
enum { FMT_DIFF_MAX_LINES = 40, FMT_DIFF_CONTEXT = 3 };

static const char fmt_usage_text[] =
	"usage: cagec fmt [--check] [-w] [--color=WHEN] FILE...\n"
	"\n"
	"Formats .cage policy files canonically (see docs/language.md, \"Formatting\").\n"
	"Without options, prints the one FILE formatted to standard output\n"
	"('-' reads standard input).\n"
	"\n"
	"      --check          print a diff for every FILE that is not formatted and\n"
	"                       exit 1 if there is one\n"
	"  -w, --write          rewrite every FILE that is not formatted, atomically\n"
	"      --color=WHEN     colour diagnostics: auto (default), always, never\n"
	"  -h, --help           print this help and exit\n"
	"\n"
	"Files with syntax errors are reported and left alone.\n"
	"Exit status: 0 success, 1 syntax errors or (--check) unformatted files,\n"
	"2 usage or I/O error.\n";

struct fmt_opts {
	bool check, write, color;
};

/* Lines with their '\n' (the last may lack it). */
struct fmt_lines {
	const char **p;
	size_t *len;
	size_t n;
};

static bool fmt_split(const char *t, size_t len, struct fmt_lines *l)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (t[i] == '\n')
			n++;
	n++;
	l->p = malloc(n * sizeof(*l->p));
	l->len = malloc(n * sizeof(*l->len));
	if (!l->p || !l->len) {
		free(l->p);
		free(l->len);
		return false;
	}
	l->n = 0;
	size_t start = 0;
	for (size_t i = 0; i < len; i++) {
		if (t[i] == '\n') {
			l->p[l->n] = t + start;
			l->len[l->n++] = i + 1 - start;
			start = i + 1;
		}
	}
	if (start < len) {
		l->p[l->n] = t + start;
		l->len[l->n++] = len - start;
	}
	return true;
}

static bool fmt_line_eq(const struct fmt_lines *a, size_t i, const struct fmt_lines *b, size_t j)
{
	return a->len[i] == b->len[j] && memcmp(a->p[i], b->p[j], a->len[i]) == 0;
}

static void fmt_diff_line(FILE *out, char mark, const char *s, size_t n)
{
	fputc(mark, out);
	fwrite(s, 1, n, out);
	if (n == 0 || s[n - 1] != '\n')
		fputs("\n\\ No newline at end of file\n", out);
}

/* One step of the edit script: a line kept, removed from the old text or
 * added from the new one. */
enum fmt_op { FMT_KEEP, FMT_DEL, FMT_ADD };

/* Past this many differing lines the shortest edit script is not searched
 * for (its trace grows with the square of the distance); the middle part
 * is then shown as removed and added whole, which is still a correct diff. */
enum { FMT_DIFF_MAX_D = 2000 };

/* The shortest edit script turning x[xs..xe) into y[ys..ye) (Myers' greedy
 * algorithm, keeping each round's furthest-reaching paths to trace back).
 * Appends to ops (which has room for (xe-xs)+(ye-ys) more); returns false
 * when the distance is over FMT_DIFF_MAX_D or memory runs out. */
static bool fmt_myers(const struct fmt_lines *x, size_t xs, size_t xe, const struct fmt_lines *y,
		      size_t ys, size_t ye, unsigned char *ops, size_t *nops)
{
	long n = (long)(xe - xs), m = (long)(ye - ys);
	long max = n + m < FMT_DIFF_MAX_D ? n + m : FMT_DIFF_MAX_D;
	long off = max + 1;
	long *v = calloc((size_t)(2 * max + 3), sizeof(*v));
	long **trace = calloc((size_t)max + 1, sizeof(*trace));
	if (!v || !trace) {
		free(v);
		free(trace);
		return false;
	}
	long dfound = -1;
	for (long d = 0; d <= max && dfound < 0; d++) {
		for (long k = -d; k <= d; k += 2) {
			long i;
			if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				i = v[off + k + 1];
			else
				i = v[off + k - 1] + 1;
			long j = i - k;
			while (i < n && j < m && fmt_line_eq(x, xs + (size_t)i, y, ys + (size_t)j))
				i++, j++;
			v[off + k] = i;
			if (i >= n && j >= m) {
				dfound = d;
				break;
			}
		}
		trace[d] = malloc((size_t)(2 * max + 3) * sizeof(long));
		if (!trace[d])
			break;
		memcpy(trace[d], v, (size_t)(2 * max + 3) * sizeof(long));
	}
	bool ok = dfound >= 0 && trace[dfound];
	if (ok) {
		/* Walk back from (n, m), writing the script from its end. */
		size_t len = 0;
		long i = n, j = m;
		unsigned char *rev = ops + *nops;
		for (long d = dfound; d > 0; d--) {
			const long *pv = trace[d - 1];
			long k = i - j, pk;
			if (k == -d || (k != d && pv[off + k - 1] < pv[off + k + 1]))
				pk = k + 1;
			else
				pk = k - 1;
			long pi = pv[off + pk], pj = pi - pk;
			while (i > pi && j > pj) {
				rev[len++] = FMT_KEEP;
				i--, j--;
			}
			if (pk == k + 1) {
				rev[len++] = FMT_ADD;
				j--;
			} else {
				rev[len++] = FMT_DEL;
				i--;
			}
		}
		while (i > 0 && j > 0) {
			rev[len++] = FMT_KEEP;
			i--, j--;
		}
		for (size_t a = 0, b = len; a + 1 < b; a++, b--) {
			unsigned char t = rev[a];
			rev[a] = rev[b - 1];
			rev[b - 1] = t;
		}
		*nops += len;
	}
	for (long d = 0; d <= max; d++)
		free(trace[d]);
	free(trace);
	free(v);
	return ok;
}

/* Prints the hunk covering ops[from..to) whose first op is at old line
 * xi and new line yi (0-based). */
static void fmt_hunk(FILE *out, const unsigned char *ops, size_t from, size_t to,
		     const struct fmt_lines *x, size_t xi, const struct fmt_lines *y, size_t yi)
{
	size_t xn = 0, yn = 0;
	for (size_t o = from; o < to; o++) {
		xn += ops[o] != FMT_ADD;
		yn += ops[o] != FMT_DEL;
	}
	fprintf(out, "@@ -%zu,%zu +%zu,%zu @@\n", xn ? xi + 1 : xi, xn, yn ? yi + 1 : yi, yn);
	for (size_t o = from; o < to; o++) {
		if (ops[o] == FMT_KEEP) {
			fmt_diff_line(out, ' ', x->p[xi], x->len[xi]);
			xi++, yi++;
		} else if (ops[o] == FMT_DEL) {
			fmt_diff_line(out, '-', x->p[xi], x->len[xi]);
			xi++;
		} else {
			fmt_diff_line(out, '+', y->p[yi], y->len[yi]);
			yi++;
		}
	}
}

/* A unified diff of the old text against the formatted one: the shortest
 * edit script, cut into hunks with FMT_DIFF_CONTEXT lines of context (hunks
 * whose contexts would touch are merged, as diff -u does). It stops before
 * the hunk that would take it past FMT_DIFF_MAX_LINES changed lines (the
 * first hunk is always shown whole) and says how many hunks it left out, so
 * what it prints is always a patch that applies. */
void fmt_print_diff(FILE *out, const char *name, const char *label, const char *a, size_t alen,
		    const char *b, size_t blen, size_t max_lines)
{
	struct fmt_lines x, y;
	unsigned char *ops = NULL;
	if (!fmt_split(a, alen, &x))
		return;
	if (!fmt_split(b, blen, &y))
		goto free_x;
	ops = malloc(x.n + y.n + 1);
	if (!ops)
		goto free_y;
	size_t nops = 0, pre = 0, suf = 0;
	while (pre < x.n && pre < y.n && fmt_line_eq(&x, pre, &y, pre))
		pre++;
	while (suf < x.n - pre && suf < y.n - pre &&
	       fmt_line_eq(&x, x.n - 1 - suf, &y, y.n - 1 - suf))
		suf++;
	memset(ops, FMT_KEEP, pre);
	nops = pre;
	if (!fmt_myers(&x, pre, x.n - suf, &y, pre, y.n - suf, ops, &nops)) {
		memset(ops + nops, FMT_DEL, x.n - suf - pre);
		nops += x.n - suf - pre;
		memset(ops + nops, FMT_ADD, y.n - suf - pre);
		nops += y.n - suf - pre;
	}
	memset(ops + nops, FMT_KEEP, suf);
	nops += suf;

	fprintf(out, "--- %s\n+++ %s (%s)\n", name, name, label);
	size_t o = 0, xi = 0, yi = 0, shown = 0, hunks = 0, left_out = 0;
	while (o < nops) {
		if (ops[o] == FMT_KEEP) {
			o++, xi++, yi++;
			continue;
		}
		/* A hunk: from FMT_DIFF_CONTEXT lines before this change to
		 * FMT_DIFF_CONTEXT after the last change that is no more than
		 * 2 * FMT_DIFF_CONTEXT kept lines from the one before it. */
		size_t back = 0;
		while (back < FMT_DIFF_CONTEXT && back < o && ops[o - back - 1] == FMT_KEEP)
			back++;
		size_t from = o - back, end = o, changed = 0;
		for (;;) {
			while (end < nops && ops[end] != FMT_KEEP) {
				changed++;
				end++;
			}
			size_t run = 0;
			while (end + run < nops && ops[end + run] == FMT_KEEP)
				run++;
			if (end + run < nops && run <= 2 * FMT_DIFF_CONTEXT) {
				end += run;
				continue;
			}
			end += run < FMT_DIFF_CONTEXT ? run : FMT_DIFF_CONTEXT;
			break;
		}
		if (hunks > 0 && max_lines && shown + changed > max_lines) {
			left_out++;
		} else {
			fmt_hunk(out, ops, from, end, &x, xi - back, &y, yi - back);
			shown += changed;
			hunks++;
		}
		for (; o < end; o++) {
			xi += ops[o] != FMT_ADD;
			yi += ops[o] != FMT_DEL;
		}
	}
	if (left_out)
		fprintf(out, "... %zu more hunk%s not shown (run cagec fmt -w %s)\n", left_out,
			left_out == 1 ? "" : "s", name);
	free(ops);
free_y:
	free(y.p);
	free(y.len);
free_x:
	free(x.p);
	free(x.len);
}

static bool fmt_read_stdin(struct arena *a, char **text, size_t *len, const char **err)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	if (!buf) {
		*err = "out of memory";
		return false;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= LOAD_MAX_BYTES) {
				*err = arena_printf(a, "standard input is over %d MiB; policy files are "
						    "limited to that", LOAD_MAX_BYTES / (1024 * 1024));
				free(buf);
				return false;
			}
			cap *= 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				*err = "out of memory";
				free(buf);
				return false;
			}
			buf = nb;
		}
		ssize_t r = read(STDIN_FILENO, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*err = arena_printf(a, "cannot read standard input: %s", strerror(errno));
			free(buf);
			return false;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*text = arena_strndup(a, buf, n);
	*len = n;
	free(buf);
	return true;
}

static bool fmt_same_file_state(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Replaces `path` (the file a symlink points to, if it is one) with
 * `text`, keeping its permission bits and owner. `before` is the file as
 * it was before it was read: if it changed since, someone else is editing
 * it, and their text wins. */
static bool fmt_rewrite(const char *path, const struct stat *before, const char *text, size_t len,
			FILE *err)
{
	char *real = realpath(path, NULL);
	if (!real) {
		fprintf(err, "cagec fmt: cannot resolve '%s': %s\n", path, strerror(errno));
		return false;
	}
	struct stat st;
	if (stat(real, &st) != 0) {
		fprintf(err, "cagec fmt: cannot stat '%s': %s\n", real, strerror(errno));
		free(real);
		return false;
	}
	struct outfile of;
	char msg[512];
	bool ok = false;
	if (!outfile_open(&of, real, msg, sizeof(msg))) {
		fprintf(err, "cagec fmt: %s\n", msg);
	} else if (fchmod(fileno(of.fp), st.st_mode & 07777) != 0) {
		fprintf(err, "cagec fmt: cannot set the mode of '%s': %s\n", of.tmp, strerror(errno));
		outfile_abort(&of);
	} else if ((st.st_uid != geteuid() || st.st_gid != getegid()) &&
		   fchown(fileno(of.fp), st.st_uid, st.st_gid) != 0) {
		/* Rewriting would hand the file to us; leave it as it is. */
		fprintf(err, "cagec fmt: cannot keep the owner of '%s' (%s); not rewritten\n", path,
			strerror(errno));
		outfile_abort(&of);
	} else if (fwrite(text, 1, len, of.fp) != len) {
		fprintf(err, "cagec fmt: cannot write '%s': %s\n", of.tmp, strerror(errno));
		outfile_abort(&of);
	} else if (stat(real, &st) != 0 || !fmt_same_file_state(before, &st)) {
		fprintf(err, "cagec fmt: '%s' changed while it was being formatted; not rewritten\n",
			path);
		outfile_abort(&of);
	} else if (!outfile_commit(&of, msg, sizeof(msg))) {
		fprintf(err, "cagec fmt: %s\n", msg);
	} else {
		ok = true;
	}
	free(real);
	return ok;
}

/* Formats one file; returns its exit status contribution. */
static int fmt_one(const char *path, const struct fmt_opts *o, FILE *out, FILE *err)
{
	struct arena a;
	arena_init(&a);
	struct diag_list dl;
	diag_list_init(&dl, &a);
	char *text = NULL, *res = NULL;
	size_t len = 0, rlen = 0;
	const char *msg = NULL;
	bool is_stdin = strcmp(path, "-") == 0;
	int status = 0;
	struct stat before;
	if (!is_stdin && o->write && stat(path, &before) != 0) {
		fprintf(err, "cagec fmt: cannot open '%s': %s\n", path, strerror(errno));
		status = FMT_EXIT_USAGE;
		goto done;
	}
	if (!(is_stdin ? fmt_read_stdin(&a, &text, &len, &msg)
		       : load_read(&a, path, &text, &len, &msg))) {
		fprintf(err, "cagec fmt: %s\n", msg);
		status = FMT_EXIT_USAGE;
		goto done;
	}
	struct src_file f = {
		.name = is_stdin ? "<stdin>" : path, .text = text, .len = len,
	};
	if (!fmt_source(&f, &a, &dl, &res, &rlen)) {
		diag_sort(&dl);
		diag_render(err, &dl, o->color);
		status = FMT_EXIT_CHANGED;
		goto done;
	}
	bool changed = rlen != len || memcmp(res, text, len) != 0;
	if (!o->check && !o->write) {
		if (fwrite(res, 1, rlen, out) != rlen) {
			fprintf(err, "cagec fmt: cannot write the output: %s\n", strerror(errno));
			status = FMT_EXIT_USAGE;
		}
		goto done;
	}
	bool rewritten = false;
	if (changed && o->write) {
		if (is_stdin)
			fwrite(res, 1, rlen, out);
		else if (!(rewritten = fmt_rewrite(path, &before, res, rlen, err)))
			status = FMT_EXIT_USAGE;
	}
	if (changed && o->check) {
		fmt_print_diff(out, f.name, "formatted", text, len, res, rlen, FMT_DIFF_MAX_LINES);
		fprintf(err, "cagec fmt: %s is not formatted%s\n", f.name, rewritten ? "; rewritten" : "");
		if (status < FMT_EXIT_CHANGED)
			status = FMT_EXIT_CHANGED;
	}
done:
	free(res);
	diag_list_free(&dl);
	arena_free(&a);
	return status;
}

int fmt_command(int argc, char **argv, FILE *out, FILE *err)
{
	struct fmt_opts o = { 0 };
	const char *color = "auto";
	int first = argc, nfiles = 0;
	bool opts_done = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (opts_done || a[0] != '-' || strcmp(a, "-") == 0) {
			if (first == argc)
				first = i;
			nfiles++;
			continue;
		}
		if (first != argc) {
			fprintf(err, "cagec fmt: options go before the files ('%s')\n", a);
			return FMT_EXIT_USAGE;
		}
		if (strcmp(a, "--") == 0) {
			opts_done = true;
		} else if (strcmp(a, "--check") == 0) {
			o.check = true;
		} else if (strcmp(a, "-w") == 0 || strcmp(a, "--write") == 0) {
			o.write = true;
		} else if (strncmp(a, "--color=", 8) == 0 || strncmp(a, "--colour=", 9) == 0) {
			color = strchr(a, '=') + 1;
			if (!cli_color_valid(color)) {
				fprintf(err, "cagec fmt: --color wants auto, always or never\n");
				return FMT_EXIT_USAGE;
			}
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(fmt_usage_text, out);
			return 0;
		} else {
			struct suggest sg;
			suggest_init(&sg, a, strlen(a));
			suggest_offer_all(&sg, (const char *const[]){ "--check", "--write", "--help",
								      "--color=auto", NULL });
			char hint[96];
			fprintf(err, "cagec fmt: unknown option '%s'%s (see cagec fmt --help)\n", a,
				suggest_say(suggest_best(&sg), hint, sizeof hint));
			return FMT_EXIT_USAGE;
		}
	}
	if (nfiles == 0) {
		fputs("cagec fmt: no policy file given (see cagec fmt --help)\n", err);
		return FMT_EXIT_USAGE;
	}
	if (nfiles > 1 && !o.check && !o.write) {
		fputs("cagec fmt: printing formats one file; use --check or -w for several\n", err);
		return FMT_EXIT_USAGE;
	}
	o.color = cli_want_color(color, fileno(err));
	int status = 0;
	for (int i = first; i < argc; i++) {
		int s = fmt_one(argv[i], &o, out, err);
		if (s > status)
			status = s;
	}
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(err, "cagec fmt: cannot write the output: %s\n", strerror(errno));
		return FMT_EXIT_USAGE;
	}
	return status;
}
