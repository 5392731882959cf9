/*
 * suggest.c - the closest valid name to a misspelt one (see suggest.h).
 */
#include "suggest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names longer than this are not compared (no typo of a keyword or param
 * is that long, and the rows below stay on the stack). */
enum { SUGGEST_MAX_LEN = 64 };

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;
	return m < c ? m : c;
}

size_t suggest_distance(const char *a, size_t alen, const char *b, size_t blen, size_t limit)
{
	if (alen > SUGGEST_MAX_LEN || blen > SUGGEST_MAX_LEN)
		return SIZE_MAX;
	if ((alen > blen ? alen - blen : blen - alen) > limit)
		return SIZE_MAX;
	/* three rows: i-2, i-1, i */
	size_t rows[3][SUGGEST_MAX_LEN + 1];
	size_t *pp = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= blen; j++)
		prev[j] = j;
	for (size_t i = 1; i <= alen; i++) {
		cur[0] = i;
		size_t row_min = cur[0];
		for (size_t j = 1; j <= blen; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < cur[j])
				cur[j] = pp[j - 2] + 1;
			if (cur[j] < row_min)
				row_min = cur[j];
		}
		if (row_min > limit)
			return SIZE_MAX;
		size_t *t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[blen] <= limit ? prev[blen] : SIZE_MAX;
}

/* How many edits still read as a typo of a word this long: one for short
 * words, about a third of the letters for longer ones. */
static size_t suggest_limit(size_t len)
{
	return len <= 4 ? 1 : len <= 8 ? 2 : 3;
}

void suggest_init(struct suggest *s, const char *word, size_t len)
{
	s->word = word;
	s->len = len;
	s->best = NULL;
	s->best_dist = SIZE_MAX;
}

void suggest_offer(struct suggest *s, const char *candidate)
{
	if (!candidate)
		return;
	size_t clen = strlen(candidate);
	if (clen == s->len && memcmp(candidate, s->word, clen) == 0)
		return; /* the word itself is no suggestion */
	size_t limit = suggest_limit(s->len < clen ? s->len : clen);
	size_t d = suggest_distance(s->word, s->len, candidate, clen, limit);
	/* a different word entirely is no typo, however short both are */
	if (d == SIZE_MAX || d >= clen || d >= s->len)
		return;
	if (d < s->best_dist) {
		s->best = candidate;
		s->best_dist = d;
	}
}

void suggest_offer_all(struct suggest *s, const char *const *candidates)
{
	for (size_t i = 0; candidates[i]; i++)
		suggest_offer(s, candidates[i]);
}

const char *suggest_best(const struct suggest *s)
{
	return s->best;
}

const char *suggest_say(const char *best, char *buf, size_t size)
{
	if (size == 0)
		return "";
	if (best)
		snprintf(buf, size, "; did you mean '%s'?", best);
	else
		buf[0] = '\0';
	return buf;
}

const char *suggest_hint(const struct suggest *s, struct arena *a)
{
	return s->best ? arena_printf(a, "; did you mean '%s'?", s->best) : "";
}

const char *suggest_hint_among(struct arena *a, const char *word, const char *const *names)
{
	struct suggest sg;
	suggest_init(&sg, word, strlen(word));
	suggest_offer_all(&sg, names);
	return suggest_hint(&sg, a);
}

const char *suggest_say_among(const char *word, const char *const *names, char *buf,
			      size_t size)
{
	struct suggest sg;
	suggest_init(&sg, word, strlen(word));
	suggest_offer_all(&sg, names);
	return suggest_say(suggest_best(&sg), buf, size);
}
