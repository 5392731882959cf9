/*
 * prx_listen.c - where the proxy listens, and who can reach it.
 *
 * TCP listeners are loopback only and every request on them must carry the
 * per-run secret; the unix socket is created 0600 inside a directory that
 * must belong to us and be closed to everyone else, so the file system is
 * its access control. Both are refused at start rather than weakened.
 *
 * A caller may also hand in sockets it made listen itself (adopted): a
 * sandbox makes a loopback listener inside its own network namespace,
 * where only the sandbox can reach it, and passes the descriptor out. A
 * forward listener carries no HTTP at all: each connection is a raw tunnel
 * to one destination the caller chose.
 */
#include "prx_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "prx_ev.h"
#include <sys/stat.h>
#include <unistd.h>

void prx_fmt_addr(const struct sockaddr *sa, char *out, size_t cap)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, ip, sizeof ip);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, ip, sizeof ip);
	snprintf(out, cap, "%s", ip);
}

unsigned prx_addr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

/* Takes fd, listening already: the server owns it from here on, and closes
 * it on failure too. */
static struct listener *add_listener(struct prx_server *s, int fd, char *err, size_t errlen)
{
	if (s->nl >= MAX_LISTEN) {
		snprintf(err, errlen, "proxy: at most %d listeners", MAX_LISTEN);
		close(fd);
		return NULL;
	}
	if (prx_ev_add(s->ev, fd, PRX_EV_IN, TAG_LISTEN + (uint64_t)s->nl) != 0) {
		snprintf(err, errlen, "%s(listener): %s", prx_ev_backend(), strerror(errno));
		close(fd);
		return NULL;
	}
	struct listener *l = &s->l[s->nl++];
	memset(l, 0, sizeof *l);
	l->fd = fd;
	return l;
}

static bool listen_and_add(struct prx_server *s, int fd, bool tcp, char *err, size_t errlen)
{
	if (listen(fd, 4096) != 0) {
		snprintf(err, errlen, "listen: %s", strerror(errno));
		close(fd);
		return false;
	}
	struct listener *l = add_listener(s, fd, err, errlen);
	if (!l)
		return false;
	l->need_auth = l->inet = tcp;
	return true;
}

bool prx_server_listen_tcp(struct prx_server *s, const char *hostport, char *bound,
			   size_t boundlen, char *err, size_t errlen)
{
	if (!s->secret[0]) {
		snprintf(err, errlen, "proxy: a TCP listener needs a secret");
		return false;
	}
	const char *colon = strrchr(hostport, ':');
	char ip[64];
	if (!colon || (size_t)(colon - hostport) >= sizeof ip) {
		snprintf(err, errlen, "--listen %s: expected ADDR:PORT", hostport);
		return false;
	}
	memcpy(ip, hostport, (size_t)(colon - hostport));
	ip[colon - hostport] = 0;
	char *end;
	errno = 0;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || port > 65535) {
		snprintf(err, errlen, "--listen %s: bad port", hostport);
		return false;
	}
	struct sockaddr_storage ss;
	socklen_t sl;
	memset(&ss, 0, sizeof ss);
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	char *ip6 = ip;
	size_t il = strlen(ip);
	if (il >= 2 && ip[0] == '[' && ip[il - 1] == ']') {
		ip[il - 1] = 0;
		ip6 = ip + 1;
	}
	if (inet_pton(AF_INET, ip, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		sl = sizeof *a4;
	} else if (inet_pton(AF_INET6, ip6, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		sl = sizeof *a6;
	} else {
		snprintf(err, errlen, "--listen %s: not an IP address", hostport);
		return false;
	}
	if (host_addr_class((struct sockaddr *)&ss) != HOST_CLASS_LOOPBACK) {
		snprintf(err, errlen, "--listen %s: only loopback addresses are allowed", hostport);
		return false;
	}
	int fd = prx_socket_nb(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return false;
	}
	int one = 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, sl) != 0) {
		snprintf(err, errlen, "--listen %s: %s", hostport, strerror(errno));
		close(fd);
		return false;
	}
	sl = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		snprintf(err, errlen, "getsockname: %s", strerror(errno));
		close(fd);
		return false;
	}
	char b[INET6_ADDRSTRLEN];
	prx_fmt_addr((struct sockaddr *)&ss, b, sizeof b);
	unsigned p = prx_addr_port((struct sockaddr *)&ss);
	if (bound)
		snprintf(bound, boundlen, ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", b, p);
	return listen_and_add(s, fd, true, err, errlen);
}

