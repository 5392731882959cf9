/*
 * lnx_observe.h - monitor mode's observer on Linux: a seccomp
 * user-notification filter over the command's whole process tree for the
 * system calls that name files, execute, or address a socket, and a
 * supervisor thread in cagerun that reads each call's path or address from
 * the tracee, resolves it through /proc, hands it to the monitor sink and
 * lets the call continue unchanged.
 *
 * Nothing is enforced: every call is answered with CONTINUE, so the usual
 * time-of-check/time-of-use race of user notification (the tracee can change
 * the memory after we read it) can only make a record wrong, never let
 * anything through that was not going through anyway.
 */
#ifndef CAGE_LNX_OBSERVE_H
#define CAGE_LNX_OBSERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mon_sink;
struct lnx_observer;

/* In the child (no_new_privs set): installs the filter and returns the
 * listener descriptor, or -1 with err. net: also the socket calls
 * (monitor mode); without them, sendmsg can hand the listener over. */
int lnx_observe_install(bool net, char *err, size_t errlen);
/* The calls that filter watches, for a supervisor that hosts the observer
 * beside other handlers in one filter (one listener per process tree).
 * Returns their count, 0 when max is too small. */
struct lnx_notify_rule;
size_t lnx_observe_rules(bool net, struct lnx_notify_rule *rules, size_t max);

/* In cagerun: serves the listener on a thread of its own. skip_port: a
 * loopback TCP port whose connects are not recorded (the proxy's own). The
 * observer owns listen_fd from this call on. The thread waits inside the
 * kernel's receive call, and lnx_observer_stop interrupts that wait with
 * SIGRTMIN+3: this installs a handler for it (that does nothing) and
 * blocks it in the calling thread, so that only the observer's thread
 * ever takes it. */
struct lnx_observer *lnx_observer_start(int listen_fd, struct mon_sink *sink,
					unsigned skip_port, char *err, size_t errlen);
/* The observer on a notification loop someone else serves (the create
 * guard's supervisor): it sees every notification there, before its
 * handler. NULL on allocation failure. */
struct lnx_notify;
struct lnx_observer *lnx_observer_attach(struct lnx_notify *nt, struct mon_sink *sink,
					 unsigned skip_port);
/* Stops the thread and closes the listener (an attached observer leaves
 * the loop alone). NULL is fine. */
void lnx_observer_stop(struct lnx_observer *o);

#endif
