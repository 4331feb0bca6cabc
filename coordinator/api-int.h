/*
 * api-int.h: what the API's modules share: the request and response of one
 * call, and the handler type. Handlers fill a response; api.c turns it into
 * HTTP. Not for use outside coordinator/api*.c.
 */
#ifndef BF_API_INT_H
#define BF_API_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <microhttpd.h>
#include <jansson.h>

#include "api.h"
#include "api-view.h"
#include "auth.h"
#include "buf.h"
#include "caps.h"
#include "evidence.h"
#include "report.h"

/* --allow-host NAME[:PORT]; port 0: any */
struct api_allow_host {
	char name[BF_MAX_HOST + 3];
	int port;
};

struct api_conns;
struct api_cache;
struct sse;

struct api {
	struct api_config cfg;
	char *web_dir;
	struct store *st;
	const struct recipes *rs;
	struct sched *sc;
	struct events *ev;		/* may be NULL: no /events */
	atomic_int stopping;		/* set by api_stop: event streams end */
	atomic_int sse_clients;		/* open event streams */
	struct api_cache *cache;	/* api-cache.c: the polling GETs' answers */
	/* api-events.c: streams with nothing to send are suspended (off the
	 * pool) and parked here until an event or their heartbeat is due */
	pthread_mutex_t sse_mu;
	struct sse *sse_parked;
	pthread_t sse_waker;
	int sse_waker_started;
	struct MHD_Daemon *mhd;
	int port;
	atomic_int auth_on;		/* latched: tokens are revoked, never deleted */
	/* the store generation at which the tokens table was last counted
	 * empty (api_authorize), "" for none; under notok_mu */
	pthread_mutex_t notok_mu;
	char notok_gen[STORE_GENERATION_MAX];
	char *tls_cert_pem;		/* owned; the key is wiped on stop */
	char *tls_key_pem;
	size_t tls_key_len;
	/* api-guard.c */
	int tls;
	char listen_host[128];		/* cfg->addr, [v6] bracketed */
	int listen_any;			/* 0.0.0.0 or :: */
	int listen_loopback;
	struct api_allow_host *allow_hosts;	/* owned */
	size_t nallow_hosts;
	struct api_conns *conns;	/* api-conn.c; owned */
	atomic_size_t body_bytes;	/* request bodies buffered, all requests */
	/* api-slow.c: slow handlers running off the pool, under slow_mu */
	pthread_mutex_t slow_mu;
	pthread_cond_t slow_cv;		/* slow_n went down */
	int slow_n;
	int slow_inited;
};

enum api_slow_state { API_SLOW_NONE, API_SLOW_RUNNING, API_SLOW_READY };


struct api_req {
	struct MHD_Connection *conn;
	const char *method;
	const char *path;
	struct buf body;
	int too_big;
	int busy;			/* BF_MAX_API_BODIES reached */
	size_t counted;			/* bytes of body in api->body_bytes */
	int route;			/* index in the route table; -1 before */
	int answered;			/* queued at the first call */
	int64_t id;			/* {id} in the route */
	char name[BF_MAX_NAME + 1];	/* {name} in the route */
	struct auth_ident who;		/* the caller, checked before the handler */
	atomic_int slow;		/* enum api_slow_state */
	struct api_resp *slow_rs;	/* owned: the slow handler's answer */
};

struct api_resp {
	unsigned int status;
	json_t *json;			/* owned; or */
	char *text;			/* owned, with */
	size_t text_len;
	const char *ctype;		/* for text; default text/plain; charset=utf-8 */
	const char *csp;		/* a Content-Security-Policy for text, or NULL */
	const char *disposition;	/* a Content-Disposition for text, or NULL */
	char perf_event[STORE_MAX_EVENT];	/* X-Benchfleet-Perf-Event for text, "" none */
	char artifact_sha256[65];	/* X-Benchfleet-Artifact-Sha256 for text, "" none */
	struct MHD_Response *raw;	/* owned; or a ready response (a stream) */
	uint64_t event_id;		/* X-Benchfleet-Event-Id when has_event_id */
	int has_event_id;
	char etag[STORE_GENERATION_MAX + 2];	/* ETag of a 200 or 304, "" none */
};

