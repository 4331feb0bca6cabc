/*
 * test_cli_http_parse.c: cli/http-parse.c, the plain HTTP client's
 * response parser, as a pure function: a table of answers (good, hostile,
 * truncated, over the caps), each fed whole, byte by byte and cut in two
 * at every boundary, which must all end the same. Then the caps and the
 * header lookup. The CLI's HTTP sources are compiled into this test
 * (tests/CMakeLists.txt): the CLI is an executable, not a library.
 */
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "../../cli/http-int.h"
#include "err.h"

/* What one feeding of an answer came to. */
struct pr {
	int r;			/* HTTP_PARSE_DONE, HTTP_PARSE_MORE, or BF_ERR_* */
	long status;
	int keepalive;
	int heads;		/* HEAD events: exactly one for a good answer */
	char body[512];
	size_t bodylen;
	size_t extra;		/* bytes after the answer */
	char hdr[64];		/* the value of header X-Id, "" when none */
	char err[160];
};

/*
 * Feed in[0..len) in pieces: the first of cut bytes (0: no cut), then the
 * rest step bytes at a time (0: all at once); eof: the peer closes after.
 */
static void
feed(const char *in, size_t len, size_t cut, size_t step, int eof, int nobody, struct pr *o)
{
	struct http_parser p;
	const char *b;
	size_t off = 0, end, used, bl;
	int ev = HTTP_PARSE_MORE;

	memset(o, 0, sizeof(*o));
	http_parse_init(&p, nobody);
	while (off < len || ev == HTTP_PARSE_HEAD || ev == HTTP_PARSE_BODY) {
		if (cut > 0 && off < cut)
			end = cut;
		else
			end = step == 0 || len - off < step ? len : off + step;
		ev = http_parse(&p, in + off, end - off, &used, &b, &bl);
		off += used;
		if (ev < 0 || ev == HTTP_PARSE_DONE)
			break;
		if (ev == HTTP_PARSE_HEAD)
			o->heads++;
		if (ev == HTTP_PARSE_BODY) {
			if (bl == 0 || o->bodylen + bl >= sizeof(o->body)) {
				ev = -100;	/* an empty BODY event, or a runaway */
				break;
			}
			memcpy(o->body + o->bodylen, b, bl);
			o->bodylen += bl;
		}
	}
	if (ev == HTTP_PARSE_MORE && eof)
		ev = http_parse_eof(&p);
	o->r = ev;
	o->status = p.status;
	o->keepalive = p.keepalive;
	o->extra = ev == HTTP_PARSE_DONE ? len - off : 0;
	if (o->heads > 0)
		http_parse_header(&p.hdrs, "x-id", o->hdr, sizeof(o->hdr));
	snprintf(o->err, sizeof(o->err), "%s", p.err);
	http_parse_free(&p);
}

#define OK	"HTTP/1.1 200 OK\r\n"
#define DONE	HTTP_PARSE_DONE
#define MORE	HTTP_PARSE_MORE
#define PROTO	BF_ERR_PROTO

