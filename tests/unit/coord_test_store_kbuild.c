/*
 * coord_test_store_kbuild.c: kernel builds in the store (schema step 13)
 * and the artifact directory (kstore.c), on SQLite or (the @pg variant)
 * PostgreSQL: a key is taken by one coordinator only, the other waits
 * (BUSY) and then reuses the build (DONE); a lapsed lease is taken over
 * and the late builder's finish refused; retention forgets the least
 * recently used builds and hands back exactly the files no build names;
 * the directory refuses names that are not hashes, symlinks and a
 * directory others can write.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "kstore.h"
#include "sha256.h"
#include "store.h"
#include "store_fixture.h"
#include "t.h"

#define KEY_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define KEY_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define SPEC "{\"git\":\"/srv/git/linux\",\"commit\":\"v6.1\"}"

static const char *
jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "(null)";
}

/* An artifact of kind with bytes text, in the directory and the store. */
static void
put(struct store *s, struct kstore *k, const char *kind, const char *text, char sha[65])
{
	T_EQ_INT(kstore_put(k, text, strlen(text), sha), 0);
	T_EQ_INT(store_kartifact_add(s, sha, kind, (int64_t)strlen(text)), 0);
}

static void
test_take_finish(struct kstore *k)
{
	struct store *s = NULL, *s2 = NULL;
	struct store_kbuild_out o;
	char img[65], cfg[65], log[65], kind[8];
	json_t *row = NULL;
	int64_t size;
	int take = -1;

	if ((s = open_fresh("kbuild.db")) == NULL)
		return;
	T_EQ_INT(store_open(target("kbuild.db"), &s2, NULL), 0);
	if (s2 == NULL)
		goto out;
	T_EQ_INT(store_set_node(s, "c1"), 0);
	T_EQ_INT(store_set_node(s2, "c2"), 0);

	/* the first asker builds; the second waits */
	T_EQ_INT(store_kbuild_take(s, KEY_A, SPEC, "builder1", 60, &take), 0);
	T_EQ_INT(take, STORE_KBUILD_MINE);
	T_EQ_INT(store_kbuild_take(s2, KEY_A, SPEC, "builder2", 60, &take), 0);
	T_EQ_INT(take, STORE_KBUILD_BUSY);
	T_EQ_INT(store_kbuild_renew(s, KEY_A, 60), 0);
	T_EQ_INT(store_kbuild_renew(s2, KEY_A, 60), BF_ERR_STATE);

	/* finish names artifacts the store has; an unknown hash is refused */
	put(s, k, "image", "bzImage bytes", img);
	put(s, k, "config", "CONFIG_A=y\n", cfg);
	put(s, k, "log", "make: ok\n", log);
	memset(&o, 0, sizeof(o));
	o.release = "6.1.0-bfaaaaaaaa";
	o.image_sha256 = img;
	o.config_sha256 = cfg;
	o.log_sha256 = log;
	o.sysmap_sha256 = KEY_B;	/* no such artifact */
	T_EQ_INT(store_kbuild_finish(s, KEY_A, &o), BF_ERR_INVALID);
	o.sysmap_sha256 = "../../etc/passwd";
	T_EQ_INT(store_kbuild_finish(s, KEY_A, &o), BF_ERR_INVALID);
	o.sysmap_sha256 = NULL;
	T_EQ_INT(store_kbuild_finish(s2, KEY_A, &o), BF_ERR_STATE);	/* not c2's */
	T_EQ_INT(store_kbuild_finish(s, KEY_A, &o), 0);
	T_EQ_INT(store_kbuild_finish(s, KEY_A, &o), BF_ERR_STATE);	/* done already */

	/* now everybody reuses it */
	T_EQ_INT(store_kbuild_take(s2, KEY_A, SPEC, "builder2", 60, &take), 0);
	T_EQ_INT(take, STORE_KBUILD_DONE);
	T_EQ_INT(store_kbuild_get(s2, KEY_A, &row), 0);
	T_EQ_STR(jstr(row, "state"), "done");
	T_EQ_STR(jstr(row, "release"), "6.1.0-bfaaaaaaaa");
	T_EQ_STR(jstr(row, "image_sha256"), img);
	T_EQ_STR(jstr(row, "machine"), "builder1");
	T_CHECK(json_is_null(json_object_get(row, "modules_sha256")));
	json_decref(row);
	row = NULL;
	T_EQ_INT(store_kartifact_get(s2, img, kind, &size), 0);
	T_EQ_STR(kind, "image");
	T_EQ_INT(size, strlen("bzImage bytes"));
	T_EQ_INT(store_kartifact_get(s2, KEY_B, kind, &size), BF_ERR_NOTFOUND);
	T_EQ_INT(store_kartifact_get(s2, "x'--", kind, &size), BF_ERR_INVALID);
	T_EQ_INT(store_kbuild_get(s2, KEY_B, &row), BF_ERR_NOTFOUND);
	T_EQ_INT(store_kartifact_add(s, img, "kernel", 1), BF_ERR_INVALID);
	T_EQ_INT(store_kartifact_add(s, img, "image", -1), BF_ERR_INVALID);

	/* a failed build: FAILED for everyone after, with the compiler's line */
	T_EQ_INT(store_kbuild_take(s2, KEY_B, SPEC, "builder2", 1, &take), 0);
	T_EQ_INT(take, STORE_KBUILD_MINE);
	/* its lease lapses (1 s): c1 takes it over, c2's late finish is refused */
	sleep(2);
	T_EQ_INT(store_kbuild_take(s, KEY_B, SPEC, "builder1", 60, &take), 0);
	T_EQ_INT(take, STORE_KBUILD_MINE);
	memset(&o, 0, sizeof(o));
	o.error = "mm/memory.c:42:1: error: expected ';' before '}' token";
	o.log_sha256 = log;
	T_EQ_INT(store_kbuild_finish(s2, KEY_B, &o), BF_ERR_STATE);
	T_EQ_INT(store_kbuild_finish(s, KEY_B, &o), 0);
	T_EQ_INT(store_kbuild_take(s2, KEY_B, SPEC, "builder2", 60, &take), 0);
	T_EQ_INT(take, STORE_KBUILD_FAILED);
	T_EQ_INT(store_kbuild_get(s, KEY_B, &row), 0);
	T_EQ_STR(jstr(row, "state"), "failed");
	T_CONTAINS(jstr(row, "error"), "mm/memory.c:42:1: error");
	json_decref(row);
	row = NULL;

	/* hostile keys and values */
	T_EQ_INT(store_kbuild_take(s, "../x", SPEC, "m", 60, &take), BF_ERR_INVALID);
	T_EQ_INT(store_kbuild_take(s, KEY_A "0", SPEC, "m", 60, &take), BF_ERR_INVALID);
	T_EQ_INT(store_kbuild_take(s, KEY_A, "", "m", 60, &take), BF_ERR_INVALID);
	T_EQ_INT(store_kbuild_take(s, KEY_A, SPEC, "m", 0, &take), BF_ERR_INVALID);
	T_EQ_INT(store_kbuild_touch(s, KEY_A), 0);
	T_EQ_INT(store_kbuild_touch(s, "0000000000000000000000000000000000000000000000000000000000"
	    "000000"), BF_ERR_NOTFOUND);
out:
	json_decref(row);
	store_close(s2);
	store_close(s);
}

