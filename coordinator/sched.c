/*
 * sched.c: worker threads, one per machine, and the manager that keeps
 * them in step with the machines table.
 *
 * A worker owns its machine's SSH connection; nothing else touches it. It
 * claims a run only while it holds a usable connection, so an unreachable
 * machine never takes runs away from the rest of the fleet: it goes
 * offline and is probed again every probe_interval_s.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "bisect.h"
#include "events.h"
#include "kdispatch.h"
#include "sched-int.h"
#include "sha256.h"

static int
worker_should_stop(struct worker *w)
{
	int r;

	pthread_mutex_lock(&w->s->mu);
	r = w->s->stopping || w->stop;
	pthread_mutex_unlock(&w->s->mu);
	return r;
}

static void
worker_target(const struct sched *s, const struct store_machine *m, struct ssh_target *t)
{
	memset(t, 0, sizeof(*t));
	t->host = m->host;
	t->port = m->port;
	t->user = m->user;
	t->key_path = m->key_path;
	t->known_hosts = s->known_hosts;
	t->connect_timeout_ms = s->cfg.connect_timeout_ms;
}

/* A probe request pending for w (kept for the fingerprint state). */
static int
worker_probe_pending(struct worker *w)
{
	int r;

	pthread_mutex_lock(&w->s->mu);
	r = w->probe_wanted;
	pthread_mutex_unlock(&w->s->mu);
	return r;
}

/* Take a pending probe request; 1 if there was one. */
static int
worker_take_probe(struct worker *w)
{
	int r;

	pthread_mutex_lock(&w->s->mu);
	r = w->probe_wanted;
	w->probe_wanted = 0;
	pthread_mutex_unlock(&w->s->mu);
	return r;
}

static void
worker_set_run(struct worker *w, int64_t run_id)
{
	pthread_mutex_lock(&w->s->mu);
	w->current_run = run_id;
	if (run_id != 0)
		atomic_store(&w->lease_lost, 0);
	pthread_mutex_unlock(&w->s->mu);
}

/*
 * The worker's state machine. One pass of the old loop is now a walk
 * through these states, one handler each, as OpenSSH's channel_pre[] and
 * channel_post[] tables drive a channel; a handler returns the next state.
 *
 *   state        does                                    next
 *   REFRESH      stop? read the machine row; quarantined  EXIT (stopped or deleted),
 *                or held by another coordinator: wait;   WAIT, CONNECT, FINGERPRINT
 *                drop a dead link
 *   CONNECT      connect when the back-off allows         WAIT, FINGERPRINT; EXIT
 *                                                        (offline: handed to the
 *                                                        prober, sched-dormant.c)
 *   FINGERPRINT  `agent probe` when none is stored yet    CLAIM; REFRESH (link lost)
 *                (every probe_interval_s) or asked for
 *   CLAIM        claim a run of the boot it is in; none:  RUN; WAIT; REFRESH (probe
 *                the health probe when it is due, then    failed)
 *                the next step ahead (runner_prestart)
 *   RUN          check the claim, boot, execute, then     REFRESH
 *                worker_apply() the outcome
 *   WAIT         until kicked, stopped or 1 s passed;     REFRESH
 *                without a link, its back-off (a probe
 *                request or stop ends it; kicks do not)
 *
 * Periodic timers (struct worker_timer): "connect" spaces reconnections by
 * retry_delay(); "health" the `true` probe of an idle link; "fingerprint"
 * the agent probe of a machine without a fingerprint.
 */

static int
timer_due(const struct worker_ctx *x, enum worker_timer_id id, time_t interval)
{
	return x->now - x->timer[id].last >= interval;
}

static void
timer_fire(struct worker_ctx *x, enum worker_timer_id id, time_t at)
{
	x->timer[id].last = at;
}

static void
worker_drop_link(struct worker_ctx *x)
{
	transport_close(x->tr);
	x->tr = NULL;
	x->agent_ok = 0;
	x->prestart_due = 0;
}

/*
 * The one place a run's end is written: finish (with the add-a-boot
 * decision inside the store's transaction), retry or requeue, then the
 * machine row, the quarantine count and the events. Every store result is
 * looked at: BF_ERR_STATE means the run is not ours any more (another
 * coordinator took it over after our lease lapsed, or it ended already),
 * which the run's new holder settles; any other failure leaves the run
 * running under a lease that lapses, and store_reclaim() (here or on
 * another coordinator) puts it back in the queue. Returns the store's
 * result for the run.
 */
