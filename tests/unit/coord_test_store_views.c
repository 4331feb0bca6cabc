/*
 * coord_test_store_views.c: the runs, one run and a job's cell samples as
 * the API and bundles show them, on SQLite or (BF_TEST_PG_URL,
 * unit.coord_test_store_views@pg) PostgreSQL. The store returns typed rows
 * (store_job_runs, store_run_get, store_job_cells) and api-view.c writes
 * their JSON; these are the bytes the store's own JSON views wrote before
 * that move (captured from them, pinned here), so a field, a key order, a
 * null, a real written as an integer or a damaged stored value handled
 * differently fails the test. Rows are made through the store API, then
 * their times (and, on SQLite, bytes that are not UTF-8) set behind the
 * store's back so that the answer is fixed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api-view.h"
#include "db.h"
#include "store_fixture.h"

/* o as the API writes it (api.c: JSON_COMPACT), compared with want. */
static void
check_dump(const char *what, json_t *o, const char *want)
{
	char *got = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

	T_CHECK(got != NULL);
	if (got != NULL && strcmp(got, want) != 0) {
		fprintf(stderr, "%s:\n got: %s\nwant: %s\n", what, got, want);
		T_CHECK(0);
	}
	free(got);
}

/* 2 cells x 2 boots: run 1 done with samples and knobs, run 2 failed with
 * an error, runs 3 and 4 queued; fixed times; damaged stored values. */
static int64_t
make_job(struct store *s, const char *name)
{
	struct store_sample sm[3] = {
		{ "ops", 1.5, "op/s" }, { "lat.p99_us", 2, NULL }, { "zero", 0, "B" },
	};
	struct store_claim *c = NULL;
	char sha[65];
	int64_t job;

	T_EQ_INT(add_machine(s, "m1", "demo"), 0);
	job = add_job(s, "demo", NULL, 2, 2);
	T_CHECK(job > 0);
	T_EQ_INT(store_run_claim(s, "m1", "demo", 600, &c), 0);
	T_CHECK(c != NULL);
	if (c == NULL)
		return job;
	T_EQ_INT(store_run_set_info(s, c->run_id, "host-1", "6.12.0", "b00t-1d"), 0);
	T_EQ_INT(store_run_set_cmdline(s, c->run_id, "ro quiet thp=\"always\""), 0);
	T_EQ_INT(store_run_set_knobs(s, c->run_id, "{\"thp_enabled\":{\"before\":\"never\","
	    "\"requested\":\"always\",\"after\":\"always\"}}"), 0);
	T_EQ_INT(store_run_set_snapshot(s, c->run_id, "{\"kernel\":\"6.12.0\"}", sha), 0);
	T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 0, sm, 3), 0);
	sm[0].value = 1e300;
	sm[1].value = -0.25;
	T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 1, sm, 3), 0);
	T_EQ_INT(store_run_finish(s, c->run_id, "done", 0, NULL), 0);
	store_claim_free(c);
	c = NULL;
	T_EQ_INT(store_run_claim(s, "m1", "demo", 600, &c), 0);
	T_CHECK(c != NULL);
	if (c != NULL) {
		T_EQ_INT(store_samples_add(s, c->run_id, c->boot, 0, sm, 1), 0);
		T_EQ_INT(store_run_finish(s, c->run_id, "failed", 3, "exit 3: <b>boom</b>"), 0);
	}
	store_claim_free(c);
	exec_on(name, "UPDATE runs SET started_at = 1700000000.25 + id,"
	    " finished_at = 1700000100.5 + id WHERE started_at IS NOT NULL;"
	    "UPDATE runs SET knobs = '{\"thp_enabled\": \"always\"}' WHERE cell_index = 1;"
	    "UPDATE runs SET knob_state = '{\"damaged' WHERE state = 'failed';");
	if (where.pg_url == NULL)
		exec_on(name, "UPDATE runs SET error = CAST(X'6f6bff21' AS TEXT),"
		    " label = CAST(X'6c6f6f70733d3130c3' AS TEXT) WHERE state = 'failed'");
	return job;
}

