/*
 * coord_test_bundle.c: result bundles and reproduction verdicts. Export
 * from a real store and check; canonical hashing survives a text round
 * trip; tampering (a sample, the job, a fingerprint) is refused naming
 * the hash; wrong types and oversized arrays are refused naming the field;
 * verdicts on synthetic samples; fingerprint matching. Signatures: a
 * signed bundle verifies, any changed byte (content, signature, key)
 * fails, the signed bytes do not depend on key order, hash errors never
 * print the value the content hashes to; the lab key file is made 0600
 * and refused when readable by others.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "api-view.h"
#include "bundle.h"
#include "bundle_fixture.h"
#include "caps.h"
#include "err.h"
#include "labkey.h"
#include "repro.h"
#include "store.h"
#include "t.h"

static char dbpath[256];

static const char fp_json[] = "{\"type\":\"fingerprint\",\"cpu_model\":\"Test CPU 9000\","
    "\"cpu_vendor\":\"GenuineTest\",\"cpu_family\":6,\"cpu_model_number\":85,"
    "\"cpu_stepping\":7,\"microcode\":\"0x5003\",\"sockets\":1,\"cores\":2,\"threads\":4,"
    "\"numa_nodes\":[{\"node\":0,\"mem_kb\":8000000}],\"mem_total_kb\":8000000,"
    "\"kernel\":\"6.1.0-test\",\"kernel_config_sha256\":"
    "\"1fa1000000000000000000000000000000000000000000000000000000000000\","
    "\"cmdline\":\"quiet\",\"distro\":\"Debian 12\",\"kernel_compiler\":\"gcc 12.2\","
    "\"sha256\":\"0000000000000000000000000000000000000000000000000000000000000000\"}";

/* The environment of each boot, as the runner stores it (canonical). */
static const char snap_a[] = "{\"kernel.boot_id\":\"boot-a\",\"transparent_hugepage/defrag\":"
    "\"madvise\",\"transparent_hugepage/enabled\":\"always\",\"vm.swappiness\":null}";
static const char snap_b[] = "{\"kernel.boot_id\":\"boot-b\",\"transparent_hugepage/defrag\":"
    "\"madvise\",\"transparent_hugepage/enabled\":\"always\",\"vm.swappiness\":null}";

/* A store with one machine, one job of 1 cell x 2 boots, 3 samples each,
 * each boot its own snapshot. */
static struct store *
make_store(int64_t *job)
{
	struct store *s = NULL;
	struct store_machine m;
	struct store_run_new rn[2];
	struct store_claim *c = NULL;
	struct store_sample smp;
	struct bf_diag d;
	int i, k;

	snprintf(dbpath, sizeof(dbpath), "/tmp/bf-bundle-test.%d.db", (int)getpid());
	unlink(dbpath);
	bf_diag_clear(&d);
	T_EQ_INT(store_open(dbpath, &s, &d), 0);
	if (s == NULL)
		return NULL;
	memset(&m, 0, sizeof(m));
	m.name = "h1";
	m.host = "127.0.0.1";
	m.port = 2222;
	m.user = "bench";
	m.klass = "lab";
	T_EQ_INT(store_machine_add(s, &m, NULL), 0);
	T_EQ_INT(store_machine_set_fingerprint(s, "h1", fp_json, "00"), 0);
	memset(rn, 0, sizeof(rn));
	for (i = 0; i < 2; i++) {
		rn[i].cell_index = 0;
		rn[i].label = "loops=10";
		rn[i].axes_json = "{\"loops\":10}";
		rn[i].values_json = "{\"loops\":10}";
		rn[i].boot = i;
		rn[i].run_order = i * 4096;
		rn[i].iterations = 3;
		rn[i].timeout_s = 600;
	}
	T_EQ_INT(store_job_create(s, "demo", "t", "{\"job\":{\"recipe\":\"demo\","
	    "\"machines\":{\"class\":\"lab\"},\"params\":{\"loops\":10}},\"recipe\":{\"name\":"
	    "\"demo\",\"command\":[\"true\"]}}", "lab", NULL, rn, 2, job), 0);
	for (i = 0; i < 2; i++) {
		T_EQ_INT(store_run_claim(s, "h1", "lab", 60, &c), 0);
		if (c == NULL)
			break;
		T_EQ_INT(store_run_set_info(s, c->run_id, "h1", "6.1.0-test", "boot-a"), 0);
		{
			char sha[65];

			T_EQ_INT(store_run_set_snapshot(s, c->run_id, i == 0 ? snap_a : snap_b,
			    sha), 0);
		}
		for (k = 0; k < 3; k++) {
			smp.metric = "faults";
			smp.value = 1000 + k * 0.1 + i;
			smp.unit = "count";
			T_EQ_INT(store_samples_add(s, c->run_id, c->boot, k, &smp, 1), 0);
		}
		T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
		store_claim_free(c);
		c = NULL;
	}
	return s;
}

