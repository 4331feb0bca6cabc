/*
 * http-parse.c: the plain backend's HTTP/1.1 response parser (see
 * http-int.h). No I/O: bytes in, events out, so the fuzzer and the unit
 * tests drive it exactly as the socket does, split anywhere. It is strict
 * where laxness would let a peer frame one answer two ways (Content-Length,
 * chunk sizes, Transfer-Encoding, obs-fold, stray CRs) and lenient only
 * where RFC 9112 lets a recipient be: a bare LF ends a line.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "caps.h"
#include "err.h"
#include "http-int.h"
#include "parse.h"

enum {
	PS_STATUS,		/* the status line */
	PS_HEADER,		/* header lines, up to the empty one */
	PS_BODY_LEN,		/* p->left bytes of body (Content-Length) */
	PS_BODY_CLOSE,		/* body up to the close */
	PS_CHUNK_SIZE,		/* a chunk's size line */
	PS_CHUNK_DATA,		/* p->left bytes of the chunk */
	PS_CHUNK_END,		/* the CRLF after a chunk's data */
	PS_TRAILER,		/* trailer lines after the last chunk, skipped */
	PS_DONE,
	PS_FAILED
};

/* Quoted text in messages is cut, so that p->err keeps its end. */
#define PS_QUOTE	48

void
http_parse_init(struct http_parser *p, int nobody)
{
	memset(p, 0, sizeof(*p));
	p->state = PS_STATUS;
	p->nobody = nobody;
	buf_init(&p->line, BF_MAX_HTTP_RESP_LINE);
	buf_init(&p->hdrs, BF_MAX_HTTP_RESP_HEAD);
}

void
http_parse_free(struct http_parser *p)
{
	if (p == NULL)
		return;
	buf_free(&p->line);
	buf_free(&p->hdrs);
}

static int __attribute__((format(printf, 3, 4)))
http_parse_fail(struct http_parser *p, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	p->state = PS_FAILED;
	p->failed = r;
	return r;
}

/* RFC 9110's tchar: what a header name is made of. */
static int
http_parse_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* A byte of a field value or a reason phrase: HTAB, SP, VCHAR, obs-text. */
static int
http_parse_vchar(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static int
http_parse_hex(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Does s (n bytes) equal the lower-case word w, ignoring case? */
static int
http_parse_is(const char *s, size_t n, const char *w)
{
	return n == strlen(w) && strncasecmp(s, w, n) == 0;
}

/* "HTTP/1.x NNN[ reason]": 1.0 or 1.1 only, a status of 100 to 599. */
static int
http_parse_status(struct http_parser *p, const char *s, size_t n)
{
	size_t i;

	if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') ||
	    s[8] != ' ' || s[9] < '1' || s[9] > '5' || s[10] < '0' || s[10] > '9' ||
	    s[11] < '0' || s[11] > '9' || (n > 12 && s[12] != ' '))
		return http_parse_fail(p, BF_ERR_PROTO, "malformed status line \"%.*s\"",
		    PS_QUOTE, s);
	for (i = 13; i < n; i++)
		if (!http_parse_vchar((unsigned char)s[i]))
			return http_parse_fail(p, BF_ERR_PROTO,
			    "a control character in the status line");
	p->minor = s[7] - '0';
	p->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
	p->state = PS_HEADER;
	return 0;
}

/* Content-Length: digits only; a repeat must say the same. */
static int
http_parse_length(struct http_parser *p, const char *v, size_t n)
{
	int64_t len;
	int r;

	if (n == 0 || v[0] < '0' || v[0] > '9' ||
	    (r = parse_i64_n(v, n, 0, INT64_MAX, &len)) == BF_ERR_PARSE)
		return http_parse_fail(p, BF_ERR_PROTO, "Content-Length \"%.*s\" is not a number",
		    (int)(n < PS_QUOTE ? n : PS_QUOTE), v);
	if (r != 0)
		return http_parse_fail(p, BF_ERR_PROTO, "Content-Length \"%.*s\" is too large",
		    (int)(n < PS_QUOTE ? n : PS_QUOTE), v);
	if (p->have_len && p->len != (uint64_t)len)
		return http_parse_fail(p, BF_ERR_PROTO,
		    "conflicting Content-Length headers (%llu and %lld)",
		    (unsigned long long)p->len, (long long)len);
	p->have_len = 1;
	p->len = (uint64_t)len;
	return 0;
}

/* Connection: a comma-separated list; only close and keep-alive matter. */
static void
http_parse_connection(struct http_parser *p, const char *v, size_t n)
{
	size_t i = 0, s, e;

	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		s = i;
		while (i < n && v[i] != ',')
			i++;
		e = i;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (http_parse_is(v + s, e - s, "close"))
			p->conn_close = 1;
		else if (http_parse_is(v + s, e - s, "keep-alive"))
			p->conn_keep = 1;
	}
}

