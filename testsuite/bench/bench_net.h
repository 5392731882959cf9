/*
 * bench_net.h - the network pieces the proxy benchmarks share (prx_bench,
 * tun_bench): a sink and an echo server in one epoll thread, CONNECT
 * tunnels through an HTTP proxy (or direct connections), and the two
 * timed workloads, bulk throughput and tunnel set-up.
 *
 * Benchmark code: a failure to set up a server dies with a message; the
 * workloads return 0 or a negative value when a connection fails.
 */
#ifndef CAGE_BENCH_NET_H
#define CAGE_BENCH_NET_H

#include <stddef.h>

/* An HTTP proxy: where it listens and the Proxy-Authorization header line
 * (with its CRLF) to send, or "" for none. */
struct bn_proxy {
	char ip[64];
	unsigned port;
	char auth[200];
};

double bn_now(void);
int bn_cmp_double(const void *a, const void *b);

/* A listening TCP socket on ip, port 0 = any; *port gets the port. */
int bn_listen(const char *ip, unsigned *port);
/* Starts the sink (reads and drops, closes on EOF) and the echo server on
 * ip in a detached thread of this process. */
void bn_servers_start(const char *ip, unsigned *sink_port, unsigned *echo_port);

/* Blocking connect with TCP_NODELAY; -1 on failure. */
int bn_connect(const char *ip, unsigned port);
/* "Proxy-Authorization: Basic base64(user:pass)\r\n" into hdr. */
void bn_basic_auth(char *hdr, size_t size, const char *user, const char *pass);
/* Parses http://[user:pass@]IP:PORT[/] into p; 0 on success. */
int bn_proxy_parse(struct bn_proxy *p, const char *url);

/* A connection to ip:port, through a CONNECT tunnel of p when p is not
 * NULL; -1 on failure. */
int bn_tunnel(const struct bn_proxy *p, const char *ip, unsigned port);
/* Sends `bytes` one way to the sink at ip:port and waits until the sink has
 * read them all and closed; bytes per second, 0 on failure. */
double bn_throughput(const struct bn_proxy *p, const char *ip, unsigned port, size_t bytes);
/* One connect (+ CONNECT) + 1-byte echo + close with the echo server at
 * ip:port, in microseconds; negative on failure. */
double bn_setup_us(const struct bn_proxy *p, const char *ip, unsigned port);

#endif
