/*
 * auth.c: bearer tokens (see auth.h): generation, the text form, hashing,
 * constant-time checks and roles. Persistence is in store-auth.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "auth.h"
#include "parse.h"
#include "sha256.h"

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* 32 bytes encode to 43 characters without padding (258 bits, the last
 * 2 zero). */
#define AUTH_SECRET_B64	43

static const char *const role_names[] = {
	[AUTH_ROLE_NONE] = "none",
	[AUTH_VIEWER] = "viewer",
	[AUTH_SUBMITTER] = "submitter",
	[AUTH_ADMIN] = "admin",
};

const char *
auth_role_name(enum auth_role r)
{
	if ((int)r < AUTH_VIEWER || r > AUTH_ADMIN)
		return role_names[AUTH_ROLE_NONE];
	return role_names[r];
}

int
auth_role_parse(const char *s, enum auth_role *out, struct bf_diag *d)
{
	int i;

	for (i = AUTH_VIEWER; i <= AUTH_ADMIN; i++)
		if (s != NULL && strcmp(s, role_names[i]) == 0) {
			*out = (enum auth_role)i;
			return 0;
		}
	bf_diag_set(d, "role", "\"%s\" is not one of viewer, submitter, admin",
	    s != NULL ? s : "");
	return BF_ERR_INVALID;
}

int
auth_role_allows(enum auth_role have, enum auth_role need)
{
	if ((int)have < AUTH_VIEWER || have > AUTH_ADMIN)
		return 0;
	/* An unknown requirement asks for the most, so a mistake fails closed. */
	if ((int)need < AUTH_VIEWER || need > AUTH_ADMIN)
		need = AUTH_ADMIN;
	return have >= need;
}

int
auth_ct_equal(const void *a, const void *b, size_t n)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char acc = 0;
	size_t i;

	for (i = 0; i < n; i++)
		acc |= (unsigned char)(x[i] ^ y[i]);
	/* 1 when acc is 0, without a data-dependent branch. */
	return (int)(1 & ((acc - 1u) >> 8));
}

void
auth_hash(const uint8_t salt[AUTH_SALT_LEN], const uint8_t *secret, size_t n,
    uint8_t out[AUTH_HASH_LEN])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, salt, AUTH_SALT_LEN);
	sha256_update(&c, secret, n);
	sha256_final(&c, out);	/* wipes c */
}

int
auth_random(void *p, size_t n)
{
	unsigned char *q = p;
	ssize_t k;

	while (n > 0) {
		if ((k = getrandom(q, n, 0)) < 0) {
			if (errno == EINTR)
				continue;
			return BF_ERR_SYS;
		}
		q += k;
		n -= (size_t)k;
	}
	return 0;
}

int
auth_token_format(int64_t id, const uint8_t secret[AUTH_SECRET_LEN], char *out,
    size_t outsz)
{
	char enc[AUTH_SECRET_B64 + 1];
	uint32_t acc = 0;
	size_t i, o = 0;
	int bits = 0, n;

	if (id < 1)
		return BF_ERR_INVALID;
	for (i = 0; i < AUTH_SECRET_LEN; i++) {
		acc = (acc << 8) | secret[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			enc[o++] = b64url[(acc >> bits) & 63];
		}
	}
	if (bits > 0)
		enc[o++] = b64url[(acc << (6 - bits)) & 63];
	enc[o] = '\0';
	n = snprintf(out, outsz, AUTH_TOKEN_PREFIX "%lld_%s", (long long)id, enc);
	explicit_bzero(enc, sizeof(enc));
	acc = 0;
	if (n < 0 || (size_t)n >= outsz) {
		if (outsz > 0)
			explicit_bzero(out, outsz);
		return BF_ERR_TOOBIG;
	}
	return 0;
}

static int
b64url_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

int
auth_token_parse(const char *text, size_t len, int64_t *idp,
    uint8_t secret[AUTH_SECRET_LEN])
{
	const size_t plen = sizeof(AUTH_TOKEN_PREFIX) - 1;
	const char *us, *enc;
	uint8_t sec[AUTH_SECRET_LEN];
	uint32_t acc = 0;
	size_t i, o = 0, idlen;
	int64_t id;
	int bits = 0, v, r;

	if (len < plen || memcmp(text, AUTH_TOKEN_PREFIX, plen) != 0) {
		r = BF_ERR_PARSE;
		goto out;
	}
	if ((us = memchr(text + plen, '_', len - plen)) == NULL) {
		r = BF_ERR_PARSE;
		goto out;
	}
	idlen = (size_t)(us - (text + plen));
	/* Digits only, no leading zero: one text per token. */
	if (idlen == 0 || idlen > 19 || text[plen] == '0') {
		r = BF_ERR_PARSE;
		goto out;
	}
	for (i = 0; i < idlen; i++)
		if (text[plen + i] < '0' || text[plen + i] > '9') {
			r = BF_ERR_PARSE;
			goto out;
		}
	if (parse_i64_n(text + plen, idlen, 1, INT64_MAX, &id) != 0) {
		r = BF_ERR_PARSE;
		goto out;
	}
	enc = us + 1;
	if ((size_t)(text + len - enc) != AUTH_SECRET_B64) {
		r = BF_ERR_PARSE;
		goto out;
	}
	for (i = 0; i < AUTH_SECRET_B64; i++) {
		if ((v = b64url_val((unsigned char)enc[i])) < 0) {
			r = BF_ERR_PARSE;
			goto out;
		}
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			sec[o++] = (uint8_t)(acc >> bits);
		}
	}
	/* The 2 spare bits must be zero, or two texts would name one secret. */
	if (o != AUTH_SECRET_LEN || (acc & ((1u << bits) - 1)) != 0) {
		r = BF_ERR_PARSE;
		goto out;
	}
	memcpy(secret, sec, AUTH_SECRET_LEN);
	*idp = id;
	r = 0;
