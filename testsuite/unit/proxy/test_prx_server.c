/*
 * test_prx_server.c - the proxy server's embedding API, in process: adopted
 * listeners (also one made inside another network namespace and passed
 * out with SCM_RIGHTS, as the Linux sandbox does), raw forwards, the stop
 * hook and the denial summary.
 *
 * The server runs on a thread of its own against an echo server this file
 * starts on 127.0.0.1; clients are plain sockets. Every wait is bounded by
 * poll(2) time-outs, every loop by a count; nothing depends on timing.
 * Portable POSIX but for the network-namespace case, which is Linux's.
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#endif

#include "prx.h"

#define WAIT_MS 10000

/* ---- descriptors ---- */

/* Descriptors are made close-on-exec in two steps (no SOCK_CLOEXEC or
 * pipe2 on macOS): the tests fork only before any thread starts. */
static int cloexec(int fd)
{
	if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
		cr_assert_fail("FD_CLOEXEC: %s", strerror(errno));
	return fd;
}

static int sock_new(int domain, int type)
{
	return cloexec(socket(domain, type, 0));
}

static void pipe_new(int fds[2])
{
	cr_assert_eq(pipe(fds), 0, "pipe: %s", strerror(errno));
	cloexec(fds[0]);
	cloexec(fds[1]);
}

/* An anonymous file (what memfd_create gives on Linux alone). */
static int anon_file(void)
{
	char path[] = "/tmp/cage-prx-test-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0, "mkstemp: %s", strerror(errno));
	cr_assert_eq(unlink(path), 0);
	return cloexec(fd);
}

/* ---- sockets ---- */

static int listen_lo(const char *ip, unsigned *port)
{
	int fd = sock_new(AF_INET, SOCK_STREAM);
	struct sockaddr_in a = { .sin_family = AF_INET };
	inet_pton(AF_INET, ip, &a.sin_addr);
	socklen_t sl = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &sl) != 0)
		cr_assert_fail("listen on %s: %s", ip, strerror(errno));
	*port = ntohs(a.sin_port);
	return fd;
}

static int connect_lo(unsigned port)
{
	int fd = sock_new(AF_INET, SOCK_STREAM);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static bool send_all(int fd, const void *p, size_t n)
{
	const char *b = p;
	while (n > 0) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		b += w;
		n -= (size_t)w;
	}
	return true;
}

/* Reads until want bytes, EOF, an error or WAIT_MS of silence. Returns the
 * count read; *eof says whether the peer closed. */
static size_t recv_n(int fd, char *buf, size_t want, bool *eof)
{
	size_t got = 0;
	*eof = false;
	while (got < want) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (poll(&pf, 1, WAIT_MS) != 1)
			break;
		ssize_t n = recv(fd, buf + got, want - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*eof = true;
			break;
		}
		got += (size_t)n;
	}
	return got;
}

