/*
 * test_cli_opts.c - the option table shared by cagec and cagerun: the
 * getopt rows cagec and lint parse with name the same options, with the
 * same codes, as the table their --help is printed from; and the table
 * parser takes each spelling of an option and refuses the wrong ones.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <getopt.h>
#include <string.h>

#include "cli.h"

Test(cli_opts, getopt_rows_match_the_table)
{
	static const struct option rows[] = { CLI_POLICY_LONGOPTS };
	size_t n = sizeof rows / sizeof rows[0], m = 0;
	for (const struct cli_opt *o = cli_policy_opts; o->lname; o++)
		m++;
	cr_assert_eq(n, m);
	for (size_t i = 0; i < n; i++) {
		const struct cli_opt *o = &cli_policy_opts[i];
		cr_assert_str_eq(rows[i].name, o->lname);
		cr_assert_eq(rows[i].val, o->code);
		cr_assert_eq(rows[i].has_arg, o->arg ? required_argument : no_argument);
		cr_assert(o->help && *o->help, "%s has no description", o->lname);
	}
}

static const struct cli_opt demo[] = {
	{ "policy", 'p', "POLICY", 300, CLI_CAGERUN, "p" },
	{ "quiet", 'q', NULL, 301, CLI_CAGERUN, "q" },
	{ "emit", 0, "B", 302, CLI_CAGEC, "e" },
	{ 0 },
};

static int parse(int argc, char **argv, const char **vals, int *codes, size_t max,
		 struct cli_parser *p)
{
	static const struct cli_opt *const tabs[] = { demo };
	*p = (struct cli_parser){ .argc = argc, .argv = argv, .i = 1, .tabs = tabs, .ntabs = 1,
				  .prog = CLI_CAGERUN, .name = "t" };
	size_t n = 0;
	int c;
	const char *v;
	while ((c = cli_next(p, &v)) > 0 && n < max) {
		codes[n] = c;
		vals[n++] = v;
	}
	return c < 0 ? -1 : (int)n;
}

Test(cli_opts, spellings)
{
	char *argv[] = { "t", "--policy", "a", "--policy=b", "-p", "c", "-pd", "-q", "--", "x", NULL };
	const char *vals[8];
	int codes[8];
	struct cli_parser p;
	cr_assert_eq(parse(10, argv, vals, codes, 8, &p), 5);
	cr_assert_str_eq(vals[0], "a");
	cr_assert_str_eq(vals[1], "b");
	cr_assert_str_eq(vals[2], "c");
	cr_assert_str_eq(vals[3], "d");
	cr_assert_eq(codes[4], 301);
	cr_assert_null(vals[4]);
	cr_assert(p.dashdash);
	cr_assert_eq(p.i, 9);
}

Test(cli_opts, refusals, .init = cr_redirect_stderr)
{
	const char *vals[4];
	int codes[4];
	struct cli_parser p;
	char *a1[] = { "t", "--quiet=1", NULL };
	cr_assert_eq(parse(2, a1, vals, codes, 4, &p), -1);
	char *a2[] = { "t", "--policy", NULL };
	cr_assert_eq(parse(2, a2, vals, codes, 4, &p), -1);
	char *a3[] = { "t", "--emit", "x", NULL }; /* another program's option */
	cr_assert_eq(parse(3, a3, vals, codes, 4, &p), -1);
	char *a4[] = { "t", "file.cage", NULL }; /* an operand ends the options */
	cr_assert_eq(parse(2, a4, vals, codes, 4, &p), 0);
	cr_assert_eq(p.i, 1);
	cr_assert(!p.dashdash);
}

Test(cli_opts, closest)
{
	static const struct cli_opt *const tabs[] = { demo };
	cr_assert_str_eq(cli_closest(tabs, 1, CLI_CAGERUN, "polcy"), "policy");
	cr_assert_str_eq(cli_closest(tabs, 1, CLI_CAGERUN, "quite"), "quiet");
	cr_assert_null(cli_closest(tabs, 1, CLI_CAGERUN, "emit")); /* not cagerun's */
	cr_assert_null(cli_closest(tabs, 1, CLI_CAGERUN, "frobnicate"));
}
