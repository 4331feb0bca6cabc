/*
 * bundle_fixture.h: what the bundle programs (coord_test_bundle.c and
 * coord_test_bundle_suite.c) share to tamper with a bundle. Header-only:
 * each program includes it once.
 */
#ifndef BF_BUNDLE_FIXTURE_H
#define BF_BUNDLE_FIXTURE_H

#include <stdlib.h>

#include <jansson.h>

#include "bundle.h"

/* A deep copy of v through its text, as a peer would receive it; the
 * caller frees it (json_decref). NULL when out of memory. */
static inline json_t *
reparse(const json_t *v)
{
	char *t = json_dumps(v, JSON_COMPACT);
	json_t *o = t ? json_loads(t, 0, NULL) : NULL;

	free(t);
	return o;
}

/* c with its content hash recomputed: a forger who changes a part and
 * fixes the outer hash must still be caught by the part's own check. */
static inline void
rehash(json_t *c)
{
	char hex[65];

	if (bundle_content_sha256(c, hex) == 0)
		json_object_set_new(c, "sha256", json_string(hex));
}

#endif