static int
worker_apply(struct worker_ctx *x, const struct store_claim *c, const struct run_outcome *o)
{
	struct sched *s = x->s;
	struct runner_adaptive ad;
	struct store_held h = { .b = x->held, .nb = x->nheld, .l = x->hlog, .nl = x->nhlog };
	const char *what = "finishing the run";
	char late[BF_DIAG_MSG + 128];
	int r = 0, rm;

	switch (o->action) {
	case RUN_PROCEED:
		return 0;
	case RUN_FINISH:
	case RUN_QUARANTINE:
		/* what the sink held (the last iterations' samples, the lines after
		 * them) goes in the same commit */
		if (o->adaptive && o->state != NULL && strcmp(o->state, "done") == 0) {
			ad = o->ad;
			r = store_run_finish_with(s->st, c->run_id, &h, o->state,
			    o->exit_status, NULL, ad.metric, runner_adaptive_decide, &ad);
			if (r == 0 && ad.note[0] != '\0')
				sched_store_check(x, store_run_log_add(s->st, c->run_id, "coord",
				    ad.note), c->run_id, "storing the adaptive decision");
		} else
			r = store_run_finish_with(s->st, c->run_id, &h,
			    o->state ? o->state : "failed", o->exit_status,
			    o->message[0] ? o->message : NULL, NULL, NULL, NULL);
		if (r != 0 && r != BF_ERR_STATE && x->nheld > 0) {
			/* refused late: what a refusal on arrival makes of it */
			fprintf(stderr, "benchfleetd: %s, run %lld: storing its last samples "
			    "with its end: %s (%s); queued again\n", x->w->name,
			    (long long)c->run_id, bf_err_str(r), store_last_error());
			snprintf(late, sizeof(late), "attempt %d on %s: storing a result failed: "
			    "%s", c->attempt, x->w->name, store_last_error());
			what = "requeueing the run";
			r = store_run_retry(s->st, c->run_id, late, s->cfg.max_attempts +
			    c->attempt, NULL);
		}
		break;
	case RUN_RETRY:
		what = "retrying the run";
		r = store_run_retry(s->st, c->run_id, o->message, s->cfg.max_attempts, NULL);
		break;
	case RUN_REQUEUE:
		what = "requeueing the run";
		r = store_run_retry(s->st, c->run_id, o->message,
		    s->cfg.max_attempts + c->attempt, NULL);
		break;
	}
	if (r == BF_ERR_STATE)
		fprintf(stderr, "benchfleetd: %s, run %lld: %s: it is no longer this "
		    "coordinator's\n", x->w->name, (long long)c->run_id, what);
	else if (r != 0)
		fprintf(stderr, "benchfleetd: %s, run %lld: %s: %s (%s); its lease will lapse "
		    "and it is queued again\n", x->w->name, (long long)c->run_id, what,
		    bf_err_str(r), store_last_error());
	if (o->machine_state != NULL || o->machine_error != NULL) {
		rm = store_machine_update(s->st, x->w->name, o->machine_state, NULL, NULL, NULL,
		    o->machine_error, 0);
		x->store_warned = 0;
		sched_store_check(x, rm, c->run_id, "updating the machine");
	}
	if (o->action == RUN_QUARANTINE && ++x->boot_fails >= s->cfg.boot_failures) {
		char why[160];

		/* Said to a person on the fleet page: what to do there, no curl. */
		snprintf(why, sizeof(why), "quarantined after %d boot failures in a row; "
		    "fix its boot configuration or kernel, then press Clear on the "
		    "dashboard's fleet page", x->boot_fails);
		x->store_warned = 0;
		sched_store_check(x, store_machine_update(s->st, x->w->name, "quarantined",
		    NULL, NULL, NULL, why, 0), c->run_id, "quarantining the machine");
	}
	/* whatever the outcome, the run, its job and the machine changed; and
	 * nothing the sink held outlives the run */
	sched_sink_drop(x);
	events_run_job_machine(s->cfg.ev, c->run_id, c->job_id, x->w->name);
	return r;
}

