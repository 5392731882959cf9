/*
 * cli.c - shared command-line helpers (see cli.h).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
			fprintf(stderr, "cagec: --target wants linux or macos, not '%s'\n", arg);
			return -1;
		}
		return 1;
	default: return 0;
	}
}
