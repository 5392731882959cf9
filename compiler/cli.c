/*
 * cli.c - shared command-line helpers (see cli.h): the option table that
 * parses, prints --help and is checked against the docs.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suggest.h"

bool cli_color_valid(const char *when)
{
	return strcmp(when, "auto") == 0 || strcmp(when, "always") == 0 ||
	       strcmp(when, "never") == 0;
}

bool cli_want_color(const char *when, int fd)
{
	if (strcmp(when, "always") == 0)
		return true;
	if (strcmp(when, "never") == 0)
		return false;
	const char *term = getenv("TERM");
	return isatty(fd) && !getenv("NO_COLOR") && term && strcmp(term, "dumb") != 0;
}

const struct cli_opt cli_policy_opts[] = {
	{ "define", 'D', "NAME=VALUE", 'D', CLI_CAGEC | CLI_CAGERUN,
	  "give param NAME the value VALUE" },
	{ "include", 'I', "DIR", 'I', CLI_CAGEC | CLI_CAGERUN,
	  "search DIR for imports before the standard library" },
	{ "profile", 0, "NAME", 'p', CLI_CAGEC | CLI_CAGERUN,
	  "the profile to use (default: the last one in the file)" },
	{ "home", 0, "DIR", 'H', CLI_CAGEC | CLI_CAGERUN, "what '~' means (default: $HOME)" },
	{ "stdlib", 0, "DIR", 'S', CLI_CAGEC | CLI_CAGERUN,
	  "where 'import \"std/...\"' is found" },
	{ "target", 0, "T", 't', CLI_CAGEC,
	  "the platform to compile for, linux or macos: it picks the standard library's "
	  "platform modules (default: this host)" },
	{ 0 },
};

int cli_policy_opt(int c, const char *arg, cage_options *o)
{
	switch (c) {
	case 'D':
		if (!cage_options_define(o, arg)) {
			fprintf(stderr, "cagec: -D wants NAME=VALUE, not '%s'\n", arg);
			return -1;
		}
		return 1;
	case 'I': cage_options_include(o, arg); return 1;
	case 'p': cage_options_profile(o, arg); return 1;
	case 'H': cage_options_home(o, arg); return 1;
	case 'S': cage_options_stdlib(o, arg); return 1;
	case 't':
		if (!cage_options_target(o, arg)) {
			static const char *const targets[] = { "linux", "macos", NULL };
			char hint[160];
			fprintf(stderr, "cagec: --target wants linux or macos, not '%s'%s\n", arg,
				suggest_say_among(arg, targets, hint, sizeof hint));
			return -1;
		}
		return 1;
	default: return 0;
	}
}

/* Levenshtein distance, capped: names are short. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 64;
	size_t row[64];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *cli_closest(const struct cli_opt *const *tabs, size_t ntabs, unsigned prog,
			const char *word)
{
	const char *best = NULL;
	size_t bestd = strlen(word) / 3 > 2 ? strlen(word) / 3 : 2;
	bestd++;
	for (size_t t = 0; t < ntabs; t++)
		for (const struct cli_opt *o = tabs[t]; o->lname; o++) {
			if (!(o->progs & prog))
				continue;
			size_t d = edit_distance(word, o->lname);
			if (d < bestd) {
				bestd = d;
				best = o->lname;
			}
		}
	return best;
}

static const struct cli_opt *find_long(const struct cli_parser *p, const char *name, size_t n)
{
	for (size_t t = 0; t < p->ntabs; t++)
		for (const struct cli_opt *o = p->tabs[t]; o->lname; o++)
			if ((o->progs & p->prog) && strlen(o->lname) == n &&
			    memcmp(o->lname, name, n) == 0)
				return o;
	return NULL;
}

static const struct cli_opt *find_short(const struct cli_parser *p, char c)
{
	for (size_t t = 0; t < p->ntabs; t++)
		for (const struct cli_opt *o = p->tabs[t]; o->lname; o++)
			if ((o->progs & p->prog) && o->sname == c)
				return o;
	return NULL;
}

static int unknown(struct cli_parser *p, const char *a)
{
	char word[64];
	snprintf(word, sizeof word, "%.*s", (int)strcspn(a, "="), a);
	const char *bare = word;
	while (*bare == '-')
		bare++;
	const char *near = cli_closest(p->tabs, p->ntabs, p->prog, bare);
	if (near)
		fprintf(stderr, "%s: unknown option '%s'; did you mean '--%s'? (see %s --help)\n",
			p->name, word, near, p->name);
	else
		fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", p->name, word, p->name);
	return -1;
}

int cli_next(struct cli_parser *p, const char **val)
{
	*val = NULL;
	if (p->i >= p->argc)
		return 0;
	const char *a = p->argv[p->i];
	if (strcmp(a, "--") == 0) {
		p->i++;
		p->dashdash = true;
		return 0;
	}
	if (a[0] != '-' || a[1] == '\0')
		return 0;
	const struct cli_opt *o;
	const char *inline_val = NULL;
	if (a[1] == '-') {
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t n = eq ? (size_t)(eq - name) : strlen(name);
		if (!(o = find_long(p, name, n)))
			return unknown(p, a);
		if (eq) {
			if (!o->arg) {
				fprintf(stderr, "%s: option '--%s' takes no value\n", p->name, o->lname);
				return -1;
			}
			inline_val = eq + 1;
		}
	} else {
		if (!(o = find_short(p, a[1])))
			return unknown(p, a);
		if (a[2]) {
			if (!o->arg)
				return unknown(p, a);
			inline_val = a + 2;
		}
	}
	p->i++;
	if (!o->arg)
		return o->code;
	if (inline_val) {
		*val = inline_val;
		return o->code;
	}
	if (p->i >= p->argc || strcmp(p->argv[p->i], "--") == 0) {
		fprintf(stderr, "%s: option '%s' needs a value (%s)\n", p->name, a, o->arg);
		return -1;
	}
	*val = p->argv[p->i++];
	return o->code;
}

void cli_print_options(FILE *out, const struct cli_opt *const *tabs, size_t ntabs,
		       unsigned prog)
{
	enum { COL = 23, WIDTH = 79 };
	for (size_t t = 0; t < ntabs; t++)
		for (const struct cli_opt *o = tabs[t]; o->lname; o++) {
			if (!(o->progs & prog))
				continue;
			char head[80];
			if (o->sname)
				snprintf(head, sizeof head, "  -%c, --%s%s%s", o->sname, o->lname,
					 o->arg ? " " : "", o->arg ? o->arg : "");
			else
				snprintf(head, sizeof head, "      --%s%s%s", o->lname,
					 o->arg ? " " : "", o->arg ? o->arg : "");
			fputs(head, out);
			size_t col = strlen(head);
			if (col + 2 > COL) {
				fputc('\n', out);
				col = 0;
			}
			const char *h = o->help;
			while (*h) {
				fprintf(out, "%*s", (int)(COL - col), "");
				size_t room = WIDTH - COL, n = strlen(h);
				if (n > room) {
					n = room;
					while (n > 0 && h[n] != ' ')
						n--;
					if (n == 0)
						n = strcspn(h, " ");
				}
				fprintf(out, "%.*s\n", (int)n, h);
				h += n;
				while (*h == ' ')
					h++;
				col = 0;
			}
		}
}
