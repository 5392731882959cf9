/*
 * ll_serve.c - cage-lint: compiles the composition cagerun sent, in the
 * order it runs, lints it and writes every diagnostic back
 * (layers_lint.h).
 *
 * It is the second load of the same bytes cagerun compiled: the sources
 * it reports let cagerun refuse a layer that changed in between, so the
 * verdict is always about the text that runs. It judges and says; the
 * refusal is cagerun's.
 */
#include "ll_serve.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cage.h"
#include "diag.h"
#include "ir.h"
#include "layers_lint.h"
#include "layers_order.h"
#include "lint.h"
#include "policy.h"

struct ll_args {
	const char *file;
	bool stdin_text;
	const char *stdlib;
	bool profile_given;
	const char *kinds[LL_SOURCES_MAX]; /* --layer, in order (argv's strings) */
	size_t nkinds;
	bool untrusted[LL_SOURCES_MAX];
	long task, command;
};

static bool index_arg(const char *s, long *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < 0 || v >= LL_SOURCES_MAX)
		return false;
	*out = v;
	return true;
}

/* Fills `a` and `o` from argv; false with the reason on `err`. */
static bool parse_args(int argc, char **argv, struct ll_args *a, cage_options *o, FILE *err)
{
	a->task = a->command = -1;
	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i];
		if (!strcmp(opt, "--stdin")) {
			a->stdin_text = true;
			continue;
		}
		const char *v = i + 1 < argc ? argv[++i] : NULL;
		bool ok = v != NULL;
		if (!ok)
			;
		else if (!strcmp(opt, "-D"))
			ok = cage_options_define(o, v);
		else if (!strcmp(opt, "-I"))
			cage_options_include(o, v);
		else if (!strcmp(opt, "--stdlib")) {
			cage_options_stdlib(o, v);
			a->stdlib = v;
		} else if (!strcmp(opt, "--home"))
			cage_options_home(o, v);
		else if (!strcmp(opt, "--profile")) {
			cage_options_profile(o, v);
			a->profile_given = true;
		}
		else if (!strcmp(opt, "--target"))
			ok = cage_options_target(o, v);
		else if (!strcmp(opt, "--layer")) {
			/* at most LL_SOURCES_MAX kinds, none empty */
			ok = *v && a->nkinds < LL_SOURCES_MAX;
			if (ok)
				a->kinds[a->nkinds++] = v;
		}
		else if (!strcmp(opt, "--untrusted")) {
			long n;
			ok = index_arg(v, &n);
			if (ok)
				a->untrusted[n] = true;
		}
		else if (!strcmp(opt, "--task"))
			ok = index_arg(v, &a->task);
		else if (!strcmp(opt, "--command"))
			ok = index_arg(v, &a->command);
		else if (!strcmp(opt, "--file"))
			a->file = v;
		else
			ok = false;
		if (!ok) {
			fprintf(err, "%s: %s%s%s: not understood (this program is run by cagerun)\n",
				LL_PROGRAM, opt, v ? " " : "", v ? v : "");
			return false;
		}
	}
	if (!a->stdlib || !a->file == !a->stdin_text) {
		fprintf(err, "%s: needs --stdlib and one of --file or --stdin (this program is run "
			     "by cagerun)\n", LL_PROGRAM);
		return false;
	}
	return true;
}

