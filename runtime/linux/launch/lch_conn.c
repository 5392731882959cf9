/*
 * lch_conn.c - one client, in the spare that accepted it (see lch_conn.h).
 *
 * Each step waits for the client only as long as LCH_REQUEST_MS allows
 * from the accept; a client that is refused, leaves, or is too slow ends
 * the spare without a run (the launcher forks another). From the RUN
 * note on, the spare is the run: the launcher relays the client's
 * signals to it and reaps it.
 */
#include "lch_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lch_ahead.h"
#include "lch_wire.h"
#include "run.h"

/* A client that connected and sent nothing is dropped after this. */
#define LCH_REQUEST_MS 5000

extern char **environ;

struct request {
	const struct lch_req *h;
	char **argv, **envp; /* into the request's bytes, NULL-ended (heap arrays) */
	int fds[LCH_NFDS];
};

/* Whether conn has something to read before the deadline. */
static bool readable_by(int conn, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - lch_now_ms();
		if (left <= 0)
			return false;
		struct pollfd p = { conn, POLLIN, 0 };
		int n = poll(&p, 1, (int)left);
		if (n > 0)
			return true;
		if (n == 0 || errno != EINTR)
			return false;
	}
}

/* The request's strings: exactly argc + envc NUL-ended ones. */
static bool split_strings(struct request *rq, const char *p, size_t n, char *why, size_t whylen)
{
	uint32_t argc = rq->h->argc, envc = rq->h->envc;
	rq->argv = calloc((size_t)argc + 1, sizeof *rq->argv);
	rq->envp = calloc((size_t)envc + 1, sizeof *rq->envp);
	if (!rq->argv || !rq->envp) {
		snprintf(why, whylen, "out of memory");
		return false;
	}
	size_t off = 0;
	for (uint32_t i = 0; i < argc + envc; i++) {
		const char *nul = off < n ? memchr(p + off, '\0', n - off) : NULL;
		if (!nul) {
			snprintf(why, whylen, "a malformed request");
			return false;
		}
		char *str = (char *)(p + off);
		if (i < argc)
			rq->argv[i] = str;
		else
			rq->envp[i - argc] = str;
		off = (size_t)(nul - p) + 1;
	}
	if (off != n) {
		snprintf(why, whylen, "a malformed request");
		return false;
	}
	rq->argv[0] = (char *)"cagerun"; /* what it runs, whatever the client calls itself */
	return true;
}

/* A request's header, as it must be for n bytes in all. */
static bool header_ok(const uint8_t *b, size_t n)
{
	const struct lch_req *h = (const struct lch_req *)b;
	return n >= sizeof *h && h->type == LCH_REQUEST && h->magic == LCH_MAGIC &&
	       h->version == LCH_VERSION && h->argc >= 1 && h->argc <= LCH_MAX_ARGS &&
	       h->envc <= LCH_MAX_ENV && h->strings == n - sizeof *h;
}

/* GREET: the client's memfd number; it is opened through /proc/PID/fd
 * and sent back with HELLO, with the number of the launcher's own. */
static bool greet(const struct lch_ctx *cx, int conn, const struct lch_peer *peer,
		  int64_t deadline, char *why, size_t whylen)
{
	struct lch_msg m;
	ssize_t n = -1;
	if (readable_by(conn, deadline))
		while ((n = recv(conn, &m, sizeof m, MSG_DONTWAIT)) < 0 && errno == EINTR)
			;
	if (n != (ssize_t)sizeof m || m.type != LCH_GREET) {
		snprintf(why, whylen, n == 0 ? "it left before its request"
				      : n < 0 ? "it sent nothing in time"
					      : "a malformed greeting");
		return false;
	}
	int fd = lch_peer_open_fd(peer, m.fd, why, whylen);
	if (fd < 0)
		return false;
	bool sent = lch_send_msg(conn, LCH_HELLO, 0, NULL, fd, cx->me.proof_fd);
	close(fd);
	if (!sent)
		snprintf(why, whylen, "it left before its request");
	return sent;
}

