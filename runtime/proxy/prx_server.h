/*
 * prx_server.h - the proxy server object and its connection slots, shared
 * by the event loop (prx_loop.c) and the listeners (prx_listen.c). Internal
 * to libcage.
 */
#ifndef CAGE_PRX_SERVER_H
#define CAGE_PRX_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>

#include "prx_http.h"
#include "prx_int.h"

enum st { ST_FREE, ST_HEAD, ST_RESOLVING, ST_CONNECTING, ST_TUNNEL, ST_LINGER };

#define SIDE_CLIENT 0u
#define SIDE_UP 1u
#define TAG_SPECIAL (1ull << 63)
#define TAG_STOP (TAG_SPECIAL | 1)
#define TAG_DNS (TAG_SPECIAL | 2)
#define TAG_LISTEN (TAG_SPECIAL | 16) /* + listener index */
#define MAX_LISTEN 2
#define LINGER_MS 1000
#define LINGER_BYTES (256u * 1024)
#define PUMP_BUDGET (4u << 20)
#define ACCEPT_BATCH 64
#define PIPE_POOL 64

struct conn {
	enum st st;
	uint32_t gen;
	int cfd, ufd;
	uint32_t cmask, umask; /* registered epoll interest */
	bool cdead, udead;     /* hung up and removed from epoll */
	bool need_auth;
	uint64_t t0;      /* monotonic ms at accept */
	int64_t t0_real;  /* wall ms at accept */
	uint64_t deadline;
	char client[64];
	char *head;
	size_t hlen, hcap;
	struct prx_req req;
	struct host_norm host;
	bool have_host;
	char method[16];
	unsigned port;
	int status;
	const char *decision, *reason;
	char rule[160];
	char why[512];
	struct prx_addrs addrs;
	int ai;
	bool last_timeout;
	struct prx_dir up, down; /* client->upstream, upstream->client */
	size_t lingered;
};

struct listener {
	int fd;
	bool tcp;
};

struct prx_server {
	struct prx_config cfg;
	char secret[128];
	int ep;
	struct listener l[MAX_LISTEN];
	int nl;
	char unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool unix_created;
	struct conn *c;
	unsigned nslots, nactive;
	unsigned *freelist;
	unsigned nfree;
	struct prx_dns *dns;
	uint64_t now, next_scan, tick, accept_resume;
	bool accept_paused;
	bool log_failed;
	/* Empty pipes of closed tunnels, reused: saves six syscalls per
	 * tunnel. Only verifiably empty pipes enter (FIONREAD == 0), so no
	 * byte of one tunnel can ever reach another. */
	int pool[PIPE_POOL][2];
	unsigned npool;
};

/* The text form of an address (no port), for logs and messages. */
void prx_fmt_addr(const struct sockaddr *sa, char *out, size_t cap);

#endif
