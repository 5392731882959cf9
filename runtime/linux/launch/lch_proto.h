/*
 * lch_proto.h - what the launcher (lch_server.c) and its client
 * (client/lch_client_main.c) say to each other over one SOCK_SEQPACKET
 * connection. Shared by both sides and free of libc, since the client is
 * built without one (docs/launcher.md has the whole exchange):
 *
 *   client -> server  GREET, right after connecting: the number of a
 *                     memfd only the client holds (msg.fd)
 *   server -> client  HELLO, with one descriptor: the server's open of
 *                     /proc/CLIENT/fd/N, that memfd (so it could look at
 *                     the client), and the number of its own (msg.fd);
 *                     or REFUSE with a reason
 *   client -> server  REQUEST: struct lch_req, then argv and environ as
 *                     NUL-ended strings; descriptors 0, 1, 2, the working
 *                     directory and the client's open of the server's
 *                     memfd through /proc/SERVER/fd/M
 *   server -> client  ACCEPT (the run started) or REFUSE
 *   client -> server  SIGNAL, any number, while the run goes on
 *   run -> client     STATUS, the run's exit status, from the run's own
 *                     process before its clean-up (or from the server
 *                     when the run died without it); it may come before
 *                     ACCEPT, and then stands for both
 *
 * Everything before ACCEPT that goes wrong makes the client start cagerun
 * itself with the same arguments; nothing ever runs without a sandbox
 * because of it.
 */
#ifndef CAGE_LCH_PROTO_H
#define CAGE_LCH_PROTO_H

#include <stdint.h>

#define LCH_MAGIC 0x31474c43u /* "CLG1" */
#define LCH_VERSION 1u

enum lch_type {
	LCH_GREET = 'G',
	LCH_HELLO = 'H',
	LCH_REFUSE = 'R',
	LCH_REQUEST = 'Q',
	LCH_ACCEPT = 'A',
	LCH_SIGNAL = 'K',
	LCH_STATUS = 'S',
};

/* The resource limits carried over, in this order (RLIMIT_* numbers). */
#define LCH_NLIMITS 16

/* Descriptors sent with REQUEST, in this order. */
enum { LCH_FD_STDIN, LCH_FD_STDOUT, LCH_FD_STDERR, LCH_FD_CWD, LCH_FD_PROOF, LCH_NFDS };

/* Bounds: a request is one message, so it must fit the socket's buffer. */
#define LCH_MAX_REQUEST (120u * 1024u)
#define LCH_MAX_ARGS 4096u
#define LCH_MAX_ENV 4096u
#define LCH_MAX_REASON 200u

struct lch_req {
	uint8_t type; /* LCH_REQUEST */
	uint8_t pad[3];
	uint32_t magic, version;
	uint32_t argc, envc;
	uint32_t umask;
	uint32_t strings; /* bytes of strings after this header */
	uint32_t pad2;
	struct { uint64_t cur, max; } limits[LCH_NLIMITS];
};

/* GREET and HELLO (fd: a descriptor number in the sender), ACCEPT,
 * REFUSE (with text), SIGNAL (value: the signal), STATUS (value: the exit
 * status, 0 to 255). */
struct lch_msg {
	uint8_t type;
	uint8_t value;
	uint8_t pad[2];
	int32_t fd;
	char text[LCH_MAX_REASON];
};

#endif