/* Version 2: the environment of every run, each checked against its name. */
static void
test_snapshots(const json_t *b)
{
	const char *sha0 = json_string_value(json_object_get(json_array_get(json_object_get(b,
	    "runs"), 0), "snapshot_sha256"));
	const char *sha1 = json_string_value(json_object_get(json_array_get(json_object_get(b,
	    "runs"), 1), "snapshot_sha256"));
	struct bf_diag d;
	char hex[65], field[128];
	json_t *c, *sn, *x;

	T_CHECK(sha0 != NULL && sha1 != NULL && strcmp(sha0, sha1) != 0);
	if (sha0 == NULL || sha1 == NULL)
		return;
	x = json_loads(snap_a, 0, NULL);
	T_EQ_INT(bundle_sha256(x, hex), 0);
	T_EQ_STR(sha0, hex);
	T_EQ_STR(json_string_value(json_object_get(json_object_get(json_object_get(b,
	    "snapshots"), sha0), "transparent_hugepage/defrag")), "madvise");
	T_CHECK(json_equal(json_object_get(json_object_get(b, "snapshots"), sha0), x));
	json_decref(x);

	/* A value changed, every hash outside it fixed: its name catches it. */
	c = reparse(b);
	json_object_set_new(json_object_get(json_object_get(c, "snapshots"), sha0),
	    "transparent_hugepage/defrag", json_string("always"));
	rehash(c);
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	snprintf(field, sizeof(field), "snapshots.%s", sha0);
	T_EQ_STR(d.field, field);
	T_CONTAINS(d.msg, "does not match its name");
	json_decref(c);
	/* A value that is not a string or null. */
	c = reparse(b);
	json_object_set_new(json_object_get(json_object_get(c, "snapshots"), sha0),
	    "vm.swappiness", json_integer(60));
	rehash(c);
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "vm.swappiness");
	json_decref(c);
	/* A snapshot that is not an object; a key that is not a sha256. */
	c = reparse(b);
	json_object_set_new(json_object_get(c, "snapshots"), sha0, json_string("x"));
	rehash(c);
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, field);
	json_decref(c);
	c = reparse(b);
	json_object_set_new(json_object_get(c, "snapshots"), "../../etc", json_object());
	rehash(c);
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "snapshots");
	json_decref(c);
	/* A run naming a snapshot the bundle lacks. */
	c = reparse(b);
	json_object_del(json_object_get(c, "snapshots"), sha0);
	rehash(c);
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "runs[0].snapshot_sha256");
	json_decref(c);
	/* A well-formed snapshot no run names. */
	c = reparse(b);
	sn = json_pack("{s:s}", "vm.swappiness", "1");
	T_EQ_INT(bundle_sha256(sn, hex), 0);
	json_object_set_new(json_object_get(c, "snapshots"), hex, sn);
	rehash(c);
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "no run names it");
	json_decref(c);
	/* Version 2 requires the object; version 1 has none of it, and still
	 * reads (a bundle published before snapshots existed). */
	c = reparse(b);
	json_object_del(c, "snapshots");
	{
		size_t i;

		json_array_foreach(json_object_get(c, "runs"), i, x)
			json_object_del(x, "snapshot_sha256");
	}
	rehash(c);
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "snapshots");
	json_object_set_new(c, "version", json_integer(1));
	rehash(c);
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), 0);
	json_object_set_new(json_array_get(json_object_get(c, "runs"), 0), "snapshot_sha256",
	    json_null());
	rehash(c);
	bf_diag_clear(&d);
	T_CHECK(bundle_check(c, &d) != 0);
	json_decref(c);
	c = reparse(b);
	json_object_set_new(c, "version", json_integer(1));
	rehash(c);
	bf_diag_clear(&d);
	T_CHECK(bundle_check(c, &d) != 0);
	json_decref(c);
}