/* Captured from store_job_runs_json, store_job_runs_bare_json,
 * store_run_get_json and store_job_samples_json before they moved
 * (_pg: PostgreSQL stores no bytes that are not UTF-8, so no U+FFFD). */
static const char want_runs[] =
	    "{\"runs\":[{\"id\":2,\"job_id\":1,\"cell_index\":0,\"label\":\"loops=0\",\"axes\":{\"loo"
	    "ps\":0},\"values\":{\"loops\":0},\"boot\":0,\"attempt\":1,\"state\":\"done\",\"machine\""
	    ":\"m1\",\"hostname\":\"host-1\",\"kernel\":\"6.12.0\",\"boot_id\":\"b00t-1d\",\"started_"
	    "at\":1700000002.25,\"finished_at\":1700000102.5,\"exit_status\":0,\"error\":null,\"knobs"
	    "_requested\":null,\"knobs\":{\"thp_enabled\":{\"before\":\"never\",\"requested\":\"alway"
	    "s\",\"after\":\"always\"}},\"req_kernel\":null,\"req_cmdline\":null,\"cmdline\":\"ro qui"
	    "et thp=\\\"always\\\"\",\"snapshot_sha256\":\"2e2d9fde8f64eb2339ff3cff70a48a05582c40575b"
	    "acb7cc34a1dc215db6cf2c\",\"fingerprint_doc_sha256\":null,\"req_machine\":null,\"samples\""
	    ":[{\"boot\":0,\"iteration\":0,\"metric\":\"lat.p99_us\",\"value\":2.0,\"unit\":null},{\""
	    "boot\":0,\"iteration\":0,\"metric\":\"ops\",\"value\":1.5,\"unit\":\"op/s\"},{\"boot\":0"
	    ",\"iteration\":0,\"metric\":\"zero\",\"value\":0.0,\"unit\":\"B\"},{\"boot\":0,\"iterati"
	    "on\":1,\"metric\":\"lat.p99_us\",\"value\":-0.25,\"unit\":null},{\"boot\":0,\"iteration\""
	    ":1,\"metric\":\"ops\",\"value\":1.0000000000000001e300,\"unit\":\"op/s\"},{\"boot\":0,\""
	    "iteration\":1,\"metric\":\"zero\",\"value\":0.0,\"unit\":\"B\"}]},{\"id\":1,\"job_id\":1"
	    ",\"cell_index\":0,\"label\":\"loops=0\",\"axes\":{\"loops\":0},\"values\":{\"loops\":0},"
	    "\"boot\":1,\"attempt\":1,\"state\":\"queued\",\"machine\":null,\"hostname\":null,\"kerne"
	    "l\":null,\"boot_id\":null,\"started_at\":null,\"finished_at\":null,\"exit_status\":null,"
	    "\"error\":null,\"knobs_requested\":null,\"knobs\":null,\"req_kernel\":null,\"req_cmdline"
	    "\":null,\"cmdline\":null,\"snapshot_sha256\":null,\"fingerprint_doc_sha256\":null,\"req_"
	    "machine\":null,\"samples\":[]},{\"id\":4,\"job_id\":1,\"cell_index\":1,\"label\":\"loops"
	    "=10\xef""\xbf""\xbd""\",\"axes\":{\"loops\":10},\"values\":{\"loops\":10},\"boot\":0,\"a"
	    "ttempt\":1,\"state\":\"failed\",\"machine\":\"m1\",\"hostname\":null,\"kernel\":null,\"b"
	    "oot_id\":null,\"started_at\":1700000004.25,\"finished_at\":1700000104.5,\"exit_status\":"
	    "3,\"error\":\"ok\xef""\xbf""\xbd""!\",\"knobs_requested\":{\"thp_enabled\":\"always\"},\""
	    "knobs\":null,\"req_kernel\":null,\"req_cmdline\":null,\"cmdline\":null,\"snapshot_sha256"
	    "\":null,\"fingerprint_doc_sha256\":null,\"req_machine\":null,\"samples\":[{\"boot\":0,\""
	    "iteration\":0,\"metric\":\"ops\",\"value\":1.0000000000000001e300,\"unit\":\"op/s\"}]},{"
	    "\"id\":3,\"job_id\":1,\"cell_index\":1,\"label\":\"loops=10\",\"axes\":{\"loops\":10},\""
	    "values\":{\"loops\":10},\"boot\":1,\"attempt\":1,\"state\":\"queued\",\"machine\":null,\""
	    "hostname\":null,\"kernel\":null,\"boot_id\":null,\"started_at\":null,\"finished_at\":nul"
	    "l,\"exit_status\":null,\"error\":null,\"knobs_requested\":{\"thp_enabled\":\"always\"},\""
	    "knobs\":null,\"req_kernel\":null,\"req_cmdline\":null,\"cmdline\":null,\"snapshot_sha256"
	    "\":null,\"fingerprint_doc_sha256\":null,\"req_machine\":null,\"samples\":[]}]}";