static bool read_request(const struct lch_ctx *cx, int conn, int64_t deadline, uint8_t *buf,
			 size_t bufsize, struct request *rq, char *why, size_t whylen)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * LCH_NFDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf, bufsize };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	ssize_t n = -1;
	if (readable_by(conn, deadline))
		while ((n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT)) < 0 && errno == EINTR)
			;
	if (n <= 0) {
		snprintf(why, whylen, n == 0 ? "it left before its request" : "it sent no request in time");
		return false;
	}
	size_t nfds = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
			if (nfds < LCH_NFDS)
				rq->fds[nfds++] = fd;
			else
				close(fd);
		}
	}
	rq->h = (const struct lch_req *)buf;
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || nfds != LCH_NFDS ||
	    !header_ok(buf, (size_t)n)) {
		snprintf(why, whylen, "a malformed request");
		return false;
	}
	if (!lch_peer_proof(&cx->me, rq->fds[LCH_FD_PROOF], why, whylen))
		return false;
	struct stat st;
	if (fstat(rq->fds[LCH_FD_CWD], &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "its working directory did not come over");
		return false;
	}
	for (int r = 0; r < LCH_NLIMITS; r++) {
		if (rq->h->limits[r].max > (uint64_t)cx->limits[r].rlim_max) {
			snprintf(why, whylen, "its hard limit %d is above the launcher's", r);
			return false;
		}
	}
	return split_strings(rq, (const char *)buf + sizeof *rq->h, rq->h->strings, why, whylen);
}

bool lch_replaced(void)
{
	char exe[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n < 0)
		return true;
	exe[n] = '\0';
	static const char tail[] = " (deleted)";
	return (size_t)n >= sizeof tail - 1 && !strcmp(exe + n - (sizeof tail - 1), tail);
}

/* After the run, its request and directory to the launcher, which keeps
 * a compile of it for the spares it forks next (lch_kept_make): the
 * request's bytes, then "DIR\0", in a memfd. Nothing is lost but that
 * readying if it does not go. */
static void tell_request(const struct lch_ctx *cx, int chan, const struct request *rq,
			 const struct run_held *held)
{
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return;
	int fd = memfd_create("cage-request", MFD_CLOEXEC);
	if (fd < 0)
		return;
	size_t n = sizeof *rq->h + rq->h->strings, c = strlen(cwd) + 1;
	int32_t kept = !held ? LCH_KEPT_NONE
		       : cx->o->fns->taken && cx->o->fns->taken(held) ? LCH_KEPT_USED
							     : LCH_KEPT_UNUSED;
	if (write(fd, rq->h, n) == (ssize_t)n && write(fd, cwd, c) == (ssize_t)c)
		(void)lch_note_send(chan, LCH_NOTE_REQUEST, kept, fd);
	close(fd);
}

void lch_kept_make(struct lch_kept *k, const struct lch_opts *o, uint8_t *bytes, size_t len)
{
	k->bytes = bytes;
	k->len = len;
	/* The launcher's copy is its own allocation: the header is aligned. */
	const struct lch_req *h = (const struct lch_req *)bytes;
	size_t n = len > sizeof *h ? sizeof *h + h->strings : 0;
	if (!n || n >= len || bytes[len - 1] != '\0' || !o->fns->prepare || !header_ok(bytes, n))
		return;
	struct request rq;
	memset(&rq, 0, sizeof rq);
	rq.h = h;
	char why[LCH_MAX_REASON];
	bool split = split_strings(&rq, (const char *)bytes + sizeof *h, h->strings, why, sizeof why);
	k->argv = rq.argv;
	k->envp = rq.envp;
	const char *cwd = (const char *)bytes + n;
	if (!split || memchr(cwd, '\0', len - n) != bytes + len - 1)
		return; /* one directory, whole */
	k->held = o->fns->prepare((int)h->argc, rq.argv, rq.envp, cwd);
}

void lch_kept_free(struct lch_kept *k, const struct lch_opts *o)
{
	if (k->held && o->fns->release)
		o->fns->release(k->held);
	free(k->argv);
	free(k->envp);
	free(k->bytes);
	memset(k, 0, sizeof *k);
}

