/*
 * lch_wire.h - what the launcher's processes (lch_server.c, lch_spare.c,
 * lch_conn.c) all say and how: a message to a client, a refusal, a line
 * on the launcher's standard error, and the notes a spare sends the
 * launcher about the client it took (lch_spare.h).
 */
#ifndef CAGE_LCH_WIRE_H
#define CAGE_LCH_WIRE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* One message to a client; fd >= 0 goes with it, and its number in the
 * sender as m.fd is fdnum. */
bool lch_send_msg(int conn, uint8_t type, uint8_t value, const char *text, int fd, int fdnum);
/* REFUSE, then close. */
void lch_refuse_close(int conn, const char *why);
/* CLOCK_MONOTONIC in milliseconds, for the launcher's bounds. */
int64_t lch_now_ms(void);
/* "cagerun launcher: ..." on standard error. */
void lch_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* From a spare to the launcher, on the spare's socket pair. */
enum lch_note_type {
	LCH_NOTE_TAKEN = 'T',  /* it accepted a client: fork the next spare */
	LCH_NOTE_RUN = 'R',    /* the client's request passed: its run starts; with
				  the client's connection (for its signals and its
				  leaving) */
	LCH_NOTE_STATUS = 'S', /* the run sent the client its STATUS itself */
	LCH_NOTE_REQUEST = 'Q', /* the run is over: its request and directory, in a
				   memfd (lch_kept_make), for the next spares;
				   `client` says what became of the compile the
				   launcher kept (enum lch_kept_use) */
	LCH_NOTE_NS = 'N',     /* a namespace of the set the run did not use
				  (lch_ahead.h), with its descriptor; `client`
				  says which, LCH_NS_NET last */
};

enum lch_ns_part { LCH_NS_USER, LCH_NS_LISTEN, LCH_NS_NET };

/* LCH_NOTE_REQUEST: the run's spare had no compile (forked before the
 * launcher made one), or had one and did not use it (stale, or made for
 * another policy, environment or directory), or used it. */
enum lch_kept_use { LCH_KEPT_NONE, LCH_KEPT_UNUSED, LCH_KEPT_USED };

struct lch_note {
	uint8_t type;
	uint8_t pad[3];
	int32_t client; /* the client's pid, for the launcher's lines */
};

bool lch_note_send(int chan, uint8_t type, int32_t client, int fd);

/* From the launcher to a run whose client left before its status: stop
 * the sandbox now (init is killed), then clean up and end as after any
 * run, so that its TMPDIR and cgroups go too. One of the real-time
 * signals the C library leaves to programs (the run's word is
 * SIGRTMIN + 4, lnx_run.c); a run that has not blocked it yet (it has
 * made nothing to clean up) ends by its default action. */
#define LCH_ABORT_SIG (SIGRTMIN + 5)
/* How long the launcher waits for such a run before it kills it. */
#define LCH_ABORT_MS 2000

#endif
