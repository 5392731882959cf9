/*
 * lookup.h - name-service lookups (host names, users' home directories)
 * done in a separate program, cage-lookup, so that cagerun itself can be
 * a static executable.
 *
 * getaddrinfo() and getpwnam() go through glibc's NSS, which loads the
 * system's modules (libnss_files, libnss_dns, sssd's, systemd's) at run
 * time. A static program may only load modules from the exact glibc it
 * was linked with, which a glibc upgrade breaks without a word, so every
 * such lookup is asked of cage-lookup instead: a small dynamically linked
 * program, started on the first lookup and kept for the session, that
 * answers one request at a time over a socket (docs/architecture.md,
 * "Start-up"). The protocol is fixed-size packets on a SOCK_SEQPACKET
 * pair; this header is the one definition both sides include.
 *
 * A lookup that cannot be asked (the helper missing, untrusted, dead)
 * fails like a lookup that found nothing, with the reason in `why`: the
 * proxy then answers 502 and git discovery refuses the path. Nothing is
 * ever resolved some other way.
 */
#ifndef CAGE_LOOKUP_H
#define CAGE_LOOKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- the protocol ---- */

#define LOOKUP_NAME_MAX 255   /* a DNS name is at most 253; a user name less */
#define LOOKUP_MAX_ADDRS 8
#define LOOKUP_HOME_MAX 1024
#define LOOKUP_PROGRAM "cage-lookup"

enum lookup_kind {
	LOOKUP_HOST = 'h', /* getaddrinfo(name), TCP, IPv4 and IPv6 */
	LOOKUP_HOME = 'u', /* getpwnam(name)->pw_dir */
};

/* A request is one packet: the kind byte, then the name without a NUL. */
struct lookup_addr {
	uint8_t family; /* 4 or 6 */
	uint8_t addr[16];
};

/* A reply is exactly one struct lookup_reply. */
struct lookup_reply {
	/* LOOKUP_HOST: 0 or getaddrinfo's EAI_ code (the same constants in
	 * every glibc). LOOKUP_HOME: 0, ENOENT (no such user) or an errno. */
	int32_t err;
	uint32_t naddrs;
	struct lookup_addr addrs[LOOKUP_MAX_ADDRS];
	char home[LOOKUP_HOME_MAX]; /* NUL-terminated */
};

/* ---- the client ---- */

/* One helper process; not shared between threads (each of the proxy's
 * resolver threads has its own). */
struct lookup {
	int sock;  /* -1: not started */
	pid_t pid;
	char why[192]; /* the last failure to ask, for messages */
};

void lookup_init(struct lookup *l);

/* Addresses for a host name: 0, or an EAI_ code. When the helper could
 * not be asked, EAI_SYSTEM with the reason in l->why. */
int lookup_host(struct lookup *l, const char *name, struct lookup_addr *out, size_t cap,
		size_t *n);

/* The home directory of a user: 0, ENOENT when there is no such user, or
 * another errno (the reason in l->why when the helper could not be asked). */
int lookup_home(struct lookup *l, const char *user, char *out, size_t cap);

/* Ends the helper (it exits when its socket closes). */
void lookup_close(struct lookup *l);

/* Where the helper is (helper_path, helper.h). */
bool lookup_helper_path(char *out, size_t cap, char *why, size_t whylen);

#endif
