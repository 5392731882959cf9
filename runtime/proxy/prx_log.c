/*
 * prx_log.c - the proxy's access log: one JSON object per line per client
 * connection, written when the connection ends so that it carries the byte
 * counts and duration.
 *
 * Host names and reasons can come from a hostile client: jsonl.h escapes
 * every string and writes each record in one write(2).
 */
#include "prx_int.h"

#include <inttypes.h>

#include "jsonl.h"

bool prx_log_write(int fd, const struct prx_logrec *r)
{
	if (fd < 0)
		return true;
	struct jl_buf b;
	jl_begin(&b, (int64_t)r->start_real_ms);
	jl_str(&b, "client", r->client);
	jl_str(&b, "method", r->method);
	jl_str(&b, "host", r->host);
	if (r->port)
		jl_fmt(&b, ",\"port\":%u", r->port);
	else
		jl_put(&b, ",\"port\":null", 12);
	jl_str(&b, "decision", r->decision);
	jl_fmt(&b, ",\"status\":%d", r->status);
	jl_str(&b, "rule", r->rule && *r->rule ? r->rule : NULL);
	jl_str(&b, "reason", r->reason);
	jl_fmt(&b, ",\"bytes_up\":%" PRIu64 ",\"bytes_down\":%" PRIu64 ",\"duration_ms\":%" PRIu64,
	       r->bytes_up, r->bytes_down, r->duration_ms);
	return jl_end_write(&b, fd);
}
