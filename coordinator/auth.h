/*
 * auth.h: API bearer tokens and roles.
 *
 * A token is 32 random bytes (getrandom) shown once, as text
 * "bft_<id>_<43 base64url characters>"; the id names the store row, so a
 * check hashes once instead of against every token. The store keeps only
 * a per-token 16-byte salt and SHA-256(salt || secret), compared in
 * constant time. Roles are ordered: viewer < submitter < admin.
 *
 * Auth is on when the store holds at least one token (revoked ones count,
 * so revoking the last token never opens the API), or always when the
 * daemon is told so (--auth required, or a non-loopback --listen). With no
 * tokens on a loopback address the API stays open, as on a laptop.
 */
#ifndef BF_AUTH_H
#define BF_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "err.h"

struct store;

enum auth_role {
	AUTH_ROLE_NONE = 0,	/* unknown / unset */
	AUTH_VIEWER = 1,	/* reads everything but secrets */
	AUTH_SUBMITTER = 2,	/* + submits and cancels its own jobs */
	AUTH_ADMIN = 3		/* + machines, publication, tokens, any job */
};

#define AUTH_SECRET_LEN		32
#define AUTH_SALT_LEN		16
#define AUTH_HASH_LEN		32
#define AUTH_TOKEN_PREFIX	"bft_"
/* "bft_" + up to 19 digits + "_" + 43 base64url + NUL, rounded up. */
#define AUTH_TOKEN_MAX		80
/* Authorization header values longer than this are refused unread. */
#define AUTH_MAX_HEADER		256

/* Who made a request. token_id 0: auth is off (anonymous, any role). */
struct auth_ident {
	int64_t token_id;
	enum auth_role role;
};

/* "viewer", "submitter", "admin"; "none" for anything else. */
const char *auth_role_name(enum auth_role r);
/* BF_ERR_INVALID (d says what was expected) for anything but the three. */
int auth_role_parse(const char *s, enum auth_role *out, struct bf_diag *d);
/* Does a caller of role have satisfy a route that needs need? */
int auth_role_allows(enum auth_role have, enum auth_role need);

/* Constant-time equality of two n-byte buffers: 1 equal, 0 not. Runs the
 * same instructions whatever the contents. */
int auth_ct_equal(const void *a, const void *b, size_t n);
/* out = SHA-256(salt || secret). */
void auth_hash(const uint8_t salt[AUTH_SALT_LEN], const uint8_t *secret, size_t n,
    uint8_t out[AUTH_HASH_LEN]);
/* Fill p with n bytes from getrandom(2). BF_ERR_SYS. */
int auth_random(void *p, size_t n);

/* Token text of (id, secret) into out (AUTH_TOKEN_MAX). BF_ERR_TOOBIG. */
int auth_token_format(int64_t id, const uint8_t secret[AUTH_SECRET_LEN], char *out,
    size_t outsz);
/* Parse untrusted token text (len bytes, no NUL needed). BF_ERR_PARSE. */
int auth_token_parse(const char *text, size_t len, int64_t *idp,
    uint8_t secret[AUTH_SECRET_LEN]);
/* The token of an Authorization header value "Bearer <token>" (scheme
 * case-insensitive, one or more spaces): *tokp and *lenp point into hdr.
 * BF_ERR_PARSE for other schemes or an empty token. */
int auth_bearer(const char *hdr, const char **tokp, size_t *lenp);

/*
 * Create a token: random secret and salt, store the hash, write the text
 * into out (AUTH_TOKEN_MAX bytes). name may be NULL. The secret is wiped
 * from everywhere but out; the caller wipes out after showing it.
 */
int auth_token_create(struct store *st, const char *name, enum auth_role role,
    char *out, size_t outsz, int64_t *idp, struct bf_diag *d);
/*
 * Check the Authorization header value hdr (may be NULL). 0 with *who
 * filled; BF_ERR_AUTH when it is missing, malformed, unknown, revoked or
 * wrong; BF_ERR_DB when the store failed. Updates last_used (at most once
 * a minute per token).
 */
int auth_check(struct store *st, const char *hdr, struct auth_ident *who);
/* Is auth on? required, or the store has ever had a token. A store
 * failure counts as on (fail closed). */
int auth_enabled(struct store *st, int required);

/*
 * Job ownership, for the jobs API (api-jobs.c):
 * - auth_job_owner(who): the owner_token to store with a new job, or 0 for
 *   none (auth off); pass it to store_job_create as owner.
 * - auth_may_cancel(st, who, job_id): 0 if who may cancel the job (admin,
 *   auth off, or a submitter whose token created it); BF_ERR_AUTH if not
 *   (answer 403); BF_ERR_NOTFOUND; BF_ERR_DB.
 */
int64_t auth_job_owner(const struct auth_ident *who);
int auth_may_cancel(struct store *st, const struct auth_ident *who, int64_t job_id);

/* --- store-auth.c: the tokens table (schema step 2 in store-schema.c) --- */
struct store_token {
	int64_t id;
	enum auth_role role;
	uint8_t salt[AUTH_SALT_LEN];
	uint8_t hash[AUTH_HASH_LEN];
	int64_t last_used;	/* 0: never */
	int revoked;
};
int store_token_add(struct store *s, const char *name, enum auth_role role,
    const uint8_t salt[AUTH_SALT_LEN], const uint8_t hash[AUTH_HASH_LEN], int64_t *idp,
    struct bf_diag *d);
/* BF_ERR_NOTFOUND. */
int store_token_get(struct store *s, int64_t id, struct store_token *out);
/* last_used = now if it is older than min_age_s. */
int store_token_touch(struct store *s, int64_t id, int64_t min_age_s);
/* BF_ERR_NOTFOUND; BF_ERR_STATE when already revoked. */
int store_token_revoke(struct store *s, int64_t id);
/* Rows ever created (revoked included). */
int store_token_count(struct store *s, int64_t *np);
/* A token as listed: never its salt or hash. */
struct store_token_row {
	int64_t id;
	char *name;		/* NULL: none */
	char *role;		/* viewer, submitter or admin */
	int64_t created_at;	/* unix seconds */
	int has_last_used;
	int64_t last_used;
	int has_revoked;
	int64_t revoked_at;
};
/* Every token by id, revoked ones too; free with store_tokens_free. */
int store_tokens_list(struct store *s, struct store_token_row **out, size_t *nout);
void store_tokens_free(struct store_token_row *a, size_t n);
/* jobs.owner_token (0 when NULL). BF_ERR_NOTFOUND. */
int store_job_owner(struct store *s, int64_t job_id, int64_t *ownerp);

/* --- cmd-token.c: "benchfleetd token create|list|revoke" --- */
/* argv[0] is "token". Returns the process exit status. */
int cmd_token_main(int argc, char **argv);

#endif