static const char want_runs_pg[] =
	    "{\"runs\":[{\"id\":2,\"job_id\":1,\"cell_index\":0,\"label\":\"loops=0\",\"axes\":{\"loo"
	    "ps\":0},\"values\":{\"loops\":0},\"boot\":0,\"attempt\":1,\"state\":\"done\",\"machine\""
	    ":\"m1\",\"hostname\":\"host-1\",\"kernel\":\"6.12.0\",\"boot_id\":\"b00t-1d\",\"started_"
	    "at\":1700000002.25,\"finished_at\":1700000102.5,\"exit_status\":0,\"error\":null,\"knobs"
	    "_requested\":null,\"knobs\":{\"thp_enabled\":{\"before\":\"never\",\"requested\":\"alway"
	    "s\",\"after\":\"always\"}},\"req_kernel\":null,\"req_cmdline\":null,\"cmdline\":\"ro qui"
	    "et thp=\\\"always\\\"\",\"snapshot_sha256\":\"2e2d9fde8f64eb2339ff3cff70a48a05582c40575b"
	    "acb7cc34a1dc215db6cf2c\",\"fingerprint_doc_sha256\":null,\"req_machine\":null,\"samples\""
	    ":[{\"boot\":0,\"iteration\":0,\"metric\":\"lat.p99_us\",\"value\":2.0,\"unit\":null},{\""
	    "boot\":0,\"iteration\":0,\"metric\":\"ops\",\"value\":1.5,\"unit\":\"op/s\"},{\"boot\":0"
	    ",\"iteration\":0,\"metric\":\"zero\",\"value\":0.0,\"unit\":\"B\"},{\"boot\":0,\"iterati"
	    "on\":1,\"metric\":\"lat.p99_us\",\"value\":-0.25,\"unit\":null},{\"boot\":0,\"iteration\""
	    ":1,\"metric\":\"ops\",\"value\":1.0000000000000001e300,\"unit\":\"op/s\"},{\"boot\":0,\""
	    "iteration\":1,\"metric\":\"zero\",\"value\":0.0,\"unit\":\"B\"}]},{\"id\":1,\"job_id\":1"
	    ",\"cell_index\":0,\"label\":\"loops=0\",\"axes\":{\"loops\":0},\"values\":{\"loops\":0},"
	    "\"boot\":1,\"attempt\":1,\"state\":\"queued\",\"machine\":null,\"hostname\":null,\"kerne"
	    "l\":null,\"boot_id\":null,\"started_at\":null,\"finished_at\":null,\"exit_status\":null,"
	    "\"error\":null,\"knobs_requested\":null,\"knobs\":null,\"req_kernel\":null,\"req_cmdline"
	    "\":null,\"cmdline\":null,\"snapshot_sha256\":null,\"fingerprint_doc_sha256\":null,\"req_"
	    "machine\":null,\"samples\":[]},{\"id\":4,\"job_id\":1,\"cell_index\":1,\"label\":\"loops"
	    "=10\",\"axes\":{\"loops\":10},\"values\":{\"loops\":10},\"boot\":0,\"attempt\":1,\"state"
	    "\":\"failed\",\"machine\":\"m1\",\"hostname\":null,\"kernel\":null,\"boot_id\":null,\"st"
	    "arted_at\":1700000004.25,\"finished_at\":1700000104.5,\"exit_status\":3,\"error\":\"exit"
	    " 3: <b>boom</b>\",\"knobs_requested\":{\"thp_enabled\":\"always\"},\"knobs\":null,\"req_"
	    "kernel\":null,\"req_cmdline\":null,\"cmdline\":null,\"snapshot_sha256\":null,\"fingerpri"
	    "nt_doc_sha256\":null,\"req_machine\":null,\"samples\":[{\"boot\":0,\"iteration\":0,\"met"
	    "ric\":\"ops\",\"value\":1.0000000000000001e300,\"unit\":\"op/s\"}]},{\"id\":3,\"job_id\""
	    ":1,\"cell_index\":1,\"label\":\"loops=10\",\"axes\":{\"loops\":10},\"values\":{\"loops\""
	    ":10},\"boot\":1,\"attempt\":1,\"state\":\"queued\",\"machine\":null,\"hostname\":null,\""
	    "kernel\":null,\"boot_id\":null,\"started_at\":null,\"finished_at\":null,\"exit_status\":"
	    "null,\"error\":null,\"knobs_requested\":{\"thp_enabled\":\"always\"},\"knobs\":null,\"re"
	    "q_kernel\":null,\"req_cmdline\":null,\"cmdline\":null,\"snapshot_sha256\":null,\"fingerp"
	    "rint_doc_sha256\":null,\"req_machine\":null,\"samples\":[]}]}";