/* Reads a response head; returns its status, or -1. */
static int read_status(int fd)
{
	char buf[2048];
	size_t got = 0;
	for (int i = 0; i < 256 && got < sizeof buf - 1; i++) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (poll(&pf, 1, WAIT_MS) != 1)
			return -1;
		ssize_t n = recv(fd, buf + got, 1, 0); /* byte by byte: tunnel bytes follow */
		if (n <= 0)
			return -1;
		got++;
		buf[got] = 0;
		if (got >= 4 && memcmp(buf + got - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	int st;
	return sscanf(buf, "HTTP/1.1 %d", &st) == 1 ? st : -1;
}

/* Sends CONNECT host:port (with credentials if secret) and returns the
 * status; the connection stays open in *fdp. */
static int do_connect(unsigned proxy_port, const char *hostport, int *fdp)
{
	int fd = connect_lo(proxy_port);
	cr_assert(fd >= 0, "connect to the proxy: %s", strerror(errno));
	char req[512];
	snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostport, hostport);
	cr_assert(send_all(fd, req, strlen(req)));
	int st = read_status(fd);
	if (fdp)
		*fdp = fd;
	else
		close(fd);
	return st;
}

static void expect_echo(int fd, const char *msg)
{
	char buf[256];
	bool eof;
	size_t n = strlen(msg);
	cr_assert(n < sizeof buf);
	cr_assert(send_all(fd, msg, n));
	cr_expect_eq(recv_n(fd, buf, n, &eof), n, "echo of %s", msg);
	cr_expect_eq(memcmp(buf, msg, n), 0);
}

/* ---- echo server ---- */

/* Tests keep theirs static: the echo thread may outlive the test function. */
struct echo {
	int lfd;
	unsigned port;
	atomic_int eofs; /* connections that ended with the client's EOF */
	pthread_t th;
};

/* Serves connections one after another, each until EOF, at most 64. */
static void *echo_main(void *arg)
{
	struct echo *e = arg;
	for (int i = 0; i < 64; i++) {
		struct pollfd pf = { .fd = e->lfd, .events = POLLIN };
		if (poll(&pf, 1, WAIT_MS * 3) != 1)
			break;
		int fd = cloexec(accept(e->lfd, NULL, NULL));
		if (fd < 0)
			break;
		char buf[65536];
		for (int k = 0; k < 100000; k++) {
			struct pollfd cf = { .fd = fd, .events = POLLIN };
			if (poll(&cf, 1, WAIT_MS) != 1)
				break;
			ssize_t n = recv(fd, buf, sizeof buf, 0);
			if (n == 0) {
				atomic_fetch_add(&e->eofs, 1);
				break;
			}
			if (n < 0 || !send_all(fd, buf, (size_t)n))
				break;
		}
		close(fd);
	}
	return NULL;
}

static void echo_start(struct echo *e)
{
	memset(e, 0, sizeof *e);
	e->lfd = listen_lo("127.0.0.1", &e->port);
	cr_assert_eq(pthread_create(&e->th, NULL, echo_main, e), 0);
	pthread_detach(e->th);
}

/* ---- the proxy under test ---- */

/* localhost is allowed (t:1:1), internal.test too (t:2:1, but it resolves
 * to a private address), names ending in .deny are denied by t:3:1, every
 * other name by default. */
static void pol_host(void *ctx, const struct host_norm *h, unsigned port, struct prx_verdict *v)
{
	(void)ctx;
	(void)port;
	size_t n = strlen(h->name);
	v->allowed = false;
	v->rule[0] = 0;
	if (strcmp(h->name, "localhost") == 0 || strcmp(h->name, "internal.test") == 0) {
		v->allowed = true;
		snprintf(v->rule, sizeof v->rule, "t:%d:1", h->name[0] == 'l' ? 1 : 2);
	} else if (n > 5 && strcmp(h->name + n - 5, ".deny") == 0) {
		snprintf(v->rule, sizeof v->rule, "t:3:1");
	}
}

static void pol_addr(void *ctx, const struct sockaddr *sa, unsigned port, struct prx_verdict *v)
{
	(void)ctx;
	(void)sa;
	(void)port;
	v->allowed = false;
}

struct px {
	struct prx_server *s;
	struct prx_resolver *res;
	int stop[2]; /* the test writes 'c' (go on) or 'q' (quit) */
	int ack[2];  /* the hook answers every call with one byte */
	int done[2]; /* the server's thread writes one byte when it returns */
	int log_fd;
	int notice_fd; /* the denial lines meant for the user */
	bool use_hook;
	pthread_t th;
	bool ok;
	char err[256];
};

static bool stop_hook(void *ctx)
{
	struct px *p = ctx;
	char b = 0;
	ssize_t n = read(p->stop[0], &b, 1);
	ssize_t w = write(p->ack[1], &b, 1);
	(void)w;
	return n != 1 || b == 'q';
}

static void px_new(struct px *p, bool use_hook)
{
	memset(p, 0, sizeof *p);
	signal(SIGPIPE, SIG_IGN);
	pipe_new(p->stop);
	pipe_new(p->ack);
	pipe_new(p->done);
	p->log_fd = anon_file();
	p->notice_fd = anon_file();
	p->res = prx_resolver_new();
	char err[256];
	cr_assert(prx_resolver_add(p->res, "internal.test:80:10.1.2.3", err, sizeof err), "%s", err);
	struct prx_config cfg;
	memset(&cfg, 0, sizeof cfg);
	prx_limits_default(&cfg.limits);
	cfg.limits.max_conns = 64;
	cfg.policy = (struct prx_policy){ NULL, pol_host, pol_addr };
	cfg.overrides = p->res;
	cfg.log_fd = p->log_fd;
	cfg.notice_fd = p->notice_fd;
	cfg.secret = "s3cret";
	p->use_hook = use_hook;
	if (use_hook) {
		cfg.on_stop_fd = stop_hook;
		cfg.stop_ctx = p;
	}
	p->s = prx_server_new(&cfg, err, sizeof err);
	cr_assert(p->s, "prx_server_new: %s", err);
}

static void *px_main(void *arg)
{
	struct px *p = arg;
	p->ok = prx_server_run(p->s, p->stop[0], p->err, sizeof p->err);
	ssize_t w = write(p->done[1], "d", 1);
	(void)w;
	return NULL;
}

static void px_run(struct px *p)
{
	cr_assert_eq(pthread_create(&p->th, NULL, px_main, p), 0);
}

/* Adopts a fresh loopback listener; returns its port. */
static unsigned px_adopt(struct px *p, bool need_auth)
{
	unsigned port;
	int fd = listen_lo("127.0.0.1", &port);
	char err[256];
	cr_assert(prx_server_adopt_listener(p->s, fd, need_auth, err, sizeof err), "%s", err);
	return port;
}

static unsigned px_forward(struct px *p, unsigned dst_port)
{
	unsigned port;
	int fd = listen_lo("127.0.0.1", &port);
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons((uint16_t)dst_port) };
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	char err[256];
	cr_assert(prx_server_adopt_forward(p->s, fd, (struct sockaddr *)&dst, sizeof dst, err,
					   sizeof err),
		  "%s", err);
	return port;
}