static void
test_export_and_tamper(void)
{
	struct store *s;
	struct bf_diag d;
	json_t *b = NULL, *c, *x;
	char hex[65], *text;
	int64_t job = 0;

	if ((s = make_store(&job)) == NULL)
		return;
	bf_diag_clear(&d);
	T_EQ_INT(bundle_export(s, job, &b, &d), 0);
	if (b == NULL) {
		fprintf(stderr, "export: %s\n", d.msg);
		goto out;
	}
	T_EQ_STR(json_string_value(json_object_get(b, "format")), "benchfleet-bundle");
	T_EQ_INT(json_integer_value(json_object_get(b, "version")), 2);
	T_EQ_INT(json_object_size(json_object_get(b, "snapshots")), 2);
	T_EQ_INT(json_array_size(json_object_get(b, "samples")), 6);
	T_EQ_INT(json_array_size(json_object_get(b, "runs")), 2);
	T_EQ_INT(json_array_size(json_object_get(b, "machines")), 1);
	T_CHECK(json_object_get(b, "kernel_builds") == NULL);	/* it built none */
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(b, "machines"),
	    0), "kernel_config_sha256")),
	    "1fa1000000000000000000000000000000000000000000000000000000000000");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(b, "runs"), 0),
	    "boot_id")), "boot-a");
	T_EQ_INT(bundle_check(b, &d), 0);
	T_EQ_INT(bundle_content_sha256(b, hex), 0);
	T_EQ_STR(json_string_value(json_object_get(b, "sha256")), hex);

	/* A re-probe after the job ran changes the machine, not the job's
	 * bundle: its machines are as the runs found them, byte for byte. */
	{
		json_t *b2 = NULL;
		char *t1, *t2;

		T_EQ_INT(store_machine_set_fingerprint(s, "h1", "{\"cpu_model\":\"other\","
		    "\"kernel\":\"6.99\",\"kernel_config_sha256\":\"2bad\"}", "00"), 0);
		T_EQ_INT(bundle_export(s, job, &b2, &d), 0);
		t1 = json_dumps(b, JSON_COMPACT);
		t2 = b2 != NULL ? json_dumps(b2, JSON_COMPACT) : NULL;
		T_CHECK(t1 != NULL && t2 != NULL);
		T_EQ_STR(t2, t1);
		T_CHECK(t2 != NULL && strstr(t2, "6.99") == NULL);
		free(t1);
		free(t2);
		json_decref(b2);
	}

	/* Through text (any key order) and back: the same hashes. */
	text = json_dumps(b, JSON_INDENT(2));
	T_CHECK(text != NULL);
	x = NULL;
	bf_diag_clear(&d);
	T_EQ_INT(bundle_parse(text, strlen(text), BF_MAX_BUNDLE, &x, &d), 0);
	json_decref(x);
	T_EQ_INT(bundle_parse(text, strlen(text), 100, &x, &d), BF_ERR_TOOBIG);
	free(text);

	/* One sample changed, hash not updated. */
	c = reparse(b);
	json_object_set_new(json_array_get(json_object_get(c, "samples"), 3), "value",
	    json_real(1234.5));
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "sha256");
	T_CONTAINS(d.msg, "does not match");
	/* Neither the claimed nor the recomputed hash is printed: a forger
	 * would take it straight from the error. */
	T_EQ_INT(bundle_content_sha256(c, hex), 0);
	T_CHECK(strstr(d.msg, hex) == NULL);
	T_CHECK(strstr(d.msg, "hashes to") == NULL);
	json_decref(c);

	/* The job changed. */
	c = reparse(b);
	json_object_set_new(json_object_get(c, "job"), "name", json_string("other"));
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "job_sha256");
	json_decref(c);

	/* The recipe changed. */
	c = reparse(b);
	json_object_set_new(json_object_get(c, "recipe"), "name", json_string("x"));
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "recipe_sha256");
	T_EQ_INT(bundle_sha256(json_object_get(c, "recipe"), hex), 0);
	T_CHECK(strstr(d.msg, hex) == NULL);
	json_decref(c);

	/* A fingerprint changed. */
	c = reparse(b);
	json_object_set_new(json_object_get(json_array_get(json_object_get(c, "machines"), 0),
	    "fingerprint"), "cpu_model", json_string("Other CPU"));
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "machines[0].fingerprint_sha256");
	json_decref(c);

	/* Wrong types. */
	c = reparse(b);
	json_object_set_new(json_array_get(json_object_get(c, "samples"), 0), "value",
	    json_string("12"));
	bf_diag_clear(&d);
	T_CHECK(bundle_check(c, &d) != 0);
	T_EQ_STR(d.field, "samples[0].value");
	json_decref(c);
	c = reparse(b);
	json_object_set_new(c, "runs", json_string("none"));
	bf_diag_clear(&d);
	T_CHECK(bundle_check(c, &d) != 0);
	T_EQ_STR(d.field, "runs");
	json_decref(c);
	c = reparse(b);
	json_object_set_new(c, "version", json_integer(4));
	bf_diag_clear(&d);
	T_CHECK(bundle_check(c, &d) != 0);
	T_EQ_STR(d.field, "version");
	json_decref(c);
	/* version 3 is a suite's: a single recipe is not its shape */
	c = reparse(b);
	json_object_set_new(c, "version", json_integer(3));
	bf_diag_clear(&d);
	T_CHECK(bundle_check(c, &d) != 0);
	T_EQ_STR(d.field, "recipe");
	json_decref(c);
	c = reparse(b);
	json_object_set_new(c, "extra", json_true());
	bf_diag_clear(&d);
	T_CHECK(bundle_check(c, &d) != 0);
	json_decref(c);
	/* A sample of a run the bundle does not have. */
	c = reparse(b);
	json_object_set_new(json_array_get(json_object_get(c, "samples"), 0), "run",
	    json_integer(99999));
	bf_diag_clear(&d);
	T_CHECK(bundle_check(c, &d) != 0);
	T_EQ_STR(d.field, "samples[0].run");
	json_decref(c);

	/* Oversized arrays are refused before anything is walked. */
	{
		size_t i;
		json_t *arr;

		c = reparse(b);
		arr = json_array();
		for (i = 0; i <= BUNDLE_MAX_SAMPLES; i++)
			json_array_append(arr, json_null());
		json_object_set_new(c, "samples", arr);
		bf_diag_clear(&d);
		T_CHECK(bundle_check(c, &d) != 0);
		T_EQ_STR(d.field, "samples");
		json_decref(c);
		c = reparse(b);
		arr = json_array();
		for (i = 0; i <= BUNDLE_MAX_MACHINES; i++)
			json_array_append(arr, json_null());
		json_object_set_new(c, "machines", arr);
		bf_diag_clear(&d);
		T_CHECK(bundle_check(c, &d) != 0);
		T_EQ_STR(d.field, "machines");
		json_decref(c);
	}
	test_snapshots(b);
	T_EQ_INT(bundle_export(s, 999, &x, &d), BF_ERR_NOTFOUND);
