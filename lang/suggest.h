/*
 * suggest.h - "did you mean" for every name a user can misspell: keywords,
 * accesses, params, lists, profiles, imports, check ids. One measure for
 * all of them, so the compiler, lint and the command line agree on what
 * counts as a likely typo.
 *
 * Usage: suggest_init with the word as written, suggest_offer each name
 * that would have been valid, then suggest_best: the closest one, or NULL
 * when none is close enough to be a misspelling of the word.
 */
#ifndef CAGE_SUGGEST_H
#define CAGE_SUGGEST_H

#include <stddef.h>

#include "arena.h"

struct suggest {
	const char *word;
	size_t len;
	const char *best;
	size_t best_dist;
};

void suggest_init(struct suggest *s, const char *word, size_t len);
void suggest_offer(struct suggest *s, const char *candidate);
/* Offers each name of a NULL-terminated array. */
void suggest_offer_all(struct suggest *s, const char *const *candidates);
const char *suggest_best(const struct suggest *s);
/* "; did you mean 'NAME'?" for the best candidate, "" when there is none:
 * the tail of a message. */
const char *suggest_hint(const struct suggest *s, struct arena *a);
/* "; did you mean 'BEST'?" in buf, or "" when best is NULL; returns buf.
 * For callers without an arena (command-line errors). */
const char *suggest_say(const char *best, char *buf, size_t size);
/* suggest_hint for `word` among a NULL-terminated list, in one call. */
const char *suggest_hint_among(struct arena *a, const char *word, const char *const *names);
/* The same into buf, for callers without an arena (option parsing). */
const char *suggest_say_among(const char *word, const char *const *names, char *buf,
			      size_t size);

/* Edit distance with adjacent transpositions (optimal string alignment):
 * "wirte" is one edit from "write". Returns SIZE_MAX past `limit`. */
size_t suggest_distance(const char *a, size_t alen, const char *b, size_t blen, size_t limit);

#endif