/* Asks the server to stop and waits for it (bounded). */
static void px_stop(struct px *p)
{
	char q = 'q';
	cr_assert_eq(write(p->stop[1], &q, 1), 1);
	/* A bounded wait for the thread's end, then the join that cannot block. */
	struct pollfd pf = { .fd = p->done[0], .events = POLLIN };
	cr_assert_eq(poll(&pf, 1, WAIT_MS), 1, "the server did not stop");
	cr_assert_eq(pthread_join(p->th, NULL), 0);
	cr_assert(p->ok, "prx_server_run: %s", p->err);
}

/* Stops, frees the server (which logs what is still open) and returns the
 * access log. */
static char *px_log(struct px *p)
{
	px_stop(p);
	prx_server_free(p->s);
	p->s = NULL;
	off_t len = lseek(p->log_fd, 0, SEEK_END);
	char *log = calloc(1, (size_t)len + 1);
	cr_assert(log);
	cr_assert_eq(pread(p->log_fd, log, (size_t)len, 0), len);
	return log;
}

static void px_free(struct px *p)
{
	prx_server_free(p->s);
	prx_resolver_free(p->res);
	close(p->stop[0]);
	close(p->stop[1]);
	close(p->ack[0]);
	close(p->ack[1]);
	close(p->done[0]);
	close(p->done[1]);
	close(p->log_fd);
	close(p->notice_fd);
}

/* Stops and frees the proxy; its access log must hold both strings. */
static void expect_log(struct px *p, const char *a, const char *b)
{
	char *log = px_log(p);
	cr_expect(strstr(log, a), "%s not in the log: %s", a, log);
	cr_expect(strstr(log, b), "%s not in the log: %s", b, log);
	free(log);
	px_free(p);
}

/* ---- adopted listeners ---- */

/* An echo server and a proxy serving one adopted listener (no secret);
 * returns that listener's port. */
static unsigned setup(struct echo *e, struct px *p, bool use_hook)
{
	echo_start(e);
	px_new(p, use_hook);
	return px_adopt(p, false);
}

