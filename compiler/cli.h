/*
 * cli.h - the pieces every cage command line shares, so that cagec, its
 * subcommands and cagerun read the same options the same way: one table of
 * options (name, argument, description) drives parsing, `--help` and the
 * option tables of the docs (a test compares them).
 */
#ifndef CAGE_CLI_H
#define CAGE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cage.h"

/* --color=WHEN: "always", "never", or "auto" = only when `fd` is a
 * terminal, NO_COLOR is unset and TERM is set and not "dumb". */
bool cli_want_color(const char *when, int fd);
bool cli_color_valid(const char *when);

/* Which programs an option belongs to. */
enum { CLI_CAGEC = 1, CLI_CAGERUN = 2 };

/* One option: --lname [ARG] and, when sname is set, -s [ARG]. `code` is
 * what cli_next returns for it (getopt style: a letter or a value past
 * 255). `help` is one sentence; cli_print_options wraps it. */
struct cli_opt {
	const char *lname;
	char sname;
	const char *arg; /* the value's name, e.g. "NAME=VALUE"; NULL: a flag */
	int code;
	unsigned progs;  /* CLI_CAGEC | CLI_CAGERUN */
	const char *help;
};

/* The options that shape loading a policy, as getopt codes: 'D' (-D),
 * 'I' (-I), 'p' (--profile), 'H' (--home), 'S' (--stdlib), 't' (--target
 * linux|macos). Terminated by a row with lname NULL. */
extern const struct cli_opt cli_policy_opts[];

/* Applies one of cli_policy_opts. Returns 1 when `c` was one of them and
 * was applied, 0 when it is not one of them, -1 after printing why `arg`
 * is bad. */
int cli_policy_opt(int c, const char *arg, cage_options *o);

/* The getopt_long rows for those options, to put in a `struct option`
 * table (the including file needs <getopt.h>); the same names and codes
 * as cli_policy_opts (the cli test checks cagec's --help against it). */
#define CLI_POLICY_LONGOPTS                                      \
	{ "define", required_argument, NULL, 'D' },              \
	{ "include", required_argument, NULL, 'I' },             \
	{ "profile", required_argument, NULL, 'p' },             \
	{ "home", required_argument, NULL, 'H' },                \
	{ "stdlib", required_argument, NULL, 'S' },              \
	{ "target", required_argument, NULL, 't' }

/* Walks argv against a list of option tables (each ended by lname NULL)
 * for program `prog` (CLI_CAGEC or CLI_CAGERUN; rows of other programs are
 * unknown). Options and their values may be given as `--name VALUE`,
 * `--name=VALUE`, `-s VALUE` or `-sVALUE`. */
struct cli_parser {
	int argc;
	char **argv;
	int i; /* next argument; at the end: the first operand (past "--") */
	const struct cli_opt *const *tabs;
	size_t ntabs;
	unsigned prog;
	const char *name; /* program name for messages */
	bool dashdash;    /* the walk stopped at "--" */
};

/* Returns the next option's code with *val set (NULL for a flag); 0 when
 * the options end (at "--", which is consumed and sets dashdash, or at the
 * first operand); -1 after printing why (unknown option, with the closest
 * known name; a missing value; a value given to a flag). */
int cli_next(struct cli_parser *p, const char **val);

/* The known long name closest to `word` (edit distance at most 2, or a
 * third of its length), or NULL. */
const char *cli_closest(const struct cli_opt *const *tabs, size_t ntabs, unsigned prog,
			const char *word);

/* "  -D, --define NAME=VALUE  description..." for every row of the tables
 * that belongs to `prog`, descriptions wrapped at 79 columns. */
void cli_print_options(FILE *out, const struct cli_opt *const *tabs, size_t ntabs,
		       unsigned prog);

#endif
