/*
 * gs_dump.c - prints what runtime/gitscan/gs_config.c reads from a git
 * configuration file, includes followed, in the form of
 * `git config --file FILE --includes --list --show-origin -z`, so that
 * testsuite/gitscan/parser.sh can compare the two byte for byte.
 *
 *   gs_dump FILE     exit 0 and the entries, or 1 and the error on stderr
 */
#include <stdio.h>
#include <stdlib.h>

#include "gs_config.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: gs_dump FILE\n", stderr);
		return 2;
	}
	struct gs_cfg c = { .home = getenv("HOME") };
	struct gs_err e;
	if (!gs_cfg_load(&c, argv[1], &e)) {
		fprintf(stderr, "gs_dump: %s\n", e.msg);
		gs_cfg_free(&c);
		return 1;
	}
	for (size_t i = 0; i < c.n; i++) {
		printf("file:%s%c%s", c.v[i].origin, 0, c.v[i].key);
		if (c.v[i].value)
			printf("\n%s", c.v[i].value);
		putchar(0);
	}
	gs_cfg_free(&c);
	return fflush(stdout) == 0 ? 0 : 1;
}
