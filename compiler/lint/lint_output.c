/*
 * lint_output.c - findings as JSON (for editors and scripts) and as SARIF
 * 2.1.0 (for GitHub code scanning and other SARIF viewers). Text output is
 * diag_render's, shared with the compiler.
 *
 * SARIF details that uploads depend on: every result has a physical
 * location (findings without a file point at line 1 of the policy that
 * was checked), artifact URIs are relative and percent-encoded, and each
 * rule id used by a result is described in tool.driver.rules.
 */
#include "lint_int.h"

#include <stdlib.h>
#include <string.h>

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

static const char *sev_text(enum diag_sev s)
{
	return s == DIAG_ERROR ? "error" : s == DIAG_WARNING ? "warning" : "note";
}

static void json_loc(FILE *out, const struct loc *l, const struct cage_policy *pol)
{
	const char *file = l->file ? l->file->name
			 : pol->ir && pol->ir->nfiles ? pol->ir->files[0]->name : NULL;
	fputs("\"file\": ", out);
	if (file)
		json_str(out, file);
	else
		fputs("null", out);
	fprintf(out, ", \"line\": %u, \"column\": %u", l->line, l->col);
}

void lint_write_json(FILE *out, struct cage_policy *const *pols, size_t n)
{
	size_t errors = 0, warnings = 0;
	fputs("{\n  \"version\": 1,\n  \"diagnostics\": [", out);
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (pols[i]->io_error)
			continue;
		const struct diag_list *dl = &pols[i]->diags;
		errors += dl->errors;
		warnings += dl->warnings;
		for (size_t k = 0; k < dl->n; k++) {
			const struct diag *d = dl->items[k];
			fputs(first ? "\n    {" : ",\n    {", out);
			first = false;
			json_loc(out, &d->loc, pols[i]);
			fprintf(out, ", \"severity\": \"%s\", \"id\": ", sev_text(d->sev));
			json_str(out, d->id);
			fputs(", \"message\": ", out);
			json_str(out, d->msg);
			fputs(", \"notes\": [", out);
			for (const struct diag_note *nt = d->notes; nt; nt = nt->next) {
				fputs(nt == d->notes ? "{" : ", {", out);
				json_loc(out, &nt->loc, pols[i]);
				fputs(", \"message\": ", out);
				json_str(out, nt->msg);
				fputc('}', out);
			}
			fputs("]}", out);
		}
	}
	fprintf(out, "%s],\n  \"errors\": %zu,\n  \"warnings\": %zu\n}\n", first ? "" : "\n  ",
		errors, warnings);
}

/* ---- SARIF ---- */

static void uri(FILE *out, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	fputc('"', out);
	if (path[0] == '/')
		fputs("file://", out);
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/", *p))
			fputc(*p, out);
		else
			fprintf(out, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
	fputc('"', out);
}

/* SARIF columns count Unicode code points (run.columnKind), so a tab is
 * one column here, not the next multiple of 8 as in text output. */
static unsigned sarif_col(const struct src_file *f, size_t off)
{
	size_t ls = off;
	while (ls > 0 && f->text[ls - 1] != '\n')
		ls--;
	unsigned col = 1;
	for (size_t i = ls; i < off; i++)
		col += ((unsigned char)f->text[i] & 0xC0) != 0x80;
	return col;
}

/* The base a file's relative URI is resolved against: the user's checkout,
 * or the standard library for its modules (which are not in the checkout). */
static const char *sarif_base(const struct src_file *f)
{
	return f && f->stdlib_root ? "CAGE_STDLIB" : "%SRCROOT%";
}

static void sarif_phys(FILE *out, const struct loc *l, const struct cage_policy *pol)
{
	const char *file = l->file ? l->file->name : pol->ir && pol->ir->nfiles
						     ? pol->ir->files[0]->name : "policy.cage";
	fputs("{\"artifactLocation\": {\"uri\": ", out);
	uri(out, file);
	if (file[0] != '/')
		fprintf(out, ", \"uriBaseId\": \"%s\"", sarif_base(l->file));
	unsigned line = l->file && l->line ? l->line : 1;
	fprintf(out, "}, \"region\": {\"startLine\": %u", line);
	if (l->file && l->line && l->col && l->off <= l->file->len) {
		fprintf(out, ", \"startColumn\": %u", sarif_col(l->file, l->off));
		/* the span is on one line when it fits the line */
		if (l->len && l->off + l->len <= l->file->len &&
		    !memchr(l->file->text + l->off, '\n', l->len))
			fprintf(out, ", \"endColumn\": %u", sarif_col(l->file, l->off + l->len));
	}
	fputs("}}", out);
}

/* The standard library directory of any file a finding points into (the
 * run's CAGE_STDLIB base), or NULL. */
static const char *sarif_stdlib_root(struct cage_policy *const *pols, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct diag_list *dl = &pols[i]->diags;
		for (size_t k = 0; k < dl->n; k++) {
			const struct diag *d = dl->items[k];
			if (d->loc.file && d->loc.file->stdlib_root)
				return d->loc.file->stdlib_root;
			for (const struct diag_note *nt = d->notes; nt; nt = nt->next)
				if (nt->loc.file && nt->loc.file->stdlib_root)
					return nt->loc.file->stdlib_root;
		}
	}
	return NULL;
}

/* run.originalUriBaseIds: where CAGE_STDLIB is on this machine, as an
 * absolute directory URI (it ends in '/', as SARIF requires). */
