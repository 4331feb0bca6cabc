/*
 * coord_test_runner.c: the runner through the fake transport
 * (transport-fake.c), with a sink that records what a step streams: a
 * step that ends well, a link lost mid-step (retry), an agent that fails,
 * a sample the sink refuses (requeue), boots that fail with and without
 * the machine coming back (quarantine count, offline), and the adaptive
 * add-a-boot decision. The runner never writes the store: the store here
 * only holds the claims, and the test checks no run of it has changed.
 * The evidence lines are coord_test_runner_evidence.c's.
 */
#include "runner_claim_fixture.h"

/*
 * The ways a step ends, one row each: the agent's answer on the machine
 * (its lines, exit status, a link that drops after some lines, a stale
 * agent that is replaced), and the outcome, samples and sink calls the
 * runner must give for it.
 */
static void
test_execute(void)
{
	static const struct {
		const char *what;
		int iterations;		/* the job's */
		int stale_agent;	/* the machine's agent must be replaced */
		const char *step_out;	/* what the agent prints */
		int step_status;	/* and its exit status */
		int drop_after;		/* the link drops after this many lines; 0 not */
		enum run_action action;
		const char *state;	/* NULL for a retry */
		int exit_status;
		const char *msg;	/* "" exactly; else in o.message */
		const char *msg2;	/* also in o.message, or NULL */
		int link_lost;
		int samples;		/* stored and streamed */
		int iterations_seen;	/* -1: not checked */
		int hellos;
		int agent_ok;
		const char *finals;	/* the sink's final calls, "iteration:n " */
	} cases[] = {
		{ .what = "done", .iterations = 3,
		  .step_out = HELLO ITER(0, 0.5) ITER(1, 0.6) ITER(2, 0.7) DONE_OK,
		  .action = RUN_FINISH, .state = "done", .msg = "", .samples = 3,
		  .iterations_seen = 3, .hellos = 1, .agent_ok = 1, .finals = "2:1 " },
		{ .what = "link lost mid-step", .iterations = 2,
		  .step_out = HELLO ITER(0, 0.5) ITER(1, 0.6) DONE_OK, .drop_after = 2,
		  .action = RUN_RETRY, .exit_status = -1, .msg = "attempt 1 lost on fake1",
		  .link_lost = 1,
		  .samples = 1, .iterations_seen = -1, .hellos = 1, .agent_ok = 1, .finals = "" },
		{ .what = "the workload fails", .iterations = 1, .stale_agent = 1,
		  .step_out = HELLO "{\"type\":\"iteration\",\"iteration\":0,\"exit\":2}\n"
		  "{\"type\":\"done\",\"ok\":false}\n", .step_status = 3,
		  .action = RUN_FINISH, .state = "failed", .exit_status = 3,
		  .msg = "iteration 0: workload exited with status 2",
		  .msg2 = "agent exit status 3", .samples = 0,
		  .iterations_seen = -1, .hellos = 1, .agent_ok = 1, .finals = "" },
	};
	size_t i;

	for (i = 0; i < NELEM(cases); i++) {
		struct fake_rule rules[] = {
			{ .match = "uname -m", .out = "x86_64\n" },
			{ .match = "sha256sum", .out = "0000  agent\n", .uses = 1 },
			{ .match = "sha256sum", .out = FIX_AGENT_SHA "  agent\n" },
			{ .match = " step", .out = cases[i].step_out, .status = cases[i].step_status,
			  .drop_after = cases[i].drop_after },
		};
		struct fake_script fs;
		struct transport *tr = NULL;
		struct runner_env env;
		struct rec_sink rec;
		struct run_outcome o;
		struct store_claim *c;
		char spec[160];
		int agent_ok = 0;

		fprintf(stderr, "execute case: %s\n", cases[i].what);
		if (!cases[i].stale_agent)
			rules[1].match = "no such command";	/* never used */
		memset(&rec, 0, sizeof(rec));
		fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
		env_init(&env, &rec);
		snprintf(spec, sizeof(spec), "{\"recipe\":\"echo\",\"machines\":{\"class\":"
		    "\"fake\"},\"repetitions\":{\"iterations\":%d}}", cases[i].iterations);
		c = claim(spec, NULL);
		T_EQ_INT(fake_connect(&fs, NULL, &tr, NULL), 0);
		execute(&env, tr, &agent_ok, c, &o);
		T_EQ_INT(o.action, cases[i].action);
		if (cases[i].state != NULL)
			T_EQ_STR(o.state, cases[i].state);
		T_EQ_INT(o.exit_status, cases[i].exit_status);
		if (cases[i].msg[0] == '\0')
			T_EQ_STR(o.message, "");
		else
			T_CONTAINS(o.message, cases[i].msg);
		if (cases[i].msg2 != NULL)
			T_CONTAINS(o.message, cases[i].msg2);
		T_EQ_INT(o.link_lost, cases[i].link_lost);
		T_EQ_INT(transport_alive(tr), !cases[i].link_lost);
		T_EQ_INT(o.adaptive, 0);
		if (cases[i].iterations_seen >= 0)
			T_EQ_INT(o.iterations_seen, cases[i].iterations_seen);
		T_EQ_INT(o.samples_stored, cases[i].samples);	/* wall_s per iteration */
		T_EQ_INT(rec.samples, cases[i].samples);
		T_EQ_INT(rec.hellos, cases[i].hellos);
		T_EQ_STR(rec.finals, cases[i].finals);
		T_EQ_INT(agent_ok, cases[i].agent_ok);
		T_EQ_INT(fs.uploads, cases[i].stale_agent);	/* replaced only when stale */
		T_EQ_INT(rules[3].used, 1);
		T_EQ_INT(fs.unmatched, 0);
		check_untouched(c);
		transport_close(tr);
		store_claim_free(c);
	}
}

