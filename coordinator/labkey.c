/*
 * labkey.c: the lab's ed25519 key (labkey.h) on OpenSSL libcrypto's EVP
 * interface. The key file is PEM PKCS#8, so `openssl pkey -in lab.key
 * -pubout` reads it too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "labkey.h"
#include "sha256.h"

struct labkey {
	EVP_PKEY *pkey;
	unsigned char pub[LABKEY_PUB_LEN];
};

void
labkey_free(struct labkey *k)
{
	if (k == NULL)
		return;
	EVP_PKEY_free(k->pkey);
	explicit_bzero(k, sizeof(*k));
	free(k);
}

void
labkey_public(const struct labkey *k, unsigned char pub[LABKEY_PUB_LEN])
{
	memcpy(pub, k->pub, LABKEY_PUB_LEN);
}

void
labkey_b64(const unsigned char *p, size_t n, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, p, (int)n);
}

int
labkey_unb64(const char *text, unsigned char *out, size_t want)
{
	unsigned char buf[128];
	size_t len = strlen(text), pad = 0;
	int n;

	/* EVP_DecodeBlock takes padding as data: count it off ourselves. */
	if (len == 0 || len % 4 != 0 || len > 4 * ((sizeof(buf) + 2) / 3) ||
	    len != 4 * ((want + 2) / 3))
		return BF_ERR_PARSE;
	if (text[len - 1] == '=')
		pad++;
	if (len >= 2 && text[len - 2] == '=')
		pad++;
	if ((n = EVP_DecodeBlock(buf, (const unsigned char *)text, (int)len)) < 0 ||
	    (size_t)n < pad || (size_t)n - pad != want)
		return BF_ERR_PARSE;
	memcpy(out, buf, want);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

void
labkey_fingerprint(const unsigned char pub[LABKEY_PUB_LEN], char out[LABKEY_FP_LEN + 1])
{
	struct sha256_ctx c;
	uint8_t dig[32];
	char b64[45];

	sha256_init(&c);
	sha256_update(&c, pub, LABKEY_PUB_LEN);
	sha256_final(&c, dig);
	labkey_b64(dig, sizeof(dig), b64);
	/* OpenSSH drops the padding: 43 characters. */
	snprintf(out, LABKEY_FP_LEN + 1, "SHA256:%.43s", b64);
}

/* Fill k->pub from k->pkey. */
static int
labkey_fill_pub(struct labkey *k)
{
	size_t n = LABKEY_PUB_LEN;

	if (EVP_PKEY_get_raw_public_key(k->pkey, k->pub, &n) != 1 || n != LABKEY_PUB_LEN)
		return BF_ERR_SYS;
	return 0;
}

/* Write a new key to path: a temporary file made O_EXCL 0600, then
 * link(2)ed into place, which fails if someone else got there first
 * (*made = 0: theirs is loaded instead). */
static int
labkey_create(const char *path, int *made, struct bf_diag *d)
{
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY *pkey = NULL;
	BIO *mem = NULL;
	char tmp[4096];
	char *pem;
	long n;
	ssize_t w;
	int fd = -1, r;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new.%ld", path, (long)getpid()) >=
	    sizeof(tmp)) {
		bf_diag_set(d, "lab-key", "lab key %s: path too long", path);
		return BF_ERR_TOOBIG;
	}
	if ((ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL)) == NULL ||
	    EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_keygen(ctx, &pkey) != 1 ||
	    (mem = BIO_new(BIO_s_mem())) == NULL ||
	    PEM_write_bio_PrivateKey(mem, pkey, NULL, NULL, 0, NULL, NULL) != 1 ||
	    (n = BIO_get_mem_data(mem, &pem)) <= 0) {
		bf_diag_set(d, "lab-key", "lab key %s: generating an ed25519 key failed", path);
		r = BF_ERR_SYS;
		goto out;
	}
	unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1) {
		bf_diag_set(d, "lab-key", "lab key %s: %s", tmp, strerror(errno));
		r = BF_ERR_IO;
		goto out;
	}
	if ((w = write(fd, pem, (size_t)n)) != (ssize_t)n || fsync(fd) != 0) {
		bf_diag_set(d, "lab-key", "lab key %s: writing: %s", tmp,
		    w < 0 ? strerror(errno) : "short write");
		r = BF_ERR_IO;
		goto out;
	}
	*made = link(tmp, path) == 0;
	if (!*made && errno != EEXIST) {
		bf_diag_set(d, "lab-key", "lab key %s: %s", path, strerror(errno));
		r = BF_ERR_IO;
		goto out;
	}
	r = 0;
