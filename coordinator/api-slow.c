/*
 * api-slow.c: handlers that wait, off the API's pool.
 *
 * The pool has as many threads as CPUs (api.c), each serving many
 * connections over poll(). A handler that waits on something outside the
 * process (a bundle fetched from another lab, a probe over SSH, a report
 * of millions of samples) would hold its pool thread, and with it every
 * other connection of that thread: two slow fetches stopped the whole API
 * of a 2-CPU coordinator, and the fetch cap (BF_MAX_FETCHES) was never
 * reached because the third request waited for a pool thread instead of
 * being refused.
 *
 * A route marked slow therefore runs on a thread of its own: the pool
 * thread suspends the connection and goes back to the others; the slow
 * thread runs api_dispatch() into a response it owns, marks it ready and
 * resumes the connection; libmicrohttpd then calls api_access() again on a
 * pool thread, which sends it (api_slow_take). A suspended connection is
 * touched by nothing else meanwhile, so the handler may read its headers
 * and arguments as on the pool. At most BF_MAX_API_SLOW run at once; one
 * more gets 503 at once. api_stop waits for them (api_slow_drain) before
 * it stops MHD, since MHD may not be stopped with a connection suspended;
 * each slow handler is bounded by its own deadlines (fetch.c, ssh.c).
 *
 * States of rq->slow: API_SLOW_NONE -> API_SLOW_RUNNING (api_slow_start,
 * pool thread) -> API_SLOW_READY (slow thread, then resume) -> API_SLOW_NONE
 * (api_slow_take, pool thread, which takes the response).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api-int.h"

struct api_slow_job {
	struct api *a;
	struct api_req *rq;
};

int
api_slow_init(struct api *a)
{
	if (pthread_mutex_init(&a->slow_mu, NULL) != 0)
		return BF_ERR_ALLOC;
	if (pthread_cond_init(&a->slow_cv, NULL) != 0) {
		pthread_mutex_destroy(&a->slow_mu);
		return BF_ERR_ALLOC;
	}
	a->slow_inited = 1;
	return 0;
}

static void *
api_slow_main(void *arg)
{
	struct api_slow_job *j = arg;
	struct api *a = j->a;
	struct api_req *rq = j->rq;
	struct MHD_Connection *conn = rq->conn;

	free(j);
	api_dispatch(a, rq, rq->slow_rs);
	atomic_store(&rq->slow, API_SLOW_READY);
	/* rq is ours until this call, and may be freed after it */
	MHD_resume_connection(conn);
	pthread_mutex_lock(&a->slow_mu);
	a->slow_n--;
	pthread_cond_broadcast(&a->slow_cv);
	pthread_mutex_unlock(&a->slow_mu);
	return NULL;
}

int
api_slow_start(struct api *a, struct api_req *rq, struct api_resp *rs)
{
	struct api_slow_job *j = NULL;
	pthread_attr_t at;
	pthread_t t;
	int busy, started = 0;

	pthread_mutex_lock(&a->slow_mu);
	busy = a->slow_n >= BF_MAX_API_SLOW || atomic_load(&a->stopping);
	if (!busy)
		a->slow_n++;
	pthread_mutex_unlock(&a->slow_mu);
	if (busy) {
		api_error(rs, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "busy: %d slow requests "
		    "(fetches, probes, reports) are under way; try again", BF_MAX_API_SLOW);
		return 0;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL ||
	    (rq->slow_rs = calloc(1, sizeof(*rq->slow_rs))) == NULL)
		goto out;
	j->a = a;
	j->rq = rq;
	atomic_store(&rq->slow, API_SLOW_RUNNING);
	/* suspended before the thread may resume it */
	MHD_suspend_connection(rq->conn);
	if (pthread_attr_init(&at) == 0) {
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		started = pthread_create(&t, &at, api_slow_main, j) == 0;
		pthread_attr_destroy(&at);
	}
	if (started)
		return 1;
	MHD_resume_connection(rq->conn);
	atomic_store(&rq->slow, API_SLOW_NONE);
out:
	free(j);
	free(rq->slow_rs);
	rq->slow_rs = NULL;
	pthread_mutex_lock(&a->slow_mu);
	a->slow_n--;
	pthread_cond_broadcast(&a->slow_cv);
	pthread_mutex_unlock(&a->slow_mu);
	api_error(rs, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "busy: no thread for a slow "
	    "request; try again");
	return 0;
}

int
api_slow_take(struct api_req *rq, struct api_resp *rs)
{
	if (atomic_load(&rq->slow) != API_SLOW_READY)
		return 0;
	*rs = *rq->slow_rs;
	free(rq->slow_rs);
	rq->slow_rs = NULL;
	atomic_store(&rq->slow, API_SLOW_NONE);
	return 1;
}

void
api_slow_free(struct api_req *rq)
{
	struct api_resp *rs = rq->slow_rs;

	if (rs == NULL)
		return;
	json_decref(rs->json);
	free(rs->text);
	if (rs->raw != NULL)
		MHD_destroy_response(rs->raw);
	free(rs);
	rq->slow_rs = NULL;
}

void
api_slow_drain(struct api *a)
{
	if (!a->slow_inited)
		return;
	pthread_mutex_lock(&a->slow_mu);
	while (a->slow_n > 0)
		pthread_cond_wait(&a->slow_cv, &a->slow_mu);
	pthread_mutex_unlock(&a->slow_mu);
}

void
api_slow_fini(struct api *a)
{
	if (!a->slow_inited)
		return;
	pthread_cond_destroy(&a->slow_cv);
	pthread_mutex_destroy(&a->slow_mu);
	a->slow_inited = 0;
}