/* The runner reads agent lines through agentline_decode: a refused line is
 * logged, and a refused iteration fails the run even when the agent says
 * ok (a hole in the measurements); a line of an unknown type only logs. */
static void
test_execute_refused_line(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = FIX_AGENT_SHA "  agent\n" },
		{ .match = " step", .uses = 1, .out = HELLO ITER(0, 0.5)
		  "{\"type\":\"iteration\",\"iteration\":1,\"exit\":300}\n" DONE_OK },
		{ .match = " step", .out = HELLO "{\"type\":\"wisdom\"}\n" ITER(0, 0.5)
		  ITER(1, 0.6) DONE_OK },
	};
	struct fake_script fs;
	struct transport *tr = NULL;
	struct runner_env env;
	struct rec_sink rec;
	struct run_outcome o;
	struct store_claim *c;
	int agent_ok = 0;

	memset(&rec, 0, sizeof(rec));
	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	env_init(&env, &rec);
	c = claim("{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":2}}", NULL);
	T_EQ_INT(fake_connect(&fs, NULL, &tr, NULL), 0);
	execute(&env, tr, &agent_ok, c, &o);
	T_EQ_INT(o.action, RUN_FINISH);
	T_EQ_STR(o.state, "failed");
	T_CONTAINS(o.message, "iteration line the coordinator refuses");
	T_CONTAINS(o.message, "iteration.exit: 300 is out of range");
	T_EQ_INT(o.iterations_seen, 1);
	T_EQ_INT(rec.samples, 1);

	memset(&rec, 0, sizeof(rec));
	execute(&env, tr, &agent_ok, c, &o);
	T_EQ_INT(o.action, RUN_FINISH);
	T_EQ_STR(o.state, "done");
	T_EQ_INT(o.iterations_seen, 2);
	T_EQ_INT(rec.samples, 2);
	T_CONTAINS(rec.last_log, "refused agent line (type: unknown type \"wisdom\")");
	check_untouched(c);
	transport_close(tr);
	store_claim_free(c);
}


