/*
 * prx_bench.c - proxy benchmarks, each next to its anchor measured in the
 * same run: tunnel throughput vs a direct loopback connection, CONNECT
 * set-up latency vs a direct connect, 1,000 concurrent tunnels, and the same
 * workloads through tinyproxy as a peer.
 *
 *   prx_bench PRX_TESTPROXY [--gib N] [--runs N] [--iters N] [--tunnels N]
 *
 * Servers (sink and echo) run on 127.0.0.2 in one epoll thread of this
 * process; the proxies are separate processes. Targets are IP literals so
 * no proxy resolves names. Results: medians of --runs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_net.h"

extern char **environ;

static void die(const char *m)
{
	perror(m);
	exit(2);
}

/* ---- proxies ---- */

struct proxy {
	const char *name;
	pid_t pid;
	struct bn_proxy net;
};

static unsigned sink_port, echo_port;

static const char *extra_args[8];
static int nextra;

static bool start_cage(struct proxy *p, const char *bin)
{
	int pfd[2];
	if (pipe(pfd))
		return false;
	const char *argv[24] = { bin, "--listen", "127.0.0.1:0", "--rule", "allow:127.0.0.2:*",
				 "--limit", "max_conns=2048" };
	int na = 7;
	for (int i = 0; i < nextra; i++)
		argv[na++] = extra_args[i];
	argv[na] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addclose(&fa, pfd[0]);
	if (posix_spawn(&p->pid, bin, &fa, NULL, (char *const *)argv, environ))
		return false;
	close(pfd[1]);
	char line[256] = "";
	FILE *f = fdopen(pfd[0], "r");
	if (!fgets(line, sizeof line, f))
		return false;
	fclose(f);
	char addr[128], secret[64];
	if (sscanf(line, "listening %127s %63s", addr, secret) != 2)
		return false;
	snprintf(p->net.ip, sizeof p->net.ip, "127.0.0.1");
	p->net.port = (unsigned)atoi(strrchr(addr, ':') + 1);
	bn_basic_auth(p->net.auth, sizeof p->net.auth, "b", secret);
	p->name = "cage proxy";
	return true;
}

static bool start_tinyproxy(struct proxy *p)
{
	unsigned port = 0;
	int fd = bn_listen("127.0.0.1", &port);
	close(fd);
	char conf[] = "/tmp/prx_bench_tinyproxy.XXXXXX";
	int cf = mkstemp(conf);
	if (cf < 0)
		return false;
	dprintf(cf,
		"Port %u\nListen 127.0.0.1\nTimeout 600\nMaxClients 2048\nAllow 127.0.0.1\n"
		"ConnectPort %u\nConnectPort %u\nLogLevel Critical\n",
		port, sink_port, echo_port);
	close(cf);
	const char *argv[] = { "tinyproxy", "-d", "-c", conf, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&p->pid, "tinyproxy", &fa, NULL, (char *const *)argv, environ))
		return false;
	for (int i = 0; i < 300; i++) {
		int c = bn_connect("127.0.0.1", port);
		if (c >= 0) {
			close(c);
			snprintf(p->net.ip, sizeof p->net.ip, "127.0.0.1");
			p->net.port = port;
			p->net.auth[0] = 0;
			p->name = "tinyproxy";
			unlink(conf);
			return true;
		}
		usleep(10000);
	}
	return false;
}

static void stop(struct proxy *p)
{
	kill(p->pid, SIGTERM);
	waitpid(p->pid, NULL, 0);
}

/* The three set-ups interleaved, so that noise from other load on the
 * machine hits all of them alike. v[k] gets k's samples. */
static bool latency(const struct proxy *const *ps, int np, int iters, double **v)
{
	for (int i = 0; i < iters; i++)
		for (int k = 0; k < np; k++)
			if ((v[k][i] = bn_setup_us(ps[k] ? &ps[k]->net : NULL, "127.0.0.2", echo_port)) < 0)
				return false;
	for (int k = 0; k < np; k++)
		qsort(v[k], (size_t)iters, sizeof(double), bn_cmp_double);
	return true;
}

static long proc_field(pid_t pid, const char *key)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	long v = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, key, strlen(key)) == 0)
			v = atol(line + strlen(key) + 1);
	if (f)
		fclose(f);
	return v;
}

