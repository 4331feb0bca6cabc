/*
 * fuzz_etag.c: the If-None-Match parser of coordinator/api.c
 * (api_etag_match is static, so api.c is compiled into this harness).
 * The header is the client's; the tag is the store's, "\"<hex>-<digits
 * or a snapshot text>-<digits>\"". The first byte splits the input into
 * tag and header. A match must be justified: "*" in the header, or the tag
 * itself in it; the parser must never read past the header's end (ASan).
 */
#include "../../coordinator/api.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *hdr, etag[STORE_GENERATION_MAX + 2];
	size_t cut, tl;

	if (size == 0)
		return 0;
	cut = 1 + data[0] % 64;
	if (cut > size)
		cut = size;
	tl = cut - 1;
	etag[0] = '"';
	memcpy(etag + 1, data + 1, tl);
	etag[1 + tl] = '"';
	etag[2 + tl] = '\0';
	if ((hdr = malloc(size - cut + 1)) == NULL)
		return 0;
	memcpy(hdr, data + cut, size - cut);
	hdr[size - cut] = '\0';
	if (memchr(etag + 1, '\0', tl) == NULL && memchr(etag + 1, '"', tl) == NULL &&
	    api_etag_match(hdr, etag) && strchr(hdr, '*') == NULL && strstr(hdr, etag) == NULL)
		abort();
	(void)api_etag_match(hdr, "");
	free(hdr);
	return 0;
}