static void
test_execute_store_away(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = FIX_AGENT_SHA "  agent\n" },
		{ .match = " step", .out = HELLO ITER(0, 0.5) ITER(1, 0.6) DONE_OK },
	};
	struct fake_script fs;
	struct transport *tr = NULL;
	struct runner_env env;
	struct rec_sink rec;
	struct run_outcome o;
	struct store_claim *c;
	int agent_ok = 0;

	memset(&rec, 0, sizeof(rec));
	rec.refuse_samples = 2;
	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	env_init(&env, &rec);
	c = claim("{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":2}}", NULL);
	T_EQ_INT(fake_connect(&fs, NULL, &tr, NULL), 0);
	execute(&env, tr, &agent_ok, c, &o);
	T_EQ_INT(o.action, RUN_REQUEUE);
	T_CONTAINS(o.message, "storing a result failed: the store is away");
	T_EQ_INT(o.link_lost, 0);
	check_untouched(c);
	transport_close(tr);
	store_claim_free(c);
}

#define BOOTCFG "{\"method\":\"kexec\",\"kernels\":{\"6.1\":{\"image\":\"/boot/vmlinuz-6.1\"}}," \
	"\"timeout_s\":60}"

/* Boot a two-boot job's first run with the scripted boot b. */
static void
boot_case(const struct fake_boot *b, struct run_outcome *o, struct rec_sink *rec,
    int *alive)
{
	struct fake_rule rules[] = {
		{ .match = "boot_id", .out = "b-0\n" },
		/* after a boot that worked: the agent again, and a new probe */
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = FIX_AGENT_SHA "  agent\n" },
		{ .match = " probe", .out = "{\"type\":\"fingerprint\",\"sha256\":\""
		  "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\","
		  "\"kernel\":\"6.1-new\",\"la57\":true}\n" },
	};
	struct fake_script fs;
	struct transport *tr = NULL;
	struct store_machine *m = NULL;
	struct runner_env env;
	struct store_claim *c;
	char group[512];
	int agent_ok = 1;

	memset(rec, 0, sizeof(*rec));
	fake_script_init(&fs, rules, NELEM(rules), b, 1);
	env_init(&env, rec);
	c = claim("{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":1,\"boots\":2}}", NULL);
	T_EQ_INT(store_machine_get(st, "fake1", &m), 0);
	T_EQ_INT(fake_connect(&fs, NULL, &tr, NULL), 0);
	store_boot_group(c, group, sizeof(group));
	boot(&env, m, tr, &agent_ok, c, group, o);
	T_EQ_INT(fs.boots_tried, 1);
	if (b->ret == 0) {
		/* the new boot's agent checked again, and its fingerprint taken */
		T_EQ_INT(rules[1].used, 1);
		T_EQ_INT(rules[3].used, 1);
		T_EQ_INT(rec->fingerprints, 1);
		T_EQ_INT(agent_ok, 1);
	} else {
		T_EQ_INT(rules[3].used, 0);
		T_EQ_INT(rec->fingerprints, 0);
		T_EQ_INT(agent_ok, 0);	/* a new boot may hold another agent */
	}
	*alive = transport_alive(tr);
	check_untouched(c);
	/* the second boot's run is still queued: cancel it */
	T_EQ_INT(store_job_cancel(st, c->job_id), 0);
	transport_close(tr);
	store_machine_free(m);
	store_claim_free(c);
}

