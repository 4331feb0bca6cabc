/*
 * store-claim.c: the scheduler's claim: which queued run a machine takes
 * next (the policy is stated in store-claim.h), taken in one transaction
 * with the machine's lease.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

#include "err.h"
#include "store.h"
#include "store-claim.h"
#include "store-int.h"

/*
 * The claim's pick, in each engine's words (JOIN_KIND, NAMED: the job names
 * machine ?2, PROBE: the probe's own condition, LOCK: row locking).
 * SQLite: CROSS JOIN pins jobs as the outer loop (SQLite never reorders
 * it): active jobs by id, then runs_claim per job already in claim order,
 * so the ORDER BY is the loop's own order and LIMIT 1 stops at the first
 * candidate that passes; nothing sorts the fleet's queue.
 * PostgreSQL: FOR UPDATE SKIP LOCKED, so coordinators claiming at once
 * each take a different run instead of queueing behind one row lock.
 *
 * Rules 1 and 2 of store-claim.h (the machine's own boot group first, then
 * groups no other machine has started) are not ORDER BY terms: as terms,
 * they were computed for every queued run of the fleet, an EXISTS over
 * the job's runs each, on every claim (a 2,000-run job: about 150 ms a
 * claim, quadratic in the queue). They are the order of four probes
 * instead (claim_tx), each the first candidate in (job, run_order, id):
 *   PROBE_GROUP_FRESH  in the machine's group, no other machine in it
 *   PROBE_GROUP        in the machine's group
 *   PROBE_FRESH        no other machine in its group
 *   PROBE_ANY          any candidate
 * which gives the run the two sort keys would: (in group DESC, started
 * elsewhere ASC, job, run_order, id).
 */
#define CLAIM_COLS \
	"SELECT r.id, r.job_id, COALESCE(r.recipe, j.recipe), j.spec, r.\"values\", r.label," \
	" r.boot, r.attempt, r.knobs, r.req_kernel, r.req_cmdline," \
	" r.cell_index, r.run_order, r.iterations, r.warmup, r.timeout_s, r.workload," \
	" j.spread"
/* another machine has a run of r's boot group running or done */
#define CLAIM_STARTED_ELSEWHERE \
	"EXISTS (SELECT 1 FROM runs o WHERE o.job_id = r.job_id AND o.boot = r.boot" \
	"  AND COALESCE(o.req_kernel, '') = COALESCE(r.req_kernel, '')" \
	"  AND COALESCE(o.req_cmdline, '') = COALESCE(r.req_cmdline, '')" \
	"  AND COALESCE(o.req_machine, '') = COALESCE(r.req_machine, '')" \
	"  AND o.state IN ('running', 'done') AND o.machine <> ?2)"
/* r is of the machine's boot group ?3 (see store_boot_group), whose job
 * is ?4: the job's runs only, then the group's whole text */
#define CLAIM_IN_GROUP \
	" AND r.job_id = ?4 AND r.job_id || ':' || r.boot || ':' ||" \
	"  COALESCE(r.req_kernel, '') || ':' || COALESCE(r.req_cmdline, '') = ?3"
/* PostgreSQL: the same test against the groups other machines started,
 * listed once per claim (a hash anti-join); PostgreSQL ranks every
 * candidate before its LIMIT, and a correlated EXISTS per candidate, each
 * scanning the job's finished runs, made a claim quadratic in the queue */
#define CLAIM_STARTED_PG \
	"WITH started AS MATERIALIZED (SELECT DISTINCT o.job_id, o.boot," \
	" COALESCE(o.req_kernel, '') AS k, COALESCE(o.req_cmdline, '') AS c," \
	" COALESCE(o.req_machine, '') AS m FROM runs o JOIN jobs oj ON oj.id = o.job_id" \
	" WHERE oj.state IN ('queued','running') AND o.state IN ('running', 'done')" \
	" AND o.machine <> ?2) "
#define CLAIM_STARTED_ELSEWHERE_PG \
	"EXISTS (SELECT 1 FROM started s WHERE s.job_id = r.job_id AND s.boot = r.boot" \
	"  AND s.k = COALESCE(r.req_kernel, '') AND s.c = COALESCE(r.req_cmdline, '')" \
	"  AND s.m = COALESCE(r.req_machine, ''))"