static void sarif_base_ids(FILE *out, const char *stdlib_root)
{
	char *real = stdlib_root ? realpath(stdlib_root, NULL) : NULL;
	if (!real)
		return;
	fputs("    \"originalUriBaseIds\": {\"CAGE_STDLIB\": {\"uri\": ", out);
	size_t len = strlen(real);
	char *dir = malloc(len + 2);
	if (dir) {
		memcpy(dir, real, len);
		strcpy(dir + len, len && real[len - 1] == '/' ? "" : "/");
		uri(out, dir);
		free(dir);
	}
	fputs(", \"description\": {\"text\": \"the cage standard library\"}}},\n", out);
	free(real);
}

/* run.invocations: whether every input was read. A file that could not be
 * read (missing, a directory, too large) is a notification and makes the
 * execution unsuccessful, so a viewer does not show a clean run. */
static void sarif_invocation(FILE *out, struct cage_policy *const *pols, size_t n)
{
	bool ok = true;
	for (size_t i = 0; i < n; i++)
		ok = ok && !pols[i]->io_error;
	fprintf(out, "    \"invocations\": [{\"executionSuccessful\": %s", ok ? "true" : "false");
	if (!ok) {
		fputs(", \"toolExecutionNotifications\": [", out);
		bool first = true;
		for (size_t i = 0; i < n; i++) {
			if (!pols[i]->io_error)
				continue;
			for (size_t k = 0; k < pols[i]->diags.n; k++) {
				const struct diag *d = pols[i]->diags.items[k];
				fprintf(out, "%s\n      {\"level\": \"error\", \"message\": {\"text\": ",
					first ? "" : ",");
				first = false;
				json_str(out, d->msg);
				fputs("}", out);
				if (d->loc.file) {
					fputs(", \"locations\": [{\"physicalLocation\": ", out);
					sarif_phys(out, &d->loc, pols[i]);
					fputs("}]", out);
				}
				fputs("}", out);
			}
		}
		fputs("]", out);
	}
	fputs("}],\n", out);
}

struct idset {
	const char *ids[256];
	size_t n;
};

static size_t idset_index(struct idset *s, const char *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->ids[i], id) == 0)
			return i;
	if (s->n < 256)
		s->ids[s->n++] = id;
	return s->n - 1;
}

void lint_write_sarif(FILE *out, struct cage_policy *const *pols, size_t n)
{
	/* rules: every lint check, then any compiler id the results use */
	struct idset ids = { .n = 0 };
	size_t nck;
	const struct lint_check *ck = lint_checks(&nck);
	for (size_t i = 0; i < nck; i++)
		idset_index(&ids, ck[i].id);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; !pols[i]->io_error && k < pols[i]->diags.n; k++)
			idset_index(&ids, pols[i]->diags.items[k]->id ? pols[i]->diags.items[k]->id
								      : "cagec");
	fputs("{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n"
	      "  \"version\": \"2.1.0\",\n  \"runs\": [{\n"
	      "    \"tool\": {\"driver\": {\"name\": \"cagec\", \"version\": ", out);
	json_str(out, CAGE_VERSION_STRING);
	fputs(", \"rules\": [", out);
	for (size_t i = 0; i < ids.n; i++) {
		const struct lint_check *c = lint_check_find(ids.ids[i]);
		fprintf(out, "%s\n      {\"id\": ", i ? "," : "");
		json_str(out, ids.ids[i]);
		fputs(", \"shortDescription\": {\"text\": ", out);
		json_str(out, c ? c->summary : "cagec compile error");
		fprintf(out, "}, \"defaultConfiguration\": {\"level\": \"%s\"}}",
			sev_text(c ? c->sev : DIAG_ERROR));
	}
	fputs("]}},\n", out);
	sarif_invocation(out, pols, n);
	sarif_base_ids(out, sarif_stdlib_root(pols, n));
	fputs("    \"columnKind\": \"unicodeCodePoints\",\n    \"results\": [", out);
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (pols[i]->io_error)
			continue;
		const struct diag_list *dl = &pols[i]->diags;
		for (size_t k = 0; k < dl->n; k++) {
			const struct diag *d = dl->items[k];
			const char *id = d->id ? d->id : "cagec";
			fprintf(out, "%s\n      {\"ruleId\": ", first ? "" : ",");
			first = false;
			json_str(out, id);
			fprintf(out, ", \"ruleIndex\": %zu, \"level\": \"%s\", \"message\": {\"text\": ",
				idset_index(&ids, id), sev_text(d->sev));
			json_str(out, d->msg);
			fputs("},\n       \"locations\": [{\"physicalLocation\": ", out);
			sarif_phys(out, &d->loc, pols[i]);
			fputs("}]", out);
			if (d->notes) {
				fputs(",\n       \"relatedLocations\": [", out);
				unsigned rid = 1;
				for (const struct diag_note *nt = d->notes; nt; nt = nt->next, rid++) {
					const char *sep = nt == d->notes ? "" : ", ";
					fprintf(out, "%s{\"id\": %u, \"message\": {\"text\": ", sep, rid);
					json_str(out, nt->msg);
					fputs("}, \"physicalLocation\": ", out);
					sarif_phys(out, &nt->loc, pols[i]);
					fputs("}", out);
				}
				fputs("]", out);
			}
			fputs("}", out);
		}
	}
	fprintf(out, "%s]\n  }]\n}\n", first ? "" : "\n    ");
}