/* Each way a boot ends, and the outcome the runner hands the scheduler. */
static void
test_boot(void)
{
	static const struct {
		const char *what;
		struct fake_boot boot;
		enum run_action action;
		const char *state;		/* NULL: the run goes on */
		const char *msg;		/* in o.message, or NULL */
		const char *machine_state;	/* o.machine_state, or NULL */
		int link_lost, alive;
		const char *boot_key;		/* in the recorded boot key; "" cleared */
		const char *recorded_state;	/* the last machine state recorded */
	} cases[] = {
		{ .what = "booted",
		  .boot = { .ret = 0, .rebooted = 1, .boot_id = "b-new" },
		  .action = RUN_PROCEED, .alive = 1, .boot_key = "@b-new",
		  .recorded_state = "running" },
		/* it came back after the power cycle: boot-failed, and it counts */
		{ .what = "wrong kernel, back after a power cycle",
		  .boot = { .ret = BF_ERR_STATE, .rebooted = 1, .power_cycled = 1,
		    .recovered = 1, .reason = "wrong kernel after kexec" },
		  .action = RUN_QUARANTINE, .state = "boot-failed",
		  .msg = "boot-failed: wrong kernel after kexec", .machine_state = "idle",
		  .alive = 1, .boot_key = "" },	/* the boot it is in is unknown now */
		/* it did not come back: offline, the link dropped, not held against it */
		{ .what = "gone after the power cycle",
		  .boot = { .ret = BF_ERR_TIMEOUT, .rebooted = 1, .power_cycled = 1,
		    .recovered = 0, .drop = 1, .reason = "no SSH after power cycle" },
		  .action = RUN_FINISH, .state = "boot-failed",
		  .msg = "no SSH after power cycle", .machine_state = "offline",
		  .link_lost = 1, .alive = 0 },
	};
	struct rec_sink rec;
	struct run_outcome o;
	size_t i;
	int alive;

	T_EQ_INT(store_machine_set_boot(st, "fake1", BOOTCFG), 0);
	for (i = 0; i < NELEM(cases); i++) {
		fprintf(stderr, "boot case: %s\n", cases[i].what);
		boot_case(&cases[i].boot, &o, &rec, &alive);
		T_EQ_INT(o.action, cases[i].action);
		if (cases[i].state != NULL)
			T_EQ_STR(o.state, cases[i].state);
		if (cases[i].msg != NULL)
			T_CONTAINS(o.message, cases[i].msg);
		if (cases[i].machine_state != NULL)
			T_EQ_STR(o.machine_state, cases[i].machine_state);
		T_EQ_INT(o.link_lost, cases[i].link_lost);
		T_EQ_INT(alive, cases[i].alive);
		if (cases[i].boot_key != NULL && cases[i].boot_key[0] != '\0')
			T_CONTAINS(rec.boot_key, cases[i].boot_key);
		else if (cases[i].boot_key != NULL)
			T_EQ_STR(rec.boot_key, "");
		if (cases[i].recorded_state != NULL)
			T_EQ_STR(rec.last_machine_state, cases[i].recorded_state);
	}
	T_EQ_INT(store_machine_set_boot(st, "fake1", NULL), 0);
}

/*
 * A machine already in the run's boot (an earlier attempt booted it) is not
 * booted again; but when its stored fingerprint is of another kernel than
 * the one it reports (that attempt's probe was lost), it is probed now.
 */
static void
stale_case(const struct store_claim *c, const char *group, const char *fp_kernel,
    int want_probes)
{
	struct fake_rule rules[] = {
		{ .match = "boot_id", .out = "b-0\n" },
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = FIX_AGENT_SHA "  agent\n" },
		{ .match = " probe", .out = "{\"type\":\"fingerprint\",\"sha256\":\""
		  "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd\","
		  "\"kernel\":\"6.1\"}\n" },
	};
	struct fake_script fs;
	struct transport *tr = NULL;
	struct store_machine *m = NULL;
	struct runner_env env;
	struct rec_sink rec;
	struct run_outcome o;
	char fp[128];
	int agent_ok = 0;

	memset(&rec, 0, sizeof(rec));
	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	env_init(&env, &rec);
	snprintf(fp, sizeof(fp), "{\"kernel\":\"%s\"}", fp_kernel);
	T_EQ_INT(store_machine_set_fingerprint(st, "fake1", fp,
	    "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"), 0);
	T_EQ_INT(store_machine_get(st, "fake1", &m), 0);
	T_EQ_INT(fake_connect(&fs, NULL, &tr, NULL), 0);
	boot(&env, m, tr, &agent_ok, c, group, &o);
	T_EQ_INT(o.action, RUN_PROCEED);
	T_EQ_INT(fs.boots_tried, 0);		/* in the boot already */
	T_EQ_INT(rules[3].used, want_probes);
	T_EQ_INT(rec.fingerprints, want_probes);
	transport_close(tr);
	store_machine_free(m);
}

