/*
 * sbx_nest.c - detecting a Seatbelt sandbox around cagerun (see
 * sbx_nest.h). The probe is macOS only; the message is portable so the
 * tests can check it anywhere.
 */
#include "sbx_nest.h"

#include <stdio.h>

#ifdef __APPLE__
#include <dlfcn.h>
#include <unistd.h>

int sbx_in_sandbox(void)
{
	/* sandbox_check(pid, NULL, 0) answers "is pid sandboxed at all"; it
	 * is not in a public header, so it is looked up rather than linked. */
	int (*check)(pid_t, const char *, int) =
		(int (*)(pid_t, const char *, int))dlsym(RTLD_DEFAULT, "sandbox_check");
	if (!check)
		return -1;
	return check(getpid(), NULL, 0) > 0 ? 1 : 0;
}
#else
int sbx_in_sandbox(void)
{
	return -1;
}
#endif

bool sbx_nested_refusal(int state, char *err, size_t errlen)
{
	if (state != 1)
		return false;
	snprintf(err, errlen,
		 "cagerun is already running inside a Seatbelt sandbox (an agent's or a tool's), "
		 "and macOS does not apply a second one (sandbox-exec would fail with "
		 "\"sandbox_apply: Operation not permitted\"); run cagerun from an unsandboxed "
		 "shell, or turn off the outer tool's own sandbox; nothing was run");
	return true;
}