static double cpu_s(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	unsigned long ut = 0, st = 0;
	if (f) {
		if (fscanf(f, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
			ut = st = 0;
		fclose(f);
	}
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* n tunnels opened at once (non-blocking), each echoes one byte, all
 * closed. The client waits with epoll, so its own cost per round is the
 * sockets that are ready, not all n. */
static double concurrent(const struct proxy *p, int n, int *ok_out)
{
	int *fds = malloc(sizeof(int) * (size_t)n);
	int *state = calloc((size_t)n, sizeof(int));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	double t0 = bn_now();
	unsigned target = p ? p->net.port : echo_port;
	const char *ip = p ? "127.0.0.1" : "127.0.0.2";
	for (int i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)target) };
		inet_pton(AF_INET, ip, &a.sin_addr);
		(void)connect(fds[i], (struct sockaddr *)&a, sizeof a);
		struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = (uint32_t)i };
		epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
	}
	char req[512];
	int rl = p ? snprintf(req, sizeof req, "CONNECT 127.0.0.2:%u HTTP/1.1\r\n%s\r\n", echo_port,
			      p->net.auth)
		   : 0;
	/* states: 0 connecting, 1 wait 200, 2 wait echo, 3 done, -1 failed */
	int done = 0;
	struct epoll_event evs[256];
	while (done < n && bn_now() - t0 < 30) {
		int k = epoll_wait(ep, evs, 256, 1000);
		for (int j = 0; j < k; j++) {
			int i = (int)evs[j].data.u32;
			char buf[512];
			int before = state[i];
			if (state[i] == 0) {
				if (p ? send(fds[i], req, (size_t)rl, MSG_NOSIGNAL) != rl
				      : send(fds[i], "x", 1, MSG_NOSIGNAL) != 1)
					state[i] = -1;
				else
					state[i] = p ? 1 : 2;
			} else if (state[i] == 1) {
				ssize_t r = recv(fds[i], buf, sizeof buf, 0);
				if (r < 0 && errno == EAGAIN)
					continue;
				if (r > 12 && strncmp(buf + 9, "200", 3) == 0 &&
				    send(fds[i], "x", 1, MSG_NOSIGNAL) == 1)
					state[i] = 2;
				else
					state[i] = -1;
			} else if (state[i] == 2) {
				ssize_t r = recv(fds[i], buf, sizeof buf, 0);
				if (r < 0 && errno == EAGAIN)
					continue;
				state[i] = r == 1 ? 3 : -1;
			}
			if (state[i] != before) {
				if (state[i] < 0 || state[i] == 3) {
					done++;
					epoll_ctl(ep, EPOLL_CTL_DEL, fds[i], NULL);
				} else if (before == 0) {
					struct epoll_event ev = { .events = EPOLLIN,
								  .data.u32 = (uint32_t)i };
					epoll_ctl(ep, EPOLL_CTL_MOD, fds[i], &ev);
				}
			}
		}
	}
	int ok = 0;
	for (int i = 0; i < n; i++) {
		ok += state[i] == 3;
		close(fds[i]);
	}
	double dt = bn_now() - t0;
	close(ep);
	*ok_out = ok;
	free(fds);
	free(state);
	return dt;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bn_cmp_double);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: prx_bench PRX_TESTPROXY [--gib N] [--runs N] [--iters N] [--tunnels N]\n");
		return 2;
	}
	double gib = 1;
	int runs = 5, iters = 2000, tunnels = 1000;
	const char *only = "";
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--gib"))
			gib = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--runs"))
			runs = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--iters"))
			iters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--tunnels"))
			tunnels = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--proxy-arg") && nextra < 8)
			extra_args[nextra++] = argv[i + 1];
		else if (!strcmp(argv[i], "--only"))
			only = argv[i + 1];
	}
	if (runs < 1 || runs > 50 || iters < 100 || tunnels < 1 || tunnels > 4000 || gib <= 0 || gib > 16)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	bn_servers_start("127.0.0.2", &sink_port, &echo_port);

	struct proxy cage, tiny;
	if (!start_cage(&cage, argv[1]))
		die("start cage proxy");
	bool have_tiny = start_tinyproxy(&tiny);
	size_t bytes = (size_t)(gib * (double)(1u << 30));

	if (!strcmp(only, "throughput"))
		iters = tunnels = 0;
	/* Throughput: direct, cage, tinyproxy interleaved per run. */
	double d[50], c[50], t[50], ccpu_t = 0, tcpu_t = 0;
	for (int r = 0; r < runs; r++) {
		d[r] = bn_throughput(NULL, "127.0.0.2", sink_port, bytes);
		double c0 = cpu_s(cage.pid);
		c[r] = bn_throughput(&cage.net, "127.0.0.2", sink_port, bytes);
		ccpu_t += cpu_s(cage.pid) - c0;
		double t0 = have_tiny ? cpu_s(tiny.pid) : 0;
		t[r] = have_tiny ? bn_throughput(&tiny.net, "127.0.0.2", sink_port, bytes) : 0;
		tcpu_t += have_tiny ? cpu_s(tiny.pid) - t0 : 0;
	}
	double md = median(d, runs), mc = median(c, runs), mt = median(t, runs);
	printf("throughput %.2f GiB one way, median of %d runs:\n", gib, runs);
	printf("  direct     %7.2f GB/s\n", md / 1e9);
	printf("  cage proxy %7.2f GB/s  (%.2fx direct)  proxy CPU %.2f s/GiB\n", mc / 1e9, mc / md,
	       ccpu_t / (gib * runs));
	if (have_tiny)
		printf("  tinyproxy  %7.2f GB/s  (%.2fx direct)  proxy CPU %.2f s/GiB (main process)\n",
		       mt / 1e9, mt / md, tcpu_t / (gib * runs));

	if (!iters) {
		stop(&cage);
		if (have_tiny)
			stop(&tiny);
		return 0;
	}
	/* Set-up latency. */
	const struct proxy *ps[3] = { NULL, &cage, have_tiny ? &tiny : NULL };
	int np = have_tiny ? 3 : 2;
	double *lv[3];
	for (int k = 0; k < 3; k++)
		lv[k] = malloc(sizeof(double) * (size_t)iters);
	if (!latency(ps, np, iters / 10, lv) || !latency(ps, np, iters, lv))
		die("latency run failed");
	printf("set-up latency (connect [+ CONNECT] + 1-byte echo + close), %d iterations, "
	       "interleaved:\n", iters);
	const char *names[3] = { "direct    ", "cage proxy", "tinyproxy " };
	for (int k = 0; k < np; k++) {
		double p50 = lv[k][iters / 2], p99 = lv[k][iters * 99 / 100];
		printf("  %s p50 %6.1f us  p99 %7.1f us", names[k], p50, p99);
		if (k)
			printf("  (p50 %+.1f us, p99 %+.1f us vs direct)", p50 - lv[0][iters / 2],
			       p99 - lv[0][iters * 99 / 100]);
		printf("\n");
	}
	for (int k = 0; k < 3; k++)
		free(lv[k]);

	/* Concurrent tunnels. */
	int okd, okc, okt = 0;
	double cd = concurrent(NULL, tunnels, &okd);
	double cpu0 = cpu_s(cage.pid);
	double cc = concurrent(&cage, tunnels, &okc);
	double ccpu = cpu_s(cage.pid) - cpu0;
	long crss = proc_field(cage.pid, "VmHWM:");
	double ct = 0, tcpu = 0;
	long trss = 0;
	if (have_tiny) {
		double t0c = cpu_s(tiny.pid);
		ct = concurrent(&tiny, tunnels, &okt);
		tcpu = cpu_s(tiny.pid) - t0c;
		trss = proc_field(tiny.pid, "VmHWM:");
	}
	printf("%d concurrent tunnels (open all, 1-byte echo each, close):\n", tunnels);
	printf("  direct     %.3f s  %d/%d ok\n", cd, okd, tunnels);
	printf("  cage proxy %.3f s  %d/%d ok  peak RSS %ld kB  CPU %.2f s\n", cc, okc, tunnels, crss,
	       ccpu);
	if (have_tiny)
		printf("  tinyproxy  %.3f s  %d/%d ok  peak RSS %ld kB  CPU %.2f s (main process)\n", ct,
		       okt, tunnels, trss, tcpu);
	stop(&cage);
	if (have_tiny)
		stop(&tiny);
	return 0;
}