/* "name: value": no white space before the colon, no obs-fold. */
static int
http_parse_field(struct http_parser *p, const char *s, size_t n)
{
	size_t i, colon, vs, ve;
	int r;

	if (s[0] == ' ' || s[0] == '\t')
		return http_parse_fail(p, BF_ERR_PROTO,
		    "a header line folded onto the one before (obs-fold)");
	for (i = 0; i < n && http_parse_tchar((unsigned char)s[i]); i++)
		;
	if (i == 0 || i == n || s[i] != ':')
		return http_parse_fail(p, BF_ERR_PROTO, "malformed header line \"%.*s\"",
		    PS_QUOTE, s);
	colon = i;
	for (vs = colon + 1; vs < n && (s[vs] == ' ' || s[vs] == '\t'); vs++)
		;
	for (ve = n; ve > vs && (s[ve - 1] == ' ' || s[ve - 1] == '\t'); ve--)
		;
	for (i = vs; i < ve; i++)
		if (!http_parse_vchar((unsigned char)s[i]))
			return http_parse_fail(p, BF_ERR_PROTO,
			    "a control character in header %.*s", (int)colon, s);
	if (http_parse_is(s, colon, "content-length")) {
		if ((r = http_parse_length(p, s + vs, ve - vs)) != 0)
			return r;
	} else if (http_parse_is(s, colon, "transfer-encoding")) {
		if (p->have_te)
			return http_parse_fail(p, BF_ERR_PROTO,
			    "more than one Transfer-Encoding header");
		if (!http_parse_is(s + vs, ve - vs, "chunked"))
			return http_parse_fail(p, BF_ERR_PROTO,
			    "Transfer-Encoding \"%.*s\" is not supported (only chunked)",
			    (int)(ve - vs < PS_QUOTE ? ve - vs : PS_QUOTE), s + vs);
		p->have_te = 1;
	} else if (http_parse_is(s, colon, "connection"))
		http_parse_connection(p, s + vs, ve - vs);
	if ((r = buf_append(&p->hdrs, s, colon + 1)) != 0 ||
	    (r = buf_append(&p->hdrs, s + vs, ve - vs)) != 0 ||
	    (r = buf_append(&p->hdrs, "\n", 1)) != 0)
		return http_parse_fail(p, r, "the answer's headers are larger than %d bytes",
		    BF_MAX_HTTP_RESP_HEAD);
	return 0;
}

/* The empty line after the headers: skip a 100, else frame the body. */
static int
http_parse_endhead(struct http_parser *p)
{
	if (p->status < 200) {
		if (p->status != 100)
			return http_parse_fail(p, BF_ERR_PROTO,
			    "an interim answer %ld is not expected", p->status);
		/* 100 Continue: the answer follows. */
		p->status = 0;
		p->have_len = p->have_te = p->conn_close = p->conn_keep = 0;
		p->len = 0;
		buf_reset(&p->hdrs);
		p->state = PS_STATUS;
		return HTTP_PARSE_MORE;
	}
	if (p->have_te && p->have_len)
		return http_parse_fail(p, BF_ERR_PROTO,
		    "both Content-Length and Transfer-Encoding in one answer");
	p->keepalive = !p->conn_close && (p->minor == 1 || p->conn_keep);
	if (p->nobody || p->status == 204 || p->status == 304)
		p->state = PS_DONE;
	else if (p->have_te)
		p->state = PS_CHUNK_SIZE;
	else if (p->have_len) {
		p->left = p->len;
		p->state = p->len == 0 ? PS_DONE : PS_BODY_LEN;
	} else {
		p->state = PS_BODY_CLOSE;
		p->keepalive = 0;
	}
	return HTTP_PARSE_HEAD;
}

/* "HEX[ ][;ext]": the extension is ignored; no sign, no overflow. */
static int
http_parse_chunk_size(struct http_parser *p, const char *s, size_t n)
{
	uint64_t v = 0;
	size_t i;
	int d;

	for (i = 0; i < n && (d = http_parse_hex((unsigned char)s[i])) >= 0; i++) {
		if (v > (UINT64_MAX >> 4))
			return http_parse_fail(p, BF_ERR_PROTO, "chunk size \"%.*s\" is too large",
			    PS_QUOTE, s);
		v = v << 4 | (uint64_t)d;
	}
	if (i == 0)
		return http_parse_fail(p, BF_ERR_PROTO, "malformed chunk size line \"%.*s\"",
		    PS_QUOTE, s);
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && s[i] != ';')
		return http_parse_fail(p, BF_ERR_PROTO, "malformed chunk size line \"%.*s\"",
		    PS_QUOTE, s);
	if (v == 0)
		p->state = PS_TRAILER;
	else {
		p->left = v;
		p->state = PS_CHUNK_DATA;
	}
	return 0;
}

/* A whole line (without its LF or CRLF) in the state it ends. */
static int
http_parse_line(struct http_parser *p)
{
	const char *s = p->line.data != NULL ? p->line.data : "";
	size_t n = p->line.len;

	switch (p->state) {
	case PS_STATUS:
		return http_parse_status(p, s, n);
	case PS_HEADER:
		if (n == 0)
			return http_parse_endhead(p);
		return http_parse_field(p, s, n);
	case PS_CHUNK_SIZE:
		return http_parse_chunk_size(p, s, n);
	case PS_TRAILER:
		if (n == 0)
			p->state = PS_DONE;
		return 0;		/* a trailer: skipped */
	}
	return http_parse_fail(p, BF_ERR_PROTO, "parser state %d", p->state);
}

