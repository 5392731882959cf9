/* placeholder until the seccomp branch lands; replaced by the merge */
#ifndef CAGE_LNX_SECCOMP_H
#define CAGE_LNX_SECCOMP_H
#include <stdbool.h>
#include <stddef.h>
struct lnx_seccomp_opts { bool allow_unix_sockets; bool allow_inet; };
bool lnx_seccomp_load(const struct lnx_seccomp_opts *o, char *err, size_t errlen);
#endif