static void
test_boot_stale_fingerprint(void)
{
	struct store_claim *c;
	char group[512], key[600];

	c = claim("{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":1,\"boots\":2}}", NULL);
	if (c == NULL)
		return;
	store_boot_group(c, group, sizeof(group));
	snprintf(key, sizeof(key), "%s@b-0", group);
	T_EQ_INT(store_machine_set_boot(st, "fake1", BOOTCFG), 0);
	T_EQ_INT(store_machine_set_boot_key(st, "fake1", key), 0);
	T_EQ_INT(store_machine_update(st, "fake1", NULL, NULL, "6.1", NULL, NULL, 0), 0);
	stale_case(c, group, "6.1", 0);
	stale_case(c, group, "6.0-before", 1);
	check_untouched(c);
	T_EQ_INT(store_job_cancel(st, c->job_id), 0);
	T_EQ_INT(store_machine_set_boot_key(st, "fake1", NULL), 0);
	T_EQ_INT(store_machine_set_boot(st, "fake1", NULL), 0);
	store_claim_free(c);
}

/*
 * The link drops at the probe right after a verified boot: the runner
 * reconnects through the boot method without a fresh boot. Found in the
 * boot it verified, the run goes on with a new probe; found in another
 * boot (the machine rebooted by itself), the run is tried again and the
 * boot key is cleared so the next attempt boots.
 */
static void
relink_case(const struct fake_boot *boots, struct run_outcome *o, struct rec_sink *rec)
{
	struct fake_rule rules[] = {
		{ .match = "boot_id", .out = "b-0\n" },
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = FIX_AGENT_SHA "  agent\n" },
		{ .match = " probe", .uses = 1, .ret = BF_ERR_LOST },
		{ .match = " probe", .out = "{\"type\":\"fingerprint\",\"sha256\":\""
		  "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc\","
		  "\"kernel\":\"6.1-new\"}\n" },
	};
	struct fake_script fs;
	struct transport *tr = NULL;
	struct store_machine *m = NULL;
	struct runner_env env;
	struct store_claim *c;
	char group[512];
	int agent_ok = 1;

	memset(rec, 0, sizeof(*rec));
	fake_script_init(&fs, rules, NELEM(rules), boots, 2);
	env_init(&env, rec);
	c = claim("{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":1,\"boots\":2}}", NULL);
	T_EQ_INT(store_machine_get(st, "fake1", &m), 0);
	T_EQ_INT(fake_connect(&fs, NULL, &tr, NULL), 0);
	store_boot_group(c, group, sizeof(group));
	boot(&env, m, tr, &agent_ok, c, group, o);
	T_EQ_INT(fs.boots_tried, 2);		/* the boot, then the reconnect */
	T_EQ_INT(rules[3].used, 1);		/* the probe the link dropped at */
	if (o->action == RUN_PROCEED) {
		T_EQ_INT(rules[4].used, 1);
		T_EQ_INT(rec->fingerprints, 1);
	} else {
		T_EQ_INT(rules[4].used, 0);
		T_EQ_INT(rec->fingerprints, 0);
	}
	check_untouched(c);
	T_EQ_INT(store_job_cancel(st, c->job_id), 0);
	transport_close(tr);
	store_machine_free(m);
	store_claim_free(c);
}

