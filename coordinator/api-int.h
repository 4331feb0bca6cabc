/*
 * api-int.h: what the API's modules share: the request and response of one
 * call, and the handler type. Handlers fill a response; api.c turns it into
 * HTTP. Not for use outside coordinator/api*.c.
 */
#ifndef BF_API_INT_H
#define BF_API_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include <microhttpd.h>
#include <jansson.h>

#include "api.h"
#include "auth.h"
#include "buf.h"
#include "caps.h"

struct api {
	struct api_config cfg;
	char *web_dir;
	struct store *st;
	const struct recipes *rs;
	struct sched *sc;
	struct events *ev;		/* may be NULL: no /events */
	atomic_int stopping;		/* set by api_stop: event streams end */
	atomic_int sse_clients;		/* open event streams */
	struct MHD_Daemon *mhd;
	int port;
	atomic_int auth_on;		/* latched: tokens are revoked, never deleted */
	char *tls_cert_pem;		/* owned; the key is wiped on stop */
	char *tls_key_pem;
	size_t tls_key_len;
};

struct api_req {
	struct MHD_Connection *conn;
	const char *method;
	const char *path;
	struct buf body;
	int too_big;
	int64_t id;			/* {id} in the route */
	char name[BF_MAX_NAME + 1];	/* {name} in the route */
	struct auth_ident who;		/* the caller, checked before the handler */
};

struct api_resp {
	unsigned int status;
	json_t *json;			/* owned; or */
	char *text;			/* owned, with */
	size_t text_len;
	const char *ctype;		/* for text; default text/plain; charset=utf-8 */
	struct MHD_Response *raw;	/* owned; or a ready response (a stream) */
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

/* The scheduler's side (cfg.ctl): kick the workers, probe a machine, and
 * whether the daemon (not this process) can read a key file. */
void api_kick(struct api *a);
int api_probe(struct api *a, const char *name);
int api_key_readable(struct api *a, const char *path);

/* api-jobs.c */
void api_jobs_list(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_jobs_create(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_jobs_get(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_jobs_cancel(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_jobs_runs(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_jobs_report(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_runs_get(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_runs_log(struct api *a, struct api_req *rq, struct api_resp *rs);

/* api-events.c */
#define BF_MAX_SSE_CLIENTS	256	/* open event streams; more get 503 */
void api_events(struct api *a, struct api_req *rq, struct api_resp *rs);

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
void api_jobs_list_fed(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_repro_create(struct api *a, struct api_req *rq, struct api_resp *rs);
void api_repro_get(struct api *a, struct api_req *rq, struct api_resp *rs);

#endif
