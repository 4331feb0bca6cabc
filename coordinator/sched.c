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

#include "runner.h"
#include "sched.h"
#include "sha256.h"
#include "ssh.h"

struct worker {
	struct sched *s;
	char *name;
	pthread_t th;
	int started;
	int stop;		/* under s->mu */
	int exited;		/* under s->mu */
	int64_t current_run;	/* under s->mu; 0 when idle */
	atomic_int lease_lost;	/* the store gave current_run to another coordinator */
	int probe_wanted;	/* under s->mu: fingerprint again when idle */
	struct worker *next;
};

struct sched {
	struct sched_config cfg;
	char *known_hosts, *agent_remote;
	struct runner_agent agents[2];
	char *agent_paths[2];
	size_t nagents;
	char *native_arch;
	struct store *st;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t gen;		/* bumped by every kick */
	int stopping;
	pthread_t manager;
	int manager_started;
	struct worker *workers;
};

/* Wait until kicked, stopped or timeout_ms passed. */
static void
sched_wait(struct sched *s, uint64_t seen, int timeout_ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->mu);
	while (!s->stopping && s->gen == seen)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) != 0)
			break;
	pthread_mutex_unlock(&s->mu);
}

static int
worker_should_stop(struct worker *w)
{
	int r;

	pthread_mutex_lock(&w->s->mu);
	r = w->s->stopping || w->stop;
	pthread_mutex_unlock(&w->s->mu);
	return r;
}

static uint64_t
sched_gen(struct sched *s)
{
	uint64_t g;

	pthread_mutex_lock(&s->mu);
	g = s->gen;
	pthread_mutex_unlock(&s->mu);
	return g;
}

/*
 * Connect to the machine. A failure counts towards probe_failures; only that
 * many in a row make the machine offline, so one lost packet or a restarting
 * sshd does not take a machine out of the fleet.
 */
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

static int
worker_connect(struct worker *w, const struct store_machine *m, int *failsp,
    struct ssh_conn **connp)
{
	struct sched *s = w->s;
	struct ssh_target t;
	struct bf_diag d;
	int r;

	worker_target(s, m, &t);
	bf_diag_clear(&d);
	if ((r = ssh_connect(&t, connp, &d)) != 0) {
		(*failsp)++;
		store_machine_update(s->st, m->name,
		    *failsp >= s->cfg.probe_failures || r == BF_ERR_HOSTKEY ? "offline" : NULL,
		    NULL, NULL, NULL, d.msg[0] ? d.msg : bf_err_str(r), 0);
		events_machine(s->cfg.ev, m->name);
		return r;
	}
	*failsp = 0;
	store_machine_update(s->st, m->name, strcmp(m->state, "running") == 0 ? NULL : "idle",
	    NULL, NULL, NULL, "", 1);
	events_machine(s->cfg.ev, m->name);
	return 0;
}

/* A cheap check of an idle connection, between runs only. */
static int
worker_probe(struct worker *w, struct ssh_conn *conn)
{
	struct bf_diag d;
	int r, status = -1;

	bf_diag_clear(&d);
	r = ssh_exec_capture(conn, "true", NULL, NULL, w->s->cfg.connect_timeout_ms, &status,
	    &d);
	if (r == 0 && status == 0) {
		store_machine_update(w->s->st, w->name, NULL, NULL, NULL, NULL, NULL, 1);
		return 0;
	}
	store_machine_update(w->s->st, w->name, NULL, NULL, NULL, NULL,
	    d.msg[0] ? d.msg : "health probe failed", 0);
	return r != 0 ? r : BF_ERR_PROTO;
}

