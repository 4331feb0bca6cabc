/*
 * labkey.h: the lab's identity, an ed25519 key (OpenSSL libcrypto), with
 * which this coordinator signs the bundles it exports (docs/bundle.md).
 *
 * The private key lives in one PEM (PKCS#8) file, created on first start
 * with mode 0600 and refused afterwards when group or others may read or
 * write it, or when another user owns it (as sshd treats its host keys).
 * Only the process that loaded it holds it: the HTTP side reaches signing
 * through api_config.lab_sign (api.h).
 *
 * A public key travels as the base64 of its raw 32 bytes; its fingerprint
 * is "SHA256:" and the unpadded base64 of the sha256 of those 32 bytes,
 * the way OpenSSH prints fingerprints.
 */
#ifndef BF_LABKEY_H
#define BF_LABKEY_H

#include <stddef.h>

#include "err.h"

#define LABKEY_PUB_LEN		32
#define LABKEY_SIG_LEN		64
#define LABKEY_PUB_B64_LEN	44			/* base64 of 32 bytes, padded */
#define LABKEY_SIG_B64_LEN	88			/* base64 of 64 bytes, padded */
#define LABKEY_FP_LEN		(7 + 43)		/* "SHA256:" + 43 */
#define LABKEY_MAX_FILE		4096			/* a key file larger is refused */

struct labkey;

/*
 * Load the key at path, or create it there (O_EXCL, mode 0600, then
 * linked into place so that no half-written key is ever seen) when the
 * file does not exist. A key file readable or writable by group or
 * others, owned by someone else, not a regular file, or not an ed25519
 * key is refused with d naming the file and what to do. *out is freed
 * with labkey_free(); *created (may be NULL) says whether it was made now.
 */
int labkey_load_or_create(const char *path, struct labkey **out, int *created,
    struct bf_diag *d);
/* Wipes and frees; accepts NULL. */
void labkey_free(struct labkey *k);
/* The public half, raw. */
void labkey_public(const struct labkey *k, unsigned char pub[LABKEY_PUB_LEN]);
/* sig = ed25519(msg). BF_ERR_ALLOC / BF_ERR_SYS. */
int labkey_sign(const struct labkey *k, const unsigned char *msg, size_t len,
    unsigned char sig[LABKEY_SIG_LEN]);
/* The same with the api_config.lab_sign signature (arg is the labkey). */
int labkey_sign_cb(void *arg, const unsigned char *msg, size_t len,
    unsigned char sig[LABKEY_SIG_LEN]);
/* 0 when sig is pub's signature of msg; BF_ERR_AUTH when it is not. */
int labkey_verify(const unsigned char pub[LABKEY_PUB_LEN], const unsigned char *msg,
    size_t len, const unsigned char sig[LABKEY_SIG_LEN]);

/* Base64 (padded) of n bytes into out (at least 4 * ((n + 2) / 3) + 1). */
void labkey_b64(const unsigned char *p, size_t n, char *out);
/* Decode base64 text of exactly want bytes into out; BF_ERR_PARSE otherwise. */
int labkey_unb64(const char *text, unsigned char *out, size_t want);
/* "SHA256:..." of a public key into out (LABKEY_FP_LEN + 1 bytes). */
void labkey_fingerprint(const unsigned char pub[LABKEY_PUB_LEN], char out[LABKEY_FP_LEN + 1]);

#endif
