/*
 * api-machines.c: machines, recipes, health and metrics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api-int.h"
#include "boot.h"
#include "events.h"
#include "jx.h"
#include "recipe.h"

void
api_machines_list(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct store_machine *ms = NULL;
	json_t *arr, *o;
	size_t n = 0, i;
	int r;

	if ((r = store_machine_list(a->st, &ms, &n)) != 0) {
		api_store_error(rs, r, "machines");
		return;
	}
	if ((arr = json_array()) == NULL)
		goto oom;
	for (i = 0; i < n; i++) {
		if ((o = api_view_machine(&ms[i])) == NULL || json_array_append_new(arr, o) != 0)
			goto oom;
	}
	api_json(rs, MHD_HTTP_OK, json_pack("{s:o}", "machines", arr));
	store_machines_free(ms, n);
	return;
oom:
	json_decref(arr);
	store_machines_free(ms, n);
	api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
}

static int
check_host(const char *s, struct bf_diag *d)
{
	const char *c;

	for (c = s; *c != '\0'; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || *c == '.' || *c == '-' || *c == ':')) {
			bf_diag_set(d, "host", "\"%.60s\" is not a host name or address", s);
			return BF_ERR_INVALID;
		}
	if (s[0] == '-') {
		bf_diag_set(d, "host", "\"%.60s\" may not start with '-'", s);
		return BF_ERR_INVALID;
	}
	return 0;
}

static int
check_user(const char *s, struct bf_diag *d)
{
	const char *c;

	for (c = s; *c != '\0'; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
		    (c != s && ((*c >= '0' && *c <= '9') || *c == '-' || *c == '.')))) {
			bf_diag_set(d, "user", "\"%.40s\" is not a user name", s);
			return BF_ERR_INVALID;
		}
	return 0;
}

/* "roles": ["run"] (the default), ["build"] (builds kernels, runs nothing;
 * issue 18) or both, each once: *out the store's text. */
static int
parse_roles(const json_t *doc, const char **out, struct bf_diag *d)
{
	char ep[32];
	const char *s;
	json_t *arr = NULL, *v;
	int run = 0, build = 0, r;
	size_t i;

	if ((r = jx_arr(doc, "roles", JX_OPTIONAL, 1, 2, &arr, "", d)) != 0 || arr == NULL)
		return r;
	json_array_foreach(arr, i, v) {
		snprintf(ep, sizeof(ep), "roles[%zu]", i);
		if ((r = jx_as_str(v, 16, &s, ep, d)) != 0)
			return r;
		if (strcmp(s, "run") != 0 && strcmp(s, "build") != 0) {
			bf_diag_set(d, ep, "\"%.16s\" is not one of run, build", s);
			return BF_ERR_INVALID;
		}
		if ((strcmp(s, "run") == 0 ? run++ : build++) != 0) {
			bf_diag_set(d, ep, "\"%s\" is given twice", s);
			return BF_ERR_INVALID;
		}
	}
	*out = run && build ? "run,build" : run ? "run" : "build";
	return 0;
}

