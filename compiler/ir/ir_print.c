/*
 * ir_print.c - the IR as stable, readable text (`cagec --emit ir`).
 *
 * Golden tests compare this output, so it must not depend on the machine:
 * home-relative paths print as "~/...", files print by display name, and
 * nothing is printed in hash or pointer order.
 */
#include <inttypes.h>
#include <string.h>

#include "ir.h"

const char *ir_effect_name(enum ir_effect e)
{
	return e == IR_ALLOW ? "allow" : e == IR_DENY ? "deny" : "protect";
}

const char *ir_target_name(enum ir_target t)
{
	return t == IR_TARGET_LINUX ? "linux" : "macos";
}

bool ir_target_parse(const char *name, enum ir_target *out)
{
	if (strcmp(name, "linux") == 0)
		*out = IR_TARGET_LINUX;
	else if (strcmp(name, "macos") == 0)
		*out = IR_TARGET_MACOS;
	else
		return false;
	return true;
}

const char *ir_mode_name(enum ir_mode m)
{
	static const char *names[] = { "off", "monitor", "enforce-fs", "enforce" };
	return names[m];
}

bool ir_mode_parse(const char *name, enum ir_mode *out)
{
	for (int m = IR_MODE_OFF; m <= IR_MODE_ENFORCE; m++)
		if (!strcmp(name, ir_mode_name((enum ir_mode)m))) {
			*out = (enum ir_mode)m;
			return true;
		}
	return false;
}

void ir_access_names(uint32_t a, char *buf, size_t size)
{
	static const struct { uint32_t bits; const char *name; } kw[] = {
		{ IR_A_KW_READ, "read" },        { IR_A_READ, "read-data" },
		{ IR_A_READ_META, "read-metadata" }, { IR_A_KW_WRITE, "write" },
		{ IR_A_WRITE, "write-data" },     { IR_A_CREATE, "create" },
		{ IR_A_DELETE, "delete" },        { IR_A_EXEC, "exec" },
		{ IR_A_CONNECT, "connect" },      { IR_A_UNIX, "unix" },
		{ IR_A_MACH, "mach" },
	};
	size_t n = 0;
	buf[0] = '\0';
	uint32_t left = a;
	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]) && left; i++) {
		if ((left & kw[i].bits) != kw[i].bits)
			continue;
		int w = snprintf(buf + n, size - n, "%s%s", n ? " " : "", kw[i].name);
		if (w < 0 || (size_t)w >= size - n)
			break;
		n += (size_t)w;
		left &= ~kw[i].bits;
	}
}

void ir_path_display(const struct ir_path *p, char *buf, size_t size)
{
	if (p->home_len)
		snprintf(buf, size, "~%s", p->text + p->home_len);
	else
		snprintf(buf, size, "%s", p->text);
}

void ir_host_display(const struct ir_host *h, char *buf, size_t size)
{
	size_t n = 0;
	int w;
	switch (h->kind) {
	case IR_H_SUFFIX: w = snprintf(buf, size, "*.%s", h->name); break;
	case IR_H_IPV6: w = snprintf(buf, size, "[%s]", h->name); break;
	default: w = snprintf(buf, size, "%s", h->name); break;
	}
	if (w < 0 || (size_t)w >= size)
		return;
	n = (size_t)w;
	for (size_t i = 0; i < h->nports; i++) {
		if (h->ports[i].lo == h->ports[i].hi)
			w = snprintf(buf + n, size - n, "%c%u", i ? ',' : ':', h->ports[i].lo);
		else
			w = snprintf(buf + n, size - n, "%c%u-%u", i ? ',' : ':', h->ports[i].lo,
				     h->ports[i].hi);
		if (w < 0 || (size_t)w >= size - n)
			return;
		n += (size_t)w;
	}
}

void ir_target_display(const struct ir_rule *r, char *buf, size_t size)
{
	switch (r->tkind) {
	case IR_T_HOST:
		ir_host_display(&r->t.host, buf, size);
		break;
	case IR_T_MACH:
		snprintf(buf, size, "%s%s", r->t.mach.name, r->t.mach.prefix ? "*" : "");
		break;
	default:
		ir_path_display(&r->t.path, buf, size);
		break;
	}
}

/* Strings are printed quoted with the language's own escapes so that the
 * text form is unambiguous even for paths with quotes or newlines. */
static void print_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void print_loc(FILE *out, const struct loc *l)
{
	if (!l->file)
		return;
	fprintf(out, "  # %s:%u:%u", l->file->name, l->line, l->col);
	for (const struct src_file *f = l->file; f->importer; f = f->importer)
		fprintf(out, " < %s:%u", f->importer->name, f->import_line);
}

void ir_print_profile(FILE *out, const struct ir_policy *pol, const struct ir_profile *p)
{
	fprintf(out, "profile %s", p->name);
	if (p->parent)
		fprintf(out, " extends %s", p->parent->name);
	fputc('\n', out);
	fprintf(out, "  mode %s\n", ir_mode_name(p->mode));
	if (p->private_tmp || p->private_home)
		fprintf(out, "  private%s%s\n", p->private_tmp ? " tmp" : "", p->private_home ? " home" : "");
	for (int k = 0; k < IR_LIM_N; k++) {
		char v[64];
		if (!p->limits[k].set)
			continue;
		ir_limit_display(&p->limits[k], true, v, sizeof v);
		fprintf(out, "  limit %s %s", ir_limit_name((enum ir_limit_kind)k), v);
		print_loc(out, &p->limits[k].loc);
		fputc('\n', out);
	}
	for (size_t i = 0; i < pol->nparams; i++) {
		fprintf(out, "  param %s = ", pol->params[i].name);
		print_quoted(out, pol->params[i].value ? pol->params[i].value : "");
		fputc('\n', out);
	}
	for (size_t i = 0; i < p->nenv; i++) {
		const struct ir_env_op *e = &p->env[i];
		fprintf(out, "  env %s %s", e->kind == IR_ENV_KEEP ? "keep" : e->kind == IR_ENV_SET ? "set" : "unset",
			e->name);
		if (e->kind == IR_ENV_SET) {
			fputs(" = ", out);
			print_quoted(out, e->value);
		}
		fputc('\n', out);
	}
	for (size_t i = 0; i < p->nrules; i++) {
		const struct ir_rule *r = &p->rules[i];
		char acc[128], tgt[4200];
		ir_access_names(r->access, acc, sizeof(acc));
		ir_target_display(r, tgt, sizeof(tgt));
		fprintf(out, "  %4zu %s %s ", i, ir_effect_name(r->effect), acc);
		print_quoted(out, tgt);
		print_loc(out, &r->loc);
		fputc('\n', out);
		/* one except a line, so each keeps its own source location */
		for (uint32_t k = 0; k < r->nexcept; k++) {
			ir_path_display(&r->except[k].path, tgt, sizeof(tgt));
			fputs("         except ", out);
			print_quoted(out, tgt);
			print_loc(out, &r->except[k].loc);
			fputc('\n', out);
		}
	}
}

bool emit_ir(const struct ir_policy *pol, const struct ir_profile *prof, FILE *out,
	     struct arena *a, const char **err)
{
	(void)a;
	(void)err;
	fprintf(out, "# cage ir 1; target %s; sources %016" PRIx64 "\n", ir_target_name(pol->target),
		pol->fingerprint);
	ir_print_profile(out, pol, prof);
	return true;
}
