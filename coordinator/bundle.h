/*
 * bundle.h: result bundles, the unit of exchange between labs (docs/bundle.md).
 * A bundle is one JSON document with the job and recipe as run, the
 * machines used (fingerprints), every run and every raw sample, and hashes
 * over canonical JSON so that a receiver can tell it arrived as exported.
 *
 * Canonical JSON: json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) of the parsed
 * value (jansson prints reals with 17 significant digits, so a value that
 * went through parse and dump once prints the same again).
 *
 * An imported bundle is untrusted: bundle_parse() checks size, every type
 * and range, the counts, and recomputes every hash before anything else
 * looks at it.
 */
#ifndef BF_BUNDLE_H
#define BF_BUNDLE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "caps.h"
#include "err.h"
#include "labkey.h"

struct store;

#define BUNDLE_FORMAT		"benchfleet-bundle"
/* Version 2 adds "snapshots" and each run's "snapshot_sha256" (the
 * environment it was measured in, docs/evidence.md); version 1 bundles are
 * read as before, without them. */
/* Version 3 is a suite job's bundle: "recipes" (one per workload) instead of
 * "recipe" and "recipe_sha256", and each run's "workload". A single-recipe
 * job still exports version 2, which the previous coordinator reads. */
#define BUNDLE_VERSION		3
#define BUNDLE_VERSION_SINGLE	2
#define BUNDLE_MIN_VERSION	1
#define BUNDLE_MAX_SNAPSHOTS	BUNDLE_MAX_RUNS
#define BUNDLE_MAX_MACHINES	1024
#define BUNDLE_MAX_KERNEL_BUILDS 64	/* builds a job booted: a few per kernel name */
#define BUNDLE_MAX_RUNS		((size_t)BF_MAX_CELLS * 16)
#define BUNDLE_MAX_SAMPLES	((size_t)1000000)	/* every raw sample of a job */

/* What a signature covers starts with this, then the canonical JSON of
 * the bundle without its "signature" key (docs/bundle.md). */
#define BUNDLE_SIG_CONTEXT	"benchfleet-bundle-signature-v1\n"
#define BUNDLE_SIG_ALG		"ed25519"

/* sha256 hex of v's canonical JSON. BF_ERR_ALLOC. */
int bundle_sha256(const json_t *v, char hex[65]);
/* The hash a bundle's "sha256" must hold: over the document without its
 * "sha256" and "signature" keys. */
int bundle_content_sha256(const json_t *doc, char hex[65]);

/* The signer api_config.lab_sign is: 0 with sig filled. */
typedef int (*bundle_signer)(void *arg, const unsigned char *msg, size_t len,
    unsigned char sig[LABKEY_SIG_LEN]);
/*
 * The bytes a bundle's signature covers: BUNDLE_SIG_CONTEXT then the
 * canonical JSON of doc without "signature". *msgp is malloc'ed (caller
 * frees).
 */
int bundle_signed_message(const json_t *doc, unsigned char **msgp, size_t *lenp);
/*
 * Sign doc in place: "signature": {"alg", "lab", "public_key", "sig"},
 * replacing any signature it had. lab is the signer's name (informative:
 * a receiver names the lab from its own keyring).
 */
int bundle_sign(json_t *doc, const char *lab, const unsigned char pub[LABKEY_PUB_LEN],
    bundle_signer sign, void *arg);
/*
 * May the lab key sign msg (len bytes), asked for by the API child? Only
 * if it is exactly bundle_signed_message() of the bundle this store
 * exports for the job its origin names: a compromised child must not turn
 * the monitor into a signer of bytes of its choosing (forged samples, or
 * anything else the key could vouch for). 0, or BF_ERR_AUTH with d saying
 * why; BF_ERR_DB and BF_ERR_ALLOC as the store and memory fail.
 */
int bundle_sign_check(struct store *st, const unsigned char *msg, size_t len,
    struct bf_diag *d);

/* A bundle's signature after bundle_check verified it. */
struct bundle_sig {
	int present;				/* 0: unsigned */
	char lab[BF_MAX_NAME + 1];		/* the name the signer gave itself */
	unsigned char pub[LABKEY_PUB_LEN];
	char fingerprint[LABKEY_FP_LEN + 1];
};
/*
 * Check doc's "signature" (absent: unsigned, 0 with present = 0): its
 * shape, then the ed25519 signature against its own public key. A
 * signature that does not verify is BF_ERR_INVALID naming "signature":
 * such a bundle is never taken as signed, nor as unsigned. out may be NULL.
 */
int bundle_signature(const json_t *doc, struct bundle_sig *out, struct bf_diag *d);

/*
 * The bundle of job_id from the store (samples of runs that ended done),
 * hashes filled in: version 3 for a suite job, else 2. BF_ERR_NOTFOUND;
 * BF_ERR_INVALID for a stored spec that does not hold together. *out is a
 * new reference.
 */
int bundle_export(struct store *st, int64_t job_id, json_t **out, struct bf_diag *d);

/*
 * Check a parsed bundle completely: structure, types and ranges (d names
 * the field), then every hash recomputed: a mismatch is BF_ERR_INVALID
 * with d.field naming the hash ("sha256", "job_sha256", "recipe_sha256",
 * "machines[0].fingerprint_sha256"); the message never prints the value
 * computed. Then the signature, if any (bundle_signature). doc is borrowed.
 */
int bundle_check(const json_t *doc, struct bf_diag *d);
/* jx_loads under max bytes (BF_ERR_TOOBIG past it), then bundle_check. */
int bundle_parse(const char *text, size_t len, size_t max, json_t **out, struct bf_diag *d);

/* The bundle's machine entry named name, or NULL (borrowed). */
const json_t *bundle_machine(const json_t *doc, const char *name);

/* The fingerprint document the first of runs (a job's run objects) on
 * machine name started under (schema step 10), JSON text the caller frees;
 * *text NULL when none names one (a job from before, a machine never
 * probed). BF_ERR_* from the store. */
int bundle_run_fingerprint(struct store *st, const json_t *runs, const char *name,
    char **text);

/*
 * The bundle's kernel builds against those this lab's rerun booted (runs:
 * the rerun job's, from api_view_job_runs_get): *out (the caller decrefs;
 * NULL when the bundle lists none) is [{"name", "bundle": {"key",
 * "release", "config_sha256"}, "here": {…} | null (not booted yet or
 * failed), "same_build", "same_config": true | false | null}]. The same
 * key means the same tree, .config, compiler and arch; the same config
 * with another key, another compiler or tree.
 */
int bundle_kernels_compare(struct store *st, const json_t *bundle, const json_t *runs,
    json_t **out);

#endif
