/*
 * sched-claim.c: the manager's batch claim. When new work arrives (a job, a
 * bisection step, a reclaimed run), the manager claims for every idle
 * worker in one store transaction (store_run_claim_many) and hands each
 * its claim, instead of waking every worker of the fleet to refresh and
 * claim in a transaction of its own: on a fan-out over 100 machines that
 * was 100 wake-ups and 100 transactions queueing on the store's write
 * lock, most of them finding nothing.
 *
 * The hand-over, under s->mu:
 *   worker, in WAIT with a link and nothing found at its last claim:
 *     ready = 1, klass and group of its machine row, sleeps;
 *   manager: takes the ready workers, claims without s->mu, then sets
 *     handed on each worker it claimed for and wakes them;
 *   worker: REFRESH, FINGERPRINT, then CLAIM takes handed instead of
 *     claiming itself (sched_claim_take), and runs it.
 * A worker that cannot run a claim handed to it (stopped, quarantined, its
 * lease or link gone) gives it back (sched_claim_unhand): the run is queued
 * again, its attempt not counted. A worker's own claim still runs on every
 * pass, so nothing waits for the manager: a kick the manager misses costs
 * at most the idle worker's 1 s pass.
 *
 * Locks: s->mu for the worker fields (sched-int.h); never held across the
 * store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "sched-int.h"

/* Strings may be NULL; 0 or BF_ERR_ALLOC. Under s->mu. */
static int
set_str(char **dst, const char *src)
{
	char *n;

	if (src == NULL || (*dst != NULL && strcmp(*dst, src) == 0)) {
		if (src == NULL) {
			free(*dst);
			*dst = NULL;
		}
		return 0;
	}
	if ((n = strdup(src)) == NULL)
		return BF_ERR_ALLOC;
	free(*dst);
	*dst = n;
	return 0;
}

int
sched_boot_group(const char *boot_key, char **out)
{
	size_t n = boot_key != NULL ? strcspn(boot_key, "@") : 0;

	*out = NULL;
	if (n > 0 && (*out = strndup(boot_key, n)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

int
sched_claim_ready_locked(struct worker *w, const char *klass, const char *boot_key)
{
	char *group = NULL;

	w->ready = 0;
	if (sched_boot_group(boot_key, &group) != 0)
		return BF_ERR_ALLOC;
	if (set_str(&w->klass, klass) != 0) {
		free(group);
		return BF_ERR_ALLOC;
	}
	free(w->group);
	w->group = group;
	w->ready = 1;
	return 0;
}

struct store_claim *
sched_claim_take(struct worker *w)
{
	struct store_claim *c;

	pthread_mutex_lock(&w->s->mu);
	c = w->handed;
	w->handed = NULL;
	pthread_mutex_unlock(&w->s->mu);
	return c;
}

void
sched_claim_give_back(struct sched *s, const char *machine, struct store_claim *c,
    const char *why)
{
	int r;

	r = store_run_retry(s->st, c->run_id, why, s->cfg.max_attempts + c->attempt, NULL);
	if (r != 0 && r != BF_ERR_STATE)
		fprintf(stderr, "benchfleetd: %s, run %lld: giving back a claim: %s (%s); its "
		    "lease will lapse and it is queued again\n", machine, (long long)c->run_id,
		    bf_err_str(r), store_last_error());
	events_run_job_machine(s->cfg.ev, c->run_id, c->job_id, machine);
	store_claim_free(c);
}

void
sched_claim_unhand(struct worker_ctx *x, const char *why)
{
	struct store_claim *c = sched_claim_take(x->w);

	if (c != NULL)
		sched_claim_give_back(x->s, x->w->name, c, why);
}

/* The ready workers' requests, at most cap; their workers in ws[]. Under
 * s->mu. */
static size_t
claim_collect_locked(struct sched *s, struct worker **ws, struct store_claim_req *req,
    size_t cap, struct worker *from, struct worker **next)
{
	struct worker *w;
	size_t n = 0;

	for (w = from; w != NULL && n < cap; w = w->next) {
		if (!w->ready || w->stop || w->exited || w->handed != NULL || w->klass == NULL)
			continue;
		w->ready = 0;		/* asked for once per kick */
		ws[n] = w;
		req[n] = (struct store_claim_req){ .machine = w->name, .klass = w->klass,
		    .boot_group = w->group };
		n++;
	}
	*next = w;
	return n;
}

void
sched_claim_idle(struct sched *s)
{
	struct worker *ws[STORE_CLAIM_MANY_MAX], *from, *next;
	struct store_claim_req req[STORE_CLAIM_MANY_MAX];
	struct store_claim *out[STORE_CLAIM_MANY_MAX];
	size_t n, i, handed;
	int r;

	/*
	 * The worker list and the strings req points to stay: workers are
	 * freed by the manager's reconcile (this thread), and a worker
	 * changes klass and group only while ready, which collect cleared.
	 */
	pthread_mutex_lock(&s->mu);
	from = s->workers;
	for (;;) {
		n = claim_collect_locked(s, ws, req, STORE_CLAIM_MANY_MAX, from, &next);
		pthread_mutex_unlock(&s->mu);
		if (n == 0)
			return;
		r = store_run_claim_many(s->st, req, n, s->cfg.lease_s, out);
		pthread_mutex_lock(&s->mu);
		if (r != 0) {
			/* the workers claim themselves at their next pass */
			fprintf(stderr, "benchfleetd: claiming for %zu idle machines: %s (%s)\n",
			    n, bf_err_str(r), store_last_error());
			pthread_mutex_unlock(&s->mu);
			return;
		}
		for (handed = 0, i = 0; i < n; i++) {
			if (out[i] == NULL)
				continue;
			if (ws[i]->stop || ws[i]->exited || s->stopping) {
				pthread_mutex_unlock(&s->mu);
				sched_claim_give_back(s, ws[i]->name, out[i], "claimed for a machine "
				    "whose worker stopped; queued again");
				pthread_mutex_lock(&s->mu);
				continue;
			}
			ws[i]->handed = out[i];
			pthread_cond_signal(&ws[i]->cv);	/* that worker alone */
			handed++;
		}
		s->claimed_batch += handed;
		from = next;
		if (from == NULL) {
			pthread_mutex_unlock(&s->mu);
			return;
		}
	}
}
