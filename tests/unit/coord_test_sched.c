/*
 * coord_test_sched.c: the scheduler end to end over a real store (SQLite,
 * or with BF_TEST_PG_URL a PostgreSQL database per case:
 * unit.coord_test_sched@pg), its workers reaching the machine through the
 * fake transport: a run
 * finishes exactly once with each sample once; a link lost mid-step is
 * retried and the retry keeps no partial sample; a boot that fails, power
 * cycles and comes back counts towards quarantine until the machine is
 * quarantined; an adaptive job gets its extra boot; and a coordinator
 * killed mid-run (its lease lapses) has its run taken over by another and
 * re-queued without a duplicate sample; an offline machine sleeps out its
 * back-off, kicks or not, and a probe brings it back at once. Suites: a
 * 3-workload suite over two kernels reboots kernels x boots times, and each
 * of its runs loads as its own entry's (a row naming another entry is
 * refused).
 */
#include "runner.h"
#include "sched_fixture.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static char *
machine_field(struct store *st, const char *field)
{
	struct store_machine *m = NULL;
	const char *v = NULL;
	char *r;

	if (store_machine_get(st, "fake1", &m) != 0)
		return strdup("?");
	if (strcmp(field, "state") == 0)
		v = m->state;
	else if (strcmp(field, "last_error") == 0)
		v = m->last_error;
	r = strdup(v ? v : "");
	store_machine_free(m);
	return r;
}

/* Every sample of the job once: (boot, iteration, metric) never twice. */
static int
samples_unique(struct store *st, int64_t job)
{
	json_t *j = fix_runs(st, job), *run, *smp;
	size_t i, k, a;
	int ok = 1;
	char seen[64][64];
	size_t nseen = 0;

	json_array_foreach(json_object_get(j, "runs"), i, run)
		json_array_foreach(json_object_get(run, "samples"), k, smp) {
			char key[64];

			snprintf(key, sizeof(key), "%lld/%lld/%lld/%s",
			    (long long)json_integer_value(json_object_get(run, "id")),
			    (long long)json_integer_value(json_object_get(smp, "boot")),
			    (long long)json_integer_value(json_object_get(smp, "iteration")),
			    json_string_value(json_object_get(smp, "metric")));
			for (a = 0; a < nseen; a++)
				if (strcmp(seen[a], key) == 0)
					ok = 0;
			if (nseen < 64)
				snprintf(seen[nseen++], sizeof(seen[0]), "%s", key);
		}
	json_decref(j);
	return ok;
}

static void
test_once(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = " step", .out = HELLO ITER(0, 0.5) ITER(1, 0.6) ITER(2, 0.7) DONE_OK },
		{ .match = "true" },
	};
	struct fake_script fs;
	struct store *st = fresh_store(NULL);
	struct sched *s;
	int64_t job = 0;
	size_t ns = 0;
	char buf[32];

	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":3}}", &job), 0);
	s = start(st, &fs, 30);
	T_EQ_STR(wait_job(st, job, 20, buf, sizeof(buf)), "done");
	T_EQ_INT(sched_stop(s), 0);
	T_EQ_INT(fix_count(st, job, "done", &ns), 1);
	T_EQ_INT(fix_count(st, job, NULL, NULL), 1);
	T_EQ_INT(ns, 3);
	T_EQ_INT(rules[3].used, 1);		/* the step ran once */
	T_EQ_INT(samples_unique(st, job), 1);
	T_EQ_INT(fs.unmatched, 0);
	store_close(st);
}

/*
 * The next step is started ahead only when the worker goes idle: three
 * queued runs run back to back (a prestart between them would keep each
 * waiting behind a channel open and sshd's fork), then one prestart.
 */
