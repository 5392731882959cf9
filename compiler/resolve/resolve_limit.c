/*
 * resolve_limit.c - `limit WHAT N [UNIT] [best-effort]` into a layer's
 * limits (docs/language.md "limit"): the kind, the number, the unit, their
 * bounds. Every mistake is a diagnostic at the word that is wrong.
 */
#include "resolve_int.h"

#include "suggest.h"

/* Past these no machine could honour the value, and a count this large
 * is a typo rather than a bound: PID_MAX_LIMIT for processes, the
 * kernel's ceiling of fs.nr_open for files, 1024 TiB for sizes. */
static const uint64_t lim_max[IR_LIM_N] = { 4194304, 1ull << 50, 1ull << 50, 1u << 30 };

static const char *const kind_names[] = { "processes", "memory", "tmp", "files", NULL };
static const char *const unit_names[] = { "KiB", "MiB", "GiB", "TiB", NULL };

/* Decimal digits (the lexer's INT) to a value; false past UINT64_MAX. */
static bool parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	for (; *s; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static bool parse_words(struct rsv *r, enum ir_limit_kind k, const struct ast_str *num,
			struct ast_str *words, struct ir_limit *l)
{
	bool ok = true;
	struct ast_str *unit = NULL, *mark = NULL;
	for (struct ast_str *w = words; w; w = w->next) {
		size_t u;
		for (u = 0; unit_names[u] && strcmp(w->text, unit_names[u]) != 0; u++)
			;
		if (strcmp(w->text, "best-effort") == 0 && !mark) {
			mark = w;
			l->best_effort = true;
		} else if (unit_names[u] && ir_limit_sized(k) && !unit && !mark) {
			unit = w;
			l->unit = 1ull << (10 * (u + 1));
		} else if (unit_names[u] && !ir_limit_sized(k)) {
			rsv_diag(r, DIAG_ERROR, w->loc, "limit",
				 "'limit %s' is a count and takes no unit", ir_limit_name(k));
			ok = false;
		} else if (unit_names[u] || strcmp(w->text, "best-effort") == 0) {
			rsv_diag(r, DIAG_ERROR, w->loc, "limit",
				 "'%s' is out of place: write 'limit %s N%s [best-effort]'", w->text,
				 ir_limit_name(k), ir_limit_sized(k) ? " UNIT" : "");
			ok = false;
		} else {
			const char *const *among = ir_limit_sized(k)
				? (const char *const[]){ "KiB", "MiB", "GiB", "TiB", "best-effort", NULL }
				: (const char *const[]){ "best-effort", NULL };
			rsv_diag(r, DIAG_ERROR, w->loc, "limit", "unknown word '%s' in 'limit %s' (%s)%s",
				 w->text, ir_limit_name(k),
				 ir_limit_sized(k) ? "a unit KiB, MiB, GiB or TiB, then best-effort"
						   : "only best-effort may follow the number",
				 suggest_hint_among(r->a, w->text, among));
			ok = false;
		}
	}
	if (ok && ir_limit_sized(k) && !unit) {
		rsv_diag(r, DIAG_ERROR, words ? words->loc : num->loc, "limit",
			 "'limit %s' needs a unit after the number (KiB, MiB, GiB or TiB)",
			 ir_limit_name(k));
		ok = false;
	}
	return ok;
}

void rsv_add_limit(struct rsv *r, struct layer *L, struct ast_node *n)
{
	struct ast_str *what = n->u.limit.what, *num = n->u.limit.number;
	size_t k;
	for (k = 0; kind_names[k] && strcmp(what->text, kind_names[k]) != 0; k++)
		;
	if (!kind_names[k]) {
		rsv_diag(r, DIAG_ERROR, what->loc, "limit",
			 "unknown limit '%s' (processes, memory, tmp or files)%s", what->text,
			 suggest_hint_among(r->a, what->text, kind_names));
		return;
	}
	struct ir_limit l = { .set = true, .unit = 1, .loc = n->loc };
	if (!parse_words(r, (enum ir_limit_kind)k, num, n->u.limit.words, &l))
		return;
	uint64_t v;
	if (!parse_u64(num->text, &v) || v > lim_max[k] / l.unit) {
		char max[64];
		struct ir_limit m = { .value = lim_max[k], .unit = ir_limit_sized(k) ? 1ull << 40 : 1 };
		ir_limit_display(&m, false, max, sizeof max);
		rsv_diag(r, DIAG_ERROR, num->loc, "limit", "'limit %s' of %s%s%s is more than %s",
			 kind_names[k], num->text, l.unit > 1 ? " " : "",
			 l.unit > 1 ? n->u.limit.words->text : "", max);
		return;
	}
	if (v == 0) {
		rsv_diag(r, DIAG_ERROR, num->loc, "limit",
			 "'limit %s' of 0 would stop everything; the smallest is 1", kind_names[k]);
		return;
	}
	l.value = v * l.unit;
	if (ir_limit_sized(k) && l.value < (1u << 20)) {
		rsv_diag(r, DIAG_ERROR, num->loc, "limit", "'limit %s' must be at least 1 MiB",
			 kind_names[k]);
		return;
	}
	ir_limit_merge(&L->limits[k], &l);
}

void rsv_merge_limit(struct rsv *r, struct ir_limit *cur, const struct ir_limit *l,
		     enum ir_limit_kind k)
{
	if (l->set && cur->set && l->value > cur->value) {
		bool told = false;
		for (size_t i = 0; i < r->loose_warned.n && !told; i++)
			told = r->loose_warned.v[i] == l;
		if (!told) {
			char mine[64], wins[64];
			ir_limit_display(l, false, mine, sizeof mine);
			ir_limit_display(cur, false, wins, sizeof wins);
			rsv_diag(r, DIAG_WARNING, l->loc, "limit",
				 "'limit %s %s' has no effect: %s, set at %s:%u, is tighter, and the "
				 "tightest limit of all layers wins", ir_limit_name(k), mine, wins,
				 cur->loc.file ? cur->loc.file->name : "?", cur->loc.line);
			VEC_PUSH(r->loose_warned, l);
		}
	}
	ir_limit_merge(cur, l);
}
