/*
 * store.h: the single source of truth, on one of two engines (db.h):
 * SQLite in WAL mode (a file path, the embedded default; schema version in
 * PRAGMA user_version) or PostgreSQL (a postgresql:// URL; version in
 * bf_schema), with the same schema and migrations. Every state change is
 * one transaction, so a coordinator killed at any moment restarts from a
 * consistent store.
 *
 * Several coordinators may share one PostgreSQL store. Each has a name
 * (store_set_node). A run is claimed with SELECT ... FOR UPDATE SKIP LOCKED
 * and carries a lease (runs.owner, lease_until); a machine is leased the
 * same way (machines.owner, owner_until). Only the holder renews, finishes
 * or adds samples to a run; a lease that lapses is taken over
 * (store_reclaim), and the run starts over elsewhere.
 *
 * Thread safety: one connection guarded by a mutex inside struct store;
 * every function may be called from any thread.
 *
 * Run states: queued -> running -> done | failed | lost | boot-failed | cancelled.
 * Job states: queued -> running -> done | failed | cancelled
 *   (done: every run done; failed: every run ended and at least one not
 *   done; cancelled: by a user).
 * Machine states: idle, running, offline, booting, quarantined (after
 *   repeated boot failures, until an admin clears it).
 */
#ifndef BF_STORE_H
#define BF_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "caps.h"
#include "err.h"

struct store;

/* Open or create, set WAL and busy timeout, migrate to the newest schema.
 * A file with a schema newer than this binary knows is refused. */
int store_open(const char *path, struct store **out, struct bf_diag *d);
void store_close(struct store *s);			/* accepts NULL */
int store_schema_version(struct store *s);
/* How often a transaction ran again after a PostgreSQL serialization
 * failure or deadlock, and how often it still failed at BF_MAX_TX_ATTEMPTS
 * (counted since the store was opened; /metrics shows both). */
void store_tx_stats(struct store *s, unsigned long *retries, unsigned long *gave_up);
/* The name this coordinator leases under (default: the host name). */
int store_set_node(struct store *s, const char *node);
const char *store_node(const struct store *s);
/* 1 on PostgreSQL, where other coordinators may share the store. */
int store_is_shared(const struct store *s);
/* The path or URL store_open was given (may hold a password). */
const char *store_target(const struct store *s);
/* SQLite's text for the last store failure of the calling thread ("" if
 * none yet), for logs next to bf_err_str(). Static per-thread storage. */
const char *store_last_error(void);

/* --- machines --- */
struct store_machine {
	char *name;
	char *host;
	int port;
	char *user;
	char *key_path;
	char *klass;		/* class, e.g. "demo", "zen4-2s" */
	char *state;		/* idle | running | offline */
	char *hostname;		/* last reported by the agent; may be NULL */
	char *kernel;		/* may be NULL */
	char *arch;		/* may be NULL */
	char *last_error;	/* may be NULL */
	int64_t created_at;	/* unix seconds */
	int64_t last_seen;	/* 0 = never */
	char *fingerprint;	/* JSON text from `benchfleet-agent probe`, or NULL */
	char *fingerprint_sha256;
	char *boot;		/* boot configuration, JSON text (boot.h), or NULL */
	char *boot_key;		/* the boot it is in (runner.c), or NULL */
	char *roles;		/* "run", "build" or "run,build"; NULL: "run" (step 14) */
};

/* BF_ERR_EXISTS if the name is taken (d says so). */
int store_machine_add(struct store *s, const struct store_machine *m, struct bf_diag *d);
/* BF_ERR_NOTFOUND. *out freed with store_machine_free(). */
int store_machine_get(struct store *s, const char *name, struct store_machine **out);
/* All machines by name; free with store_machines_free(). */
int store_machine_list(struct store *s, struct store_machine **out, size_t *nout);
void store_machine_free(struct store_machine *m);
void store_machines_free(struct store_machine *a, size_t n);
/* Every machine's name, in no order (the scheduler's reconcile: a name a
 * row, nothing else read); free with store_names_free(). */
int store_machine_names(struct store *s, char ***out, size_t *nout);
void store_names_free(char **v, size_t n);
/* BF_ERR_NOTFOUND; BF_ERR_STATE while a run holds the machine. */
int store_machine_delete(struct store *s, const char *name);
/* Update what is non-NULL; last_seen = now when touch is set. "" clears
 * hostname, kernel, arch or last_error. BF_ERR_NOTFOUND. */
int store_machine_update(struct store *s, const char *name, const char *state,
    const char *hostname, const char *kernel, const char *arch,
    const char *last_error, int touch);

/* --- jobs and runs --- */
struct store_run_new {
	size_t cell_index;
	const char *label;		/* "loops=1000 mode=a" */
	const char *axes_json;		/* the cell's axis values, JSON object text */
	const char *values_json;	/* every parameter's value, JSON object text */
	int boot;			/* boot repetition index, 0.. */
	const char *knobs_json;		/* requested knobs, JSON object text, or NULL */
	const char *kernel;		/* kernel release to boot, or NULL: any */
	const char *cmdline;		/* command-line parameters to boot with, or NULL */
	const char *recipe;		/* a suite's: the run's recipe, else NULL (the job's) */
	const char *workload;		/* a suite's: the entry's label, else NULL */
	const char *machine;		/* spread "block": the one machine that may
					 * claim it (runs.req_machine), else NULL */
	/* the run's plan (plan.h): claim rank within the job, and the step's
	 * numbers; what a claim hands back */
	int64_t run_order;
	int iterations;
	int warmup;
	int timeout_s;
};

