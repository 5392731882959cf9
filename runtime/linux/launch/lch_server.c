/*
 * lch_server.c - the launcher's loop (see lch_server.h, lch_proto.h).
 *
 * The launcher talks to no client but to refuse one: its spares
 * (lch_spare.h) accept the clients, check them and run their requests
 * (lch_conn.c). It keeps LCH_SPARES of them waiting and forks the next
 * as soon as one takes a client; per run it holds the client's
 * connection (to relay the signals the client forwards, and to see it
 * leave) and the run's pidfd (to reap it and, when the run did not,
 * send its status). One thread, one poll; it runs no command itself and
 * starts no thread (cagerun's clone of the sandbox needs none to exist).
 * Every child is stopped when it goes (PR_SET_PDEATHSIG, LCH_ABORT_SIG):
 * a spare ends, a run ends its sandbox at once and then cleans up.
 */
#include "lch_server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lch_ahead.h"
#include "lch_conn.h"
#include "lch_proto.h"
#include "lch_spare.h"
#include "lch_wire.h"
#include "run.h"

/* Runs at once, the spares waiting for one counted among them; past it
 * a client is refused (and starts cagerun itself). */
#define LCH_MAX_RUNS 64
/* Spares kept waiting: two, for two launches at once. */
#define LCH_SPARES 2
#define LCH_CHILDREN LCH_MAX_RUNS
/* Unused namespace sets kept for the next spares (lch_ahead.h): one per
 * spare and as many again; a run gives back at most one. */
#define LCH_POOL (2 * LCH_SPARES)

/* A child goes IDLE (a spare waiting), TAKEN (it accepted a client),
 * RUNNING (the client's request passed), then back to FREE when reaped. */
enum child_state { CH_FREE, CH_IDLE, CH_TAKEN, CH_RUNNING };

struct child {
	enum child_state state;
	struct lch_spare sp;
	int conn; /* RUNNING: the client's connection, -1 once it is gone */
	pid_t client;
	bool reported; /* the run sent the client its STATUS itself */
	int64_t abort_at; /* when it was told to stop (LCH_ABORT_SIG), or 0 */
	struct lch_nsset back; /* the set it is giving back, as its notes come */
};

struct server {
	struct lch_ctx cx;
	int listen_fd, sig_fd;
	struct child ch[LCH_CHILDREN];
	int64_t spares_after_ms; /* no spare is forked before (a fork failed) */
	struct lch_nsset pool[LCH_POOL]; /* the first npool are sets no sandbox used */
	size_t npool;
	struct lch_kept kept; /* the last run's request, and its compile (cx.held) */
};

