/*
 * coord_test_store.c: the store against a real SQLite file in a temporary
 * directory, or, with BF_TEST_PG_URL set (tests/lib/with-pg), against a
 * real PostgreSQL with one database per store: machines, jobs, the claim,
 * samples, logs, ends of runs, cancel, recovery, leases of two coordinators
 * on one store, the JSON shapes the API serves, and many threads claiming
 * at once. Opening and migrating: coord_test_store_schema.c.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "caps.h"
#include "db.h"
#include "plan.h"
#include "store.h"
#include "store_fixture.h"
#include "t.h"

static void
check_keys(const json_t *o, const char *const *keys, const char *what)
{
	size_t i;

	T_CHECK(json_is_object(o));
	for (i = 0; keys[i] != NULL; i++)
		if (json_object_get(o, keys[i]) == NULL) {
			fprintf(stderr, "%s: no key \"%s\"\n", what, keys[i]);
			T_CHECK(json_object_get(o, keys[i]) != NULL);
		}
}

static void
test_machines(void)
{
	static const char *const keys[] = { "name", "host", "port", "user", "class", "state",
	    "hostname", "kernel", "arch", "last_error", "created_at", "last_seen", NULL };
	struct store_machine m, *mp = NULL, *ms = NULL;
	struct store *s;
	struct bf_diag d;
	json_t *j;
	size_t n = 0;
	char buf[64];

	if ((s = open_fresh("machines.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "zeta", "demo"), 0);
	T_EQ_INT(add_machine(s, "alpha", "zen4-2s"), 0);
	memset(&m, 0, sizeof(m));
	m.name = "zeta";
	m.host = "10.0.0.9";
	m.port = 22;
	m.klass = "demo";
	bf_diag_clear(&d);
	T_EQ_INT(store_machine_add(s, &m, &d), BF_ERR_EXISTS);
	T_CONTAINS(d.msg, "zeta");

	/* Hostile or incomplete input. */
	m.name = "new";
	m.port = 0;
	T_EQ_INT(store_machine_add(s, &m, &d), BF_ERR_RANGE);
	T_CONTAINS(d.msg, "port");
	m.port = 22;
	m.klass = NULL;
	T_EQ_INT(store_machine_add(s, &m, &d), BF_ERR_INVALID);
	T_CONTAINS(d.msg, "class");
	m.klass = "demo";
	m.name = "bad\xff";
	T_EQ_INT(store_machine_add(s, &m, &d), BF_ERR_INVALID);
	m.name = "";
	T_EQ_INT(store_machine_add(s, &m, &d), BF_ERR_INVALID);
	m.name = "new";
	m.state = "exploded";
	T_EQ_INT(store_machine_add(s, &m, &d), BF_ERR_INVALID);

	T_EQ_INT(store_machine_get(s, "zeta", &mp), 0);
	if (mp != NULL) {
		T_EQ_STR(mp->name, "zeta");
		T_EQ_STR(mp->host, "127.0.0.1");
		T_EQ_INT(mp->port, 2222);
		T_EQ_STR(mp->user, "bench");
		T_EQ_STR(mp->key_path, "/etc/benchfleet/id_ed25519");
		T_EQ_STR(mp->klass, "demo");
		T_EQ_STR(mp->state, "idle");
		T_CHECK(mp->hostname == NULL);
		T_CHECK(mp->created_at > 1700000000);
		T_EQ_INT(mp->last_seen, 0);
		j = api_view_machine(mp);
		check_keys(j, keys, "machine");
		T_CHECK(json_object_get(j, "key_path") == NULL);
		T_CHECK(json_is_null(json_object_get(j, "last_seen")));
		T_CHECK(json_is_null(json_object_get(j, "hostname")));
		T_EQ_STR(json_string_value(json_object_get(j, "class")), "demo");
		json_decref(j);
	}
	store_machine_free(mp);
	store_machine_free(NULL);
	mp = NULL;
	T_EQ_INT(store_machine_get(s, "nope", &mp), BF_ERR_NOTFOUND);
	T_CHECK(mp == NULL);
	T_CHECK(api_view_machine(NULL) == NULL);

	T_EQ_INT(store_machine_list(s, &ms, &n), 0);
	T_EQ_INT(n, 2);
	if (n == 2) {
		T_EQ_STR(ms[0].name, "alpha");
		T_EQ_STR(ms[1].name, "zeta");
		T_EQ_STR(ms[0].klass, "zen4-2s");
	}
	store_machines_free(ms, n);
	store_machines_free(NULL, 0);

	/* Update: NULL keeps, "" clears, bad bytes are cleaned, touch sets last_seen. */
	T_EQ_INT(store_machine_update(s, "zeta", "offline", "host\xff-1", "6.10.0", "x86_64",
	    "connection refused", 1), 0);
	T_EQ_INT(store_machine_get(s, "zeta", &mp), 0);
	if (mp != NULL) {
		T_EQ_STR(mp->state, "offline");
		T_EQ_STR(mp->hostname, "host\xef\xbf\xbd-1");
		T_EQ_STR(mp->kernel, "6.10.0");
		T_EQ_STR(mp->last_error, "connection refused");
		T_CHECK(mp->last_seen > 1700000000);
	}
	store_machine_free(mp);
	mp = NULL;
	T_EQ_INT(store_machine_update(s, "zeta", "idle", NULL, NULL, NULL, "", 0), 0);
	T_EQ_INT(store_machine_get(s, "zeta", &mp), 0);
	if (mp != NULL) {
		T_EQ_STR(mp->state, "idle");
		T_EQ_STR(mp->kernel, "6.10.0");
		T_CHECK(mp->last_error == NULL);
	}
	store_machine_free(mp);
	mp = NULL;
	T_EQ_INT(store_machine_update(s, "nope", "idle", NULL, NULL, NULL, NULL, 0),
	    BF_ERR_NOTFOUND);
	T_EQ_INT(store_machine_update(s, "zeta", "bogus", NULL, NULL, NULL, NULL, 0),
	    BF_ERR_INVALID);

	/* Delete: refused while a run holds the machine. */
	T_CHECK(add_job(s, "demo", NULL, 1, 1) > 0);
	{
		struct store_claim *c = NULL;

		T_EQ_INT(store_run_claim(s, "zeta", "demo", 60, &c), 0);
		T_CHECK(c != NULL);
		T_EQ_STR(machine_state(s, "zeta", buf, sizeof(buf)), "running");
		T_EQ_INT(store_machine_delete(s, "zeta"), BF_ERR_STATE);
		if (c != NULL)
			T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
		store_claim_free(c);
	}
	T_EQ_STR(machine_state(s, "zeta", buf, sizeof(buf)), "idle");
	T_EQ_INT(store_machine_delete(s, "zeta"), 0);
	T_EQ_INT(store_machine_delete(s, "zeta"), BF_ERR_NOTFOUND);
	T_EQ_INT(store_machine_get(s, "zeta", &mp), BF_ERR_NOTFOUND);
	store_close(s);
}

