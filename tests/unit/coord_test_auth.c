/*
 * coord_test_auth.c: tokens and roles (coordinator/auth.c, store-auth.c):
 * hashing, the constant-time compare, the token text and hostile variants
 * of it, Authorization header parsing, salt uniqueness, revocation, the
 * auth-on rule and job ownership.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "api-view.h"
#include "auth.h"
#include "err.h"
#include "sha256.h"
#include "db.h"
#include "store.h"
#include "t.h"

static char tmpdir[256];

static const char *
tpath(const char *name)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	return p;
}

static void
test_roles(void)
{
	enum auth_role r = AUTH_ROLE_NONE;
	struct bf_diag d;
	static const struct {
		enum auth_role have, need;
		int ok;
	} cases[] = {
		{ AUTH_VIEWER, AUTH_VIEWER, 1 }, { AUTH_VIEWER, AUTH_SUBMITTER, 0 },
		{ AUTH_VIEWER, AUTH_ADMIN, 0 }, { AUTH_SUBMITTER, AUTH_VIEWER, 1 },
		{ AUTH_SUBMITTER, AUTH_SUBMITTER, 1 }, { AUTH_SUBMITTER, AUTH_ADMIN, 0 },
		{ AUTH_ADMIN, AUTH_VIEWER, 1 }, { AUTH_ADMIN, AUTH_SUBMITTER, 1 },
		{ AUTH_ADMIN, AUTH_ADMIN, 1 },
		/* An unknown requirement needs admin; an unknown role has nothing. */
		{ AUTH_SUBMITTER, AUTH_ROLE_NONE, 0 }, { AUTH_ADMIN, AUTH_ROLE_NONE, 1 },
		{ AUTH_ROLE_NONE, AUTH_VIEWER, 0 }, { (enum auth_role)7, AUTH_VIEWER, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		T_EQ_INT(auth_role_allows(cases[i].have, cases[i].need), cases[i].ok);
	T_EQ_INT(auth_role_parse("viewer", &r, NULL), 0);
	T_EQ_INT(r, AUTH_VIEWER);
	T_EQ_INT(auth_role_parse("submitter", &r, NULL), 0);
	T_EQ_INT(r, AUTH_SUBMITTER);
	T_EQ_INT(auth_role_parse("admin", &r, NULL), 0);
	T_EQ_INT(r, AUTH_ADMIN);
	bf_diag_clear(&d);
	T_EQ_INT(auth_role_parse("Admin", &r, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "\"Admin\" is not one of viewer, submitter, admin");
	T_EQ_INT(auth_role_parse("none", &r, NULL), BF_ERR_INVALID);
	T_EQ_INT(auth_role_parse("", &r, NULL), BF_ERR_INVALID);
	T_EQ_INT(auth_role_parse(NULL, &r, NULL), BF_ERR_INVALID);
	T_EQ_STR(auth_role_name(AUTH_SUBMITTER), "submitter");
	T_EQ_STR(auth_role_name((enum auth_role)99), "none");
	T_EQ_STR(auth_role_name((enum auth_role)-1), "none");
}

static void
test_ct_equal(void)
{
	unsigned char a[64], b[64];
	size_t i;

	memset(a, 0x5a, sizeof(a));
	memcpy(b, a, sizeof(b));
	T_EQ_INT(auth_ct_equal(a, b, sizeof(a)), 1);
	T_EQ_INT(auth_ct_equal(a, b, 0), 1);
	/* A difference anywhere, of any bit, is seen: nothing stops early or
	 * keeps only part of the difference. */
	for (i = 0; i < sizeof(a); i++) {
		int bit;

		for (bit = 0; bit < 8; bit++) {
			b[i] ^= (unsigned char)(1u << bit);
			T_EQ_INT(auth_ct_equal(a, b, sizeof(a)), 0);
			b[i] ^= (unsigned char)(1u << bit);
		}
	}
	/* The answer is exactly 0 or 1, for every XOR value. */
	for (i = 0; i < 256; i++) {
		unsigned char x = 0, y = (unsigned char)i;

		T_EQ_INT(auth_ct_equal(&x, &y, 1), i == 0);
	}
}

static void
test_hash(void)
{
	uint8_t salt[AUTH_SALT_LEN], sec[AUTH_SECRET_LEN], h1[AUTH_HASH_LEN],
	    h2[AUTH_HASH_LEN], cat[AUTH_SALT_LEN + AUTH_SECRET_LEN];
	char hex1[65], hex2[65];

	memset(salt, 1, sizeof(salt));
	memset(sec, 2, sizeof(sec));
	auth_hash(salt, sec, sizeof(sec), h1);
	/* It is SHA-256 over salt || secret, nothing else. */
	memcpy(cat, salt, sizeof(salt));
	memcpy(cat + sizeof(salt), sec, sizeof(sec));
	sha256_tohex(h1, hex1);
	sha256_hex(cat, sizeof(cat), hex2);
	T_EQ_STR(hex1, hex2);
	/* Another salt, another hash of the same secret. */
	salt[15] ^= 1;
	auth_hash(salt, sec, sizeof(sec), h2);
	T_EQ_INT(auth_ct_equal(h1, h2, sizeof(h1)), 0);
	/* getrandom gives different bytes each time. */
	T_EQ_INT(auth_random(sec, sizeof(sec)), 0);
	T_EQ_INT(auth_random(cat, sizeof(sec)), 0);
	T_EQ_INT(memcmp(sec, cat, sizeof(sec)) != 0, 1);
}

static void
test_token_text(void)
{
	uint8_t sec[AUTH_SECRET_LEN], back[AUTH_SECRET_LEN];
	char tok[AUTH_TOKEN_MAX], bad[AUTH_TOKEN_MAX + 8];
	int64_t id = 0;
	size_t n, i;
	static const char *const hostile[] = {
		"", "bft_", "bft_1", "bft_1_", "bft__AAAA", "BFT_1_",
		"bft_01_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",	/* leading zero */
		"bft_0_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",	/* id 0 */
		"bft_-1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"bft_+1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"bft_ 1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"bft_99999999999999999999_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"bft_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",	/* 42 */
		"bft_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",	/* 44 */
		"bft_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",	/* padding */
		"bft_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA+",	/* base64, not url */
		"bft_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB",	/* spare bits set */
		"bft_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
		"bft_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA ",
	};

	for (i = 0; i < sizeof(sec); i++)
		sec[i] = (uint8_t)(i * 37 + 11);
	T_EQ_INT(auth_token_format(42, sec, tok, sizeof(tok)), 0);
	n = strlen(tok);
	T_EQ_INT(n, 4 + 2 + 1 + 43);
	T_EQ_INT(strncmp(tok, "bft_42_", 7), 0);
	memset(back, 0, sizeof(back));
	T_EQ_INT(auth_token_parse(tok, n, &id, back), 0);
	T_EQ_INT(id, 42);
	T_EQ_INT(memcmp(sec, back, sizeof(sec)), 0);
	/* Biggest id still fits. */
	T_EQ_INT(auth_token_format(INT64_MAX, sec, tok, sizeof(tok)), 0);
	T_EQ_INT(auth_token_parse(tok, strlen(tok), &id, back), 0);
	T_EQ_INT(id == INT64_MAX, 1);
	T_EQ_INT(auth_token_format(0, sec, tok, sizeof(tok)), BF_ERR_INVALID);
	T_EQ_INT(auth_token_format(1, sec, tok, 10), BF_ERR_TOOBIG);
	/* The canonical all-zero secret is "A" * 43. */
	T_EQ_INT(auth_token_parse(
	    "bft_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 49, &id, back), 0);

	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		t_checks++;
		if (auth_token_parse(hostile[i], strlen(hostile[i]), &id, back) != BF_ERR_PARSE) {
			t_fails++;
			fprintf(stderr, "hostile token %zu \"%s\" was accepted\n", i, hostile[i]);
		}
	}
	/* Every truncation of a good token is refused, and so is every
	 * single-character change in the secret part. */
	T_EQ_INT(auth_token_format(7, sec, tok, sizeof(tok)), 0);
	n = strlen(tok);
	for (i = 0; i < n; i++)
		T_EQ_INT(auth_token_parse(tok, i, &id, back), BF_ERR_PARSE);
	for (i = 6; i < n; i++) {
		snprintf(bad, sizeof(bad), "%s", tok);
		bad[i] = '!';
		T_EQ_INT(auth_token_parse(bad, n, &id, back), BF_ERR_PARSE);
	}
	/* An embedded NUL is a byte like any other (length-delimited input). */
	memcpy(bad, tok, n);
	bad[10] = '\0';
	T_EQ_INT(auth_token_parse(bad, n, &id, back), BF_ERR_PARSE);
}

static void
test_bearer(void)
{
	char big[AUTH_MAX_HEADER + 16];
	const char *t = NULL;
	size_t n = 0;

	T_EQ_INT(auth_bearer("Bearer abc", &t, &n), 0);
	T_EQ_INT(n, 3);
	T_EQ_INT(strncmp(t, "abc", n), 0);
	T_EQ_INT(auth_bearer("bearer   abc  ", &t, &n), 0);
	T_EQ_INT(n, 3);
	T_EQ_INT(auth_bearer("BEARER abc", &t, &n), 0);
	T_EQ_INT(auth_bearer("Basic YWxhZGRpbjpvcGVuc2VzYW1l", &t, &n), BF_ERR_PARSE);
	T_EQ_INT(auth_bearer("Bearer", &t, &n), BF_ERR_PARSE);
	T_EQ_INT(auth_bearer("Bearer ", &t, &n), BF_ERR_PARSE);
	T_EQ_INT(auth_bearer("Bearer    ", &t, &n), BF_ERR_PARSE);
	T_EQ_INT(auth_bearer("Bearerabc", &t, &n), BF_ERR_PARSE);
	T_EQ_INT(auth_bearer("", &t, &n), BF_ERR_PARSE);
	T_EQ_INT(auth_bearer(NULL, &t, &n), BF_ERR_PARSE);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "Bearer ", 7);
	T_EQ_INT(auth_bearer(big, &t, &n), BF_ERR_PARSE);
}

static int
set_owner(const char *path, int64_t job, int64_t owner)
{
	struct db *db = NULL;
	char sql[256];
	int rc;

	if (db_open(path, &db, NULL) != 0)
		return -1;
	if (owner != 0)
		snprintf(sql, sizeof(sql), "INSERT INTO jobs (id, recipe, spec, created_at,"
		    " owner_token) VALUES (%lld, 'echo', '{}', 0, %lld)", (long long)job,
		    (long long)owner);
	else
		snprintf(sql, sizeof(sql), "INSERT INTO jobs (id, recipe, spec, created_at)"
		    " VALUES (%lld, 'echo', '{}', 0)", (long long)job);
	rc = db_exec_script(db, sql);
	db_close(db);
	return rc == 0 ? 0 : -1;
}

static void
test_store(void)
{
	char tok[AUTH_TOKEN_MAX], bad[AUTH_TOKEN_MAX + 16], hdr[AUTH_TOKEN_MAX + 16];
	struct store_token t1, t2;
	struct auth_ident who;
	struct store *s = NULL;
	struct bf_diag d;
	json_t *j = NULL, *row;
	int64_t ids[50], admin = 0, sub = 0, sub2 = 0, view = 0, n = -1;
	size_t i, k;
	/* with-pg: a fresh PostgreSQL database instead of the file */
	const char *path = getenv("BF_TEST_PG_URL") ? getenv("BF_TEST_PG_URL") : tpath("auth.db");

	unlink(path);
	bf_diag_clear(&d);
	T_EQ_INT(store_open(path, &s, &d), 0);
	if (s == NULL) {
		fprintf(stderr, "store_open: %s\n", d.msg);
		return;
	}
	/* No token: auth is off unless required. */
	T_EQ_INT(auth_enabled(s, 0), 0);
	T_EQ_INT(auth_enabled(s, 1), 1);
	T_EQ_INT(store_token_count(s, &n), 0);
	T_EQ_INT(n, 0);

	/* Salts are unique per token, and so are the hashes. */
	for (i = 0; i < 50; i++) {
		T_EQ_INT(auth_token_create(s, NULL, AUTH_VIEWER, tok, sizeof(tok), &ids[i], NULL),
		    0);
		explicit_bzero(tok, sizeof(tok));
	}
	for (i = 0; i < 50; i++) {
		T_EQ_INT(store_token_get(s, ids[i], &t1), 0);
		for (k = i + 1; k < 50; k++) {
			T_EQ_INT(store_token_get(s, ids[k], &t2), 0);
			T_EQ_INT(memcmp(t1.salt, t2.salt, sizeof(t1.salt)) != 0, 1);
			T_EQ_INT(memcmp(t1.hash, t2.hash, sizeof(t1.hash)) != 0, 1);
		}
	}
	T_EQ_INT(auth_enabled(s, 0), 1);

	/* Create and check. */
	bf_diag_clear(&d);
	T_EQ_INT(auth_token_create(s, "ci", AUTH_SUBMITTER, tok, sizeof(tok), &sub, &d), 0);
	snprintf(hdr, sizeof(hdr), "Bearer %s", tok);
	T_EQ_INT(auth_check(s, hdr, &who), 0);
	T_EQ_INT(who.token_id, sub);
	T_EQ_INT(who.role, AUTH_SUBMITTER);
	T_EQ_INT(store_token_get(s, sub, &t1), 0);
	T_CHECK(t1.last_used > 0);
	T_EQ_INT(t1.revoked, 0);
	T_EQ_INT(auth_check(s, NULL, &who), BF_ERR_AUTH);
	T_EQ_INT(who.token_id, 0);
	T_EQ_INT(auth_check(s, "Bearer", &who), BF_ERR_AUTH);
	T_EQ_INT(auth_check(s, tok, &who), BF_ERR_AUTH);	/* no scheme */
	/* One changed character of the secret is refused. */
	snprintf(bad, sizeof(bad), "Bearer %s", tok);
	bad[strlen(bad) - 2] = bad[strlen(bad) - 2] == 'A' ? 'B' : 'A';
	T_EQ_INT(auth_check(s, bad, &who), BF_ERR_AUTH);
	/* The right secret under another id is refused. */
	{
		char *us = strchr(tok + 4, '_');

		snprintf(bad, sizeof(bad), "Bearer bft_%lld%s", (long long)ids[0], us);
		T_EQ_INT(auth_check(s, bad, &who), BF_ERR_AUTH);
		snprintf(bad, sizeof(bad), "Bearer bft_999999%s", us);
		T_EQ_INT(auth_check(s, bad, &who), BF_ERR_AUTH);
	}
	/* Names are checked like every other stored name. */
	bf_diag_clear(&d);
	T_EQ_INT(auth_token_create(s, "bad\nname", AUTH_ADMIN, tok, sizeof(tok), NULL, &d),
	    BF_ERR_INVALID);
	T_CONTAINS(d.msg, "name");
	T_EQ_INT(auth_token_create(s, NULL, AUTH_ROLE_NONE, tok, sizeof(tok), NULL, NULL),
	    BF_ERR_INVALID);
	T_EQ_INT(auth_token_create(s, NULL, AUTH_ADMIN, tok, 10, NULL, NULL), BF_ERR_TOOBIG);

	/* Revocation: at once, once, and only of tokens that exist. */
	T_EQ_INT(store_token_revoke(s, sub), 0);
	T_EQ_INT(auth_check(s, hdr, &who), BF_ERR_AUTH);
	T_EQ_INT(store_token_revoke(s, sub), BF_ERR_STATE);
	T_EQ_INT(store_token_revoke(s, 123456), BF_ERR_NOTFOUND);
	/* Revoking every token keeps auth on. */
	for (i = 0; i < 50; i++)
		T_EQ_INT(store_token_revoke(s, ids[i]), 0);
	T_EQ_INT(auth_enabled(s, 0), 1);

	/* The listing never shows salt or hash. */
	{
		struct store_token_row *rows = NULL;
		size_t nrows = 0;

		T_EQ_INT(store_tokens_list(s, &rows, &nrows), 0);
		T_EQ_INT(nrows, 51);
		j = api_view_tokens(rows, nrows);
		store_tokens_free(rows, nrows);
	}
	T_EQ_INT(json_array_size(json_object_get(j, "tokens")), 51);
	json_array_foreach(json_object_get(j, "tokens"), i, row) {
		T_CHECK(json_object_get(row, "salt") == NULL);
		T_CHECK(json_object_get(row, "hash") == NULL);
		T_CHECK(json_object_get(row, "role") != NULL);
		T_CHECK(json_object_get(row, "revoked_at") != NULL);
	}
	row = json_array_get(json_object_get(j, "tokens"), 50);
	T_EQ_STR(json_string_value(json_object_get(row, "name")), "ci");
	T_CHECK(json_is_integer(json_object_get(row, "revoked_at")));
	json_decref(j);

	/* Ownership: admins cancel anything, submitters their own jobs. */
	T_EQ_INT(auth_token_create(s, "a", AUTH_ADMIN, tok, sizeof(tok), &admin, NULL), 0);
	T_EQ_INT(auth_token_create(s, "s1", AUTH_SUBMITTER, tok, sizeof(tok), &sub, NULL), 0);
	T_EQ_INT(auth_token_create(s, "s2", AUTH_SUBMITTER, tok, sizeof(tok), &sub2, NULL), 0);
	T_EQ_INT(auth_token_create(s, "v", AUTH_VIEWER, tok, sizeof(tok), &view, NULL), 0);
	explicit_bzero(tok, sizeof(tok));
	T_EQ_INT(set_owner(path, 1, sub), 0);
	T_EQ_INT(set_owner(path, 2, 0), 0);
	{
		struct auth_ident w_admin = { admin, AUTH_ADMIN }, w_sub = { sub, AUTH_SUBMITTER },
		    w_sub2 = { sub2, AUTH_SUBMITTER }, w_view = { view, AUTH_VIEWER },
		    w_anon = { 0, AUTH_ADMIN };

		T_EQ_INT(auth_job_owner(&w_sub), sub);
		T_EQ_INT(auth_job_owner(&w_anon), 0);
		T_EQ_INT(auth_job_owner(NULL), 0);
		T_EQ_INT(auth_may_cancel(s, &w_admin, 1), 0);
		T_EQ_INT(auth_may_cancel(s, &w_sub, 1), 0);
		T_EQ_INT(auth_may_cancel(s, &w_sub2, 1), BF_ERR_AUTH);
		T_EQ_INT(auth_may_cancel(s, &w_view, 1), BF_ERR_AUTH);
		T_EQ_INT(auth_may_cancel(s, &w_anon, 1), 0);
		/* A job from before auth (no owner): admins only. */
		T_EQ_INT(auth_may_cancel(s, &w_sub, 2), BF_ERR_AUTH);
		T_EQ_INT(auth_may_cancel(s, &w_admin, 2), 0);
		T_EQ_INT(auth_may_cancel(s, &w_admin, 99), BF_ERR_NOTFOUND);
		T_EQ_INT(auth_may_cancel(s, NULL, 1), BF_ERR_AUTH);
	}
	store_close(s);

	/* Reopening keeps tokens and migrates nothing. */
	s = NULL;
	T_EQ_INT(store_open(path, &s, NULL), 0);
	T_EQ_INT(store_token_count(s, &n), 0);
	T_EQ_INT(n, 55);
	store_close(s);
}

int
main(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(tmpdir, sizeof(tmpdir), "%s/coord_test_auth.XXXXXX", base);
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_roles();
	test_ct_equal();
	test_hash();
	test_token_text();
	test_bearer();
	test_store();
	unlink(tpath("auth.db"));
	unlink(tpath("auth.db-wal"));
	unlink(tpath("auth.db-shm"));
	rmdir(tmpdir);
	return t_done();
}