bool prx_server_listen_unix(struct prx_server *s, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sun.sun_path || s->unix_path[0]) {
		snprintf(err, errlen, "--socket %s: path too long (or a second socket)", path);
		return false;
	}
	/* The directory is the access control: ours, and closed to others. */
	char dir[sizeof sun.sun_path];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	struct stat st;
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "--socket %s: %s is not a directory", path, dir);
		return false;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		snprintf(err, errlen,
			 "--socket %s: directory %s must belong to us with mode 0700 (it has "
			 "uid %u mode %04o)",
			 path, dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return false;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			snprintf(err, errlen, "--socket %s: exists and is not our socket", path);
			return false;
		}
		if (unlink(path) != 0) { /* a stale socket from an earlier run */
			snprintf(err, errlen, "--socket %s: %s", path, strerror(errno));
			return false;
		}
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	int fd = prx_socket_nb(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return false;
	}
	mode_t old = umask(0177);
	int r = bind(fd, (struct sockaddr *)&sun, sizeof sun);
	int e = errno;
	umask(old);
	if (r != 0) {
		snprintf(err, errlen, "--socket %s: %s", path, strerror(e));
		close(fd);
		return false;
	}
	snprintf(s->unix_path, sizeof s->unix_path, "%s", path);
	if (chmod(path, 0600) != 0) {
		snprintf(err, errlen, "--socket %s: chmod: %s", path, strerror(errno));
		close(fd);
		return false;
	}
	return listen_and_add(s, fd, false, err, errlen);
}

/* Takes fd, a listening stream socket (TCP, or unix when unix_ok), makes
 * it non-blocking and close-on-exec and adds it as a listener. A TCP socket
 * must be bound to a loopback address: in the caller's namespace nothing
 * else is private, and in a sandbox's namespace loopback is all there is to
 * need. refuse: the caller's own reason to refuse, checked first. Closes fd
 * on failure. */
static struct listener *adopt(struct prx_server *s, int fd, bool unix_ok, const char *refuse,
			      char *err, size_t errlen)
{
	int type = 0, acc = 0;
	socklen_t tl = sizeof type, al = sizeof acc;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	memset(&ss, 0, sizeof ss);
	if (refuse || fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) != 0) {
		if (refuse)
			snprintf(err, errlen, "proxy: %s", refuse);
		else
			snprintf(err, errlen, "proxy: descriptor %d is not a socket: %s", fd,
				 fd < 0 ? "negative" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	bool inet = ss.ss_family == AF_INET || ss.ss_family == AF_INET6;
	char what[80];
	if (inet) {
		char ip[INET6_ADDRSTRLEN];
		prx_fmt_addr((struct sockaddr *)&ss, ip, sizeof ip);
		snprintf(what, sizeof what, ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip,
			 prx_addr_port((struct sockaddr *)&ss));
	} else {
		snprintf(what, sizeof what, "unix socket");
	}
	const char *bad = NULL;
	if (type != SOCK_STREAM || !acc)
		bad = "is not a listening stream socket";
	else if (!inet && !(unix_ok && ss.ss_family == AF_UNIX))
		bad = unix_ok ? "is neither TCP nor a unix socket" : "is not a TCP socket";
	else if (inet && host_addr_class((struct sockaddr *)&ss) != HOST_CLASS_LOOPBACK)
		bad = "is not bound to a loopback address";
	if (bad) {
		snprintf(err, errlen, "proxy: adopted listener %s %s", what, bad);
		close(fd);
		return NULL;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
		snprintf(err, errlen, "proxy: adopted listener %s: fcntl: %s", what,
			 strerror(errno));
		close(fd);
		return NULL;
	}
	struct listener *l = add_listener(s, fd, err, errlen);
	if (l)
		l->inet = inet;
	return l;
}

bool prx_server_adopt_listener(struct prx_server *s, int fd, bool need_auth, char *err,
			       size_t errlen)
{
	const char *refuse = need_auth && !s->secret[0]
				     ? "a listener that needs the secret needs a secret"
				     : NULL;
	struct listener *l = adopt(s, fd, true, refuse, err, errlen);
	if (!l)
		return false;
	l->need_auth = need_auth;
	return true;
}

bool prx_server_adopt_forward(struct prx_server *s, int fd, const struct sockaddr *dst,
			      socklen_t dstlen, char *err, size_t errlen)
{
	bool dst_ok = dst &&
		      ((dst->sa_family == AF_INET && dstlen >= sizeof(struct sockaddr_in)) ||
		       (dst->sa_family == AF_INET6 && dstlen >= sizeof(struct sockaddr_in6))) &&
		      dstlen <= sizeof(struct sockaddr_storage) && prx_addr_port(dst) != 0;
	const char *refuse = dst_ok ? NULL : "a forward needs an IPv4 or IPv6 destination with a port";
	struct listener *l = adopt(s, fd, false, refuse, err, errlen);
	if (!l)
		return false;
	l->forward = true;
	memcpy(&l->dst, dst, dstlen);
	l->dstlen = dstlen;
	return true;
}