/* How long after a renewal a pass may skip the next: a second, or a third
 * of a shorter lease. */
static int64_t
lease_skip_ms(const struct sched *s)
{
	int64_t third = (int64_t)s->cfg.lease_s * 1000 / 3;

	return third < 1000 ? third : 1000;
}

static enum worker_state
ws_refresh(struct worker_ctx *x)
{
	struct sched *s = x->s;
	int64_t now_ms;
	int held = 0;

	if (worker_should_stop(x->w))
		return WS_EXIT;
	pthread_mutex_lock(&s->mu);
	x->mgen = s->mgen;
	pthread_mutex_unlock(&s->mu);
	x->may_claim = 0;
	x->now = time(NULL);
	store_machine_free(x->m);
	x->m = NULL;
	if (store_machine_get(s->st, x->w->name, &x->m) != 0)
		return WS_EXIT;		/* deleted */
	if (strcmp(x->m->state, "quarantined") == 0) {
		/* no runs until an admin clears it (POST .../clear) */
		x->boot_fails = 0;
		sched_claim_unhand(x, "claimed for a quarantined machine; queued again");
		return WS_WAIT;
	}
	/* On a shared store another coordinator may drive this machine:
	 * then this worker neither probes nor claims until its lease
	 * lapses. Renewed on the passes at least a second apart (an idle
	 * worker passes once a second): a pass a kick brings sooner, on
	 * the way to a claim, skips the write, the lease being good for
	 * lease_s from the last one. */
	now_ms = bf_mono_ms();
	if (x->lease_ms == 0 || now_ms - x->lease_ms >= lease_skip_ms(s)) {
		if (store_machine_lease(s->st, x->w->name, s->cfg.lease_s, &held) != 0 || !held) {
			x->lease_ms = 0;
			worker_drop_link(x);
			sched_claim_unhand(x, "claimed for a machine another coordinator "
			    "holds; queued again");
			return WS_WAIT;
		}
		x->lease_ms = now_ms;
	}
	if (x->tr != NULL && !transport_alive(x->tr))
		worker_drop_link(x);
	x->env.sudo = x->m->user != NULL && strcmp(x->m->user, "root") != 0;
	return x->tr == NULL ? WS_CONNECT : WS_FINGERPRINT;
}

/* Hand the machine to the prober (sched-dormant.c) and end: 1 when done. */
static int
worker_go_dormant(struct worker_ctx *x)
{
	struct sched *s = x->s;
	int r = 0;

	pthread_mutex_lock(&s->mu);
	if (!s->stopping && !x->w->stop && !x->w->probe_wanted &&
	    sched_dormant_add_locked(s, x->w->name, x->m->host, x->m->port, x->fails, x->seed,
	    x->sleep_until) == 0) {
		x->w->stop = 1;		/* the manager does not count it any more */
		r = 1;
	}
	pthread_mutex_unlock(&s->mu);
	return r;
}

/*
 * Connect to the machine. A failure counts towards probe_failures; only that
 * many in a row make the machine offline, so one lost packet or a restarting
 * sshd does not take a machine out of the fleet.
 */