static void
test_jobs(void)
{
	static const char *const keys[] = { "id", "recipe", "name", "state", "created_at",
	    "finished_at", "runs_total", "runs_done", "runs_failed", "runs_running",
	    "runs_queued", "spec", NULL };
	struct store_run_new rn = { .label = "x=1", .axes_json = "{\"x\": 1}",
	    .values_json = "{\"x\": 1}", .iterations = 5, .timeout_s = 600 };
	struct store *s;
	json_t *j = NULL;
	int64_t id1, id2, id;

	if ((s = open_fresh("jobs.db")) == NULL)
		return;
	id1 = add_job(s, "demo", NULL, 3, 2);
	id2 = add_job(s, NULL, "[\"m1\", \"m2\"]", 1, 1);
	T_CHECK(id1 > 0 && id2 > id1);

	T_EQ_INT(api_view_job_get(s, id1, &j), 0);
	check_keys(j, keys, "job");
	T_EQ_INT(json_integer_value(json_object_get(j, "id")), id1);
	T_EQ_INT(json_integer_value(json_object_get(j, "runs_total")), 6);
	T_EQ_INT(json_integer_value(json_object_get(j, "runs_queued")), 6);
	T_EQ_INT(json_integer_value(json_object_get(j, "runs_done")), 0);
	T_EQ_STR(json_string_value(json_object_get(j, "state")), "queued");
	T_EQ_STR(json_string_value(json_object_get(j, "recipe")), "demo");
	T_EQ_STR(json_string_value(json_object_get(j, "name")), "a test job");
	T_CHECK(json_is_null(json_object_get(j, "finished_at")));
	T_EQ_STR(json_string_value(json_object_get(json_object_get(j, "spec"), "recipe")), "demo");
	json_decref(j);
	j = NULL;
	T_EQ_INT(api_view_job_get(s, 9999, &j), BF_ERR_NOTFOUND);
	T_CHECK(j == NULL);

	/* The list: typed rows, newest first (filters: coord_test_store_jobs.c). */
	{
		struct store_job_filter f = { .limit = 10 };
		struct store_job *js = NULL;
		size_t n = 0;
		int64_t next = -1;

		T_EQ_INT(store_jobs_list(s, &f, &js, &n, &next), 0);
		T_EQ_INT(n, 2);
		T_EQ_INT(next, 0);
		if (n == 2) {
			T_EQ_INT(js[0].id, id2);
			T_CHECK(js[0].spec == NULL);
			T_EQ_INT(js[0].runs[STORE_RUN_QUEUED], 1);
			T_EQ_STR(js[0].machine_names, "[\"m1\", \"m2\"]");
			T_EQ_INT(js[1].runs[STORE_RUN_QUEUED], 6);
		}
		store_jobs_free(js, n);
		f.limit = 1;
		T_EQ_INT(store_jobs_list(s, &f, &js, &n, &next), 0);
		T_EQ_INT(n, 1);
		T_EQ_INT(next, id2);
		store_jobs_free(js, n);
	}

	/* Bad jobs are refused whole: nothing half-inserted. */
	T_EQ_INT(store_job_create(s, "demo", NULL, "{not json", "demo", NULL, &rn, 1, &id),
	    BF_ERR_INVALID);
	T_EQ_INT(store_job_create(s, "demo", NULL, "[1]", "demo", NULL, &rn, 1, &id),
	    BF_ERR_INVALID);
	T_EQ_INT(store_job_create(s, "demo", NULL, "{}", NULL, NULL, &rn, 1, &id),
	    BF_ERR_INVALID);
	T_EQ_INT(store_job_create(s, "demo", NULL, "{}", NULL, "{\"a\":1}", &rn, 1, &id),
	    BF_ERR_INVALID);
	T_EQ_INT(store_job_create(s, "demo", NULL, "{}", NULL, "[1, 2]", &rn, 1, &id),
	    BF_ERR_INVALID);
	T_EQ_INT(store_job_create(s, "demo", NULL, "{}", NULL, "[]", &rn, 1, &id),
	    BF_ERR_INVALID);
	T_EQ_INT(store_job_create(s, "demo", NULL, "{}", "demo", NULL, &rn, 0, &id),
	    BF_ERR_INVALID);
	T_EQ_INT(store_job_create(s, NULL, NULL, "{}", "demo", NULL, &rn, 1, &id),
	    BF_ERR_INVALID);
	rn.axes_json = "{\"x\": ";
	T_EQ_INT(store_job_create(s, "demo", NULL, "{}", "demo", NULL, &rn, 1, &id),
	    BF_ERR_INVALID);
	rn.axes_json = "{}";
	rn.boot = -1;
	T_EQ_INT(store_job_create(s, "demo", NULL, "{}", "demo", NULL, &rn, 1, &id),
	    BF_ERR_INVALID);
	rn.boot = 0;
	/* a run without a plan, or with numbers no plan makes */
	{
		static const struct {
			int64_t order;
			int iterations, warmup, timeout_s;
		} bad[] = {
			{ .order = -1, .iterations = 5, .warmup = 0, .timeout_s = 600 },
			{ .order = 0, .iterations = 0, .warmup = 0, .timeout_s = 600 },
			{ .order = 0, .iterations = BF_MAX_ITERATIONS + 1, .warmup = 0,
			    .timeout_s = 600 },
			{ .order = 0, .iterations = 5, .warmup = -1, .timeout_s = 600 },
			{ .order = 0, .iterations = 5, .warmup = BF_MAX_WARMUP + 1,
			    .timeout_s = 600 },
			{ .order = 0, .iterations = 5, .warmup = 0, .timeout_s = 0 },
			{ .order = 0, .iterations = 5, .warmup = 0,
			    .timeout_s = BF_MAX_TIMEOUT_S + 1 },
		};
		size_t k;

		for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			rn.run_order = bad[k].order;
			rn.iterations = bad[k].iterations;
			rn.warmup = bad[k].warmup;
			rn.timeout_s = bad[k].timeout_s;
			T_EQ_INT(store_job_create(s, "demo", NULL, "{}", "demo", NULL, &rn, 1, &id),
			    BF_ERR_INVALID);
		}
		rn.run_order = 0;
		rn.iterations = 5;
		rn.warmup = 0;
		rn.timeout_s = 600;
	}
	rn.label = "bad\x01label";
	T_EQ_INT(store_job_create(s, "demo", NULL, "{}", "demo", NULL, &rn, 1, &id),
	    BF_ERR_INVALID);
	rn.label = "";		/* a matrix without axes has one unlabelled cell */
	T_EQ_INT(store_job_create(s, "demo", "", "{}", "demo", NULL, &rn, 1, &id), 0);
	T_EQ_INT(id, id2 + 1);
	{
		struct store_job_filter f = { .limit = 0 };
		struct store_job *js = NULL;
		size_t n = 0;
		int64_t next = -1;

		T_EQ_INT(store_jobs_list(s, &f, &js, &n, &next), 0);
		T_EQ_INT(n, 3);
		store_jobs_free(js, n);
	}
	store_close(s);
}