/* Body bytes of the current state: as many of in[0..len) as belong to it. */
static int
http_parse_body(struct http_parser *p, const char *in, size_t len, size_t *used,
    const char **body, size_t *bodylen)
{
	size_t n = len;

	if (p->state != PS_BODY_CLOSE && n > p->left)
		n = (size_t)p->left;
	*body = in;
	*bodylen = n;
	*used = n;
	if (p->state != PS_BODY_CLOSE) {
		p->left -= n;
		if (p->left == 0)
			p->state = p->state == PS_BODY_LEN ? PS_DONE : PS_CHUNK_END;
	}
	return HTTP_PARSE_BODY;
}

int
http_parse(struct http_parser *p, const char *in, size_t len, size_t *used,
    const char **body, size_t *bodylen)
{
	size_t i = 0, n;
	unsigned char c;
	int r;

	*used = 0;
	*body = NULL;
	*bodylen = 0;
	for (;;) {
		switch (p->state) {
		case PS_FAILED:
			*used = i;
			return p->failed;
		case PS_DONE:
			*used = i;
			return HTTP_PARSE_DONE;
		case PS_BODY_LEN:
		case PS_BODY_CLOSE:
		case PS_CHUNK_DATA:
			if (i == len) {
				*used = i;
				return HTTP_PARSE_MORE;
			}
			r = http_parse_body(p, in + i, len - i, &n, body, bodylen);
			*used = i + n;
			return r;
		case PS_CHUNK_END:
			if (i == len) {
				*used = i;
				return HTTP_PARSE_MORE;
			}
			c = (unsigned char)in[i++];
			if (c == '\r' && !p->cr)
				p->cr = 1;
			else if (c == '\n') {
				p->cr = 0;
				p->state = PS_CHUNK_SIZE;
			} else {
				*used = i;
				return http_parse_fail(p, BF_ERR_PROTO,
				    "a chunk's data is not followed by CRLF");
			}
			continue;
		}
		/* A line: the status, a header, a chunk's size, a trailer. */
		if (i == len) {
			*used = i;
			return HTTP_PARSE_MORE;
		}
		c = (unsigned char)in[i++];
		*used = i;
		if (p->state != PS_CHUNK_SIZE && ++p->head > BF_MAX_HTTP_RESP_HEAD)
			return http_parse_fail(p, BF_ERR_TOOBIG,
			    "the answer's head is larger than %d bytes", BF_MAX_HTTP_RESP_HEAD);
		if (p->cr && c != '\n')
			return http_parse_fail(p, BF_ERR_PROTO,
			    "a CR not followed by LF in the answer's head");
		if (c == '\r') {
			p->cr = 1;
			continue;
		}
		if (c == '\0')
			return http_parse_fail(p, BF_ERR_PROTO, "a NUL byte in the answer's head");
		if (c != '\n') {
			if ((r = buf_append(&p->line, &c, 1)) != 0)
				return http_parse_fail(p, r, "a line of the answer's head is longer "
				    "than %d bytes", BF_MAX_HTTP_RESP_LINE);
			continue;
		}
		p->cr = 0;
		r = http_parse_line(p);
		buf_reset(&p->line);
		if (r < 0 || r == HTTP_PARSE_HEAD)
			return r;
	}
}

int
http_parse_eof(struct http_parser *p)
{
	if (p->state == PS_FAILED)
		return p->failed;
	if (p->state == PS_BODY_CLOSE || p->state == PS_DONE) {
		p->state = PS_DONE;
		return HTTP_PARSE_DONE;
	}
	return http_parse_fail(p, BF_ERR_LOST, "%s", p->state == PS_STATUS && p->head == 0 ?
	    "the connection closed before an answer came" :
	    "the connection closed before the answer was complete");
}

int
http_parse_header(const struct buf *hdrs, const char *name, char *out, size_t outsz)
{
	const char *s, *e, *colon, *val = NULL;
	size_t nlen = strlen(name), vlen = 0;

	if (outsz > 0)
		out[0] = '\0';
	if (hdrs->data == NULL || outsz == 0)
		return BF_ERR_NOTFOUND;
	for (s = hdrs->data; (e = strchr(s, '\n')) != NULL; s = e + 1) {
		colon = memchr(s, ':', (size_t)(e - s));
		if (colon != NULL && (size_t)(colon - s) == nlen && strncasecmp(s, name, nlen) == 0) {
			val = colon + 1;
			vlen = (size_t)(e - val);
		}
	}
	if (val == NULL)
		return BF_ERR_NOTFOUND;
	if (vlen > outsz - 1)
		vlen = outsz - 1;
	memcpy(out, val, vlen);
	out[vlen] = '\0';
	return 0;
}