/* Insert the job and all its runs (state queued) in one transaction.
 * machine_class or machine_names_json (a JSON array text) selects machines. */
int store_job_create(struct store *s, const char *recipe, const char *name,
    const char *spec_json, const char *machine_class, const char *machine_names_json,
    const struct store_run_new *runs, size_t nruns, int64_t *idp);
/* The same with the token that submitted it (0: none, auth off). */
int store_job_create_owned(struct store *s, const char *recipe, const char *name,
    const char *spec_json, const char *machine_class, const char *machine_names_json,
    const struct store_run_new *runs, size_t nruns, int64_t owner_token, int64_t *idp);
/* The job as plan_job() planned it (common/plan.h): one run row per plan
 * run, its cell's values, axes and knobs as JSON text, and spec_json =
 * {"job": job->json, "recipe": rec->json}. The one way a planned job
 * reaches the store (POST /jobs, reproductions, tests). */
struct job_spec;
struct recipe;
struct plan;
int store_job_create_plan(struct store *s, const struct job_spec *job,
    const struct recipe *rec, const struct plan *p, const char *machine_class,
    const char *machine_names_json, int64_t owner_token, int64_t *idp);
/* What else the job's transaction writes: fn(s, the new job's id, arg)
 * runs inside it after the runs, under the store lock (store_tx's rules:
 * safe to run twice); non-zero rolls the job back too. */
struct store_job_also {
	int (*fn)(struct store *s, int64_t job_id, void *arg);
	void *arg;
};
/* store_job_create_plan with also in its transaction (a bisection's step
 * row and its job: store-bisect.c). */
int store_job_create_plan_also(struct store *s, const struct job_spec *job,
    const struct recipe *rec, const struct plan *p, const char *machine_class,
    const char *machine_names_json, int64_t owner_token, const struct store_job_also *also,
    int64_t *idp);
/* A suite job (job.h) as plan_suite() planned it: spec_json = {"job":
 * job->json, "recipes": [each entry's recipe, by entry]}, jobs.recipe
 * JOB_SUITE_RECIPE, and each run's recipe and workload columns its entry's. */
int store_job_create_suite(struct store *s, const struct job_spec *job,
    const struct recipe *const *recs, const struct plan *p, const char *machine_class,
    const char *machine_names_json, int64_t owner_token, int64_t *idp);
/* Run states, in this order wherever a job counts its runs (jobs.n_*). */
enum store_run_state {
	STORE_RUN_QUEUED, STORE_RUN_RUNNING, STORE_RUN_DONE, STORE_RUN_FAILED,
	STORE_RUN_LOST, STORE_RUN_BOOT_FAILED, STORE_RUN_CANCELLED,
	STORE_RUN_NSTATES
};
extern const char *const store_run_states[STORE_RUN_NSTATES];
/* Job states; a list filter's mask has bit i for store_job_states[i]. */
#define STORE_JOB_NSTATES	5
extern const char *const store_job_states[STORE_JOB_NSTATES];

/* A job's row: what GET /jobs lists and GET /jobs/{id} shows (api-view.c
 * renders it). Free with store_job_free (one) or store_jobs_free (a list). */
struct store_job {
	int64_t id;
	char *recipe;
	char *name;			/* NULL: none */
	char *state;			/* one of store_job_states */
	int64_t created_at;		/* unix seconds */
	int has_started;		/* started_at is known: claimed at least once */
	double started_at;		/* unix seconds */
	int has_finished;
	double finished_at;
	char *machine_class;		/* NULL when machine_names selects */
	char *machine_names;		/* JSON array text, or NULL */
	int64_t runs[STORE_RUN_NSTATES];	/* by enum store_run_state */
	char *spread;			/* machines.spread: any, pin or block */
	char *pinned_machine;		/* a pin job's machine once claimed, or NULL */
	char *spec;			/* JSON text; store_job_get only, else NULL */
};

/* The job with its spec. BF_ERR_NOTFOUND. */
int store_job_get(struct store *s, int64_t id, struct store_job **out);
void store_job_free(struct store_job *j);
void store_jobs_free(struct store_job *a, size_t n);

/* What GET /jobs may ask for; zero values match every job. */
struct store_job_filter {
	int64_t before;			/* only ids below it (keyset paging) */
	size_t limit;			/* 1..BF_MAX_JOBS_PAGE; 0: BF_MAX_JOBS_PAGE */
	unsigned int states;		/* mask over store_job_states */
	const char *recipe;		/* exactly this recipe */
	const char *machine;		/* jobs with a run on this machine */
	const char *q;			/* this text (any case) in the id, name or
					 * recipe; at most BF_MAX_JOBS_Q bytes */
	int published;			/* only published jobs (federation) */
};

/* Jobs newest first as f asks; *nout of them in *out (store_jobs_free).
 * *next_before gets the id to pass as before for the next page, or 0 when
 * no older job matches. BF_ERR_INVALID on a filter out of range. */
int store_jobs_list(struct store *s, const struct store_job_filter *f,
    struct store_job **out, size_t *nout, int64_t *next_before);
/* Queued runs become cancelled; the job is cancelled (running runs finish and
 * keep their result). BF_ERR_NOTFOUND; BF_ERR_STATE if the job had ended. */
int store_job_cancel(struct store *s, int64_t id);

/*
 * A stored sample as read back (store-rows.c): of run (its id), in cell
 * cell_index. metric and unit (NULL: none) are valid UTF-8.
 */
