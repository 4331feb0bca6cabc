/*
 * emit.c: building and writing the agent's output lines.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "emit.h"
#include "err.h"
#include "ajson.h"
#include "caps.h"

int
emit_line(struct buf *b)
{
	size_t off = 0;
	ssize_t n;
	int r;

	if ((r = buf_append(b, "\n", 1)) != 0)
		goto out;
	while (off < b->len) {
		n = write(STDOUT_FILENO, b->data + off, b->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = BF_ERR_IO;
			goto out;
		}
		off += (size_t)n;
	}
	r = 0;
out:
	buf_reset(b);
	return r;
}

int
emit_log(int64_t iteration, const char *stream, const char *line, size_t len)
{
	struct buf b;
	int r;

	buf_init(&b, EMIT_MAX_LINE);
	if ((r = buf_printf(&b, "{\"type\":\"log\",\"iteration\":%lld,\"stream\":\"%s\",\"line\":",
	    (long long)iteration, stream)) != 0 ||
	    (r = ajson_put_str(&b, line, len)) != 0 ||
	    (r = buf_puts(&b, "}")) != 0)
		goto out;
	r = emit_line(&b);
out:
	buf_free(&b);
	return r;
}

int
emit_dropped(int64_t iteration, const char *stream, unsigned long n)
{
	struct buf b;
	int r;

	buf_init(&b, EMIT_MAX_LINE);
	if ((r = buf_printf(&b, "{\"type\":\"log\",\"iteration\":%lld,\"stream\":\"%s\","
	    "\"dropped\":%lu}", (long long)iteration, stream, n)) != 0)
		goto out;
	r = emit_line(&b);
out:
	buf_free(&b);
	return r;
}

int
emit_error(const char *msg)
{
	struct buf b;
	int r;

	buf_init(&b, EMIT_MAX_LINE);
	if ((r = buf_puts(&b, "{\"type\":\"error\",\"msg\":")) != 0 ||
	    (r = ajson_put_str(&b, msg, strlen(msg))) != 0 ||
	    (r = buf_puts(&b, "}")) != 0)
		goto out;
	r = emit_line(&b);
out:
	buf_free(&b);
	return r;
}

int
emit_done(int ok, int64_t iterations)
{
	struct buf b;
	int r;

	buf_init(&b, EMIT_MAX_LINE);
	if ((r = buf_printf(&b, "{\"type\":\"done\",\"ok\":%s,\"iterations\":%lld}",
	    ok ? "true" : "false", (long long)iterations)) != 0)
		goto out;
	r = emit_line(&b);
out:
	buf_free(&b);
	return r;
}