static const struct pcase {
	const char *name;
	const char *in;
	size_t len;		/* of in; 0: strlen(in) */
	int eof;		/* the peer closes after in */
	int nobody;		/* the request was HEAD */
	int r;
	long status;		/* checked when r is DONE */
	const char *body;	/* checked when r is DONE */
	int keep;		/* checked when r is DONE */
	size_t extra;
	const char *err;	/* a part of p->err, when r < 0 */
	const char *hdr;	/* X-Id's value, when not NULL */
} pcases[] = {
	{ .name = "content-length", .in = OK "Content-Length: 5\r\nX-Id: 7\r\n\r\nhello",
	  .r = DONE, .status = 200, .body = "hello", .keep = 1, .hdr = "7" },
	{ .name = "no reason phrase", .in = "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
	  .r = DONE, .status = 200, .body = "", .keep = 1 },
	{ .name = "empty reason phrase", .in = "HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n",
	  .r = DONE, .status = 404, .body = "", .keep = 1 },
	{ .name = "bare LF lines", .in = "HTTP/1.1 201 Created\nContent-Length: 2\n\nok",
	  .r = DONE, .status = 201, .body = "ok", .keep = 1 },
	{ .name = "connection close", .in = OK "Connection: close\r\nContent-Length: 2\r\n\r\nok",
	  .r = DONE, .status = 200, .body = "ok", .keep = 0 },
	{ .name = "connection list", .in = OK "Connection: foo, Close \r\nContent-Length: 2\r\n\r\nok",
	  .r = DONE, .status = 200, .body = "ok", .keep = 0 },
	{ .name = "1.0 close-delimited", .in = "HTTP/1.0 200 OK\r\n\r\nuntil the end", .eof = 1,
	  .r = DONE, .status = 200, .body = "until the end", .keep = 0 },
	{ .name = "1.1 close-delimited", .in = OK "\r\nabc", .eof = 1,
	  .r = DONE, .status = 200, .body = "abc", .keep = 0 },
	{ .name = "1.0 keep-alive", .in = "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n"
	  "Content-Length: 1\r\n\r\nx", .r = DONE, .status = 200, .body = "x", .keep = 1 },
	{ .name = "1.0 with length", .in = "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx",
	  .r = DONE, .status = 200, .body = "x", .keep = 0 },
	{ .name = "chunked", .in = OK "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
	  "6;ext=1;q=\"a\"\r\n world\r\nA \r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n",
	  .r = DONE, .status = 200, .body = "hello world0123456789", .keep = 1 },
	{ .name = "chunked, LF only", .in = OK "Transfer-Encoding: Chunked\r\n\r\n3\nabc\n0\n\n",
	  .r = DONE, .status = 200, .body = "abc", .keep = 1 },
	{ .name = "chunked, leading zeros", .in = OK "Transfer-Encoding: chunked\r\n\r\n"
	  "0000000000000000000003\r\nabc\r\n0\r\n\r\n", .r = DONE, .status = 200, .body = "abc",
	  .keep = 1 },
	{ .name = "100 skipped", .in = "HTTP/1.1 100 Continue\r\nX-Id: early\r\n\r\n"
	  OK "Content-Length: 2\r\nX-Id: late\r\n\r\nok", .r = DONE, .status = 200, .body = "ok",
	  .keep = 1, .hdr = "late" },
	{ .name = "204 has no body", .in = "HTTP/1.1 204 No Content\r\n\r\n", .r = DONE,
	  .status = 204, .body = "", .keep = 1 },
	{ .name = "304 has no body", .in = "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n",
	  .r = DONE, .status = 304, .body = "", .keep = 1 },
	{ .name = "HEAD has no body", .in = OK "Content-Length: 9\r\n\r\n", .nobody = 1,
	  .r = DONE, .status = 200, .body = "", .keep = 1 },
	{ .name = "bytes after the answer", .in = OK "Content-Length: 2\r\n\r\nokEXTRA",
	  .r = DONE, .status = 200, .body = "ok", .keep = 1, .extra = 5 },
	{ .name = "302 is an answer", .in = "HTTP/1.1 302 Found\r\nLocation: http://x/\r\n"
	  "Content-Length: 0\r\n\r\n", .r = DONE, .status = 302, .body = "", .keep = 1 },
	{ .name = "header OWS and case", .in = OK "x-ID: \t 42 \t\r\ncontent-length:  1 \r\n\r\nz",
	  .r = DONE, .status = 200, .body = "z", .keep = 1, .hdr = "42" },
	{ .name = "last X-Id wins", .in = OK "X-Id: 1\r\nX-Id: 2\r\nContent-Length: 0\r\n\r\n",
	  .r = DONE, .status = 200, .body = "", .keep = 1, .hdr = "2" },
	{ .name = "equal repeated length", .in = OK "Content-Length: 2\r\nContent-Length: 02\r\n"
	  "\r\nok", .r = DONE, .status = 200, .body = "ok", .keep = 1 },
	{ .name = "obs-text in a value", .in = OK "X-Id: caf\xc3\xa9\r\nContent-Length: 0\r\n\r\n",
	  .r = DONE, .status = 200, .body = "", .keep = 1, .hdr = "caf\xc3\xa9" },

	/* Status lines. */
	{ .name = "HTTP/2", .in = "HTTP/2 200 OK\r\n\r\n", .r = PROTO, .err = "status line" },
	{ .name = "HTTP/1.2", .in = "HTTP/1.2 200 OK\r\n\r\n", .r = PROTO, .err = "status line" },
	{ .name = "lower case", .in = "http/1.1 200 OK\r\n\r\n", .r = PROTO, .err = "status line" },
	{ .name = "two digits", .in = "HTTP/1.1 20 OK\r\n\r\n", .r = PROTO, .err = "status line" },
	{ .name = "four digits", .in = "HTTP/1.1 2000 OK\r\n\r\n", .r = PROTO, .err = "status line" },
	{ .name = "600", .in = "HTTP/1.1 600 X\r\n\r\n", .r = PROTO, .err = "status line" },
	{ .name = "099", .in = "HTTP/1.1 099 X\r\n\r\n", .r = PROTO, .err = "status line" },
	{ .name = "no space", .in = "HTTP/1.1 200OK\r\n\r\n", .r = PROTO, .err = "status line" },
	{ .name = "two spaces", .in = "HTTP/1.1  200 OK\r\n\r\n", .r = PROTO, .err = "status line" },
	{ .name = "leading space", .in = " HTTP/1.1 200 OK\r\n\r\n", .r = PROTO, .err = "status line" },
	{ .name = "letters", .in = "HTTP/1.1 2x0 OK\r\n\r\n", .r = PROTO, .err = "status line" },
	{ .name = "empty line first", .in = "\r\nHTTP/1.1 200 OK\r\n\r\n", .r = PROTO,
	  .err = "status line" },
	{ .name = "control in reason", .in = "HTTP/1.1 200 O\x01K\r\n\r\n", .r = PROTO,
	  .err = "control" },
	{ .name = "not HTTP", .in = "SSH-2.0-OpenSSH_9.2\r\n", .r = PROTO, .err = "status line" },
	{ .name = "101", .in = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
	  .r = PROTO, .err = "interim answer 101" },
	{ .name = "103", .in = "HTTP/1.1 103 Early Hints\r\n\r\n" OK "\r\n", .r = PROTO,
	  .err = "interim answer 103" },

	/* Header lines. */
	{ .name = "obs-fold", .in = OK "X-Id: a\r\n b\r\n\r\n", .r = PROTO, .err = "obs-fold" },
	{ .name = "tab fold", .in = OK "X-Id: a\r\n\tb\r\n\r\n", .r = PROTO, .err = "obs-fold" },
	{ .name = "space before colon", .in = OK "X-Id : a\r\n\r\n", .r = PROTO,
	  .err = "header line" },
	{ .name = "space in name", .in = OK "X Id: a\r\n\r\n", .r = PROTO, .err = "header line" },
	{ .name = "no name", .in = OK ": a\r\n\r\n", .r = PROTO, .err = "header line" },
	{ .name = "no colon", .in = OK "X-Id\r\n\r\n", .r = PROTO, .err = "header line" },
	{ .name = "NUL in a value", .in = OK "X-Id: a\0b\r\n\r\n",
	  .len = sizeof(OK "X-Id: a\0b\r\n\r\n") - 1, .r = PROTO, .err = "NUL" },
	{ .name = "bare CR", .in = OK "X-Id: a\rb\r\n\r\n", .r = PROTO, .err = "CR" },
	{ .name = "CR CR LF", .in = OK "X-Id: a\r\r\n\r\n", .r = PROTO, .err = "CR" },
	{ .name = "control in a value", .in = OK "X-Id: a\x01b\r\n\r\n", .r = PROTO,
	  .err = "control" },
	{ .name = "DEL in a value", .in = OK "X-Id: a\x7f\r\n\r\n", .r = PROTO, .err = "control" },

	/* Content-Length. */
	{ .name = "negative length", .in = OK "Content-Length: -1\r\n\r\n", .r = PROTO,
	  .err = "not a number" },
	{ .name = "plus length", .in = OK "Content-Length: +5\r\n\r\nhello", .r = PROTO,
	  .err = "not a number" },
	{ .name = "empty length", .in = OK "Content-Length:\r\n\r\n", .r = PROTO,
	  .err = "not a number" },
	{ .name = "length with letters", .in = OK "Content-Length: 5x\r\n\r\nhello", .r = PROTO,
	  .err = "not a number" },
	{ .name = "length list", .in = OK "Content-Length: 5, 5\r\n\r\nhello", .r = PROTO,
	  .err = "not a number" },
	{ .name = "length in hex", .in = OK "Content-Length: 0x5\r\n\r\nhello", .r = PROTO,
	  .err = "not a number" },
	{ .name = "overflowing length", .in = OK "Content-Length: 99999999999999999999\r\n\r\n",
	  .r = PROTO, .err = "too large" },
	{ .name = "2^63", .in = OK "Content-Length: 9223372036854775808\r\n\r\n", .r = PROTO,
	  .err = "too large" },
	{ .name = "conflicting lengths", .in = OK "Content-Length: 5\r\nContent-Length: 6\r\n"
	  "\r\nhello!", .r = PROTO, .err = "conflicting" },
	{ .name = "length and chunked", .in = OK "Content-Length: 5\r\n"
	  "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", .r = PROTO,
	  .err = "both" },

	/* Transfer-Encoding. */
	{ .name = "gzip", .in = OK "Transfer-Encoding: gzip\r\n\r\n", .r = PROTO,
	  .err = "Transfer-Encoding \"gzip\" is not supported" },
	{ .name = "gzip, chunked", .in = OK "Transfer-Encoding: gzip, chunked\r\n\r\n",
	  .r = PROTO, .err = "not supported" },
	{ .name = "chunked twice", .in = OK "Transfer-Encoding: chunked\r\n"
	  "Transfer-Encoding: chunked\r\n\r\n", .r = PROTO, .err = "more than one" },
	{ .name = "identity", .in = OK "Transfer-Encoding: identity\r\n\r\n", .r = PROTO,
	  .err = "not supported" },

	/* Chunks. */
	{ .name = "chunk size letters", .in = OK "Transfer-Encoding: chunked\r\n\r\nzz\r\n",
	  .r = PROTO, .err = "chunk size" },
	{ .name = "chunk size empty", .in = OK "Transfer-Encoding: chunked\r\n\r\n\r\n",
	  .r = PROTO, .err = "chunk size" },
	{ .name = "chunk size negative", .in = OK "Transfer-Encoding: chunked\r\n\r\n-1\r\n",
	  .r = PROTO, .err = "chunk size" },
	{ .name = "chunk size 0x", .in = OK "Transfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n",
	  .r = PROTO, .err = "chunk size" },
	{ .name = "chunk size space inside", .in = OK "Transfer-Encoding: chunked\r\n\r\n"
	  "1 1\r\n", .r = PROTO, .err = "chunk size" },
	{ .name = "chunk size overflow", .in = OK "Transfer-Encoding: chunked\r\n\r\n"
	  "10000000000000000\r\n", .r = PROTO, .err = "too large" },
	{ .name = "chunk size 2^64-1", .in = OK "Transfer-Encoding: chunked\r\n\r\n"
	  "ffffffffffffffff\r\nabc", .eof = 1, .r = BF_ERR_LOST, .err = "before the answer" },
	{ .name = "chunk without CRLF", .in = OK "Transfer-Encoding: chunked\r\n\r\n"
	  "5\r\nhelloXX\r\n0\r\n\r\n", .r = PROTO, .err = "CRLF" },
	{ .name = "chunk longer than said", .in = OK "Transfer-Encoding: chunked\r\n\r\n"
	  "3\r\nhello\r\n0\r\n\r\n", .r = PROTO, .err = "CRLF" },
	{ .name = "chunk CR CR", .in = OK "Transfer-Encoding: chunked\r\n\r\n"
	  "1\r\na\r\r\n0\r\n\r\n", .r = PROTO, .err = "CRLF" },

	/* Truncated. */
	{ .name = "nothing", .in = "", .eof = 1, .r = BF_ERR_LOST, .err = "before an answer" },
	{ .name = "half a status line", .in = "HTTP/1.1 2", .eof = 1, .r = BF_ERR_LOST,
	  .err = "before the answer was complete" },
	{ .name = "no end of head", .in = OK "Content-Length: 5\r\n", .eof = 1,
	  .r = BF_ERR_LOST, .err = "before the answer" },
	{ .name = "short body", .in = OK "Content-Length: 10\r\n\r\nhello", .eof = 1,
	  .r = BF_ERR_LOST, .err = "before the answer" },
	{ .name = "chunked, no last chunk", .in = OK "Transfer-Encoding: chunked\r\n\r\n"
	  "5\r\nhello\r\n", .eof = 1, .r = BF_ERR_LOST, .err = "before the answer" },
	{ .name = "chunked, no end of trailers", .in = OK "Transfer-Encoding: chunked\r\n\r\n"
	  "0\r\nX: 1\r\n", .eof = 1, .r = BF_ERR_LOST, .err = "before the answer" },
	{ .name = "incomplete, no close", .in = OK "Content-Length: 10\r\n\r\nhello",
	  .r = MORE },
};