#define CLAIM_PICK(WITH, JOIN_KIND, NAMED, PROBE, LOCK) \
	WITH CLAIM_COLS \
	" FROM jobs j " JOIN_KIND " runs r" \
	" ON r.job_id = j.id AND r.state = 'queued'" \
	" WHERE j.state IN ('queued','running') AND (j.machine_class = ?1 OR " NAMED ")" \
	/* spread "block": a run for one machine is that machine's alone; \
	 * spread "pin": once the job has its machine, no other takes a run */ \
	" AND (r.req_machine IS NULL OR r.req_machine = ?2)" \
	" AND (j.spread <> 'pin' OR j.pinned_machine IS NULL OR j.pinned_machine = ?2)" \
	/* A run that needs a boot of its own is not taken from the boot \
	 * another live machine has started: each boot group gets exactly \
	 * one reboot (the minimum), on the machine that booted for it. */ \
	" AND NOT ((r.req_kernel IS NOT NULL OR COALESCE(r.req_cmdline, '') <> '')" \
	"  AND EXISTS (SELECT 1 FROM runs o JOIN machines mo ON mo.name = o.machine" \
	"  WHERE o.job_id = r.job_id AND o.boot = r.boot" \
	"  AND COALESCE(o.req_kernel, '') = COALESCE(r.req_kernel, '')" \
	"  AND COALESCE(o.req_cmdline, '') = COALESCE(r.req_cmdline, '')" \
	"  AND COALESCE(o.req_machine, '') = COALESCE(r.req_machine, '')" \
	"  AND o.state IN ('running', 'done') AND o.machine <> ?2" \
	"  AND mo.state NOT IN ('offline', 'quarantined')))" \
	PROBE \
	/* the oldest job, and within it the run's plan: run_order is \
	 * boot-major for interleaved jobs (A B A B), cell-major for \
	 * sequential ones (plan.h) */ \
	" ORDER BY j.id, r.run_order, r.id LIMIT 1" LOCK

#define CLAIM_SQLITE(WITH, PROBE) CLAIM_PICK(WITH, "CROSS JOIN", \
	"EXISTS (SELECT 1 FROM json_each(j.machine_names) WHERE value = ?2)", PROBE, "")
#define CLAIM_PG(WITH, PROBE) CLAIM_PICK(WITH, "JOIN", \
	"EXISTS (SELECT 1 FROM jsonb_array_elements_text(j.machine_names::jsonb) e" \
	" WHERE e = ?2)", PROBE, " FOR UPDATE OF r SKIP LOCKED")

const char store_claim_pick_group_fresh_sql[] = CLAIM_SQLITE("",
    CLAIM_IN_GROUP " AND NOT " CLAIM_STARTED_ELSEWHERE);
const char store_claim_pick_group_sql[] = CLAIM_SQLITE("", CLAIM_IN_GROUP);
const char store_claim_pick_fresh_sql[] = CLAIM_SQLITE("", " AND NOT " CLAIM_STARTED_ELSEWHERE);
const char store_claim_pick_any_sql[] = CLAIM_SQLITE("", "");
const char store_claim_pick_group_fresh_sql_pg[] = CLAIM_PG(CLAIM_STARTED_PG,
    CLAIM_IN_GROUP " AND NOT " CLAIM_STARTED_ELSEWHERE_PG);
const char store_claim_pick_group_sql_pg[] = CLAIM_PG("", CLAIM_IN_GROUP);
const char store_claim_pick_fresh_sql_pg[] = CLAIM_PG(CLAIM_STARTED_PG,
    " AND NOT " CLAIM_STARTED_ELSEWHERE_PG);
const char store_claim_pick_any_sql_pg[] = CLAIM_PG("", "");

void
store_claim_free(struct store_claim *c)
{
	if (c == NULL)
		return;
	free(c->recipe);
	free(c->spec_json);
	free(c->values_json);
	free(c->label);
	free(c->knobs_json);
	free(c->kernel);
	free(c->cmdline);
	free(c->workload);
	free(c);
}