Test(prx_server, adopted_listener_serves_without_secret, .timeout = 60)
{
	static struct echo e;
	struct px p;
	unsigned open_port = setup(&e, &p, false);
	unsigned auth_port = px_adopt(&p, true);
	px_run(&p);

	char hp[64];
	snprintf(hp, sizeof hp, "localhost:%u", e.port);
	/* The same request without a secret: refused where one is needed. */
	cr_expect_eq(do_connect(auth_port, hp, NULL), 407);
	int fd;
	cr_assert_eq(do_connect(open_port, hp, &fd), 200);
	expect_echo(fd, "hello through an adopted listener");
	close(fd);
	cr_expect_eq(do_connect(open_port, "blocked.deny:443", NULL), 403);
	cr_expect_eq(do_connect(open_port, "nowhere.test:443", NULL), 403);

	px_stop(&p);
	px_free(&p);
}

static bool fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

Test(prx_server, adopt_refuses_and_closes)
{
	struct px p;
	px_new(&p, false);
	char err[256];
	unsigned port;
	/* Listening on every address: an open proxy for the whole network. */
	int any = listen_lo("0.0.0.0", &port);
	cr_expect_not(prx_server_adopt_listener(p.s, any, false, err, sizeof err));
	cr_expect(strstr(err, "loopback"), "%s", err);
	cr_expect_not(fd_is_open(any), "the server owns a descriptor also when it refuses it");
	/* Not listening. */
	int idle = sock_new(AF_INET, SOCK_STREAM);
	cr_expect_not(prx_server_adopt_listener(p.s, idle, false, err, sizeof err));
	cr_expect_not(fd_is_open(idle));
	/* A forward needs a destination with a port. */
	int lfd = listen_lo("127.0.0.1", &port);
	struct sockaddr_in dst = { .sin_family = AF_INET };
	cr_expect_not(prx_server_adopt_forward(p.s, lfd, (struct sockaddr *)&dst, sizeof dst, err,
					       sizeof err));
	cr_expect_not(fd_is_open(lfd));
	/* The listener limit. */
	int n = 0;
	for (; n < 100; n++) {
		int fd = listen_lo("127.0.0.1", &port);
		if (!prx_server_adopt_listener(p.s, fd, false, err, sizeof err))
			break;
	}
	cr_expect_eq(n, PRX_MAX_LISTENERS);
	px_free(&p);
}

#ifdef __linux__
/* The sandbox's case: a listener made inside a fresh network namespace,
 * where the host's servers cannot be reached, is passed out with
 * SCM_RIGHTS; through it, and only through it, the host's server answers. */

static bool send_fd(int sock, int fd, unsigned port)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	memset(cbuf, 0, sizeof cbuf);
	struct iovec iov = { .iov_base = &port, .iov_len = sizeof port };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof cbuf };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof fd);
	return sendmsg(sock, &m, 0) == (ssize_t)sizeof port;
}

static int recv_fd(int sock, unsigned *port)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = port, .iov_len = sizeof *port };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof cbuf };
	struct pollfd pf = { .fd = sock, .events = POLLIN };
	if (poll(&pf, 1, WAIT_MS) != 1 || recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != sizeof *port)
		return -1;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(cm), sizeof fd);
	return fd;
}

