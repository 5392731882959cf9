#include "prx.h"
#include <stdio.h>
bool prx_server_adopt_listener(struct prx_server *s, int fd, bool need_auth, char *err, size_t errlen){(void)s;(void)fd;(void)need_auth;snprintf(err,errlen,"shim");return false;}
bool prx_server_adopt_forward(struct prx_server *s, int fd, const struct sockaddr *dst, socklen_t dstlen, char *err, size_t errlen){(void)s;(void)fd;(void)dst;(void)dstlen;snprintf(err,errlen,"shim");return false;}
void prx_server_denials(const struct prx_server *s, void (*cb)(void *ctx, const char *host, unsigned port, unsigned long count, const char *rule), void *ctx){(void)s;(void)cb;(void)ctx;}