typedef void (*api_handler)(struct api *a, struct api_req *rq, struct api_resp *rs);

/* Fill rs with {"error": msg, "detail": {"field": field}} (detail null when
 * field is NULL or empty). */
void api_error(struct api_resp *rs, unsigned int status, const char *field, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));
/* Map a store error to a response. */
void api_store_error(struct api_resp *rs, int r, const char *what);
void api_json(struct api_resp *rs, unsigned int status, json_t *j);	/* steals j */
const char *api_query(struct api_req *rq, const char *key);
void api_runs_profile(struct api *a, struct api_req *rq, struct api_resp *rs);

/* The scheduler's side (cfg.ctl): kick the workers, probe a machine, and
 * whether the daemon (not this process) can read a key file. */
/* Tell the scheduler: new work; the machine list changed. */
void api_kick(struct api *a);
void api_kick_machines(struct api *a);
int api_probe(struct api *a, const char *name);
int api_key_readable(struct api *a, const char *path);

/* api-jobs.c */
/*
 * Store a planned job (plan.h) and every run of its plan in one
 * transaction: the job's document with its recipe as "spec", the machine
 * names (JSON array text, or NULL for a class) and the submitting token.
 * BF_ERR_ALLOC or the store's error, with d saying it. api-jobs.c.
 */
struct job_spec;
struct plan;
struct recipe;
/* machines.spread "block" (api-jobs.c): p gets a run set per machine the
 * job selects (plan_block); nothing for other spreads. BF_ERR_INVALID
 * with d set, or a store error. */
struct matrix_cell;
/* Every machine the job names exists; a class has a member. BF_ERR_NOTFOUND
 * with d naming the field, or a store error. */
int api_jobs_check_machines(struct api *a, const struct job_spec *job, struct bf_diag *d);
/* Cells asking for a kernel or cmdline land only on machines that can boot
 * them. BF_ERR_INVALID with d, or a store error. */
int api_jobs_check_boot(struct api *a, const struct job_spec *job,
    const struct matrix_cell *cells, size_t ncells, struct bf_diag *d);
/* A refusal listing every field error (l NULL or empty: d alone):
 * {"error", "detail": {"field", "errors": [{field, error}], "errors_total"}}. */
void api_jobs_refuse(struct api_resp *rs, unsigned int status, const struct bf_diag *d,
    const struct bf_diag_list *l);
int api_plan_machines(struct api *a, const struct job_spec *job, struct plan *p,
    struct bf_diag *d);
int api_plan_store(struct api *a, struct api_req *rq, const struct job_spec *job,
    const struct recipe *rec, const struct plan *p, const char *names_json, int64_t *idp,
    struct bf_diag *d);
void api_jobs_list(struct api *a, struct api_req *rq, struct api_resp *rs);
/* One GET /jobs query parameter (name=v) into f (which borrows v): 0;
 * BF_ERR_INVALID with d naming the field and what is wrong (printable
 * ASCII of v only); BF_ERR_NOTFOUND for a name that is no parameter. */
int api_jobs_param(const char *name, const char *v, struct store_job_filter *f,
    struct bf_diag *d);
