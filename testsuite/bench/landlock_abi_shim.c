/*
 * landlock_abi_shim.c - an LD_PRELOAD library for counting a launch's
 * instructions under valgrind (testsuite/bench/instructions.sh), never
 * for running anything.
 *
 * valgrind 3.19 does not know the Landlock system calls and answers
 * ENOSYS, so cagerun, rightly, refuses to start before it has compiled the
 * policy and bound its plan. This answers only the ABI probe
 * (landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION))
 * with ABI 6, so the count covers the compile and the kept plan; every
 * other call goes to the C library untouched, and the sandbox itself then
 * fails to build, which is expected and not measured.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <sys/syscall.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif

long syscall(long n, ...)
{
	va_list ap;
	va_start(ap, n);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_landlock_create_ruleset && a[0] == 0 && a[1] == 0 && a[2] == 1)
		return 6;
	long (*next)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (!next)
		return -1;
	return next(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
