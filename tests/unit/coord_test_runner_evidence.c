/*
 * coord_test_runner_evidence.c: what the runner makes of the evidence
 * lines, through the fake transport and the recording sink
 * (runner_fixture.h, runner_claim_fixture.h): the snapshot and counters of a step, the samples said
 * final (the last measured iteration's, which the scheduler's sink holds
 * for the run's finish), and a profiled run's artifacts.
 */
#include "runner_claim_fixture.h"

#define SNAP "{\"type\":\"snapshot\",\"sha256\":\"" FIX_AGENT_SHA "\",\"snapshot\":" \
	"{\"vm.swappiness\":\"60\",\"transparent_hugepage/enabled\":\"always\"," \
	"\"hugetlb/x\":null}}\n"
#define CTRS(i, more) "{\"type\":\"counters\",\"iteration\":" #i ",\"metrics\":" \
	"{\"vmstat.thp_fault_alloc\":" #i "00,\"smaps.service0.AnonHugePages_kb\":2048" more "}," \
	"\"unsupported\":{\"pmu.cycles\":\"unsupported: errno 2 (No such file or directory)\"}," \
	"\"notes\":[\"pmu.page-faults: multiplexed\"]}\n"
#define LONGNAME "vmstat.a_counter_name_that_is_far_longer_than_any_metric_name_the_store_takes"

/*
 * The evidence lines: the snapshot goes to the sink as canonical text
 * (keys sorted), each measured iteration's counters become samples of that
 * iteration with units from their names; warmup's, a failed iteration's
 * and an out-of-order line's are not stored; a counter named like one of
 * the iteration's own metrics, or too long for the store, is left out and
 * said so; what could not be counted is logged once. A snapshot the store
 * refuses stops the step like a refused sample.
 */
static void
test_execute_evidence(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = FIX_AGENT_SHA "  agent\n" },
		{ .match = " step", .out = HELLO SNAP
		  "{\"type\":\"iteration\",\"iteration\":0,\"warmup\":true,\"wall_s\":1}\n"
		  CTRS(0, "") ITER(1, 0.5) CTRS(1, ",\"wall_s\":9,\"" LONGNAME "\":1") ITER(2, 0.6)
		  CTRS(7, "") CTRS(2, "")
		  "{\"type\":\"iteration\",\"iteration\":3,\"exit\":1,\"wall_s\":1}\n" CTRS(3, "")
		  DONE_OK },
	};
	struct fake_script fs;
	struct transport *tr = NULL;
	struct runner_env env;
	struct rec_sink rec;
	struct run_outcome o;
	struct store_claim *c;
	int agent_ok = 0, pass;
	size_t i;

	for (pass = 0; pass < 2; pass++) {
		memset(&rec, 0, sizeof(rec));
		rec.refuse_snapshot = pass == 1;
		for (i = 0; i < NELEM(rules); i++)
			rules[i].used = 0;
		fake_script_init(&fs, rules, NELEM(rules), NULL, 0);
		env_init(&env, &rec);
		c = claim("{\"recipe\":\"echo\",\"machines\":{\"class\":\"fake\"},"
		    "\"repetitions\":{\"iterations\":3,\"warmup\":1}}", NULL);
		T_EQ_INT(fake_connect(&fs, NULL, &tr, NULL), 0);
		agent_ok = 0;
		execute(&env, tr, &agent_ok, c, &o);
		T_EQ_INT(rec.snapshots, 1);
		if (pass == 1) {
			T_EQ_INT(o.action, RUN_REQUEUE);
			T_CONTAINS(o.message, "no longer this coordinator's");
			T_EQ_INT(o.snapshot_seen, 0);
			check_untouched(c);
			transport_close(tr);
			store_claim_free(c);
			break;
		}
		/* iteration 3 failed: the run fails, but what was measured was streamed */
		T_EQ_INT(o.action, RUN_FINISH);
		T_EQ_INT(o.snapshot_seen, 1);
		T_EQ_STR(rec.snapshot, "{\"hugetlb/x\":null,\"transparent_hugepage/enabled\":"
		    "\"always\",\"vm.swappiness\":\"60\"}");
		/* iterations 1 and 2 (stored as 0 and 1): wall_s, then 2 counters each */
		T_EQ_INT(o.counters_stored, 4);
		T_CONTAINS(rec.names, "0:wall_s=s 0:vmstat.thp_fault_alloc=count "
		    "0:smaps.service0.AnonHugePages_kb=KiB 1:wall_s=s ");
		T_CONTAINS(rec.names, "1:vmstat.thp_fault_alloc=count");
		T_CHECK(strstr(rec.names, LONGNAME) == NULL);
		T_CHECK(strstr(rec.names, "-1:") == NULL && strstr(rec.names, "2:") == NULL);
		T_EQ_INT(rec.samples, 6);
		T_CONTAINS(rec.logs_all, "counters not measured: pmu.cycles (unsupported: errno 2");
		T_CONTAINS(rec.logs_all, "counters: pmu.page-faults: multiplexed|");
		T_CONTAINS(rec.logs_all, "counters: 2 not stored");
		/* logged once, not per line */
		T_CHECK(strstr(strstr(rec.logs_all, "counters not measured") + 1,
		    "counters not measured") == NULL);
		check_untouched(c);
		transport_close(tr);
		store_claim_free(c);
	}
}