static int
claim_from_row(struct db_stmt *st, struct store_claim **out)
{
	struct store_claim *c;
	int r;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	c->run_id = db_col_int64(st, 0);
	c->job_id = db_col_int64(st, 1);
	c->boot = db_col_int(st, 6);
	c->attempt = db_col_int(st, 7);
	c->cell_index = db_col_int64(st, 11);
	c->run_order = db_col_int64(st, 12);
	c->iterations = db_col_int(st, 13);
	c->warmup = db_col_int(st, 14);
	c->timeout_s = db_col_int(st, 15);
	c->pin = db_col_text(st, 17) != NULL && strcmp((const char *)db_col_text(st, 17),
	    "pin") == 0;
	if ((r = store_col_dup(st, 2, &c->recipe)) != 0 ||
	    (r = store_col_dup(st, 3, &c->spec_json)) != 0 ||
	    (r = store_col_dup(st, 4, &c->values_json)) != 0 ||
	    (r = store_col_dup(st, 5, &c->label)) != 0 ||
	    (r = store_col_dup(st, 8, &c->knobs_json)) != 0 ||
	    (r = store_col_dup(st, 9, &c->kernel)) != 0 ||
	    (r = store_col_dup(st, 10, &c->cmdline)) != 0 ||
	    (r = store_col_dup(st, 16, &c->workload)) != 0)
		goto out;
	*out = c;
	c = NULL;
	r = 0;
out:
	store_claim_free(c);
	return r;
}

/*
 * One transaction. SQLite: IMMEDIATE, the write lock is taken before the
 * pick, so neither another connection nor a thread can take the same run
 * between the SELECT and the UPDATE. PostgreSQL: the pick locks its row
 * FOR UPDATE SKIP LOCKED, so another coordinator picking at the same time
 * passes over it, and the UPDATE still checks it is queued.
 */
int
store_run_claim(struct store *s, const char *machine, const char *klass, int lease_s,
    struct store_claim **out)
{
	return store_run_claim_boot(s, machine, klass, NULL, lease_s, out);
}

struct claim_arg {
	const char *machine, *klass, *boot_group;
	int lease_s;
	struct store_claim *c;		/* the claim, or NULL: nothing to do */
};

/*
 * The probes of the pick in their order (see CLAIM_PICK): 0 with *stp on
 * the picked row, 1 when no probe found one, or an error. The group probes
 * run only for a machine in a boot group ("JOB:BOOT:KERNEL:CMDLINE").
 */
static int
claim_pick(struct store *s, const struct claim_arg *a, struct db_stmt **stp)
{
	static const enum store_q group_probes[] = { Q_R_CLAIM_PICK_GROUP_FRESH,
		Q_R_CLAIM_PICK_GROUP };
	static const enum store_q probes[] = { Q_R_CLAIM_PICK_FRESH, Q_R_CLAIM_PICK_ANY };
	long long job;
	size_t i;
	int r;

	if (a->boot_group != NULL && sscanf(a->boot_group, "%lld:", &job) == 1)
		for (i = 0; i < sizeof(group_probes) / sizeof(group_probes[0]); i++) {
			if ((r = store_q(s, group_probes[i], stp, "ttt" "I", a->klass, a->machine,
			    a->boot_group, (int64_t)job)) != 0 || (r = store_q_step(s, *stp)) < 0)
				return r;
			if (r == 1)
				return 0;
		}
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		if ((r = store_q(s, probes[i], stp, "tt", a->klass, a->machine)) != 0 ||
		    (r = store_q_step(s, *stp)) < 0)
			return r;
		if (r == 1)
			return 0;
	}
	return 1;
}

/*
 * One machine's claim inside the caller's transaction: 0 with a->c, 1 when
 * there is nothing for it, or an error. "Nothing" is only decided before
 * any write but the lease's renewal, so a batch (claim_many_tx) can go on
 * to the next machine and commit the others' claims.
 */