static void
test_boot_link_drop(void)
{
	const struct fake_boot same[2] = {
		{ .ret = 0, .rebooted = 1, .boot_id = "b-new" },
		{ .ret = 0, .rebooted = 0, .boot_id = "b-new" },
	};
	const struct fake_boot other[2] = {
		{ .ret = 0, .rebooted = 1, .boot_id = "b-new" },
		{ .ret = 0, .rebooted = 0, .boot_id = "b-self" },
	};
	struct rec_sink rec;
	struct run_outcome o;

	T_EQ_INT(store_machine_set_boot(st, "fake1", BOOTCFG), 0);
	relink_case(same, &o, &rec);
	T_EQ_INT(o.action, RUN_PROCEED);
	T_EQ_INT(o.link_lost, 0);
	T_CONTAINS(rec.boot_key, "@b-new");

	relink_case(other, &o, &rec);
	T_EQ_INT(o.action, RUN_RETRY);
	T_CONTAINS(o.message, "rebooted by itself");
	T_CONTAINS(o.message, "b-self");
	T_EQ_STR(rec.boot_key, "");		/* the next attempt boots again */
	T_EQ_INT(store_machine_set_boot(st, "fake1", NULL), 0);
}

static void
test_boot_without_config(void)
{
	struct fake_rule rules[] = { { .match = "" } };
	struct fake_script fs;
	struct transport *tr = NULL;
	struct store_machine *m = NULL;
	struct runner_env env;
	struct rec_sink rec;
	struct run_outcome o;
	struct store_claim *c;
	int agent_ok = 1;

	memset(&rec, 0, sizeof(rec));
	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	env_init(&env, &rec);
	c = claim("{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":1,\"boots\":2}}", NULL);
	T_EQ_INT(store_machine_get(st, "fake1", &m), 0);
	T_EQ_INT(fake_connect(&fs, NULL, &tr, NULL), 0);
	boot(&env, m, tr, &agent_ok, c, "g", &o);
	T_EQ_INT(o.action, RUN_PROCEED);
	T_CONTAINS(rec.last_log, "repetition without a reboot");
	T_EQ_INT(fs.boots_tried + fs.execs + fs.captures, 0);
	check_untouched(c);
	T_EQ_INT(store_job_cancel(st, c->job_id), 0);
	transport_close(tr);
	store_machine_free(m);
	store_claim_free(c);
}

static void
test_adaptive_decide(void)
{
	struct runner_adaptive ad;
	/* boot 0 measures ~1, boot 1 ~2: the CI over two boot means is wide */
	const double v[] = { 1.0, 1.01, 2.0, 2.02 };
	const int boot[] = { 0, 0, 1, 1 };
	const double tight[] = { 1.0, 1.0, 1.0, 1.0 };

	memset(&ad, 0, sizeof(ad));
	ad.target_ci_pct = 1;
	ad.max_boots = 4;
	snprintf(ad.metric, sizeof(ad.metric), "wall_s");
	T_EQ_INT(runner_adaptive_decide(&ad, v, boot, 4, 2), 1);
	T_CONTAINS(ad.note, "adaptive: wall_s 95% CI");
	T_CONTAINS(ad.note, "adding boot 2");
	/* a boot still to measure: wait for it */
	T_EQ_INT(runner_adaptive_decide(&ad, v, boot, 4, 3), 0);
	T_EQ_STR(ad.note, "");
	/* at the cap */
	ad.max_boots = 2;
	T_EQ_INT(runner_adaptive_decide(&ad, v, boot, 4, 2), 0);
	/* narrow enough */
	ad.max_boots = 4;
	T_EQ_INT(runner_adaptive_decide(&ad, tight, boot, 4, 2), 0);
	/* one boot is no interval */
	T_EQ_INT(runner_adaptive_decide(&ad, v, boot, 2, 1), 0);
	T_EQ_INT(runner_adaptive_decide(&ad, v, boot, 0, 0), 0);
}