static const char want_bare_runs[] =
	    "{\"runs\":[{\"id\":2,\"job_id\":1,\"cell_index\":0,\"label\":\"loops=0\",\"axes\":{\"loo"
	    "ps\":0},\"values\":{\"loops\":0},\"boot\":0,\"attempt\":1,\"state\":\"done\",\"machine\""
	    ":\"m1\",\"hostname\":\"host-1\",\"kernel\":\"6.12.0\",\"boot_id\":\"b00t-1d\",\"started_"
	    "at\":1700000002.25,\"finished_at\":1700000102.5,\"exit_status\":0,\"error\":null,\"knobs"
	    "_requested\":null,\"knobs\":{\"thp_enabled\":{\"before\":\"never\",\"requested\":\"alway"
	    "s\",\"after\":\"always\"}},\"req_kernel\":null,\"req_cmdline\":null,\"cmdline\":\"ro qui"
	    "et thp=\\\"always\\\"\",\"snapshot_sha256\":\"2e2d9fde8f64eb2339ff3cff70a48a05582c40575b"
	    "acb7cc34a1dc215db6cf2c\",\"fingerprint_doc_sha256\":null,\"req_machine\":null,\"samples\""
	    ":[]},{\"id\":1,\"job_id\":1,\"cell_index\":0,\"label\":\"loops=0\",\"axes\":{\"loops\":0"
	    "},\"values\":{\"loops\":0},\"boot\":1,\"attempt\":1,\"state\":\"queued\",\"machine\":nul"
	    "l,\"hostname\":null,\"kernel\":null,\"boot_id\":null,\"started_at\":null,\"finished_at\""
	    ":null,\"exit_status\":null,\"error\":null,\"knobs_requested\":null,\"knobs\":null,\"req_"
	    "kernel\":null,\"req_cmdline\":null,\"cmdline\":null,\"snapshot_sha256\":null,\"fingerpri"
	    "nt_doc_sha256\":null,\"req_machine\":null,\"samples\":[]},{\"id\":4,\"job_id\":1,\"cell_"
	    "index\":1,\"label\":\"loops=10\xef""\xbf""\xbd""\",\"axes\":{\"loops\":10},\"values\":{\""
	    "loops\":10},\"boot\":0,\"attempt\":1,\"state\":\"failed\",\"machine\":\"m1\",\"hostname\""
	    ":null,\"kernel\":null,\"boot_id\":null,\"started_at\":1700000004.25,\"finished_at\":1700"
	    "000104.5,\"exit_status\":3,\"error\":\"ok\xef""\xbf""\xbd""!\",\"knobs_requested\":{\"th"
	    "p_enabled\":\"always\"},\"knobs\":null,\"req_kernel\":null,\"req_cmdline\":null,\"cmdlin"
	    "e\":null,\"snapshot_sha256\":null,\"fingerprint_doc_sha256\":null,\"req_machine\":null,\""
	    "samples\":[]},{\"id\":3,\"job_id\":1,\"cell_index\":1,\"label\":\"loops=10\",\"axes\":{\""
	    "loops\":10},\"values\":{\"loops\":10},\"boot\":1,\"attempt\":1,\"state\":\"queued\",\"ma"
	    "chine\":null,\"hostname\":null,\"kernel\":null,\"boot_id\":null,\"started_at\":null,\"fi"
	    "nished_at\":null,\"exit_status\":null,\"error\":null,\"knobs_requested\":{\"thp_enabled\""
	    ":\"always\"},\"knobs\":null,\"req_kernel\":null,\"req_cmdline\":null,\"cmdline\":null,\""
	    "snapshot_sha256\":null,\"fingerprint_doc_sha256\":null,\"req_machine\":null,\"samples\":"
	    "[]}]}";