/*
 * The last measured iteration's samples, its own and its counters', are
 * the ones said final (the sink may hold them for the run's finish); with
 * a warmup the index is the measured one's.
 */
static void
test_execute_final(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = FIX_AGENT_SHA "  agent\n" },
		{ .match = " step", .out = HELLO SNAP
		  "{\"type\":\"iteration\",\"iteration\":0,\"warmup\":true,\"wall_s\":1}\n"
		  CTRS(0, "") ITER(1, 0.5) CTRS(1, "") ITER(2, 0.6) CTRS(2, "") DONE_OK },
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
	    "\"repetitions\":{\"iterations\":2,\"warmup\":1}}", NULL);
	T_EQ_INT(fake_connect(&fs, NULL, &tr, NULL), 0);
	execute(&env, tr, &agent_ok, c, &o);
	T_EQ_INT(o.action, RUN_FINISH);
	T_EQ_STR(o.state, "done");
	T_EQ_STR(rec.finals, "1:1 1:2 ");
	T_EQ_INT(o.samples_stored, 2);
	T_EQ_INT(o.counters_stored, 4);
	check_untouched(c);
	transport_close(tr);
	store_claim_free(c);
}

#define FOLDED_SHA "044a3cc90b711574bbf9bb6f070db9500adc4c3a79db2e8f3ab1627b28e37d29"
#define ART(name, seq, data) "{\"type\":\"artifact\",\"name\":\"" name "\",\"seq\":" #seq \
	",\"data\":\"" data "\"}\n"
#define ART_END(name, bytes, sha) "{\"type\":\"artifact_end\",\"name\":\"" name "\"," \
	"\"bytes\":" #bytes ",\"sha256\":\"" sha "\"}\n"

/*
 * A profiled run: the profiled iteration (index 2, after 2 measured) is
 * neither counted nor stored, and its failure would not fail the run; the
 * folded artifact, in two chunks, is stored as its bytes; a perf.data
 * whose hash is not what the end line says, one whose chunks come out of
 * order and one the agent dropped are each said in the run log, and the
 * run is done.
 */
static void
test_execute_profile(void)
{
	struct fake_rule rules[] = {
		{ .match = "uname -m", .out = "x86_64\n" },
		{ .match = "sha256sum", .out = FIX_AGENT_SHA "  agent\n" },
		{ .match = " step", .out = HELLO ITER(0, 0.5) ITER(1, 0.6)
		  "{\"type\":\"iteration\",\"iteration\":2,\"profile\":true,\"exit\":1,"
		  "\"wall_s\":9}\n"
		  ART("folded", 0, "YTti") ART("folded", 1, "IDMK")
		  "{\"type\":\"artifact_end\",\"name\":\"folded\",\"bytes\":6,"
		  "\"sha256\":\"" FOLDED_SHA "\",\"event\":\"cpu-clock\"}\n"
		  ART("perf.data", 0, "YTtiIDMK") ART_END("perf.data", 6, FIX_AGENT_SHA)
		  ART("perf.data", 0, "YTti") ART("perf.data", 2, "IDMK")
		  ART_END("perf.data", 6, FOLDED_SHA)
		  "{\"type\":\"artifact_end\",\"name\":\"perf.data\",\"bytes\":40000000,"
		  "\"dropped\":\"over the cap of 33554432 bytes\"}\n"
		  "{\"type\":\"done\",\"ok\":true,\"iterations\":2}\n" },
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
	    "\"repetitions\":{\"iterations\":2},\"profile\":{\"perf\":\"record\"}}", NULL);
	T_EQ_INT(fake_connect(&fs, NULL, &tr, NULL), 0);
	execute(&env, tr, &agent_ok, c, &o);
	T_EQ_INT(o.action, RUN_FINISH);
	T_EQ_STR(o.state, "done");
	T_EQ_INT(o.iterations_seen, 2);
	T_EQ_INT(o.samples_stored, 2);
	T_CHECK(strstr(rec.names, "2:") == NULL);
	T_EQ_INT(o.artifacts_stored, 1);
	T_EQ_STR(rec.artifact, "folded@cpu-clock:a;b 3\n ");
	T_EQ_STR(rec.finals, "");	/* a profiled iteration follows the last */
	T_CONTAINS(rec.logs_all, "profile: the profiled iteration did not end well");
	T_CONTAINS(rec.logs_all, "profile: perf.data refused: 6 bytes with sha256 044a3cc90b71...,"
	    " the agent said 6 bytes, aaaaaaaaaaaa...");
	T_CONTAINS(rec.logs_all, "profile: perf.data refused: chunk 2 of perf.data arrived where "
	    "chunk 1 of perf.data was due");
	T_CONTAINS(rec.logs_all, "profile: perf.data (40000000 bytes) not sent by the agent: "
	    "over the cap of 33554432 bytes");
	check_untouched(c);
	transport_close(tr);
	store_claim_free(c);
}

int
main(void)
{
	if (runner_fixture_setup() != 0)
		return 1;
	test_execute_evidence();
	test_execute_final();
	test_execute_profile();
	return runner_fixture_done();
}