static enum worker_state
ws_connect(struct worker_ctx *x)
{
	struct sched *s = x->s;
	struct ssh_target t;
	struct bf_diag d;
	const char *state, *msg;
	time_t delay;
	int r, rm, forced;

	/* a probe asked for (POST .../probe) tries at once, back-off or not */
	forced = worker_probe_pending(x->w);
	delay = sched_retry_delay(x->fails, s->cfg.probe_interval_s, x->seed);
	if (!forced && !timer_due(x, WT_CONNECT, delay)) {
		x->sleep_until = x->timer[WT_CONNECT].last + delay;
		return WS_WAIT;
	}
	timer_fire(x, WT_CONNECT, x->now);
	worker_target(s, x->m, &t);
	bf_diag_clear(&d);
	if ((r = s->connect(s->cfg.connect_arg, &t, &x->tr, &d)) != 0) {
		x->tr = NULL;
		x->fails++;
		if (forced)
			(void)worker_take_probe(x->w);	/* answered: it is down */
		state = x->fails >= s->cfg.probe_failures || r == BF_ERR_HOSTKEY ? "offline" : NULL;
		msg = d.msg[0] ? d.msg : bf_err_str(r);
		/* an offline machine failing again as before changes nothing:
		 * no write, no event (a large lab's dead machines stay cheap) */
		if (state == NULL || strcmp(x->m->state, state) != 0 || x->m->last_error == NULL ||
		    strcmp(x->m->last_error, msg) != 0) {
			rm = store_machine_update(s->st, x->m->name, state, NULL, NULL, NULL, msg, 0);
			sched_store_check(x, rm, 0, "updating the machine");
			events_machine(s->cfg.ev, x->m->name);
		}
		x->sleep_until = x->now + sched_retry_delay(x->fails, s->cfg.probe_interval_s, x->seed);
		/* offline: the prober tries it from now on, without this thread */
		if (state != NULL && sched_dormant_enabled(s, x->m->host, x->m->port) &&
		    worker_go_dormant(x))
			return WS_EXIT;
		return WS_WAIT;
	}
	x->fails = 0;
	rm = store_machine_update(s->st, x->m->name, strcmp(x->m->state, "running") == 0 ?
	    NULL : "idle", NULL, NULL, NULL, "", 1);
	sched_store_check(x, rm, 0, "updating the machine");
	events_machine(s->cfg.ev, x->m->name);
	timer_fire(x, WT_HEALTH, x->now);
	return WS_FINGERPRINT;
}

static enum worker_state
ws_fingerprint(struct worker_ctx *x)
{
	struct bf_diag pd;
	int r;

	if (!((x->m->fingerprint == NULL &&
	    timer_due(x, WT_FINGERPRINT, x->s->cfg.probe_interval_s)) || worker_take_probe(x->w)))
		return WS_CLAIM;
	timer_fire(x, WT_FINGERPRINT, x->now);
	bf_diag_clear(&pd);
	if ((r = runner_probe(&x->env, x->tr, &x->agent_ok, &pd)) == 0)
		return WS_CLAIM;
	x->store_warned = 0;
	sched_store_check(x, store_machine_update(x->s->st, x->w->name, NULL, NULL, NULL, NULL,
	    pd.msg[0] ? pd.msg : bf_err_str(r), 0), 0, "updating the machine");
	if (r == BF_ERR_LOST || r == BF_ERR_TIMEOUT) {
		worker_drop_link(x);
		x->fails++;
		return WS_REFRESH;
	}
	/* a machine we cannot fingerprint still runs jobs; the error stays
	 * in last_error */
	return WS_CLAIM;
}

/* A cheap check of an idle link, between runs only. */
static int
worker_health(struct worker_ctx *x)
{
	struct bf_diag d;
	int r, status = -1;

	bf_diag_clear(&d);
	r = transport_capture(x->tr, "true", NULL, NULL, x->s->cfg.connect_timeout_ms, &status,
	    &d);
	x->store_warned = 0;
	if (r == 0 && status == 0) {
		sched_store_check(x, store_machine_update(x->s->st, x->w->name, NULL, NULL, NULL,
		    NULL, NULL, 1), 0, "updating the machine");
		return 0;
	}
	sched_store_check(x, store_machine_update(x->s->st, x->w->name, NULL, NULL, NULL, NULL,
	    d.msg[0] ? d.msg : "health probe failed", 0), 0, "updating the machine");
	return r != 0 ? r : BF_ERR_PROTO;
}

static enum worker_state
ws_claim(struct worker_ctx *x)
{
	struct sched *s = x->s;
	char *group = NULL;
	int r;

	/* the manager's claim for it (sched-claim.c), else its own */
	if ((x->c = sched_claim_take(x->w)) != NULL)
		return WS_RUN;
	/* the boot it is in, to keep a boot's runs together */
	if ((r = sched_boot_group(x->m->boot_key, &group)) == 0)
		r = store_run_claim_boot(s->st, x->m->name, x->m->klass, group, s->cfg.lease_s,
		    &x->c);
	free(group);
	if (r == 0 && x->c != NULL)
		return WS_RUN;
	x->c = NULL;
	sched_store_check(x, r, 0, "claiming a run");
	if (timer_due(x, WT_HEALTH, s->cfg.probe_interval_s)) {
		timer_fire(x, WT_HEALTH, x->now);
		if (worker_health(x) != 0) {
			worker_drop_link(x);
			x->fails++;
			return WS_REFRESH;
		}
	}
	/* idle after a run: start the next step now, not ahead of a run */
	if (x->prestart_due) {
		x->prestart_due = 0;
		runner_prestart(&x->env, x->tr, x->agent_ok);
	}
	x->may_claim = 1;
	return WS_WAIT;
}

