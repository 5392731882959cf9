/*
 * tun_bench.c - the two halves of the tunnel benchmark (testsuite/bench/
 * tunnel.sh), so that the client can run inside cagerun's sandbox while
 * the servers stay outside:
 *
 *   tun_bench serve IP SECONDS
 *     starts the sink and echo servers (bench_net.c) on IP, prints
 *     "sink PORT echo PORT", and exits after SECONDS or when its standard
 *     input closes, whichever comes first.
 *   tun_bench client PROXY IP SINK_PORT ECHO_PORT BYTES ITERS
 *     PROXY is "direct", "env" (the http_proxy variable, which cagerun sets
 *     inside the sandbox) or http://[user:pass@]IP:PORT. Sends BYTES one
 *     way to the sink (one connection; skipped when 0), then times ITERS
 *     set-ups (connect [+ CONNECT] + 1-byte echo + close) after ITERS/10
 *     untimed ones. Prints "throughput BYTES SECONDS" and one "setup US"
 *     line per timed set-up; exits non-zero if any connection fails.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_net.h"

static int tb_serve(const char *ip, int seconds)
{
	unsigned sink = 0, echo = 0;
	bn_servers_start(ip, &sink, &echo);
	printf("sink %u echo %u\n", sink, echo);
	if (fflush(stdout) != 0)
		return 2;
	double end = bn_now() + seconds;
	for (double left; (left = end - bn_now()) > 0;) {
		struct pollfd p = { STDIN_FILENO, POLLIN, 0 };
		int ms = left > 1 ? 1000 : (int)(left * 1000) + 1;
		if (poll(&p, 1, ms) > 0) {
			char c;
			if (read(STDIN_FILENO, &c, 1) <= 0)
				break; /* the script is done (or gone) */
		}
	}
	return 0;
}

static int tb_client(char **a)
{
	struct bn_proxy px, *p = &px;
	const char *url = a[0];
	if (!strcmp(url, "env"))
		url = getenv("http_proxy");
	if (!strcmp(a[0], "direct"))
		p = NULL;
	else if (!url || bn_proxy_parse(&px, url) != 0) {
		fprintf(stderr, "tun_bench: bad proxy %s\n", url ? url : "(http_proxy unset)");
		return 2;
	}
	const char *ip = a[1];
	unsigned sink = (unsigned)atoi(a[2]), echo = (unsigned)atoi(a[3]);
	double bytes = atof(a[4]);
	int iters = atoi(a[5]);
	if (sink == 0 || echo == 0 || bytes < 0 || bytes > 16.0 * (1u << 30) || iters < 0 ||
	    iters > 100000) {
		fprintf(stderr, "tun_bench: bad client arguments\n");
		return 2;
	}
	if (bytes > 0) {
		double bps = bn_throughput(p, ip, sink, (size_t)bytes);
		if (bps <= 0) {
			fprintf(stderr, "tun_bench: throughput run failed\n");
			return 1;
		}
		printf("throughput %.0f %.6f\n", bytes, bytes / bps);
	}
	for (int i = -iters / 10; i < iters; i++) {
		double us = bn_setup_us(p, ip, echo);
		if (us < 0) {
			fprintf(stderr, "tun_bench: set-up %d failed\n", i);
			return 1;
		}
		if (i >= 0)
			printf("setup %.1f\n", us);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 4 && !strcmp(argv[1], "serve") && atoi(argv[3]) > 0 && atoi(argv[3]) <= 3600)
		return tb_serve(argv[2], atoi(argv[3]));
	if (argc == 8 && !strcmp(argv[1], "client"))
		return tb_client(argv + 2);
	fprintf(stderr, "usage: tun_bench serve IP SECONDS\n"
			"       tun_bench client PROXY IP SINK_PORT ECHO_PORT BYTES ITERS\n");
	return 2;
}
