/*
 * coord_test_store_claim.c: the claim's ordering rules against each other
 * (store-claim.h), on SQLite or (BF_TEST_PG_URL,
 * unit.coord_test_store_claim@pg) PostgreSQL. The claim takes them as four
 * probes in turn (store-claim.c), no longer as sort keys over the whole
 * queue; these cases tell the orders apart.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_fixture.h"

/* A job of class demo, ncells cells x nboots boots, each run booting
 * kernel (NULL: none). */
static int64_t
add_kjob(struct store *s, const char *kernel, size_t ncells, int nboots)
{
	struct store_run_new rn[8];
	size_t n = 0, c;
	int64_t id = -1;
	int b;

	memset(rn, 0, sizeof(rn));
	for (b = 0; b < nboots; b++)
		for (c = 0; c < ncells && n < 8; c++, n++) {
			rn[n].cell_index = c;
			rn[n].label = "n=1";
			rn[n].axes_json = "{\"n\": 1}";
			rn[n].values_json = "{\"n\": 1}";
			rn[n].boot = b;
			rn[n].kernel = kernel;
			rn[n].run_order = plan_run_order(PLAN_INTERLEAVED, c, b);
			rn[n].iterations = 1;
			rn[n].timeout_s = 60;
		}
	T_EQ_INT(store_job_create(s, "demo", "rules", "{\"recipe\": \"demo\"}", "demo", NULL,
	    rn, n, &id), 0);
	return id;
}

/* m claims in group (NULL: none): "JOB:BOOT:CELL" of the run, or "-". */
static const char *
claim_as(struct store *s, const char *m, const char *group, struct store_claim **cp,
    char *buf, size_t n)
{
	*cp = NULL;
	if (store_run_claim_boot(s, m, "demo", group, 60, cp) != 0 || *cp == NULL)
		return "-";
	snprintf(buf, n, "%lld:%d:%lld", (long long)(*cp)->job_id, (*cp)->boot,
	    (long long)(*cp)->cell_index);
	return buf;
}

/* The run of *cp finished done (checked), and *cp freed; nothing when NULL
 * (its claim_as check failed already). */
static void
finish(struct store *s, struct store_claim **cp)
{
	if (*cp != NULL)
		T_EQ_INT(store_run_finish(s, (*cp)->run_id, "done", 0, NULL), 0);
	store_claim_free(*cp);
	*cp = NULL;
}

/*
 * The claim's rules 1 to 3 against each other (store-claim.h): the
 * machine's own boot group beats a group no other machine has started
 * (rule 1 over 2), which beats an older job (rule 2 over 3); a group that
 * needs a kernel and that another live machine started is never taken.
 */