static void
test_prestart_when_idle(void)
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
	int64_t job[3] = { 0 };
	size_t i;
	char buf[32], order[64];

	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	for (i = 0; i < NELEM(job); i++)
		T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":"
		    "\"fake\"},\"repetitions\":{\"iterations\":1}}", &job[i]), 0);
	s = start(st, &fs, 30);
	for (i = 0; i < NELEM(job); i++)
		T_EQ_STR(wait_job(st, job[i], 20, buf, sizeof(buf)), "done");
	/* the prestart follows the last run's end: wait for it */
	for (i = 0; i < 50 && fake_count(&fs, &fs.prestarts) < 1; i++)
		nanosleep(&(struct timespec){ 0, 20000000L }, NULL);
	T_EQ_INT(sched_stop(s), 0);
	pthread_mutex_lock(&fs.mu);
	snprintf(order, sizeof(order), "%s", fs.order);
	pthread_mutex_unlock(&fs.mu);
	T_EQ_STR(order, "SSSP");
	T_EQ_INT(fs.unmatched, 0);
	store_close(st);
}

/*
 * The hello is held for the snapshot line after it (one commit for both):
 * both are on the run. A hello that no snapshot follows (an agent that
 * dies after it) is still written, at the end of the run.
 */
static void
test_hello_held(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = " step", .uses = 1, .out = HELLO
		  "{\"type\":\"snapshot\",\"sha256\":\"" SHA64 "\",\"snapshot\":{\"vm.swappiness\":\"60\"}}\n"
		  ITER(0, 0.5) DONE_OK },
		{ .match = " step", .out = HELLO },
		{ .match = "true" },
	};
	struct fake_script fs;
	struct store *st = fresh_store(NULL);
	struct sched *s;
	json_t *runs, *run;
	int64_t job = 0, job2 = 0;
	char buf[32];

	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":1}}", &job), 0);
	s = start(st, &fs, 30);
	T_EQ_STR(wait_job(st, job, 20, buf, sizeof(buf)), "done");
	T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":1}}", &job2), 0);
	sched_kick(s);
	T_EQ_STR(wait_job(st, job2, 20, buf, sizeof(buf)), "failed");
	T_EQ_INT(sched_stop(s), 0);
	runs = fix_runs(st, job);
	run = json_array_get(json_object_get(runs, "runs"), 0);
	T_EQ_STR(json_string_value(json_object_get(run, "hostname")), "fake1");
	T_EQ_STR(json_string_value(json_object_get(run, "boot_id")), "b-1");
	T_CHECK(json_string_length(json_object_get(run, "snapshot_sha256")) == 64);
	json_decref(runs);
	runs = fix_runs(st, job2);
	run = json_array_get(json_object_get(runs, "runs"), 0);
	T_EQ_STR(json_string_value(json_object_get(run, "hostname")), "fake1");
	T_CHECK(json_is_null(json_object_get(run, "snapshot_sha256")));
	json_decref(runs);
	store_close(st);
}

static void
test_retry_after_lost_link(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		/* the first attempt loses the link after hello and one iteration */
		{ .match = " step", .uses = 1, .drop_after = 2,
		  .out = HELLO ITER(0, 9.5) ITER(1, 9.6) DONE_OK },
		{ .match = " step", .out = HELLO ITER(0, 0.5) ITER(1, 0.6) DONE_OK },
		{ .match = "true" },
	};
	struct fake_script fs;
	struct store *st = fresh_store(NULL);
	struct sched *s;
	json_t *runs, *run;
	int64_t job = 0;
	size_t ns = 0;
	char buf[32];

	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":2}}", &job), 0);
	s = start(st, &fs, 30);
	T_EQ_STR(wait_job(st, job, 30, buf, sizeof(buf)), "done");
	T_EQ_INT(sched_stop(s), 0);
	T_EQ_INT(rules[3].used, 1);
	T_EQ_INT(rules[4].used, 1);
	T_CHECK(fake_count(&fs, &fs.connects) >= 2);	/* the worker reconnected */
	T_EQ_INT(fix_count(st, job, "done", &ns), 1);
	T_EQ_INT(ns, 2);			/* the lost attempt's sample was dropped */
	runs = fix_runs(st, job);
	run = json_array_get(json_object_get(runs, "runs"), 0);
	T_EQ_INT(json_integer_value(json_object_get(run, "attempt")), 2);
	T_NEAR(json_number_value(json_object_get(json_array_get(json_object_get(run, "samples"),
	    0), "value")), 0.5, 1e-9);
	json_decref(runs);
	T_EQ_INT(samples_unique(st, job), 1);
	store_close(st);
}

