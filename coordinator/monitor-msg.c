/*
 * monitor-msg.c: the frames between the monitor and its API child
 * (monitor.h): one table of the types each side may send, with a cap and a
 * payload parser per type; encoders; a reader that never trusts a length.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "monitor.h"

#define MONITOR_READ_CHUNK	(64 * 1024)	/* one read() */

typedef int (*monitor_payload_fn)(const unsigned char *p, size_t n, struct monitor_msg *m,
    struct bf_diag *d);

static int
pl_empty(const unsigned char *p, size_t n, struct monitor_msg *m, struct bf_diag *d)
{
	(void)p;
	if (n != 0) {
		bf_diag_set(d, m->type == MONITOR_HELLO ? "hello" : "kick",
		    "%zu bytes of payload, expected none", n);
		return BF_ERR_PARSE;
	}
	return 0;
}

static int
pl_ready(const unsigned char *p, size_t n, struct monitor_msg *m, struct bf_diag *d)
{
	if (n != 2) {
		bf_diag_set(d, "ready", "%zu bytes of payload, expected 2 (a port)", n);
		return BF_ERR_PARSE;
	}
	m->port = (uint16_t)((p[0] << 8) | p[1]);
	if (m->port == 0) {
		bf_diag_set(d, "ready", "port 0");
		return BF_ERR_PARSE;
	}
	return 0;
}

/* A machine name as routes and jx_check_name take it: [A-Za-z0-9] first,
 * then also . _ -; 1..BF_MAX_NAME bytes. */
static int
pl_name(const unsigned char *p, size_t n, struct monitor_msg *m, struct bf_diag *d)
{
	size_t i;

	if (n == 0 || n > BF_MAX_NAME) {
		bf_diag_set(d, "probe", "a name of %zu bytes, expected 1 to %d", n, BF_MAX_NAME);
		return BF_ERR_PARSE;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = p[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-'))) {
			bf_diag_set(d, "probe", "byte %zu (0x%02x) of the name is not allowed", i,
			    c);
			return BF_ERR_PARSE;
		}
	}
	memcpy(m->str, p, n);
	m->str[n] = '\0';
	return 0;
}

int
monitor_check_path(const char *p, size_t n, struct bf_diag *d)
{
	size_t i;

	if (n == 0 || n > MONITOR_MAX_PATH || p[0] != '/') {
		bf_diag_set(d, "key", "not an absolute path of 1 to %d bytes", MONITOR_MAX_PATH);
		return BF_ERR_PARSE;
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) {
			bf_diag_set(d, "key", "control byte 0x%02x at %zu", (unsigned char)p[i], i);
			return BF_ERR_PARSE;
		}
	for (i = 0; i + 2 < n; i++)
		if (p[i] == '/' && p[i + 1] == '.' && p[i + 2] == '.' &&
		    (i + 3 == n || p[i + 3] == '/')) {
			bf_diag_set(d, "key", "a \"..\" component");
			return BF_ERR_PARSE;
		}
	return 0;
}

static int
pl_path(const unsigned char *p, size_t n, struct monitor_msg *m, struct bf_diag *d)
{
	int r;

	if ((r = monitor_check_path((const char *)p, n, d)) != 0)
		return r;
	memcpy(m->str, p, n);
	m->str[n] = '\0';
	return 0;
}

static int
pl_sign(const unsigned char *p, size_t n, struct monitor_msg *m, struct bf_diag *d)
{
	(void)d;
	m->data = p;
	m->len = n;
	return 0;
}

static int
pl_reply(const unsigned char *p, size_t n, struct monitor_msg *m, struct bf_diag *d)
{
	uint32_t u;

	if (n < 4 || n - 4 > MONITOR_MAX_REPLY) {
		bf_diag_set(d, "reply", "%zu bytes, expected 4 to %d", n, 4 + MONITOR_MAX_REPLY);
		return BF_ERR_PARSE;
	}
	u = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	m->code = (int32_t)u;
	if (m->code > 0 || m->code <= BF_ERR_LAST) {
		bf_diag_set(d, "reply", "code %d is not a BF_ERR_* code", (int)m->code);
		return BF_ERR_PARSE;
	}
	m->data = p + 4;
	m->len = n - 4;
	return 0;
}

/* u8 n, n bytes of [a-z_] (events.h's types), then one line of JSON text
 * (an object, as json_dumps(JSON_COMPACT) writes it: no control bytes). */
