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

#endif