/*
 * An offline machine backs off and sleeps it out: after three refused
 * connects (t = 0, 1, 3 s; offline at the third) the next is not before
 * t = 6 s, and a kick about new work does not bring it forward. A probe
 * asked for (POST .../probe) connects at once, and the machine, back,
 * is idle well before its back-off would have allowed.
 */
/* Wait up to 6 s for the fake machine to have seen n connects. */
static void
wait_connects(struct fake_script *fs, int n)
{
	int i;

	for (i = 0; i < 60 && fake_count(fs, &fs->connects) < n; i++)
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
}

static void
test_offline_backoff(void)
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
	char *state;
	int i;

	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	fs.connect_fails = 3;
	s = start(st, &fs, 30);
	wait_connects(&fs, 3);
	T_EQ_INT(fake_count(&fs, &fs.connects), 3);
	state = machine_field(st, "state");
	T_EQ_STR(state, "offline");
	free(state);
	/* kicks (a job submitted, a machine edited) do not wake it */
	for (i = 0; i < 10; i++) {
		sched_kick(s);
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
	}
	T_EQ_INT(fake_count(&fs, &fs.connects), 3);
	T_EQ_INT(sched_probe(s, "fake1"), 0);
	for (i = 0; i < 30; i++) {
		state = machine_field(st, "state");
		if (strcmp(state, "idle") == 0)
			break;
		free(state);
		state = NULL;
		nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
	}
	T_EQ_STR(state ? state : "(not idle within 1.5 s of the probe)", "idle");
	free(state);
	T_EQ_INT(fake_count(&fs, &fs.connects), 4);
	T_EQ_INT(sched_stop(s), 0);
	store_close(st);
}

/* Wait up to 3 s for the scheduler to hold workers threads and dormant
 * machines; 1 when it did. */
static int
wait_stats(struct sched *s, size_t workers, size_t dormant, struct sched_stats *st)
{
	int i;

	for (i = 0; i < 60; i++) {
		sched_stats(s, st);
		if (st->workers == workers && st->dormant == dormant)
			return 1;
		nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
	}
	return 0;
}

/*
 * An offline machine gives up its thread (sched-dormant.c): the prober
 * asks whether its port answers, without an SSH connect, on the back-off
 * or when a probe is asked for; a machine whose port answers gets a worker
 * again, which connects and finds it idle. Kicks wake neither.
 */