static const char want_bare_runs_pg[] =
	    "{\"runs\":[{\"id\":2,\"job_id\":1,\"cell_index\":0,\"label\":\"loops=0\",\"axes\":{\"loo"
	    "ps\":0},\"values\":{\"loops\":0},\"boot\":0,\"attempt\":1,\"state\":\"done\",\"machine\""
	    ":\"m1\",\"hostname\":\"host-1\",\"kernel\":\"6.12.0\",\"boot_id\":\"b00t-1d\",\"started_"
	    "at\":1700000002.25,\"finished_at\":1700000102.5,\"exit_status\":0,\"error\":null,\"knobs"
	    "_requested\":null,\"knobs\":{\"thp_enabled\":{\"before\":\"never\",\"requested\":\"alway"
	    "s\",\"after\":\"always\"}},\"req_kernel\":null,\"req_cmdline\":null,\"cmdline\":\"ro qui"
	    "et thp=\\\"always\\\"\",\"snapshot_sha256\":\"2e2d9fde8f64eb2339ff3cff70a48a05582c40575b"
	    "acb7cc34a1dc215db6cf2c\",\"fingerprint_doc_sha256\":null,\"req_machine\":null,\"samples\""
	    ":[]},{\"id\":1,\"job_id\":1,\"cell_index\":0,\"label\":\"loops=0\",\"axes\":{\"loops\":0"
	    "},\"values\":{\"loops\":0},\"boot\":1,\"attempt\":1,\"state\":\"queued\",\"machine\":nul"
	    "l,\"hostname\":null,\"kernel\":null,\"boot_id\":null,\"started_at\":null,\"finished_at\""
	    ":null,\"exit_status\":null,\"error\":null,\"knobs_requested\":null,\"knobs\":null,\"req_"
	    "kernel\":null,\"req_cmdline\":null,\"cmdline\":null,\"snapshot_sha256\":null,\"fingerpri"
	    "nt_doc_sha256\":null,\"req_machine\":null,\"samples\":[]},{\"id\":4,\"job_id\":1,\"cell_"
	    "index\":1,\"label\":\"loops=10\",\"axes\":{\"loops\":10},\"values\":{\"loops\":10},\"boo"
	    "t\":0,\"attempt\":1,\"state\":\"failed\",\"machine\":\"m1\",\"hostname\":null,\"kernel\""
	    ":null,\"boot_id\":null,\"started_at\":1700000004.25,\"finished_at\":1700000104.5,\"exit_"
	    "status\":3,\"error\":\"exit 3: <b>boom</b>\",\"knobs_requested\":{\"thp_enabled\":\"alwa"
	    "ys\"},\"knobs\":null,\"req_kernel\":null,\"req_cmdline\":null,\"cmdline\":null,\"snapsho"
	    "t_sha256\":null,\"fingerprint_doc_sha256\":null,\"req_machine\":null,\"samples\":[]},{\""
	    "id\":3,\"job_id\":1,\"cell_index\":1,\"label\":\"loops=10\",\"axes\":{\"loops\":10},\"va"
	    "lues\":{\"loops\":10},\"boot\":1,\"attempt\":1,\"state\":\"queued\",\"machine\":null,\"h"
	    "ostname\":null,\"kernel\":null,\"boot_id\":null,\"started_at\":null,\"finished_at\":null"
	    ",\"exit_status\":null,\"error\":null,\"knobs_requested\":{\"thp_enabled\":\"always\"},\""
	    "knobs\":null,\"req_kernel\":null,\"req_cmdline\":null,\"cmdline\":null,\"snapshot_sha256"
	    "\":null,\"fingerprint_doc_sha256\":null,\"req_machine\":null,\"samples\":[]}]}";
