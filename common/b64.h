/*
 * b64.h: standard base64 (RFC 4648, with padding), for the agent's
 * artifact lines. libc only: the agent links it. Decoding is strict: only
 * the alphabet, padding only at the end, no whitespace.
 */
#ifndef BF_B64_H
#define BF_B64_H

#include <stddef.h>

#include "buf.h"

/* Append the base64 of p[0..n) to out. */
int b64_encode(struct buf *out, const void *p, size_t n);
/* Append the bytes s[0..len) encodes to out; BF_ERR_PARSE when it is not
 * strict base64 (len a multiple of 4). */
int b64_decode(struct buf *out, const char *s, size_t len);

#endif
