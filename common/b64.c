/*
 * b64.c: base64 both ways, strict on the way in (one encoding per byte
 * string, so an artifact's text cannot be read two ways).
 */
#include <stdint.h>

#include "b64.h"
#include "err.h"

static const char b64_alpha[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int
b64_encode(struct buf *out, const void *p, size_t n)
{
	const unsigned char *s = p;
	char q[4];
	size_t i;
	uint32_t v;
	int r;

	for (i = 0; i < n; i += 3) {
		v = (uint32_t)s[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		q[0] = b64_alpha[(v >> 18) & 63];
		q[1] = b64_alpha[(v >> 12) & 63];
		q[2] = i + 1 < n ? b64_alpha[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? b64_alpha[v & 63] : '=';
		if ((r = buf_append(out, q, 4)) != 0)
			return r;
	}
	return 0;
}

static int
b64_val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int
b64_decode(struct buf *out, const char *s, size_t len)
{
	unsigned char o[3];
	size_t i, k, pad;
	uint32_t v;
	int x, r;

	if (len % 4 != 0)
		return BF_ERR_PARSE;
	for (i = 0; i < len; i += 4) {
		pad = 0;
		if (i + 4 == len)
			pad = (s[i + 3] == '=') + (s[i + 3] == '=' && s[i + 2] == '=');
		v = 0;
		for (k = 0; k < 4; k++) {
			if (k >= 4 - pad) {
				v <<= 6;
				continue;
			}
			if ((x = b64_val(s[i + k])) < 0)
				return BF_ERR_PARSE;
			v = (v << 6) | (uint32_t)x;
		}
		/* the bits padding drops must be zero: one text per byte string */
		if ((pad == 1 && (v & 0xff) != 0) || (pad == 2 && (v & 0xffff) != 0))
			return BF_ERR_PARSE;
		o[0] = (unsigned char)(v >> 16);
		o[1] = (unsigned char)(v >> 8);
		o[2] = (unsigned char)v;
		if ((r = buf_append(out, o, 3 - pad)) != 0)
			return r;
	}
	return 0;
}