out:
	json_decref(b);
	store_close(s);
	unlink(dbpath);
}

static void
test_verdicts(void)
{
	static const double base[] = { 100.0, 100.2, 99.8, 100.1, 99.9, 100.05, 99.95, 100.0 };
	double shifted[8], noisy_a[] = { 100, 130, 70 }, noisy_b[] = { 101, 71, 129 };
	double far_b[] = { 110, 80, 140 };
	struct repro_verdict v;
	size_t i;

	for (i = 0; i < 8; i++)
		shifted[i] = base[(i + 3) % 8] * 1.10;
	T_EQ_INT(repro_verdict(base, NULL, 8, base, NULL, 8, 2.0, &v), 0);
	T_EQ_STR(repro_verdict_name(v.kind), "reproduced");
	T_NEAR(v.pct, 0.0, 1e-9);
	T_CHECK(v.lo90 >= -2.0 && v.hi90 <= 2.0);

	T_EQ_INT(repro_verdict(base, NULL, 8, shifted, NULL, 8, 2.0, &v), 0);
	T_EQ_STR(repro_verdict_name(v.kind), "differs");
	T_NEAR(v.pct, 10.0, 0.01);
	T_CHECK(v.lo95 > 2.0 && v.hi95 > v.lo95);

	T_EQ_INT(repro_verdict(noisy_a, NULL, 3, noisy_b, NULL, 3, 2.0, &v), 0);
	T_EQ_STR(repro_verdict_name(v.kind), "inconclusive");
	T_CHECK(v.n_needed > 3);

	T_EQ_INT(repro_verdict(noisy_a, NULL, 3, far_b, NULL, 3, 2.0, &v), 0);
	T_EQ_STR(repro_verdict_name(v.kind), "inconclusive");
	T_EQ_INT(v.n_needed, 0);
	T_CONTAINS(v.why, "cannot be shown equivalent");

	/* Deterministic values: zero variance on both sides. */
	T_EQ_INT(repro_verdict(base, NULL, 1, base, NULL, 1, 2.0, &v), 0);
	T_EQ_STR(repro_verdict_name(v.kind), "inconclusive");
	{
		double k[] = { 5, 5, 5 }, k2[] = { 6, 6, 6 };

		T_EQ_INT(repro_verdict(k, NULL, 3, k, NULL, 3, 2.0, &v), 0);
		T_EQ_STR(repro_verdict_name(v.kind), "reproduced");
		T_EQ_INT(repro_verdict(k, NULL, 3, k2, NULL, 3, 2.0, &v), 0);
		T_EQ_STR(repro_verdict_name(v.kind), "differs");
		T_NEAR(v.pct, 20.0, 1e-9);
	}
	/* Several boots: boot means are the samples. */
	{
		double a[] = { 10, 10.1, 20, 20.1, 30, 30.1 }, b[] = { 10, 10.1, 20, 20.1, 30, 30.1 };
		int boots[] = { 0, 0, 1, 1, 2, 2 };

		T_EQ_INT(repro_verdict(a, boots, 6, b, boots, 6, 2.0, &v), 0);
		T_EQ_INT(v.boot_means, 1);
		T_EQ_INT(v.a.n, 3);
	}
	/* A metric the rerun did not produce. */
	T_EQ_INT(repro_verdict(base, NULL, 8, NULL, NULL, 0, 2.0, &v), 0);
	T_EQ_STR(repro_verdict_name(v.kind), "inconclusive");
	T_EQ_INT(v.b.n, 0);
	T_EQ_INT(repro_verdict(base, NULL, 8, base, NULL, 8, 0.0, &v), BF_ERR_INVALID);
}

static void
test_fp_compare(void)
{
	json_t *a = json_loads(fp_json, 0, NULL), *b = json_deep_copy(a), *ident, *other;

	T_EQ_INT(repro_fp_compare(a, b, &ident, &other), 0);
	T_EQ_INT(json_array_size(ident), 0);
	T_EQ_INT(json_array_size(other), 0);
	json_decref(ident);
	json_decref(other);
	json_object_set_new(b, "microcode", json_string("0x5004"));
	json_object_set_new(b, "kernel_config_sha256", json_string("77c2"));
	json_object_set_new(b, "mem_total_kb", json_integer(8200000));	/* +2.5% */
	T_EQ_INT(repro_fp_compare(a, b, &ident, &other), 0);
	T_EQ_INT(json_array_size(ident), 0);
	T_CHECK(json_array_size(other) >= 2);
	json_decref(ident);
	json_decref(other);
	json_object_set_new(b, "cpu_model", json_string("Other"));
	json_object_set_new(b, "mem_total_kb", json_integer(9000000));	/* +12.5% */
	T_EQ_INT(repro_fp_compare(a, b, &ident, &other), 0);
	T_EQ_INT(json_array_size(ident), 2);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(ident, 0), "field")),
	    "cpu_model");
	json_decref(ident);
	json_decref(other);
	T_EQ_INT(repro_fp_compare(a, json_null(), &ident, &other), 0);
	T_EQ_INT(json_array_size(ident), 1);
	json_decref(ident);
	json_decref(other);
	json_decref(a);
	json_decref(b);
}

