/*
 * prx.h - the filtering HTTP proxy: the only road from a caged process to the
 * network.
 *
 * It serves CONNECT and absolute-form http:// requests, asks a policy for
 * every (host, port), refuses internal addresses that no rule names, and
 * relays allowed traffic (splice(2) through a pipe on Linux). Everything is
 * bounded: head size and time, idle time, connection count, descriptors.
 * The server is one object owned by its caller; nothing here is global.
 *
 * The caller must ignore SIGPIPE (prx_server_run refuses to start otherwise,
 * since splice(2) into a closed socket raises it) and hands in a descriptor
 * that becomes readable when the server should stop (a signalfd or the read
 * end of a self-pipe), or when a hook in the configuration should look.
 *
 * The server owns every descriptor it is given (adopted listeners) from the
 * moment of the call, also when the call fails; log_fd and stop_fd stay the
 * caller's.
 */
#ifndef CAGE_PRX_H
#define CAGE_PRX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "host.h"

struct prx_verdict {
	bool allowed;
	/* Where the deciding rule is ("policy.cage:12:5"); "" = no rule matched
	 * (default deny). */
	char rule[160];
};

/* The policy the proxy enforces. Both calls must be fast, must not block,
 * and must not keep the pointers they are given. */
struct prx_policy {
	void *ctx;
	/* A normalised name or IP literal, and a port. */
	void (*host)(void *ctx, const struct host_norm *h, unsigned port, struct prx_verdict *v);
	/* An address a name resolved to: allowed only if a rule names this very
	 * address (an IP-literal rule). Used for internal addresses. */
	void (*addr)(void *ctx, const struct sockaddr *sa, unsigned port, struct prx_verdict *v);
};

struct cpt_table;
/* The policy a compiled rule table answers (prx_cpt.c); the table must
 * outlive the server. */
struct prx_policy prx_policy_of_table(const struct cpt_table *t);

struct prx_limits {
	size_t max_head;            /* request head bytes (431 beyond) */
	size_t max_line;            /* request line bytes (414 beyond) */
	unsigned max_headers;       /* header fields (431 beyond) */
	unsigned header_timeout_ms; /* whole head must arrive in this (408) */
	unsigned connect_timeout_ms; /* per upstream address (504) */
	unsigned idle_timeout_ms;   /* tunnel without traffic is closed */
	unsigned max_conns;         /* concurrent client connections (503 beyond) */
	size_t pipe_size;           /* splice pipe size for bulk directions; 0 = kernel default */
	unsigned pipe_pool;         /* empty pipes kept for reuse, at most 64 */
	bool no_splice;             /* force the read/write relay */
};

/* Defaults: 16 KiB head, 8 KiB line, 100 fields, 10 s head, 10 s connect,
 * 300 s idle, 1024 connections, 64 pooled pipes, 1 MiB bulk pipes. */
void prx_limits_default(struct prx_limits *l);

/* The descriptors a server with `conns` connection slots may hold at once:
 * two sockets and two pipes per tunnel, plus listeners, resolver and
 * event descriptors. prx_server_new refuses a soft limit below it. */
static inline unsigned long long prx_fds_needed(unsigned conns)
{
	return (unsigned long long)conns * 6 + 32;
}

struct prx_resolver;

struct prx_config {
	struct prx_policy policy;
	struct prx_limits limits;
	const struct prx_resolver *overrides; /* --resolve entries; may be NULL */
	int log_fd;         /* JSON-lines access log, -1 for none; not owned */
	/* One line per denied request, for a person (the 403's body: host,
	 * port, deciding rule or why), -1 for none; not owned. */
	int notice_fd;
	const char *secret; /* required for TCP listeners; copied */
	/* Called (on the loop's thread) whenever stop_fd is readable: true
	 * stops serving, false goes on. It must consume what made stop_fd
	 * readable (read the signalfd), or it is called again at once. NULL:
	 * a readable stop_fd stops the server. */
	bool (*on_stop_fd)(void *ctx);
	void *stop_ctx;
};

struct prx_server;

/* Errors are returned as text in err (always NUL-terminated). */
struct prx_server *prx_server_new(const struct prx_config *cfg, char *err, size_t errlen);
/* Listens on "127.0.0.1:PORT" (PORT 0 = any); the bound address is written
 * to bound ("127.0.0.1:41234"). Only loopback addresses are accepted. */
bool prx_server_listen_tcp(struct prx_server *s, const char *hostport, char *bound,
			   size_t boundlen, char *err, size_t errlen);
/* Listens on a unix socket at path (mode 0600). Its directory must belong to
 * us and be closed to group and others, so nobody else can reach it. */
bool prx_server_listen_unix(struct prx_server *s, const char *path, char *err,
			    size_t errlen);
/* Serves connections accepted on fd, a stream socket the caller has made
 * listen already: TCP bound to a loopback address (of any network
 * namespace: a sandbox makes one inside its own and passes it out with
 * SCM_RIGHTS), or a unix socket. The server takes fd (also on failure),
 * makes it non-blocking and close-on-exec. need_auth: every request must
 * carry the per-run secret, as on prx_server_listen_tcp; false when only
 * the sandbox can reach the socket. */
bool prx_server_adopt_listener(struct prx_server *s, int fd, bool need_auth, char *err,
			       size_t errlen);
/* Connections accepted on fd (a listening TCP socket on a loopback address,
 * taken as above) are connected to dst (IPv4 or IPv6, with a port) and
 * relayed as raw bytes both ways: no HTTP, no secret, no policy question;
 * the caller decided when it made the forward. The relay, limits, idle
 * time-out and access log are a tunnel's; the log record has method
 * "FORWARD". A failed connect closes the client connection. */
bool prx_server_adopt_forward(struct prx_server *s, int fd, const struct sockaddr *dst,
			      socklen_t dstlen, char *err, size_t errlen);
/* At most this many listeners of all kinds per server. */
#define PRX_MAX_LISTENERS 64

/* Serves until stop_fd is readable (and on_stop_fd, if set, says stop).
 * Returns false with err on a fatal error. */
bool prx_server_run(struct prx_server *s, int stop_fd, char *err, size_t errlen);
/* Closes every descriptor the server owns and removes its unix socket. */
void prx_server_free(struct prx_server *s);

/* The rule text of a denial for an internal address no rule allows. */
#define PRX_DENY_INTERNAL "resolves only to internal addresses"
/* Reports the denied requests (403s) counted since the server was made, one
 * call per (host, port, deciding rule), most frequent first, ties in the
 * order first seen. rule: where the denying rule is ("policy.cage:12:5"),
 * "" when no rule allowed it (default deny), PRX_DENY_INTERNAL when the
 * name was allowed but resolved only to internal addresses. At most 256
 * keys are kept; denials beyond them are reported last in one call with
 * host "" and port 0. */
void prx_server_denials(const struct prx_server *s,
			void (*cb)(void *ctx, const char *host, unsigned port,
				   unsigned long count, const char *rule),
			void *ctx);

/* The same, for a person: "PREFIXhosts the policy denied:" and one line
 * per (host, port, rule) with its count; nothing when there was no
 * denial. */
void prx_server_print_denials(const struct prx_server *s, FILE *out, const char *prefix);

/* ---- --resolve overrides (prx_resolve.c) ---- */
struct prx_resolver *prx_resolver_new(void);
void prx_resolver_free(struct prx_resolver *r);
/* "host:port:addr[,addr...]" as curl's --resolve; addr may be [v6]. */
bool prx_resolver_add(struct prx_resolver *r, const char *spec, char *err, size_t errlen);

#endif