out:
	explicit_bzero(sec, sizeof(sec));
	acc = 0;
	return r;
}

int
auth_bearer(const char *hdr, const char **tokp, size_t *lenp)
{
	const char *t;
	size_t n;

	if (hdr == NULL || strnlen(hdr, AUTH_MAX_HEADER + 1) > AUTH_MAX_HEADER ||
	    strncasecmp(hdr, "Bearer ", 7) != 0)
		return BF_ERR_PARSE;
	for (t = hdr + 7; *t == ' '; t++)
		;
	n = strlen(t);
	while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t'))
		n--;
	if (n == 0)
		return BF_ERR_PARSE;
	*tokp = t;
	*lenp = n;
	return 0;
}

int
auth_token_create(struct store *st, const char *name, enum auth_role role,
    char *out, size_t outsz, int64_t *idp, struct bf_diag *d)
{
	uint8_t secret[AUTH_SECRET_LEN], salt[AUTH_SALT_LEN], hash[AUTH_HASH_LEN];
	int64_t id = 0;
	int r;

	if (role < AUTH_VIEWER || role > AUTH_ADMIN) {
		bf_diag_set(d, "role", "is not one of viewer, submitter, admin");
		r = BF_ERR_INVALID;
		goto out;
	}
	if (outsz < AUTH_TOKEN_MAX) {
		r = BF_ERR_TOOBIG;
		goto out;
	}
	if ((r = auth_random(secret, sizeof(secret))) != 0 ||
	    (r = auth_random(salt, sizeof(salt))) != 0) {
		bf_diag_set(d, NULL, "getrandom: %s", strerror(errno));
		goto out;
	}
	auth_hash(salt, secret, sizeof(secret), hash);
	if ((r = store_token_add(st, name, role, salt, hash, &id, d)) != 0)
		goto out;
	if ((r = auth_token_format(id, secret, out, outsz)) != 0)
		goto out;
	if (idp != NULL)
		*idp = id;
	r = 0;
out:
	explicit_bzero(secret, sizeof(secret));
	explicit_bzero(hash, sizeof(hash));
	return r;
}

int
auth_check(struct store *st, const char *hdr, struct auth_ident *who)
{
	uint8_t secret[AUTH_SECRET_LEN], hash[AUTH_HASH_LEN];
	struct store_token t;
	const char *tok;
	size_t len;
	int64_t id;
	int r, eq;

	memset(&t, 0, sizeof(t));
	who->token_id = 0;
	who->role = AUTH_ROLE_NONE;
	if (auth_bearer(hdr, &tok, &len) != 0 ||
	    auth_token_parse(tok, len, &id, secret) != 0) {
		r = BF_ERR_AUTH;
		goto out;
	}
	if ((r = store_token_get(st, id, &t)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			r = BF_ERR_AUTH;
		goto out;
	}
	auth_hash(t.salt, secret, sizeof(secret), hash);
	eq = auth_ct_equal(hash, t.hash, sizeof(hash));
	if (!eq || t.revoked || t.role < AUTH_VIEWER || t.role > AUTH_ADMIN) {
		r = BF_ERR_AUTH;
		goto out;
	}
	/* last_used is a hint for people; failing to write it denies nothing. */
	(void)store_token_touch(st, id, 60);
	who->token_id = id;
	who->role = t.role;
	r = 0;
out:
	explicit_bzero(secret, sizeof(secret));
	explicit_bzero(hash, sizeof(hash));
	explicit_bzero(&t, sizeof(t));
	return r;
}

int
auth_enabled(struct store *st, int required)
{
	int64_t n = 0;

	if (required)
		return 1;
	if (store_token_count(st, &n) != 0)
		return 1;
	return n > 0;
}

int64_t
auth_job_owner(const struct auth_ident *who)
{
	return who != NULL ? who->token_id : 0;
}

int
auth_may_cancel(struct store *st, const struct auth_ident *who, int64_t job_id)
{
	int64_t owner = 0;
	int r;

	if ((r = store_job_owner(st, job_id, &owner)) != 0)
		return r;
	if (who == NULL)
		return BF_ERR_AUTH;
	if (who->token_id == 0 || who->role == AUTH_ADMIN)
		return 0;
	if (who->role == AUTH_SUBMITTER && owner == who->token_id)
		return 0;
	return BF_ERR_AUTH;
}
