/*
 * cli.h - the pieces every cage command line shares, so that cagec, its
 * subcommands and cagerun read the same options the same way.
 */
#ifndef CAGE_CLI_H
#define CAGE_CLI_H

#include <stdbool.h>

#include "cage.h"

/* --color=WHEN: "always", "never", or "auto" = only when `fd` is a
 * terminal, NO_COLOR is unset and TERM is set and not "dumb". */
bool cli_want_color(const char *when, int fd);
bool cli_color_valid(const char *when);

/* The options that shape loading a policy, as getopt codes: 'D' (-D),
 * 'I' (-I), 'p' (--profile), 'H' (--home), 'S' (--stdlib), 't' (--target
 * linux|macos). Returns 1 when
 * `c` was one of them and was applied, 0 when it is not one of them, -1
 * after printing why `arg` is bad. */
int cli_policy_opt(int c, const char *arg, cage_options *o);

/* The getopt_long rows for those options, to put in a `struct option`
 * table (the including file needs <getopt.h>). */
#define CLI_POLICY_LONGOPTS                                      \
	{ "define", required_argument, NULL, 'D' },              \
	{ "include", required_argument, NULL, 'I' },             \
	{ "profile", required_argument, NULL, 'p' },             \
	{ "home", required_argument, NULL, 'H' },                \
	{ "stdlib", required_argument, NULL, 'S' },              \
	{ "target", required_argument, NULL, 't' }

#endif
