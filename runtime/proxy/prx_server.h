/*
 * prx_server.h - the proxy server object, its listeners and connection
 * slots, and the functions its files call in one another. Internal to
 * libcage. Who does what:
 *
 *   prx_server.c    the object: limits, creation, release
 *   prx_loop.c      the event loop, dispatch of events, time-outs
 *   prx_listen.c    listeners: created, adopted, forwards
 *   prx_accept.c    a new connection: slot, client name, first step
 *   prx_request.c   request head, decision, resolution, address filter
 *   prx_upstream.c  connecting upstream, address after address
 *   prx_tunnel.c    relaying both directions of a tunnel
 *   prx_conn.c      event interest, pipes, answers, closing and logging
 *   prx_denials.c   the summary of denied destinations
 */
#ifndef CAGE_PRX_SERVER_H
#define CAGE_PRX_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>

#include "prx_http.h"
#include "prx_int.h"
#include "prx_ev.h"

enum st { ST_FREE, ST_HEAD, ST_RESOLVING, ST_CONNECTING, ST_TUNNEL, ST_LINGER };

#define SIDE_CLIENT 0u
#define SIDE_UP 1u
#define TAG_SPECIAL (1ull << 63)
#define TAG_STOP (TAG_SPECIAL | 1)
#define TAG_DNS (TAG_SPECIAL | 2)
#define TAG_LISTEN (TAG_SPECIAL | 16) /* + listener index */
#define MAX_LISTEN PRX_MAX_LISTENERS
#define LINGER_MS 1000
#define LINGER_BYTES (256u * 1024)
#define PUMP_BUDGET (4u << 20)
#define ACCEPT_BATCH 64
#define PIPE_POOL 64

struct conn {
	enum st st;
	uint32_t gen;
	int cfd, ufd;
	uint32_t cmask, umask; /* registered event interest */
	bool cdead, udead;     /* hung up and removed from the event set */
	bool need_auth;
	bool forward;     /* a raw tunnel from a forward listener: no HTTP */
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
	bool need_auth; /* every request must carry the per-run secret */
	bool inet;      /* TCP: clients are named by address, Nagle is off */
	bool forward;   /* connections go as raw tunnels to dst */
	struct sockaddr_storage dst;
	socklen_t dstlen;
};

/* Denied destinations, counted for the summary (prx_denials.c). */
#define DENY_MAX 256 /* as documented in prx.h */
struct denial {
	unsigned long count;
	unsigned port;
	char host[HOST_NAME_MAX_LEN + 1];
	char rule[160];
};

struct prx_server {
	struct prx_config cfg;
	char secret[128];
	struct prx_ev *ev;
	struct listener l[MAX_LISTEN];
	int nl;
	char unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool unix_created;
	/* Slots are set up when first needed: a short session never pays
	 * for (or keeps resident) the thousand it could have. c[0..nslots)
	 * are set up, c[nslots..maxslots) are still zero. */
	struct conn *c;
	unsigned nslots, maxslots, nactive;
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
	struct denial *deny; /* DENY_MAX entries, in first-seen order */
	unsigned ndeny;
	unsigned long deny_other; /* denials beyond the first DENY_MAX keys */
};

/* The text form of an address (no port), for logs and messages. */
void prx_fmt_addr(const struct sockaddr *sa, char *out, size_t cap);
/* The port of an AF_INET or AF_INET6 address. */
unsigned prx_addr_port(const struct sockaddr *sa);

/* ---- prx_loop.c ---- */
uint64_t prx_mono_ms(void);
int64_t prx_real_ms(void);

/* ---- prx_conn.c ---- */
/* The event tag of one side of a slot: generation, slot, side. */
uint64_t prx_tag_of(const struct prx_server *s, const struct conn *c, unsigned side);
bool prx_ep_set(struct prx_server *s, struct conn *c, unsigned side, uint32_t mask);
bool prx_ep_add(struct prx_server *s, struct conn *c, unsigned side, uint32_t mask);
/* A pipe for a direction, from the pool if one is there. */
void prx_pipe_get(struct prx_server *s, struct prx_dir *d);
/* Frees a direction, keeping its pipe in the pool if it is empty. */
void prx_pipe_release(struct prx_server *s, struct prx_dir *d);
/* Logs the connection, closes its sockets and frees its slot. */
void prx_conn_close(struct prx_server *s, struct conn *c);
struct conn *prx_slot_take(struct prx_server *s);
/* Answers with an HTTP status and closes gently (ST_LINGER). */
void prx_respond(struct prx_server *s, struct conn *c, int status, const char *decision,
		 const char *reason, const char *extra, const char *body);
void prx_respond_text(struct prx_server *s, struct conn *c, int status, const char *decision,
		      const char *reason);
/* Ends a connection that failed before its tunnel: an HTTP answer for a
 * proxy client, a plain close for a forwarded one (it speaks no HTTP). */
void prx_conn_fail(struct prx_server *s, struct conn *c, int status, const char *reason);
void prx_linger_event(struct prx_server *s, struct conn *c);

/* ---- prx_accept.c ---- */
void prx_accept_event(struct prx_server *s, struct listener *l);

/* ---- prx_request.c ---- */
void prx_head_event(struct prx_server *s, struct conn *c);
void prx_dns_event(struct prx_server *s);

/* ---- prx_upstream.c ---- */
/* Tries c->addrs from c->ai on; the tunnel starts on the first that
 * connects, the client gets 502/504 when none does. */
void prx_connect_next(struct prx_server *s, struct conn *c);
void prx_connecting_event(struct prx_server *s, struct conn *c, unsigned side, uint32_t ev);

/* ---- prx_tunnel.c ---- */
void prx_tunnel_start(struct prx_server *s, struct conn *c);
void prx_tunnel_event(struct prx_server *s, struct conn *c, unsigned side, uint32_t ev);

/* ---- prx_denials.c ---- */
/* Counts one denied request for (host, port) decided by rule. */
void prx_denial_note(struct prx_server *s, const char *host, unsigned port, const char *rule);
/* Refuses c's request with 403, counts it and tells the user (notice_fd):
 * decided by the rule at `rule` ("" = no rule, default deny), or because
 * the allowed name resolves only to internal addresses, addr the first. */
void prx_deny_by_rule(struct prx_server *s, struct conn *c, const char *rule);
void prx_deny_internal(struct prx_server *s, struct conn *c, const struct sockaddr *addr);

#endif