static void
test_dormant(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = "true" },
	};
	struct fake_script fs;
	struct store *st = fresh_store(NULL);
	struct sched_stats ss;
	struct sched *s;
	char *state = NULL;
	uint64_t passes;
	int i, calls;

	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	fs.connect_fails = 3;
	atomic_store(&reach_up, 0);
	atomic_store(&reach_calls, 0);
	start_reach = fake_reach;
	s = start(st, &fs, 30);
	start_reach = NULL;
	wait_connects(&fs, 3);
	T_EQ_INT(fake_count(&fs, &fs.connects), 3);
	/* offline: no worker thread, one dormant machine */
	T_CHECK(wait_stats(s, 0, 1, &ss));
	state = machine_field(st, "state");
	T_EQ_STR(state, "offline");
	free(state);
	passes = ss.prober_passes;
	for (i = 0; i < 10; i++) {
		sched_kick(s);
		nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
	}
	sched_stats(s, &ss);
	T_EQ_INT((long long)ss.workers, 0);	/* the manager does not restart it */
	/* kicks about work do not wake the prober (its walk of a lab's
	 * offline list under s->mu was paid per job); its own timer may
	 * fire once in the 0.5 s */
	T_CHECK(ss.prober_passes - passes <= 1);
	T_EQ_INT(fake_count(&fs, &fs.connects), 3);
	/* a probe of a dormant machine: its port is tried at once, still down */
	calls = atomic_load(&reach_calls);
	T_EQ_INT(sched_probe(s, "fake1"), 0);
	for (i = 0; i < 40 && atomic_load(&reach_calls) == calls; i++)
		nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
	T_EQ_INT(atomic_load(&reach_calls), calls + 1);
	T_CHECK(wait_stats(s, 0, 1, &ss));
	T_EQ_INT(fake_count(&fs, &fs.connects), 3);	/* no SSH to a dead port */
	/* the port answers: a worker again, which connects */
	atomic_store(&reach_up, 1);
	T_EQ_INT(sched_probe(s, "fake1"), 0);
	for (i = 0; i < 60; i++) {
		state = machine_field(st, "state");
		if (strcmp(state, "idle") == 0)
			break;
		free(state);
		state = NULL;
		nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
	}
	T_EQ_STR(state ? state : "(not idle within 3 s)", "idle");
	free(state);
	T_CHECK(wait_stats(s, 1, 0, &ss));
	T_EQ_INT((long long)ss.woken, 1);
	T_CHECK(ss.probed >= 2);
	T_EQ_INT(fake_count(&fs, &fs.connects), 4);
	T_EQ_INT(sched_stop(s), 0);
	store_close(st);
}

/* A dormant machine deleted while its port is being tried: gone from the
 * list at once, freed by the prober when the try ends, no worker started
 * even though the port answered (ASan checks the freeing). */
static void
test_dormant_delete(void)
{
	struct fake_script fs;
	struct store *st = fresh_store(NULL);
	struct sched_stats ss;
	struct sched *s;
	int i;

	fake_script_init(&fs, NULL, 0, NULL, 0);
	fs.connect_fails = 1000;
	atomic_store(&reach_up, 0);
	atomic_store(&reach_calls, 0);
	start_reach = fake_reach;
	s = start(st, &fs, 30);
	start_reach = NULL;
	wait_connects(&fs, 3);
	T_CHECK(wait_stats(s, 0, 1, &ss));
	atomic_store(&reach_hold, 1);
	T_EQ_INT(sched_probe(s, "fake1"), 0);
	for (i = 0; i < 40 && atomic_load(&reach_calls) == 0; i++)
		nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
	T_EQ_INT(atomic_load(&reach_calls), 1);		/* in flight now */
	T_EQ_INT(store_machine_delete(st, "fake1"), 0);
	sched_kick(s);
	T_CHECK(wait_stats(s, 0, 0, &ss));
	atomic_store(&reach_up, 1);
	atomic_store(&reach_hold, 0);
	nanosleep(&(struct timespec){ 0, 300000000L }, NULL);
	sched_stats(s, &ss);
	T_EQ_INT((long long)ss.workers, 0);
	T_EQ_INT((long long)ss.dormant, 0);
	T_EQ_INT((long long)ss.woken, 0);
	T_EQ_INT(sched_probe(s, "fake1"), BF_ERR_NOTFOUND);
	T_EQ_INT(sched_stop(s), 0);
	store_close(st);
}

/*
 * A machine registered since the manager last reconciled (kicks coalesce,
 * one reconcile per 200 ms; none here) has no worker yet: a probe of it
 * starts one at once instead of answering "no worker" (skeleton's `machines
 * probe` right after `machines add` got 503). An unknown name stays
 * NOTFOUND.
 */
