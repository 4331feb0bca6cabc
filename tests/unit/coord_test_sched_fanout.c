/*
 * coord_test_sched_fanout.c: new work on an idle fleet (sched-claim.c). The
 * manager claims for every idle worker in one transaction and hands each
 * its claim: a 4-cell job on 4 idle machines runs on all four, each run
 * once, every claim the manager's. A kick about work does not read the
 * machine list; a kick about machines does. On SQLite, or with
 * BF_TEST_PG_URL on PostgreSQL (unit.coord_test_sched_fanout@pg).
 */
#include "sched_fixture.h"
#include "sched-int.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define NMACH 4

static struct sched_stats
stats(struct sched *s)
{
	struct sched_stats x;

	sched_stats(s, &x);
	return x;
}

/* Wait up to 10 s for n workers to be ready; the number ready. */
static size_t
wait_ready(struct sched *s, size_t n)
{
	int i;

	for (i = 0; i < 500 && stats(s).ready < n; i++)
		nanosleep(&(struct timespec){ 0, 20000000L }, NULL);
	return stats(s).ready;
}

static void
test_fanout(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = " step", .out = HELLO ITER(0, 0.5) DONE_OK },
		{ .match = "true" },
	};
	struct fake_script fs;
	struct store *st = fresh_store(NULL);
	struct sched *s;
	json_t *runs, *run;
	int64_t job = 0;
	size_t i, k, nsamples = 0;
	char buf[32], name[16], seen[NMACH][16];

	for (i = 2; i <= NMACH; i++) {
		snprintf(name, sizeof(name), "fake%zu", i);
		T_EQ_INT(fix_machine(st, name, NULL), 0);
	}
	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	s = start(st, &fs, 30);
	/* every worker connected, fingerprinted, found nothing: ready */
	T_EQ_INT(wait_ready(s, NMACH), NMACH);
	T_EQ_INT(stats(s).batch_claims, 0);
	T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"matrix\":{\"msg\":[\"a\",\"b\",\"c\",\"d\"]},\"repetitions\":{\"iterations\":1}}",
	    &job), 0);
	sched_kick(s);
	T_EQ_STR(wait_job(st, job, 20, buf, sizeof(buf)), "done");
	/* the four claims were the manager's, one per machine, in one go;
	 * a worker's own 1 s pass would count none */
	T_EQ_INT(stats(s).batch_claims, NMACH);
	T_EQ_INT(fix_count(st, job, "done", &nsamples), NMACH);
	T_EQ_INT(nsamples, NMACH);
	runs = fix_runs(st, job);
	json_array_foreach(json_object_get(runs, "runs"), i, run) {
		const char *m = json_string_value(json_object_get(run, "machine"));

		T_CHECK(m != NULL && i < NMACH);
		if (m == NULL || i >= NMACH)
			continue;
		snprintf(seen[i], sizeof(seen[i]), "%s", m);
		for (k = 0; k < i; k++)
			T_CHECK(strcmp(seen[k], seen[i]) != 0);	/* four machines */
		T_EQ_INT(json_integer_value(json_object_get(run, "attempt")), 1);
	}
	json_decref(runs);
	T_EQ_INT(rules[3].used, NMACH);		/* each step ran once */
	T_EQ_INT(sched_stop(s), 0);
	T_EQ_INT(fs.unmatched, 0);
	store_close(st);
}

/*
 * Kicks about work (a job a second for 1.5 s here; a lab's stream of jobs)
 * do not read the machine list, which on a 10,000-machine coordinator cost
 * every job a few milliseconds; kicks about machines do (at most every
 * SCHED_RECONCILE_MIN_MS). The list is also read every SCHED_RECONCILE_S
 * (5 s), so a window of 1.5 s may hold one periodic read.
 */
static void
test_kick_kinds(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = "true" },
	};
	struct fake_script fs;
	struct store *st = fresh_store(NULL);
	struct sched *s;
	uint64_t r0;
	int i;

	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	s = start(st, &fs, 30);
	T_EQ_INT(wait_ready(s, 1), 1);
	r0 = stats(s).reconciles;
	T_CHECK(r0 >= 1);		/* the first pass reads it */
	for (i = 0; i < 6; i++) {
		sched_kick(s);
		nanosleep(&(struct timespec){ 0, 250000000L }, NULL);
	}
	T_CHECK(stats(s).reconciles - r0 <= 1);
	r0 = stats(s).reconciles;
	T_EQ_INT(fix_machine(st, "fake2", NULL), 0);
	sched_kick_machines(s);
	/* read at once, and fake2's worker starts and gets ready */
	T_EQ_INT(wait_ready(s, 2), 2);
	T_CHECK(stats(s).reconciles > r0);
	T_EQ_INT(stats(s).workers, 2);
	T_EQ_INT(sched_stop(s), 0);
	T_EQ_INT(fs.unmatched, 0);
	store_close(st);
}

/*
 * A claim the manager made for a worker that will not run it (stopped,
 * quarantined, its link or lease gone) goes back to the queue: the run is
 * queued again without using up its attempts, the machine is idle, the
 * run's log says why, and the next claim takes the same run.
 */
static void
test_give_back(void)
{
	struct store *st = fresh_store(NULL);
	struct sched s;
	struct store_claim_req req = { "fake1", "fake", NULL };
	struct store_claim *c = NULL, *again = NULL;
	struct store_log_line *lines = NULL;
	size_t nlines = 0, i;
	int64_t job = 0, run;
	int said = 0;
	char buf[32];

	T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":1}}", &job), 0);
	memset(&s, 0, sizeof(s));
	s.st = st;
	s.cfg.max_attempts = 1;		/* one attempt: giving back must not use it */
	T_EQ_INT(store_run_claim_many(st, &req, 1, 30, &c), 0);
	T_CHECK(c != NULL);
	if (c == NULL) {
		store_close(st);
		return;
	}
	run = c->run_id;
	sched_claim_give_back(&s, "fake1", c, "claimed for a machine whose link went; "
	    "queued again");
	T_EQ_STR(job_state(st, job, buf, sizeof(buf)), "running");
	T_EQ_INT(fix_count(st, job, "queued", NULL), 1);
	T_EQ_INT(store_run_log(st, run, 0, 0, &lines, &nlines), 0);
	for (i = 0; i < nlines; i++)
		said |= strstr(lines[i].line, "whose link went") != NULL;
	T_CHECK(said);
	store_log_lines_free(lines, nlines);
	{
		struct store_machine *m = NULL;

		T_EQ_INT(store_machine_get(st, "fake1", &m), 0);
		T_EQ_STR(m != NULL ? m->state : "?", "idle");
		store_machine_free(m);
	}
	T_EQ_INT(store_run_claim_many(st, &req, 1, 30, &again), 0);
	T_CHECK(again != NULL && again->run_id == run);
	store_claim_free(again);
	store_close(st);
}

int
main(void)
{
	if (sched_fixture_setup() != 0)
		return 1;
	test_fanout();
	test_kick_kinds();
	test_give_back();
	sched_fixture_done();
	return t_done();
}
