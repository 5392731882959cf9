/*
 * run_fail.c - the one way cagerun reports why it did not run a command
 * (run.h): a line on stderr and status 125.
 */
#include <stdarg.h>
#include <stdio.h>

#include "run.h"

int run_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("cagerun: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return RUN_SETUP_FAILED;
}