struct store_sample_row {
	int64_t run;
	int64_t cell_index;		/* store_job_cells only; else 0 */
	int64_t boot;
	int64_t iteration;
	char *metric;
	double value;
	char *unit;
};
/*
 * A run row as the API shows it (api_view_run). Text is valid UTF-8 (bytes
 * that were not become U+FFFD); axes, values, knobs_requested and knobs
 * are JSON text as stored (NULL: none), the view's to parse. samples
 * points into the store_runs' pool: nsamples of them, ordered by boot,
 * iteration, metric.
 */
struct store_run {
	int64_t id;
	int64_t job_id;
	int64_t cell_index;
	char *label;
	char *axes;
	char *values;
	int64_t boot;
	int64_t attempt;
	char *state;
	char *machine, *hostname, *kernel, *boot_id;	/* NULL until known */
	int has_started, has_finished, has_exit;
	double started_at, finished_at;			/* unix seconds */
	int64_t exit_status;
	char *error;
	char *knobs_requested;		/* the run's knobs (JSON text) */
	char *knobs;			/* the agent's read-back (JSON text) */
	char *req_kernel, *req_cmdline, *cmdline;
	char *snapshot_sha256, *fingerprint_doc_sha256;
	char *req_machine;
	struct store_sample_row *samples;
	size_t nsamples;
};
struct store_runs {
	struct store_run *run;
	size_t n;
	struct store_sample_row *pool;	/* every run's samples, one array */
	size_t npool;
};
/*
 * A job's runs ordered by cell_index, boot, id; with_samples 0 leaves every
 * run's samples empty (a report's context reads them typed, store_job_samples).
 * BF_ERR_NOTFOUND when the job does not exist, BF_ERR_ALLOC, BF_ERR_DB.
 * *out freed with store_runs_free().
 */
int store_job_runs(struct store *s, int64_t job_id, int with_samples,
    struct store_runs **out);
/* One run with its samples, as (*out)->run[0]. BF_ERR_NOTFOUND. *out freed
 * with store_runs_free(). */
int store_run_get(struct store *s, int64_t run_id, struct store_runs **out);
/* Accepts NULL. */
void store_runs_free(struct store_runs *rs);
/* One line of a run's log. */
struct store_log_line {
	int64_t seq;		/* 1.. in the order written */
	char *stream;		/* stdout, stderr, agent or coord */
	char *line;
	double at;		/* unix seconds */
};
/* The run's lines with seq > after_seq, at most limit (<=1000; 0 means
 * 1000), in order; free with store_log_lines_free. BF_ERR_NOTFOUND when the
 * run does not exist. */
int store_run_log(struct store *s, int64_t run_id, int64_t after_seq, size_t limit,
    struct store_log_line **out, size_t *nout);
void store_log_lines_free(struct store_log_line *a, size_t n);

/* --- for the scheduler --- */
struct store_claim {
	int64_t run_id;
	int64_t job_id;
	char *recipe;
	char *spec_json;
	char *values_json;
	char *label;
	int boot;
	int attempt;
	char *knobs_json;		/* may be NULL */
	char *kernel;			/* may be NULL */
	char *cmdline;			/* may be NULL */
	char *workload;			/* a suite entry's label, or NULL */
	int pin;			/* the job's machines.spread is "pin" */
	/* the run's columns: its cell and plan (store_run_new); the runner
	 * checks them against the job's plan before it runs anything */
	int64_t cell_index;
	int64_t run_order;
	int iterations;
	int warmup;
	int timeout_s;
};

/*
 * Atomically take the next queued run this machine may execute (its job
 * names the machine's class or the machine itself): oldest job first, then
 * the job's run_order (boot-major, or cell-major for "sequential" jobs: the
 * whole policy is in store-claim.h). The run becomes running with machine, started_at and
 * lease_until = now + lease_s; the job becomes running; the machine becomes
 * running. Returns 0 with *out = NULL when there is nothing to do or the
 * machine already runs a run; BF_ERR_NOTFOUND if it is not registered.
 * attempt counts from 1. Whether the machine is reachable is the caller's
 * business: an offline machine that claims becomes running.
 */
int store_run_claim(struct store *s, const char *machine, const char *klass, int lease_s,
    struct store_claim **out);
void store_claim_free(struct store_claim *c);
/*
 * store_run_claim preferring the runs of boot_group, the boot the machine
 * is in ("JOB:BOOT:KERNEL:CMDLINE", as store_boot_group() writes it; NULL:
 * none), so one boot serves all of its runs before the next reboot.
 */
int store_run_claim_boot(struct store *s, const char *machine, const char *klass,
    const char *boot_group, int lease_s, struct store_claim **out);
/*
 * The claims of several idle machines in one transaction, each as
 * store_run_claim_boot would make it, in req's order (the first machine
 * picks first): the scheduler's manager claims so for its idle workers
 * when new work arrives, instead of each worker in a transaction of its
 * own. out[i] (n of them, the caller's array, the caller frees each) is
 * req[i]'s claim or NULL: nothing for it, busy, another coordinator's, or
 * no longer registered. On an error every out[i] is NULL. n is 1 to
 * STORE_CLAIM_MANY_MAX.
 */
#define STORE_CLAIM_MANY_MAX	64
struct store_claim_req {
	const char *machine, *klass, *boot_group;	/* boot_group may be NULL */
};
int store_run_claim_many(struct store *s, const struct store_claim_req *req, size_t n,
    int lease_s, struct store_claim **out);
/* The boot group of a claim into buf: "JOB:BOOT:KERNEL:CMDLINE". */
const char *store_boot_group(const struct store_claim *c, char *buf, size_t bufsz);
/* Extend the lease of a running run this coordinator holds, and the lease
 * of its machine. BF_ERR_NOTFOUND; BF_ERR_STATE if it is not running or
 * another coordinator took it over: the caller must stop the step. */
