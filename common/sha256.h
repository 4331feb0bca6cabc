/*
 * sha256.h: SHA-256 (FIPS 180-4), own implementation so that the agent and
 * the library need nothing beyond libc.
 */
#ifndef BF_SHA256_H
#define BF_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256_ctx {
	uint32_t h[8];
	uint64_t nbytes;
	uint8_t block[64];
	size_t fill;
};

void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *p, size_t n);
void sha256_final(struct sha256_ctx *c, uint8_t out[32]);
/* out: 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *p, size_t n, char out[65]);
void sha256_tohex(const uint8_t dig[32], char out[65]);
/* Non-zero when s is exactly 64 lowercase hex digits: how every hash is
 * spelled (a name of a snapshot, a bundle's hashes). */
int sha256_is_hex(const char *s);
/* Hash a file. BF_ERR_IO if it cannot be read. */
int sha256_file(const char *path, char out[65]);

#endif