static void
test_claim(void)
{
	struct store_claim *c = NULL, *c2 = NULL;
	struct store *s;
	int64_t j1, j2, j3;
	char buf[64];
	int i;

	if ((s = open_fresh("claim.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	T_EQ_INT(add_machine(s, "d2", "demo"), 0);
	T_EQ_INT(add_machine(s, "z1", "zen4"), 0);
	T_EQ_INT(add_machine(s, "z2", "zen4"), 0);

	/* Nothing queued yet. */
	T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c), 0);
	T_CHECK(c == NULL);
	T_EQ_INT(store_run_claim(s, "ghost", "demo", 60, &c), BF_ERR_NOTFOUND);
	T_EQ_INT(store_run_claim(s, "d1", "demo", 0, &c), BF_ERR_INVALID);

	j1 = add_job(s, "demo", NULL, 2, 2);			/* 4 runs, class demo */
	j2 = add_job(s, NULL, "[\"z2\", \"d2\"]", 1, 1);	/* by name */
	j3 = add_job(s, "demo", NULL, 1, 1);

	/* A machine of another class, not named, gets nothing. */
	T_EQ_INT(store_run_claim(s, "z1", "zen4", 60, &c), 0);
	T_CHECK(c == NULL);

	/* By name. */
	T_EQ_INT(store_run_claim(s, "z2", "zen4", 60, &c), 0);
	T_CHECK(c != NULL);
	if (c != NULL) {
		T_EQ_INT(c->job_id, j2);
		T_EQ_STR(c->recipe, "demo");
		T_CONTAINS(c->spec_json, "recipe");
		T_CONTAINS(c->values_json, "loops");
		T_EQ_STR(c->label, "loops=0");
		T_EQ_INT(c->attempt, 1);
		T_EQ_STR(run_str(s, c->run_id, "state", buf, sizeof(buf)), "running");
		T_EQ_STR(run_str(s, c->run_id, "machine", buf, sizeof(buf)), "z2");
	}
	T_EQ_STR(job_state(s, j2, buf, sizeof(buf)), "running");
	T_EQ_STR(machine_state(s, "z2", buf, sizeof(buf)), "running");
	/* Exclusive: a machine with a running run gets nothing more. */
	T_EQ_INT(store_run_claim(s, "z2", "zen4", 60, &c2), 0);
	T_CHECK(c2 == NULL);
	store_claim_free(c);
	c = NULL;

	/* Order: oldest job first, then boot, then cell_index (runs were
	 * inserted boot-major, the other way round), but a boot another
	 * machine has started goes last: d2 takes boot 1 while d1 holds boot
	 * 0, so each boot runs whole on one machine. Each claims again once its
	 * run ended. */
	{
		static const struct { const char *mach; int boot; int cell; } want[] = {
			{ "d1", 0, 0 }, { "d2", 1, 0 }, { "d1", 0, 1 }, { "d2", 1, 1 } };
		struct store_claim *got[4] = { NULL, NULL, NULL, NULL };
		json_t *o = NULL;

		for (i = 0; i < 4; i++) {
			if (i >= 2 && got[i - 2] != NULL) {
				T_EQ_INT(store_run_finish(s, got[i - 2]->run_id, "done", 0, NULL), 0);
			}
			T_EQ_INT(store_run_claim(s, want[i].mach, "demo", 60, &got[i]), 0);
			T_CHECK(got[i] != NULL);
			if (got[i] == NULL)
				continue;
			T_EQ_INT(got[i]->job_id, j1);
			T_EQ_INT(got[i]->boot, want[i].boot);
			T_EQ_INT(api_view_run_get(s, got[i]->run_id, &o), 0);
			T_EQ_INT(json_integer_value(json_object_get(o, "cell_index")), want[i].cell);
			json_decref(o);
			o = NULL;
		}
		if (got[0] != NULL && got[1] != NULL)
			T_CHECK(got[0]->run_id != got[1]->run_id);
		if (got[2] != NULL)
			T_EQ_INT(store_run_finish(s, got[2]->run_id, "done", 0, NULL), 0);
		for (i = 0; i < 4; i++)
			store_claim_free(got[i]);
	}
	/* d2 still runs the last run of j1; d1 is free and gets j3's run. */
	T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c), 0);
	T_CHECK(c != NULL);
	if (c != NULL)
		T_EQ_INT(c->job_id, j3);
	store_claim_free(c);
	c = NULL;

	/* Renew. */
	T_EQ_INT(store_run_renew(s, 99999, 60), BF_ERR_NOTFOUND);
	store_close(s);
}

