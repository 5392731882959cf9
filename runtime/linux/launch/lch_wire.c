/*
 * lch_wire.c - messages, refusals and notes (see lch_wire.h).
 */
#include "lch_wire.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lch_proto.h"
#include "run.h"

bool lch_send_msg(int conn, uint8_t type, uint8_t value, const char *text, int fd, int fdnum)
{
	struct lch_msg m;
	memset(&m, 0, sizeof m);
	m.type = type;
	m.value = value;
	m.fd = fdnum;
	if (text)
		snprintf(m.text, sizeof m.text, "%s", text);
	return run_send_fd(conn, &m, sizeof m, fd);
}

/* What the client sent and we did not read is read first: closing a
 * unix socket with data unread resets the connection, and the client
 * could lose the reason to ECONNRESET. */
void lch_refuse_close(int conn, const char *why)
{
	lch_send_msg(conn, LCH_REFUSE, 0, why, -1, -1);
	char sink[sizeof(struct lch_msg)];
	for (int i = 0; i < 4 && recv(conn, sink, sizeof sink, MSG_DONTWAIT) > 0; i++)
		;
	close(conn);
}

/* One write per line: the spares write to the launcher's standard
 * error at the same time, and a line made of several writes would be
 * cut into by another's. */
void lch_say(const char *fmt, ...)
{
	char line[LCH_MAX_REASON + 512];
	int n = snprintf(line, sizeof line, "cagerun launcher: ");
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (k < 0 ? 0 : (size_t)k < sizeof line - (size_t)n - 1
						   ? (size_t)k
						   : sizeof line - (size_t)n - 2);
	line[len++] = '\n';
	fflush(stderr);
	while (write(STDERR_FILENO, line, len) < 0 && errno == EINTR)
		;
}

int64_t lch_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

bool lch_note_send(int chan, uint8_t type, int32_t client, int fd)
{
	struct lch_note n;
	memset(&n, 0, sizeof n);
	n.type = type;
	n.client = client;
	return run_send_fd(chan, &n, sizeof n, fd);
}