int store_run_renew(struct store *s, int64_t run_id, int lease_s);
/*
 * Take or keep the machine's lease for lease_s seconds: *held = 1 when this
 * coordinator drives it now (it was free, ours, or its holder's lease had
 * lapsed), 0 while another coordinator holds it. BF_ERR_NOTFOUND.
 */
int store_machine_lease(struct store *s, const char *name, int lease_s, int *held);
/* Give up every machine lease of this coordinator (clean shutdown). */
int store_release(struct store *s);
/*
 * Take over what other coordinators let lapse: their running runs whose
 * lease expired go back to queued (attempt + 1, partial samples dropped,
 * the reason logged), or cancelled when their job was; their machines are
 * freed. *nrequeued (may be NULL) counts the runs. Safe to call often.
 */
int store_reclaim(struct store *s, size_t *nrequeued);
/* Send an event to the other coordinators (PostgreSQL NOTIFY on channel
 * "benchfleet"); 0 and nothing sent on SQLite. payload < 8000 bytes. */
int store_notify(struct store *s, const char *payload);

/* The /proc/cmdline a run was measured under (from the agent's hello). */
int store_run_set_cmdline(struct store *s, int64_t run_id, const char *cmdline);
/* The agent's knobs line of a run (before, requested, after), JSON text. */
int store_run_set_knobs(struct store *s, int64_t run_id, const char *json_text);
/*
 * The environment snapshot a run is measured in (the agent's snapshot
 * object, as JSON text): stored once per distinct text, the run naming it.
 * sha256 gets the hash of json_text, which names the row. Only while the
 * run is this coordinator's (BF_ERR_STATE otherwise); a retried run starts
 * without one. (store-evidence.c)
 */
int store_run_set_snapshot(struct store *s, int64_t run_id, const char *json_text,
    char sha256[65]);
/* The snapshot called sha256 (64 lowercase hex), JSON text the caller
 * frees; BF_ERR_NOTFOUND, BF_ERR_INVALID for a name that is not a hash. */
int store_snapshot_get(struct store *s, const char *sha256, char **json_text);
/* The fingerprint document a run started under (the run's
 * "fingerprint_doc_sha256", schema step 10), the same way. */
int store_fingerprint_get(struct store *s, const char *sha256, char **json_text);
/*
 * An artifact of a run (a profile's "folded" or "perf.data", schema step
 * 11): the bytes p[0..n) stored once per distinct sha256, which the store
 * computes into sha256, and the run naming them as name (replacing what
 * it named so before) with the perf event they were sampled on (NULL: not
 * said; else under STORE_MAX_EVENT characters of [a-z-]). Only while the
 * run is this coordinator's. A run retried or requeued by recovery names
 * none of its earlier attempt's, as it keeps none of its samples.
 * (store-evidence.c)
 */
int store_run_add_artifact(struct store *s, int64_t run_id, const char *name, const char *event,
    const void *p, size_t n, char sha256[65]);
#define STORE_MAX_EVENT	16	/* a perf event's name, with its NUL */
/* The artifact a run names name: *data (malloc'd, the caller frees; never
 * NULL on success), *n, its sha256 and the event ("" when not said).
 * BF_ERR_NOTFOUND when it has none. */
int store_run_artifact(struct store *s, int64_t run_id, const char *name, void **data,
    size_t *n, char sha256[65], char event[STORE_MAX_EVENT]);
/*
 * Kernel builds (schema step 14, issue 18; store-kbuild.c). One row per
 * build key (kspec_build_key): the store is what makes a key built once,
 * by whichever coordinator takes it first.
 *
 * store_kbuild_take: a new key becomes 'building' under this coordinator
 * (machine builds it, spec_json says what), as does a key whose builder's
 * lease lapsed: *take = STORE_KBUILD_MINE. A key built already: DONE; its
 * build failed: FAILED (a failure is the key's; the same inputs fail the
 * same way); building under a live lease elsewhere: BUSY, ask again later.
 */
enum store_kbuild_take {
	STORE_KBUILD_MINE = 0,
	STORE_KBUILD_DONE,
	STORE_KBUILD_FAILED,
	STORE_KBUILD_BUSY
};
int store_kbuild_take(struct store *s, const char *key, const char *spec_json,
    const char *machine, int lease_s, int *take);
/* Renew this coordinator's lease on a build it holds; BF_ERR_STATE if not. */
int store_kbuild_renew(struct store *s, const char *key, int lease_s);
/* What a build left: hashes of artifacts stored with store_kartifact_add
 * (modules_sha256 may be NULL: no modules), or error (the compiler's line)
 * for a failed one, whose hashes may all be NULL but log_sha256. */
struct store_kbuild_out {
	const char *release;
	const char *config_sha256;
	const char *image_sha256;
	const char *modules_sha256;
	const char *sysmap_sha256;
	const char *log_sha256;
	const char *error;		/* NULL: done; else failed */
};
/* 'building' under this coordinator -> 'done' or 'failed'. BF_ERR_STATE when
 * the build is not this coordinator's (its lease lapsed and another took
 * it); BF_ERR_INVALID for a hash that is not one or an unknown artifact. */
int store_kbuild_finish(struct store *s, const char *key, const struct store_kbuild_out *o);
/* A build key's row, by value: nothing to free. The hashes are "" when
 * the build has none (no modules; a failed build), error "" unless
 * failed. A stored text longer than its field reads as BF_ERR_DB. */
