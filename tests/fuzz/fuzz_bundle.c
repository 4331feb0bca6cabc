/*
 * fuzz_bundle.c: the importer of result bundles from other labs
 * (bundle_parse: size cap, structure, types, every hash recomputed). An
 * accepted bundle must hash the same when checked again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "caps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bf_diag d;
	json_t *doc = NULL;
	char h1[65], h2[65];

	if (bundle_parse((const char *)data, size, BF_MAX_API_BODY, &doc, &d) == 0) {
		if (bundle_check(doc, &d) != 0 || bundle_content_sha256(doc, h1) != 0 ||
		    bundle_content_sha256(doc, h2) != 0 || strcmp(h1, h2) != 0)
			abort();
	}
	json_decref(doc);
	return 0;
}
