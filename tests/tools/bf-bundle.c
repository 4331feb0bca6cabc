/*
 * bf-bundle: the forger's tools, for the trust tests (bundle_trust.sh,
 * reproduce.sh). The hashes of a bundle are checksums anyone can
 * recompute, so a test that edits a bundle recomputes them all, and only
 * a signature (or the installed-recipe check) can stop it.
 *
 *   bf-bundle rehash < in.json > out.json
 *       every hash recomputed (fingerprints, job, recipe or a suite's
 *       recipes, the whole), any
 *       signature dropped
 *   bf-bundle sign KEYFILE LAB < in.json > out.json
 *       rehash, then sign with the ed25519 key in KEYFILE (made, 0600, if
 *       it does not exist) under the name LAB
 *   bf-bundle pub KEYFILE
 *       the key's public half (base64) and fingerprint
 *   bf-bundle message < in.json > msg.bin
 *       rehash, then the bytes a signature of it covers (what a forger
 *       would ask a signer to sign: attack_privsep_sign.sh)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bundle.h"
#include "labkey.h"

static int
rehash(json_t *doc)
{
	json_t *m;
	char hex[65];
	size_t i;

	json_object_del(doc, "signature");
	json_array_foreach(json_object_get(doc, "machines"), i, m) {
		if (!json_is_object(json_object_get(m, "fingerprint")))
			continue;
		if (bundle_sha256(json_object_get(m, "fingerprint"), hex) != 0 ||
		    json_object_set_new(m, "fingerprint_sha256", json_string(hex)) != 0)
			return -1;
	}
	/* a suite's bundle (version 3): each workload's recipe */
	json_array_foreach(json_object_get(doc, "recipes"), i, m) {
		if (bundle_sha256(json_object_get(m, "recipe"), hex) != 0 ||
		    json_object_set_new(m, "recipe_sha256", json_string(hex)) != 0)
			return -1;
	}
	if (bundle_sha256(json_object_get(doc, "job"), hex) != 0 ||
	    json_object_set_new(doc, "job_sha256", json_string(hex)) != 0 ||
	    (json_object_get(doc, "recipe") != NULL &&
	    (bundle_sha256(json_object_get(doc, "recipe"), hex) != 0 ||
	    json_object_set_new(doc, "recipe_sha256", json_string(hex)) != 0)) ||
	    bundle_content_sha256(doc, hex) != 0 ||
	    json_object_set_new(doc, "sha256", json_string(hex)) != 0)
		return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	struct labkey *k = NULL;
	struct bf_diag d;
	json_t *doc = NULL;
	json_error_t je;
	unsigned char pub[LABKEY_PUB_LEN];
	char b64[LABKEY_PUB_B64_LEN + 1], fp[LABKEY_FP_LEN + 1];
	int ret = 1;

	bf_diag_clear(&d);
	if (argc < 2 || (strcmp(argv[1], "rehash") != 0 && strcmp(argv[1], "sign") != 0 &&
	    strcmp(argv[1], "pub") != 0 && strcmp(argv[1], "message") != 0) || (strcmp(argv[1], "sign") == 0 && argc != 4) ||
	    (strcmp(argv[1], "pub") == 0 && argc != 3)) {
		fprintf(stderr, "usage: bf-bundle rehash | sign KEYFILE LAB | pub KEYFILE | "
		    "message\n");
		return 2;
	}
	if (strcmp(argv[1], "rehash") != 0 && strcmp(argv[1], "message") != 0 &&
	    labkey_load_or_create(argv[2], &k, NULL, &d) != 0) {
		fprintf(stderr, "bf-bundle: %s\n", d.msg);
		goto out;
	}
	if (strcmp(argv[1], "pub") == 0) {
		labkey_public(k, pub);
		labkey_b64(pub, sizeof(pub), b64);
		labkey_fingerprint(pub, fp);
		printf("%s %s\n", b64, fp);
		ret = 0;
		goto out;
	}
	if ((doc = json_loadf(stdin, 0, &je)) == NULL || !json_is_object(doc)) {
		fprintf(stderr, "bf-bundle: stdin: %s\n", doc == NULL ? je.text : "not an object");
		goto out;
	}
	if (rehash(doc) != 0) {
		fprintf(stderr, "bf-bundle: rehash failed\n");
		goto out;
	}
	if (strcmp(argv[1], "message") == 0) {
		unsigned char *msg = NULL;
		size_t len = 0;

		if (bundle_signed_message(doc, &msg, &len) != 0 ||
		    fwrite(msg, 1, len, stdout) != len) {
			free(msg);
			fprintf(stderr, "bf-bundle: message failed\n");
			goto out;
		}
		free(msg);
		ret = 0;
		goto out;
	}
	if (k != NULL) {
		labkey_public(k, pub);
		if (bundle_sign(doc, argv[3], pub, labkey_sign_cb, k) != 0) {
			fprintf(stderr, "bf-bundle: signing failed\n");
			goto out;
		}
	}
	if (json_dumpf(doc, stdout, JSON_COMPACT) != 0)
		goto out;
	putchar('\n');
	ret = 0;
out:
	json_decref(doc);
	labkey_free(k);
	return ret;
}
