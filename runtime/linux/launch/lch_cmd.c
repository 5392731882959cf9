/*
 * lch_cmd.c - `cagerun launcher [--socket PATH] [-v]` (run.h): its
 * arguments, then lch_serve.
 */
#include <string.h>

#include "lch_server.h"
#include "run.h"

int run_launcher(int argc, char **argv, const struct run_launcher_fns *f)
{
	struct lch_opts o = { .fns = f };
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc)
			o.socket = argv[++i];
		else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			o.verbose = true;
		else
			return run_fail("usage: cagerun launcher [--socket PATH] [-v]");
	}
	return lch_serve(&o);
}
