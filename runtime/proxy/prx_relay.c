/*
 * prx_relay.c - moves one direction of a tunnel.
 *
 * On Linux the bytes go socket -> pipe -> socket with splice(2), so they
 * never enter user space: the proxy's cost per byte is a page reference, not
 * a copy, which is how a tunnel keeps up with a direct loopback connection.
 * A read/write loop through a 16 KiB buffer is the fallback when splicing is
 * turned off or no pipe could be created (descriptor limits), and the only
 * relay of portable builds (macOS; event/prx_ev.h).
 *
 * Half-close: when src says EOF and everything read has been delivered, dst
 * gets shutdown(SHUT_WR) and the other direction keeps running.
 */
#include "prx_int.h"
#include "prx_ev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RW_BUF 16384

#ifdef PRX_EV_EPOLL
static ssize_t move_bytes(int from, int to, size_t n)
{
	return splice(from, NULL, to, NULL, n, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
}
#else
/* No splice(2): directions never get a pipe (prx_dir_use_pipe fails), so
 * this is never reached; it keeps one relay for both builds. */
static ssize_t move_bytes(int from, int to, size_t n)
{
	(void)from;
	(void)to;
	(void)n;
	errno = ENOSYS;
	return -1;
}
#endif

void prx_dir_init(struct prx_dir *d)
{
	memset(d, 0, sizeof *d);
	d->pipe[0] = d->pipe[1] = -1;
}

bool prx_dir_use_pipe(struct prx_dir *d)
{
#ifdef PRX_EV_EPOLL
	if (pipe2(d->pipe, O_NONBLOCK | O_CLOEXEC) == 0)
		return true;
#endif
	d->pipe[0] = d->pipe[1] = -1;
	return false;
}

/* A larger pipe means fewer wake-ups per megabyte, but pipe pages count
 * against a per-user quota (fs/pipe-user-pages-soft), past which the kernel
 * hands out tiny pipes. So only a direction that has filled its default pipe
 * in one go, i.e. a bulk transfer, asks for more; an interactive tunnel never
 * does. Failing to grow only costs speed. */
static void maybe_grow(struct prx_dir *d, size_t n)
{
	if (d->grown || !d->grow_to || n < 65536)
		return;
	d->grown = true;
#ifdef F_SETPIPE_SZ
	(void)fcntl(d->pipe[1], F_SETPIPE_SZ, (int)d->grow_to);
#endif
}

static bool reserve(struct prx_dir *d, size_t want)
{
	if (d->cap >= want)
		return true;
	size_t cap = d->cap ? d->cap : 512;
	while (cap < want)
		cap *= 2;
	char *nb = realloc(d->buf, cap);
	if (!nb)
		return false;
	d->buf = nb;
	d->cap = cap;
	return true;
}

bool prx_dir_queue(struct prx_dir *d, const char *p, size_t n)
{
	if (n == 0)
		return true;
	if (d->off == d->len)
		d->off = d->len = 0;
	if (!reserve(d, d->len + n))
		return false;
	memcpy(d->buf + d->len, p, n);
	d->len += n;
	return true;
}

static bool would_block(int e)
{
	return e == EAGAIN || e == EWOULDBLOCK;
}

enum prx_pump prx_dir_pump(struct prx_dir *d, int src, int dst, size_t budget)
{
	size_t moved = 0;
	d->rd_wait = d->wr_wait = d->budget = false;
	/* Bounded: every pass either moves bytes (counted against budget),
	 * changes state once (eof/shut), or returns. */
	for (;;) {
		if (moved >= budget) {
			d->budget = true;
			if (d->off < d->len || d->inpipe)
				d->wr_wait = true;
			else
				d->rd_wait = true;
			return PRX_PUMP_BLOCKED;
		}
		ssize_t n;
		if (d->off < d->len) {
			n = send(dst, d->buf + d->off, d->len - d->off, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (!would_block(errno))
					return PRX_PUMP_ERROR;
				d->wr_wait = true;
				return PRX_PUMP_BLOCKED;
			}
			d->off += (size_t)n;
			if (d->off == d->len)
				d->off = d->len = 0;
		} else if (d->inpipe) {
			n = move_bytes(d->pipe[0], dst, d->inpipe);
			if (n <= 0) {
				if (n < 0 && errno == EINTR)
					continue;
				if (n < 0 && !would_block(errno))
					return PRX_PUMP_ERROR;
				if (n == 0)
					return PRX_PUMP_ERROR;
				d->wr_wait = true;
				return PRX_PUMP_BLOCKED;
			}
			d->inpipe -= (size_t)n;
		} else if (d->eof) {
			if (!d->shut) {
				d->shut = true;
				/* ENOTCONN: the peer is already gone; the other
				 * direction will find out on its own. */
				if (shutdown(dst, SHUT_WR) != 0 && errno != ENOTCONN)
					return PRX_PUMP_ERROR;
			}
			return PRX_PUMP_DONE;
		} else if (d->pipe[0] >= 0) {
			n = move_bytes(src, d->pipe[1], 1u << 20);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (!would_block(errno))
					return PRX_PUMP_ERROR;
				d->rd_wait = true;
				return PRX_PUMP_BLOCKED;
			}
			if (n == 0)
				d->eof = true;
			maybe_grow(d, (size_t)n);
			d->inpipe = (size_t)n;
			moved += (size_t)n;
			d->bytes += (size_t)n;
			continue;
		} else {
			if (!reserve(d, RW_BUF))
				return PRX_PUMP_ERROR;
			n = recv(src, d->buf, d->cap, MSG_DONTWAIT);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (!would_block(errno))
					return PRX_PUMP_ERROR;
				d->rd_wait = true;
				return PRX_PUMP_BLOCKED;
			}
			if (n == 0)
				d->eof = true;
			d->off = 0;
			d->len = (size_t)n;
			moved += (size_t)n;
			d->bytes += (size_t)n;
			continue;
		}
		moved += (size_t)n;
	}
}

enum prx_pump prx_dir_flush(struct prx_dir *d, int dst)
{
	d->wr_wait = false;
	while (d->off < d->len) {
		ssize_t n = send(dst, d->buf + d->off, d->len - d->off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (!would_block(errno))
				return PRX_PUMP_ERROR;
			d->wr_wait = true;
			return PRX_PUMP_BLOCKED;
		}
		d->off += (size_t)n;
	}
	d->off = d->len = 0;
	return PRX_PUMP_DONE;
}

void prx_dir_free(struct prx_dir *d)
{
	if (d->pipe[0] >= 0)
		close(d->pipe[0]);
	if (d->pipe[1] >= 0)
		close(d->pipe[1]);
	free(d->buf);
	prx_dir_init(d);
}