static const char want_run_1[] =
	    "{\"id\":1,\"job_id\":1,\"cell_index\":0,\"label\":\"loops=0\",\"axes\":{\"loops\":0},\"v"
	    "alues\":{\"loops\":0},\"boot\":1,\"attempt\":1,\"state\":\"queued\",\"machine\":null,\"h"
	    "ostname\":null,\"kernel\":null,\"boot_id\":null,\"started_at\":null,\"finished_at\":null"
	    ",\"exit_status\":null,\"error\":null,\"knobs_requested\":null,\"knobs\":null,\"req_kerne"
	    "l\":null,\"req_cmdline\":null,\"cmdline\":null,\"snapshot_sha256\":null,\"fingerprint_do"
	    "c_sha256\":null,\"req_machine\":null,\"samples\":[]}";
static const char want_run_2[] =
	    "{\"id\":2,\"job_id\":1,\"cell_index\":0,\"label\":\"loops=0\",\"axes\":{\"loops\":0},\"v"
	    "alues\":{\"loops\":0},\"boot\":0,\"attempt\":1,\"state\":\"done\",\"machine\":\"m1\",\"h"
	    "ostname\":\"host-1\",\"kernel\":\"6.12.0\",\"boot_id\":\"b00t-1d\",\"started_at\":170000"
	    "0002.25,\"finished_at\":1700000102.5,\"exit_status\":0,\"error\":null,\"knobs_requested\""
	    ":null,\"knobs\":{\"thp_enabled\":{\"before\":\"never\",\"requested\":\"always\",\"after\""
	    ":\"always\"}},\"req_kernel\":null,\"req_cmdline\":null,\"cmdline\":\"ro quiet thp=\\\"al"
	    "ways\\\"\",\"snapshot_sha256\":\"2e2d9fde8f64eb2339ff3cff70a48a05582c40575bacb7cc34a1dc2"
	    "15db6cf2c\",\"fingerprint_doc_sha256\":null,\"req_machine\":null,\"samples\":[{\"boot\":"
	    "0,\"iteration\":0,\"metric\":\"lat.p99_us\",\"value\":2.0,\"unit\":null},{\"boot\":0,\"i"
	    "teration\":0,\"metric\":\"ops\",\"value\":1.5,\"unit\":\"op/s\"},{\"boot\":0,\"iteration"
	    "\":0,\"metric\":\"zero\",\"value\":0.0,\"unit\":\"B\"},{\"boot\":0,\"iteration\":1,\"met"
	    "ric\":\"lat.p99_us\",\"value\":-0.25,\"unit\":null},{\"boot\":0,\"iteration\":1,\"metric"
	    "\":\"ops\",\"value\":1.0000000000000001e300,\"unit\":\"op/s\"},{\"boot\":0,\"iteration\""
	    ":1,\"metric\":\"zero\",\"value\":0.0,\"unit\":\"B\"}]}";
