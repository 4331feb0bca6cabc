/*
 * api-view.h: the store's typed rows as the API shows them in JSON. The
 * store returns structs (store.h); this is the one place their JSON shape
 * is written, shared by the handlers (api-*.c), the event stream
 * (events.c) and bundles (bundle.c), so a field cannot drift between them.
 */
#ifndef BF_API_VIEW_H
#define BF_API_VIEW_H

#include <stdint.h>
#include <jansson.h>

#include "store.h"

/*
 * {"id","recipe","name","state","created_at","finished_at","started_at",
 *  "machine_class","machine_names","runs_total","runs_done","runs_failed",
 *  "runs_running","runs_queued","runs_cancelled","runs_lost",
 *  "runs_boot_failed"} and "spec" when j has one. runs_failed counts failed,
 * lost and boot-failed runs (the last two also apart); started_at and
 * finished_at are null until then; machine_names is an array or null. New
 * reference; NULL on ENOMEM.
 */
json_t *api_view_job(const struct store_job *j);
/* store_job_get, then api_view_job (with "spec"). BF_ERR_NOTFOUND,
 * BF_ERR_ALLOC, BF_ERR_DB. New reference in *out. */
int api_view_job_get(struct store *st, int64_t id, json_t **out);

/*
 * A machine as every API role sees it: {"name","host","port","user","class",
 * "state","hostname","kernel","arch","last_error","created_at","last_seen",
 * "fingerprint","fingerprint_sha256","boot","boot_error","boot_key"}. No
 * key path (the API has no use for it, and where the lab's key lives is
 * worth knowing only to an attacker), and a boot config that names
 * profiles, never a command (boot_config_view); boot_error says why the
 * boot config cannot boot. New reference; NULL for m NULL or on ENOMEM.
 */
json_t *api_view_machine(const struct store_machine *m);

/* {"audit":[{"id","at","actor","action","subject","detail"}]} of n rows;
 * subject and detail null when absent. New reference; NULL on ENOMEM. */
json_t *api_view_audit(const struct store_audit_row *a, size_t n);
/* {"recipes":[{"name","sha256","actor","created_at"}]}. */
json_t *api_view_recipes_imported(const struct store_recipe_imp *a, size_t n);
/* {"labs":[{"name","public_key","fingerprint","source","actor","created_at"}]}. */
json_t *api_view_labs(const struct store_lab *a, size_t n);

/* {"run":id,"lines":[{"seq","stream","line","at"}]}. */
json_t *api_view_run_log(int64_t run_id, const struct store_log_line *a, size_t n);
/* store_run_log, then api_view_run_log. BF_ERR_NOTFOUND, BF_ERR_ALLOC,
 * BF_ERR_DB. New reference in *out. */
int api_view_run_log_get(struct store *st, int64_t run_id, int64_t after_seq, size_t limit,
    json_t **out);

struct store_token_row;
/* {"tokens":[{"id","name","role","created_at","last_used","revoked_at"}]}
 * (benchfleetd token list --json); the times null when not yet. */
json_t *api_view_tokens(const struct store_token_row *a, size_t n);

/*
 * A run: {"id","job_id","cell_index","label","axes":{},"values":{},"boot",
 *  "attempt","state","machine","hostname","kernel","boot_id","started_at",
 *  "finished_at","exit_status","error","knobs_requested","knobs",
 *  "req_kernel","req_cmdline","cmdline","snapshot_sha256",
 *  "fingerprint_doc_sha256","req_machine",
 *  "samples":[{"boot","iteration","metric","value","unit"}]}; what is not
 * known yet is null, a damaged stored JSON value too. New reference; NULL
 * for r NULL or on ENOMEM.
 */
json_t *api_view_run(const struct store_run *r);
/* {"runs":[api_view_run, ...]} in rs's order. New reference; NULL on ENOMEM. */
json_t *api_view_runs(const struct store_runs *rs);
/* store_job_runs, then api_view_runs (each "samples" empty unless
 * with_samples). BF_ERR_NOTFOUND, BF_ERR_ALLOC, BF_ERR_DB. New reference
 * in *out. */
int api_view_job_runs_get(struct store *st, int64_t job_id, int with_samples, json_t **out);
/* store_run_get, then api_view_run. Same errors. New reference in *out. */
int api_view_run_get(struct store *st, int64_t run_id, json_t **out);
/*
 * A job's cells with their done runs' samples (bundles, reproductions):
 * {"job":id,"recipe":...,"cells":[{"cell_index","label","axes":{},
 *  "samples":[{"metric","unit","boot","iteration","value","run"}]}]}.
 * New reference; NULL on ENOMEM.
 */
json_t *api_view_cells(const struct store_cells *c);
/* store_job_cells, then api_view_cells. BF_ERR_NOTFOUND, BF_ERR_ALLOC,
 * BF_ERR_DB. New reference in *out. */
int api_view_job_cells_get(struct store *st, int64_t job_id, json_t **out);

/*
 * ss->doc from its typed cells: {"job","recipe","cells":[{"cell_index",
 * "label","axes"}]}, parallel to ss->cell (the report walks both). A doc
 * it had is replaced. BF_ERR_ALLOC (ss->doc may then be partial: free ss).
 */
int api_view_samples_doc(struct store_samples *ss);
/* store_job_samples, then api_view_samples_doc. BF_ERR_NOTFOUND,
 * BF_ERR_ALLOC, BF_ERR_DB. *out freed with store_samples_free(). */
int api_view_samples_get(struct store *st, int64_t job_id, struct store_samples **out);

#endif