static void
test_adaptive_outcome(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = FIX_AGENT_SHA "  agent\n" },
		{ .match = " step", .out = HELLO ITER(0, 0.5) ITER(1, 0.6) DONE_OK },
	};
	struct fake_script fs;
	struct transport *tr = NULL;
	struct runner_env env;
	struct rec_sink rec;
	struct run_outcome o;
	struct store_claim *c;
	int agent_ok = 0;

	memset(&rec, 0, sizeof(rec));
	fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
	env_init(&env, &rec);
	c = claim("{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":2,\"target_ci_pct\":0.5,\"max_boots\":5}}", NULL);
	T_EQ_INT(fake_connect(&fs, NULL, &tr, NULL), 0);
	execute(&env, tr, &agent_ok, c, &o);
	T_EQ_INT(o.action, RUN_FINISH);
	T_EQ_STR(o.state, "done");
	T_EQ_INT(o.adaptive, 1);
	T_EQ_STR(o.ad.metric, "wall_s");
	T_NEAR(o.ad.target_ci_pct, 0.5, 1e-12);
	T_EQ_INT(o.ad.max_boots, 5);
	check_untouched(c);
	T_EQ_INT(store_job_cancel(st, c->job_id), 0);
	transport_close(tr);
	store_claim_free(c);
}

/*
 * runner_claim_load: a claim whose row says anything its job's plan does
 * not (columns, cell, boot, values, spec) is refused before it runs; one
 * that agrees is loaded with its plan from its columns.
 */
static void
test_claim_load(void)
{
	static const struct {
		const char *what;
		int64_t cell_index, run_order;
		int boot, iterations, warmup, timeout_s;
		const char *values, *spec, *msg;
	} cases[] = {
		{ .what = "as stored", .msg = NULL },
		{ .what = "iterations", .iterations = 4, .msg = "not its plan" },
		{ .what = "warmup", .warmup = 2, .msg = "not its plan" },
		{ .what = "timeout", .timeout_s = 86400, .msg = "not its plan" },
		{ .what = "order", .run_order = 4096 * 7, .msg = "not its plan" },
		{ .what = "negative order", .run_order = -5, .msg = "not its plan" },
		{ .what = "cell", .cell_index = 1, .msg = "not a cell of job" },
		{ .what = "huge cell", .cell_index = INT64_MAX, .msg = "not a cell of job" },
		{ .what = "negative cell", .cell_index = -1, .msg = "not a cell of job" },
		{ .what = "boot", .boot = 2, .msg = "is not a boot of job" },
		{ .what = "negative boot", .boot = -1, .msg = "is not a boot of job" },
		{ .what = "values", .values = "{\"msg\":\"$(id)\"}", .msg = "not a cell of job" },
		{ .what = "spec", .spec = "{\"job\": [", .msg = "" },
		{ .what = "spec recipe", .spec = "{\"job\":{},\"recipe\":7}", .msg = "spec" },
	};
	struct store_claim *c, saved;
	struct runner_claim *rc;
	struct bf_diag d;
	size_t i;
	int r;

	c = claim("{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
	    "\"repetitions\":{\"iterations\":3,\"warmup\":1,\"boots\":2}}", NULL);
	if (c == NULL)
		return;
	T_EQ_INT(c->iterations, 3);
	T_EQ_INT(c->warmup, 1);
	T_EQ_INT(c->timeout_s, 60);		/* echo.json's */
	saved = *c;
	for (i = 0; i < NELEM(cases); i++) {
		*c = saved;
		if (cases[i].cell_index != 0)
			c->cell_index = cases[i].cell_index;
		if (cases[i].run_order != 0)
			c->run_order = cases[i].run_order;
		if (cases[i].boot != 0)
			c->boot = cases[i].boot;
		if (cases[i].iterations != 0)
			c->iterations = cases[i].iterations;
		if (cases[i].warmup != 0)
			c->warmup = cases[i].warmup;
		if (cases[i].timeout_s != 0)
			c->timeout_s = cases[i].timeout_s;
		if (cases[i].values != NULL)
			c->values_json = (char *)cases[i].values;
		if (cases[i].spec != NULL)
			c->spec_json = (char *)cases[i].spec;
		rc = NULL;
		bf_diag_clear(&d);
		if (cases[i].msg == NULL) {
			T_EQ_INT(runner_claim_load(c, NULL, &rc, &d), 0);
			T_CHECK(rc != NULL && rc->c == c && rc->job != NULL && rc->recipe != NULL);
			if (rc != NULL) {
				T_EQ_INT(rc->run.iterations, 3);
				T_EQ_INT(rc->run.warmup, 1);
				T_EQ_INT(rc->run.timeout_s, 60);
				T_EQ_INT(rc->run.boot, 0);
				T_EQ_INT(rc->run.order, 0);
				T_EQ_STR(rc->recipe->name, "echo");
			}
		} else {
			r = runner_claim_load(c, NULL, &rc, &d);
			/* a spec that does not parse is whatever jx says it is */
			T_CHECK(cases[i].spec != NULL ? r < 0 : r == BF_ERR_INVALID);
			T_CHECK(rc == NULL);
			if (strstr(d.msg, cases[i].msg) == NULL)
				fprintf(stderr, "claim %s: %s\n", cases[i].what, d.msg);
			T_CONTAINS(d.msg, cases[i].msg);
		}
		runner_claim_free(rc);
	}
	*c = saved;
	check_untouched(c);
	T_EQ_INT(store_job_cancel(st, c->job_id), 0);	/* its boot 1: not for the others */
	store_claim_free(c);
}