static void
test_samples_finish(void)
{
	static const char *const rkeys[] = { "id", "job_id", "cell_index", "label", "axes",
	    "values", "boot", "attempt", "state", "machine", "hostname", "kernel", "boot_id",
	    "started_at", "finished_at", "exit_status", "error", "samples", NULL };
	static const char *const skeys[] = { "boot", "iteration", "metric", "value", "unit",
	    NULL };
	struct store_sample sm[2] = { { "ops", 1234.5, "ops/s" }, { "wall", 2.0, "s" } };
	struct store_sample bad = { "ops", 0.0, NULL };
	struct store_claim *c = NULL, *c2 = NULL;
	struct store *s;
	json_t *o = NULL, *a, *cell;
	int64_t j1;
	char buf[64];

	if ((s = open_fresh("samples.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	j1 = add_job(s, "demo", NULL, 2, 1);
	T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c), 0);
	if (c == NULL) {
		T_CHECK(c != NULL);
		store_close(s);
		return;
	}
	T_EQ_INT(store_run_renew(s, c->run_id, 120), 0);
	T_EQ_INT(store_run_set_info(s, c->run_id, "host-1", "6.10.0", "abcd-ef"), 0);
	T_EQ_INT(store_run_set_info(s, 99999, "h", NULL, NULL), BF_ERR_NOTFOUND);
	/* the hello in one transaction: the run's facts, cmdline, the machine */
	{
		struct store_machine *mp = NULL;

		T_EQ_INT(store_run_hello(s, c->run_id, "d1", "host-h", "6.11.0", "x86_64", "b-2",
		    "ro quiet"), 0);
		T_EQ_INT(store_machine_get(s, "d1", &mp), 0);
		if (mp != NULL) {
			T_EQ_STR(mp->hostname, "host-h");
			T_EQ_STR(mp->kernel, "6.11.0");
			T_EQ_STR(mp->arch, "x86_64");
			T_CHECK(mp->last_seen > 0);
		}
		store_machine_free(mp);
		mp = NULL;
		/* an unknown run writes nothing, not even to the machine */
		T_EQ_INT(store_run_hello(s, 99999, "d1", "host-x", "9.9", "arm64", NULL, NULL),
		    BF_ERR_NOTFOUND);
		T_EQ_INT(store_machine_get(s, "d1", &mp), 0);
		if (mp != NULL)
			T_EQ_STR(mp->hostname, "host-h");
		store_machine_free(mp);
		/* an unknown machine: said, and the run's part kept */
		T_EQ_INT(store_run_hello(s, c->run_id, "gone", "host-1", "6.10.0", NULL,
		    "abcd-ef", NULL), BF_ERR_NOTFOUND);
		T_EQ_INT(store_run_hello(s, c->run_id, NULL, "h", NULL, NULL, NULL, NULL),
		    BF_ERR_INVALID);
		T_EQ_INT(store_run_hello(NULL, c->run_id, "d1", "h", NULL, NULL, NULL, NULL),
		    BF_ERR_INVALID);
	}
	T_EQ_INT(store_samples_add(s, c->run_id, 0, 0, sm, 2), 0);
	T_EQ_INT(store_samples_add(s, c->run_id, 0, 0, sm, 2), 0);	/* again: ignored */
	sm[0].value = 1.0;
	T_EQ_INT(store_samples_add(s, c->run_id, 0, 0, sm, 1), 0);	/* first value stays */
	T_EQ_INT(store_samples_add(s, c->run_id, 0, 1, sm, 2), 0);
	T_EQ_INT(store_samples_add(s, c->run_id, 0, 1, sm, 0), 0);
	T_EQ_INT(store_samples_add(s, 99999, 0, 0, sm, 1), BF_ERR_NOTFOUND);
	T_EQ_INT(store_samples_add(s, c->run_id, -1, 0, sm, 1), BF_ERR_RANGE);
	T_EQ_INT(store_samples_add(s, c->run_id, 0, -1, sm, 1), BF_ERR_RANGE);
	bad.value = NAN;
	T_EQ_INT(store_samples_add(s, c->run_id, 0, 2, &bad, 1), BF_ERR_RANGE);
	bad.value = 1;
	bad.metric = NULL;
	T_EQ_INT(store_samples_add(s, c->run_id, 0, 2, &bad, 1), BF_ERR_INVALID);

	T_EQ_INT(api_view_run_get(s, c->run_id, &o), 0);
	check_keys(o, rkeys, "run");
	a = json_object_get(o, "samples");
	T_EQ_INT(json_array_size(a), 4);
	check_keys(json_array_get(a, 0), skeys, "sample");
	/* Ordered by boot, iteration, metric: ops first, its first value kept. */
	T_EQ_STR(json_string_value(json_object_get(json_array_get(a, 0), "metric")), "ops");
	T_NEAR(json_real_value(json_object_get(json_array_get(a, 0), "value")), 1234.5, 0);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(a, 0), "unit")), "ops/s");
	T_CHECK(json_is_object(json_object_get(o, "axes")));
	T_CHECK(json_is_object(json_object_get(o, "values")));
	T_EQ_INT(json_integer_value(json_object_get(json_object_get(o, "axes"), "loops")), 0);
	T_EQ_STR(json_string_value(json_object_get(o, "hostname")), "host-1");
	T_EQ_STR(json_string_value(json_object_get(o, "boot_id")), "abcd-ef");
	T_CHECK(json_is_real(json_object_get(o, "started_at")));
	T_CHECK(json_is_null(json_object_get(o, "finished_at")));
	T_CHECK(json_is_null(json_object_get(o, "exit_status")));
	json_decref(o);
	o = NULL;
	T_EQ_INT(api_view_run_get(s, 99999, &o), BF_ERR_NOTFOUND);

	T_EQ_INT(store_run_finish(s, c->run_id, "bogus", 0, NULL), BF_ERR_INVALID);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), BF_ERR_STATE);
	T_EQ_INT(store_run_finish(s, 99999, "done", 0, NULL), BF_ERR_NOTFOUND);
	T_EQ_INT(store_run_renew(s, c->run_id, 60), BF_ERR_STATE);
	T_EQ_STR(machine_state(s, "d1", buf, sizeof(buf)), "idle");
	T_EQ_STR(job_state(s, j1, buf, sizeof(buf)), "running");

	T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c2), 0);
	T_CHECK(c2 != NULL);
	if (c2 != NULL) {
		T_EQ_INT(store_samples_add(s, c2->run_id, 0, 0, sm, 1), 0);
		T_EQ_INT(store_run_finish(s, c2->run_id, "failed", 3, "exit \xff status 3"), 0);
		T_EQ_STR(run_str(s, c2->run_id, "error", buf, sizeof(buf)),
		    "exit \xef\xbf\xbd status 3");
		T_EQ_INT(api_view_run_get(s, c2->run_id, &o), 0);
		T_EQ_INT(json_integer_value(json_object_get(o, "exit_status")), 3);
		T_CHECK(json_is_real(json_object_get(o, "finished_at")));
		json_decref(o);
		o = NULL;
	}
	/* Every run ended, one not done: failed. */
	T_EQ_STR(job_state(s, j1, buf, sizeof(buf)), "failed");
	T_EQ_INT(api_view_job_get(s, j1, &o), 0);
	T_EQ_INT(json_integer_value(json_object_get(o, "runs_done")), 1);
	T_EQ_INT(json_integer_value(json_object_get(o, "runs_failed")), 1);
	T_CHECK(json_is_real(json_object_get(o, "finished_at")));
	json_decref(o);
	o = NULL;
	T_EQ_INT(store_job_cancel(s, j1), BF_ERR_STATE);

	/* The report view: cells by index, only done runs' samples. */
	T_EQ_INT(api_view_job_cells_get(s, j1, &o), 0);
	T_EQ_INT(json_integer_value(json_object_get(o, "job")), j1);
	T_EQ_STR(json_string_value(json_object_get(o, "recipe")), "demo");
	a = json_object_get(o, "cells");
	T_EQ_INT(json_array_size(a), 2);
	cell = json_array_get(a, 0);
	{
		static const char *const ckeys[] = { "cell_index", "label", "axes", "samples",
		    NULL };
		static const char *const xkeys[] = { "metric", "unit", "boot", "iteration",
		    "value", "run", NULL };

		check_keys(cell, ckeys, "cell");
		T_EQ_INT(json_integer_value(json_object_get(cell, "cell_index")), 0);
		T_EQ_STR(json_string_value(json_object_get(cell, "label")), "loops=0");
		T_EQ_INT(json_array_size(json_object_get(cell, "samples")), 4);
		check_keys(json_array_get(json_object_get(cell, "samples"), 0), xkeys, "sample");
		T_EQ_INT(json_integer_value(json_object_get(json_array_get(
		    json_object_get(cell, "samples"), 0), "run")), c->run_id);
		cell = json_array_get(a, 1);
		T_EQ_INT(json_integer_value(json_object_get(cell, "cell_index")), 1);
		T_EQ_INT(json_array_size(json_object_get(cell, "samples")), 0);
	}
	json_decref(o);
	o = NULL;
	T_EQ_INT(api_view_job_cells_get(s, 99999, &o), BF_ERR_NOTFOUND);

	T_EQ_INT(api_view_job_runs_get(s, j1, 1, &o), 0);
	a = json_object_get(o, "runs");
	T_EQ_INT(json_array_size(a), 2);
	check_keys(json_array_get(a, 0), rkeys, "run in list");
	T_EQ_INT(json_array_size(json_object_get(json_array_get(a, 0), "samples")), 4);
	T_EQ_INT(json_array_size(json_object_get(json_array_get(a, 1), "samples")), 1);
	json_decref(o);
	o = NULL;
	T_EQ_INT(api_view_job_runs_get(s, 99999, 1, &o), BF_ERR_NOTFOUND);
	store_claim_free(c);
	store_claim_free(c2);

	/* An all-done job is done. */
	{
		int64_t j2 = add_job(s, "demo", NULL, 1, 1);

		c = NULL;
		T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c), 0);
		if (c != NULL)
			T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
		store_claim_free(c);
		T_EQ_STR(job_state(s, j2, buf, sizeof(buf)), "done");
	}
	store_close(s);
}