static enum worker_state
ws_run(struct worker_ctx *x)
{
	struct sched *s = x->s;
	struct store_claim *c = x->c;
	struct runner_claim *rc = NULL;
	struct run_outcome o;
	struct kdispatch_kernel kk;
	struct boot_kernel bk;
	struct bf_diag cd;
	char group[512];

	x->store_warned = 0;
	bf_diag_clear(&cd);
	if (runner_claim_load(c, s->cfg.workdir_root, &rc, &cd) != 0) {
		fprintf(stderr, "benchfleetd: %s\n", cd.msg);
		memset(&o, 0, sizeof(o));
		o.action = RUN_FINISH;
		o.state = "failed";
		o.exit_status = -1;
		snprintf(o.message, sizeof(o.message), "%s", cd.msg);
		worker_apply(x, c, &o);
		goto out;
	}
	worker_set_run(x->w, c->run_id);
	transport_set_cancel(x->tr, &x->w->lease_lost);
	store_boot_group(c, group, sizeof(group));
	if (sched_kernel_prepare(x, rc, &kk, &bk, &o) == 0)
		runner_boot(&x->env, x->m, x->tr, &x->agent_ok, rc, group, &o);
	if (o.action == RUN_PROCEED && rc->built != NULL)
		sched_kernel_verify(x, rc, &kk, &o);
	if (o.action == RUN_PROCEED) {
		x->boot_fails = 0;
		runner_execute(&x->env, x->tr, &x->agent_ok, rc, &o);
	}
	sched_sink_end(x, c, &o);	/* a hello no snapshot followed, late refusals */
	worker_apply(x, c, &o);
	worker_set_run(x->w, 0);
	timer_fire(x, WT_HEALTH, time(NULL));
	if (atomic_load(&x->w->lease_lost)) {
		/* not ours any more: the machine is fine, the lease is not */
		worker_drop_link(x);
		goto out;
	}
	transport_set_cancel(x->tr, NULL);
	x->prestart_due = !o.link_lost;	/* in ws_claim, if no run waits */
	/* only a link the runner saw go: one that died quietly (a step aborted
	 * by a refused sample) is dropped at the next pass, as ever */
	if (o.link_lost) {
		worker_drop_link(x);
		x->fails = s->cfg.probe_failures;	/* it just failed us mid-run */
		x->store_warned = 0;
		sched_store_check(x, store_machine_update(s->st, x->w->name, "offline", NULL,
		    NULL, NULL, "connection lost during a run", 0), c->run_id,
		    "updating the machine");
		events_machine(s->cfg.ev, x->w->name);
		timer_fire(x, WT_CONNECT, time(NULL));
	}
out:
	runner_claim_free(rc);
	store_claim_free(c);
	x->c = NULL;
	return WS_REFRESH;
}

/* Sleep up to timeout_ms, until stopped or a probe of w is asked for:
 * kicks about new runs do not concern a machine without a link. */
static void
worker_sleep(struct worker *w, int timeout_ms)
{
	struct sched *s = w->s;
	struct timespec ts;

	bf_abstime(CLOCK_REALTIME, timeout_ms, &ts);
	pthread_mutex_lock(&s->mu);
	while (!s->stopping && !w->stop && !w->probe_wanted)
		if (pthread_cond_timedwait(&w->cv, &s->mu, &ts) != 0)
			break;
	pthread_mutex_unlock(&s->mu);
}

/*
 * A worker with a link that found nothing to claim waits, ready, for a
 * claim the manager makes for it when work arrives (sched-claim.c), a
 * change of the machine list, a probe request, or a second, then looks
 * again. One without a link gives back a claim it was handed and sleeps out
 * its back-off instead, so that a thousand offline machines cost a
 * coordinator a thousand wake-ups per back-off interval, not per second; it
 * still refreshes a third of a lease apart, which renews its machine lease
 * in time.
 */