static int
pr_same(const struct pr *a, const struct pr *b)
{
	return a->r == b->r && a->status == b->status && a->keepalive == b->keepalive &&
	    a->heads == b->heads && a->bodylen == b->bodylen &&
	    memcmp(a->body, b->body, a->bodylen) == 0 && a->extra == b->extra &&
	    strcmp(a->hdr, b->hdr) == 0 && strcmp(a->err, b->err) == 0;
}

static void
test_table(void)
{
	const struct pcase *c;
	struct pr whole, o;
	size_t i, k, len;

	for (i = 0; i < sizeof(pcases) / sizeof(pcases[0]); i++) {
		c = &pcases[i];
		len = c->len != 0 ? c->len : strlen(c->in);
		feed(c->in, len, 0, 0, c->eof, c->nobody, &whole);
		if (whole.r != c->r)
			fprintf(stderr, "case \"%s\": r %d (%s), expected %d\n", c->name, whole.r,
			    whole.err, c->r);
		T_EQ_INT(whole.r, c->r);
		if (c->r == DONE) {
			T_EQ_INT(whole.status, c->status);
			T_EQ_INT(whole.heads, 1);
			T_EQ_INT(whole.bodylen, strlen(c->body));
			T_CHECK(memcmp(whole.body, c->body, whole.bodylen) == 0);
			T_EQ_INT(whole.keepalive, c->keep);
			T_EQ_INT(whole.extra, c->extra);
		}
		if (c->r < 0 && c->err != NULL) {
			if (strstr(whole.err, c->err) == NULL)
				fprintf(stderr, "case \"%s\"\n", c->name);
			T_CONTAINS(whole.err, c->err);
		}
		if (c->hdr != NULL)
			T_EQ_STR(whole.hdr, c->hdr);
		/* Split anywhere, the answer reads the same. */
		feed(c->in, len, 0, 1, c->eof, c->nobody, &o);
		if (!pr_same(&whole, &o))
			fprintf(stderr, "case \"%s\": byte by byte differs\n", c->name);
		T_CHECK(pr_same(&whole, &o));
		for (k = 1; k < len; k++) {
			feed(c->in, len, k, 0, c->eof, c->nobody, &o);
			if (!pr_same(&whole, &o)) {
				fprintf(stderr, "case \"%s\": cut at %zu differs\n", c->name, k);
				T_CHECK(pr_same(&whole, &o));
				break;
			}
		}
	}
}

