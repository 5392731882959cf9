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

extern char **environ;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *m)
{
	perror(m);
	exit(2);
}

/* ---- servers: one epoll thread, sink and echo listeners ---- */

static int listen_on(const char *ip, unsigned *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	inet_pton(AF_INET, ip, &a.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 4096))
		die("listen");
	socklen_t sl = sizeof a;
	getsockname(fd, (struct sockaddr *)&a, &sl);
	*port = ntohs(a.sin_port);
	return fd;
}

static int sink_l, echo_l;
static unsigned sink_port, echo_port;

static void *server(void *arg)
{
	(void)arg;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)sink_l | (1ull << 40) };
	epoll_ctl(ep, EPOLL_CTL_ADD, sink_l, &ev);
	ev.data.u64 = (uint64_t)echo_l | (2ull << 40);
	epoll_ctl(ep, EPOLL_CTL_ADD, echo_l, &ev);
	static char buf[1 << 20];
	struct epoll_event evs[256];
	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1);
		for (int i = 0; i < n; i++) {
			int fd = (int)(evs[i].data.u64 & 0xffffffff);
			unsigned kind = (unsigned)(evs[i].data.u64 >> 40);
			bool listener = evs[i].data.u64 >> 32 & 0xff;
			if (fd == sink_l || fd == echo_l) {
				for (int k = 0; k < 256; k++) {
					int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
					if (c < 0)
						break;
					int one = 1;
					setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
					struct epoll_event ce = { .events = EPOLLIN,
								  .data.u64 = (uint64_t)c | ((uint64_t)kind << 40) };
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
				}
				continue;
			}
			(void)listener;
			ssize_t r = recv(fd, buf, sizeof buf, 0);
			if (r <= 0) {
				if (r < 0 && errno == EAGAIN)
					continue;
				close(fd);
				continue;
			}
			if (kind == 2) { /* echo; small messages only */
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

/* ---- proxies ---- */

struct proxy {
	const char *name;
	pid_t pid;
	unsigned port;
	char auth[200];
};

static void b64(const char *in, char *out)
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

static int tcp_connect(unsigned port, const char *ip)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
	char addr[128], secret[64], up[100], enc[160];
	if (sscanf(line, "listening %127s %63s", addr, secret) != 2)
		return false;
	p->port = (unsigned)atoi(strrchr(addr, ':') + 1);
	snprintf(up, sizeof up, "b:%s", secret);
	b64(up, enc);
	snprintf(p->auth, sizeof p->auth, "Proxy-Authorization: Basic %s\r\n", enc);
	p->name = "cage proxy";
	return true;
}

static bool start_tinyproxy(struct proxy *p)
{
	unsigned port;
	int fd = listen_on("127.0.0.1", &port);
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
		int c = tcp_connect(port, "127.0.0.1");
		if (c >= 0) {
			close(c);
			p->port = port;
			p->auth[0] = 0;
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

/* CONNECT through p (or direct when p is NULL); returns the tunnel fd. */
static int open_tunnel(const struct proxy *p, unsigned port)
{
	if (!p)
		return tcp_connect(port, "127.0.0.2");
	int fd = tcp_connect(p->port, "127.0.0.1");
	if (fd < 0)
		return -1;
	char req[512], resp[512];
	int n = snprintf(req, sizeof req, "CONNECT 127.0.0.2:%u HTTP/1.1\r\nHost: 127.0.0.2:%u\r\n%s\r\n",
			 port, port, p->auth);
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
	if (strncmp(resp + 9, "200", 3) != 0 || !strstr(resp, "\r\n\r\n")) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- workloads ---- */

static double throughput(const struct proxy *p, size_t bytes)
{
	static char buf[1 << 20];
	int fd = open_tunnel(p, sink_port);
	if (fd < 0)
		return 0;
	double t0 = now_s();
	for (size_t sent = 0; sent < bytes;) {
		size_t n = bytes - sent < sizeof buf ? bytes - sent : sizeof buf;
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w <= 0) {
			close(fd);
			return 0;
		}
		sent += (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	char c;
	while (recv(fd, &c, 1, 0) > 0) /* sink closes after EOF: all delivered */
		;
	double dt = now_s() - t0;
	close(fd);
	return (double)bytes / dt;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One connect (+ CONNECT) + 1-byte echo + close, in microseconds; < 0 on
 * failure. */
static double one_setup(const struct proxy *p)
{
	double t0 = now_s();
	int fd = open_tunnel(p, echo_port);
	char c = 'x';
	if (fd < 0 || send(fd, &c, 1, MSG_NOSIGNAL) != 1 || recv(fd, &c, 1, 0) != 1) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return (now_s() - t0) * 1e6;
}

/* The three set-ups interleaved, so that noise from other load on the
 * machine hits all of them alike. v[k] gets k's samples. */
static bool latency(const struct proxy *const *ps, int np, int iters, double **v)
{
	for (int i = 0; i < iters; i++)
		for (int k = 0; k < np; k++)
			if ((v[k][i] = one_setup(ps[k])) < 0)
				return false;
	for (int k = 0; k < np; k++)
		qsort(v[k], (size_t)iters, sizeof(double), cmp_d);
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
	double t0 = now_s();
	unsigned target = p ? p->port : echo_port;
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
			      p->auth)
		   : 0;
	/* states: 0 connecting, 1 wait 200, 2 wait echo, 3 done, -1 failed */
	int done = 0;
	struct epoll_event evs[256];
	while (done < n && now_s() - t0 < 30) {
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
	double dt = now_s() - t0;
	close(ep);
	*ok_out = ok;
	free(fds);
	free(state);
	return dt;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
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
	sink_l = listen_on("127.0.0.2", &sink_port);
	echo_l = listen_on("127.0.0.2", &echo_port);
	pthread_t th;
	pthread_create(&th, NULL, server, NULL);

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
		d[r] = throughput(NULL, bytes);
		double c0 = cpu_s(cage.pid);
		c[r] = throughput(&cage, bytes);
		ccpu_t += cpu_s(cage.pid) - c0;
		double t0 = have_tiny ? cpu_s(tiny.pid) : 0;
		t[r] = have_tiny ? throughput(&tiny, bytes) : 0;
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