#define STORE_KB_MAX_RELEASE	64	/* a release as uname -r prints it */
#define STORE_KB_MAX_ERROR	1024	/* the compiler's error line */
struct store_kbuild {
	char key[65];
	char state[12];				/* building, done, failed */
	char machine[BF_MAX_NAME + 1];		/* the builder */
	char release[STORE_KB_MAX_RELEASE + 1];
	char config_sha256[65], image_sha256[65], modules_sha256[65];
	char sysmap_sha256[65], log_sha256[65];
	char error[STORE_KB_MAX_ERROR + 1];
	int64_t created_at, finished_at, last_used;	/* 0: not yet */
};
/* The row of key into *out; BF_ERR_NOTFOUND. */
int store_kbuild_get(struct store *s, const char *key, struct store_kbuild *out);
/* The done build whose release (uname -r of the kernel it made) is
 * release: what a run's kernel names; BF_ERR_NOTFOUND. */
int store_kbuild_by_release(struct store *s, const char *release, struct store_kbuild *out);
/* A job used the build now (retention keeps the recently used). */
int store_kbuild_touch(struct store *s, const char *key);
#define STORE_KA_KINDS	"image, modules, config, sysmap, log"
/* An artifact whose bytes are in the artifact directory (kstore.h) under
 * sha256; kind one of STORE_KA_KINDS. Idempotent. */
int store_kartifact_add(struct store *s, const char *sha256, const char *kind, int64_t size);
/* A run's artifact (step 11, a profile) by its sha256 alone: *data
 * (malloc'd, the caller frees), *n. BF_ERR_NOTFOUND. */
int store_artifact_get(struct store *s, const char *sha256, void **data, size_t *n);
/* Its kind (at least 8 bytes) and size; BF_ERR_NOTFOUND. */
int store_kartifact_get(struct store *s, const char *sha256, char kind[8], int64_t *size);
/*
 * Retention: while the artifacts' sizes add up to more than max_bytes,
 * forget the least recently used build that is not building, and every
 * artifact no build names any more. *victims (malloc'd array of *n hashes,
 * the caller frees; NULL when none) are the artifacts whose files the
 * caller removes from the artifact directory now.
 */
int store_kbuild_prune(struct store *s, int64_t max_bytes, char (**victims)[65], size_t *n);

/* Record a machine's fingerprint (JSON text) and its hash. */
int store_machine_set_fingerprint(struct store *s, const char *name, const char *json_text,
    const char *sha256);
/* A machine's boot configuration (JSON text, or NULL to clear). */
int store_machine_set_boot(struct store *s, const char *name, const char *boot_json);
/* The boot a machine is in now (runner.c's key), or NULL: unknown. */
int store_machine_set_boot_key(struct store *s, const char *name, const char *boot_key);

struct store_sample {
	const char *metric;
	double value;
	const char *unit;
};
/* All samples of one iteration in one transaction; idempotent: a sample
 * already stored under (run, boot, iteration, metric) is left as it is.
 * BF_ERR_STATE when the run is not running under this coordinator. */
int store_samples_add(struct store *s, int64_t run_id, int boot, int iteration,
    const struct store_sample *samples, size_t n);
/* One iteration's samples, as store_samples_add takes them (borrowed). */
struct store_batch {
	int boot, iteration;
	const struct store_sample *samples;
	size_t n;
};
/* Append a log line (cut to BF_MAX_LOG_LINE); stream: stdout|stderr|agent|coord. */
int store_run_log_add(struct store *s, int64_t run_id, const char *stream, const char *line);
int store_run_set_info(struct store *s, int64_t run_id, const char *hostname,
    const char *kernel, const char *boot_id);
/*
 * The agent's hello in one transaction: the run's hostname, kernel and
 * boot id (store_run_set_info), its cmdline when not NULL, and machine's
 * hostname, kernel, arch and last_seen (store_machine_update). Three
 * commits per run were one each; the values are cleaned and cut alike.
 * BF_ERR_NOTFOUND when the run is unknown (nothing written), or when the
 * machine is (the run's part is kept).
 */
int store_run_hello(struct store *s, int64_t run_id, const char *machine, const char *hostname,
    const char *kernel, const char *arch, const char *boot_id, const char *cmdline);
/*
 * store_run_hello and store_run_set_snapshot in one transaction: the first
 * two lines of a step, one commit instead of two. All or nothing: a
 * snapshot refused (BF_ERR_STATE: the run is not this coordinator's any
 * more; BF_ERR_TOOBIG) leaves the hello unwritten too. *snapshot_err is 1
 * when the snapshot was not stored (any error but a missing machine, whose
 * BF_ERR_NOTFOUND is the hello's alone, as in store_run_hello).
 * json_text NULL: store_run_hello.
 */
int store_run_hello_snapshot(struct store *s, int64_t run_id, const char *machine,
    const char *hostname, const char *kernel, const char *arch, const char *boot_id,
    const char *cmdline, const char *json_text, char sha256[65], int *snapshot_err);
/* End a run (state done|failed|lost), free its machine (state idle), and
 * settle the job's state when none of its runs is queued or running.
 * BF_ERR_STATE if the run is not running (e.g. finished twice). A machine
 * the caller marked offline meanwhile stays offline. */
int store_run_finish(struct store *s, int64_t run_id, const char *state, int exit_status,
    const char *error);
/*
 * store_run_finish, and with add_boot one more run of the same cell (next
 * boot index, same values and knobs) queued in the same transaction, so the
 * job cannot be settled in between (adaptive repetitions).
 */
int store_run_finish_more(struct store *s, int64_t run_id, const char *state,
    int exit_status, const char *error, int add_boot);