/* The head's cap, a line's cap, and interim answers counted in. */
static void
test_caps(void)
{
	struct buf b;
	struct pr o;
	size_t i;

	buf_init(&b, 4 * BF_MAX_HTTP_RESP_HEAD);
	/* A line at the cap passes; one byte more does not. */
	T_OK(buf_puts(&b, OK "X-Id: "));
	for (i = strlen("X-Id: "); i < BF_MAX_HTTP_RESP_LINE; i++)
		T_OK(buf_puts(&b, "a"));
	T_OK(buf_puts(&b, "\r\nContent-Length: 0\r\n\r\n"));
	feed(b.data, b.len, 0, 0, 0, 0, &o);
	T_EQ_INT(o.r, DONE);
	buf_reset(&b);
	T_OK(buf_puts(&b, OK "X-Id: "));
	for (i = strlen("X-Id: "); i < BF_MAX_HTTP_RESP_LINE + 1; i++)
		T_OK(buf_puts(&b, "a"));
	T_OK(buf_puts(&b, "\r\n\r\n"));
	feed(b.data, b.len, 0, 0, 0, 0, &o);
	T_EQ_INT(o.r, BF_ERR_TOOBIG);
	T_CONTAINS(o.err, "longer than 8192");

	/* Many short headers past the head's cap. */
	buf_reset(&b);
	T_OK(buf_puts(&b, OK));
	for (i = 0; b.len < BF_MAX_HTTP_RESP_HEAD + 100; i++)
		T_OK(buf_printf(&b, "X-%zu: %0100d\r\n", i, 0));
	T_OK(buf_puts(&b, "Content-Length: 0\r\n\r\n"));
	feed(b.data, b.len, 0, 0, 0, 0, &o);
	T_EQ_INT(o.r, BF_ERR_TOOBIG);
	T_CONTAINS(o.err, "head is larger than 65536");
	T_EQ_INT(o.heads, 0);

	/* Endless "100 Continue"s add up to the same cap. */
	buf_reset(&b);
	while (b.len < BF_MAX_HTTP_RESP_HEAD + 100)
		T_OK(buf_puts(&b, "HTTP/1.1 100 Continue\r\n\r\n"));
	feed(b.data, b.len, 0, 0, 0, 0, &o);
	T_EQ_INT(o.r, BF_ERR_TOOBIG);

	/* Trailers too. */
	buf_reset(&b);
	T_OK(buf_puts(&b, OK "Transfer-Encoding: chunked\r\n\r\n0\r\n"));
	while (b.len < BF_MAX_HTTP_RESP_HEAD + 100)
		T_OK(buf_puts(&b, "X-Trailer: 0123456789012345678901234567890123456789\r\n"));
	T_OK(buf_puts(&b, "\r\n"));
	feed(b.data, b.len, 0, 0, 0, 0, &o);
	T_EQ_INT(o.r, BF_ERR_TOOBIG);

	/* A large body is no head: it passes in any pieces. */
	buf_reset(&b);
	T_OK(buf_printf(&b, OK "Content-Length: %d\r\n\r\n", 3 * BF_MAX_HTTP_RESP_HEAD));
	for (i = 0; i < 3 * BF_MAX_HTTP_RESP_HEAD; i++)
		T_OK(buf_append(&b, "x", 1));
	{
		struct http_parser p;
		const char *bd;
		size_t off = 0, used, bl, total = 0;
		int ev;

		http_parse_init(&p, 0);
		do {
			ev = http_parse(&p, b.data + off, b.len - off, &used, &bd, &bl);
			off += used;
			if (ev == HTTP_PARSE_BODY)
				total += bl;
		} while (ev == HTTP_PARSE_HEAD || ev == HTTP_PARSE_BODY);
		T_EQ_INT(ev, DONE);
		T_EQ_INT(total, 3 * BF_MAX_HTTP_RESP_HEAD);
		T_EQ_INT(off, b.len);
		/* Once DONE, it stays DONE and eats nothing. */
		T_EQ_INT(http_parse(&p, "x", 1, &used, &bd, &bl), DONE);
		T_EQ_INT(used, 0);
		http_parse_free(&p);
	}
	buf_free(&b);
}