/* Become the client's process, then run. */
static _Noreturn void run_request(const struct lch_ctx *cx, int conn, int chan,
				  const struct request *rq, struct run_ahead *ahead,
				  struct run_held *held)
{
	/* Left by the spare: its session, unblocked signals, PDEATHSIG. The
	 * one disposition the launcher changed (lch_serve) goes back. */
	signal(SIGPIPE, SIG_DFL);
	for (int i = 0; i < 3; i++)
		if (dup2(rq->fds[i], i) != i)
			_exit(125);
	if (fchdir(rq->fds[LCH_FD_CWD]) != 0) {
		fprintf(stderr, "cagerun: launcher: cannot enter the working directory: %s\n",
			strerror(errno));
		_exit(125);
	}
	/* The connection and the socket pair to 3 and 4 (through numbers
	 * above both, so neither overwrites the other), close-on-exec: the
	 * sandbox's command never has them. Then nothing else. */
	int hi_conn = fcntl(conn, F_DUPFD_CLOEXEC, 16);
	int hi_chan = fcntl(chan, F_DUPFD_CLOEXEC, 16);
	if (hi_conn < 0 || hi_chan < 0 || dup3(hi_conn, 3, O_CLOEXEC) != 3 ||
	    dup3(hi_chan, 4, O_CLOEXEC) != 4)
		_exit(125);
	/* The namespaces made ahead keep theirs, from 5 on; unused, they go
	 * back to the launcher on the pair. */
	int next = lch_ahead_renumber(&ahead, 5);
	lch_ahead_return_to(ahead, 4);
	(void)syscall(SYS_close_range, (unsigned)next, ~0u, 0u);
	/* The run's answer (run.h): the note first, so that the launcher
	 * knows the status was sent by the time the client, having read it,
	 * leaves; then STATUS. */
	struct run_status_msg msgs[RUN_STATUS_MSGS];
	memset(msgs, 0, sizeof msgs);
	struct lch_note note = { .type = LCH_NOTE_STATUS };
	struct lch_msg st = { .type = LCH_STATUS };
	_Static_assert(sizeof note <= RUN_STATUS_MSG_MAX && sizeof st <= RUN_STATUS_MSG_MAX,
		       "a status message fits");
	msgs[0] = (struct run_status_msg){ .fd = 4, .len = sizeof note, .code_at = -1 };
	memcpy(msgs[0].bytes, &note, sizeof note);
	msgs[1] = (struct run_status_msg){ .fd = 3, .len = sizeof st,
					   .code_at = (int)offsetof(struct lch_msg, value) };
	memcpy(msgs[1].bytes, &st, sizeof st);
	const struct run_status_hook hook = { msgs, RUN_STATUS_MSGS, ahead, held };
	umask((mode_t)(rq->h->umask & 0777));
	for (int r = 0; r < LCH_NLIMITS; r++) {
		struct rlimit rl = { (rlim_t)rq->h->limits[r].cur, (rlim_t)rq->h->limits[r].max };
		if (rl.rlim_cur == cx->limits[r].rlim_cur && rl.rlim_max == cx->limits[r].rlim_max)
			continue; /* inherited as it is */
		if (setrlimit(r, &rl) != 0 && errno != EINVAL) {
			fprintf(stderr, "cagerun: launcher: cannot set limit %d: %s\n", r,
				strerror(errno));
			_exit(125);
		}
	}
	environ = rq->envp;
	optind = 0; /* getopt from the start, as in a fresh process */
	int argc = (int)rq->h->argc;
	int rc = cx->o->fns->run(argc, rq->argv, &hook);
	tell_request(cx, 4, rq, held);
	exit(rc);
}

_Noreturn void lch_conn_serve(const struct lch_ctx *cx, int conn, int chan, uint8_t *buf,
			      size_t bufsize, struct run_ahead *ahead, struct run_held *held)
{
	int64_t deadline = lch_now_ms() + LCH_REQUEST_MS;
	char why[LCH_MAX_REASON];
	struct lch_peer peer;
	struct lch_cgroup cg; /* this spare's: where the run will be */
	struct request rq;
	memset(&rq, 0, sizeof rq);
	for (int i = 0; i < LCH_NFDS; i++)
		rq.fds[i] = -1;
	if (!lch_peer_check(&cx->me, conn, &peer, &cg, why, sizeof why)) {
		lch_say("refused a client: %s", why);
		lch_refuse_close(conn, why);
		_exit(0);
	}
	bool ok = greet(cx, conn, &peer, deadline, why, sizeof why) &&
		  read_request(cx, conn, deadline, buf, bufsize, &rq, why, sizeof why);
	if (ok && lch_replaced()) {
		/* It would run the old program, which finds its standard
		 * library and helpers beside itself: gone. */
		snprintf(why, sizeof why, "the launcher's program was replaced since it started; "
					  "restart it");
		ok = false;
	}
	if (ok && !lch_peer_alive(&peer)) {
		snprintf(why, sizeof why, "it is gone");
		ok = false;
	}
	/* The launcher takes the connection before the client hears ACCEPT:
	 * from then on the client's signals and its leaving go to it. */
	if (ok && !lch_note_send(chan, LCH_NOTE_RUN, (int32_t)peer.pid, conn)) {
		snprintf(why, sizeof why, "the launcher is stopping");
		ok = false;
	}
	if (!ok) {
		lch_say("refused pid %d: %s", (int)peer.pid, why);
		lch_refuse_close(conn, why);
		_exit(0);
	}
	if (cx->o->verbose)
		lch_say("pid %d: started %s", (int)peer.pid, rq.argv[0]);
	lch_send_msg(conn, LCH_ACCEPT, 0, NULL, -1, -1); /* a client gone hears nothing */
	lch_peer_close(&peer);
	run_request(cx, conn, chan, &rq, ahead, held);
}