/* Child side: results are one byte each, 'y' or 'n'. */
static void netns_child(int sock)
{
	alarm(30);
	/* Without the privilege for a network namespace, a user namespace
	 * grants it (the sandbox's own way). */
	if (unshare(CLONE_NEWNET) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
		_exit(77);
	int ctl = sock_new(AF_INET, SOCK_DGRAM);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	if (ctl < 0 || ioctl(ctl, SIOCGIFFLAGS, &ifr) != 0)
		_exit(78);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(ctl, SIOCSIFFLAGS, &ifr) != 0)
		_exit(78);
	close(ctl);
	int lfd = sock_new(AF_INET, SOCK_STREAM);
	struct sockaddr_in a = { .sin_family = AF_INET };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t sl = sizeof a;
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 16) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &sl) != 0)
		_exit(79);
	unsigned lport = ntohs(a.sin_port);
	if (!send_fd(sock, lfd, lport))
		_exit(80);
	close(lfd);
	unsigned echo_port;
	struct pollfd pf = { .fd = sock, .events = POLLIN };
	if (poll(&pf, 1, WAIT_MS) != 1 || read(sock, &echo_port, sizeof echo_port) != sizeof echo_port)
		_exit(81);
	char res[2];
	/* Directly: nothing listens on that port in this namespace. */
	int d = connect_lo(echo_port);
	res[0] = d < 0 && errno == ECONNREFUSED ? 'y' : 'n';
	if (d >= 0)
		close(d);
	/* Through the proxy listening inside, run from outside. */
	res[1] = 'n';
	int fd = connect_lo(lport);
	char req[128];
	snprintf(req, sizeof req, "CONNECT localhost:%u HTTP/1.1\r\n\r\n", echo_port);
	if (fd >= 0 && send_all(fd, req, strlen(req))) {
		char buf[64];
		bool eof;
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		if (recv_n(fd, buf, sizeof ok - 1, &eof) == sizeof ok - 1 &&
		    memcmp(buf, ok, sizeof ok - 1) == 0 && send_all(fd, "ping", 4) &&
		    recv_n(fd, buf, 4, &eof) == 4 && memcmp(buf, "ping", 4) == 0)
			res[1] = 'y';
	}
	_exit(write(sock, res, 2) == 2 ? 0 : 82);
}

Test(prx_server, listener_from_another_network_namespace, .timeout = 60)
{
	int sp[2];
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	/* Fork before any thread exists. */
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		close(sp[0]);
		netns_child(sp[1]);
	}
	close(sp[1]);
	unsigned inner_port = 0;
	int lfd = recv_fd(sp[0], &inner_port);
	if (lfd < 0) {
		int st;
		waitpid(pid, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
			cr_skip_test("no network namespaces here");
		cr_assert_fail("the child could not make its listener (status %d)", st);
	}
	static struct echo e;
	echo_start(&e);
	struct px p;
	px_new(&p, false);
	char err[256];
	cr_assert(prx_server_adopt_listener(p.s, lfd, false, err, sizeof err), "%s", err);
	px_run(&p);
	cr_assert_eq(write(sp[0], &e.port, sizeof e.port), (ssize_t)sizeof e.port);
	char res[2] = { 0, 0 };
	bool eof;
	recv_n(sp[0], res, 2, &eof);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	cr_expect_eq(res[0], 'y', "inside the namespace the host's server must be unreachable");
	cr_expect_eq(res[1], 'y', "through the adopted listener it must answer");
	expect_log(&p, "\"decision\":\"allow\"", "\"method\":\"CONNECT\"");
	close(sp[0]);
}
#endif /* __linux__ */

/* ---- forwards ---- */