/* A failed parser stays failed. */
static void
test_sticky(void)
{
	struct http_parser p;
	const char *b;
	size_t used, bl;

	http_parse_init(&p, 0);
	T_EQ_INT(http_parse(&p, "HTTP/9", 6, &used, &b, &bl), MORE);
	T_EQ_INT(http_parse(&p, "\r\n", 2, &used, &b, &bl), PROTO);
	T_EQ_INT(http_parse(&p, OK, strlen(OK), &used, &b, &bl), PROTO);
	T_EQ_INT(used, 0);
	T_EQ_INT(http_parse_eof(&p), PROTO);
	http_parse_free(&p);
	http_parse_free(NULL);
}

static void
test_header_lookup(void)
{
	struct buf h;
	char out[8];

	buf_init(&h, 1024);
	T_EQ_INT(http_parse_header(&h, "x", out, sizeof(out)), BF_ERR_NOTFOUND);
	T_EQ_STR(out, "");
	T_OK(buf_puts(&h, "X-A:1\nX-AB:2\nx-a:3\nLong:0123456789\nEmpty:\nColon:a:b\n"));
	T_EQ_INT(http_parse_header(&h, "X-A", out, sizeof(out)), 0);
	T_EQ_STR(out, "3");
	T_EQ_INT(http_parse_header(&h, "x-ab", out, sizeof(out)), 0);
	T_EQ_STR(out, "2");
	T_EQ_INT(http_parse_header(&h, "X-", out, sizeof(out)), BF_ERR_NOTFOUND);
	T_EQ_INT(http_parse_header(&h, "long", out, sizeof(out)), 0);
	T_EQ_STR(out, "0123456");		/* cut to outsz - 1 */
	T_EQ_INT(http_parse_header(&h, "empty", out, sizeof(out)), 0);
	T_EQ_STR(out, "");
	T_EQ_INT(http_parse_header(&h, "colon", out, sizeof(out)), 0);
	T_EQ_STR(out, "a:b");
	T_EQ_INT(http_parse_header(&h, "colon", out, 0), BF_ERR_NOTFOUND);
	buf_free(&h);
}

int
main(void)
{
	test_table();
	test_caps();
	test_sticky();
	test_header_lookup();
	return t_done();
}