/*
 * The add-a-boot question about a cell: v[i] measured in boot[i] (n of
 * them), planned boots queued, running or done. > 0: add one. Called with
 * the store locked: it must not call the store.
 */
typedef int (*store_cell_decide_fn)(void *arg, const double *v, const int *boot, size_t n,
    int planned);
/*
 * store_run_finish_more, the add_boot answer taken by decide over the
 * cell's samples of metric (store_cell_samples) inside the finishing
 * transaction, after the job's row lock (PostgreSQL: FOR UPDATE; SQLite:
 * the write transaction): two boots of a cell ending at once on two
 * coordinators are decided one after the other, the second seeing the
 * first done. metric NULL: no question; decide NULL: add a boot.
 */
int store_run_finish_adaptive(struct store *s, int64_t run_id, const char *state,
    int exit_status, const char *error, const char *metric, store_cell_decide_fn decide,
    void *arg);
/* A log line as store_run_log_add takes it (borrowed). */
struct store_logline {
	const char *stream, *line;
};
/* What a step's sink held back to write in one commit (all borrowed):
 * samples of the run's iterations, b[0..nb), and the log lines that came
 * after the first of them, l[0..nl), in their order. */
#define STORE_FINISH_BATCHES	16
#define STORE_FINISH_LOGS	8
struct store_held {
	const struct store_batch *b;
	size_t nb;
	const struct store_logline *l;
	size_t nl;
};
/* h's samples and lines in one transaction, as store_samples_add and
 * store_run_log_add would write them one by one: nothing of it when one
 * part fails; refused (BF_ERR_INVALID/BF_ERR_RANGE) before any write as
 * they and store_run_finish_with refuse. */
int store_held_add(struct store *s, int64_t run_id, const struct store_held *h);
/*
 * store_run_finish_adaptive with h (NULL: nothing) added first in the same
 * transaction: the samples as store_samples_add would, seen by decide, and
 * the log lines as store_run_log_add would. A step's last commit is its
 * end, not one for its samples, one for a note and one for the finish.
 * Nothing is written when one part fails. BF_ERR_INVALID/BF_ERR_RANGE for
 * samples store_samples_add refuses, BF_ERR_INVALID for more than
 * STORE_FINISH_BATCHES batches or STORE_FINISH_LOGS lines or a stream
 * store_run_log_add refuses.
 */
int store_run_finish_with(struct store *s, int64_t run_id, const struct store_held *h,
    const char *state, int exit_status, const char *error, const char *metric,
    store_cell_decide_fn decide, void *arg);
/*
 * The samples of one metric of run_id's cell: its done runs and run_id
 * itself (still running, about to finish). *vp and *bootp are allocated
 * arrays of *np (caller frees); *nbootsp counts the cell's runs queued,
 * running or done (boots planned so far).
 */
int store_cell_samples(struct store *s, int64_t run_id, const char *metric, double **vp,
    int **bootp, size_t *np, int *nbootsp);
/*
 * A run whose machine was lost mid-step: while its attempt < max_attempts it
 * goes back to queued (attempt + 1, partial samples dropped, reason kept in
 * error and logged) for any machine of the job to take; otherwise it ends
 * lost with the reason. *requeued (may be NULL) says which. The machine is
 * released either way. BF_ERR_STATE if the run is not running.
 */
int store_run_retry(struct store *s, int64_t run_id, const char *reason, int max_attempts,
    int *requeued);
/*
 * At start-up: every run left running by a dead coordinator goes back to
 * queued (attempt + 1) with its partial samples removed, in one transaction;
 * machines marked running become idle. On SQLite that is every running run
 * (one coordinator per file); on PostgreSQL those this coordinator's name
 * held in its previous life, and those of others whose lease lapsed. *nrequeued counts them. Running
 * runs of a cancelled job become cancelled instead (not counted), so that
 * the job can end.
 */
int store_recover(struct store *s, size_t *nrequeued);

/* n read-only connections (at most STORE_MAX_READERS) for the reads that
 * need no transaction (store-read.c); SQLite only, a no-op on PostgreSQL.
 * Opened after the store, before any thread uses it; closed with it. */
#define STORE_MAX_READERS	64
int store_readers_open(struct store *s, size_t n, struct bf_diag *d);

/*
 * A token that changes whenever anything in the store may have changed since
 * it was taken: a commit by this connection, by another process on the same
 * file (the monitor's scheduler) or, on PostgreSQL, by any coordinator; and
 * with every opening of the store. Equal tokens mean the same data; unequal
 * ones need not mean different data. ETag/304 of the polling GETs (api.c).
 * BF_ERR_DB, BF_ERR_TOOBIG (outsz too small; STORE_GENERATION_MAX fits).
 */
#define STORE_GENERATION_MAX	256
int store_generation(struct store *s, char *out, size_t outsz);

/*
 * A job's cells with the samples of its runs that ended done (a bundle's
 * and a reproduction's raw samples; api_view_cells shows them): every cell,
 * by cell_index, with the label and axes (JSON text) of its first run;
 * each cell's samples ordered by metric, boot, iteration, run. Text is
 * valid UTF-8. *out freed with store_cells_free().
 */
struct store_cell_row {
	int64_t cell_index;
	char *label;
	char *axes;
	struct store_sample_row *samples;	/* into the store_cells' pool */
	size_t nsamples;
};
struct store_cells {
	int64_t job;
	char *recipe;				/* NULL: none */
	struct store_cell_row *cell;
	size_t n;
	struct store_sample_row *pool;
	size_t npool;
};
/* Only runs that ended done contribute samples; every cell is listed.
 * BF_ERR_NOTFOUND, BF_ERR_ALLOC, BF_ERR_DB. */