static void
test_cancel(void)
{
	struct store_claim *c = NULL, *c2 = NULL;
	struct store *s;
	json_t *o = NULL;
	int64_t j1;
	char buf[64];

	if ((s = open_fresh("cancel.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	j1 = add_job(s, "demo", NULL, 3, 1);
	T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c), 0);
	T_CHECK(c != NULL);
	T_EQ_INT(store_job_cancel(s, j1), 0);
	T_EQ_INT(store_job_cancel(s, j1), BF_ERR_STATE);
	T_EQ_INT(store_job_cancel(s, 99999), BF_ERR_NOTFOUND);
	T_EQ_STR(job_state(s, j1, buf, sizeof(buf)), "cancelled");
	T_EQ_INT(api_view_job_get(s, j1, &o), 0);
	T_EQ_INT(json_integer_value(json_object_get(o, "runs_running")), 1);
	T_EQ_INT(json_integer_value(json_object_get(o, "runs_queued")), 0);
	T_CHECK(json_is_null(json_object_get(o, "finished_at")));	/* one still runs */
	json_decref(o);
	o = NULL;
	if (c != NULL) {
		/* The running run finishes and keeps its result. */
		T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
		T_EQ_STR(run_str(s, c->run_id, "state", buf, sizeof(buf)), "done");
	}
	T_EQ_STR(job_state(s, j1, buf, sizeof(buf)), "cancelled");
	T_EQ_INT(api_view_job_get(s, j1, &o), 0);
	T_CHECK(json_is_real(json_object_get(o, "finished_at")));
	json_decref(o);
	/* Nothing of a cancelled job is claimed. */
	T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c2), 0);
	T_CHECK(c2 == NULL);
	store_claim_free(c);
	store_close(s);
}