static int
pl_event(const unsigned char *p, size_t n, struct monitor_msg *m, struct bf_diag *d)
{
	size_t tl, i;

	if (n < 1 || (tl = p[0]) == 0 || tl > MONITOR_MAX_EVTYPE || n - 1 < tl) {
		bf_diag_set(d, "event", "bad event type length");
		return BF_ERR_PARSE;
	}
	for (i = 0; i < tl; i++)
		if (!((p[1 + i] >= 'a' && p[1 + i] <= 'z') || p[1 + i] == '_')) {
			bf_diag_set(d, "event", "bad byte in the event type");
			return BF_ERR_PARSE;
		}
	memcpy(m->str, p + 1, tl);
	m->str[tl] = '\0';
	m->data = p + 1 + tl;
	m->len = n - 1 - tl;
	if (m->len < 2 || m->data[0] != '{' || m->data[m->len - 1] != '}') {
		bf_diag_set(d, "event", "the data is not a JSON object");
		return BF_ERR_PARSE;
	}
	for (i = 0; i < m->len; i++)
		if (m->data[i] < 0x20) {
			bf_diag_set(d, "event", "control byte 0x%02x in the data", m->data[i]);
			return BF_ERR_PARSE;
		}
	return 0;
}

static const struct monitor_kind {
	int type;
	enum monitor_from from;
	size_t max;		/* payload bytes */
	monitor_payload_fn parse;
	const char *name;
} monitor_kinds[] = {
	{ MONITOR_HELLO, MONITOR_FROM_CHILD, 0, pl_empty, "hello" },
	{ MONITOR_READY, MONITOR_FROM_CHILD, 2, pl_ready, "ready" },
	{ MONITOR_KICK, MONITOR_FROM_CHILD, 0, pl_empty, "kick" },
	{ MONITOR_KICK_MACHINES, MONITOR_FROM_CHILD, 0, pl_empty, "kick-machines" },
	{ MONITOR_PROBE, MONITOR_FROM_CHILD, BF_MAX_NAME, pl_name, "probe" },
	{ MONITOR_SIGN, MONITOR_FROM_CHILD, MONITOR_MAX_SIGN, pl_sign, "sign" },
	{ MONITOR_KEY, MONITOR_FROM_CHILD, MONITOR_MAX_PATH, pl_path, "key" },
	{ MONITOR_REPLY, MONITOR_FROM_MONITOR, 4 + MONITOR_MAX_REPLY, pl_reply, "reply" },
	{ MONITOR_EVENT, MONITOR_FROM_MONITOR, 1 + MONITOR_MAX_EVTYPE + MONITOR_MAX_EVENT,
	  pl_event, "event" },
};
#define MONITOR_NKINDS (sizeof(monitor_kinds) / sizeof(monitor_kinds[0]))

int
monitor_msg_parse(enum monitor_from from, const unsigned char *buf, size_t len,
    struct monitor_msg *m, struct bf_diag *d)
{
	const struct monitor_kind *k = NULL;
	uint32_t flen;
	size_t i;
	int r;

	memset(m, 0, sizeof(*m));
	if (len < MONITOR_HDR)
		return 0;
	flen = (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3];
	for (i = 0; i < MONITOR_NKINDS; i++)
		if (monitor_kinds[i].type == buf[4] && monitor_kinds[i].from == from)
			k = &monitor_kinds[i];
	if (k == NULL) {
		bf_diag_set(d, "type", "message type %u is not one the %s may send", buf[4],
		    from == MONITOR_FROM_CHILD ? "API child" : "monitor");
		return BF_ERR_PROTO;
	}
	if (flen < 1) {
		bf_diag_set(d, k->name, "a frame length of 0");
		return BF_ERR_PARSE;
	}
	if (flen - 1 > k->max) {
		bf_diag_set(d, k->name, "%u bytes of payload, more than the %zu a %s may have",
		    flen - 1, k->max, k->name);
		return BF_ERR_TOOBIG;
	}
	if (len - 4 < flen)
		return 0;
	m->type = k->type;
	if ((r = k->parse(buf + MONITOR_HDR, flen - 1, m, d)) != 0)
		return r;
	return (int)(flen + 4);
}

int
monitor_put(struct buf *b, int type, const void *data, size_t n)
{
	unsigned char h[MONITOR_HDR];
	size_t old = b->len;
	int r;

	if (n > MONITOR_MAX_FRAME - 1 || type < 0 || type > 255)
		return BF_ERR_TOOBIG;
	h[0] = (unsigned char)((n + 1) >> 24);
	h[1] = (unsigned char)((n + 1) >> 16);
	h[2] = (unsigned char)((n + 1) >> 8);
	h[3] = (unsigned char)(n + 1);
	h[4] = (unsigned char)type;
	if ((r = buf_append(b, h, sizeof(h))) != 0 || (r = buf_append(b, data, n)) != 0) {
		b->len = old;
		if (b->data != NULL)
			b->data[old] = '\0';
		return r;
	}
	return 0;
}

