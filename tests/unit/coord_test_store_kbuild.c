/*
 * coord_test_store_kbuild.c: kernel builds in the store (schema step 14)
 * and the artifact directory (kstore.c), on SQLite or (the @pg variant)
 * PostgreSQL: a key is taken by one coordinator only, the other waits
 * (BUSY) and then reuses the build (DONE); a lapsed lease is taken over
 * and the late builder's finish refused; retention forgets the least
 * recently used builds and hands back exactly the files no build names;
 * the directory refuses names that are not hashes, symlinks and a
 * directory others can write. Schema step 14 migrates a store of step 13
 * with every sample and profile artifact intact.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "api-view.h"
#include "db.h"
#include "err.h"
#include "kstore.h"
#include "sha256.h"
#include "store.h"
#include "store_fixture.h"
#include "t.h"

#define KEY_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define KEY_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define SPEC "{\"git\":\"/srv/git/linux\",\"commit\":\"v6.1\"}"

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
	struct store_kbuild row;
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
	T_EQ_STR(row.state, "done");
	T_EQ_STR(row.release, "6.1.0-bfaaaaaaaa");
	T_EQ_STR(row.image_sha256, img);
	T_EQ_STR(row.machine, "builder1");
	T_CHECK(row.modules_sha256[0] == '\0');
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
	T_EQ_STR(row.state, "failed");
	T_CONTAINS(row.error, "mm/memory.c:42:1: error");
	T_EQ_STR(row.image_sha256, "");
	/* a release longer than a build could write (another tool's row):
	 * an error, never a truncated release that a boot would match */
	exec_on("kbuild.db", "UPDATE kernel_builds SET release = '6.1.0-"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'"
	    " WHERE key = '" KEY_B "'");
	T_EQ_INT(store_kbuild_get(s, KEY_B, &row), BF_ERR_DB);
	T_EQ_STR(row.state, "");

	/* hostile keys and values */
	T_EQ_INT(store_kbuild_take(s, "../x", SPEC, "m", 60, &take), BF_ERR_INVALID);
	T_EQ_INT(store_kbuild_take(s, KEY_A "0", SPEC, "m", 60, &take), BF_ERR_INVALID);
	T_EQ_INT(store_kbuild_take(s, KEY_A, "", "m", 60, &take), BF_ERR_INVALID);
	T_EQ_INT(store_kbuild_take(s, KEY_A, SPEC, "m", 0, &take), BF_ERR_INVALID);
	T_EQ_INT(store_kbuild_touch(s, KEY_A), 0);
	T_EQ_INT(store_kbuild_touch(s, "0000000000000000000000000000000000000000000000000000000000"
	    "000000"), BF_ERR_NOTFOUND);
out:
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

/*
 * Step 14 (kernel builds, machine roles; issue 18): a store of schema 13
 * with a finished job, its samples and a profile artifact
 * opens with all of them byte for byte, and the new tables work at once:
 * a build is taken, finished and read back.
 */
static void
test_migrate_kbuilds(void)
{
	struct store_sample sm[2] = { { "ops", 77.25, "ops/s" }, { "wall", 1.5, "s" } };
	struct store_kbuild_out o;
	struct store_claim *c = NULL;
	struct store *s;
	json_t *before = NULL, *after = NULL;
	struct store_kbuild row;
	char *bt = NULL, *at = NULL, hex[65], img[65], kind[8], ev[STORE_MAX_EVENT];
	void *data = NULL;
	size_t n = 0;
	int64_t job, size;
	int take = -1;

	if ((s = open_fresh("kb.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "w1", "demo"), 0);
	job = add_job(s, "demo", NULL, 1, 1);
	T_EQ_INT(store_run_claim(s, "w1", "demo", 60, &c), 0);
	if (c == NULL) {
		store_close(s);
		return;
	}
	T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 0, sm, 2), 0);
	T_EQ_INT(store_run_add_artifact(s, c->run_id, "folded", "cycles", "a;b 3\n", 6, hex), 0);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	T_EQ_INT(api_view_job_cells_get(s, job, &before), 0);
	store_close(s);
	exec_on("kb.db", FIX_UNDO_STEP14);
	force_version("kb.db", 13);
	T_EQ_INT(read_version("kb.db"), 13);

	s = NULL;
	T_EQ_INT(store_open(target("kb.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_schema_version(s), FIX_SCHEMA_LATEST);
	T_EQ_INT(api_view_job_cells_get(s, job, &after), 0);
	bt = json_dumps(before, JSON_COMPACT | JSON_SORT_KEYS);
	at = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);
	T_CHECK(bt != NULL && at != NULL && strstr(at, "77.25") != NULL);
	T_EQ_STR(at, bt);
	T_EQ_INT(store_run_artifact(s, c->run_id, "folded", &data, &n, img, ev), 0);
	T_EQ_INT(n, 6);
	T_CHECK(data != NULL && memcmp(data, "a;b 3\n", 6) == 0);
	/* the new tables */
	sha256_hex("bzImage", 7, img);
	T_EQ_INT(store_kartifact_add(s, img, "image", 7), 0);
	T_EQ_INT(store_kartifact_add(s, hex, "config", 6), 0);
	T_EQ_INT(store_kbuild_take(s, img, "{}", "w1", 60, &take), 0);
	T_EQ_INT(take, STORE_KBUILD_MINE);
	memset(&o, 0, sizeof(o));
	o.release = "6.1.0-bf12345678";
	o.image_sha256 = img;
	o.config_sha256 = hex;
	T_EQ_INT(store_kbuild_finish(s, img, &o), 0);
	T_EQ_INT(store_kbuild_get(s, img, &row), 0);
	T_EQ_STR(row.release, "6.1.0-bf12345678");
	T_EQ_INT(store_kartifact_get(s, img, kind, &size), 0);
	T_EQ_INT(size, 7);
	/* roles: a machine from before the step runs, as it always did */
	{
		struct store_machine m, *got = NULL;
		json_t *mj;

		T_EQ_INT(store_machine_get(s, "w1", &got), 0);
		mj = got != NULL ? api_view_machine(got) : NULL;
		T_CHECK(got != NULL && got->roles == NULL);
		T_EQ_STR(json_string_value(json_array_get(json_object_get(mj, "roles"), 0)), "run");
		T_EQ_INT(json_array_size(json_object_get(mj, "roles")), 1);
		json_decref(mj);
		store_machine_free(got);
		memset(&m, 0, sizeof(m));
		m.name = "b1";
		m.host = "10.0.0.9";
		m.port = 22;
		m.klass = "builders";
		m.roles = "build";
		T_EQ_INT(store_machine_add(s, &m, NULL), 0);
		got = NULL;
		T_EQ_INT(store_machine_get(s, "b1", &got), 0);
		T_CHECK(got != NULL && got->roles != NULL && strcmp(got->roles, "build") == 0);
		store_machine_free(got);
		m.name = "b2";
		m.roles = "build;reboot";
		T_EQ_INT(store_machine_add(s, &m, NULL), BF_ERR_INVALID);
	}
out:
	store_claim_free(c);
	free(data);
	free(bt);
	free(at);
	json_decref(before);
	json_decref(after);
	store_close(s);
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
	static const char *const dbs[] = { "kbuild.db", "kprune.db", "kb.db" };
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
	test_migrate_kbuilds();
	rm_dir(p);
	store_fixture_done(dbs, sizeof(dbs) / sizeof(dbs[0]));
	return t_done();
}