bool lch_socket_path(const char *o_socket, char *out, size_t len)
{
	if (o_socket)
		return (size_t)snprintf(out, len, "%s", o_socket) < len;
	const char *rt = getenv("XDG_RUNTIME_DIR");
	if (!rt || rt[0] != '/')
		return false;
	return (size_t)snprintf(out, len, "%s/cage/launcher.sock", rt) < len;
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

static size_t count(const struct server *s, enum child_state st)
{
	size_t n = 0;
	for (size_t i = 0; i < LCH_CHILDREN; i++)
		n += s->ch[i].state == st;
	return n;
}

static void child_init(struct child *c)
{
	c->state = CH_FREE;
	lch_spare_init(&c->sp);
	c->conn = -1;
	c->client = 0;
	c->reported = false;
	c->abort_at = 0;
	lch_nsset_close(&c->back);
}

/* Ends a child that has not been reaped. */
static void child_end(struct child *c)
{
	if (c->conn >= 0)
		close(c->conn);
	lch_spare_end(&c->sp);
	child_init(c);
}

static bool runs_full(const struct server *s)
{
	return LCH_CHILDREN - count(s, CH_FREE) >= LCH_MAX_RUNS;
}

/* Whether another spare may be forked now: fewer than LCH_SPARES wait,
 * the runs are below their bound, and no fork failed in the last second
 * (nor was this program replaced). */
static bool spare_wanted(const struct server *s, int64_t now)
{
	return count(s, CH_IDLE) < LCH_SPARES && !runs_full(s) && now >= s->spares_after_ms;
}

/* Spares up to LCH_SPARES, unless this program was replaced (they would
 * run the old one). */
static void fill_spares(struct server *s, int64_t now)
{
	while (spare_wanted(s, now)) {
		if (lch_replaced()) {
			s->spares_after_ms = INT64_MAX; /* refused from now on anyway */
			return;
		}
		struct child *c = NULL;
		for (size_t i = 0; i < LCH_CHILDREN && !c; i++)
			if (s->ch[i].state == CH_FREE)
				c = &s->ch[i];
		if (!c)
			return;
		/* The newest set given back, if any: the spare takes it. */
		struct lch_nsset set = { -1, -1, -1 };
		if (s->npool > 0)
			set = s->pool[--s->npool];
		if (!lch_spare_start(&c->sp, &s->cx, s->listen_fd, LCH_MAX_REQUEST, &set)) {
			s->spares_after_ms = now + 1000; /* clients are refused until then */
			return;
		}
		c->state = CH_IDLE;
	}
}

/* One note from a child (lch_wire.h); fd is the descriptor that came
 * with it, or -1. False at its end of the pair or on nonsense. */
static bool read_note(struct child *c, struct lch_note *n, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { n, sizeof *n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof u.buf };
	*fd = -1;
	ssize_t k;
	while ((k = recvmsg(c->sp.chan, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	struct cmsghdr *cm = k > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(cm), sizeof *fd);
	return k == (ssize_t)sizeof *n && !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
}

/* A complete set given back goes to the pool, or is closed when the
 * pool is full or the set is not whole. */
static void keep_set(struct server *s, struct child *c)
{
	struct lch_nsset *set = &c->back;
	if (set->user >= 0 && set->net >= 0 && s->npool < LCH_POOL) {
		s->pool[s->npool++] = *set;
		*set = (struct lch_nsset){ -1, -1, -1 };
		if (s->cx.o->verbose)
			lch_say("pid %d: kept the namespaces its run did not use", (int)c->client);
	}
	lch_nsset_close(set);
}

/* A run's request and directory (lch_kept), read from its memfd. The
 * spares forked from now on inherit a compile of it, made here, unless
 * the one kept stands: that run used its copy (it was then for the same
 * policy, options, environment and directory, and nothing it read had
 * changed: held.h; whatever the command), or had none, its spare forked
 * before it was made. A run that did not use its copy found it stale,
 * or asked for something else. Bounded by what a request may be. */
static void keep_request(struct server *s, int fd, int32_t use)
{
	if (s->kept.held && use != LCH_KEPT_UNUSED)
		return;
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size <= 0 ||
	    (uint64_t)st.st_size > LCH_MAX_REQUEST + PATH_MAX)
		return;
	size_t n = (size_t)st.st_size;
	uint8_t *b = malloc(n);
	if (!b)
		return;
	if (pread(fd, b, n, 0) != (ssize_t)n) {
		free(b);
		return;
	}
	s->cx.held = NULL;
	lch_kept_free(&s->kept, s->cx.o);
	lch_kept_make(&s->kept, s->cx.o, b, n);
	s->cx.held = s->kept.held;
	if (s->cx.o->verbose)
		lch_say("%s", s->kept.held ? "made the compile of the last request for the spares"
					   : "kept no compile of the last request (one is kept for a "
					     "-p request that compiles without a diagnostic)");
}

/* Every note waiting from a child: it took a client, its run started
 * (with the client's connection), the run sent its own STATUS, or it
 * gives back a set of namespaces it did not use. */
static void read_notes(struct server *s, struct child *c)
{
	struct lch_note n;
	int fd;
	while (c->sp.chan >= 0 && read_note(c, &n, &fd)) {
		if (n.type == LCH_NOTE_REQUEST && fd >= 0) {
			keep_request(s, fd, n.client);
		} else if (n.type == LCH_NOTE_NS && fd >= 0 && n.client >= LCH_NS_USER &&
		    n.client <= LCH_NS_NET) {
			int *slot = n.client == LCH_NS_USER ? &c->back.user
				    : n.client == LCH_NS_NET ? &c->back.net
							      : &c->back.listen;
			if (*slot >= 0)
				close(*slot);
			*slot = fd;
			fd = -1;
			if (n.client == LCH_NS_NET)
				keep_set(s, c);
		}
		else if (n.type == LCH_NOTE_TAKEN && c->state == CH_IDLE) {
			c->state = CH_TAKEN;
		} else if (n.type == LCH_NOTE_RUN && c->state == CH_TAKEN && fd >= 0) {
			c->state = CH_RUNNING;
			c->conn = fd;
			c->client = n.client;
			fd = -1;
		} else if (n.type == LCH_NOTE_STATUS && c->state == CH_RUNNING) {
			c->reported = true;
		}
		if (fd >= 0)
			close(fd);
	}
}

/* Whether the run has sent STATUS itself: it says so on the pair first. */
static bool reported(struct server *s, struct child *c)
{
	read_notes(s, c);
	return c->reported;
}

/* A message from a running client: a signal for its run, or its end. */
static void on_client(struct server *s, struct child *c)
{
	struct lch_msg m;
	ssize_t n;
	while ((n = recv(c->conn, &m, sizeof m, MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (n < 0 && errno == EAGAIN)
		return;
	if (n == (ssize_t)sizeof m && m.type == LCH_SIGNAL) {
		int sig = m.value;
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
			kill(c->sp.pid, sig);
		return;
	}
	/* Gone, or talking nonsense: its run stops its sandbox at once,
	 * unless it is over (the client read its STATUS and left) and only
	 * cleaning up; then it cleans up as after any run, within
	 * LCH_ABORT_MS, or it is killed (kill_overdue). */
	if (!reported(s, c) && kill(c->sp.pid, LCH_ABORT_SIG) == 0)
		c->abort_at = lch_now_ms();
	close(c->conn);
	c->conn = -1;
}

/* The runs told to stop that have not ended in time: killed (their
 * sandboxes die with them, PR_SET_PDEATHSIG). The milliseconds until the
 * next such deadline, or -1 for none. */
static int kill_overdue(struct server *s, int64_t now)
{
	int64_t next = -1;
	for (size_t i = 0; i < LCH_CHILDREN; i++) {
		struct child *c = &s->ch[i];
		if (c->state != CH_RUNNING || !c->abort_at)
			continue;
		int64_t due = c->abort_at + LCH_ABORT_MS;
		if (now >= due) {
			kill(c->sp.pid, SIGKILL);
			c->abort_at = 0;
		} else if (next < 0 || due - now < next) {
			next = due - now;
		}
	}
	return (int)next;
}

static void on_exit_of(struct server *s, struct child *c)
{
	int st;
	pid_t p;
	while ((p = waitpid(c->sp.pid, &st, WNOHANG)) < 0 && errno == EINTR)
		;
	if (p != c->sp.pid)
		return;
	/* What it said before it went: a run that started and ended between
	 * two looks of this loop is still a run whose client waits. */
	read_notes(s, c);
	if (c->state == CH_RUNNING) {
		int code = run_wait_code(st);
		bool sent = reported(s, c);
		if (c->conn >= 0 && !sent)
			lch_send_msg(c->conn, LCH_STATUS, (uint8_t)code, NULL, -1, -1);
		if (s->cx.o->verbose)
			lch_say("pid %d: status %d%s", (int)c->client, code,
				sent ? " (sent by the run)" : "");
	}
	if (c->conn >= 0)
		close(c->conn);
	lch_spare_forget(&c->sp); /* reaped: nothing to end */
	child_init(c);
}

/* No spare is waiting (the runs are at their bound, or forks fail): the
 * clients that come are refused, and start cagerun themselves. */
static void refuse_waiting(struct server *s)
{
	for (int k = 0; k < LCH_MAX_RUNS; k++) {
		int c = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			return; /* EAGAIN: no more waiting */
		lch_refuse_close(c, runs_full(s) ? "the launcher is busy" : "the launcher has no spare ready");
	}
}

/* At the launcher's end: each run told to stop, and reaped as it ends,
 * for LCH_ABORT_MS at most in all. */
static void stop_runs(struct server *s)
{
	size_t left = 0;
	for (size_t i = 0; i < LCH_CHILDREN; i++) {
		struct child *c = &s->ch[i];
		if (c->state == CH_RUNNING && kill(c->sp.pid, LCH_ABORT_SIG) == 0)
			left++;
	}
	int64_t until = lch_now_ms() + LCH_ABORT_MS;
	while (left > 0) {
		int64_t now = lch_now_ms();
		if (now >= until)
			return;
		struct pollfd pf[LCH_CHILDREN];
		struct child *who[LCH_CHILDREN];
		nfds_t n = 0;
		for (size_t i = 0; i < LCH_CHILDREN; i++)
			if (s->ch[i].state == CH_RUNNING) {
				who[n] = &s->ch[i];
				pf[n++] = (struct pollfd){ s->ch[i].sp.pidfd, POLLIN, 0 };
			}
		if (poll(pf, n, (int)(until - now)) < 0 && errno != EINTR)
			return;
		left = n;
		for (nfds_t k = 0; k < n; k++)
			if (pf[k].revents) {
				while (waitpid(who[k]->sp.pid, NULL, 0) < 0 && errno == EINTR)
					;
				if (who[k]->conn >= 0)
					close(who[k]->conn);
				lch_spare_forget(&who[k]->sp); /* reaped: nothing to end */
				child_init(who[k]);
				left--;
			}
	}
}

static int serve_loop(struct server *s)
{
	struct pollfd pf[2 + 2 * LCH_CHILDREN];
	struct child *who[2 + 2 * LCH_CHILDREN];
	for (;;) {
		int64_t now = lch_now_ms();
		/* With no spare waiting, one is forked at once. Otherwise when
		 * no client is being served or run and nothing else waits: a
		 * spare faulting in beside a launch takes CPU from it. */
		if (count(s, CH_IDLE) == 0)
			fill_spares(s, now);
		bool refill = spare_wanted(s, now) && count(s, CH_TAKEN) + count(s, CH_RUNNING) == 0;
		size_t n = 0;
		pf[n++] = (struct pollfd){ s->sig_fd, POLLIN, 0 };
		/* The listening socket is the spares' unless none waits. */
		pf[n++] = (struct pollfd){ count(s, CH_IDLE) ? -1 : s->listen_fd, POLLIN, 0 };
		for (size_t i = 0; i < LCH_CHILDREN; i++) {
			struct child *c = &s->ch[i];
			if (c->state == CH_FREE)
				continue;
			who[n] = c;
			pf[n++] = (struct pollfd){ c->sp.pidfd, POLLIN, 0 };
			if (c->state != CH_RUNNING) {
				who[n] = c;
				pf[n++] = (struct pollfd){ c->sp.chan, POLLIN, 0 };
			} else if (c->conn >= 0) {
				who[n] = c;
				pf[n++] = (struct pollfd){ c->conn, POLLIN, 0 };
			}
		}
		int overdue = kill_overdue(s, now);
		int ready = poll(pf, n, refill ? 0 : overdue >= 0 && overdue < 1000 ? overdue : 1000);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			lch_say("poll: %s", strerror(errno));
			return 125;
		}
		if (ready == 0 && refill) {
			fill_spares(s, now);
			continue;
		}
		if (pf[0].revents) {
			struct signalfd_siginfo si;
			if (read(s->sig_fd, &si, sizeof si) == (ssize_t)sizeof si)
				return 0;
		}
		for (size_t i = 2; i < n; i++) {
			struct child *c = who[i];
			if (!pf[i].revents || c->state == CH_FREE)
				continue;
			if (pf[i].fd == c->sp.pidfd)
				on_exit_of(s, c);
			else if (pf[i].fd == c->sp.chan && c->state != CH_RUNNING)
				read_notes(s, c);
			else if (pf[i].fd == c->conn && c->state == CH_RUNNING)
				on_client(s, c);
		}
		if (pf[1].revents)
			refuse_waiting(s);
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
	if (!s) {
		fprintf(stderr, "cagerun launcher: out of memory\n");
		return 125;
	}
	s->cx.o = o;
	s->cx.launcher = getpid();
	/* Descriptors 0 to 2 open, so that no received one lands there and
	 * is overwritten when a run moves the client's into place. */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd) {
			fprintf(stderr, "cagerun launcher: cannot open /dev/null\n");
			free(s);
			return 125;
		}
	for (size_t i = 0; i < LCH_CHILDREN; i++) {
		s->ch[i].back = (struct lch_nsset){ -1, -1, -1 };
		child_init(&s->ch[i]);
	}
	for (int r = 0; r < LCH_NLIMITS; r++)
		if (getrlimit(r, &s->cx.limits[r]) != 0)
			s->cx.limits[r].rlim_cur = s->cx.limits[r].rlim_max = 0; /* unknown here: any request is above */
	if (!lch_peer_self(&s->cx.me, err, sizeof err)) {
		fprintf(stderr, "cagerun launcher: %s\n", err);
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
		lch_say("listening on %s", path);
		rc = serve_loop(s);
		unlink(path);
	}
	/* Spares and runs end with the launcher: a run stops its sandbox at
	 * once and cleans up (LCH_ABORT_SIG), and is waited for that long
	 * at most (LCH_ABORT_MS); then whatever is left is killed. */
	stop_runs(s);
	for (size_t i = 0; i < LCH_CHILDREN; i++)
		if (s->ch[i].state != CH_FREE)
			child_end(&s->ch[i]);
	while (s->npool > 0)
		lch_nsset_close(&s->pool[--s->npool]);
	lch_kept_free(&s->kept, s->cx.o);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->sig_fd >= 0)
		close(s->sig_fd);
	if (s->cx.me.proof_fd >= 0)
		close(s->cx.me.proof_fd);
	free(s);
	return rc;
}
