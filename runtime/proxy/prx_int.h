/*
 * prx_int.h - the proxy's internal pieces shared by its files: one relay
 * direction (prx_relay.c), the access log record (prx_log.c) and the override
 * table and resolver thread (prx_resolve.c). Not part of the library's API.
 */
#ifndef CAGE_PRX_INT_H
#define CAGE_PRX_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "prx.h"

/* ---- relay ---- */

/* One direction of a tunnel, src -> dst. Bytes already in user space (the
 * "200" answer, a rewritten request head, early tunnel bytes) go first from
 * buf; after that the data moves through the pipe with splice(2), or through
 * buf with read/write when splicing is off or no pipe could be had. */
struct prx_dir {
	char *buf;
	size_t off, len, cap;
	int pipe[2];
	size_t inpipe;   /* bytes sitting in the pipe */
	bool eof;        /* src said EOF */
	bool shut;       /* dst got shutdown(SHUT_WR) */
	bool rd_wait;    /* waiting for src to become readable */
	bool wr_wait;    /* waiting for dst to become writable */
	bool budget;     /* stopped by the byte budget, not by EAGAIN */
	uint64_t bytes;  /* read from src */
	size_t grow_to;  /* pipe size once the direction proves to be bulk */
	bool grown;
};

enum prx_pump { PRX_PUMP_BLOCKED, PRX_PUMP_DONE, PRX_PUMP_ERROR };

void prx_dir_init(struct prx_dir *d);
/* Gives the direction a new pipe; false (and read/write mode) if none. */
bool prx_dir_use_pipe(struct prx_dir *d);
/* Appends bytes to be written before anything else. */
bool prx_dir_queue(struct prx_dir *d, const char *p, size_t n);
/* Moves bytes until src or dst would block, at most `budget` bytes so one
 * busy tunnel cannot starve the others. DONE: EOF relayed and dst shut. */
enum prx_pump prx_dir_pump(struct prx_dir *d, int src, int dst, size_t budget);
/* Writes only the queued bytes (an answer before closing). */
enum prx_pump prx_dir_flush(struct prx_dir *d, int dst);
void prx_dir_free(struct prx_dir *d);

/* ---- access log ---- */

struct prx_logrec {
	int64_t start_real_ms; /* wall clock, ms since the epoch */
	uint64_t duration_ms;
	const char *client;
	const char *method; /* NULL before the request line was read */
	const char *host;
	unsigned port;
	const char *decision; /* "allow", "deny", "error" */
	int status;
	const char *rule;   /* location, "" or NULL = none */
	const char *reason; /* why, for deny/error; NULL otherwise */
	uint64_t bytes_up, bytes_down;
};

/* One JSON line, written with a single write(2). False on a write error. */
bool prx_log_write(int fd, const struct prx_logrec *r);

/* ---- resolution ---- */

#define PRX_MAX_ADDRS 8

struct prx_addrs {
	int n;
	struct sockaddr_storage a[PRX_MAX_ADDRS];
	socklen_t len[PRX_MAX_ADDRS];
};

/* Looks up an override for (normalised name, port). */
bool prx_resolver_find(const struct prx_resolver *r, const char *name, unsigned port,
		       struct prx_addrs *out);

/* Lookups (getaddrinfo() in the cage-lookup helper, lookup.h) block, so
 * they run on a small pool of threads: a slow DNS server stalls one
 * request, not the event loop. Results come back through
 * an eventfd; each job carries the caller's tag so a reply for a connection
 * that has gone away is recognised and dropped. */
struct prx_dns;
struct prx_dns *prx_dns_new(char *err, size_t errlen);
int prx_dns_fd(const struct prx_dns *d);
/* 0, or EAGAIN when the queue is full, or why no resolver thread could be
 * started (the first lookup starts one). */
int prx_dns_submit(struct prx_dns *d, uint64_t tag, const char *name, unsigned port);
/* Takes one finished job; false when there is none. *gai_err is 0 or EAI_*;
 * for EAI_SYSTEM, why says what kept the helper from answering. */
bool prx_dns_take(struct prx_dns *d, uint64_t *tag, struct prx_addrs *out, int *gai_err,
		  char *why, size_t whylen);
void prx_dns_free(struct prx_dns *d);

#endif
