/*
 * store-claim.c: the scheduler's claim: which queued run a machine takes
 * next (the policy is stated in store-claim.h), taken in one transaction
 * with the machine's lease.
 */
#include <stdio.h>
#include <stdlib.h>

#include "db.h"

#include "err.h"
#include "store.h"
#include "store-claim.h"
#include "store-int.h"

/*
 * The claim's pick, in each engine's words (JOIN_KIND, NAMED: the job names
 * machine ?2, LOCK: row locking).
 * SQLite: CROSS JOIN pins jobs as the outer loop (SQLite never reorders
 * it): active jobs by id, then runs_claim per job already in claim order,
 * instead of sorting every queued run of the fleet on each claim.
 * PostgreSQL: FOR UPDATE SKIP LOCKED, so coordinators claiming at once
 * each take a different run instead of queueing behind one row lock.
 */
#define CLAIM_PICK(JOIN_KIND, NAMED, LOCK) \
	"SELECT r.id, r.job_id, COALESCE(r.recipe, j.recipe), j.spec, r.\"values\", r.label," \
	" r.boot, r.attempt, r.knobs, r.req_kernel, r.req_cmdline," \
	" r.cell_index, r.run_order, r.iterations, r.warmup, r.timeout_s, r.workload" \
	" FROM jobs j " JOIN_KIND " runs r" \
	" ON r.job_id = j.id AND r.state = 'queued'" \
	" WHERE j.state IN ('queued','running') AND (j.machine_class = ?1 OR " NAMED ")" \
	/* A run that needs a boot of its own is not taken from the boot \
	 * another live machine has started: each boot group gets exactly \
	 * one reboot (the minimum), on the machine that booted for it. */ \
	" AND NOT ((r.req_kernel IS NOT NULL OR COALESCE(r.req_cmdline, '') <> '')" \
	"  AND EXISTS (SELECT 1 FROM runs o JOIN machines mo ON mo.name = o.machine" \
	"  WHERE o.job_id = r.job_id AND o.boot = r.boot" \
	"  AND COALESCE(o.req_kernel, '') = COALESCE(r.req_kernel, '')" \
	"  AND COALESCE(o.req_cmdline, '') = COALESCE(r.req_cmdline, '')" \
	"  AND o.state IN ('running', 'done') AND o.machine <> ?2" \
	"  AND mo.state NOT IN ('offline', 'quarantined')))" \
	/* Runs of the boot the machine is in first (?3: its boot group, \
	 * see store_boot_group), so a boot serves all its runs before the \
	 * next reboot; */ \
	" ORDER BY (?3 IS NOT NULL AND r.job_id || ':' || r.boot || ':' ||" \
	"  COALESCE(r.req_kernel, '') || ':' || COALESCE(r.req_cmdline, '') = ?3) DESC," \
	/* then boots no other machine has started: a boot group runs whole \
	 * on one machine, one reboot, instead of one per machine */ \
	" EXISTS (SELECT 1 FROM runs o WHERE o.job_id = r.job_id AND o.boot = r.boot" \
	"  AND COALESCE(o.req_kernel, '') = COALESCE(r.req_kernel, '')" \
	"  AND COALESCE(o.req_cmdline, '') = COALESCE(r.req_cmdline, '')" \
	"  AND o.state IN ('running', 'done') AND o.machine <> ?2)," \
	/* then the oldest job, and within it the run's plan: run_order is \
	 * boot-major for interleaved jobs (A B A B), cell-major for \
	 * sequential ones (plan.h) */ \
	" j.id, r.run_order, r.id LIMIT 1" LOCK

const char store_claim_pick_sql[] = CLAIM_PICK("CROSS JOIN",
    "EXISTS (SELECT 1 FROM json_each(j.machine_names) WHERE value = ?2)", "");

const char store_claim_pick_sql_pg[] = CLAIM_PICK("JOIN",
    "EXISTS (SELECT 1 FROM jsonb_array_elements_text(j.machine_names::jsonb) e"
    " WHERE e = ?2)", " FOR UPDATE OF r SKIP LOCKED");

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

static int
claim_tx(struct store *s, void *arg)
{
	struct claim_arg *a = arg;
	struct db_stmt *st;
	double now = store_now();
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
		return STORE_TX_UNDO;
	/* A machine runs one thing at a time: benchmarks must not share it. */
	if ((r = store_q(s, Q_M_BUSY, &st, "t", a->machine)) != 0 ||
	    (r = store_q_step(s, st)) < 0)
		return r;
	if (r == 1)
		return STORE_TX_UNDO;	/* the lease stays as it was */
	if ((r = store_q(s, Q_R_CLAIM_PICK, &st, "ttt", a->klass, a->machine, a->boot_group))
	    != 0 || (r = store_q_step(s, st)) < 0)
		return r;
	if (r == 0)
		return STORE_TX_UNDO;
	if ((r = claim_from_row(st, &a->c)) != 0)
		return r;
	db_reset(st);
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