static void
test_probe_new_machine(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = "true" },
	};
	struct fake_script fs;
	struct store *st = fresh_store(NULL);
	struct sched_stats ss;
	struct sched *s;

	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	s = start(st, &fs, 30);
	T_CHECK(wait_stats(s, 1, 0, &ss));
	T_EQ_INT(fix_machine(st, "fake2", NULL), 0);	/* no kick */
	T_EQ_INT(sched_probe(s, "fake2"), 0);
	sched_stats(s, &ss);
	T_EQ_INT((long long)ss.workers, 2);
	T_EQ_INT(sched_probe(s, "nosuch"), BF_ERR_NOTFOUND);
	/* the next reconcile finds fake2's worker and starts no second one */
	sched_kick(s);
	nanosleep(&(struct timespec){ 0, 400000000L }, NULL);
	sched_stats(s, &ss);
	T_EQ_INT((long long)ss.workers, 2);
	T_EQ_INT(sched_stop(s), 0);
	store_close(st);
}

static void
test_quarantine(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = "boot_id", .out = "b-0\n" },
		{ .match = " step", .out = HELLO ITER(0, 0.5) DONE_OK },
		{ .match = "true" },
	};
	/* kexec comes back in the wrong kernel; the power cycle brings the
	 * machine back; twice in a row (boot_failures 2) */
	const struct fake_boot boots[] = {
		{ .ret = BF_ERR_STATE, .rebooted = 1, .power_cycled = 1, .recovered = 1,
		  .reason = "booted 6.0, not 6.1" },
		{ .ret = BF_ERR_STATE, .rebooted = 1, .power_cycled = 1, .recovered = 1,
		  .reason = "booted 6.0, not 6.1" },
		{ .ret = 0, .rebooted = 1, .boot_id = "never-used" },
	};
	struct fake_script fs;
	struct store *st = fresh_store(BOOTCFG);
	struct sched *s;
	int64_t job = 0;
	char *state = NULL, *err = NULL;
	int i;

	fake_script_init(&fs, rules, NELEM(rules), boots, NELEM(boots));
	T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":1,\"boots\":3}}", &job), 0);
	s = start(st, &fs, 30);
	for (i = 0; i < 200; i++) {
		free(state);
		state = machine_field(st, "state");
		if (strcmp(state, "quarantined") == 0)
			break;
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
	}
	/* a second of grace: a quarantined machine must claim nothing more */
	sleep(1);
	T_EQ_INT(sched_stop(s), 0);
	T_EQ_STR(state, "quarantined");
	err = machine_field(st, "last_error");
	T_CONTAINS(err, "quarantined after 2 boot failures in a row");
	T_CONTAINS(err, "press Clear on the dashboard");
	T_EQ_INT(strstr(err, "curl") == NULL && strstr(err, "POST") == NULL, 1);
	T_EQ_INT(fs.boots_tried, 2);
	T_EQ_INT(fix_count(st, job, "boot-failed", NULL), 2);
	T_EQ_INT(fix_count(st, job, "queued", NULL), 1);
	T_EQ_INT(rules[4].used, 0);		/* no step ran */
	free(state);
	free(err);
	store_close(st);
}

/*
 * A suite of three workloads over two kernels, two boots: every boot
 * serves all three before the next reboot, so the machine reboots
 * exactly kernels x boots = 4 times, not x workloads, and each run ran
 * its own entry's recipe.
 */
