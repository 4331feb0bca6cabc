/*
 * fuzz_token.c: the coordinator's parsers of the Authorization header
 * (auth_bearer) and of token text (auth_token_parse); an accepted token
 * must format back to the same text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t secret[AUTH_SECRET_LEN];
	char hdr[AUTH_MAX_HEADER + 2], again[AUTH_TOKEN_MAX];
	const char *tok;
	size_t len, n;
	int64_t id;

	if (auth_token_parse((const char *)data, size, &id, secret) == 0) {
		/* One text per token: the parse is the inverse of the format. */
		if (auth_token_format(id, secret, again, sizeof(again)) != 0 ||
		    strlen(again) != size || memcmp(again, data, size) != 0)
			abort();
	}
	n = size < sizeof(hdr) - 1 ? size : sizeof(hdr) - 1;
	memcpy(hdr, data, n);
	hdr[n] = '\0';
	if (auth_bearer(hdr, &tok, &len) == 0) {
		if (len == 0 || tok < hdr || tok + len > hdr + n)
			abort();
		(void)auth_token_parse(tok, len, &id, secret);
	}
	return 0;
}