static void
test_recover(void)
{
	struct store_sample sm = { "ops", 1.0, NULL };
	struct store_claim *c = NULL, *c2 = NULL, *c3 = NULL;
	struct store *s;
	json_t *o = NULL;
	int64_t j1, j2;
	size_t n = 99;
	char buf[64];

	if ((s = open_fresh("recover.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	T_EQ_INT(add_machine(s, "d2", "demo"), 0);
	T_EQ_INT(add_machine(s, "z1", "zen4"), 0);
	j1 = add_job(s, "demo", NULL, 2, 1);
	j2 = add_job(s, "zen4", NULL, 1, 1);
	T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c), 0);
	T_EQ_INT(store_run_claim(s, "d2", "demo", 60, &c2), 0);
	T_EQ_INT(store_run_claim(s, "z1", "zen4", 60, &c3), 0);
	T_CHECK(c != NULL && c2 != NULL && c3 != NULL);
	if (c == NULL || c2 == NULL || c3 == NULL)
		goto out;
	T_EQ_INT(store_samples_add(s, c->run_id, 0, 0, &sm, 1), 0);
	T_EQ_INT(store_run_finish(s, c2->run_id, "done", 0, NULL), 0);
	T_EQ_INT(store_samples_add(s, c3->run_id, 0, 0, &sm, 1), 0);
	T_EQ_INT(store_job_cancel(s, j2), 0);
	store_close(s);

	/* The coordinator "died" with c and c3 running. */
	s = NULL;
	T_EQ_INT(store_open(target("recover.db"), &s, NULL), 0);
	if (s == NULL)
		goto out;
	T_EQ_INT(store_recover(s, &n), 0);
	T_EQ_INT(n, 1);
	T_EQ_STR(run_str(s, c->run_id, "state", buf, sizeof(buf)), "queued");
	T_EQ_STR(run_str(s, c2->run_id, "state", buf, sizeof(buf)), "done");
	T_EQ_STR(run_str(s, c3->run_id, "state", buf, sizeof(buf)), "cancelled");
	T_EQ_STR(job_state(s, j2, buf, sizeof(buf)), "cancelled");
	T_EQ_STR(machine_state(s, "d1", buf, sizeof(buf)), "idle");
	T_EQ_STR(machine_state(s, "z1", buf, sizeof(buf)), "idle");
	T_EQ_INT(api_view_run_get(s, c->run_id, &o), 0);
	T_EQ_INT(json_array_size(json_object_get(o, "samples")), 0);
	T_EQ_INT(json_integer_value(json_object_get(o, "attempt")), 2);
	T_CHECK(json_is_null(json_object_get(o, "machine")));
	T_CHECK(json_is_null(json_object_get(o, "started_at")));
	json_decref(o);
	o = NULL;
	T_EQ_INT(api_view_run_log_get(s, c->run_id, 0, 0, &o), 0);
	T_EQ_INT(json_array_size(json_object_get(o, "lines")), 1);
	json_decref(o);
	o = NULL;
	/* Recovering again finds nothing. */
	T_EQ_INT(store_recover(s, &n), 0);
	T_EQ_INT(n, 0);
	store_claim_free(c);
	c = NULL;
	T_EQ_INT(store_run_claim(s, "d2", "demo", 60, &c), 0);
	T_CHECK(c != NULL);
	if (c != NULL) {
		T_EQ_INT(c->attempt, 2);
		T_EQ_INT(c->job_id, j1);
	}
out:
	store_claim_free(c);
	store_claim_free(c2);
	store_claim_free(c3);
	store_close(s);
}

static void
test_log(void)
{
	struct store_claim *c = NULL;
	struct store *s;
	json_t *o = NULL, *a;
	char *big;
	int i;

	if ((s = open_fresh("log.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "d1", "demo"), 0);
	add_job(s, "demo", NULL, 2, 1);
	T_EQ_INT(store_run_claim(s, "d1", "demo", 60, &c), 0);
	if (c == NULL) {
		T_CHECK(c != NULL);
		store_close(s);
		return;
	}
	T_EQ_INT(store_run_log_add(s, c->run_id, "stdout", "first"), 0);
	T_EQ_INT(store_run_log_add(s, c->run_id, "stderr", "second"), 0);
	T_EQ_INT(store_run_log_add(s, c->run_id, "coord", "bad \xc3\x28 utf8"), 0);
	T_EQ_INT(store_run_log_add(s, c->run_id + 1, "stdout", "other run"), 0);
	T_EQ_INT(store_run_log_add(s, c->run_id, "bogus", "x"), BF_ERR_INVALID);
	T_EQ_INT(store_run_log_add(s, c->run_id, "stdout", NULL), BF_ERR_INVALID);
	T_EQ_INT(store_run_log_add(s, 99999, "stdout", "x"), BF_ERR_NOTFOUND);
	/* Longer than the cap, ending in a multi-byte character across the cut. */
	if ((big = malloc(BF_MAX_LOG_LINE + 100)) != NULL) {
		memset(big, 'a', BF_MAX_LOG_LINE + 99);
		memcpy(big + BF_MAX_LOG_LINE - 1, "\xe2\x82\xac", 3);	/* euro sign */
		big[BF_MAX_LOG_LINE + 99] = '\0';
		T_EQ_INT(store_run_log_add(s, c->run_id, "stdout", big), 0);
		free(big);
	}

	T_EQ_INT(api_view_run_log_get(s, c->run_id, 0, 100, &o), 0);
	T_EQ_INT(json_integer_value(json_object_get(o, "run")), c->run_id);
	a = json_object_get(o, "lines");
	T_EQ_INT(json_array_size(a), 4);
	for (i = 0; i < 4; i++) {
		static const char *const keys[] = { "seq", "stream", "line", "at", NULL };

		check_keys(json_array_get(a, (size_t)i), keys, "log line");
		T_EQ_INT(json_integer_value(json_object_get(json_array_get(a, (size_t)i), "seq")),
		    i + 1);
	}
	T_EQ_STR(json_string_value(json_object_get(json_array_get(a, 1), "stream")), "stderr");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(a, 2), "line")),
	    "bad \xef\xbf\xbd( utf8");
	T_EQ_INT(json_string_length(json_object_get(json_array_get(a, 3), "line")),
	    BF_MAX_LOG_LINE - 1);
	json_decref(o);
	o = NULL;

	T_EQ_INT(api_view_run_log_get(s, c->run_id, 2, 1, &o), 0);
	a = json_object_get(o, "lines");
	T_EQ_INT(json_array_size(a), 1);
	T_EQ_INT(json_integer_value(json_object_get(json_array_get(a, 0), "seq")), 3);
	json_decref(o);
	o = NULL;
	T_EQ_INT(api_view_run_log_get(s, c->run_id + 1, 0, 0, &o), 0);
	T_EQ_INT(json_integer_value(json_object_get(json_array_get(json_object_get(o, "lines"),
	    0), "seq")), 1);
	json_decref(o);
	o = NULL;
	T_EQ_INT(api_view_run_log_get(s, 99999, 0, 10, &o), BF_ERR_NOTFOUND);
	T_CHECK(o == NULL);
	store_claim_free(c);
	store_close(s);
}

/* --- many threads at once --- */

#define CONC_THREADS	4
#define CONC_RUNS	200

struct conc {
	struct store *s;
	char name[16];
	int64_t first_run;
	int *seen;		/* per run, how many times claimed */
	pthread_mutex_t *mu;
	int errors;
	int claimed;
};

static void *
conc_main(void *arg)
{
	struct conc *w = arg;
	struct store_sample sm = { "ops", 1.0, "ops/s" };
	struct store_claim *c;
	int64_t k;
	int r;

	for (;;) {
		c = NULL;
		if ((r = store_run_claim(w->s, w->name, "conc", 60, &c)) != 0) {
			w->errors++;
			break;
		}
		if (c == NULL)
			break;
		k = c->run_id - w->first_run;
		pthread_mutex_lock(w->mu);
		if (k >= 0 && k < CONC_RUNS)
			w->seen[k]++;
		else
			w->errors++;
		pthread_mutex_unlock(w->mu);
		w->claimed++;
		if (store_samples_add(w->s, c->run_id, c->boot, 0, &sm, 1) != 0 ||
		    store_run_log_add(w->s, c->run_id, "agent", "step done") != 0 ||
		    store_run_finish(w->s, c->run_id, "done", 0, NULL) != 0)
			w->errors++;
		store_claim_free(c);
	}
	return NULL;
}

static void
test_concurrency(void)
{
	struct conc w[CONC_THREADS];
	pthread_t th[CONC_THREADS];
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct store *s;
	json_t *o = NULL;
	int seen[CONC_RUNS], i, once = 0, total = 0;
	int64_t job;
	char buf[64];

	if ((s = open_fresh("conc.db")) == NULL)
		return;
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < CONC_THREADS; i++) {
		snprintf(buf, sizeof(buf), "c%d", i);
		T_EQ_INT(add_machine(s, buf, "conc"), 0);
	}
	job = add_job(s, "conc", NULL, CONC_RUNS / 2, 2);
	T_EQ_INT(api_view_job_runs_get(s, job, 1, &o), 0);
	/* Ids are consecutive from the smallest, which is not the first listed. */
	w[0].first_run = INT64_MAX;
	for (i = 0; i < (int)json_array_size(json_object_get(o, "runs")); i++) {
		json_int_t id = json_integer_value(json_object_get(json_array_get(
		    json_object_get(o, "runs"), (size_t)i), "id"));

		if (id < w[0].first_run)
			w[0].first_run = id;
	}
	json_decref(o);
	o = NULL;
	for (i = 0; i < CONC_THREADS; i++) {
		w[i].s = s;
		snprintf(w[i].name, sizeof(w[i].name), "c%d", i);
		w[i].first_run = w[0].first_run;
		w[i].seen = seen;
		w[i].mu = &mu;
		w[i].errors = 0;
		w[i].claimed = 0;
		T_EQ_INT(pthread_create(&th[i], NULL, conc_main, &w[i]), 0);
	}
	for (i = 0; i < CONC_THREADS; i++) {
		pthread_join(th[i], NULL);
		T_EQ_INT(w[i].errors, 0);
		total += w[i].claimed;
	}
	for (i = 0; i < CONC_RUNS; i++)
		once += seen[i] == 1;
	T_EQ_INT(once, CONC_RUNS);
	T_EQ_INT(total, CONC_RUNS);
	T_EQ_STR(job_state(s, job, buf, sizeof(buf)), "done");
	T_EQ_INT(api_view_job_get(s, job, &o), 0);
	T_EQ_INT(json_integer_value(json_object_get(o, "runs_done")), CONC_RUNS);
	json_decref(o);
	o = NULL;
	T_EQ_INT(api_view_job_cells_get(s, job, &o), 0);
	{
		json_t *cells = json_object_get(o, "cells");
		size_t n = 0, k;

		T_EQ_INT(json_array_size(cells), CONC_RUNS / 2);
		for (k = 0; k < json_array_size(cells); k++)
			n += json_array_size(json_object_get(json_array_get(cells, k), "samples"));
		T_EQ_INT(n, CONC_RUNS);
	}
	json_decref(o);
	for (i = 0; i < CONC_THREADS; i++)
		T_EQ_STR(machine_state(s, w[i].name, buf, sizeof(buf)), "idle");
	store_close(s);
}

