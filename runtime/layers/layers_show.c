/*
 * layers_show.c - `cagerun --show`: what a run would enforce, for a person
 * to read in a minute: the layers (files, fingerprints, trust), the mode,
 * the grants in rule order grouped by layer file, the environment, private
 * directories, and lint's findings.
 */
#include <inttypes.h>
#include <string.h>

#include "layers.h"
#include "agentstate.h"
#include "cage.h"
#include "policy.h"

enum { SHOW_WIDTH = 100 };

static const char *file_name(const struct loc *l)
{
	return l->file ? l->file->name : "(default)";
}

/* One line per run of rules with the same effect, accesses, kind and
 * file; targets wrapped under the first. */
static void show_rules(FILE *out, const struct ir_profile *p, bool hosts)
{
	bool any = false;
	for (size_t i = 0; i < p->nrules;) {
		const struct ir_rule *r = &p->rules[i];
		bool is_host = r->tkind == IR_T_HOST;
		if (is_host != hosts || r->tkind == IR_T_MACH) {
			i++;
			continue;
		}
		char acc[128], head[200];
		ir_access_names(r->access, acc, sizeof acc);
		int col = snprintf(head, sizeof head, "  %-7s %-22s ", ir_effect_name(r->effect), acc);
		fputs(head, out);
		size_t j = i;
		for (; j < p->nrules; j++) {
			const struct ir_rule *q = &p->rules[j];
			if (q->effect != r->effect || q->access != r->access || q->tkind != r->tkind ||
			    q->loc.file != r->loc.file)
				break;
			char tgt[1024];
			ir_target_display(q, tgt, sizeof tgt);
			int w = (int)strlen(tgt) + 2;
			if (j > i && col + w > SHOW_WIDTH) {
				fprintf(out, ",\n%33s", "");
				col = 33;
			} else if (j > i) {
				fputs(", ", out);
			}
			fputs(tgt, out);
			col += w;
		}
		fprintf(out, "   [%s]\n", file_name(&r->loc));
		any = true;
		i = j;
	}
	if (!any)
		fputs("  none: denied\n", out);
}

static void show_env(FILE *out, const struct ir_profile *p)
{
	static const char *const kw[] = { "keep", "set", "unset" };
	fputs("environment (scrubbed; in order):\n", out);
	for (size_t i = 0; i < p->nenv;) {
		enum ir_env_kind k = p->env[i].kind;
		fprintf(out, "  %-5s", kw[k]);
		int col = 7;
		size_t j = i;
		for (; j < p->nenv && p->env[j].kind == k && p->env[j].loc.file == p->env[i].loc.file; j++) {
			char one[4200];
			if (k == IR_ENV_SET)
				snprintf(one, sizeof one, " %s=\"%s\"", p->env[j].name, p->env[j].value);
			else
				snprintf(one, sizeof one, " %s", p->env[j].name);
			int w = (int)strlen(one);
			if (j > i && col + w > SHOW_WIDTH) {
				fprintf(out, "\n%7s", "");
				col = 7;
			}
			fputs(one, out);
			col += w;
		}
		fprintf(out, "   [%s]\n", file_name(&p->env[i].loc));
		i = j;
	}
	fputs("  then cagerun sets TMPDIR, the proxy variables (enforce) and git's safety "
	      "settings\n", out);
}

void layers_show(const struct layers *L, FILE *out)
{
	const struct ir_profile *p = L->pol->ir->selected;
	fputs("layers, first to last (a later rule wins; protect always wins):\n", out);
	for (size_t i = 0; i < L->n; i++) {
		const struct layer_src *ls = &L->v[i];
		const struct src_file *s = ls->src;
		bool cmd = !strcmp(ls->kind, "command") && L->cmd.found;
		fprintf(out, "  %zu. %-9s xxh3:%016" PRIx64 "  %s%s%s\n", i + 1, ls->kind, ls->fp,
			cmd ? "(generated) " : "", cmd ? L->cmd.found : s ? s->name : ls->import,
			ls->untrusted ? "  NOT TRUSTED" : !strcmp(ls->kind, "project") ? "  trusted" : "");
		if (ls->untrusted)
			fprintf(out, "     only its deny and protect rules apply (%zu grant%s ignored); "
				     "review it, then run 'cagerun trust'\n",
				L->ignored, L->ignored == 1 ? "" : "s");
	}
	if (L->n == 2 && !strcmp(L->v[0].kind, "policy") && !strcmp(L->v[1].kind, "task"))
		fputs("  the task layer is on top of -p's policy: its rules come after all of the "
		      "policy's; it may\n  add grants, denies and environment steps, not re-open what "
		      "the policy denies or\n  protects, nor keep or set what it unsets\n", out);
	layers_show_command(L, out);
	if (L->root)
		fprintf(out, "workspace: %s\n", L->root);
	if (L->cache[0])
		fprintf(out, "caches: %s (%s's own; the environment below points each tool there)\n",
			L->cache, L->cache_key);
	fprintf(out, "profile: %s\nmode: %s\nprivate:%s%s%s\n", p->name,
		ir_mode_name((enum ir_mode)L->mode), p->private_tmp ? " tmp" : "",
		p->private_home ? " home" : "", p->private_tmp || p->private_home ? "" : " none");
	fputs("limits:", out);
	bool any = false;
	for (int k = 0; k < IR_LIM_N; k++) {
		char v[64];
		if (!p->limits[k].set)
			continue;
		ir_limit_display(&p->limits[k], true, v, sizeof v);
		fprintf(out, "%s %s %s", any ? "," : "", ir_limit_name((enum ir_limit_kind)k), v);
		any = true;
	}
	fputs(any ? "\n" : " none\n", out);
	fprintf(out, "fingerprint: xxh3:%016" PRIx64 "\n", L->fingerprint);
	fputs("\nfiles and sockets (in rule order):\n", out);
	show_rules(out, p, false);
	fputs("hosts (through the proxy, in rule order):\n", out);
	show_rules(out, p, true);
	show_env(out, p);
	agentstate_show(L->pol->ir, out);
	fputs("\nlint:\n", out);
	size_t shown = 0;
	for (size_t i = 0; i < L->lint.n; i++) {
		const struct ll_finding *d = &L->lint.v[i];
		if (d->sev == 'n')
			continue;
		fprintf(out, "  %s:%u:%u: %s: %s [%s]\n", d->file, d->line, d->col,
			d->sev == 'e' ? "error" : "warning", d->msg, d->id);
		shown++;
	}
	if (!shown)
		fputs("  no findings\n", out);
}