out:
	if (fd != -1) {
		close(fd);
		unlink(tmp);
	}
	if (mem != NULL && (n = BIO_get_mem_data(mem, &pem)) > 0)
		explicit_bzero(pem, (size_t)n);	/* BIO_free would leave it in the heap */
	BIO_free(mem);
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(ctx);
	return r;
}

int
labkey_load_or_create(const char *path, struct labkey **out, int *created,
    struct bf_diag *d)
{
	struct labkey *k = NULL;
	struct stat sb;
	BIO *mem = NULL;
	char buf[LABKEY_MAX_FILE + 1];
	ssize_t n = 0, got;
	int fd = -1, r;

	*out = NULL;
	if (created != NULL)
		*created = 0;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1 && errno == ENOENT) {
		int made = 0;

		if ((r = labkey_create(path, &made, d)) != 0)
			goto out;
		if (created != NULL)
			*created = made;
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd == -1) {
		bf_diag_set(d, "lab-key", "lab key %s: %s", path, errno == ELOOP ?
		    "is a symbolic link" : strerror(errno));
		r = BF_ERR_IO;
		goto out;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		bf_diag_set(d, "lab-key", "lab key %s: not a regular file", path);
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((sb.st_mode & 077) != 0) {
		bf_diag_set(d, "lab-key", "lab key %s: mode %04o lets group or others at the "
		    "private key; refusing it (chmod 600 %s)", path,
		    (unsigned)(sb.st_mode & 07777), path);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (sb.st_uid != geteuid()) {
		bf_diag_set(d, "lab-key", "lab key %s: owned by uid %u, not by this user (%u); "
		    "refusing it", path, (unsigned)sb.st_uid, (unsigned)geteuid());
		r = BF_ERR_INVALID;
		goto out;
	}
	while ((got = read(fd, buf + n, sizeof(buf) - (size_t)n)) > 0 &&
	    (n += got) < (ssize_t)sizeof(buf))
		;
	if (got < 0 || n == 0 || n > LABKEY_MAX_FILE) {
		bf_diag_set(d, "lab-key", "lab key %s: %s", path, got < 0 ? strerror(errno) :
		    n == 0 ? "is empty" : "is larger than 4 KiB");
		r = got < 0 ? BF_ERR_IO : BF_ERR_INVALID;
		goto out;
	}
	if ((k = calloc(1, sizeof(*k))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((mem = BIO_new_mem_buf(buf, (int)n)) == NULL ||
	    (k->pkey = PEM_read_bio_PrivateKey(mem, NULL, NULL, NULL)) == NULL ||
	    EVP_PKEY_id(k->pkey) != EVP_PKEY_ED25519) {
		bf_diag_set(d, "lab-key", "lab key %s: not a PEM ed25519 private key", path);
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((r = labkey_fill_pub(k)) != 0) {
		bf_diag_set(d, "lab-key", "lab key %s: no public key", path);
		goto out;
	}
	*out = k;
	k = NULL;
	r = 0;
out:
	explicit_bzero(buf, sizeof(buf));
	BIO_free(mem);
	if (fd != -1)
		close(fd);
	labkey_free(k);
	return r;
}

int
labkey_sign(const struct labkey *k, const unsigned char *msg, size_t len,
    unsigned char sig[LABKEY_SIG_LEN])
{
	EVP_MD_CTX *ctx;
	size_t n = LABKEY_SIG_LEN;
	int r = BF_ERR_SYS;

	if (k == NULL || k->pkey == NULL)
		return BF_ERR_INVALID;
	if ((ctx = EVP_MD_CTX_new()) == NULL)
		return BF_ERR_ALLOC;
	/* ed25519 is one-shot: no digest, the message itself. */
	if (EVP_DigestSignInit(ctx, NULL, NULL, NULL, k->pkey) == 1 &&
	    EVP_DigestSign(ctx, sig, &n, msg, len) == 1 && n == LABKEY_SIG_LEN)
		r = 0;
	EVP_MD_CTX_free(ctx);
	return r;
}

int
labkey_sign_cb(void *arg, const unsigned char *msg, size_t len,
    unsigned char sig[LABKEY_SIG_LEN])
{
	return labkey_sign(arg, msg, len, sig);
}

int
labkey_verify(const unsigned char pub[LABKEY_PUB_LEN], const unsigned char *msg, size_t len,
    const unsigned char sig[LABKEY_SIG_LEN])
{
	EVP_PKEY *pk = NULL;
	EVP_MD_CTX *ctx = NULL;
	int r = BF_ERR_AUTH;

	if ((pk = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, LABKEY_PUB_LEN)) ==
	    NULL || (ctx = EVP_MD_CTX_new()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pk) == 1 &&
	    EVP_DigestVerify(ctx, sig, LABKEY_SIG_LEN, msg, len) == 1)
		r = 0;
out:
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pk);
	return r;
}
