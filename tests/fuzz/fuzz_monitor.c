/*
 * fuzz_monitor.c: the frame parser between benchfleetd's monitor and its
 * API child (coordinator/monitor-msg.c). The first byte picks the sender;
 * the rest is read as a stream of frames, as monitor_rd_next would. An
 * accepted frame must lie inside the input, its pointers too, its strings
 * be NUL-terminated and of the allowed bytes; encoding it again must give
 * the same bytes. Truncated input must ask for more, never read past it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "monitor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Encode m again as the sender would. */
static int
reencode(const struct monitor_msg *m, struct buf *b)
{
	switch (m->type) {
	case MONITOR_HELLO:
	case MONITOR_KICK:
	case MONITOR_KICK_MACHINES:
		return monitor_put(b, m->type, NULL, 0);
	case MONITOR_READY:
		return monitor_put_ready(b, m->port);
	case MONITOR_PROBE:
	case MONITOR_KEY:
		return monitor_put(b, m->type, m->str, strlen(m->str));
	case MONITOR_SIGN:
		return monitor_put(b, m->type, m->data, m->len);
	case MONITOR_REPLY:
		return monitor_put_reply(b, m->code, m->data, m->len);
	case MONITOR_EVENT: {
		char *json = strndup((const char *)m->data, m->len);
		int r;

		if (json == NULL)
			return BF_ERR_ALLOC;
		r = monitor_put_event(b, m->str, json);
		free(json);
		return r;
	}
	default:
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum monitor_from from;
	struct monitor_msg m;
	struct buf b;
	size_t off, k;
	int r;

	if (size == 0)
		return 0;
	from = data[0] & 1 ? MONITOR_FROM_MONITOR : MONITOR_FROM_CHILD;
	data++;
	size--;
	for (off = 0; off < size; off += (size_t)r) {
		/* every prefix of a frame: more wanted, or the same verdict */
		r = monitor_msg_parse(from, data + off, size - off, &m, NULL);
		if (r <= 0)
			break;
		if ((size_t)r > size - off || (size_t)r < MONITOR_HDR)
			abort();
		for (k = 0; k < (size_t)r; k += 7)
			if (monitor_msg_parse(from, data + off, k, &m, NULL) != 0)
				abort();
		if (monitor_msg_parse(from, data + off, (size_t)r, &m, NULL) != r)
			abort();
		if (m.data != NULL && (m.data < data + off || m.data + m.len > data + off + r))
			abort();
		if (memchr(m.str, '\0', sizeof(m.str)) == NULL)
			abort();
		if ((from == MONITOR_FROM_CHILD) != (m.type < MONITOR_REPLY))
			abort();
		if (m.type == MONITOR_PROBE && (strlen(m.str) == 0 || strlen(m.str) > BF_MAX_NAME))
			abort();
		if (m.type == MONITOR_KEY && m.str[0] != '/')
			abort();
		buf_init(&b, MONITOR_HDR + MONITOR_MAX_FRAME);
		if (reencode(&m, &b) != 0 || b.len != (size_t)r ||
		    memcmp(b.data, data + off, b.len) != 0)
			abort();
		buf_free(&b);
	}
	return 0;
}