Test(prx_server, forward_relays_both_ways_and_closes, .timeout = 60)
{
	static struct echo e;
	echo_start(&e);
	struct px p;
	px_new(&p, false);
	unsigned fport = px_forward(&p, e.port);
	px_run(&p);

	int fd = connect_lo(fport);
	cr_assert(fd >= 0);
	/* No HTTP: the first bytes already go to the destination. */
	expect_echo(fd, "GET / HTTP/1.1\r\n\r\n");
	/* A larger transfer, written and read in turns so neither side's
	 * buffers must hold it all. */
	static char out[1 << 20], in[1 << 20];
	for (size_t i = 0; i < sizeof out; i++)
		out[i] = (char)(i * 2654435761u >> 24);
	size_t sent = 0, got = 0;
	bool eof = false;
	for (int i = 0; i < 100000 && got < sizeof in && !eof; i++) {
		struct pollfd pf = { .fd = fd, .events = POLLIN | (sent < sizeof out ? POLLOUT : 0) };
		cr_assert_eq(poll(&pf, 1, WAIT_MS), 1, "relay stalled at %zu/%zu", sent, got);
		if (pf.revents & POLLOUT) {
			ssize_t w = send(fd, out + sent, sizeof out - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
			cr_assert(w > 0 || errno == EAGAIN);
			sent += w > 0 ? (size_t)w : 0;
		}
		if (pf.revents & (POLLIN | POLLHUP)) {
			ssize_t r = recv(fd, in + got, sizeof in - got, MSG_DONTWAIT);
			eof = r == 0;
			got += r > 0 ? (size_t)r : 0;
		}
	}
	cr_expect_eq(got, sizeof in);
	cr_expect_eq(memcmp(in, out, sizeof in), 0);
	/* Our EOF reaches the server, and its close reaches us. */
	cr_assert_eq(shutdown(fd, SHUT_WR), 0);
	char b;
	cr_expect_eq(recv_n(fd, &b, 1, &eof), 0);
	cr_expect(eof, "the forward must close once the destination has");
	cr_expect_eq(atomic_load(&e.eofs), 1);
	close(fd);

	expect_log(&p, "\"method\":\"FORWARD\"", "\"bytes_up\":1048594");
}

Test(prx_server, forward_to_nothing_closes_without_http, .timeout = 60)
{
	unsigned dead;
	close(listen_lo("127.0.0.1", &dead)); /* a port nobody listens on */
	struct px p;
	px_new(&p, false);
	unsigned fport = px_forward(&p, dead);
	px_run(&p);
	int fd = connect_lo(fport);
	cr_assert(fd >= 0);
	char buf[64];
	bool eof;
	cr_expect_eq(recv_n(fd, buf, sizeof buf, &eof), 0, "no HTTP answer on a raw tunnel");
	cr_expect(eof);
	close(fd);
	expect_log(&p, "\"method\":\"FORWARD\"", "\"status\":502");
}

/* ---- the stop hook ---- */

static char wait_ack(struct px *p)
{
	struct pollfd pf = { .fd = p->ack[0], .events = POLLIN };
	char b = 0;
	cr_assert_eq(poll(&pf, 1, WAIT_MS), 1, "the stop hook was not called");
	cr_assert_eq(read(p->ack[0], &b, 1), 1);
	return b;
}

Test(prx_server, stop_hook_decides, .timeout = 60)
{
	static struct echo e;
	struct px p;
	unsigned port = setup(&e, &p, true);
	px_run(&p);
	char hp[64];
	snprintf(hp, sizeof hp, "localhost:%u", e.port);

	/* Twice "go on": the hook is called and the server keeps serving. */
	for (int i = 0; i < 2; i++) {
		char c = 'c';
		cr_assert_eq(write(p.stop[1], &c, 1), 1);
		cr_expect_eq(wait_ack(&p), 'c');
		int fd;
		cr_assert_eq(do_connect(port, hp, &fd), 200);
		expect_echo(fd, "still serving");
		close(fd);
	}
	/* "Quit": the hook is called once more and the run returns. */
	px_stop(&p);
	cr_expect_eq(wait_ack(&p), 'q');
	px_free(&p);
}

Test(prx_server, no_stop_hook_stops, .timeout = 60)
{
	struct px p;
	px_new(&p, false);
	px_adopt(&p, false);
	px_run(&p);
	px_stop(&p); /* bounded: fails if the run does not return */
	px_free(&p);
}

/* ---- the denial summary ---- */

struct seen {
	int n;
	char host[300][64];
	unsigned port[300];
	unsigned long count[300];
	char rule[300][64];
};

static void collect(void *ctx, const char *host, unsigned port, unsigned long count,
		    const char *rule)
{
	struct seen *s = ctx;
	if (s->n >= 300)
		return;
	snprintf(s->host[s->n], sizeof s->host[0], "%s", host);
	s->port[s->n] = port;
	s->count[s->n] = count;
	snprintf(s->rule[s->n], sizeof s->rule[0], "%s", rule);
	s->n++;
}

Test(prx_server, denial_summary_counts_and_stays_bounded, .timeout = 120)
{
	struct px p;
	px_new(&p, false);
	unsigned port = px_adopt(&p, false);
	px_run(&p);
	static const char *const seq[] = { "a.deny:443", "b.deny:443", "a.deny:80",
					   "a.deny:443", "a.deny:80",  "a.deny:443",
					   "internal.test:80", "nope.test:443" };
	for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++)
		cr_expect_eq(do_connect(port, seq[i], NULL), 403, "%s", seq[i]);
	/* Not denials: an allowed name, and a malformed request. */
	cr_expect_eq(do_connect(port, "localhost:1", NULL), 502);
	cr_expect_eq(do_connect(port, "bad_name:443", NULL), 400);
	for (int i = 0; i < 300; i++) {
		char hp[64];
		snprintf(hp, sizeof hp, "n%d.deny:443", i);
		cr_expect_eq(do_connect(port, hp, NULL), 403, "%s", hp);
	}
	px_stop(&p);

	static struct seen s;
	prx_server_denials(p.s, collect, &s);
	cr_assert_eq(s.n, 257, "256 kept keys and one for the rest, got %d", s.n);
	cr_expect_str_eq(s.host[0], "a.deny");
	cr_expect_eq(s.port[0], 443);
	cr_expect_eq(s.count[0], 3);
	cr_expect_str_eq(s.rule[0], "t:3:1");
	cr_expect_str_eq(s.host[1], "a.deny");
	cr_expect_eq(s.port[1], 80);
	cr_expect_eq(s.count[1], 2);
	/* Ties in first-seen order. */
	cr_expect_str_eq(s.host[2], "b.deny");
	cr_expect_str_eq(s.host[3], "internal.test");
	cr_expect_str_eq(s.rule[3], PRX_DENY_INTERNAL);
	cr_expect_str_eq(s.host[4], "nope.test");
	cr_expect_str_eq(s.rule[4], "", "default deny has no rule");
	cr_expect_str_eq(s.host[5], "n0.deny");
	cr_expect_str_eq(s.host[255], "n250.deny");
	cr_expect_str_eq(s.host[256], "");
	cr_expect_eq(s.port[256], 0);
	unsigned long total = 0;
	for (int i = 0; i < s.n; i++)
		total += s.count[i];
	cr_expect_eq(total, 308, "every denial counted once, got %lu", total);
	cr_expect_eq(s.count[256], 49);
	px_free(&p);
}