void api_jobs_create(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_jobs_get(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_jobs_cancel(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_jobs_runs(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_runs_get(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_runs_log(struct api *a, struct api_req *rq, struct api_resp *rs);

/* api-report.c */
void api_jobs_report(struct api *a, struct api_req *rq, struct api_resp *rs);
/* What a report is asked for (api_jobs_report parses the query). */
struct api_report_opts {
	const char *fmt;		/* text, markdown, csv, json */
	const char *base;		/* ?baseline=AXIS:VALUE, or NULL */
	const char *colq;		/* ?columns=, or NULL (api_report_columns) */
	enum evidence_counters cmode;
	size_t min_n;			/* 0: the default */
	enum report_stat stat;
	enum report_adjust adjust;
};
/* The report options of rq's query (format, baseline, columns, counters,
 * min_n, stat, adjust) into *ro, borrowing rq's strings. 0, or -1 with a
 * 400 naming the field answered in rs. */
int api_report_opts_parse(struct api_req *rq, struct api_report_opts *ro,
    struct api_resp *rs);
/* After the recipe's nrec metrics in mets[nrec..] (BF_MAX_METRICS of
 * them): every distinct counter name of ts's series (names and units
 * borrowed from ts) that mode shows, picked and ordered by
 * evidence_counters_pick, as many as BF_MAX_METRICS leaves room for;
 * *nmore counts the rest, *nzero the mTHP counters left out as all zero,
 * *nm gets the total. BF_ERR_ALLOC. */
struct store_samples;
int api_report_counters(const struct store_samples *ts, enum evidence_counters mode,
    struct report_metric *mets, size_t nrec, size_t *nm, size_t *nmore, size_t *nzero);
/* The legend's line about counters left out (nothing when none were). */
int api_report_counters_line(size_t nmore, size_t nzero, struct buf *line);
/* api-report-mach.c: machines in a report (machines.spread, job.h). */
/* The job's spread ("any" for a job without one). */
const char *api_report_spread(const json_t *jobj);
/* Onto line: the comparisons (cell i against baseline_of[i]) of cellsj
 * whose cells ran on different sets of machines (done runs of runs),
 * naming them; nothing when none. BF_ERR_ALLOC. */
int api_report_cmp_machines(const json_t *cellsj, const json_t *runs, const int *baseline_of,
    size_t nc, struct buf *line);
/* Onto line: a pin job's machine; nothing for other spreads. */
int api_report_pin_line(const json_t *jobj, struct buf *line);
/* A block job's samples (api_view_job_cells_get) with each cell (of
 * those in only, by cell_index; NULL: all) split by the machine its
 * samples' runs ran on: axis "machine" added, label "LABEL machine=M".
 * *out a new reference. BF_ERR_ALLOC. */
int api_report_block_split(const json_t *samp, const json_t *runs, const json_t *only,
    json_t **out);
/* The same as typed samples of ts's cells (a suite section's, or all),
 * read again from the store for the runs of the samples. *out freed with
 * store_samples_free. A store error. */
int api_report_block_ts(struct api *a, int64_t id, const struct store_samples *ts,
    const json_t *runs, struct store_samples **out);
/* After a block job's report of the split cells (cellsj, in as rendered
 * in fmt onto out): the pooled comparison of each cell with its baseline
 * over machines (report-block.h); json: the document gets "pooled"; csv:
 * nothing (one table per file). BF_ERR_ALLOC, BF_ERR_INVALID. */
int api_report_block_pooled(const json_t *cellsj, const struct report_input *in,
    const char *fmt, struct buf *out);
/* One job report (api-report.c): jobj, ts (store_job_samples), runs (may
 * be NULL) as the store gives them; ro what is asked; what: the title's
 * subject (NULL: the
 * recipe's name). 0, or the error is answered in rs. */
int api_report_one(struct api *a, int64_t id, const json_t *jobj,
    const struct store_samples *ts, const json_t *runs, const struct api_report_opts *ro, const char *what, struct buf *out,
    struct api_resp *rs);
/* A suite's report (api-report-suite.c): one section per workload, each
 * api_report_one of that workload's cells and runs under its own recipe,
 * in one document. */
int api_report_suite(struct api *a, int64_t id, const json_t *jobj,
    const struct store_samples *ts, const json_t *runs, const struct api_report_opts *ro, struct buf *out,
    struct api_resp *rs);

/* api-report-pivot.c: the side-by-side layout (common/report-pivot.h). */
struct report_pivot;
/* The columns axis of a job's report into axis ("" for the row layout):
 * colq ("none", an axis of every cell, or NULL: kernel or cmdline when
 * every cell has it with two values or more, unless base is on another
 * axis). BF_ERR_INVALID with d naming "columns" or "baseline". */
int api_report_columns(const json_t *cellsj, const char *colq, const char *base, char *axis,
    size_t axsz, struct bf_diag *d);
/* The pivot of cellsj (api_view_job_cells_get's "cells") on axis, the
 * reference base's value (AXIS:VALUE, or NULL: the first); summary set, or
 * when cells have a "workload" axis. *out freed with report_pivot_free. */
int api_report_pivot(const json_t *cellsj, const char *axis, const char *base, int summary,
    struct report_pivot **out, struct bf_diag *d);
/* A report_input over cellsj (ts's cells) with rec's metrics and the
 * counters cmode shows (api_report_counters; rd->nmore and rd->nzero for
 * its legend line); every array is rd's, freed with api_report_data_free,
 * except the series' values, ts's (ts outlives rd). BF_ERR_ALLOC. */
struct api_report_data {
	struct report_input in;
	struct report_metric *mets;
	struct report_cell *cells;
	struct report_series *series;	/* pointing into the samples' series */
	int *baseline_of;
	size_t nc, nm;
	size_t nmore, nzero;		/* counters not shown */
};
int api_report_data(const json_t *cellsj, const struct store_samples *ts,
    const struct recipe *rec, enum evidence_counters cmode, struct api_report_data *rd);
/* The same over the metrics of nrecs recipes, each name once. */
int api_report_data_of(const json_t *cellsj, const struct store_samples *ts,
    const struct recipe *const *recs, size_t nrecs, enum evidence_counters cmode,
    struct api_report_data *rd);
void api_report_data_free(struct api_report_data *rd);
/* 200 with out's text (stolen) and the content type of fmt. */
void api_report_respond(struct api_resp *rs, const char *fmt, struct buf *out);
/* GET /api/v1/report?jobs=12,14,r3 */
void api_report_multi(struct api *a, struct api_req *rq, struct api_resp *rs);

/* api-report-ev.c: the report's evidence for job jobj, from its samples
 * (store_job_samples) and runs (api_view_job_runs_get): warnings (THP
 * that did not happen, drift within the job, failed expectations of rec)
 * into warn, context lines (cells on several machines) into ctx; both the
 * caller's, freed with evidence_lines_free. BF_ERR_ALLOC only: a snapshot
 * that cannot be loaded leaves its run without one. */
struct evidence_lines;
int api_report_evidence(struct api *a, const json_t *jobj,
    const struct store_samples *ts, const json_t *runs, const struct recipe *rec, struct evidence_lines *warn,
    struct evidence_lines *ctx);

/* api-evidence.c */
void api_snapshots_get(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_artifacts_get(struct api *a, struct api_req *rq, struct api_resp *rs);

/* api-guard.c: checks on a request's headers; 1 to go on, 0 with rs filled. */
int api_guard_framing(struct MHD_Connection *conn, struct api_resp *rs);
int api_guard_host(struct api *a, struct MHD_Connection *conn, const char *version,
    struct api_resp *rs);
int api_guard_origin(struct api *a, struct MHD_Connection *conn, struct api_resp *rs);
int api_guard_ctype(struct MHD_Connection *conn, const char *method, struct api_resp *rs);
/* "a,b:8443,..." into *out (the caller frees it) and *np. */
int api_guard_hosts_parse(const char *list, struct api_allow_host **out, size_t *np,
    struct bf_diag *d);

/* api-conn.c: connections from accept to close, deadlines and eviction. */
enum api_conn_state {
	API_CONN_HEADERS,		/* waiting for a request's headers */
	API_CONN_BODY,			/* reading its body */
	API_CONN_ANSWER,		/* answering (an event stream: for long) */
};
struct api_conn_stats {
	size_t open, waiting, evicted, expired;
};
int api_conns_new(struct api_conns **out);	/* starts the reaper thread */
void api_conns_free(struct api_conns *cs);	/* after MHD_stop_daemon; accepts NULL */
/* MHD_OPTION_NOTIFY_CONNECTION callback; cls is the struct api. */
void api_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
    enum MHD_ConnectionNotificationCode toe);
void api_conn_set_state(struct api *a, struct MHD_Connection *conn, enum api_conn_state st);
void api_conns_stats(struct api *a, struct api_conn_stats *out);

/* Route rq (found and authorised) to its handler; api.c. */
void api_dispatch(struct api *a, struct api_req *rq, struct api_resp *rs);

/*
 * api-slow.c: a slow route's handler on a thread of its own, its
 * connection suspended (see the file's comment). start: 1 when rq runs
 * there (answer nothing now), 0 with rs filled (503: too many at once).
 * take: 1 when rq's answer is ready, moved into rs (the caller frees it as
 * any answer). free: drop an answer never taken (api_completed). drain:
 * wait for every slow handler, before MHD stops (a->stopping set: no new
 * one starts); fini: after MHD stopped.
 */
int api_slow_init(struct api *a);
int api_slow_start(struct api *a, struct api_req *rq, struct api_resp *rs);
int api_slow_take(struct api_req *rq, struct api_resp *rs);
void api_slow_free(struct api_req *rq);
void api_slow_drain(struct api *a);
void api_slow_fini(struct api *a);

/* api-events.c */
#define BF_MAX_SSE_CLIENTS	256	/* open event streams; more get 503 */
void api_events(struct api *a, struct api_req *rq, struct api_resp *rs);
/* api-cache.c: answers of the tagged GETs under their store generation
 * (rs->etag). get: 1 with rs filled (200, the cached JSON text) when rq's
 * path and arguments were answered at that generation. put: keep rs (a
 * 200 text answer without per-request headers) under it. */
int api_cache_new(struct api_cache **out);
void api_cache_free(struct api_cache *c);		/* accepts NULL */
int api_cache_get(struct api_cache *c, struct api_req *rq, struct api_resp *rs);
void api_cache_put(struct api_cache *c, struct api_req *rq, const struct api_resp *rs);
/* The thread that resumes parked streams: started before MHD, stopped
 * (after a->stopping is set) before MHD_stop_daemon, which must find no
 * connection suspended. */
int api_events_start(struct api *a);
void api_events_stop(struct api *a);

/* api-machines.c */
void api_machines_list(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_machines_create(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_machines_get(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_machines_delete(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_machines_probe(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_machines_clear(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_recipes_list(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_recipes_get(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_health(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_metrics(struct api *a, struct api_req *rq, struct api_resp *rs);

/* api-repro.c: bundles, publishing, reproductions */
void api_jobs_bundle(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_jobs_publish(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_repro_create(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_repro_get(struct api *a, struct api_req *rq, struct api_resp *rs);
/* GET /reproductions: a page, newest first (api-repro-list.c). */
void api_repro_list(struct api *a, struct api_req *rq, struct api_resp *rs);

/* api-bisect.c: /bisections (bisect.h) */
void api_bisect_create(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_bisect_list(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_bisect_get(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_bisect_cancel(struct api *a, struct api_req *rq, struct api_resp *rs);

/* api-repro-job.c: what a rerun of a bundle runs */
struct recipe;
/*
 * The installed recipes a rerun of bundle runs, by canonical sha256: one
 * (versions 1, 2) or one per workload of a suite (version 3), into recs
 * (BF_MAX_SUITE of them; *nrecs set, the caller frees each, also on error).
 * None installed: 409 naming the entry ("recipe" or "recipes[i]") with the
 * field-by-field diff against the local recipe of its name; rs filled.
 */
int api_repro_recipes(struct api *a, const json_t *bundle, struct recipe **recs,
    size_t *nrecs, struct api_resp *rs);
/*
 * The bundle's job with machines names (borrowed) and the overrides
 * (params, knobs: NULL for none), validated against recs, planned as POST
 * /jobs plans it (plan_suite for a suite) and stored with all its runs.
 * BF_ERR_INVALID with d naming the field.
 */
int api_repro_job_create(struct api *a, struct api_req *rq, const json_t *bundle,
    const json_t *params, const json_t *knobs, const json_t *kernels,
    const struct recipe *const *recs,
    size_t nrecs, json_t *names, int64_t *idp, struct bf_diag *d);

/* api-trust.c: the lab identity, the keyring, imported recipes, the audit log */
/* "token:ID", or "local" with auth off: who did it, for the audit log. */
const char *api_actor(const struct api_req *rq, char *buf, size_t bufsz);
void api_lab_get(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_labs_list(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_labs_trust(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_labs_untrust(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_recipes_list_all(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_recipes_import(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_audit_list(struct api *a, struct api_req *rq, struct api_resp *rs);

#endif