static void
test_claim_rules(void)
{
	struct store_claim *c1 = NULL, *c2 = NULL;
	struct store *s;
	int64_t ja, jc, jd, je;
	char buf[64], want[64], g1[256], g2[256];

	if ((s = open_fresh("rules.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "m1", "demo"), 0);
	T_EQ_INT(add_machine(s, "m2", "demo"), 0);

	/* kernel groups: A:0 and A:1 of two runs each */
	ja = add_kjob(s, "kA", 2, 2);
	snprintf(want, sizeof(want), "%lld:0:0", (long long)ja);
	T_EQ_STR(claim_as(s, "m1", NULL, &c1, buf, sizeof(buf)), want);
	/* A:0 is m1's boot: m2 boots for A:1 */
	snprintf(want, sizeof(want), "%lld:1:0", (long long)ja);
	T_EQ_STR(claim_as(s, "m2", NULL, &c2, buf, sizeof(buf)), want);
	T_CHECK(c1 != NULL && c2 != NULL);
	if (c1 == NULL || c2 == NULL)
		goto out;
	store_boot_group(c1, g1, sizeof(g1));
	store_boot_group(c2, g2, sizeof(g2));
	finish(s, &c1);
	/* m1 stays in its boot */
	snprintf(want, sizeof(want), "%lld:0:1", (long long)ja);
	T_EQ_STR(claim_as(s, "m1", g1, &c1, buf, sizeof(buf)), want);
	finish(s, &c1);
	/* A:0 is done; A:1's last run is m2's boot: nothing for m1 */
	T_EQ_STR(claim_as(s, "m1", g1, &c1, buf, sizeof(buf)), "-");
	finish(s, &c2);
	snprintf(want, sizeof(want), "%lld:1:1", (long long)ja);
	T_EQ_STR(claim_as(s, "m2", g2, &c2, buf, sizeof(buf)), want);
	finish(s, &c2);

	/* no kernel: C:0 of three runs; m2 joins m1's group when nothing
	 * else waits, and m1 then keeps to its group, started elsewhere or
	 * not (rule 1 over rule 2) */
	jc = add_kjob(s, NULL, 3, 1);
	snprintf(want, sizeof(want), "%lld:0:0", (long long)jc);
	T_EQ_STR(claim_as(s, "m1", NULL, &c1, buf, sizeof(buf)), want);
	if (c1 == NULL)
		goto out;
	store_boot_group(c1, g1, sizeof(g1));
	snprintf(want, sizeof(want), "%lld:0:1", (long long)jc);
	T_EQ_STR(claim_as(s, "m2", NULL, &c2, buf, sizeof(buf)), want);
	finish(s, &c1);
	jd = add_kjob(s, NULL, 2, 1);	/* a fresh group, newer job */
	snprintf(want, sizeof(want), "%lld:0:2", (long long)jc);
	T_EQ_STR(claim_as(s, "m1", g1, &c1, buf, sizeof(buf)), want);
	/* m2, out of a group, takes D's fresh group */
	finish(s, &c2);
	snprintf(want, sizeof(want), "%lld:0:0", (long long)jd);
	T_EQ_STR(claim_as(s, "m2", NULL, &c2, buf, sizeof(buf)), want);
	/* rule 2 over rule 3: with D:0 started by m2, m1 (out of a group)
	 * takes the newer job E's fresh group before D's second run */
	finish(s, &c1);
	je = add_kjob(s, NULL, 1, 1);
	snprintf(want, sizeof(want), "%lld:0:0", (long long)je);
	T_EQ_STR(claim_as(s, "m1", NULL, &c1, buf, sizeof(buf)), want);
	finish(s, &c1);
	/* and then D's run, started elsewhere, since nothing else waits */
	snprintf(want, sizeof(want), "%lld:0:1", (long long)jd);
	T_EQ_STR(claim_as(s, "m1", NULL, &c1, buf, sizeof(buf)), want);
out:
	store_claim_free(c1);
	store_claim_free(c2);
	store_close(s);
}

/* out[i]'s "JOB:BOOT:CELL" (or "-"), then freed. */
static const char *
many_as(struct store_claim **out, size_t i, char *buf, size_t n)
{
	if (out[i] == NULL)
		return "-";
	snprintf(buf, n, "%lld:%d:%lld", (long long)out[i]->job_id, out[i]->boot,
	    (long long)out[i]->cell_index);
	return buf;
}

/*
 * The manager's batch claim (store_run_claim_many): in one transaction,
 * each machine claims as it would alone and sees the claims of the
 * machines before it, so the rules hold inside a batch (m2 does not join
 * the kernel group m1 booted for); a machine that is busy, unknown or has
 * nothing gets NULL and the others still get theirs; bad calls take
 * nothing.
 */
static void
test_claim_many(void)
{
	struct store_claim_req req[STORE_CLAIM_MANY_MAX + 1];
	struct store_claim *out[STORE_CLAIM_MANY_MAX + 1];
	struct store *s;
	int64_t ja, id0, id2;
	size_t i;
	char buf[64], want[64];

	if ((s = open_fresh("many.db")) == NULL)
		return;
	T_EQ_INT(add_machine(s, "m1", "demo"), 0);
	T_EQ_INT(add_machine(s, "m2", "demo"), 0);
	T_EQ_INT(add_machine(s, "m3", "demo"), 0);
	ja = add_kjob(s, "kA", 2, 2);
	req[0] = (struct store_claim_req){ "m1", "demo", NULL };
	req[1] = (struct store_claim_req){ "ghost", "demo", NULL };
	req[2] = (struct store_claim_req){ "m2", "demo", NULL };
	T_EQ_INT(store_run_claim_many(s, req, 3, 60, out), 0);
	snprintf(want, sizeof(want), "%lld:0:0", (long long)ja);
	T_EQ_STR(many_as(out, 0, buf, sizeof(buf)), want);
	T_EQ_STR(many_as(out, 1, buf, sizeof(buf)), "-");	/* not registered */
	/* A:0 is m1's boot: m2 boots for A:1, as in test_claim_rules */
	snprintf(want, sizeof(want), "%lld:1:0", (long long)ja);
	T_EQ_STR(many_as(out, 2, buf, sizeof(buf)), want);
	/* the two runs are running, on m1 and m2 */
	id0 = out[0] != NULL ? out[0]->run_id : 0;
	id2 = out[2] != NULL ? out[2]->run_id : 0;
	T_EQ_STR(run_str(s, id0, "state", buf, sizeof(buf)), "running");
	T_EQ_STR(run_str(s, id0, "machine", buf, sizeof(buf)), "m1");
	T_EQ_STR(run_str(s, id2, "state", buf, sizeof(buf)), "running");
	T_EQ_STR(run_str(s, id2, "machine", buf, sizeof(buf)), "m2");
	/* m1 and m2 are busy; m3 may not take a run of either started group */
	req[1] = (struct store_claim_req){ "m3", "demo", NULL };
	for (i = 0; i < 3; i++)
		store_claim_free(out[i]);
	T_EQ_INT(store_run_claim_many(s, req, 3, 60, out), 0);
	for (i = 0; i < 3; i++)
		T_EQ_STR(many_as(out, i, buf, sizeof(buf)), "-");
	/* bad calls: nothing, every out[] NULL */
	for (i = 0; i < STORE_CLAIM_MANY_MAX + 1; i++) {
		req[i] = (struct store_claim_req){ "m3", "demo", NULL };
		out[i] = (struct store_claim *)&out[i];	/* not NULL */
	}
	T_EQ_INT(store_run_claim_many(s, req, STORE_CLAIM_MANY_MAX + 1, 60, out),
	    BF_ERR_INVALID);
	for (i = 0; i < STORE_CLAIM_MANY_MAX + 1; i++)
		T_CHECK(out[i] == NULL);
	T_EQ_INT(store_run_claim_many(s, req, 0, 60, out), BF_ERR_INVALID);
	req[0].machine = NULL;
	T_EQ_INT(store_run_claim_many(s, req, 1, 60, out), BF_ERR_INVALID);
	T_CHECK(out[0] == NULL);
	store_close(s);
}

int
main(void)
{
	static const char *const dbs[] = { "rules.db", "many.db" };

	if (fix_where_init(&where, "store-claim") != 0)
		return 1;
	test_claim_rules();
	test_claim_many();
	store_fixture_done(dbs, sizeof(dbs) / sizeof(dbs[0]));
	return t_done();
}