/* Each denial is told to the user as it happens (notice_fd), with the
 * host, the port and the deciding rule, no rule, or for a name that
 * resolves to an internal address the rule that would allow it; allowed
 * and malformed requests say nothing there. */
Test(prx_server, denial_notices_say_host_port_and_rule, .timeout = 60)
{
	struct px p;
	px_new(&p, false);
	unsigned port = px_adopt(&p, false);
	px_run(&p);
	cr_expect_eq(do_connect(port, "localhost:1", NULL), 502);
	cr_expect_eq(do_connect(port, "bad_name:443", NULL), 400);
	off_t quiet = lseek(p.notice_fd, 0, SEEK_END);
	cr_expect_eq(quiet, 0, "an allowed or malformed request wrote a denial line");
	cr_expect_eq(do_connect(port, "a.deny:443", NULL), 403);
	cr_expect_eq(do_connect(port, "nope.test:443", NULL), 403);
	cr_expect_eq(do_connect(port, "internal.test:80", NULL), 403);
	cr_expect_eq(do_connect(port, "a.deny:443", NULL), 403);
	px_stop(&p);
	char buf[2048] = "";
	ssize_t n = pread(p.notice_fd, buf, sizeof buf - 1, 0);
	cr_assert(n > 0);
	buf[n] = '\0';
	cr_expect_str_eq(buf,
			 "cage proxy: connection to a.deny:443 denied by the rule at t:3:1\n"
			 "cage proxy: connection to nope.test:443 denied: no rule allows it "
			 "(default deny)\n"
			 "cage proxy: connection to internal.test:80 denied: internal.test resolves "
			 "to 10.1.2.3 (private), an internal address no rule allows; to allow it, "
			 "add the rule: allow connect \"10.1.2.3:80\"\n"
			 "cage proxy: connection to a.deny:443 denied by the rule at t:3:1\n");
	px_free(&p);
}
