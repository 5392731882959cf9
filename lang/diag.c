/*
 * diag.c - collecting and rendering diagnostics (see diag.h).
 */
#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void diag_list_init(struct diag_list *dl, struct arena *a)
{
	memset(dl, 0, sizeof(*dl));
	dl->arena = a;
}

void diag_list_free(struct diag_list *dl)
{
	free(dl->items);
	dl->items = NULL;
	dl->n = dl->cap = 0;
}

static char *vfmt(struct arena *a, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		n = 0;
	char *p = arena_alloc(a, (size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

struct diag *diag_add(struct diag_list *dl, enum diag_sev sev, struct loc loc,
		      const char *id, const char *fmt, ...)
{
	struct diag *d = arena_alloc(dl->arena, sizeof(*d));
	d->sev = sev;
	d->loc = loc;
	d->id = id;
	va_list ap;
	va_start(ap, fmt);
	d->msg = vfmt(dl->arena, fmt, ap);
	va_end(ap);
	d->notes_tail = &d->notes;
	if (sev == DIAG_ERROR)
		dl->errors++;
	else if (sev == DIAG_WARNING)
		dl->warnings++;
	if (dl->max_errors && dl->n >= dl->max_errors) {
		dl->dropped++;
		return d; /* still a valid object for notes; just not kept */
	}
	if (dl->n == dl->cap) {
		size_t cap = dl->cap ? dl->cap * 2 : 16;
		struct diag **items = realloc(dl->items, cap * sizeof(*items));
		if (!items) {
			fputs("cage: out of memory\n", stderr);
			abort();
		}
		dl->items = items;
		dl->cap = cap;
	}
	dl->items[dl->n++] = d;
	return d;
}

void diag_note(struct diag_list *dl, struct diag *d, struct loc loc, const char *fmt, ...)
{
	struct diag_note *n = arena_alloc(dl->arena, sizeof(*n));
	n->loc = loc;
	va_list ap;
	va_start(ap, fmt);
	n->msg = vfmt(dl->arena, fmt, ap);
	va_end(ap);
	*d->notes_tail = n;
	d->notes_tail = &n->next;
}

void diag_add_import_chain(struct diag_list *dl, struct diag *d, const struct src_file *file)
{
	/* Bounded by the import depth limit; guard anyway against a malformed chain. */
	for (int depth = 0; file && file->importer && depth < 256; depth++) {
		struct loc l = { .file = file->importer, .line = file->import_line,
				 .col = file->import_col };
		diag_note(dl, d, l, "in file imported from here");
		file = file->importer;
	}
}

/* True when none of the 8 bytes at p is a tab or has its high bit set:
 * then each is one column (w ^ tabs has a zero byte where p has a tab). */
static bool plain8(const char *p)
{
	uint64_t w;
	memcpy(&w, p, sizeof w);
	const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
	uint64_t t = w ^ (ones * '\t');
	return ((w | ((t - ones) & ~t)) & highs) == 0;
}

uint32_t diag_columns(const char *s, const char *e, uint32_t col)
{
	while (e - s >= 8 && plain8(s)) {
		col += 8;
		s += 8;
	}
	for (; s < e; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\t')
			col = (col / 8 + 1) * 8;
		else if ((c & 0xC0) != 0x80) /* continuation bytes add nothing */
			col++;
	}
	return col;
}

uint32_t diag_display_col(const char *text, size_t line_start, size_t off)
{
	return diag_columns(text + line_start, text + off, 0) + 1;
}

const char *diag_sev_name(enum diag_sev sev)
{
	switch (sev) {
	case DIAG_ERROR: return "error";
	case DIAG_WARNING: return "warning";
	default: return "note";
	}
}

static const char *sev_color(enum diag_sev sev)
{
	switch (sev) {
	case DIAG_ERROR: return "\033[1;31m";
	case DIAG_WARNING: return "\033[1;35m";
	default: return "\033[1;36m";
	}
}

/* Prints the source line holding loc and a caret line under its span. The
 * caret line copies tabs from the source so it lines up in any terminal. */
static void render_snippet(FILE *out, const struct loc *l, bool color)
{
	const struct src_file *f = l->file;
	if (!f || !f->text || l->line == 0 || l->off > f->len)
		return;
	size_t start = l->off;
	while (start > 0 && f->text[start - 1] != '\n')
		start--;
	size_t end = l->off;
	while (end < f->len && f->text[end] != '\n' && f->text[end] != '\r')
		end++;
	/* A very long line is shown as a window around the caret, so one
	 * pathological line cannot flood the terminal. */
	enum { WINDOW = 160 };
	if (end - start > WINDOW) {
		size_t from = l->off > start + WINDOW / 2 ? l->off - WINDOW / 2 : start;
		while (from > start && ((unsigned char)f->text[from] & 0xC0) == 0x80)
			from--;
		start = from;
		if (end - start > WINDOW) {
			end = start + WINDOW;
			while (end > start && ((unsigned char)f->text[end] & 0xC0) == 0x80)
				end--;
		}
	}
	fputc(' ', out);
	for (size_t i = start; i < end; i++) {
		unsigned char c = (unsigned char)f->text[i];
		/* Never echo control bytes (NUL, escapes) from untrusted input. */
		fputc((c < 0x20 && c != '\t') || c == 0x7f ? '?' : c, out);
	}
	fputc('\n', out);
	fputc(' ', out);
	for (size_t i = start; i < l->off; i++) {
		unsigned char c = (unsigned char)f->text[i];
		if (c == '\t')
			fputc('\t', out);
		else if ((c & 0xC0) != 0x80)
			fputc(' ', out);
	}
	if (color)
		fputs("\033[1;32m", out);
	fputc('^', out);
	size_t span_end = l->off + l->len;
	if (span_end > end)
		span_end = end;
	for (size_t i = l->off + 1; i < span_end; i++)
		if (((unsigned char)f->text[i] & 0xC0) != 0x80)
			fputc('~', out);
	if (color)
		fputs("\033[0m", out);
	fputc('\n', out);
}

static void render_head(FILE *out, const struct loc *l, enum diag_sev sev,
			const char *msg, const char *id, bool color)
{
	if (color)
		fputs("\033[1m", out);
	if (l->file && l->line)
		fprintf(out, "%s:%u:%u: ", l->file->name, l->line, l->col);
	else if (l->file)
		fprintf(out, "%s: ", l->file->name);
	else
		fputs("cagec: ", out);
	if (color)
		fprintf(out, "%s%s:\033[0m ", sev_color(sev), diag_sev_name(sev));
	else
		fprintf(out, "%s: ", diag_sev_name(sev));
	fputs(msg, out);
	if (id)
		fprintf(out, " [%s]", id);
	fputc('\n', out);
}

void diag_render_one(FILE *out, const struct diag *d, bool color)
{
	render_head(out, &d->loc, d->sev, d->msg, d->id, color);
	render_snippet(out, &d->loc, color);
	for (const struct diag_note *n = d->notes; n; n = n->next) {
		render_head(out, &n->loc, DIAG_NOTE, n->msg, NULL, color);
		if (n->loc.len)
			render_snippet(out, &n->loc, color);
	}
}

/* Source order (file, then position), like a compiler reading top to
 * bottom, whatever order the passes found things in; ties keep their
 * discovery order. */
static int diag_cmp(const struct diag *a, const struct diag *b)
{
	int fa = a->loc.file ? a->loc.file->id : -1, fb = b->loc.file ? b->loc.file->id : -1;
	if (fa != fb)
		return fa < fb ? -1 : 1;
	if (a->loc.off != b->loc.off)
		return a->loc.off < b->loc.off ? -1 : 1;
	return 0;
}

struct diag_ranked {
	struct diag *d;
	size_t seq;
};

static int diag_ranked_cmp(const void *x, const void *y)
{
	const struct diag_ranked *a = x, *b = y;
	int c = diag_cmp(a->d, b->d);
	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void diag_sort(struct diag_list *dl)
{
	if (dl->n < 2)
		return;
	struct diag_ranked *tmp = malloc(dl->n * sizeof(*tmp));
	if (!tmp)
		return; /* unsorted output is still correct output */
	for (size_t i = 0; i < dl->n; i++) {
		tmp[i].d = dl->items[i];
		tmp[i].seq = i;
	}
	qsort(tmp, dl->n, sizeof(*tmp), diag_ranked_cmp);
	for (size_t i = 0; i < dl->n; i++)
		dl->items[i] = tmp[i].d;
	free(tmp);
}

void diag_render(FILE *out, const struct diag_list *dl, bool color)
{
	for (size_t i = 0; i < dl->n; i++)
		diag_render_one(out, dl->items[i], color);
	if (dl->dropped)
		fprintf(out, "cagec: note: %zu more diagnostics not shown\n", dl->dropped);
}