static char keydir[256];

static const char *
keypath(const char *name)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s/%s", keydir, name);
	return p;
}

/* A bundle with its keys in another order, through text. */
static json_t *
reorder(const json_t *v)
{
	const char *k;
	json_t *o, *x, *e;
	size_t i, n;
	const char *keys[64];

	if (json_is_array(v)) {
		o = json_array();
		json_array_foreach(v, i, x)
			json_array_append_new(o, reorder(x));
		return o;
	}
	if (!json_is_object(v))
		return json_deep_copy(v);
	/* jansson keeps insertion order: insert in reverse */
	n = 0;
	json_object_foreach((json_t *)v, k, x)
		if (n < 64)
			keys[n++] = k;
	o = json_object();
	for (i = n; i > 0; i--) {
		e = reorder(json_object_get(v, keys[i - 1]));
		json_object_set_new(o, keys[i - 1], e);
	}
	return o;
}

static void
test_labkey_file(void)
{
	struct labkey *k = NULL, *k2 = NULL;
	struct bf_diag d;
	struct stat sb;
	unsigned char p1[LABKEY_PUB_LEN], p2[LABKEY_PUB_LEN];
	char fp[LABKEY_FP_LEN + 1], b64[LABKEY_PUB_B64_LEN + 1];
	int made = -1;
	FILE *f;

	bf_diag_clear(&d);
	T_EQ_INT(labkey_load_or_create(keypath("lab.key"), &k, &made, &d), 0);
	T_EQ_INT(made, 1);
	T_EQ_INT(stat(keypath("lab.key"), &sb), 0);
	T_EQ_INT(sb.st_mode & 07777, 0600);
	/* Loading again gives the same key, and makes nothing. */
	T_EQ_INT(labkey_load_or_create(keypath("lab.key"), &k2, &made, &d), 0);
	T_EQ_INT(made, 0);
	if (k == NULL || k2 == NULL)
		goto out;
	labkey_public(k, p1);
	labkey_public(k2, p2);
	T_CHECK(memcmp(p1, p2, sizeof(p1)) == 0);
	labkey_free(k2);
	k2 = NULL;
	/* OpenSSH's form: "SHA256:" and 43 unpadded base64 characters. */
	labkey_fingerprint(p1, fp);
	T_EQ_INT(strlen(fp), 50);
	T_CHECK(strncmp(fp, "SHA256:", 7) == 0);
	T_CHECK(strchr(fp, '=') == NULL);
	labkey_b64(p1, sizeof(p1), b64);
	T_EQ_INT(strlen(b64), 44);
	memset(p2, 0, sizeof(p2));
	T_EQ_INT(labkey_unb64(b64, p2, sizeof(p2)), 0);
	T_CHECK(memcmp(p1, p2, sizeof(p1)) == 0);
	T_EQ_INT(labkey_unb64("AAAA", p2, sizeof(p2)), BF_ERR_PARSE);
	T_EQ_INT(labkey_unb64("", p2, sizeof(p2)), BF_ERR_PARSE);

	/* Group- or world-accessible: refused like sshd refuses a host key. */
	T_EQ_INT(chmod(keypath("lab.key"), 0640), 0);
	bf_diag_clear(&d);
	T_EQ_INT(labkey_load_or_create(keypath("lab.key"), &k2, NULL, &d), BF_ERR_INVALID);
	T_CHECK(k2 == NULL);
	T_CONTAINS(d.msg, "0640");
	T_CONTAINS(d.msg, "chmod 600");
	T_EQ_INT(chmod(keypath("lab.key"), 0604), 0);
	T_EQ_INT(labkey_load_or_create(keypath("lab.key"), &k2, NULL, &d), BF_ERR_INVALID);
	T_EQ_INT(chmod(keypath("lab.key"), 0600), 0);
	T_EQ_INT(labkey_load_or_create(keypath("lab.key"), &k2, NULL, &d), 0);
	labkey_free(k2);
	k2 = NULL;
	/* A symbolic link is not followed. */
	{
		char target[512];

		snprintf(target, sizeof(target), "%s", keypath("lab.key"));
		T_EQ_INT(symlink(target, keypath("link.key")), 0);
	}
	bf_diag_clear(&d);
	T_CHECK(labkey_load_or_create(keypath("link.key"), &k2, NULL, &d) != 0);
	T_CONTAINS(d.msg, "symbolic link");
	/* Not a key at all. */
	if ((f = fopen(keypath("junk.key"), "w")) != NULL) {
		fputs("-----BEGIN PRIVATE KEY-----\nnonsense\n-----END PRIVATE KEY-----\n", f);
		fclose(f);
	}
	chmod(keypath("junk.key"), 0600);
	bf_diag_clear(&d);
	T_EQ_INT(labkey_load_or_create(keypath("junk.key"), &k2, NULL, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "ed25519");
	/* A directory that does not exist: an error naming the file. */
	bf_diag_clear(&d);
	T_CHECK(labkey_load_or_create("/nonexistent-dir/lab.key", &k2, NULL, &d) != 0);
	T_CONTAINS(d.msg, "/nonexistent-dir/lab.key");
out:
	labkey_free(k);
	labkey_free(k2);
}

static void
test_sign_verify(void)
{
	struct labkey *k = NULL, *other = NULL;
	struct bundle_sig sig;
	struct store *s;
	struct bf_diag d;
	json_t *b = NULL, *c = NULL;
	unsigned char pub[LABKEY_PUB_LEN], opub[LABKEY_PUB_LEN], *m1 = NULL, *m2 = NULL;
	unsigned char raw[LABKEY_SIG_LEN];
	size_t l1 = 0, l2 = 0;
	char *text = NULL, fp[LABKEY_FP_LEN + 1];
	const char *sg;
	int64_t job = 0;

	if ((s = make_store(&job)) == NULL)
		return;
	bf_diag_clear(&d);
	T_EQ_INT(labkey_load_or_create(keypath("sign.key"), &k, NULL, &d), 0);
	T_EQ_INT(labkey_load_or_create(keypath("other.key"), &other, NULL, &d), 0);
	T_EQ_INT(bundle_export(s, job, &b, &d), 0);
	if (k == NULL || other == NULL || b == NULL)
		goto out;
	labkey_public(k, pub);
	labkey_public(other, opub);

	/* Unsigned: checks, and says so. */
	T_EQ_INT(bundle_signature(b, &sig, &d), 0);
	T_EQ_INT(sig.present, 0);

	T_EQ_INT(bundle_sign(b, "lab-a", pub, labkey_sign_cb, k), 0);
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(b, &d), 0);
	T_EQ_INT(bundle_signature(b, &sig, &d), 0);
	T_EQ_INT(sig.present, 1);
	T_EQ_STR(sig.lab, "lab-a");
	T_CHECK(memcmp(sig.pub, pub, sizeof(pub)) == 0);
	labkey_fingerprint(pub, fp);
	T_EQ_STR(sig.fingerprint, fp);

	/* Signing leaves the content hash alone: it covers no signature. */
	{
		char hex[65];

		T_EQ_INT(bundle_content_sha256(b, hex), 0);
		T_EQ_STR(json_string_value(json_object_get(b, "sha256")), hex);
	}

	/* The signed bytes are canonical: key order and whitespace of the
	 * text do not matter, and the signature survives them. */
	c = reorder(b);
	T_EQ_INT(bundle_signed_message(b, &m1, &l1), 0);
	T_EQ_INT(bundle_signed_message(c, &m2, &l2), 0);
	T_EQ_INT(l1, l2);
	T_CHECK(m1 != NULL && m2 != NULL && memcmp(m1, m2, l1) == 0);
	T_CHECK(l1 > strlen(BUNDLE_SIG_CONTEXT) &&
	    memcmp(m1, BUNDLE_SIG_CONTEXT, strlen(BUNDLE_SIG_CONTEXT)) == 0);
	text = json_dumps(c, JSON_INDENT(3));
	json_decref(c);
	c = NULL;
	bf_diag_clear(&d);
	T_EQ_INT(bundle_parse(text, strlen(text), BF_MAX_BUNDLE, &c, &d), 0);
	T_EQ_INT(bundle_signature(c, &sig, &d), 0);
	T_EQ_INT(sig.present, 1);
	json_decref(c);
	c = NULL;
	/* labkey itself: the signature of the message verifies, of a message
	 * one byte off does not. */
	T_EQ_INT(labkey_sign(k, m1, l1, raw), 0);
	T_EQ_INT(labkey_verify(pub, m1, l1, raw), 0);
	m1[l1 - 2] ^= 1;
	T_EQ_INT(labkey_verify(pub, m1, l1, raw), BF_ERR_AUTH);
	m1[l1 - 2] ^= 1;
	T_EQ_INT(labkey_verify(opub, m1, l1, raw), BF_ERR_AUTH);

	/* Any change after signing, hashes recomputed or not, fails. A
	 * sample's value, with every hash made right again: */
	c = json_deep_copy(b);
	json_object_set_new(json_array_get(json_object_get(c, "samples"), 0), "value",
	    json_real(1.5));
	{
		char hex[65];

		bundle_content_sha256(c, hex);
		json_object_set_new(c, "sha256", json_string(hex));
	}
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "signature");
	T_CONTAINS(d.msg, "does not verify");
	json_decref(c);
	/* The recipe's command, hashes recomputed: */
	c = json_deep_copy(b);
	json_object_set_new(json_object_get(c, "recipe"), "command",
	    json_pack("[s,s,s]", "/bin/sh", "-c", "touch /tmp/x"));
	{
		char hex[65];

		bundle_sha256(json_object_get(c, "recipe"), hex);
		json_object_set_new(c, "recipe_sha256", json_string(hex));
		bundle_content_sha256(c, hex);
		json_object_set_new(c, "sha256", json_string(hex));
	}
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "signature");
	json_decref(c);
	/* One bit of the signature: */
	c = json_deep_copy(b);
	sg = json_string_value(json_object_get(json_object_get(c, "signature"), "sig"));
	{
		char *t = strdup(sg);

		t[5] = t[5] == 'A' ? 'B' : 'A';
		json_object_set_new(json_object_get(c, "signature"), "sig", json_string(t));
		free(t);
	}
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "signature");
	json_decref(c);
	/* Another key put in the signer's place: */
	c = json_deep_copy(b);
	{
		char o64[LABKEY_PUB_B64_LEN + 1];

		labkey_b64(opub, sizeof(opub), o64);
		json_object_set_new(json_object_get(c, "signature"), "public_key",
		    json_string(o64));
	}
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "signature");
	json_decref(c);
	/* The signer's name is not signed (a receiver names labs from its
	 * keyring), but its shape is checked. */
	c = json_deep_copy(b);
	json_object_set_new(json_object_get(c, "signature"), "lab", json_string("a b;rm"));
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "signature.lab");
	json_decref(c);
	/* Malformed signatures: wrong alg, short sig, extra key. */
	c = json_deep_copy(b);
	json_object_set_new(json_object_get(c, "signature"), "alg", json_string("rsa"));
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "signature.alg");
	json_decref(c);
	c = json_deep_copy(b);
	json_object_set_new(json_object_get(c, "signature"), "sig", json_string("AAAA"));
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(c, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "signature.sig");
	json_decref(c);
	c = json_deep_copy(b);
	json_object_set_new(json_object_get(c, "signature"), "trusted", json_true());
	bf_diag_clear(&d);
	T_CHECK(bundle_check(c, &d) != 0);
	json_decref(c);
	c = json_deep_copy(b);
	json_object_set_new(c, "signature", json_string("yes"));
	bf_diag_clear(&d);
	T_CHECK(bundle_check(c, &d) != 0);
	T_EQ_STR(d.field, "signature");
	json_decref(c);
	c = NULL;
	/* Re-signing by another lab replaces the signature. */
	T_EQ_INT(bundle_sign(b, "lab-b", opub, labkey_sign_cb, other), 0);
	T_EQ_INT(bundle_signature(b, &sig, &d), 0);
	T_EQ_STR(sig.lab, "lab-b");
	T_CHECK(memcmp(sig.pub, opub, sizeof(opub)) == 0);