/* Retention: over the cap, the least recently used builds go, and only the
 * files no remaining build names are handed back. */
static void
test_prune(struct kstore *k)
{
	struct store *s = NULL;
	struct store_kbuild_out o;
	char shared[65], img1[65], img2[65], hex[65], (*v)[65] = NULL;
	const char *keys[2] = { KEY_A, KEY_B };
	void *data = NULL;
	size_t n = 0, dn;
	int i, take;

	if ((s = open_fresh("kprune.db")) == NULL)
		return;
	put(s, k, "config", "CONFIG_SHARED=y\n", shared);		/* 16 bytes */
	put(s, k, "image", "image one, 20 bytes", img1);		/* 19 */
	put(s, k, "image", "image two is 21 bytes", img2);		/* 21 */
	for (i = 0; i < 2; i++) {
		T_EQ_INT(store_kbuild_take(s, keys[i], SPEC, "b", 60, &take), 0);
		memset(&o, 0, sizeof(o));
		o.release = "6.1.0-bf";
		o.config_sha256 = shared;
		o.image_sha256 = i == 0 ? img1 : img2;
		T_EQ_INT(store_kbuild_finish(s, keys[i], &o), 0);
		usleep(20000);
	}
	T_EQ_INT(store_kbuild_touch(s, KEY_A), 0);	/* B is now the least recent */
	T_EQ_INT(store_kbuild_prune(s, 1000, &v, &n), 0);
	T_EQ_INT(n, 0);
	T_CHECK(v == NULL);
	T_EQ_INT(store_kbuild_prune(s, 40, &v, &n), 0);
	T_EQ_INT(n, 1);
	if (n == 1)
		T_EQ_STR(v[0], img2);
	T_EQ_INT(store_kartifact_get(s, shared, hex, &(int64_t){0}), 0);
	for (dn = 0; dn < n; dn++)
		T_EQ_INT(kstore_remove(k, v[dn]), 0);
	free(v);
	v = NULL;
	T_EQ_INT(kstore_read(k, img2, &data, &dn), BF_ERR_NOTFOUND);
	T_EQ_INT(kstore_read(k, img1, &data, &dn), 0);
	free(data);
	data = NULL;
	T_EQ_INT(store_kbuild_prune(s, 0, &v, &n), 0);
	T_EQ_INT(n, 2);	/* A's image and the shared config */
	free(v);
	T_EQ_INT(store_kartifact_get(s, shared, hex, &(int64_t){0}), BF_ERR_NOTFOUND);
	store_close(s);
}