static const char want_samples[] =
	    "{\"job\":1,\"recipe\":\"demo\",\"cells\":[{\"cell_index\":0,\"label\":\"loops=0\",\"axes"
	    "\":{\"loops\":0},\"samples\":[{\"metric\":\"lat.p99_us\",\"unit\":null,\"boot\":0,\"iter"
	    "ation\":0,\"value\":2.0,\"run\":2},{\"metric\":\"lat.p99_us\",\"unit\":null,\"boot\":0,\""
	    "iteration\":1,\"value\":-0.25,\"run\":2},{\"metric\":\"ops\",\"unit\":\"op/s\",\"boot\":"
	    "0,\"iteration\":0,\"value\":1.5,\"run\":2},{\"metric\":\"ops\",\"unit\":\"op/s\",\"boot\""
	    ":0,\"iteration\":1,\"value\":1.0000000000000001e300,\"run\":2},{\"metric\":\"zero\",\"un"
	    "it\":\"B\",\"boot\":0,\"iteration\":0,\"value\":0.0,\"run\":2},{\"metric\":\"zero\",\"un"
	    "it\":\"B\",\"boot\":0,\"iteration\":1,\"value\":0.0,\"run\":2}]},{\"cell_index\":1,\"lab"
	    "el\":\"loops=10\",\"axes\":{\"loops\":10},\"samples\":[]}]}";

/* The cell list store_job_samples handed the report (its "doc"), now
 * api_view_samples_get's. */
static const char want_samples_doc[] =
	    "{\"job\":1,\"recipe\":\"demo\",\"cells\":[{\"cell_index\":0,\"label\":\"loops=0\","
	    "\"axes\":{\"loops\":0}},{\"cell_index\":1,\"label\":\"loops=10\","
	    "\"axes\":{\"loops\":10}}]}";

static void
test_views(void)
{
	struct store *s = open_fresh("views.db");
	json_t *o = NULL;
	int64_t job;
	int pg;

	job = make_job(s, "views.db");
	pg = where.pg_url != NULL;
	T_EQ_INT(api_view_job_runs_get(s, job, 1, &o), 0);
	check_dump("runs", o, pg ? want_runs_pg : want_runs);
	json_decref(o);
	T_EQ_INT(api_view_job_runs_get(s, job, 0, &o), 0);
	check_dump("bare runs", o, pg ? want_bare_runs_pg : want_bare_runs);
	json_decref(o);
	T_EQ_INT(api_view_run_get(s, 1, &o), 0);
	check_dump("run 1", o, want_run_1);
	json_decref(o);
	T_EQ_INT(api_view_run_get(s, 2, &o), 0);
	check_dump("run 2", o, want_run_2);
	json_decref(o);
	T_EQ_INT(api_view_job_cells_get(s, job, &o), 0);
	check_dump("samples", o, want_samples);
	json_decref(o);
	{
		struct store_samples *ts = NULL;

		T_EQ_INT(api_view_samples_get(s, job, &ts), 0);
		check_dump("samples doc", ts != NULL ? ts->doc : NULL, want_samples_doc);
		store_samples_free(ts);
		/* the store's part is typed: no JSON until the view makes it */
		ts = NULL;
		T_EQ_INT(store_job_samples(s, job, &ts), 0);
		T_CHECK(ts != NULL && ts->doc == NULL && ts->ncells == 2);
		if (ts != NULL && ts->ncells == 2) {
			T_EQ_STR(ts->recipe, "demo");
			T_EQ_INT(ts->cell[1].cell_index, 1);
			T_EQ_STR(ts->cell[1].axes, "{\"loops\": 10}");
			T_EQ_INT(ts->cell[0].nseries, 3);
			T_EQ_INT(ts->cell[1].nseries, 0);
		}
		store_samples_free(ts);
	}
	T_EQ_INT(api_view_job_cells_get(s, job + 1, &o), BF_ERR_NOTFOUND);
	T_CHECK(o == NULL);
	T_EQ_INT(api_view_job_runs_get(s, job + 1, 1, &o), BF_ERR_NOTFOUND);
	T_CHECK(o == NULL);
	T_EQ_INT(api_view_run_get(s, 99, &o), BF_ERR_NOTFOUND);
	T_CHECK(o == NULL);
	store_close(s);
}

