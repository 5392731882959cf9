/*
 * lint_group.c - one finding per cause: findings of the same check at the
 * same span (one rule) become one, the others listed in its notes.
 *
 * `allow write "~"` above std/secrets is one mistake, not thirty: the rule
 * makes ~ writable above every protected path. Each check reports what it
 * finds one pair at a time; this pass folds the findings that share the
 * check id, severity and span into the first of them. The finding keeps
 * its own notes (with source lines); each folded one becomes a single
 * note line, placed where that finding's own first note pointed (the
 * other rule, e.g. the protect), saying what differs: the words its
 * message does not share with the first one. In SARIF the notes are the
 * result's related locations, so the list is there too.
 */
#include "lint_int.h"

#include <string.h>

/* Same check, same severity, same rule span. */
static bool same_cause(const struct diag *a, const struct diag *b)
{
	return a->sev == b->sev && strcmp(a->id, b->id) == 0 && a->loc.file == b->loc.file &&
	       a->loc.off == b->loc.off && a->loc.len == b->loc.len && a->loc.line == b->loc.line;
}

/* Length of the common prefix of a and b, cut back to a word boundary. */
static size_t common_prefix(const char *a, const char *b)
{
	size_t n = 0;
	while (a[n] && a[n] == b[n])
		n++;
	if (!a[n] && !b[n])
		return n;
	while (n > 0 && a[n - 1] != ' ')
		n--;
	return n;
}

/* Length of the common suffix of a and b, cut back to a word boundary. */
static size_t common_suffix(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = 0;
	while (n < alen && n < blen && a[alen - 1 - n] == b[blen - 1 - n])
		n++;
	while (n > 0 && a[alen - n] != ' ')
		n--;
	return n;
}

/* The part of `msg` that is not shared with `head`: "~/.pki/... that
 * std/secrets.cage:17" out of two writable-ancestor messages. */
static const char *difference(struct arena *a, const char *head, const char *msg)
{
	size_t hl = strlen(head), ml = strlen(msg);
	size_t pre = common_prefix(head, msg);
	size_t suf = common_suffix(head + pre, hl - pre, msg + pre, ml - pre);
	if (pre + suf >= ml)
		return msg;
	return arena_strndup(a, msg + pre, ml - pre - suf);
}

void lint_group_findings(struct lint_ctx *c)
{
	struct diag_list *dl = c->dl;
	for (size_t i = 0; i < dl->n; i++) {
		struct diag *head = dl->items[i];
		if (!lint_check_find(head->id))
			continue; /* compile errors are never lint's to fold */
		size_t more = 0;
		for (size_t j = i + 1; j < dl->n; j++)
			more += same_cause(head, dl->items[j]);
		if (!more)
			continue;
		const char *first_msg = head->msg;
		head->msg = arena_printf(c->a, "%s (and %zu more like it for this rule, in the notes)",
					 first_msg, more);
		size_t k = i + 1;
		for (size_t j = i + 1; j < dl->n; j++) {
			struct diag *d = dl->items[j];
			if (!same_cause(head, d)) {
				dl->items[k++] = d;
				continue;
			}
			struct loc at = d->notes ? d->notes->loc : d->loc;
			at.len = 0; /* one line per folded finding, no source snippet */
			diag_note(dl, head, at, "also: %s", difference(c->a, first_msg, d->msg));
			if (d->sev == DIAG_ERROR)
				dl->errors--;
			else if (d->sev == DIAG_WARNING)
				dl->warnings--;
		}
		dl->n = k;
	}
}