int
monitor_put_ready(struct buf *b, uint16_t port)
{
	unsigned char p[2] = { (unsigned char)(port >> 8), (unsigned char)port };

	return monitor_put(b, MONITOR_READY, p, sizeof(p));
}

int
monitor_put_reply(struct buf *b, int32_t code, const void *data, size_t n)
{
	unsigned char p[4 + MONITOR_MAX_REPLY];
	uint32_t u = (uint32_t)code;

	if (n > MONITOR_MAX_REPLY)
		return BF_ERR_TOOBIG;
	p[0] = (unsigned char)(u >> 24);
	p[1] = (unsigned char)(u >> 16);
	p[2] = (unsigned char)(u >> 8);
	p[3] = (unsigned char)u;
	if (n > 0)
		memcpy(p + 4, data, n);
	return monitor_put(b, MONITOR_REPLY, p, 4 + n);
}

int
monitor_put_event(struct buf *b, const char *type, const char *json)
{
	size_t tl = strlen(type), jl = strlen(json), old = b->len;
	unsigned char h[MONITOR_HDR + 1];
	size_t n = 1 + tl + jl;
	int r;

	if (tl == 0 || tl > MONITOR_MAX_EVTYPE || jl > MONITOR_MAX_EVENT)
		return BF_ERR_TOOBIG;
	h[0] = (unsigned char)((n + 1) >> 24);
	h[1] = (unsigned char)((n + 1) >> 16);
	h[2] = (unsigned char)((n + 1) >> 8);
	h[3] = (unsigned char)(n + 1);
	h[4] = MONITOR_EVENT;
	h[5] = (unsigned char)tl;
	if ((r = buf_append(b, h, sizeof(h))) != 0 || (r = buf_append(b, type, tl)) != 0 ||
	    (r = buf_append(b, json, jl)) != 0) {
		b->len = old;
		if (b->data != NULL)
			b->data[old] = '\0';
		return r;
	}
	return 0;
}

int
monitor_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	ssize_t k;

	while (n > 0) {
		if ((k = send(fd, c, n, MSG_NOSIGNAL)) < 0) {
			if (errno == EINTR)
				continue;
			return BF_ERR_SYS;
		}
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

void
monitor_rd_init(struct monitor_rd *rd)
{
	/* one partial frame and one read past it */
	buf_init(&rd->b, MONITOR_HDR + MONITOR_MAX_FRAME + MONITOR_READ_CHUNK);
	rd->used = 0;
}

void
monitor_rd_free(struct monitor_rd *rd)
{
	if (rd == NULL)
		return;
	buf_free(&rd->b);
	rd->used = 0;
}

int
monitor_rd_next(int fd, struct monitor_rd *rd, enum monitor_from from, int timeout_ms,
    struct monitor_msg *m, struct bf_diag *d)
{
	char chunk[MONITOR_READ_CHUNK];
	int64_t deadline = timeout_ms >= 0 ? bf_mono_ms() + timeout_ms : 0;
	struct pollfd pfd;
	ssize_t k;
	int r, wait;

	if (rd->used > 0) {
		memmove(rd->b.data, rd->b.data + rd->used, rd->b.len - rd->used);
		rd->b.len -= rd->used;
		rd->b.data[rd->b.len] = '\0';
		rd->used = 0;
	}
	for (;;) {
		if ((r = monitor_msg_parse(from, (const unsigned char *)rd->b.data, rd->b.len, m,
		    d)) != 0) {
			if (r > 0) {
				rd->used = (size_t)r;
				return 1;
			}
			return r;
		}
		wait = -1;
		if (timeout_ms >= 0 && (wait = (int)(deadline - bf_mono_ms())) <= 0)
			return BF_ERR_TIMEOUT;
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if ((r = poll(&pfd, 1, wait)) < 0) {
			if (errno == EINTR)
				continue;
			return BF_ERR_SYS;
		}
		if (r == 0)
			continue;
		if ((k = read(fd, chunk, sizeof(chunk))) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return BF_ERR_SYS;
		}
		if (k == 0) {
			if (rd->b.len == 0)
				return 0;
			bf_diag_set(d, NULL, "end of stream inside a frame");
			return BF_ERR_PROTO;
		}
		if ((r = buf_append(&rd->b, chunk, (size_t)k)) != 0)
			return r;
	}
}