static void
test_kstore(const char *dir)
{
	struct kstore *k = NULL;
	struct bf_diag d;
	char sha[65], sha2[65], p[600], q[700];
	void *data = NULL;
	int64_t size;
	size_t n;
	int fd = -1;

	snprintf(p, sizeof(p), "%s/art2", dir);
	T_EQ_INT(kstore_open(p, &k, &d), 0);
	if (k == NULL)
		return;
	T_EQ_INT(kstore_put(k, "hello", 5, sha), 0);
	sha256_hex("hello", 5, sha2);
	T_EQ_STR(sha, sha2);
	T_EQ_INT(kstore_put(k, "hello", 5, sha2), 0);		/* already there */
	T_EQ_INT(kstore_open_blob(k, sha, &fd, &size), 0);
	T_EQ_INT(size, 5);
	if (fd >= 0)
		close(fd);
	/* names that are not hashes never become paths */
	T_EQ_INT(kstore_open_blob(k, "../art2", &fd, &size), BF_ERR_INVALID);
	T_EQ_INT(kstore_open_blob(k, "2CF24DBA5FB0A30E26E83B2AC5B9E29E1B161E5C1FA7425E73043362938B9824",
	    &fd, &size), BF_ERR_INVALID);
	T_EQ_INT(kstore_open_blob(k, "", &fd, &size), BF_ERR_INVALID);
	T_EQ_INT(kstore_remove(k, "/etc/passwd"), BF_ERR_INVALID);
	/* a damaged file is said, not served as its name */
	snprintf(q, sizeof(q), "%s/%s", p, sha);
	fd = open(q, O_WRONLY | O_TRUNC);
	T_CHECK(fd >= 0 && write(fd, "jello", 5) == 5);
	if (fd >= 0)
		close(fd);
	T_EQ_INT(kstore_read(k, sha, &data, &n), BF_ERR_INVALID);
	T_CHECK(data == NULL);
	/* a symlink under a hash name is not followed */
	T_EQ_INT(unlink(q), 0);
	T_EQ_INT(symlink("/etc/passwd", q), 0);
	T_EQ_INT(kstore_open_blob(k, sha, &fd, &size), BF_ERR_SYS);
	T_EQ_INT(kstore_remove(k, sha), 0);
	T_EQ_INT(kstore_remove(k, sha), 0);			/* absent is fine */
	kstore_close(k);
	kstore_close(NULL);
	k = NULL;
	/* the directory: a symlink to one, or one others can write, is refused */
	snprintf(q, sizeof(q), "%s/art-link", dir);
	T_EQ_INT(symlink(p, q), 0);
	T_EQ_INT(kstore_open(q, &k, &d), BF_ERR_SYS);
	T_CONTAINS(d.msg, "a symlink is refused");
	unlink(q);
	T_EQ_INT(chmod(p, 0777), 0);
	T_EQ_INT(kstore_open(p, &k, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "writable by no one else");
	rmdir(p);
}

/* Remove what the artifact directory holds, then it. */
static void
rm_dir(const char *p)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", p);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", p);
}

int
main(void)
{
	static const char *const dbs[] = { "kbuild.db", "kprune.db" };
	struct kstore *k = NULL;
	struct bf_diag d;
	char p[600];

	if (fix_where_init(&where, "store-kbuild") != 0)
		return 1;
	snprintf(p, sizeof(p), "%s/art", where.dir);
	T_EQ_INT(kstore_open(p, &k, &d), 0);
	if (k != NULL) {
		test_take_finish(k);
		test_prune(k);
	}
	kstore_close(k);
	test_kstore(where.dir);
	rm_dir(p);
	store_fixture_done(dbs, sizeof(dbs) / sizeof(dbs[0]));
	return t_done();
}