static enum worker_state
ws_wait(struct worker_ctx *x)
{
	struct sched *s = x->s;
	struct worker *w = x->w;
	struct timespec ts;
	time_t left, cap;

	if (x->tr == NULL)
		sched_claim_unhand(x, "claimed for a machine whose link went; queued again");
	if (x->sleep_until != 0) {
		cap = x->s->cfg.lease_s / 3 > 1 ? x->s->cfg.lease_s / 3 : 1;
		left = x->sleep_until - time(NULL);
		x->sleep_until = 0;
		if (left > 0) {
			worker_sleep(x->w, (int)(left < cap ? left : cap) * 1000);
			return WS_REFRESH;
		}
	}
	bf_abstime(CLOCK_REALTIME, 1000, &ts);
	pthread_mutex_lock(&s->mu);
	if (x->may_claim && x->tr != NULL &&
	    sched_claim_ready_locked(w, x->m->klass, x->m->boot_key) != 0)
		w->ready = 0;
	while (!s->stopping && !w->stop && s->mgen == x->mgen && w->handed == NULL &&
	    !w->probe_wanted)
		if (pthread_cond_timedwait(&w->cv, &s->mu, &ts) != 0)
			break;
	w->ready = 0;
	pthread_mutex_unlock(&s->mu);
	return WS_REFRESH;
}

static const struct {
	const char *name;
	enum worker_state (*handler)(struct worker_ctx *x);
} worker_states[] = {
	[WS_REFRESH] = { .name = "refresh", .handler = ws_refresh },
	[WS_CONNECT] = { .name = "connect", .handler = ws_connect },
	[WS_FINGERPRINT] = { .name = "fingerprint", .handler = ws_fingerprint },
	[WS_CLAIM] = { .name = "claim", .handler = ws_claim },
	[WS_RUN] = { .name = "run", .handler = ws_run },
	[WS_WAIT] = { .name = "wait", .handler = ws_wait },
};
_Static_assert(sizeof(worker_states) / sizeof(worker_states[0]) == WS_EXIT,
    "one handler per worker state");

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct sched *s = w->s;
	struct worker_ctx x;
	enum worker_state st = WS_REFRESH;

	memset(&x, 0, sizeof(x));
	x.w = w;
	x.s = s;
	x.seed = 2166136261u;
	for (const char *p = w->name; *p != '\0'; p++)	/* FNV-1a */
		x.seed = (x.seed ^ (unsigned char)*p) * 16777619u;
	x.seed ^= (uint32_t)getpid() ^ (uint32_t)time(NULL);
	if (w->has_init) {	/* woken from dormancy: its back-off goes on */
		x.fails = w->init_fails;
		x.seed = w->init_seed;
	}
	x.timer[WT_CONNECT].name = "connect";
	x.timer[WT_HEALTH].name = "health";
	x.timer[WT_FINGERPRINT].name = "fingerprint";
	x.env.st = s->st;
	x.env.sink.ops = &sched_sink_ops;
	x.env.sink.arg = &x;
	x.env.machine = w->name;
	x.env.agents = s->agents;
	x.env.nagents = s->nagents;
	x.env.agent_remote = s->agent_remote;
	x.env.lease_s = s->cfg.lease_s;
	x.env.max_attempts = s->cfg.max_attempts;
	x.env.link_timeout_ms = s->cfg.link_timeout_ms;
	x.env.ev = s->cfg.ev;
	x.env.recipes = s->cfg.recipes;
	x.env.workdir_root = s->cfg.workdir_root;

	while (st != WS_EXIT)
		st = worker_states[st].handler(&x);
	transport_close(x.tr);
	store_claim_free(x.c);
	/* exited and the last look at handed under one lock: the manager hands
	 * nothing to an exited worker, so no claim is left behind */
	pthread_mutex_lock(&s->mu);
	w->exited = 1;
	w->ready = 0;
	x.c = w->handed;
	w->handed = NULL;
	pthread_mutex_unlock(&s->mu);
	if (x.c != NULL)
		sched_claim_give_back(s, w->name, x.c, "claimed for a machine whose worker "
		    "stopped; queued again");
	store_machine_free(x.m);
	return NULL;
}

void
sched_worker_free(struct worker *w)
{
	if (w == NULL)
		return;
	store_claim_free(w->handed);
	pthread_cond_destroy(&w->cv);
	free(w->klass);
	free(w->group);
	free(w->name);
	free(w);
}