static void
test_suite_boots(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = "boot_id", .out = "b-0\n" },
		{ .match = " step", .out = HELLO "{\"type\":\"iteration\",\"iteration\":0,"
		  "\"wall_s\":0.5,\"metrics\":{\"loops_per_s\":7.0},\"missing\":[]}\n" DONE_OK },
		{ .match = "true" },
	};
	/* the fake's boot_id never changes: the boot key (group@boot_id)
	 * alone tells a boot group's runs that they need no reboot */
	const struct fake_boot boots[] = {
		{ .ret = 0, .rebooted = 1, .boot_id = "b-0" },
		{ .ret = 0, .rebooted = 1, .boot_id = "b-0" },
		{ .ret = 0, .rebooted = 1, .boot_id = "b-0" },
		{ .ret = 0, .rebooted = 1, .boot_id = "b-0" },
		{ .ret = 0, .rebooted = 1, .boot_id = "b-0" },
		{ .ret = 0, .rebooted = 1, .boot_id = "b-0" },
	};
	struct fake_script fs;
	struct store *st = fresh_store("{\"method\":\"kexec\",\"kernels\":{"
	    "\"6.1\":{\"image\":\"/boot/vmlinuz-6.1\"},\"6.2\":{\"image\":\"/boot/vmlinuz-6.2\"}},"
	    "\"timeout_s\":60}");
	struct sched *s;
	json_t *runs, *run, *samp = NULL;
	int64_t job = 0;
	size_t ns = 0, i, per[3] = { 0 };
	char buf[32];
	const char *w;

	if (st == NULL)
		return;
	fake_script_init(&fs, rules, NELEM(rules), boots, NELEM(boots));
	T_EQ_INT(fix_submit(st, rs, "{\"suite\":[{\"recipe\":\"echo\"},"
	    "{\"recipe\":\"cpu-loop\",\"preset\":\"test\"},"
	    "{\"recipe\":\"echo\",\"label\":\"echo-b\",\"params\":{\"msg\":\"b\"}}],"
	    "\"machines\":{\"class\":\"fake\"},\"matrix\":{\"kernel\":[\"6.1\",\"6.2\"]},"
	    "\"repetitions\":{\"iterations\":1,\"boots\":2}}", &job), 0);
	s = start(st, &fs, 30);
	T_EQ_STR(wait_job(st, job, 60, buf, sizeof(buf)), "done");
	T_EQ_INT(sched_stop(s), 0);
	/* 2 kernels x 2 boots, whatever the number of workloads */
	T_EQ_INT(fs.boots_tried, 4);
	T_EQ_INT(fix_count(st, job, NULL, NULL), 12);
	T_EQ_INT(fix_count(st, job, "done", &ns), 12);
	T_EQ_INT(rules[4].used, 12);
	runs = fix_runs(st, job);
	json_array_foreach(json_object_get(runs, "runs"), i, run) {
		w = json_string_value(json_object_get(json_object_get(run, "axes"), "workload"));
		T_CHECK(w != NULL);
		per[w == NULL ? 0 : strcmp(w, "echo") == 0 ? 0 : strcmp(w, "cpu-loop") == 0 ? 1 : 2]++;
	}
	json_decref(runs);
	T_EQ_INT(per[0], 4);
	T_EQ_INT(per[1], 4);
	T_EQ_INT(per[2], 4);
	/* cpu-loop's cells carry its own metric; echo's do not */
	T_EQ_INT(api_view_job_cells_get(st, job, &samp), 0);
	json_array_foreach(json_object_get(samp, "cells"), i, run) {
		json_t *sm;
		size_t k, nl = 0;

		json_array_foreach(json_object_get(run, "samples"), k, sm)
			nl += strcmp(json_string_value(json_object_get(sm, "metric")),
			    "loops_per_s") == 0;
		w = json_string_value(json_object_get(json_object_get(run, "axes"), "workload"));
		T_EQ_INT(nl, w != NULL && strcmp(w, "cpu-loop") == 0 ? 2 : 0);
	}
	T_EQ_INT(json_array_size(json_object_get(samp, "cells")), 6);
	json_decref(samp);
	T_EQ_INT(samples_unique(st, job), 1);
	store_close(st);
}

/*
 * A suite's runs load as their own entry's job and recipe; a row that
 * names another entry's workload, another recipe, no workload or another
 * entry's cell is refused before it runs.
 */