void
api_machines_create(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	static const char *const keys[] = { "name", "host", "port", "user", "key", "class",
	    "boot", "roles", NULL };
	struct boot_machine *bm = NULL;
	json_t *bootj = NULL;
	char *boottext = NULL;
	struct store_machine m;
	struct bf_diag d;
	json_t *doc = NULL;
	const char *name = NULL, *host = NULL, *user = "root", *key = NULL, *klass = "default";
	const char *roles = NULL;
	int64_t port = 22;
	int r;

	bf_diag_clear(&d);
	if ((r = jx_loads(rq->body.data ? rq->body.data : "", rq->body.len, BF_MAX_API_BODY,
	    &doc, &d)) != 0 || (r = jx_only_keys(doc, keys, "", &d)) != 0 ||
	    (r = jx_str(doc, "name", JX_REQUIRED, BF_MAX_NAME, &name, "", &d)) != 0 ||
	    (r = jx_check_name(name, "name", &d)) != 0 ||
	    (r = jx_str(doc, "host", JX_REQUIRED, BF_MAX_HOST, &host, "", &d)) != 0 ||
	    (r = check_host(host, &d)) != 0 ||
	    (r = jx_int(doc, "port", JX_OPTIONAL, 1, 65535, &port, "", &d)) != 0 ||
	    (r = jx_str(doc, "user", JX_OPTIONAL, 32, &user, "", &d)) != 0 ||
	    (r = check_user(user, &d)) != 0 ||
	    (r = jx_str(doc, "key", JX_REQUIRED, 1024, &key, "", &d)) != 0 ||
	    (r = jx_str(doc, "class", JX_OPTIONAL, BF_MAX_NAME, &klass, "", &d)) != 0 ||
	    (r = jx_check_name(klass, "class", &d)) != 0 ||
	    (r = jx_obj(doc, "boot", JX_OPTIONAL, &bootj, "", &d)) != 0 ||
	    (bootj != NULL && (r = boot_config_parse(bootj, "boot", &bm, &d)) != 0) ||
	    (r = parse_roles(doc, &roles, &d)) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, d.field, "%s", d.msg);
		goto out;
	}
	if (bootj != NULL &&
	    (boottext = json_dumps(bootj, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
		goto out;
	}
	if (key[0] != '/') {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "key", "key: \"%.60s\" must be an absolute "
		    "path on the coordinator", key);
		goto out;
	}
	/* no path in the answer: API answers carry no key path (store.c) */
	if (api_key_readable(a, key) != 0) {
		api_error(rs, MHD_HTTP_BAD_REQUEST, "key", "key: the coordinator cannot read "
		    "that file");
		goto out;
	}
	memset(&m, 0, sizeof(m));
	m.name = (char *)name;
	m.host = (char *)host;
	m.port = (int)port;
	m.user = (char *)user;
	m.key_path = (char *)key;
	m.klass = (char *)klass;
	m.state = "idle";
	m.created_at = (int64_t)time(NULL);
	m.boot = boottext;
	m.roles = (char *)roles;
	if ((r = store_machine_add(a->st, &m, &d)) != 0) {
		if (r == BF_ERR_EXISTS)
			api_error(rs, MHD_HTTP_CONFLICT, "name", "name: machine \"%s\" already "
			    "exists", name);
		else
			api_store_error(rs, r, "machine");
		goto out;
	}
	api_kick_machines(a);
	events_machine(a->ev, name);
	api_json(rs, MHD_HTTP_CREATED, json_pack("{s:s}", "name", name));
out:
	boot_machine_free(bm);
	free(boottext);
	json_decref(doc);
}

/* Let a quarantined machine take runs again (its boot failures were looked
 * at by a person). */
void
api_machines_clear(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct store_machine *m = NULL;
	int r;

	if ((r = store_machine_get(a->st, rq->name, &m)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "unknown machine \"%s\"", rq->name);
		else
			api_store_error(rs, r, "machine");
		return;
	}
	if (strcmp(m->state, "quarantined") != 0) {
		api_error(rs, MHD_HTTP_CONFLICT, NULL, "machine \"%s\" is %s, not quarantined",
		    rq->name, m->state);
		store_machine_free(m);
		return;
	}
	store_machine_free(m);
	if ((r = store_machine_update(a->st, rq->name, "idle", NULL, NULL, NULL, "", 0)) != 0) {
		api_store_error(rs, r, "machine");
		return;
	}
	api_kick_machines(a);
	events_machine(a->ev, rq->name);
	api_json(rs, MHD_HTTP_OK, json_pack("{s:s,s:s}", "name", rq->name, "state", "idle"));
}

void
api_machines_get(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct store_machine *m = NULL;
	int r;

	if ((r = store_machine_get(a->st, rq->name, &m)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "unknown machine \"%s\"", rq->name);
		else
			api_store_error(rs, r, "machine");
		return;
	}
	api_json(rs, MHD_HTTP_OK, api_view_machine(m));
	store_machine_free(m);
}

void
api_machines_delete(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	int r;

	if ((r = store_machine_delete(a->st, rq->name)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "unknown machine \"%s\"", rq->name);
		else if (r == BF_ERR_STATE)
			api_error(rs, MHD_HTTP_CONFLICT, NULL, "machine \"%s\" is running a run; "
			    "cancel its job or wait", rq->name);
		else
			api_store_error(rs, r, "machine");
		return;
	}
	api_kick_machines(a);
	events_publish(a->ev, "machine", json_pack("{s:s,s:b}", "name", rq->name, "deleted", 1));
	api_json(rs, MHD_HTTP_OK, json_pack("{s:s,s:b}", "name", rq->name, "deleted", 1));
}

/* Fingerprint again: the machine's worker runs `benchfleet-agent probe` at
 * its next idle moment, never during a measured step. */
void
api_machines_probe(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct store_machine *m = NULL;
	int r;

	if ((r = store_machine_get(a->st, rq->name, &m)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "unknown machine \"%s\"", rq->name);
		else
			api_store_error(rs, r, "machine");
		return;
	}
	store_machine_free(m);
	if (api_probe(a, rq->name) != 0) {
		api_error(rs, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "machine \"%s\" has no worker "
		    "yet; retry in a second", rq->name);
		return;
	}
	api_json(rs, MHD_HTTP_ACCEPTED, json_pack("{s:s,s:s}", "name", rq->name, "probe",
	    "queued"));
}

