/*
 * fingerprint.h: machine fingerprints, checked the same way wherever they
 * come from (fingerprint.c). Pure: no I/O, no store.
 */
#ifndef BF_FINGERPRINT_H
#define BF_FINGERPRINT_H

#include <stddef.h>

#include <jansson.h>

#include "err.h"

#define FINGERPRINT_MAX_KEYS	128	/* keys of one fingerprint */

/*
 * fp is an object of scalars and of arrays (at most 1024 elements) of
 * scalars or flat objects (at most 16 keys of short scalars), with at most
 * FINGERPRINT_MAX_KEYS keys, each at most BF_MAX_NAME bytes, strings at
 * most BF_MAX_STR. path names fp in the diagnostic.
 */
int fingerprint_check(const json_t *fp, const char *path, struct bf_diag *d);

/*
 * The agent's probe line (without its newline): one JSON object with
 * "type":"fingerprint", "sha256" (its identity hash, 64 lowercase hex)
 * and a shape fingerprint_check accepts. On success *text is the
 * canonical JSON (compact, sorted keys; the caller frees) and sha256 the
 * identity hash; else BF_ERR_* with the field named, *text NULL.
 */
int fingerprint_decode(const char *line, size_t len, char **text, char sha256[65],
    struct bf_diag *d);

#endif