out:
	free(text);
	free(m1);
	free(m2);
	json_decref(c);
	json_decref(b);
	labkey_free(k);
	labkey_free(other);
	store_close(s);
	unlink(dbpath);
}

#define KB_KEY	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define KB_IMG	"1111111111111111111111111111111111111111111111111111111111111111"
#define KB_CFG	"2222222222222222222222222222222222222222222222222222222222222222"
#define KB_REL	"6.1.0-bft-bfaaaaaaaa"

/* b with kernel_builds[0].key set to value and its hash fixed: refused,
 * naming field (when not NULL). */
static void
forged_kb(const json_t *b, const char *key, const char *value, const char *field)
{
	struct bf_diag d;
	json_t *x = reparse(b);

	json_object_set_new(json_array_get(json_object_get(x, "kernel_builds"), 0), key,
	    json_string(value));
	rehash(x);
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(x, &d), BF_ERR_INVALID);
	if (field != NULL)
		T_EQ_STR(d.field, field);
	json_decref(x);
}

/*
 * A job that built its kernel (issue 18): the bundle lists the build the
 * run booted (key, release, each artifact's sha256) for another lab to
 * rebuild and compare, or to fetch by hash; a kernel the job never
 * booted is not listed; a forged entry is refused naming its field.
 */
static void
test_kernel_builds(void)
{
	struct store *s = NULL;
	struct store_machine m;
	struct store_run_new rn;
	struct store_claim *c = NULL;
	struct store_kbuild_out o;
	struct store_sample smp;
	struct bf_diag d;
	json_t *b = NULL, *e, *x, *runs = NULL, *cmp = NULL;
	char path[256];
	int64_t job = 0;
	int take = -1;

	snprintf(path, sizeof(path), "/tmp/bf-bundle-kb.%d.db", (int)getpid());
	unlink(path);
	bf_diag_clear(&d);
	T_EQ_INT(store_open(path, &s, &d), 0);
	if (s == NULL)
		return;
	memset(&m, 0, sizeof(m));
	m.name = "h1";
	m.host = "127.0.0.1";
	m.port = 2222;
	m.user = "bench";
	m.klass = "lab";
	T_EQ_INT(store_machine_add(s, &m, NULL), 0);
	memset(&rn, 0, sizeof(rn));
	rn.label = "kernel=tiny";
	rn.axes_json = "{\"kernel\":\"tiny\"}";
	rn.values_json = "{}";
	rn.kernel = "tiny";
	rn.iterations = 1;
	rn.timeout_s = 600;
	T_EQ_INT(store_job_create(s, "demo", "t", "{\"job\":{\"recipe\":\"demo\","
	    "\"machines\":{\"class\":\"lab\"},\"kernels\":{\"tiny\":{\"git\":\"/srv/linux\","
	    "\"commit\":\"v6.1\",\"config\":\"tinyconfig\"},\"other\":{\"git\":\"/srv/linux\","
	    "\"commit\":\"v6.2\",\"config\":\"tinyconfig\"}},\"matrix\":{\"kernel\":[\"tiny\"]}},"
	    "\"recipe\":{\"name\":\"demo\",\"command\":[\"true\"]}}", "lab", NULL, &rn, 1,
	    &job), 0);
	/* the build, done */
	T_EQ_INT(store_kbuild_take(s, KB_KEY, "{}", "h1", 60, &take), 0);
	T_EQ_INT(store_kartifact_add(s, KB_IMG, "image", 100), 0);
	T_EQ_INT(store_kartifact_add(s, KB_CFG, "config", 10), 0);
	memset(&o, 0, sizeof(o));
	o.release = KB_REL;
	o.image_sha256 = KB_IMG;
	o.config_sha256 = KB_CFG;
	T_EQ_INT(store_kbuild_finish(s, KB_KEY, &o), 0);
	/* the run booted it */
	T_EQ_INT(store_run_claim(s, "h1", "lab", 60, &c), 0);
	if (c == NULL)
		goto out;
	T_EQ_INT(store_run_set_info(s, c->run_id, "h1", KB_REL, "boot-a"), 0);
	smp.metric = "faults";
	smp.value = 1;
	smp.unit = "count";
	T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 0, &smp, 1), 0);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);

	T_EQ_INT(bundle_export(s, job, &b, &d), 0);
	if (b == NULL) {
		fprintf(stderr, "export: %s\n", d.msg);
		goto out;
	}
	T_EQ_INT(json_array_size(json_object_get(b, "kernel_builds")), 1);
	e = json_array_get(json_object_get(b, "kernel_builds"), 0);
	T_EQ_STR(json_string_value(json_object_get(e, "name")), "tiny");
	T_EQ_STR(json_string_value(json_object_get(e, "release")), KB_REL);
	T_EQ_STR(json_string_value(json_object_get(e, "key")), KB_KEY);
	T_EQ_STR(json_string_value(json_object_get(e, "image_sha256")), KB_IMG);
	T_EQ_STR(json_string_value(json_object_get(e, "config_sha256")), KB_CFG);
	T_CHECK(json_is_null(json_object_get(e, "modules_sha256")));
	T_EQ_INT(bundle_check(b, &d), 0);
	/* as a peer receives it: through its text */
	x = reparse(b);
	bf_diag_clear(&d);
	T_EQ_INT(bundle_check(x, &d), 0);
	if (d.msg[0])
		fprintf(stderr, "reparsed: %s: %s\n", d.field, d.msg);
	json_decref(x);

	/* a rerun that booted the same build, and one against another key */
	T_EQ_INT(api_view_job_runs_get(s, job, 0, &runs), 0);
	T_EQ_INT(bundle_kernels_compare(s, b, json_object_get(runs, "runs"), &cmp), 0);
	T_EQ_INT(json_array_size(cmp), 1);
	e = json_array_get(cmp, 0);
	T_EQ_STR(json_string_value(json_object_get(json_object_get(e, "here"), "key")), KB_KEY);
	T_CHECK(json_is_true(json_object_get(e, "same_build")));
	T_CHECK(json_is_true(json_object_get(e, "same_config")));
	json_decref(cmp);
	cmp = NULL;
	x = reparse(b);
	json_object_set_new(json_array_get(json_object_get(x, "kernel_builds"), 0), "key",
	    json_string(KB_IMG));
	T_EQ_INT(bundle_kernels_compare(s, x, json_object_get(runs, "runs"), &cmp), 0);
	e = json_array_get(cmp, 0);
	T_CHECK(json_is_false(json_object_get(e, "same_build")));
	T_CHECK(json_is_true(json_object_get(e, "same_config")));
	json_decref(cmp);
	cmp = NULL;
	json_decref(x);

	/* forged entries, the outer hash fixed each time */
	forged_kb(b, "name", "other-lab", "kernel_builds[0].name");
	forged_kb(b, "image_sha256", "../../etc/passwd", "kernel_builds[0].image_sha256");
	forged_kb(b, "release", "6.1; rm -rf /", "kernel_builds[0].release");
	forged_kb(b, "url", "http://elsewhere/", NULL);
out:
	store_claim_free(c);
	json_decref(b);
	json_decref(runs);
	json_decref(cmp);
	store_close(s);
	unlink(path);
}

int
main(void)
{
	snprintf(keydir, sizeof(keydir), "/tmp/bf-labkey-XXXXXX");
	if (mkdtemp(keydir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_export_and_tamper();
	test_kernel_builds();
	test_verdicts();
	test_fp_compare();
	test_labkey_file();
	test_sign_verify();
	{
		static const char *const names[] = { "lab.key", "link.key", "junk.key",
		    "sign.key", "other.key" };
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			unlink(keypath(names[i]));
		rmdir(keydir);
	}
	return t_done();
}