/*
 * Two coordinators on one store (two connections, nodes a and b): a
 * machine's lease keeps b off a's machine; when a's leases lapse, b takes
 * the run over, and a can then neither renew, add samples nor finish it.
 */
static void
test_leases(void)
{
	struct store *a = NULL, *b = NULL;
	struct store_claim *c = NULL, *c2 = NULL;
	struct store_sample sm = { "wall_s", 1.0, "s" };
	struct store_run_new rn[1];
	int64_t job;
	size_t n = 0;
	int held = -1;
	char buf[64];

	a = open_fresh("lease.db");
	T_EQ_INT(store_open(target("lease.db"), &b, NULL), 0);
	if (a == NULL || b == NULL)
		goto out;
	T_EQ_INT(store_set_node(a, "a"), 0);
	T_EQ_INT(store_set_node(b, "b"), 0);
	T_EQ_STR(store_node(b), "b");
	T_EQ_INT(store_set_node(b, "bad\nname"), BF_ERR_INVALID);
	T_EQ_INT(add_machine(a, "d1", "demo"), 0);
	memset(rn, 0, sizeof(rn));
	rn[0].label = "x=1";
	rn[0].axes_json = "{}";
	rn[0].values_json = "{}";
	rn[0].iterations = 5;
	rn[0].timeout_s = 600;
	T_EQ_INT(store_job_create(a, "cpu-loop", "lease", "{}", "demo", NULL, rn, 1, &job), 0);

	T_EQ_INT(store_run_claim(a, "d1", "demo", 1, &c), 0);
	T_CHECK(c != NULL);
	if (c == NULL)
		goto out;
	/* b may not drive d1 while a's lease holds */
	T_EQ_INT(store_machine_lease(b, "d1", 30, &held), 0);
	T_EQ_INT(held, 0);
	T_EQ_INT(store_machine_lease(b, "ghost", 30, &held), BF_ERR_NOTFOUND);
	T_EQ_INT(store_reclaim(b, &n), 0);
	T_EQ_INT(n, 0);
	T_EQ_INT(store_run_renew(a, c->run_id, 1), 0);
	T_EQ_INT(store_run_renew(b, c->run_id, 30), BF_ERR_STATE);
	T_EQ_INT(store_samples_add(a, c->run_id, 0, 0, &sm, 1), 0);
	T_EQ_INT(store_samples_add(b, c->run_id, 0, 1, &sm, 1), BF_ERR_STATE);

	/* a goes silent: after its leases lapse b takes over */
	sleep(3);
	T_EQ_INT(store_reclaim(b, &n), 0);
	T_EQ_INT(n, 1);
	T_EQ_STR(run_str(b, c->run_id, "state", buf, sizeof(buf)), "queued");
	T_EQ_INT(store_run_renew(a, c->run_id, 30), BF_ERR_STATE);
	T_EQ_INT(store_samples_add(a, c->run_id, 0, 1, &sm, 1), BF_ERR_STATE);
	T_EQ_INT(store_run_finish(a, c->run_id, "done", 0, NULL), BF_ERR_STATE);
	T_EQ_INT(store_machine_lease(b, "d1", 30, &held), 0);
	T_EQ_INT(held, 1);
	T_EQ_INT(store_run_claim(a, "d1", "demo", 30, &c2), 0);
	T_CHECK(c2 == NULL);		/* d1 is b's now */
	store_claim_free(c2);
	c2 = NULL;
	T_EQ_INT(store_run_claim(b, "d1", "demo", 30, &c2), 0);
	T_CHECK(c2 != NULL);
	if (c2 == NULL)
		goto out;
	T_EQ_INT(c2->run_id, c->run_id);
	T_EQ_INT(c2->attempt, 2);
	/* a's stale attempt left no sample behind */
	T_EQ_INT(store_samples_add(b, c2->run_id, 0, 0, &sm, 1), 0);
	T_EQ_INT(store_run_finish(b, c2->run_id, "done", 0, NULL), 0);
	T_EQ_STR(job_state(a, job, buf, sizeof(buf)), "done");
	/* a coming back recovers nothing of b's */
	T_EQ_INT(store_recover(a, &n), 0);
	T_EQ_INT(n, 0);
	T_EQ_STR(run_str(a, c2->run_id, "state", buf, sizeof(buf)), "done");
	T_EQ_INT(store_release(b), 0);
	T_EQ_INT(store_machine_lease(a, "d1", 30, &held), 0);
	T_EQ_INT(held, 1);
out:
	store_claim_free(c);
	store_claim_free(c2);
	store_close(a);
	store_close(b);
}

/* The columns of every table, in order, as one string per table. */
int
main(void)
{
	static const char *const dbs[] = { "machines.db", "jobs.db", "claim.db", "samples.db",
	    "cancel.db", "recover.db", "log.db", "conc.db", "lease.db" };

	if (fix_where_init(&where, "store") != 0)
		return 1;
	test_machines();
	test_jobs();
	test_claim();
	test_samples_finish();
	test_cancel();
	test_recover();
	test_log();
	test_concurrency();
	test_leases();
	store_fixture_done(dbs, sizeof(dbs) / sizeof(dbs[0]));
	return t_done();
}