/* The typed rows themselves: slices, flags and what with_samples leaves. */
static void
test_rows(void)
{
	struct store *s = open_fresh("rows.db");
	struct store_runs *rs = NULL;
	struct store_cells *c = NULL;
	size_t i, total = 0;
	int64_t job;

	job = make_job(s, "rows.db");
	T_EQ_INT(store_job_runs(s, job, 1, &rs), 0);
	T_CHECK(rs != NULL && rs->n == 4);
	for (i = 0; rs != NULL && i < rs->n; i++) {
		total += rs->run[i].nsamples;
		/* each slice inside the pool, of its own run */
		if (rs->run[i].nsamples > 0) {
			T_CHECK(rs->run[i].samples >= rs->pool &&
			    rs->run[i].samples + rs->run[i].nsamples <= rs->pool + rs->npool);
			T_EQ_INT(rs->run[i].samples[0].run, rs->run[i].id);
		}
	}
	T_EQ_INT(total, 7);
	if (rs != NULL && rs->n == 4) {
		T_EQ_INT(rs->run[0].id, 2);
		T_EQ_INT(rs->run[0].nsamples, 6);
		T_CHECK(rs->run[0].has_started && rs->run[0].has_exit);
		T_EQ_INT(rs->run[1].has_started || rs->run[1].has_exit, 0);
		T_EQ_INT(rs->run[2].exit_status, 3);
		T_CHECK(rs->run[0].samples[0].unit == NULL);	/* lat.p99_us */
		T_EQ_STR(rs->run[0].samples[1].unit, "op/s");
	}
	store_runs_free(rs);
	T_EQ_INT(store_job_runs(s, job, 0, &rs), 0);
	for (i = 0; rs != NULL && i < rs->n; i++)
		T_EQ_INT(rs->run[i].nsamples, 0);
	T_EQ_INT(rs != NULL ? rs->npool : 99, 0);
	store_runs_free(rs);
	T_EQ_INT(store_run_get(s, 3, &rs), 0);
	T_CHECK(rs != NULL && rs->n == 1 && rs->run[0].id == 3 && rs->run[0].nsamples == 0);
	store_runs_free(rs);
	T_EQ_INT(store_run_get(s, 99, &rs), BF_ERR_NOTFOUND);
	T_CHECK(rs == NULL);
	T_EQ_INT(store_job_cells(s, job, &c), 0);
	T_CHECK(c != NULL && c->n == 2);
	if (c != NULL && c->n == 2) {
		/* only the done run's samples; the failed run's one is not there */
		T_EQ_INT(c->cell[0].nsamples, 6);
		T_EQ_INT(c->cell[1].nsamples, 0);
		T_EQ_STR(c->recipe, "demo");
	}
	store_cells_free(c);
	T_EQ_INT(store_job_cells(s, job + 1, &c), BF_ERR_NOTFOUND);
	T_CHECK(c == NULL);
	store_runs_free(NULL);
	store_cells_free(NULL);
	store_close(s);
}

int
main(void)
{
	static const char *const dbs[] = { "views.db", "rows.db" };

	if (fix_where_init(&where, "store-views") != 0)
		return 1;
	test_views();
	test_rows();
	store_fixture_done(dbs, sizeof(dbs) / sizeof(dbs[0]));
	return t_done();
}