static void
test_claim_suite(void)
{
	static const struct {
		const char *what, *workload, *recipe;
		int64_t cell;
	} bad[] = {
		{ .what = "other workload", .workload = "echo-b", .cell = -1 },
		{ .what = "no workload", .workload = "", .cell = -1 },
		{ .what = "unknown workload", .workload = "nope", .cell = -1 },
		{ .what = "other recipe", .recipe = "cpu-loop", .cell = -1 },
		{ .what = "other entry's cell", .cell = 2 },
		{ .what = "cell past the plan", .cell = 3 },
	};
	struct store_claim *c = NULL, saved;
	struct runner_claim *rc;
	struct bf_diag d;
	char seen[3][32] = { "", "", "" };
	int64_t job = 0;
	size_t i, k;

	struct store *st = fresh_store(NULL);

	if (st == NULL)
		return;
	T_EQ_INT(fix_submit(st, rs, "{\"suite\":[{\"recipe\":\"echo\"},{\"recipe\":\"cpu-loop\","
	    "\"preset\":\"test\"},{\"recipe\":\"echo\",\"label\":\"echo-b\","
	    "\"params\":{\"msg\":\"b\"}}],\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":1,\"warmup\":1}}", &job), 0);
	T_EQ_INT(store_run_claim(st, "fake1", "fake", 30, &c), 0);
	for (i = 0; i < 3 && c != NULL; i++) {
		rc = NULL;
		bf_diag_clear(&d);
		T_EQ_INT(runner_claim_load(c, NULL, &rc, &d), 0);
		if (d.msg[0] != '\0')
			fprintf(stderr, "suite claim %zu: %s\n", i, d.msg);
		T_CHECK(rc != NULL && rc->suite != NULL);
		if (rc != NULL) {
			T_EQ_STR(rc->recipe->name, c->recipe);
			T_EQ_STR(rc->job->recipe, c->recipe);
			T_EQ_INT(rc->run.order, c->cell_index);
			T_EQ_INT(rc->run.timeout_s, strcmp(c->recipe, "echo") == 0 ? 60 : 600);
			T_EQ_STR(json_string_value(json_object_get(rc->recipe_json, "name")),
			    c->recipe);
			if (strcmp(c->workload, "echo-b") == 0)
				T_EQ_STR(json_string_value(json_object_get(rc->values, "msg")), "b");
		}
		runner_claim_free(rc);
		snprintf(seen[c->cell_index >= 0 && c->cell_index < 3 ? c->cell_index : 0],
		    sizeof(seen[0]), "%s", c->workload ? c->workload : "-");
		if (i == 0) {
			saved = *c;
			for (k = 0; k < NELEM(bad); k++) {
				*c = saved;
				if (bad[k].workload != NULL)
					c->workload = bad[k].workload[0] ? (char *)bad[k].workload :
					    NULL;
				if (bad[k].recipe != NULL)
					c->recipe = (char *)bad[k].recipe;
				if (bad[k].cell >= 0)
					c->cell_index = bad[k].cell;
				rc = NULL;
				bf_diag_clear(&d);
				T_EQ_INT(runner_claim_load(c, NULL, &rc, &d), BF_ERR_INVALID);
				T_CHECK(rc == NULL);
				if (d.msg[0] == '\0')
					fprintf(stderr, "suite claim %s: no message\n", bad[k].what);
				T_CHECK(d.msg[0] != '\0');
				runner_claim_free(rc);
			}
			*c = saved;
		}
		T_EQ_INT(store_run_finish(st, c->run_id, "done", 0, NULL), 0);
		store_claim_free(c);
		c = NULL;
		if (i < 2) {
			T_EQ_INT(store_run_claim(st, "fake1", "fake", 30, &c), 0);
			T_CHECK(c != NULL && c->job_id == job);
		}
	}
	T_EQ_STR(seen[0], "echo");
	T_EQ_STR(seen[1], "cpu-loop");
	T_EQ_STR(seen[2], "echo-b");
	store_claim_free(c);
	store_close(st);
}