/* The composition on `in`: at most LL_TEXT_MAX bytes, no NUL. */
static char *read_text(FILE *in, size_t *len, FILE *err)
{
	char *buf = malloc(LL_TEXT_MAX + 1);
	if (!buf) {
		fprintf(err, "%s: out of memory\n", LL_PROGRAM);
		return NULL;
	}
	size_t n = fread(buf, 1, LL_TEXT_MAX + 1, in);
	if (ferror(in) || n > LL_TEXT_MAX || memchr(buf, '\0', n)) {
		fprintf(err, "%s: the composition is unreadable, longer than %d bytes or has a NUL\n",
			LL_PROGRAM, LL_TEXT_MAX);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static void put(FILE *out, const char *s)
{
	fputs(s, out);
	fputc('\0', out);
}

/* The real path of the root's import `f` came through, or "". */
static const char *layer_of(const struct src_file *f)
{
	while (f && f->importer && f->importer->importer)
		f = f->importer;
	return f && f->importer && f->realpath ? f->realpath : "";
}

static void put_diag(FILE *out, const struct diag *d)
{
	char num[2][24];
	snprintf(num[0], sizeof num[0], "%u", d->loc.line);
	snprintf(num[1], sizeof num[1], "%u", d->loc.col);
	put(out, "D");
	put(out, d->sev == DIAG_ERROR ? "e" : d->sev == DIAG_WARNING ? "w" : "n");
	put(out, num[0]);
	put(out, num[1]);
	put(out, d->loc.file ? d->loc.file->name : "(default)");
	put(out, layer_of(d->loc.file));
	put(out, d->id ? d->id : "");
	put(out, d->msg);
}

/* Selects, reorders and lints `pol`, already compiled without errors;
 * `imp` are the root's imports. false when the request names a layer the
 * composition does not have. */
static bool judge(cage_policy *pol, const struct ll_args *a, const struct src_file **imp,
		  size_t ni)
{
	if (a->nkinds != 0 && a->nkinds != ni)
		return false;
	layers_select(pol->ir, a->profile_given, a->kinds, imp, a->untrusted, a->nkinds);
	if (a->task >= 0) {
		if ((size_t)a->task >= ni || !imp[a->task])
			return false;
		layers_task_to_end(pol, imp[a->task]);
	}
	struct lint_opts lo = { .stdlib = a->stdlib };
	lint_policy(pol, &lo);
	return true;
}

int ll_serve(int argc, char **argv, FILE *in, FILE *out, FILE *err)
{
	cage_options *o = cage_options_new();
	struct ll_args a = { 0 };
	if (!o) {
		fprintf(err, "%s: out of memory\n", LL_PROGRAM);
		return 1;
	}
	if (!parse_args(argc, argv, &a, o, err)) {
		cage_options_free(o);
		return 2;
	}
	size_t len = 0;
	char *text = a.stdin_text ? read_text(in, &len, err) : NULL;
	bool readable = !a.stdin_text || text; /* else read_text said why */
	cage_policy *pol = NULL;
	if (readable)
		pol = text ? cage_load_string("<layers>", text, len, o) : cage_load_file(a.file, o);
	free(text);
	cage_options_free(o);
	if (!pol) {
		if (readable)
			fprintf(err, "%s: out of memory\n", LL_PROGRAM);
		return 1;
	}
	const struct src_file *imp[LL_SOURCES_MAX];
	size_t ni = a.stdin_text ? layers_imported(pol, imp, LL_SOURCES_MAX) : 0;
	if (a.command >= 0 && (size_t)a.command < ni && imp[a.command])
		((struct src_file *)imp[a.command])->name = "<command>";
	bool judged = cage_error_count(pol) == 0 && pol->ir->selected;
	if (judged && !judge(pol, &a, imp, ni)) {
		fprintf(err, "%s: --layer or --task: the composition has other layers\n",
			LL_PROGRAM);
		cage_policy_free(pol);
		return 1;
	}
	const struct ir_profile *sel = pol->ir ? pol->ir->selected : NULL;
	put(out, LL_MAGIC);
	put(out, "J");
	put(out, judged ? "1" : "0");
	put(out, "P");
	put(out, sel && sel->name ? sel->name : "");
	for (size_t i = 0; i < ni; i++) {
		char fp[17];
		put(out, "S");
		if (imp[i] && imp[i]->realpath) {
			snprintf(fp, sizeof fp, "%016" PRIx64, (uint64_t)XXH3_64bits(imp[i]->text, imp[i]->len));
			put(out, fp);
			put(out, imp[i]->realpath);
		} else {
			put(out, "-");
			put(out, "-");
		}
	}
	for (size_t i = 0; i < pol->diags.n; i++)
		put_diag(out, pol->diags.items[i]);
	put(out, ".");
	cage_policy_free(pol);
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(err, "%s: writing the reply failed\n", LL_PROGRAM);
		return 1;
	}
	return 0;
}