int
sched_spawn_locked(struct sched *s, const char *name, int fails, uint32_t seed,
    int probe_wanted)
{
	struct worker *nw;

	if ((nw = calloc(1, sizeof(*nw))) == NULL)
		return BF_ERR_ALLOC;
	pthread_cond_init(&nw->cv, NULL);
	if ((nw->name = strdup(name)) == NULL) {
		sched_worker_free(nw);
		return BF_ERR_ALLOC;
	}
	nw->s = s;
	nw->probe_wanted = probe_wanted;
	if (fails > 0) {
		nw->has_init = 1;
		nw->init_fails = fails;
		nw->init_seed = seed;
	}
	if (pthread_create(&nw->th, NULL, worker_main, nw) != 0) {
		sched_worker_free(nw);
		return BF_ERR_SYS;
	}
	nw->started = 1;
	nw->next = s->workers;
	s->workers = nw;
	return 0;
}

static void sched_kick_workers(void *arg);

int
sched_start(const struct sched_config *cfg, struct store *st, struct sched **out,
    struct bf_diag *d)
{
	struct sched *s = NULL;
	int r;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return BF_ERR_ALLOC;
	s->cfg = *cfg;
	s->st = st;
	s->connect = cfg->connect != NULL ? cfg->connect : transport_ssh_connect;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	pthread_cond_init(&s->dcv, NULL);
	if ((s->known_hosts = strdup(cfg->known_hosts)) == NULL ||
	    (s->agent_paths[0] = strdup(cfg->agent_local)) == NULL ||
	    (cfg->agent_aarch64 != NULL &&
	    (s->agent_paths[1] = strdup(cfg->agent_aarch64)) == NULL) ||
	    (s->agent_remote = strdup(cfg->agent_remote)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	/* the native agent serves the coordinator's own architecture */
	{
		struct utsname u;

		if (uname(&u) != 0 || (s->native_arch = strdup(u.machine)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
	}
	s->agents[0].arch = s->native_arch;
	s->agents[0].path = s->agent_paths[0];
	s->nagents = 1;
	if (s->agent_paths[1] != NULL && strcmp(s->native_arch, "aarch64") != 0) {
		s->agents[1].arch = "aarch64";
		s->agents[1].path = s->agent_paths[1];
		s->nagents = 2;
	}
	for (size_t i = 0; i < s->nagents; i++) {
		if ((r = sha256_file(s->agents[i].path, s->agents[i].sha256)) != 0) {
			bf_diag_set(d, NULL, "agent binary %s cannot be read", s->agents[i].path);
			goto out;
		}
	}
	if (pthread_create(&s->manager, NULL, sched_manager_main, s) != 0) {
		bf_diag_set(d, NULL, "cannot start the scheduler thread");
		r = BF_ERR_SYS;
		goto out;
	}
	s->manager_started = 1;
	{
		struct bisect_env be = { .st = st, .rs = cfg->recipes, .ev = cfg->ev,
		    .known_hosts = s->known_hosts, .connect_timeout_ms = cfg->connect_timeout_ms,
		    .link_timeout_ms = cfg->link_timeout_ms, .connect = s->connect,
		    .connect_arg = cfg->connect_arg, .agents = s->agents, .nagents = s->nagents,
		    .agent_remote = s->agent_remote, .workdir_root = cfg->workdir_root,
		    .kick = sched_kick_workers, .kick_arg = s };

		if (!cfg->no_bisect && (r = bisect_driver_start(&be, &s->bisect)) != 0) {
			bf_diag_set(d, NULL, "cannot start the bisection driver");
			goto out;
		}
	}
	if ((s->cfg.connect == NULL || s->cfg.reach != NULL) &&
	    (r = sched_dormant_start(s)) != 0) {
		bf_diag_set(d, NULL, "cannot start the prober of offline machines");
		goto out;
	}
	*out = s;
	s = NULL;
	r = 0;
out:
	sched_stop(s);
	return r;
}

int
sched_probe(struct sched *s, const char *name)
{
	struct store_machine *m = NULL;
	struct worker *w;
	int r = BF_ERR_NOTFOUND, known;

	if (s == NULL || name == NULL)
		return BF_ERR_INVALID;
	/* read before s->mu, as sched_reconcile reads the names */
	known = store_machine_get(s->st, name, &m) == 0;
	store_machine_free(m);
	pthread_mutex_lock(&s->mu);
	for (w = s->workers; w != NULL; w = w->next)
		if (!w->stop && strcmp(w->name, name) == 0) {
			w->probe_wanted = 1;
			pthread_cond_signal(&w->cv);
			r = 0;
		}
	if (r != 0)
		r = sched_dormant_probe_locked(s, name);
	/* Registered since the last reconcile (kicks are coalesced, one per
	 * 200 ms): no worker yet. Start it now, probe wanted, rather than
	 * answer "no worker" to a probe right after the machine was added;
	 * the next reconcile finds it running. */
	if (r == BF_ERR_NOTFOUND && known && !s->stopping)
		r = sched_spawn_locked(s, name, 0, 0, 1);
	pthread_mutex_unlock(&s->mu);
	return r;
}

void
sched_stats(struct sched *s, struct sched_stats *out)
{
	struct worker *w;

	memset(out, 0, sizeof(*out));
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	for (w = s->workers; w != NULL; w = w->next) {
		out->workers += w->started && !w->exited;
		out->ready += w->ready;
	}
	out->batch_claims = s->claimed_batch;
	out->reconciles = s->reconciles;
	out->prober_passes = s->prober_passes;
	out->dormant = s->ndormant;
	out->probed = s->probed;
	out->woken = s->woken;
	pthread_mutex_unlock(&s->mu);
}

void
sched_wake_locked(struct sched *s, unsigned what)
{
	struct worker *w;

	if (what & SCHED_WAKE_MANAGER)
		pthread_cond_signal(&s->cv);
	if (what & SCHED_WAKE_PROBER)
		pthread_cond_signal(&s->dcv);
	if (what & SCHED_WAKE_WORKERS)
		for (w = s->workers; w != NULL; w = w->next)
			pthread_cond_signal(&w->cv);
}

/* The workers only: the bisection driver's new jobs. */
static void
sched_kick_workers(void *arg)
{
	struct sched *s = arg;

	pthread_mutex_lock(&s->mu);
	s->gen++;
	s->wgen++;
	sched_wake_locked(s, SCHED_WAKE_MANAGER);	/* it claims for the idle */
	pthread_mutex_unlock(&s->mu);
}

void
sched_kick_machines(struct sched *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->gen++;
	s->mgen++;
	sched_wake_locked(s, SCHED_WAKE_MANAGER | SCHED_WAKE_WORKERS);
	pthread_mutex_unlock(&s->mu);
}

void
sched_kick(struct sched *s)
{
	if (s == NULL)
		return;
	sched_kick_workers(s);
	bisect_driver_kick(s->bisect);
}

int
sched_stop(struct sched *s)
{
	struct worker *w, *next;
	int i, busy = 0;

	if (s == NULL)
		return 0;
	pthread_mutex_lock(&s->mu);
	s->stopping = 1;
	sched_wake_locked(s, SCHED_WAKE_MANAGER | SCHED_WAKE_WORKERS | SCHED_WAKE_PROBER);
	pthread_mutex_unlock(&s->mu);
	if (s->manager_started)
		pthread_join(s->manager, NULL);
	s->manager_started = 0;
	bisect_driver_stop(s->bisect);
	s->bisect = NULL;
	sched_dormant_stop(s);
	/* A worker inside a measured step may not notice for a long time; give
	 * the others a moment and leave the busy ones to the process exit. */
	for (i = 0; i < 30; i++) {
		pthread_mutex_lock(&s->mu);
		for (busy = 0, w = s->workers; w != NULL; w = w->next)
			busy += w->started && !w->exited;
		pthread_mutex_unlock(&s->mu);
		if (busy == 0)
			break;
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
	}
	if (busy != 0)
		return busy;
	for (w = s->workers; w != NULL; w = next) {
		next = w->next;
		if (w->started)
			pthread_join(w->th, NULL);
		sched_worker_free(w);
	}
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	pthread_cond_destroy(&s->dcv);
	free(s->known_hosts);
	free(s->agent_paths[0]);
	free(s->agent_paths[1]);
	free(s->native_arch);
	free(s->agent_remote);
	free(s);
	return 0;
}