void
api_recipes_list(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	json_t *j = recipes_list_json(a->rs);

	if (j == NULL)
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
	else
		api_json(rs, MHD_HTTP_OK, j);
}

void
api_recipes_get(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	const struct recipe *r = recipes_get(a->rs, rq->name);
	char known[1024];

	if (r == NULL) {
		api_error(rs, MHD_HTTP_NOT_FOUND, NULL, "unknown recipe \"%s\"; known recipes: %s",
		    rq->name, recipes_names(a->rs, known, sizeof(known)));
		return;
	}
	api_json(rs, MHD_HTTP_OK, recipe_to_json(r));
}

void
api_health(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	api_json(rs, MHD_HTTP_OK, json_pack("{s:b,s:s,s:i}", "ok", 1, "version", BF_VERSION,
	    "schema", store_schema_version(a->st)));
}

/* Prometheus text exposition: machines and runs by state. */
void
api_metrics(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	static const char *const mstates[] = { "idle", "running", "offline" };
	static const struct store_job_filter newest = { .limit = BF_MAX_JOBS_PAGE };
	struct store_machine *ms = NULL;
	struct store_job *jobs = NULL;
	struct buf out;
	size_t n = 0, nj = 0, i, k, cnt;
	int64_t next;
	long long q = 0, run = 0, done = 0, failed = 0;
	unsigned long retries, gave_up;
	int r;

	buf_init(&out, 1024 * 1024);
	if ((r = store_machine_list(a->st, &ms, &n)) != 0 ||
	    (r = store_jobs_list(a->st, &newest, &jobs, &nj, &next)) != 0) {
		api_store_error(rs, r, "metrics");
		goto out;
	}
	if ((r = buf_puts(&out, "# HELP benchfleet_machines Registered machines by state.\n"
	    "# TYPE benchfleet_machines gauge\n")) != 0)
		goto toobig;
	for (k = 0; k < sizeof(mstates) / sizeof(mstates[0]); k++) {
		for (cnt = 0, i = 0; i < n; i++)
			cnt += strcmp(ms[i].state, mstates[k]) == 0;
		if ((r = buf_printf(&out, "benchfleet_machines{state=\"%s\"} %zu\n", mstates[k],
		    cnt)) != 0)
			goto toobig;
	}
	for (i = 0; i < nj; i++) {
		q += jobs[i].runs[STORE_RUN_QUEUED];
		run += jobs[i].runs[STORE_RUN_RUNNING];
		done += jobs[i].runs[STORE_RUN_DONE];
		failed += jobs[i].runs[STORE_RUN_FAILED] + jobs[i].runs[STORE_RUN_LOST] +
		    jobs[i].runs[STORE_RUN_BOOT_FAILED];
	}
	if ((r = buf_printf(&out, "# HELP benchfleet_runs Runs of the newest 1000 jobs by state.\n"
	    "# TYPE benchfleet_runs gauge\n"
	    "benchfleet_runs{state=\"queued\"} %lld\nbenchfleet_runs{state=\"running\"} %lld\n"
	    "benchfleet_runs{state=\"done\"} %lld\nbenchfleet_runs{state=\"failed\"} %lld\n",
	    q, run, done, failed)) != 0 ||
	    (r = buf_printf(&out, "# HELP benchfleet_jobs Jobs (newest 1000).\n"
	    "# TYPE benchfleet_jobs gauge\nbenchfleet_jobs %zu\n", nj)) != 0)
		goto toobig;
	store_tx_stats(a->st, &retries, &gave_up);
	if ((r = buf_printf(&out, "# HELP benchfleet_store_tx_retries_total Store transactions "
	    "run again after a serialization failure or deadlock.\n"
	    "# TYPE benchfleet_store_tx_retries_total counter\n"
	    "benchfleet_store_tx_retries_total %lu\n"
	    "# HELP benchfleet_store_tx_gave_up_total Store transactions that still conflicted "
	    "after the last attempt.\n"
	    "# TYPE benchfleet_store_tx_gave_up_total counter\n"
	    "benchfleet_store_tx_gave_up_total %lu\n", retries, gave_up)) != 0)
		goto toobig;
	rs->status = MHD_HTTP_OK;
	rs->ctype = "text/plain; version=0.0.4; charset=utf-8";
	rs->text_len = out.len;
	if ((rs->text = buf_steal(&out)) == NULL)
		api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
	goto out;
toobig:
	/* never a partial exposition: a scraper would read the missing gauges as 0 */
	api_error(rs, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "metrics: %s", bf_err_str(r));
out:
	buf_free(&out);
	store_jobs_free(jobs, nj);
	store_machines_free(ms, n);
}