static int
claim_one(struct store *s, struct claim_arg *a, double now)
{
	struct db_stmt *st;
	int r, n;

	store_claim_free(a->c);		/* an attempt before this one's */
	a->c = NULL;
	if ((r = store_q(s, Q_M_GET, &st, "t", a->machine)) != 0 ||
	    (r = store_q_step(s, st)) < 0)
		return r;
	if (r == 0)
		return BF_ERR_NOTFOUND;
	db_reset(st);
	/* Only the coordinator holding the machine's lease claims for it; the
	 * UPDATE's row lock also keeps two from claiming for one machine. */
	if ((r = store_q_exec(s, Q_M_LEASE, &n, "tt" "II", a->machine, s->node,
	    store_now_s() + a->lease_s, store_now_s())) != 0)
		return r;
	if (n == 0)
		return 1;
	/* A machine runs one thing at a time: benchmarks must not share it. */
	if ((r = store_q(s, Q_M_BUSY, &st, "t", a->machine)) != 0 ||
	    (r = store_q_step(s, st)) < 0)
		return r;
	if (r == 1)
		return 1;
	if ((r = claim_pick(s, a, &st)) != 0)
		return r;
	if ((r = claim_from_row(st, &a->c)) != 0)
		return r;
	db_reset(st);
	/* a pin job's first claim names its machine; a claim that lost the
	 * race to another coordinator's machine takes nothing (before the
	 * run's UPDATE, so that "nothing" has written nothing) */
	if (a->c->pin && ((r = store_q_exec(s, Q_J_PIN, &n, "It", a->c->job_id, a->machine)) !=
	    0 || n != 1)) {
		store_claim_free(a->c);
		a->c = NULL;
		return r != 0 ? r : 1;
	}
	if ((r = store_q_exec(s, Q_R_CLAIM, &n, "It" "d" "It", a->c->run_id, a->machine, now,
	    store_now_s() + a->lease_s, s->node)) != 0)
		return r;
	if (n != 1)
		return BF_ERR_DB;	/* the pick saw it queued inside this transaction */
	if ((r = store_q_exec(s, Q_J_START, NULL, "Id", a->c->job_id, now)) != 0 ||
	    (r = store_q_exec(s, Q_M_RUNNING, NULL, "t", a->machine)) != 0)
		return r;
	return 0;
}

static int
claim_tx(struct store *s, void *arg)
{
	int r = claim_one(s, arg, store_now());

	return r == 1 ? STORE_TX_UNDO : r;	/* nothing: the lease stays as it was */
}

struct claim_many_arg {
	const struct store_claim_req *req;
	size_t n;
	int lease_s;
	struct store_claim **out;	/* [n] */
};

static void
claim_many_clear(struct claim_many_arg *a)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		store_claim_free(a->out[i]);
		a->out[i] = NULL;
	}
}

static int
claim_many_tx(struct store *s, void *arg)
{
	struct claim_many_arg *a = arg;
	struct claim_arg one;
	double now = store_now();
	size_t i;
	int r;

	claim_many_clear(a);		/* an attempt before this one's */
	for (i = 0; i < a->n; i++) {
		one = (struct claim_arg){ .machine = a->req[i].machine, .klass = a->req[i].klass,
		    .boot_group = a->req[i].boot_group, .lease_s = a->lease_s };
		r = claim_one(s, &one, now);
		if (r < 0) {
			store_claim_free(one.c);
			/* a machine deleted since its worker asked: nothing for it */
			if (r == BF_ERR_NOTFOUND)
				continue;
			return r;
		}
		a->out[i] = one.c;	/* NULL when r == 1 */
	}
	return 0;
}

int
store_run_claim_many(struct store *s, const struct store_claim_req *req, size_t n,
    int lease_s, struct store_claim **out)
{
	struct claim_many_arg a = { .req = req, .n = n, .lease_s = lease_s, .out = out };
	size_t i;
	int r;

	if (out == NULL)
		return BF_ERR_INVALID;
	for (i = 0; i < n; i++)
		out[i] = NULL;
	if (s == NULL || req == NULL || n == 0 || n > STORE_CLAIM_MANY_MAX || lease_s <= 0)
		return BF_ERR_INVALID;
	for (i = 0; i < n; i++)
		if (req[i].machine == NULL)
			return BF_ERR_INVALID;
	if ((r = store_tx(s, claim_many_tx, &a)) != 0)
		claim_many_clear(&a);
	return r;
}

int
store_run_claim_boot(struct store *s, const char *machine, const char *klass,
    const char *boot_group, int lease_s, struct store_claim **out)
{
	struct claim_arg a = { .machine = machine, .klass = klass, .boot_group = boot_group,
	    .lease_s = lease_s };
	int r;

	*out = NULL;
	if (s == NULL || machine == NULL || lease_s <= 0)
		return BF_ERR_INVALID;
	if ((r = store_tx(s, claim_tx, &a)) != 0) {
		store_claim_free(a.c);
		return r;
	}
	*out = a.c;
	return 0;
}

const char *
store_boot_group(const struct store_claim *c, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "%lld:%d:%s:%s", (long long)c->job_id, c->boot,
	    c->kernel ? c->kernel : "", c->cmdline ? c->cmdline : "");
	return buf;
}
