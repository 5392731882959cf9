/*
 * lch_server.c - the launcher's loop (see lch_server.h, lch_proto.h).
 *
 * One thread, one poll: the listening socket, a signalfd for SIGINT and
 * SIGTERM, and per run its connection and the pidfd of the child that
 * runs it. The child is a fork of this process, usually one forked ahead
 * (a spare, lch_spare.h) and handed the request, that takes on the
 * client's descriptors, directory, environment, umask and limits, leaves
 * this session (so the launcher's terminal is never the command's), and
 * calls cagerun's main; it dies with the launcher (PR_SET_PDEATHSIG), and
 * with it its sandbox. The launcher never runs a command itself, starts
 * no thread (cagerun's clone of the sandbox needs none to exist), and
 * holds nothing of a run but its two descriptors.
 */
#include "lch_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lch_peer.h"
#include "lch_proto.h"
#include "lch_spare.h"
#include "run.h"

/* Runs at once; past it a client is refused (and starts cagerun itself). */
#define LCH_MAX_RUNS 64
/* A client that connected and sent nothing is dropped after this. */
#define LCH_REQUEST_MS 5000
/* Spares kept waiting (lch_spare.h): two, for two launches at once. */
#define LCH_SPARES 2

extern char **environ;

/* A connection goes GREET (peer checked, its memfd number awaited), REQUEST
 * (HELLO sent), RUNNING (ACCEPT sent), then back to FREE. */
enum slot_state { SLOT_FREE, SLOT_GREET, SLOT_REQUEST, SLOT_RUNNING };

struct slot {
	enum slot_state state;
	int conn;    /* -1 once the client is gone */
	struct lch_peer peer;
	pid_t child;
	int child_fd; /* pidfd of the child */
	/* A pipe's read end: a byte there once the child sent STATUS itself
	 * (before its clean-up), so the client's leaving ends nothing. */
	int done_fd;
	bool reported;
	int64_t since_ms;
};

struct server {
	const struct lch_opts *o;
	int listen_fd, sig_fd;
	struct slot slots[LCH_MAX_RUNS];
	uint8_t *req; /* one request at a time, LCH_MAX_REQUEST bytes */
	pid_t self;
	struct lch_self me;
	struct rlimit limits[LCH_NLIMITS]; /* the launcher's own, as its children inherit them */
	struct lch_cgroup cg; /* the launcher's, as the last peer check read it */
	struct lch_spare spares[LCH_SPARES];
	int64_t spares_after_ms; /* no spare is tried before (a fork failed) */
};

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

bool lch_socket_path(const char *o_socket, char *out, size_t len)
{
	if (o_socket)
		return (size_t)snprintf(out, len, "%s", o_socket) < len;
	const char *rt = getenv("XDG_RUNTIME_DIR");
	if (!rt || rt[0] != '/')
		return false;
	return (size_t)snprintf(out, len, "%s/cage/launcher.sock", rt) < len;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "cagerun launcher: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* One message; fd >= 0 goes with it, and its number in the sender as
 * m.fd is fdnum. */
static bool send_msg(int conn, uint8_t type, uint8_t value, const char *text, int fd,
		     int fdnum)
{
	struct lch_msg m;
	memset(&m, 0, sizeof m);
	m.type = type;
	m.value = value;
	m.fd = fdnum;
	if (text)
		snprintf(m.text, sizeof m.text, "%s", text);
	struct iovec iov = { &m, sizeof m };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (fd >= 0) {
		memset(&u, 0, sizeof u);
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof u.buf;
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof fd);
	}
	ssize_t n;
	while ((n = sendmsg(conn, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return n == (ssize_t)sizeof m;
}

/* The directory the socket lives in: made 0700 if missing, and refused
 * unless it is a directory of ours that nobody else may enter. */
static bool socket_dir(const char *path, char *err, size_t errlen)
{
	char dir[sizeof ((struct sockaddr_un *)0)->sun_path];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir) {
		snprintf(err, errlen, "%s: the socket must be in a directory of its own", path);
		return false;
	}
	*slash = '\0';
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return false;
	}
	struct stat st;
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		snprintf(err, errlen, "%s: not a directory of this user's that only it can open "
				      "(mode 0700)", dir);
		return false;
	}
	return true;
}

