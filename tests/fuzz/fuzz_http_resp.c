/*
 * fuzz_http_resp.c: the CLI's HTTP response parser (cli/http-parse.c),
 * which reads whatever a peer at the coordinator's address sends. The
 * first byte picks the pieces the rest is fed in (and HEAD or not); the
 * answer must read the same fed whole and fed in pieces (status, body,
 * framing, keep-alive, headers, error), every event must be sane, and a
 * failed or finished parser must stay so.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../cli/http-int.h"
#include "err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz_out {
	int r;
	long status;
	int keepalive, heads;
	uint64_t bodyhash;	/* FNV-1a of the body's bytes */
	size_t bodylen, used;
	char hdr[64];
	char err[160];
};

/* Feed in[0..len): pieces of 1..16 bytes from seed's generator, or all at
 * once when seed is 0; then the close. */
static void
fz_feed(const char *in, size_t len, unsigned seed, int nobody, struct fz_out *o)
{
	struct http_parser p;
	const char *b, *e, *s;
	size_t off = 0, end, used, bl, i;
	int ev = HTTP_PARSE_MORE;

	memset(o, 0, sizeof(*o));
	o->bodyhash = 14695981039346656037ULL;
	http_parse_init(&p, nobody);
	while (off < len || ev == HTTP_PARSE_HEAD || ev == HTTP_PARSE_BODY) {
		end = len;
		if (seed != 0) {
			seed = seed * 1103515245u + 12345u;
			end = off + 1 + (seed >> 16) % 16;
			if (end > len)
				end = len;
		}
		ev = http_parse(&p, in + off, end - off, &used, &b, &bl);
		/* MORE eats all it was given; nothing eats more. */
		if (used > end - off || (ev == HTTP_PARSE_MORE && used != end - off))
			abort();
		off += used;
		if (ev < 0 || ev == HTTP_PARSE_DONE)
			break;
		if (ev == HTTP_PARSE_HEAD) {
			if (++o->heads > 1 || p.status < 200 || p.status > 599)
				abort();
			/* Every kept header line is "name:value" with no CR or NUL. */
			for (s = p.hdrs.data; s != NULL && (e = strchr(s, '\n')) != NULL; s = e + 1)
				if (memchr(s, ':', (size_t)(e - s)) == NULL ||
				    memchr(s, '\r', (size_t)(e - s)) != NULL)
					abort();
			if (p.hdrs.data != NULL && strlen(p.hdrs.data) != p.hdrs.len)
				abort();
			http_parse_header(&p.hdrs, "content-type", o->hdr, sizeof(o->hdr));
		}
		if (ev == HTTP_PARSE_BODY) {
			if (bl == 0 || bl > used || o->heads != 1 || b < in || b + bl > in + len)
				abort();
			for (i = 0; i < bl; i++)
				o->bodyhash = (o->bodyhash ^ (unsigned char)b[i]) * 1099511628211ULL;
			o->bodylen += bl;
		}
	}
	if (ev == HTTP_PARSE_MORE)
		ev = http_parse_eof(&p);
	if (ev == HTTP_PARSE_DONE && o->heads != 1)
		abort();
	if (ev < 0 && ev != BF_ERR_PROTO && ev != BF_ERR_TOOBIG && ev != BF_ERR_LOST &&
	    ev != BF_ERR_ALLOC)
		abort();
	if (ev < 0 && p.err[0] == '\0')
		abort();
	/* It stays where it ended. */
	if (ev < 0 || ev == HTTP_PARSE_DONE) {
		if (http_parse(&p, "x", 1, &used, &b, &bl) != ev || used != 0)
			abort();
	}
	o->r = ev;
	o->status = ev == HTTP_PARSE_DONE || o->heads > 0 ? p.status : 0;
	o->keepalive = p.keepalive;
	o->used = off;
	memcpy(o->err, p.err, sizeof(o->err));
	http_parse_free(&p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_out whole, cut;
	unsigned seed;

	if (size < 1 || size > 1 << 18)
		return 0;
	seed = data[0] | 1u;
	fz_feed((const char *)data + 1, size - 1, 0, data[0] & 1, &whole);
	fz_feed((const char *)data + 1, size - 1, seed, data[0] & 1, &cut);
	if (whole.r != cut.r || whole.status != cut.status || whole.keepalive != cut.keepalive ||
	    whole.heads != cut.heads || whole.bodylen != cut.bodylen ||
	    whole.bodyhash != cut.bodyhash || whole.used != cut.used ||
	    strcmp(whole.hdr, cut.hdr) != 0 || strcmp(whole.err, cut.err) != 0)
		abort();
	return 0;
}
