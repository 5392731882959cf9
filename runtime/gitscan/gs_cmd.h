/*
 * gs_cmd.h - the paths a command-valued git setting names (core.pager,
 * core.sshCommand, filter drivers, `!` aliases, ...). git runs such a
 * value through `sh -c` whenever it has a blank or a shell character, so
 * the value is split as sh splits words: quotes, backslashes, `|&;()<>`
 * between words, `#` comments. Every word holding a `/` counts as a path
 * (the program, a script it is given, a file it reads): protecting an
 * argument too is harmless, missing a script is not.
 *
 * What sh would expand to something unknown here ends the reading with an
 * error: `$NAME` other than `$HOME`, `${...}`, `$(...)`, backquotes, `~user`,
 * a `[` class. Positional and special parameters (`$1`, `$@`, `$?`, ...)
 * expand to what git passes, so a word made of them alone is taken as no
 * path; one that also holds a `/` is an error.
 */
#ifndef CAGE_GS_CMD_H
#define CAGE_GS_CMD_H

#include <stdbool.h>
#include <stddef.h>

struct gs_words {
	char **v;
	size_t n;
};

/* The path-like words of `cmd`, `~` and `$HOME` expanded with `home`
 * (may be NULL: then they are errors). False with a reason in why. */
bool gs_cmd_paths(const char *cmd, const char *home, struct gs_words *out, char *why,
		  size_t whylen);
void gs_words_free(struct gs_words *w);

#endif
