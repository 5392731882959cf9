/*
 * lnx_seccomp_prebuilt.c - the seccomp filter as generated at build time
 * (lnx_seccomp_gen.c), handed out without running libseccomp at launch.
 */
#include <linux/filter.h>
#include <stdlib.h>
#include <string.h>

#include "lnx_seccomp.h"
#include "lnx_seccomp_bpf.h"

bool lnx_seccomp_prebuilt(const struct lnx_seccomp_opts *o, struct lnx_seccomp_prog *p)
{
	memset(p, 0, sizeof *p);
	if (!o->allow_inet)
		return false; /* not generated: build it (lnx_seccomp_build) */
	const struct sock_filter *src = o->allow_unix_sockets ? lnx_seccomp_bpf_unix1
							      : lnx_seccomp_bpf_unix0;
	size_t n = o->allow_unix_sockets ? sizeof lnx_seccomp_bpf_unix1 / sizeof *src
					 : sizeof lnx_seccomp_bpf_unix0 / sizeof *src;
	p->insns = malloc(n * sizeof *src);
	if (!p->insns)
		return false;
	memcpy(p->insns, src, n * sizeof *src);
	p->len = (unsigned short)n;
	return true;
}