/* Seconds before reconnecting after fails failures: 0, 1, 2, 4 ... max. */
static time_t
retry_delay(int fails, int max)
{
	if (fails <= 0)
		return 0;
	if (fails > 20 || (1L << (fails - 1)) > max)
		return max;
	return (time_t)1 << (fails - 1);
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

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct sched *s = w->s;
	struct store_machine *m = NULL;
	struct store_claim *c = NULL;
	struct ssh_conn *conn = NULL;
	struct runner_env env;
	time_t last_try = 0, last_probe = 0, last_fp = 0, now;
	int agent_ok = 0, fails = 0, boot_fails = 0, held = 0, r;
	char group[512];
	struct ssh_target target;
	uint64_t gen;

	memset(&env, 0, sizeof(env));
	env.st = s->st;
	env.machine = w->name;
	env.agents = s->agents;
	env.nagents = s->nagents;
	env.agent_remote = s->agent_remote;
	env.lease_s = s->cfg.lease_s;
	env.max_attempts = s->cfg.max_attempts;
	env.link_timeout_ms = s->cfg.link_timeout_ms;
	env.ev = s->cfg.ev;
	env.recipes = s->cfg.recipes;
	env.workdir_root = s->cfg.workdir_root;

	while (!worker_should_stop(w)) {
		gen = sched_gen(s);
		now = time(NULL);
		store_machine_free(m);
		m = NULL;
		if (store_machine_get(s->st, w->name, &m) != 0)
			break;		/* deleted */
		if (strcmp(m->state, "quarantined") == 0) {
			/* no runs until an admin clears it (POST .../clear) */
			boot_fails = 0;
			sched_wait(s, gen, 1000);
			continue;
		}
		/* On a shared store another coordinator may drive this machine:
		 * then this worker neither probes nor claims until its lease
		 * lapses. Renewed on every pass (at most a second apart). */
		if (store_machine_lease(s->st, w->name, s->cfg.lease_s, &held) != 0 || !held) {
			ssh_close(conn);
			conn = NULL;
			agent_ok = 0;
			sched_wait(s, gen, 1000);
			continue;
		}
		if (conn != NULL && !ssh_alive(conn)) {
			ssh_close(conn);
			conn = NULL;
			agent_ok = 0;
		}
		if (conn == NULL) {
			if (now - last_try < retry_delay(fails, s->cfg.probe_interval_s)) {
				sched_wait(s, gen, 1000);
				continue;
			}
			last_try = now;
			if (worker_connect(w, m, &fails, &conn) != 0) {
				conn = NULL;
				sched_wait(s, gen, 1000);
				continue;
			}
			last_probe = now;
		}
		env.sudo = m->user != NULL && strcmp(m->user, "root") != 0;
		if ((m->fingerprint == NULL && now - last_fp >= s->cfg.probe_interval_s) ||
		    worker_take_probe(w)) {
			struct bf_diag pd;

			last_fp = now;
			bf_diag_clear(&pd);
			if ((r = runner_probe(&env, conn, &agent_ok, &pd)) != 0) {
				store_machine_update(s->st, w->name, NULL, NULL, NULL, NULL,
				    pd.msg[0] ? pd.msg : bf_err_str(r), 0);
				if (r == BF_ERR_LOST || r == BF_ERR_TIMEOUT) {
					ssh_close(conn);
					conn = NULL;
					agent_ok = 0;
					fails++;
					continue;
				}
				/* a machine we cannot fingerprint still runs jobs;
				 * the error stays in last_error */
			}
		}
		/* the boot it is in, without its boot_id, to keep a boot's runs
		 * together (see store_run_claim_boot) */
		group[0] = '\0';
		if (m->boot_key != NULL)
			snprintf(group, sizeof(group), "%.*s", (int)strcspn(m->boot_key, "@"),
			    m->boot_key);
		if ((r = store_run_claim_boot(s->st, m->name, m->klass, group[0] ? group : NULL,
		    s->cfg.lease_s, &c)) != 0 || c == NULL) {
			if (now - last_probe >= s->cfg.probe_interval_s) {
				last_probe = now;
				if (worker_probe(w, conn) != 0) {
					ssh_close(conn);
					conn = NULL;
					agent_ok = 0;
					fails++;
					continue;
				}
			}
			sched_wait(s, gen, 1000);
			continue;
		}
		{
			struct bf_diag cd;

			bf_diag_clear(&cd);
			if (runner_check_claim(c, s->cfg.workdir_root, &cd) != 0) {
				fprintf(stderr, "benchfleetd: %s\n", cd.msg);
				store_run_finish(s->st, c->run_id, "failed", -1, cd.msg);
				events_run(s->cfg.ev, c->run_id);
				events_job(s->cfg.ev, c->job_id);
				store_claim_free(c);
				c = NULL;
				continue;
			}
		}
		worker_set_run(w, c->run_id);
		worker_target(s, m, &target);
		ssh_set_cancel(conn, &w->lease_lost);
		if ((r = runner_boot(&env, m, &target, &conn, &agent_ok, c)) == 0) {
			boot_fails = 0;
			ssh_set_cancel(conn, &w->lease_lost);
			r = runner_execute(&env, conn, &agent_ok, c);
		} else if (r == BF_ERR_STATE && ++boot_fails >= s->cfg.boot_failures) {
			char why[128];

			snprintf(why, sizeof(why), "quarantined after %d boot failures in a row; "
			    "clear with POST /api/v1/machines/%s/clear", boot_fails, w->name);
			store_machine_update(s->st, w->name, "quarantined", NULL, NULL, NULL, why, 0);
			events_machine(s->cfg.ev, w->name);
		}
		worker_set_run(w, 0);
		if (conn == NULL) {
			agent_ok = 0;
			r = BF_ERR_LOST;
		}
		store_claim_free(c);
		c = NULL;
		last_probe = time(NULL);
		if (atomic_load(&w->lease_lost)) {
			/* not ours any more: the machine is fine, the lease is not */
			ssh_close(conn);
			conn = NULL;
			agent_ok = 0;
			continue;
		}
		ssh_set_cancel(conn, NULL);
		if (r == BF_ERR_LOST || r == BF_ERR_TIMEOUT) {
			ssh_close(conn);
			conn = NULL;
			agent_ok = 0;
			fails = s->cfg.probe_failures;	/* it just failed us mid-run */
			store_machine_update(s->st, w->name, "offline", NULL, NULL, NULL,
			    "connection lost during a run", 0);
			events_machine(s->cfg.ev, w->name);
			last_try = time(NULL);
		}
	}
	ssh_close(conn);
	store_machine_free(m);
	pthread_mutex_lock(&s->mu);
	w->exited = 1;
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static void
worker_free(struct worker *w)
{
	if (w == NULL)
		return;
	free(w->name);
	free(w);
}

/* Start workers for new machines, stop those of deleted ones, reap. */
static void
sched_reconcile(struct sched *s)
{
	struct store_machine *ms = NULL;
	struct worker *w, **wp, *nw;
	size_t n = 0, i;
	int found;

	if (store_machine_list(s->st, &ms, &n) != 0)
		return;
	pthread_mutex_lock(&s->mu);
	for (w = s->workers; w != NULL; w = w->next) {
		for (found = 0, i = 0; i < n && !found; i++)
			found = strcmp(ms[i].name, w->name) == 0;
		if (!found)
			w->stop = 1;
	}
	for (i = 0; i < n && !s->stopping; i++) {
		for (found = 0, w = s->workers; w != NULL && !found; w = w->next)
			found = strcmp(ms[i].name, w->name) == 0 && !w->stop;
		if (found)
			continue;
		if ((nw = calloc(1, sizeof(*nw))) == NULL ||
		    (nw->name = strdup(ms[i].name)) == NULL) {
			worker_free(nw);
			continue;
		}
		nw->s = s;
		if (pthread_create(&nw->th, NULL, worker_main, nw) != 0) {
			worker_free(nw);
			continue;
		}
		nw->started = 1;
		nw->next = s->workers;
		s->workers = nw;
	}
	/* Reap the workers that have ended. */
	for (wp = &s->workers; *wp != NULL;) {
		w = *wp;
		if (w->exited) {
			*wp = w->next;
			pthread_mutex_unlock(&s->mu);
			pthread_join(w->th, NULL);
			worker_free(w);
			pthread_mutex_lock(&s->mu);
			wp = &s->workers;
			continue;
		}
		wp = &w->next;
	}
	pthread_mutex_unlock(&s->mu);
	store_machines_free(ms, n);
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

static void *
manager_main(void *arg)
{
	struct sched *s = arg;
	time_t last_renew = 0;
	uint64_t gen;
	int stopping;

	for (;;) {
		gen = sched_gen(s);
		sched_reconcile(s);
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
		sched_wait(s, gen, 1000);
	}
	return NULL;
}

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
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
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
	if (pthread_create(&s->manager, NULL, manager_main, s) != 0) {
		bf_diag_set(d, NULL, "cannot start the scheduler thread");
		r = BF_ERR_SYS;
		goto out;
	}
	s->manager_started = 1;
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
	struct worker *w;
	int r = BF_ERR_NOTFOUND;

	if (s == NULL || name == NULL)
		return BF_ERR_INVALID;
	pthread_mutex_lock(&s->mu);
	for (w = s->workers; w != NULL; w = w->next)
		if (!w->stop && strcmp(w->name, name) == 0) {
			w->probe_wanted = 1;
			r = 0;
		}
	s->gen++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return r;
}

void
sched_kick(struct sched *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->gen++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
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
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->manager_started)
		pthread_join(s->manager, NULL);
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
		worker_free(w);
	}
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s->known_hosts);
	free(s->agent_paths[0]);
	free(s->agent_paths[1]);
	free(s->native_arch);
	free(s->agent_remote);
	free(s);
	return 0;
}