static int listen_on(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sa.sun_path) {
		snprintf(err, errlen, "%s: too long for a socket's name", path);
		return -1;
	}
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	if (!socket_dir(path, err, errlen))
		return -1;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	struct stat st;
	if (lstat(path, &st) == 0) {
		/* A launcher's socket left behind is taken over; one that
		 * answers, or anything else there, is not. */
		int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		bool live = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0;
		if (probe >= 0)
			close(probe);
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid() || live) {
			snprintf(err, errlen, "%s: %s", path, live ? "a launcher already listens there"
								   : "exists and is not a socket of ours");
			close(fd);
			return -1;
		}
		if (unlink(path) != 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
	}
	mode_t old = umask(0177); /* the socket 0600 */
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (rc != 0 || listen(fd, LCH_MAX_RUNS) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static struct slot *free_slot(struct server *s)
{
	for (size_t i = 0; i < LCH_MAX_RUNS; i++)
		if (s->slots[i].state == SLOT_FREE)
			return &s->slots[i];
	return NULL;
}

static void slot_init(struct slot *sl)
{
	memset(sl, 0, sizeof *sl);
	sl->state = SLOT_FREE;
	sl->conn = sl->child_fd = sl->done_fd = -1;
	sl->peer.pidfd = sl->peer.proc_fd = -1;
}

static void slot_end(struct slot *sl)
{
	if (sl->conn >= 0)
		close(sl->conn);
	if (sl->child_fd >= 0)
		close(sl->child_fd);
	if (sl->done_fd >= 0)
		close(sl->done_fd);
	lch_peer_close(&sl->peer);
	slot_init(sl);
}

static void on_greet(struct server *s, struct slot *sl);

/* REFUSE, then close. What the client sent and we did not read is read
 * first: closing a unix socket with data unread resets the connection,
 * and the client could lose the reason to ECONNRESET. */
static void refuse_close(int conn, const char *why)
{
	send_msg(conn, LCH_REFUSE, 0, why, -1, -1);
	char sink[sizeof(struct lch_msg)];
	for (int i = 0; i < 4 && recv(conn, sink, sizeof sink, MSG_DONTWAIT) > 0; i++)
		;
	close(conn);
}

static void on_accept(struct server *s)
{
	for (int k = 0; k < LCH_MAX_RUNS; k++) {
		int c = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			return; /* EAGAIN: no more waiting */
		struct slot *sl = free_slot(s);
		char why[LCH_MAX_REASON];
		if (!sl) {
			refuse_close(c, "the launcher is busy");
			continue;
		}
		struct lch_peer p;
		if (!lch_peer_check(&s->me, c, &p, &s->cg, why, sizeof why)) {
			say("refused a client: %s", why);
			refuse_close(c, why);
			continue;
		}
		sl->state = SLOT_GREET;
		sl->conn = c;
		sl->peer = p;
		sl->since_ms = now_ms();
		on_greet(s, sl); /* the client greets as it connects: usually here already */
	}
}

struct request {
	const struct lch_req *h;
	size_t len; /* of the whole request, header and strings */
	char **argv, **envp; /* into s->req, NULL-ended (heap arrays) */
	int fds[LCH_NFDS];
	/* For the child: the client's connection and the done pipe's write
	 * end (the slot's); not the request's to close. */
	int conn, done;
};

/* GREET: the client's memfd number; the launcher opens that memfd through
 * /proc/PID/fd and sends it back with HELLO, with its own memfd's number. */
static void on_greet(struct server *s, struct slot *sl)
{
	struct lch_msg m;
	ssize_t n;
	while ((n = recv(sl->conn, &m, sizeof m, MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (n < 0 && errno == EAGAIN)
		return;
	char why[LCH_MAX_REASON];
	int fd = -1;
	if (n != (ssize_t)sizeof m || m.type != LCH_GREET) {
		snprintf(why, sizeof why, n == 0 ? "it left before its request" : "a malformed greeting");
	} else if ((fd = lch_peer_open_fd(&sl->peer, m.fd, why, sizeof why)) >= 0) {
		bool sent = send_msg(sl->conn, LCH_HELLO, 0, NULL, fd, s->me.proof_fd);
		close(fd);
		if (sent) {
			sl->state = SLOT_REQUEST;
			return;
		}
		snprintf(why, sizeof why, "it left before its request");
	}
	say("refused pid %d: %s", (int)sl->peer.pid, why);
	refuse_close(sl->conn, why);
	sl->conn = -1;
	slot_end(sl);
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

static bool read_request(struct server *s, struct slot *sl, struct request *rq, char *why,
			 size_t whylen)
{
	for (int i = 0; i < LCH_NFDS; i++)
		rq->fds[i] = -1;
	union {
		char buf[CMSG_SPACE(sizeof(int) * LCH_NFDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { s->req, LCH_MAX_REQUEST };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	ssize_t n;
	while ((n = recvmsg(sl->conn, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (n <= 0) {
		snprintf(why, whylen, n == 0 ? "it left before its request" : "recvmsg: %s",
			 strerror(errno));
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
	rq->h = (const struct lch_req *)s->req;
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || nfds != LCH_NFDS ||
	    (size_t)n < sizeof *rq->h || rq->h->type != LCH_REQUEST || rq->h->magic != LCH_MAGIC ||
	    rq->h->version != LCH_VERSION || rq->h->argc < 1 || rq->h->argc > LCH_MAX_ARGS ||
	    rq->h->envc > LCH_MAX_ENV || rq->h->strings != (size_t)n - sizeof *rq->h) {
		snprintf(why, whylen, "a malformed request");
		return false;
	}
	rq->len = (size_t)n;
	if (!lch_peer_proof(&s->me, rq->fds[LCH_FD_PROOF], why, whylen))
		return false;
	struct stat st;
	if (fstat(rq->fds[LCH_FD_CWD], &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "its working directory did not come over");
		return false;
	}
	for (int r = 0; r < LCH_NLIMITS; r++) {
		if (rq->h->limits[r].max > (uint64_t)s->limits[r].rlim_max) {
			snprintf(why, whylen, "its hard limit %d is above the launcher's", r);
			return false;
		}
	}
	return split_strings(rq, (const char *)s->req + sizeof *rq->h, rq->h->strings, why, whylen);
}

static void request_free(struct request *rq)
{
	for (int i = 0; i < LCH_NFDS; i++)
		if (rq->fds[i] >= 0)
			close(rq->fds[i]);
	free(rq->argv);
	free(rq->envp);
}

/* True when the file this process runs was removed or replaced (an
 * upgrade): the kernel then names it "PATH (deleted)". */
static bool replaced(void)
{
	char exe[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n < 0)
		return true;
	exe[n] = '\0';
	static const char tail[] = " (deleted)";
	return (size_t)n >= sizeof tail - 1 && !strcmp(exe + n - (sizeof tail - 1), tail);
}

/* The child's own STATUS, sent when cagerun says the run is over
 * (run.h): the pipe first, so that the launcher knows it was sent by the
 * time the client, having read it, leaves. */
struct status_out {
	int conn, done;
};

static void send_status(void *ctx, int status)
{
	const struct status_out *o = ctx;
	if (write(o->done, "s", 1) == 1)
		send_msg(o->conn, LCH_STATUS, (uint8_t)status, NULL, -1, -1);
}

/* In the child: become the client's process, then run. */
static _Noreturn void child_main(const struct server *s, const struct request *rq)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != s->self)
		_exit(125);
	/* The one disposition the launcher changed (lch_serve), and its mask. */
	sigset_t none;
	sigemptyset(&none);
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int i = 0; i < 3; i++)
		if (dup2(rq->fds[i], i) != i)
			_exit(125);
	if (fchdir(rq->fds[LCH_FD_CWD]) != 0) {
		fprintf(stderr, "cagerun: launcher: cannot enter the working directory: %s\n",
			strerror(errno));
		_exit(125);
	}
	/* The connection and the pipe to 3 and 4 (through numbers above both,
	 * so neither overwrites the other), close-on-exec: the sandbox's
	 * command never has them. Then nothing else of the launcher's. */
	int hi_conn = fcntl(rq->conn, F_DUPFD_CLOEXEC, 16);
	int hi_done = fcntl(rq->done, F_DUPFD_CLOEXEC, 16);
	if (hi_conn < 0 || hi_done < 0 || dup3(hi_conn, 3, O_CLOEXEC) != 3 ||
	    dup3(hi_done, 4, O_CLOEXEC) != 4)
		_exit(125);
	(void)syscall(SYS_close_range, 5u, ~0u, 0u);
	struct status_out out = { 3, 4 };
	const struct run_status_hook hook = { send_status, &out };
	/* Out of the launcher's session: its terminal is nobody's here. (A
	 * spare left it already, and leads a session of its own.) */
	if (setsid() < 0 && getsid(0) != getpid())
		_exit(125);
	umask((mode_t)(rq->h->umask & 0777));
	for (int r = 0; r < LCH_NLIMITS; r++) {
		struct rlimit rl = { (rlim_t)rq->h->limits[r].cur, (rlim_t)rq->h->limits[r].max };
		if (rl.rlim_cur == s->limits[r].rlim_cur && rl.rlim_max == s->limits[r].rlim_max)
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
	exit(s->o->run(argc, rq->argv, &hook));
}

/* In a spare: the request the launcher checked, made into what a child
 * forked for it would have had. */
_Static_assert(LCH_FD_STDIN == 0 && LCH_FD_STDOUT == 1 && LCH_FD_STDERR == 2 &&
		       LCH_FD_CWD == 3 && LCH_SPARE_NFDS == 6,
	       "a spare is handed the client's 0, 1, 2 and cwd, the connection and the done pipe");
static void spare_run(void *ctx, uint8_t *req, size_t n, const int fds[LCH_SPARE_NFDS])
{
	const struct server *s = ctx;
	struct request rq;
	memset(&rq, 0, sizeof rq);
	for (int i = 0; i < LCH_NFDS; i++)
		rq.fds[i] = i <= LCH_FD_CWD ? fds[i] : -1;
	rq.conn = fds[4];
	rq.done = fds[5];
	rq.h = (const struct lch_req *)req;
	rq.len = n;
	char why[LCH_MAX_REASON];
	if (n < sizeof *rq.h || rq.h->strings != n - sizeof *rq.h ||
	    !split_strings(&rq, (const char *)req + sizeof *rq.h, rq.h->strings, why, sizeof why))
		_exit(125);
	child_main(s, &rq);
}

/* Spares for every empty place, unless this program was replaced (they
 * would run the old one). */
static bool spares_missing(const struct server *s, int64_t now)
{
	for (size_t i = 0; i < LCH_SPARES; i++)
		if (!s->spares[i].pid)
			return now >= s->spares_after_ms;
	return false;
}

static void fill_spares(struct server *s, int64_t now)
{
	for (size_t i = 0; i < LCH_SPARES; i++) {
		if (s->spares[i].pid)
			continue;
		if (replaced()) {
			s->spares_after_ms = INT64_MAX; /* refused from now on anyway */
			return;
		}
		if (!lch_spare_start(&s->spares[i], LCH_MAX_REQUEST, spare_run, s)) {
			/* Cannot fork now: each run forks its own until then. */
			s->spares_after_ms = now + 1000;
			return;
		}
	}
}

static void end_spares(struct server *s)
{
	for (size_t i = 0; i < LCH_SPARES; i++)
		lch_spare_end(&s->spares[i]);
}

/* The request to a spare forked while the launcher was in the cgroup it
 * is in now (the one the client's was checked against). */
static bool give_spare(struct server *s, const struct request *rq, pid_t *pid, int *pidfd)
{
	for (size_t i = 0; i < LCH_SPARES; i++) {
		struct lch_spare *sp = &s->spares[i];
		if (!sp->pid)
			continue;
		if (sp->cg.len < 0 || sp->cg.len != s->cg.len ||
		    memcmp(sp->cg.text, s->cg.text, (size_t)sp->cg.len) != 0) {
			lch_spare_end(sp); /* the launcher was moved since */
			continue;
		}
		const int fds[LCH_SPARE_NFDS] = { rq->fds[LCH_FD_STDIN], rq->fds[LCH_FD_STDOUT],
						   rq->fds[LCH_FD_STDERR], rq->fds[LCH_FD_CWD],
						   rq->conn, rq->done };
		if (lch_spare_give(sp, s->req, rq->len, fds, pid, pidfd))
			return true;
	}
	return false;
}

static void on_request(struct server *s, struct slot *sl)
{
	struct request rq;
	memset(&rq, 0, sizeof rq);
	char why[LCH_MAX_REASON];
	bool ok = read_request(s, sl, &rq, why, sizeof why);
	if (ok && replaced()) {
		/* Its children would run the old program, which finds its
		 * standard library and helpers beside itself: gone. */
		snprintf(why, sizeof why, "the launcher's program was replaced since it started; "
					  "restart it");
		ok = false;
		end_spares(s);
	}
	pid_t pid = -1;
	if (ok && !lch_peer_alive(&sl->peer)) {
		snprintf(why, sizeof why, "it is gone");
		ok = false;
	}
	int done[2] = { -1, -1 };
	if (ok && pipe2(done, O_CLOEXEC | O_NONBLOCK) != 0) {
		snprintf(why, sizeof why, "pipe: %s", strerror(errno));
		ok = false;
	}
	rq.conn = sl->conn;
	rq.done = done[1];
	bool spared = ok && give_spare(s, &rq, &pid, &sl->child_fd);
	if (ok && !spared) {
		fflush(stderr);
		pid = fork();
		if (pid == 0)
			child_main(s, &rq);
		if (pid < 0) {
			snprintf(why, sizeof why, "fork: %s", strerror(errno));
			ok = false;
		}
	}
	if (done[1] >= 0)
		close(done[1]);
	if (ok) {
		sl->child = pid;
		sl->done_fd = done[0];
	} else if (done[0] >= 0) {
		close(done[0]);
	}
	if (ok && !spared) {
		sl->child_fd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (sl->child_fd < 0) {
			/* Cannot watch it: stop it, and let the client run cagerun. */
			snprintf(why, sizeof why, "pidfd_open: %s", strerror(errno));
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			ok = false;
		}
	}
	if (ok && !send_msg(sl->conn, LCH_ACCEPT, 0, NULL, -1, -1)) {
		kill(pid, SIGKILL); /* the client cannot hear: its status goes nowhere */
		close(sl->conn);
		sl->conn = -1;
	}
	if (ok) {
		sl->state = SLOT_RUNNING;
		if (s->o->verbose)
			say("pid %d: started %s%s", (int)sl->peer.pid, rq.argv[0],
			    spared ? " (spare)" : "");
	} else {
		say("refused pid %d: %s", (int)sl->peer.pid, why);
		refuse_close(sl->conn, why);
		sl->conn = -1;
		slot_end(sl);
	}
	request_free(&rq);
}

/* Whether the child has sent STATUS itself: it wrote to the pipe first. */
static bool reported(struct slot *sl)
{
	char b;
	if (!sl->reported && sl->done_fd >= 0 && read(sl->done_fd, &b, 1) == 1)
		sl->reported = true;
	return sl->reported;
}

/* A message from a running client: a signal for its run, or its end. */
static void on_client(struct slot *sl)
{
	struct lch_msg m;
	ssize_t n;
	while ((n = recv(sl->conn, &m, sizeof m, MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (n < 0 && errno == EAGAIN)
		return;
	if (n == (ssize_t)sizeof m && m.type == LCH_SIGNAL) {
		int sig = m.value;
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
			kill(sl->child, sig);
		return;
	}
	/* Gone, or talking nonsense: its run ends as if it had been killed,
	 * unless it is over (the client read its STATUS and left) and only
	 * cleaning up. */
	if (!reported(sl))
		kill(sl->child, SIGKILL);
	close(sl->conn);
	sl->conn = -1;
}

static void on_child(const struct server *s, struct slot *sl)
{
	int st;
	pid_t p;
	while ((p = waitpid(sl->child, &st, WNOHANG)) < 0 && errno == EINTR)
		;
	if (p != sl->child)
		return;
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 125;
	bool sent = reported(sl);
	if (sl->conn >= 0 && !sent)
		send_msg(sl->conn, LCH_STATUS, (uint8_t)code, NULL, -1, -1);
	if (s->o->verbose)
		say("pid %d: status %d%s", (int)sl->peer.pid, code, sent ? " (sent by the run)" : "");
	slot_end(sl);
}

static int serve_loop(struct server *s)
{
	struct pollfd pf[2 + 2 * LCH_MAX_RUNS];
	struct slot *who[2 + 2 * LCH_MAX_RUNS];
	for (;;) {
		size_t n = 0;
		pf[n++] = (struct pollfd){ s->listen_fd, POLLIN, 0 };
		pf[n++] = (struct pollfd){ s->sig_fd, POLLIN, 0 };
		int64_t now = now_ms();
		for (size_t i = 0; i < LCH_MAX_RUNS; i++) {
			struct slot *sl = &s->slots[i];
			if ((sl->state == SLOT_GREET || sl->state == SLOT_REQUEST) &&
			    now - sl->since_ms > LCH_REQUEST_MS) {
				slot_end(sl); /* connected and said nothing */
				continue;
			}
			if (sl->state != SLOT_FREE && sl->conn >= 0) {
				who[n] = sl;
				pf[n++] = (struct pollfd){ sl->conn, POLLIN, 0 };
			}
			if (sl->state == SLOT_RUNNING) {
				who[n] = sl;
				pf[n++] = (struct pollfd){ sl->child_fd, POLLIN, 0 };
			}
		}
		/* Spares are made when nothing else waits: a client that is
		 * there goes first. */
		bool refill = spares_missing(s, now);
		int ready = poll(pf, n, refill ? 0 : 1000);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			say("poll: %s", strerror(errno));
			return 125;
		}
		if (ready == 0 && refill) {
			fill_spares(s, now);
			continue;
		}
		if (pf[1].revents) {
			struct signalfd_siginfo si;
			if (read(s->sig_fd, &si, sizeof si) == (ssize_t)sizeof si)
				return 0;
		}
		for (size_t i = 2; i < n; i++) {
			struct slot *sl = who[i];
			if (!pf[i].revents || sl->state == SLOT_FREE)
				continue;
			if (pf[i].fd == sl->child_fd)
				on_child(s, sl);
			else if (pf[i].fd == sl->conn && sl->state == SLOT_GREET)
				on_greet(s, sl);
			else if (pf[i].fd == sl->conn && sl->state == SLOT_REQUEST)
				on_request(s, sl);
			else if (pf[i].fd == sl->conn)
				on_client(sl);
		}
		if (pf[0].revents)
			on_accept(s);
	}
}

int lch_serve(const struct lch_opts *o)
{
	char path[sizeof ((struct sockaddr_un *)0)->sun_path], err[512];
	if (!lch_socket_path(o->socket, path, sizeof path)) {
		fprintf(stderr, "cagerun launcher: no socket: give --socket PATH (XDG_RUNTIME_DIR is "
				"not set)\n");
		return 125;
	}
	struct server *s = calloc(1, sizeof *s);
	if (!s || !(s->req = malloc(LCH_MAX_REQUEST))) {
		free(s);
		fprintf(stderr, "cagerun launcher: out of memory\n");
		return 125;
	}
	s->o = o;
	s->self = getpid();
	/* Descriptors 0 to 2 open, so that no received one lands there and
	 * is overwritten when a child moves the client's into place. */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd) {
			fprintf(stderr, "cagerun launcher: cannot open /dev/null\n");
			free(s->req);
			free(s);
			return 125;
		}
	for (size_t i = 0; i < LCH_MAX_RUNS; i++)
		slot_init(&s->slots[i]);
	for (size_t i = 0; i < LCH_SPARES; i++)
		lch_spare_init(&s->spares[i]);
	s->cg.len = -1;
	for (int r = 0; r < LCH_NLIMITS; r++)
		if (getrlimit(r, &s->limits[r]) != 0)
			s->limits[r].rlim_cur = s->limits[r].rlim_max = 0; /* unknown here: any request is above */
	if (!lch_peer_self(&s->me, err, sizeof err)) {
		fprintf(stderr, "cagerun launcher: %s\n", err);
		free(s->req);
		free(s);
		return 125;
	}
	sigset_t ss;
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	int rc = 125;
	s->listen_fd = -1;
	s->sig_fd = -1;
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR || sigprocmask(SIG_BLOCK, &ss, NULL) != 0 ||
	    (s->sig_fd = signalfd(-1, &ss, SFD_CLOEXEC)) < 0) {
		fprintf(stderr, "cagerun launcher: signals: %s\n", strerror(errno));
	} else if ((s->listen_fd = listen_on(path, err, sizeof err)) < 0) {
		fprintf(stderr, "cagerun launcher: %s\n", err);
	} else {
		say("listening on %s", path);
		rc = serve_loop(s);
		unlink(path);
	}
	end_spares(s);
	/* The runs still going end with this process (their PR_SET_PDEATHSIG). */
	for (size_t i = 0; i < LCH_MAX_RUNS; i++)
		if (s->slots[i].state != SLOT_FREE)
			slot_end(&s->slots[i]);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->sig_fd >= 0)
		close(s->sig_fd);
	if (s->me.proof_fd >= 0)
		close(s->me.proof_fd);
	free(s->req);
	free(s);
	return rc;
}