int store_job_cells(struct store *s, int64_t job_id, struct store_cells **out);
/* Accepts NULL. */
void store_cells_free(struct store_cells *c);

/* A job's samples as a report reads them (store-samples.c): per cell (in
 * cell_index order) one series per metric (ascending name, or first
 * appearance for store_samples_from_cells), each the values and boots in
 * the order boot, iteration, run. metric and unit point into the set.
 * Freed with store_samples_free (accepts NULL); a selection's series are
 * its source's, so it is freed before the source. */
struct store_series {
	const char *metric;
	const char *unit;		/* its first sample's; may be NULL */
	size_t n;
	double *v;
	int *boot;
};
struct store_cell {
	size_t nseries;
	struct store_series *series;
	/* store_job_samples: the cell's first run's label (UTF-8) and axes
	 * (JSON text); NULL for store_samples_from_cells */
	int64_t cell_index;
	char *label;
	char *axes;
};
struct store_samples {
	/* the cells the report walks: {"job","recipe","cells":[{"cell_index",
	 * "label","axes"}]} parallel to cell[], set by api_view_samples_get
	 * (the store leaves it NULL); from_cells: {"cells": the bundle's} */
	json_t *doc;
	int64_t job;
	char *recipe;			/* NULL: none, or from_cells */
	size_t ncells;
	struct store_cell *cell;
	char **str;			/* the metric names and units, one copy each */
	size_t nstr;
	int owns;			/* 0: a selection; the series are another's */
};
/* Only runs that ended done contribute; every cell is listed.
 * BF_ERR_NOTFOUND, BF_ERR_ALLOC. */
int store_job_samples(struct store *s, int64_t job_id, struct store_samples **out);
/* The same from cells shaped as api_view_cells's (a bundle's). */
int store_samples_from_cells(const json_t *cells, struct store_samples **out);
/* The cells keep() says yes to, sharing ss's series (ss outlives *out). */
int store_samples_select(const struct store_samples *ss, int (*keep)(const json_t *cell,
    void *arg), void *arg, struct store_samples **out);
/* c's series of metric, or NULL. */
const struct store_series *store_cell_series(const struct store_cell *c, const char *metric);
void store_samples_free(struct store_samples *ss);

/* --- bisections (store-bisect.c, schema step 17; bisect.h) --- */
/* A bisection's row. Text fields owned; free with store_bisect_free. */
struct store_bisect {
	int64_t id;
	char *spec;		/* the validated request, JSON text */
	char *state;		/* running, done, failed, cancelled */
	char *commits;		/* JSON array of 40-hex shas good..bad, oldest first;
				 * NULL until the builder resolved them */
	int64_t lo, hi;		/* indexes: lo known good (-1: the good rev), hi bad */
	char *first_bad;	/* sha, when done */
	char *message;		/* why it failed, or the first bad's subject */
	double machine_s;	/* summed run wall time of its steps' jobs */
	double created_at, updated_at, finished_at;	/* finished_at 0: running */
};
/* One row of bisection_steps: a (step, round) and its job. */
struct store_bisect_step {
	int64_t step, round, idx;	/* idx: the commit's index in commits */
	char sha[41];
	int64_t job_id;
	char verdict[8];		/* pending, good, bad, skip, more */
	char *stats;			/* JSON text of the numbers, or NULL */
};
/* A new running bisection of spec (JSON text, <= BF_MAX_API_BODY). */
int store_bisect_add(struct store *s, const char *spec_json, int64_t *idp);
/* BF_ERR_NOTFOUND. *out freed with store_bisect_free. */
int store_bisect_get(struct store *s, int64_t id, struct store_bisect **out);
void store_bisect_free(struct store_bisect *b);		/* accepts NULL */
/* The newest limit (<= STORE_MAX_PAGE) rows, newest first; free with
 * store_bisects_free. */
int store_bisect_list(struct store *s, size_t limit, struct store_bisect **out, size_t *n);
void store_bisects_free(struct store_bisect *a, size_t n);
/* Ids of the running bisections, oldest first (at most STORE_MAX_PAGE);
 * free(*out). */
int store_bisect_running(struct store *s, int64_t **out, size_t *n);
/* The steps of a bisection in (step, round) order; free with
 * store_bisect_steps_free. */
int store_bisect_steps(struct store *s, int64_t id, struct store_bisect_step **out,
    size_t *n);
void store_bisect_steps_free(struct store_bisect_step *a, size_t n);
/*
 * One transaction: the pending step (step, round) of commit idx/sha and
 * its job (planned as store_job_create_plan: the arguments after sha).
 * BF_ERR_EXISTS (nothing written) when that step row is there already, so
 * a driver that runs twice never makes a second job for one step.
 */
struct job_spec;
struct recipe;
struct plan;
int store_bisect_step_job(struct store *s, int64_t id, int64_t step, int64_t round,
    int64_t idx, const char *sha, const struct job_spec *job, const struct recipe *rec,
    const struct plan *p, const char *machine_class, const char *machine_names_json,
    int64_t *job_idp);
/* What store_bisect_advance writes into the bisection's row. */
struct store_bisect_upd {
	const char *state;		/* running, done, failed */
	const char *commits;		/* JSON text or NULL */
	int64_t lo, hi;
	const char *first_bad, *message;	/* may be NULL */
	double machine_s;
};
/*
 * One transaction: a pending step's verdict (step >= 0; -1: none) and the
 * row's new values. BF_ERR_STATE when the bisection is no longer running
 * (cancelled meanwhile) or the step is not pending: nothing written.
 */