static void
test_adaptive(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = " step", .uses = 1, .out = HELLO ITER(0, 1.0) ITER(1, 1.01) DONE_OK },
		{ .match = " step", .uses = 1, .out = HELLO ITER(0, 2.0) ITER(1, 2.02) DONE_OK },
		{ .match = " step", .uses = 1, .out = HELLO ITER(0, 3.0) ITER(1, 3.03) DONE_OK },
		{ .match = " step", .out = HELLO ITER(0, 4.0) ITER(1, 4.04) DONE_OK },
		{ .match = "true" },
	};
	struct fake_script fs;
	struct store *st = fresh_store(NULL);
	struct sched *s;
	int64_t job = 0;
	size_t ns = 0;
	char buf[32];

	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	T_EQ_INT(fix_submit(st, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":2,\"target_ci_pct\":0.5,\"min_boots\":2,"
	    "\"max_boots\":3}}", &job), 0);
	s = start(st, &fs, 30);
	T_EQ_STR(wait_job(st, job, 30, buf, sizeof(buf)), "done");
	T_EQ_INT(sched_stop(s), 0);
	/* two planned, one added by the decision, capped at max_boots */
	T_EQ_INT(fix_count(st, job, NULL, NULL), 3);
	T_EQ_INT(fix_count(st, job, "done", &ns), 3);
	T_EQ_INT(ns, 6);
	T_EQ_INT(rules[6].used, 0);
	store_close(st);
}

static void
test_lease_takeover(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = shaline },
		{ .match = " probe", .out = PROBE },
		{ .match = " step", .out = HELLO ITER(0, 0.5) ITER(1, 0.6) DONE_OK },
		{ .match = "true" },
	};
	const struct store_sample smp = { .metric = "wall_s", .value = 7.5, .unit = "s" };
	struct fake_script fs;
	struct store *dead, *live;
	struct store_claim *c = NULL;
	struct sched *s;
	json_t *runs, *run;
	int64_t job = 0;
	size_t ns = 0;
	char buf[32];
	int held = 0;

	if ((dead = fresh_store(NULL)) == NULL)
		return;
	T_EQ_INT(store_set_node(dead, "coord-dead"), 0);
	T_EQ_INT(fix_submit(dead, rs, "{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":2}}", &job), 0);
	/* the first coordinator takes the machine and the run for 1 s, streams
	 * one sample, and dies: nothing of it finishes the run */
	T_EQ_INT(store_machine_lease(dead, "fake1", 1, &held), 0);
	T_EQ_INT(held, 1);
	T_EQ_INT(store_run_claim(dead, "fake1", "fake", 1, &c), 0);
	T_CHECK(c != NULL);
	if (c != NULL)
		T_EQ_INT(store_samples_add(dead, c->run_id, c->boot, 0, &smp, 1), 0);
	store_claim_free(c);
	store_close(dead);
	/* a second coordinator on the same store takes over once the lease
	 * lapses: the run is queued again, without the dead one's sample */
	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	live = open_store("coord-live");
	s = start(live, &fs, 3);
	T_EQ_STR(wait_job(live, job, 30, buf, sizeof(buf)), "done");
	T_EQ_INT(sched_stop(s), 0);
	T_EQ_INT(rules[3].used, 1);
	T_EQ_INT(fix_count(live, job, "done", &ns), 1);
	T_EQ_INT(ns, 2);
	runs = fix_runs(live, job);
	run = json_array_get(json_object_get(runs, "runs"), 0);
	T_EQ_INT(json_integer_value(json_object_get(run, "attempt")), 2);
	T_NEAR(json_number_value(json_object_get(json_array_get(json_object_get(run, "samples"),
	    0), "value")), 0.5, 1e-9);
	json_decref(runs);
	T_EQ_INT(samples_unique(live, job), 1);
	store_close(live);
}

int
main(void)
{
	if (sched_fixture_setup() != 0)
		return 1;
	test_once();
	test_prestart_when_idle();
	test_hello_held();
	test_retry_after_lost_link();
	test_offline_backoff();
	test_dormant();
	test_dormant_delete();
	test_probe_new_machine();
	test_quarantine();
	test_adaptive();
	test_suite_boots();
	test_claim_suite();
	test_lease_takeover();
	sched_fixture_done();
	return t_done();
}
