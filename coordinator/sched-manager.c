/*
 * sched-manager.c: the scheduler's manager thread. It keeps the workers in
 * step with the machines table (a worker per machine with a link or on its
 * way to one; sched-dormant.c holds the offline ones), renews the leases of
 * the runs in flight, takes over what a dead coordinator of a shared store
 * left, and on a kick about new work claims for the idle workers
 * (sched-claim.c).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "sched-int.h"

/* Wait until kicked, stopped or timeout_ms passed. */
static void
sched_wait(struct sched *s, uint64_t seen, int timeout_ms)
{
	struct timespec ts;

	bf_abstime(CLOCK_REALTIME, timeout_ms, &ts);
	pthread_mutex_lock(&s->mu);
	while (!s->stopping && s->gen == seen)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) != 0)
			break;
	pthread_mutex_unlock(&s->mu);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is name in the sorted array v[0..n)? */
static int
name_in(char *const *v, size_t n, const char *name)
{
	return n > 0 && bsearch(&name, v, n, sizeof(*v), name_cmp) != NULL;
}

/*
 * Start workers for new machines, stop those of deleted ones, reap. Every
 * kick about machines comes here, and registering a lab of N machines
 * kicks N times: the two sides are matched by sorted names, N log N, not
 * N * N.
 */
static void
sched_reconcile(struct sched *s)
{
	struct worker *w, **wp;
	char **mnames = NULL, **wnames = NULL;
	size_t n = 0, nw_live = 0, i;
	int stopped = 0;

	pthread_mutex_lock(&s->mu);
	s->reconciles++;
	pthread_mutex_unlock(&s->mu);
	if (store_machine_names(s->st, &mnames, &n) != 0)
		return;
	if (n > 1)
		qsort(mnames, n, sizeof(*mnames), name_cmp);
	pthread_mutex_lock(&s->mu);
	for (w = s->workers; w != NULL; w = w->next)
		nw_live++;
	nw_live += s->ndormant;
	if (nw_live > 0 && (wnames = calloc(nw_live, sizeof(*wnames))) == NULL) {
		pthread_mutex_unlock(&s->mu);
		store_names_free(mnames, n);
		return;
	}
	nw_live = 0;
	for (w = s->workers; w != NULL; w = w->next) {
		if (!w->stop && !name_in(mnames, n, w->name)) {
			w->stop = 1;
			stopped = 1;
		}
		if (!w->stop)
			wnames[nw_live++] = w->name;
	}
	if (stopped)	/* a sleeping worker of a deleted machine ends now */
		sched_wake_locked(s, SCHED_WAKE_WORKERS);
	/* a dormant machine has no worker and needs none; a deleted one goes */
	sched_dormant_sync_locked(s, mnames, n);
	nw_live += sched_dormant_names_locked(s, wnames + nw_live, s->ndormant);
	if (nw_live > 1)
		qsort(wnames, nw_live, sizeof(*wnames), name_cmp);
	for (i = 0; i < n && !s->stopping; i++) {
		if (name_in(wnames, nw_live, mnames[i]))
			continue;
		(void)sched_spawn_locked(s, mnames[i], 0, 0, 0);
	}
	/* Reap the workers that have ended. */
	for (wp = &s->workers; *wp != NULL;) {
		w = *wp;
		if (w->exited) {
			*wp = w->next;
			pthread_mutex_unlock(&s->mu);
			pthread_join(w->th, NULL);
			sched_worker_free(w);
			pthread_mutex_lock(&s->mu);
			wp = &s->workers;
			continue;
		}
		wp = &w->next;
	}
	pthread_mutex_unlock(&s->mu);
	free(wnames);
	store_names_free(mnames, n);
}

/* Renew the leases of the runs in flight: a step can be silent for far
 * longer than a lease (a kernel build), and the lease must only lapse when
 * this coordinator is gone. */
static void
sched_renew(struct sched *s)
{
	int64_t *ids = NULL;
	struct worker *w;
	size_t n = 0, cap = 0, i;

	pthread_mutex_lock(&s->mu);
	for (w = s->workers; w != NULL; w = w->next)
		cap++;
	if (cap > 0 && (ids = calloc(cap, sizeof(*ids))) != NULL)
		for (w = s->workers; w != NULL && n < cap; w = w->next)
			if (w->current_run != 0)
				ids[n++] = w->current_run;
	pthread_mutex_unlock(&s->mu);
	for (i = 0; i < n; i++) {
		if (store_run_renew(s->st, ids[i], s->cfg.lease_s) != BF_ERR_STATE)
			continue;
		/* Another coordinator took the run over (our lease lapsed while
		 * the store was out of reach): stop the step at once, so that
		 * the run never executes twice at the same time. A run that has
		 * just ended also answers STATE; its worker has moved on. */
		pthread_mutex_lock(&s->mu);
		for (w = s->workers; w != NULL; w = w->next)
			if (w->current_run == ids[i])
				atomic_store(&w->lease_lost, 1);
		pthread_mutex_unlock(&s->mu);
	}
	free(ids);
}

void *
sched_manager_main(void *arg)
{
	struct sched *s = arg;
	time_t last_renew = 0;
	int64_t last_reconcile = 0, since;
	uint64_t gen, mgen, wgen, mseen = 0, wseen = 0;
	int stopping, wait_ms;

	for (;;) {
		pthread_mutex_lock(&s->mu);
		gen = s->gen;
		mgen = s->mgen;
		wgen = s->wgen;
		pthread_mutex_unlock(&s->mu);
		/* the machine list on a kick about machines, at most every
		 * SCHED_RECONCILE_MIN_MS: a lab registering 10,000 machines
		 * would otherwise read every name per request; and every few
		 * seconds for what a kick does not announce (a machine another
		 * coordinator of a shared store registered). A kick about work
		 * does not read it: a stream of jobs would, per job. */
		since = bf_mono_ms() - last_reconcile;
		wait_ms = 1000;
		if (last_reconcile == 0 || since >= SCHED_RECONCILE_S * 1000 ||
		    (mgen != mseen && since >= SCHED_RECONCILE_MIN_MS)) {
			mseen = mgen;
			last_reconcile = bf_mono_ms();
			sched_reconcile(s);
		} else if (mgen != mseen)
			wait_ms = (int)(SCHED_RECONCILE_MIN_MS - since);
		/* new work: claim for the idle workers at once (sched-claim.c) */
		if (wgen != wseen) {
			wseen = wgen;
			sched_claim_idle(s);
		}
		if (time(NULL) - last_renew >= s->cfg.lease_s / 3) {
			size_t nre = 0;

			last_renew = time(NULL);
			sched_renew(s);
			/* take over what a dead coordinator of a shared store left */
			if (store_reclaim(s->st, &nre) == 0 && nre > 0)
				sched_kick(s);
		}
		pthread_mutex_lock(&s->mu);
		stopping = s->stopping;
		pthread_mutex_unlock(&s->mu);
		if (stopping)
			break;
		sched_wait(s, gen, wait_ms);
	}
	return NULL;
}
