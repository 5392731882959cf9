/*
 * lch_rawsys.h - one system call, made without the C library, for the two
 * places that must not touch it: cage-launch, which is built without one
 * (client/lch_sys.h), and the helper that holds a spare's namespaces made
 * ahead (lch_ahead.c), which shares the spare's memory and so its C
 * library's state (errno, locks). The raw kernel result: -errno on
 * failure. x86_64 only; elsewhere LCH_RAWSYS is not defined.
 */
#ifndef CAGE_LCH_RAWSYS_H
#define CAGE_LCH_RAWSYS_H

#if defined(__x86_64__)
#define LCH_RAWSYS 1
/* Never instrumented: the helper runs it on a stack of its own while the
 * spare runs on another. */
static inline __attribute__((always_inline, no_sanitize("address", "undefined"))) long
lsys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define lsys(n, a, b, c) lsys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#endif

#endif
