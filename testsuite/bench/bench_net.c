/*
 * bench_net.c - servers, tunnels and timed workloads for the proxy
 * benchmarks (see bench_net.h).
 */
#include "bench_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

double bn_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int bn_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void bn_die(const char *m)
{
	perror(m);
	exit(2);
}

int bn_listen(const char *ip, unsigned *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)*port) };
	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		bn_die("listen address");
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 4096))
		bn_die("listen");
	socklen_t sl = sizeof a;
	if (getsockname(fd, (struct sockaddr *)&a, &sl) != 0)
		bn_die("getsockname");
	*port = ntohs(a.sin_port);
	return fd;
}

/* ---- servers: one epoll thread, sink and echo listeners ---- */

enum { BN_SINK = 1, BN_ECHO = 2 };

struct bn_servers {
	int sink_l, echo_l;
};

static void *bn_serve(void *arg)
{
	struct bn_servers sv = *(struct bn_servers *)arg;
	free(arg);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		bn_die("epoll_create1");
	struct epoll_event ev = { .events = EPOLLIN,
				  .data.u64 = (uint64_t)sv.sink_l | ((uint64_t)BN_SINK << 40) };
	epoll_ctl(ep, EPOLL_CTL_ADD, sv.sink_l, &ev);
	ev.data.u64 = (uint64_t)sv.echo_l | ((uint64_t)BN_ECHO << 40);
	epoll_ctl(ep, EPOLL_CTL_ADD, sv.echo_l, &ev);
	char *buf = malloc(1 << 20);
	if (!buf)
		bn_die("malloc");
	struct epoll_event evs[256];
	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1);
		for (int i = 0; i < n; i++) {
			int fd = (int)(evs[i].data.u64 & 0xffffffff);
			unsigned kind = (unsigned)(evs[i].data.u64 >> 40);
			if (fd == sv.sink_l || fd == sv.echo_l) {
				for (int k = 0; k < 256; k++) {
					int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
					if (c < 0)
						break;
					int one = 1;
					setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
					struct epoll_event ce = {
						.events = EPOLLIN,
						.data.u64 = (uint64_t)c | ((uint64_t)kind << 40)
					};
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
				}
				continue;
			}
			ssize_t r = recv(fd, buf, 1 << 20, 0);
			if (r <= 0) {
				if (r < 0 && errno == EAGAIN)
					continue;
				close(fd);
				continue;
			}
			if (kind == BN_ECHO) { /* small messages only */
				for (ssize_t off = 0; off < r;) {
					ssize_t w = send(fd, buf + off, (size_t)(r - off), MSG_NOSIGNAL);
					if (w <= 0)
						break;
					off += w;
				}
			}
		}
	}
	return NULL;
}

void bn_servers_start(const char *ip, unsigned *sink_port, unsigned *echo_port)
{
	struct bn_servers *sv = malloc(sizeof *sv);
	if (!sv)
		bn_die("malloc");
	sv->sink_l = bn_listen(ip, sink_port);
	sv->echo_l = bn_listen(ip, echo_port);
	pthread_t th;
	if (pthread_create(&th, NULL, bn_serve, sv) != 0 || pthread_detach(th) != 0)
		bn_die("pthread_create");
}

/* ---- clients ---- */

int bn_connect(const char *ip, unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	inet_pton(AF_INET, ip, &a.sin_addr);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void bn_b64(const char *in, char *out)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(in), o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)(unsigned char)in[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)(unsigned char)in[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)in[i + 2];
		out[o++] = t[(v >> 18) & 63];
		out[o++] = t[(v >> 12) & 63];
		out[o++] = i + 1 < n ? t[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? t[v & 63] : '=';
	}
	out[o] = 0;
}

void bn_basic_auth(char *hdr, size_t size, const char *user, const char *pass)
{
	char up[128], enc[180];
	snprintf(up, sizeof up, "%s:%s", user, pass);
	bn_b64(up, enc);
	snprintf(hdr, size, "Proxy-Authorization: Basic %s\r\n", enc);
}

int bn_proxy_parse(struct bn_proxy *p, const char *url)
{
	memset(p, 0, sizeof *p);
	if (strncmp(url, "http://", 7) != 0)
		return -1;
	const char *host = url + 7, *at = strchr(host, '@');
	if (at) {
		char cred[128];
		size_t n = (size_t)(at - host);
		if (n >= sizeof cred)
			return -1;
		memcpy(cred, host, n);
		cred[n] = 0;
		char *colon = strchr(cred, ':');
		if (!colon)
			return -1;
		*colon = 0;
		bn_basic_auth(p->auth, sizeof p->auth, cred, colon + 1);
		host = at + 1;
	}
	const char *colon = strrchr(host, ':');
	size_t n = colon ? (size_t)(colon - host) : 0;
	if (!colon || n == 0 || n >= sizeof p->ip)
		return -1;
	memcpy(p->ip, host, n);
	p->ip[n] = 0;
	char *end;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (port == 0 || port > 65535 || (*end && strcmp(end, "/") != 0))
		return -1;
	p->port = (unsigned)port;
	return 0;
}

int bn_tunnel(const struct bn_proxy *p, const char *ip, unsigned port)
{
	if (!p)
		return bn_connect(ip, port);
	int fd = bn_connect(p->ip, p->port);
	if (fd < 0)
		return -1;
	char req[512], resp[512];
	int n = snprintf(req, sizeof req, "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n%s\r\n", ip, port,
			 ip, port, p->auth);
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
		close(fd);
		return -1;
	}
	size_t got = 0;
	while (got < sizeof resp - 1) {
		ssize_t r = recv(fd, resp + got, sizeof resp - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
		resp[got] = 0;
		if (strstr(resp, "\r\n\r\n"))
			break;
	}
	resp[got] = 0;
	if (got < 12 || strncmp(resp + 9, "200", 3) != 0 || !strstr(resp, "\r\n\r\n")) {
		close(fd);
		return -1;
	}
	return fd;
}

double bn_throughput(const struct bn_proxy *p, const char *ip, unsigned port, size_t bytes)
{
	char *buf = calloc(1, 1 << 20);
	int fd = buf ? bn_tunnel(p, ip, port) : -1;
	if (fd < 0) {
		free(buf);
		return 0;
	}
	double t0 = bn_now();
	for (size_t sent = 0; sent < bytes;) {
		size_t n = bytes - sent < (1u << 20) ? bytes - sent : (1u << 20);
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w <= 0) {
			close(fd);
			free(buf);
			return 0;
		}
		sent += (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	char c;
	while (recv(fd, &c, 1, 0) > 0) /* the sink closes after EOF: all delivered */
		;
	double dt = bn_now() - t0;
	close(fd);
	free(buf);
	return (double)bytes / dt;
}

double bn_setup_us(const struct bn_proxy *p, const char *ip, unsigned port)
{
	double t0 = bn_now();
	int fd = bn_tunnel(p, ip, port);
	char c = 'x';
	if (fd < 0 || send(fd, &c, 1, MSG_NOSIGNAL) != 1 || recv(fd, &c, 1, 0) != 1) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return (bn_now() - t0) * 1e6;
}