int store_bisect_advance(struct store *s, int64_t id, int64_t step, int64_t round,
    const char *verdict, const char *stats_json, const struct store_bisect_upd *u);
/* Running -> cancelled with message. BF_ERR_NOTFOUND; BF_ERR_STATE when
 * it is not running. */
int store_bisect_cancel(struct store *s, int64_t id, const char *message);

/* --- federation and reproductions (store-repro.c) --- */
/* Let other labs fetch the job's bundle. BF_ERR_NOTFOUND. Idempotent. */
int store_job_publish(struct store *s, int64_t id);
/* *pubp = 1 if published. BF_ERR_NOTFOUND. */
int store_job_published(struct store *s, int64_t id, int *pubp);

struct store_repro {
	int64_t id;
	int64_t job_id;		/* the rerun here */
	char *bundle;		/* the verified bundle, canonical JSON text */
	char *bundle_sha256;
	char *source;		/* URL, or NULL: posted */
	double delta_pct;	/* equivalence margin, percent */
	char *info;		/* JSON text (repro.c) */
	int64_t created_at;
};
int store_repro_add(struct store *s, int64_t job_id, const char *bundle, const char *sha256,
    const char *source, double delta_pct, const char *info_json, int64_t *idp);
/* BF_ERR_NOTFOUND. *out freed with store_repro_free(). */
int store_repro_get(struct store *s, int64_t id, struct store_repro **out);
void store_repro_free(struct store_repro *x);	/* accepts NULL */
/* A reproduction in a list: the stored row less its bundle, with its job's
 * recipe, state and run counts. */
struct store_repro_row {
	int64_t id, job_id, created_at;
	char *bundle_sha256, *source, *info;	/* source may be NULL */
	double delta_pct;
	char *recipe, *job_state;
	int64_t runs_total, runs_done, runs_failed;	/* failed: also lost, boot-failed */
};
/* Newest first, ids below before (0: from the newest), at most limit
 * (1..STORE_MAX_PAGE; 0 is the most); *more = 1 when older ones exist.
 * *out freed with store_repro_rows_free(*out, *nout). */
int store_repro_list(struct store *s, int64_t before, size_t limit,
    struct store_repro_row **out, size_t *nout, int *more);
void store_repro_rows_free(struct store_repro_row *a, size_t n);	/* accepts NULL */

/* --- trust: imported recipes, the keyring, the audit log (store-repro.c,
 * schema step 7). Every write that changes trust takes its audit entry
 * in the same transaction. --- */
struct store_audit {
	const char *actor;	/* "token:ID", or "local" with auth off */
	const char *action;	/* "recipe.import", "lab.trust", "lab.untrust", ... */
	const char *subject;	/* what it acted on, or NULL */
	const char *detail;	/* JSON or text, or NULL */
};
/* Append one entry on its own. */
int store_audit_add(struct store *s, const struct store_audit *au);
/* One entry of the audit log as stored. */
struct store_audit_row {
	int64_t id;
	double at;		/* unix seconds */
	char *actor;
	char *action;
	char *subject;		/* may be NULL */
	char *detail;		/* may be NULL */
};
/* The newest limit entries (0 or over 1000: 1000), newest first; free
 * with store_audit_rows_free. */
int store_audit_list(struct store *s, size_t limit, struct store_audit_row **out,
    size_t *nout);
void store_audit_rows_free(struct store_audit_row *a, size_t n);

/* Install a recipe (its canonical JSON text and sha256) and audit it.
 * BF_ERR_EXISTS (nothing written) when that sha256 is installed already. */
int store_recipe_import(struct store *s, const char *name, const char *sha256,
    const char *json_text, const struct store_audit *au);
/* The imported recipe of that sha256 (*jsonp malloc'ed text), or
 * BF_ERR_NOTFOUND. */
int store_recipe_imported(struct store *s, const char *sha256, char **jsonp);
/* The newest imported recipe called name, or BF_ERR_NOTFOUND. */
int store_recipe_imported_by_name(struct store *s, const char *name, char **jsonp);
/* An imported recipe, without its text. */
struct store_recipe_imp {
	char *name;
	char *sha256;
	char *actor;
	int64_t created_at;	/* unix seconds */
};
/* The imported recipes by name, then age; free with
 * store_recipes_imported_free. */
int store_recipes_imported_list(struct store *s, struct store_recipe_imp **out, size_t *nout);
void store_recipes_imported_free(struct store_recipe_imp *a, size_t n);

/* Trust a lab's key (base64 of the raw 32 bytes) and audit it.
 * BF_ERR_EXISTS when the name or the key is in the keyring already. */
int store_lab_trust(struct store *s, const char *name, const char *public_key,
    const char *fingerprint, const char *source, const struct store_audit *au);
/* Remove it and audit that. BF_ERR_NOTFOUND. */
int store_lab_untrust(struct store *s, const char *name, const struct store_audit *au);
/* The trusted lab holding that key into name (BF_MAX_NAME + 1 bytes), or
 * BF_ERR_NOTFOUND. */
int store_lab_by_key(struct store *s, const char *public_key, char *name, size_t namesz);
/* A trusted lab of the keyring. */
struct store_lab {
	char *name;
	char *public_key;	/* base64 of 32 bytes */
	char *fingerprint;	/* "SHA256:..." */
	char *source;		/* the URL it was fetched from, or NULL */
	char *actor;
	int64_t created_at;	/* unix seconds */
};
/* The keyring by name; free with store_labs_free. */
int store_labs_list(struct store *s, struct store_lab **out, size_t *nout);
void store_labs_free(struct store_lab *a, size_t n);

#endif
