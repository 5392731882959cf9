/*
 * gs_cmd.c - sh word splitting for command-valued git settings (gs_cmd.h).
 */
#include "gs_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct word {
	char *s;
	size_t n, cap;
	bool slash, unknown, any; /* holds '/', an unknown parameter, anything */
};

static bool w_add(struct word *w, const char *s, size_t n)
{
	if (w->n + n + 1 > w->cap) {
		size_t cap = (w->n + n + 1) * 2;
		char *p = realloc(w->s, cap);
		if (!p)
			return false;
		w->s = p;
		w->cap = cap;
	}
	memcpy(w->s + w->n, s, n);
	w->n += n;
	w->s[w->n] = '\0';
	w->any = true;
	if (memchr(s, '/', n))
		w->slash = true;
	return true;
}

static bool push(struct gs_words *out, struct word *w, char *why, size_t wl)
{
	bool ok = true;
	if (w->any && w->unknown && w->slash) {
		snprintf(why, wl, "a word mixes a path with a parameter git fills in");
		ok = false;
	} else if (w->any && w->slash && !w->unknown) {
		char **v = realloc(out->v, (out->n + 1) * sizeof *v);
		if (!v) {
			snprintf(why, wl, "out of memory");
			ok = false;
		} else {
			out->v = v;
			out->v[out->n++] = w->s;
			w->s = NULL;
		}
	}
	free(w->s);
	*w = (struct word){ 0 };
	return ok;
}

/* `$...` at s (s[0] == '$'): the bytes it takes, or 0 for one this reader
 * cannot expand. *home: it was $HOME; *special: a positional or special
 * parameter. */
static size_t dollar(const char *s, bool *home, bool *special)
{
	*home = *special = false;
	if (!strncmp(s, "$HOME", 5) && !(s[5] == '_' || (s[5] >= 'a' && s[5] <= 'z') ||
					 (s[5] >= 'A' && s[5] <= 'Z') || (s[5] >= '0' && s[5] <= '9'))) {
		*home = true;
		return 5;
	}
	if (!strncmp(s, "${HOME}", 7)) {
		*home = true;
		return 7;
	}
	if (s[1] && strchr("0123456789@*#?$!-", s[1])) {
		*special = true;
		return 2;
	}
	return 0;
}

/* One expansion at *s into w, quoted or not: $HOME as the known home, a
 * special parameter as a part cagerun cannot know (marked so); any other
 * is refused, with why said. */
static bool take_dollar(struct word *w, const char **s, const char *home, char *why, size_t wl)
{
	bool h, sp;
	size_t k = dollar(*s, &h, &sp);
	if (!k || (h && !home)) {
		snprintf(why, wl, "'%.12s' expands to what cagerun cannot know", *s);
		return false;
	}
	w->unknown |= sp;
	*s += k;
	return !h || w_add(w, home, strlen(home));
}

bool gs_cmd_paths(const char *cmd, const char *home, struct gs_words *out, char *why,
		  size_t wl)
{
	struct word w = { 0 };
	const char *s = cmd;
	bool ok = true;
	if (wl)
		why[0] = '\0';
	while (ok && *s) {
		char c = *s;
		if (c == ' ' || c == '\t' || c == '\n' || strchr("|&;()<>", c)) {
			ok = push(out, &w, why, wl);
			s++;
		} else if (c == '#' && !w.any) {
			while (*s && *s != '\n')
				s++;
		} else if (c == '\'') {
			const char *e = strchr(s + 1, '\'');
			if (!e) {
				snprintf(why, wl, "an unterminated single quote");
				ok = false;
				break;
			}
			ok = w_add(&w, s + 1, (size_t)(e - s - 1));
			w.any = true;
			s = e + 1;
		} else if (c == '"') {
			s++;
			w.any = true;
			while (ok && *s && *s != '"') {
				if (*s == '\\' && s[1] && strchr("$`\"\\\n", s[1])) {
					if (s[1] != '\n')
						ok = w_add(&w, s + 1, 1);
					s += 2;
				} else if (*s == '$') {
					ok = take_dollar(&w, &s, home, why, wl);
				} else if (*s == '`') {
					snprintf(why, wl, "a command substitution (`...`)");
					ok = false;
				} else {
					ok = w_add(&w, s++, 1);
				}
			}
			if (ok && *s != '"') {
				snprintf(why, wl, "an unterminated double quote");
				ok = false;
			}
			s++;
		} else if (c == '\\') {
			if (s[1] == '\n') {
				s += 2;
			} else if (s[1]) {
				ok = w_add(&w, s + 1, 1);
				s += 2;
			} else {
				s++;
			}
		} else if (c == '$') {
			ok = take_dollar(&w, &s, home, why, wl);
			w.any = true;
		} else if (c == '`') {
			snprintf(why, wl, "a command substitution (`...`)");
			ok = false;
		} else if (c == '~' && !w.any) {
			if (s[1] && s[1] != '/' && !strchr(" \t\n|&;()<>", s[1])) {
				snprintf(why, wl, "'~user' in a command");
				ok = false;
			} else if (!home) {
				snprintf(why, wl, "'~' without a home directory");
				ok = false;
			} else {
				ok = w_add(&w, home, strlen(home));
				s++;
			}
		} else if (c == '[' && !(w.n == 0 && (s[1] == ' ' || s[1] == '\0'))) {
			snprintf(why, wl, "a '[' pattern");
			ok = false;
		} else {
			ok = w_add(&w, s++, 1);
		}
		if (!ok && !why[0])
			snprintf(why, wl, "out of memory");
	}
	if (ok)
		ok = push(out, &w, why, wl);
	else
		free(w.s);
	if (!ok)
		gs_words_free(out);
	return ok;
}

void gs_words_free(struct gs_words *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	w->v = NULL;
	w->n = 0;
}
