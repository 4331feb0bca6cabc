/*
 * sched-int.h: the scheduler's state, shared by sched.c (the manager and
 * the worker state machine) and sched-sink.c (where a step's streamed
 * results go). Not for the rest of the coordinator: sched.h is the API.
 *
 * Locks: s->mu guards what says "under s->mu" and the conditions: s->cv
 * the manager waits on, s->dcv the prober of offline machines, and each
 * worker's own w->cv, so that a wake-up reaches the threads it concerns
 * (sched_wake_locked) and not every thread of a large fleet: a broadcast
 * on one shared condition woke 100 idle workers per claim handed and made
 * the prober walk 10,000 offline machines under s->mu per kick.
 * A worker_ctx belongs to its worker thread alone.
 */
#ifndef BF_SCHED_INT_H
#define BF_SCHED_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "runner.h"
#include "sched.h"
#include "store.h"
#include "transport.h"

/* checksrc: prefix sched_ */

#define SCHED_RECONCILE_S	5	/* the manager re-reads the machine list at least this often */
#define SCHED_RECONCILE_MIN_MS	200	/* ... and on a kick, at most this often */

struct worker {
	struct sched *s;
	char *name;
	pthread_t th;
	pthread_cond_t cv;	/* with s->mu: this worker's wake-ups */
	int started;
	int stop;		/* under s->mu */
	int exited;		/* under s->mu */
	int64_t current_run;	/* under s->mu; 0 when idle */
	atomic_int lease_lost;	/* the store gave current_run to another coordinator */
	int probe_wanted;	/* under s->mu: fingerprint again when idle */
	int init_fails;		/* woken from dormancy: its failures so far, */
	uint32_t init_seed;	/* and its back-off jitter (has_init) */
	int has_init;
	/* sched-claim.c, under s->mu: in WAIT, willing to run a claim the
	 * manager makes for it (ready), with its machine's class and boot
	 * group; the claim made (handed, the worker's to run or give back) */
	int ready;
	char *klass, *group;
	struct store_claim *handed;
	struct worker *next;
};

struct dormant;

struct sched {
	struct sched_config cfg;
	char *known_hosts, *agent_remote;
	struct runner_agent agents[2];
	char *agent_paths[2];
	size_t nagents;
	char *native_arch;
	struct store *st;
	transport_connect_fn connect;	/* cfg.connect, or the SSH backend */
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* the manager's */
	pthread_cond_t dcv;	/* the prober's (sched-dormant.c) */
	uint64_t gen;		/* bumped by every kick (the manager waits on it) */
	uint64_t wgen;		/* ... about work: the manager claims for idle workers */
	uint64_t mgen;		/* ... about machines: reconcile; idle workers look */
	uint64_t claimed_batch;	/* claims the manager handed to workers */
	uint64_t reconciles;	/* sched_reconcile passes (sched_stats) */
	int stopping;
	pthread_t manager;
	int manager_started;
	struct worker *workers;
	/* sched-dormant.c: offline machines without a worker, under s->mu */
	struct dormant *dormant;
	size_t ndormant;
	uint64_t probed, woken;	/* TCP tries of dormant machines; workers started */
	uint64_t prober_passes;	/* walks of the dormant list (sched_stats) */
	pthread_t prober;
	int prober_started;
	struct bisect_driver *bisect;	/* bisect-drive.c: bisections' steps */
};

enum worker_state {
	WS_REFRESH,
	WS_CONNECT,
	WS_FINGERPRINT,
	WS_CLAIM,
	WS_RUN,
	WS_WAIT,
	WS_EXIT,
};

enum worker_timer_id {
	WT_CONNECT,
	WT_HEALTH,
	WT_FINGERPRINT,
	WT_COUNT,
};

struct worker_timer {
	const char *name;
	time_t last;		/* when it last fired */
};

struct worker_ctx {
	struct worker *w;
	struct sched *s;
	struct store_machine *m;	/* this pass's row */
	struct store_claim *c;		/* the claim in hand (CLAIM -> RUN) */
	struct transport *tr;		/* NULL: no link */
	struct runner_env env;
	int agent_ok;			/* the agent on the link is ours */
	int fails;			/* connection failures in a row */
	int boot_fails;			/* boot failures in a row */
	int prestart_due;		/* a run ended: start the next step once idle */
	int store_warned;		/* a streamed write failed (said once per run) */
	/* the agent's hello, held until the snapshot line that follows it so
	 * that both are one commit (sched-sink.c); hello_run 0: none held */
	int64_t hello_run;
	char *hello[5];			/* hostname, kernel, arch, boot_id, cmdline */
	/* samples held to be one commit (sched-sink.c): the run's last
	 * iteration's, with its finish (worker_apply), and those of short
	 * iterations before it; nheld 0: none. Each batch's samples and
	 * strings are one allocation, held_mem[i], held_bytes in all. */
	struct store_batch held[STORE_FINISH_BATCHES];
	void *held_mem[STORE_FINISH_BATCHES];
	size_t nheld, held_bytes;
	int64_t held_run;
	/* the iteration of the last batch, whether it was held, and when its
	 * first batch came (or the step's hello, before any) */
	int last_it, last_it_hold;
	int64_t last_it_ms;
	/* log lines of held_run that came after its held samples (the
	 * counters' note), held for the same commit; strings owned */
	struct store_logline hlog[STORE_FINISH_LOGS];
	size_t nhlog;
	/* a held write that failed once something else came: late_r, the
	 * first such error (0: none), and why, for the run's outcome */
	int late_r;
	char late_why[256];
	uint64_t mgen;			/* s->mgen at the last REFRESH */
	int may_claim;			/* the last CLAIM found nothing: ready in WAIT */
	time_t now;
	uint32_t seed;			/* retry_delay()'s jitter */
	time_t sleep_until;		/* WAIT: back-off of a link-less worker, or 0 */
	int64_t lease_ms;		/* bf_mono_ms() of the last lease renewal, or 0 */
	struct worker_timer timer[WT_COUNT];
};
/* Who a wake-up concerns (sched_wake_locked, under s->mu). */
#define SCHED_WAKE_MANAGER	1u
#define SCHED_WAKE_WORKERS	2u
#define SCHED_WAKE_PROBER	4u
void sched_wake_locked(struct sched *s, unsigned what);
/* sched.c: free a worker that has ended (or never started). */
void sched_worker_free(struct worker *w);
/* sched-manager.c: the manager thread (arg: the struct sched). */
void *sched_manager_main(void *arg);
/* Write what the sink holds (the hello alone, the last iteration's
 * samples and the log lines after them), if anything (sched-sink.c). */