/*
 * A matrix whose axes are not in alphabetical order expands in the order
 * written, and the stored spec keeps it: every run of the job loads. A
 * store written before specs kept their order holds the spec sorted, so
 * its cells expand in another order than they were numbered: each run is
 * still found in the validated plan by what it holds, never refused for
 * its number alone.
 */
static void
test_claim_axis_order(void)
{
	struct store_claim *c = NULL;
	struct runner_claim *rc;
	struct bf_diag d;
	json_t *spec;
	char *sorted = NULL, *orig;
	int64_t job = 0;
	size_t i;

	c = claim("{\"recipe\":\"page-touch\",\"machines\":{\"class\":\"fake\"},"
	    "\"matrix\":{\"passes\":[1,2],\"mb\":[8,16]},\"repetitions\":{\"iterations\":1}}",
	    &job);
	if (c == NULL)
		return;
	T_CHECK(strstr(c->spec_json, "{\"passes\":[1,2],\"mb\":[8,16]}") != NULL);
	spec = json_loads(c->spec_json, 0, NULL);
	sorted = spec != NULL ? json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(spec);
	T_CHECK(sorted != NULL && strstr(sorted, "{\"mb\":[8,16],\"passes\":[1,2]}") != NULL);
	for (i = 0; i < 4 && c != NULL && sorted != NULL; i++) {
		rc = NULL;
		bf_diag_clear(&d);
		T_EQ_INT(runner_claim_load(c, NULL, &rc, &d), 0);
		runner_claim_free(rc);
		rc = NULL;
		orig = c->spec_json;
		c->spec_json = sorted;		/* as an older release stored it */
		T_EQ_INT(runner_claim_load(c, NULL, &rc, &d), 0);
		if (d.msg[0] != '\0')
			fprintf(stderr, "axis order, cell %lld: %s\n", (long long)c->cell_index,
			    d.msg);
		runner_claim_free(rc);
		c->spec_json = orig;
		T_EQ_INT(store_run_finish(st, c->run_id, "done", 0, NULL), 0);
		store_claim_free(c);
		c = NULL;
		if (i < 3) {
			T_EQ_INT(store_run_claim(st, "fake1", "fake", 30, &c), 0);
			T_CHECK(c != NULL && c->job_id == job);
		}
	}
	T_EQ_INT((long long)i, 4);
	store_claim_free(c);
	free(sorted);
}

int
main(void)
{
	if (runner_fixture_setup() != 0)
		return 1;
	test_claim_load();
	test_claim_axis_order();
	test_execute();
	test_execute_refused_line();
	test_execute_store_away();
	test_boot();
	test_boot_without_config();
	test_boot_stale_fingerprint();
	test_boot_link_drop();
	test_adaptive_decide();
	test_adaptive_outcome();
	return runner_fixture_done();
}
