/*
 * mac_run.c - run_command() on macOS. The Seatbelt launcher is not built
 * yet, so cagerun refuses with 125 rather than run the command without a
 * sandbox; `cagec` already writes the profile it will use (docs/sbpl.md).
 */
#include "run.h"

#include <stdio.h>

int run_command(const struct run_opts *o)
{
	fprintf(stderr, "cagerun: the macOS launcher (sandbox-exec) is not built yet; %s was "
			"not run\n", o->argv && o->argv[0] ? o->argv[0] : "the command");
	return RUN_SETUP_FAILED;
}