void sched_sink_flush(struct worker_ctx *x);
/*
 * The step is through (sched-sink.c): the hello written if still held; the
 * held samples too unless o finishes the run (then worker_apply writes them
 * with the finish); and a held write that failed late makes o the requeue
 * that a sample refused on arrival makes (runner.c).
 */
void sched_sink_end(struct worker_ctx *x, const struct store_claim *c, struct run_outcome *o);
/* Forget the held samples and log lines (written or not). */
void sched_sink_drop(struct worker_ctx *x);
/* Seconds before reconnecting after fails failures (sched.c). */
time_t sched_retry_delay(int fails, int max, uint32_t seed);
/* Start a worker for name, under s->mu; fails > 0: woken from dormancy
 * with that many failures and its seed. BF_ERR_ALLOC/BF_ERR_SYS. */
int sched_spawn_locked(struct sched *s, const char *name, int fails, uint32_t seed,
    int probe_wanted);

/*
 * sched-dormant.c (see there). enabled: may this machine go dormant (a
 * numeric address with the SSH transport, or cfg.reach). add: a worker
 * hands its offline machine over (it ends after). names: the dormant
 * machines' names (borrowed, valid under s->mu) into out[0..cap); their
 * count. sync: drop those not in sorted[0..n) (deleted). probe: try name
 * now; BF_ERR_NOTFOUND when not dormant. start/stop: the prober thread
 * (stop after s->stopping is set; frees the list).
 */
int sched_dormant_enabled(const struct sched *s, const char *host, int port);
int sched_dormant_add_locked(struct sched *s, const char *name, const char *host, int port,
    int fails, uint32_t seed, time_t next_try);
size_t sched_dormant_names_locked(const struct sched *s, char **out, size_t cap);
void sched_dormant_sync_locked(struct sched *s, char *const *sorted, size_t n);
int sched_dormant_probe_locked(struct sched *s, const char *name);
int sched_dormant_start(struct sched *s);
void sched_dormant_stop(struct sched *s);

/*
 * sched-claim.c. ready: w waits in WAIT for a claim of a machine of class
 * klass in the boot boot_key (both may be NULL), under s->mu; 0 or
 * BF_ERR_ALLOC (then not ready). take: the claim handed to w, or NULL.
 * unhand: give back a claim handed to x's worker that it will not run;
 * give_back: queue c again (its attempt not counted) and free it.
 * idle: the manager's batch claim for the ready workers. boot_group: the
 * boot a machine's boot_key says it is in, without its boot_id, as
 * store_run_claim_boot takes it: 0 with *out a copy (caller frees) or
 * NULL for none, or BF_ERR_ALLOC.
 */
int sched_boot_group(const char *boot_key, char **out);
int sched_claim_ready_locked(struct worker *w, const char *klass, const char *boot_key);
struct store_claim *sched_claim_take(struct worker *w);
void sched_claim_unhand(struct worker_ctx *x, const char *why);
void sched_claim_give_back(struct sched *s, const char *machine, struct store_claim *c,
    const char *why);
void sched_claim_idle(struct sched *s);

/* A run whose kernel is a spec (sched-kernel.c): built or reused and
 * installed, then rc->built points at bk (0: boot it); else *o says how
 * the run ends. After a boot that proceeds: release and config checked. */
struct kdispatch_kernel;
int sched_kernel_prepare(struct worker_ctx *x, struct runner_claim *rc,
    struct kdispatch_kernel *k, struct boot_kernel *bk, struct run_outcome *o);
void sched_kernel_verify(struct worker_ctx *x, const struct runner_claim *rc,
    const struct kdispatch_kernel *k, struct run_outcome *o);
/* Say a store write that failed on stderr, once per run (sched-sink.c). */
void sched_store_check(struct worker_ctx *x, int r, int64_t run_id, const char *what);
/* The worker's sink: the step's results into the store as they arrive. */
extern const struct runner_sink_ops sched_sink_ops;

#endif
