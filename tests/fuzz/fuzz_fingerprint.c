/*
 * fuzz_fingerprint.c: fingerprint_decode on a fuzzed probe line, as
 * runner_probe calls it. An accepted line must come back as canonical
 * text that decodes again to the same text and identity hash, and whose
 * document fingerprint_check accepts (so a bundle may carry it). A refused
 * line returns no text and names a field or says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fingerprint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bf_diag d;
	char *text = NULL, *again = NULL, sha[65], sha2[65];
	json_t *doc;
	int r;

	bf_diag_clear(&d);
	r = fingerprint_decode((const char *)data, size, &text, sha, &d);
	if (r != 0) {
		if (text != NULL || d.msg[0] == '\0')
			abort();
		return 0;
	}
	if (text == NULL || strlen(sha) != 64)
		abort();
	if (fingerprint_decode(text, strlen(text), &again, sha2, &d) != 0 ||
	    strcmp(again, text) != 0 || strcmp(sha, sha2) != 0)
		abort();
	if ((doc = json_loads(text, 0, NULL)) == NULL ||
	    fingerprint_check(doc, "fp", &d) != 0)
		abort();
	json_decref(doc);
	free(again);
	free(text);
	return 0;
}
