/*
 * mac_run.c - run_command() on macOS: the Seatbelt launcher
 * (runtime/seatbelt/sbx_run.c, portable and tested on Linux as
 * `cagerun --backend seatbelt`).
 */
#include "run.h"
#include "sbx_run.h"

int run_command(const struct run_opts *o)
{
	return sbx_run_command(o);
}

struct run_plan_ahead *run_plan_ahead_make(cage_policy *pol, const char *cwd)
{
	(void)pol;
	(void)cwd;
	return NULL;
}

void run_plan_ahead_free(struct run_plan_ahead *p)
{
	(void)p;
}

bool run_plan_ahead_stale(const struct run_plan_ahead *p)
{
	(void)p;
	return false;
}

int run_launcher(int argc, char **argv, const struct run_launcher_fns *f)
{
	(void)argc;
	(void)argv;
	(void)f;
	return run_fail("cagerun launcher: there is no launcher on macOS yet; run cagerun itself");
}

/* No compile is kept on disk on macOS yet (runtime/layers/kept.h): a
 * build without an ID keeps nothing. */
bool run_kept_read(const char *name, unsigned char **out, size_t *n, char *why, size_t whylen)
{
	(void)name;
	(void)whylen;
	*out = NULL;
	*n = 0;
	why[0] = '\0';
	return false;
}

bool run_kept_write(const char *name, const unsigned char *b, size_t n)
{
	(void)name;
	(void)b;
	(void)n;
	return false;
}

bool run_program_id(unsigned char *out, size_t cap, size_t *n)
{
	(void)out;
	(void)cap;
	*n = 0;
	return false;
}
