/*
 * test_evidence.c: the report's evidence (common/evidence.h): which
 * counters become rows and in what order, the line list and its cap, how
 * snapshot values are printed, the THP checks of a cell against its
 * snapshot, drift within a job with knob axes, and the recipe's
 * expectations against cells; hostile snapshots
 * (not objects, values of other types, huge values) give notes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "evidence.h"
#include "recipe.h"
#include "t.h"

/* The lines of w joined by "\n", for T_CONTAINS (static). */
static const char *
joined(const struct evidence_lines *w)
{
	static char out[64 * 1024];
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < w->n; i++)
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s\n", w->line[i]);
	return out;
}

static void
test_is_counter(void)
{
	static const struct {
		const char *name;
		int counter, thp;
	} tab[] = {
		{ .name = "vmstat.thp_fault_alloc", .counter = 1, .thp = 1 },
		{ .name = "vmstat.thp_fault_fallback", .counter = 1, .thp = 1 },
		{ .name = "vmstat.thp_fault_fallback_charge", .counter = 1, .thp = 0 },
		{ .name = "vmstat.pgfault", .counter = 1, .thp = 0 },
		{ .name = "hugepages-64kB.anon_fault_alloc", .counter = 1, .thp = 1 },
		{ .name = "hugepages-2048kB.anon_fault_fallback", .counter = 1, .thp = 1 },
		{ .name = "hugepages-64kB.anon_fault_fallback_charge", .counter = 1, .thp = 0 },
		{ .name = "hugepages-064kB.anon_fault_alloc", .counter = 1, .thp = 0 },
		{ .name = "hugepages-kB.anon_fault_alloc", .counter = 1, .thp = 0 },
		{ .name = "hugepages-64MB.anon_fault_alloc", .counter = 1, .thp = 0 },
		{ .name = "hugepages-99999999999999999999kB.anon_fault_alloc", .counter = 1,
		  .thp = 0 },
		{ .name = "hugepages-", .counter = 1, .thp = 0 },
		{ .name = "cgroup.memory.stat.anon_thp", .counter = 1, .thp = 0 },
		{ .name = "pmu.dTLB-load-misses", .counter = 1, .thp = 0 },
		{ .name = "smaps.service0.AnonHugePages_kb", .counter = 1, .thp = 0 },
		{ .name = "get_rps", .counter = 0, .thp = 0 },
		{ .name = "wall_s", .counter = 0, .thp = 0 },
		{ .name = "vmstat", .counter = 0, .thp = 0 },
		{ .name = "", .counter = 0, .thp = 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (evidence_is_counter(tab[i].name) != tab[i].counter ||
		    evidence_is_thp_counter(tab[i].name) != tab[i].thp)
			fprintf(stderr, "name %s\n", tab[i].name);
		T_EQ_INT(evidence_is_counter(tab[i].name), tab[i].counter);
		T_EQ_INT(evidence_is_thp_counter(tab[i].name), tab[i].thp);
	}
	T_EQ_INT(evidence_is_counter(NULL), 0);
	T_EQ_INT(evidence_is_thp_counter(NULL), 0);
}

static void
test_mode(void)
{
	enum evidence_counters m = EVIDENCE_COUNTERS_ALL;

	T_EQ_INT(evidence_counters_mode(NULL, &m), 0);
	T_EQ_INT(m, EVIDENCE_COUNTERS_THP);
	T_EQ_INT(evidence_counters_mode("none", &m), 0);
	T_EQ_INT(m, EVIDENCE_COUNTERS_NONE);
	T_EQ_INT(evidence_counters_mode("all", &m), 0);
	T_EQ_INT(m, EVIDENCE_COUNTERS_ALL);
	T_EQ_INT(evidence_counters_mode("thp", &m), 0);
	T_EQ_INT(m, EVIDENCE_COUNTERS_THP);
	T_EQ_INT(evidence_counters_mode("THP", &m), BF_ERR_INVALID);
	T_EQ_INT(evidence_counters_mode("", &m), BF_ERR_INVALID);
	T_EQ_INT(evidence_counters_mode("all ", &m), BF_ERR_INVALID);
}

/* The order a reviewer reads: the vmstat pair, then each mTHP size
 * ascending (numerically, not as text), then the rest by name. */
static void
test_pick(void)
{
	static const char *const names[] = {
		"pmu.cycles",				/* 0 */
		"hugepages-2048kB.anon_fault_fallback",	/* 1 */
		"vmstat.thp_fault_fallback",		/* 2 */
		"get_rps",				/* 3: not a counter */
		"hugepages-64kB.anon_fault_alloc",	/* 4 */
		"hugepages-2048kB.anon_fault_alloc",	/* 5 */
		"vmstat.pgfault",			/* 6 */
		"vmstat.thp_fault_alloc",		/* 7 */
		"hugepages-64kB.anon_fault_fallback",	/* 8 */
		NULL,					/* 9: left out by the caller */
		"cgroup.memory.stat.anon_thp",		/* 10 */
	};
	static const size_t want_thp[] = { 7, 2, 4, 8, 5, 1 };
	static const size_t want_all[] = { 7, 2, 4, 8, 5, 1, 10, 0, 6 };
	size_t idx[16], np, nmore, i, n = sizeof(names) / sizeof(names[0]);

	T_EQ_INT(evidence_counters_pick(names, n, EVIDENCE_COUNTERS_THP, 16, idx, &np, &nmore),
	    0);
	T_EQ_INT(np, 6);
	T_EQ_INT(nmore, 0);
	for (i = 0; i < np && i < 6; i++)
		T_EQ_INT(idx[i], want_thp[i]);
	T_EQ_INT(evidence_counters_pick(names, n, EVIDENCE_COUNTERS_ALL, 16, idx, &np, &nmore),
	    0);
	T_EQ_INT(np, 9);
	for (i = 0; i < np && i < 9; i++)
		T_EQ_INT(idx[i], want_all[i]);
	/* room for 3: the rest counted, the first three kept */
	T_EQ_INT(evidence_counters_pick(names, n, EVIDENCE_COUNTERS_ALL, 3, idx, &np, &nmore),
	    0);
	T_EQ_INT(np, 3);
	T_EQ_INT(nmore, 6);
	T_EQ_INT(idx[2], 4);
	T_EQ_INT(evidence_counters_pick(names, n, EVIDENCE_COUNTERS_ALL, 0, idx, &np, &nmore),
	    0);
	T_EQ_INT(np, 0);
	T_EQ_INT(nmore, 9);
	T_EQ_INT(evidence_counters_pick(names, n, EVIDENCE_COUNTERS_NONE, 16, idx, &np, &nmore),
	    0);
	T_EQ_INT(np + nmore, 0);
	T_EQ_INT(evidence_counters_pick(names, 0, EVIDENCE_COUNTERS_ALL, 16, idx, &np, &nmore),
	    0);
	T_EQ_INT(np + nmore, 0);
}

static void
test_lines(void)
{
	struct evidence_lines w;
	const char *vec[EVIDENCE_MAX_LINES + 2];
	char *extra = NULL, *big;
	size_t i;

	memset(&w, 0, sizeof(w));
	T_OK(evidence_lines_vector(&w, vec, 4, &extra));
	T_CHECK(vec[0] == NULL && extra == NULL);
	for (i = 0; i < EVIDENCE_MAX_LINES + 5; i++)
		T_OK(evidence_lines_add(&w, "line %zu", i));
	T_EQ_INT(w.n, EVIDENCE_MAX_LINES);
	T_EQ_INT(w.more, 5);
	T_OK(evidence_lines_vector(&w, vec, EVIDENCE_MAX_LINES + 2, &extra));
	T_EQ_STR(vec[0], "line 0");
	T_EQ_STR(vec[EVIDENCE_MAX_LINES - 1], "line 30");
	T_EQ_STR(vec[EVIDENCE_MAX_LINES], "5 more warnings not shown");
	T_CHECK(vec[EVIDENCE_MAX_LINES + 1] == NULL);
	free(extra);
	/* a short vector: what does not fit is counted too */
	T_OK(evidence_lines_vector(&w, vec, 4, &extra));
	T_EQ_STR(vec[1], "line 1");
	T_EQ_STR(vec[2], "34 more warnings not shown");
	T_CHECK(vec[3] == NULL);
	free(extra);
	evidence_lines_free(&w);
	T_EQ_INT(w.n, 0);
	evidence_lines_free(NULL);
	/* a line is cut at BF_MAX_STR */
	big = malloc(3 * BF_MAX_STR);
	memset(big, 'x', 3 * BF_MAX_STR - 1);
	big[3 * BF_MAX_STR - 1] = '\0';
	T_OK(evidence_lines_add(&w, "%s", big));
	T_EQ_INT(strlen(w.line[0]), BF_MAX_STR);
	evidence_lines_free(&w);
	free(big);
}

static void
test_put_value(void)
{
	static const struct {
		const char *in, *want;
	} tab[] = {
		{ .in = "always", .want = "always" },
		{ .in = "0-7:performance", .want = "0-7:performance" },
		{ .in = "", .want = "\"\"" },
		{ .in = "(absent)", .want = "\"(absent)\"" },
		{ .in = "a b", .want = "\"a b\"" },
		{ .in = "x\ny", .want = "\"x\\x0ay\"" },
		{ .in = "q\"\\", .want = "\"q\\x22\\x5c\"" },
		{ .in = "\xc3\xa9", .want = "\"\\xc3\\xa9\"" },
		{ .in = NULL, .want = "(unreadable)" },
	};
	struct buf b;
	char big[EVIDENCE_MAX_VALUE * 3];
	size_t i;

	buf_init(&b, 4096);
	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		buf_reset(&b);
		T_OK(evidence_put_value(&b, tab[i].in));
		T_EQ_STR(b.data, tab[i].want);
	}
	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	buf_reset(&b);
	T_OK(evidence_put_value(&b, big));
	T_EQ_INT(b.len, EVIDENCE_MAX_VALUE + 3);
	T_CHECK(strcmp(b.data + EVIDENCE_MAX_VALUE, "...") == 0);
	buf_free(&b);
}

static json_t *
snap(const char *text)
{
	json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);

	if (j == NULL)
		fprintf(stderr, "bad fixture: %s\n", text);
	return j;
}

/* One cell's THP evidence: enabled=always with no huge page, absent
 * counters, fallbacks past 10%, per mTHP size. */
static void
test_thp(void)
{
	static const struct evidence_mean none[] = {
		{ .name = "get_rps", .mean = 1000, .n = 2 },
		{ .name = "vmstat.thp_fault_alloc", .mean = 0, .n = 2 },
		{ .name = "vmstat.thp_fault_fallback", .mean = 0, .n = 2 },
		{ .name = "hugepages-64kB.anon_fault_alloc", .mean = 0, .n = 2 },
	};
	static const struct evidence_mean good[] = {
		{ .name = "vmstat.thp_fault_alloc", .mean = 200, .n = 2 },
		{ .name = "vmstat.thp_fault_fallback", .mean = 5, .n = 2 },
		{ .name = "hugepages-64kB.anon_fault_alloc", .mean = 40, .n = 2 },
		{ .name = "hugepages-64kB.anon_fault_fallback", .mean = 60, .n = 2 },
		{ .name = "hugepages-16kB.anon_fault_alloc", .mean = 0, .n = 2 },
	};
	static const struct evidence_mean nothp[] = {
		{ .name = "get_rps", .mean = 1000, .n = 2 },
	};
	static const struct evidence_mean fb[] = {
		{ .name = "vmstat.thp_fault_alloc", .mean = 70, .n = 2 },
		{ .name = "vmstat.thp_fault_fallback", .mean = 30, .n = 2 },
	};
	json_t *s_always = snap("{\"transparent_hugepage/enabled\":\"always\","
	    "\"transparent_hugepage/hugepages-64kB/enabled\":\"always\","
	    "\"transparent_hugepage/hugepages-16kB/enabled\":\"never\","
	    "\"transparent_hugepage/hugepages-2048kB/enabled\":\"inherit\"}");
	json_t *s_never = snap("{\"transparent_hugepage/enabled\":\"never\"}");
	struct evidence_cell c[5];
	struct evidence_lines w;
	const char *j;

	memset(&w, 0, sizeof(w));
	memset(c, 0, sizeof(c));
	c[0] = (struct evidence_cell){ .label = "thp_enabled=always", .snapshot = s_always,
	    .means = none, .nmeans = 4 };
	c[1] = (struct evidence_cell){ .label = "thp_enabled=never", .snapshot = s_never,
	    .means = none, .nmeans = 4 };
	c[2] = (struct evidence_cell){ .label = "good", .snapshot = s_always, .means = good,
	    .nmeans = 5 };
	c[3] = (struct evidence_cell){ .label = "old agent", .snapshot = s_always,
	    .means = nothp, .nmeans = 1 };
	c[4] = (struct evidence_cell){ .label = "fb", .snapshot = s_never, .means = fb,
	    .nmeans = 2 };
	T_OK(evidence_thp(c, 5, &w));
	j = joined(&w);
	T_CONTAINS(j, "cell thp_enabled=always: THP enabled=always but no huge page was "
	    "faulted in (vmstat.thp_fault_alloc 0): the workload did not get THP\n");
	T_CONTAINS(j, "cell thp_enabled=always: 64kB mTHP enabled=always but no 64kB folio "
	    "was faulted in (hugepages-64kB.anon_fault_alloc 0): the workload did not get "
	    "64kB mTHP\n");
	T_CHECK(strstr(j, "cell thp_enabled=never") == NULL);	/* never: nothing expected */
	T_CHECK(strstr(j, "16kB") == NULL);			/* never, and inherit */
	T_CHECK(strstr(j, "2048kB") == NULL);
	/* good THP, but 60% of 64kB faults fell back; 5/205 of THP did not warn */
	T_CONTAINS(j, "cell good: 60.0% of 64kB mTHP faults fell back to smaller pages "
	    "(hugepages-64kB.anon_fault_fallback 60, hugepages-64kB.anon_fault_alloc 40 per "
	    "iteration)\n");
	T_CHECK(strstr(j, "cell good: THP") == NULL);
	T_CHECK(strstr(j, "cell good: 2.4% of THP") == NULL);
	T_CONTAINS(j, "cell old agent: THP enabled=always but no huge page was faulted in (no "
	    "vmstat.thp_fault_alloc samples): the workload did not get THP\n");
	T_CONTAINS(j, "cell old agent: 64kB mTHP enabled=always but no 64kB folio was faulted "
	    "in (no hugepages-64kB.anon_fault_alloc samples)");
	T_CONTAINS(j, "cell fb: 30.0% of THP faults fell back to smaller pages "
	    "(vmstat.thp_fault_fallback 30, vmstat.thp_fault_alloc 70 per iteration)\n");
	T_EQ_INT(w.n, 6);
	evidence_lines_free(&w);
	/* a cell without samples (no run done yet) or without a snapshot: nothing */
	c[0].nmeans = 0;
	c[1].snapshot = NULL;
	T_OK(evidence_thp(c, 2, &w));
	T_EQ_INT(w.n, 0);
	evidence_lines_free(&w);
	json_decref(s_always);
	json_decref(s_never);
}

/* Snapshots as a hostile agent or a damaged store could leave them. */
static void
test_thp_hostile(void)
{
	static const struct evidence_mean zero[] = {
		{ .name = "vmstat.thp_fault_alloc", .mean = 0, .n = 1 },
		{ .name = "hugepages-99999999999999999999kB.anon_fault_alloc", .mean = 0, .n = 1 },
		{ .name = "hugepages-0kB.anon_fault_fallback", .mean = 5, .n = 1 },
		{ .name = NULL, .mean = 1, .n = 1 },
	};
	static const char *const texts[] = {
		"[\"transparent_hugepage/enabled\", \"always\"]",
		"\"always\"",
		"{\"transparent_hugepage/enabled\": 1}",
		"{\"transparent_hugepage/enabled\": null}",
		"{\"transparent_hugepage/enabled\": {\"always\": true}}",
		"{\"transparent_hugepage/hugepages-64kB/enabled\": [\"always\"]}",
		"{\"transparent_hugepage/hugepages-0kB/enabled\": \"always\","
		" \"transparent_hugepage/hugepages-064kB/enabled\": \"always\","
		" \"transparent_hugepage/hugepages-kB/enabled\": \"always\","
		" \"transparent_hugepage/hugepages-99999999999999999999kB/enabled\": \"always\","
		" \"transparent_hugepage/hugepages-1kBkB/enabled\": \"always\"}",
	};
	struct evidence_cell c;
	struct evidence_lines w;
	json_t *s, *o;
	char *big, key[96];
	size_t i;

	memset(&w, 0, sizeof(w));
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		s = snap(texts[i]);
		c = (struct evidence_cell){ .label = "x", .snapshot = s, .means = zero,
		    .nmeans = 4 };
		T_OK(evidence_thp(&c, 1, &w));
		json_decref(s);
	}
	T_CONTAINS(joined(&w), "cell x: its snapshot is an array, not an object: THP checks "
	    "skipped\n");
	T_CONTAINS(joined(&w), "cell x: its snapshot is a string, not an object");
	T_CONTAINS(joined(&w), "cell x: transparent_hugepage/enabled in its snapshot is an "
	    "integer, not a string: not checked\n");
	T_CONTAINS(joined(&w), "in its snapshot is an object, not a string");
	T_CONTAINS(joined(&w), "cell x: transparent_hugepage/hugepages-64kB/enabled in its "
	    "snapshot is an array, not a string");
	/* the malformed sizes are no sizes: no mTHP line names them */
	T_CHECK(strstr(joined(&w), "mTHP") == NULL);
	T_EQ_INT(w.n, 5);
	evidence_lines_free(&w);
	/* a huge value is only compared, never printed */
	big = malloc(1 << 20);
	memset(big, 'a', (1 << 20) - 1);
	big[(1 << 20) - 1] = '\0';
	s = json_pack("{s:s}", "transparent_hugepage/enabled", big);
	c = (struct evidence_cell){ .label = "x", .snapshot = s, .means = zero, .nmeans = 1 };
	T_OK(evidence_thp(&c, 1, &w));
	T_EQ_INT(w.n, 0);
	json_decref(s);
	free(big);
	/* more mTHP sizes than the cap, every one always and never faulted */
	o = json_object();
	for (i = 1; i <= 3 * EVIDENCE_MAX_MTHP; i++) {
		snprintf(key, sizeof(key), "transparent_hugepage/hugepages-%zukB/enabled", i * 4);
		json_object_set_new(o, key, json_string("always"));
	}
	c = (struct evidence_cell){ .label = "x", .snapshot = o, .means = zero, .nmeans = 1 };
	T_OK(evidence_thp(&c, 1, &w));
	T_EQ_INT(w.n, EVIDENCE_MAX_LINES);
	T_EQ_INT(w.n + w.more, EVIDENCE_MAX_MTHP);
	json_decref(o);
	evidence_lines_free(&w);
}

static void
test_key_set_by(void)
{
	static const struct {
		const char *key, *name;
		int want;
	} tab[] = {
		{ .key = "transparent_hugepage/enabled", .name = "thp_enabled", .want = 1 },
		{ .key = "transparent_hugepage/defrag", .name = "thp_enabled", .want = 0 },
		{ .key = "transparent_hugepage/defrag", .name = "thp_defrag", .want = 1 },
		{ .key = "transparent_hugepage/shmem_enabled", .name = "thp_shmem_enabled",
		  .want = 1 },
		{ .key = "transparent_hugepage/khugepaged/defrag", .name = "khugepaged_defrag",
		  .want = 1 },
		{ .key = "transparent_hugepage/hugepages-64kB/enabled", .name = "mthp_64kB",
		  .want = 1 },
		{ .key = "transparent_hugepage/hugepages-64kB/enabled", .name = "mthp_16kB",
		  .want = 0 },
		{ .key = "transparent_hugepage/hugepages-64kB/enabledx", .name = "mthp_64kB",
		  .want = 0 },
		{ .key = "transparent_hugepage/hugepages-64kB", .name = "mthp_64kB", .want = 0 },
		{ .key = "transparent_hugepage/enabled", .name = "mthp_64kB", .want = 0 },
		{ .key = "kernel.randomize_va_space", .name = "randomize_va_space", .want = 1 },
		{ .key = "kernel.randomize_va_spacex", .name = "randomize_va_space", .want = 0 },
		{ .key = "cpufreq.scaling_governor", .name = "governor", .want = 1 },
		{ .key = "cpufreq.boost", .name = "boost", .want = 1 },
		{ .key = "cpufreq.intel_pstate.no_turbo", .name = "boost", .want = 1 },
		{ .key = "cpufreq.scaling_governor", .name = "boost", .want = 0 },
		{ .key = "vm.drop_caches", .name = "drop_caches", .want = 0 },
		{ .key = "kernel.release", .name = "kernel", .want = 1 },
		{ .key = "kernel.config_sha256", .name = "kernel", .want = 1 },
		{ .key = "kernel.numa_balancing", .name = "kernel", .want = 0 },
		{ .key = "kernel.cmdline", .name = "cmdline", .want = 1 },
		{ .key = "kernel.release", .name = "cmdline", .want = 0 },
		{ .key = "vm.min_free_kbytes", .name = "thp_enabled", .want = 1 },
		{ .key = "vm.min_free_kbytes", .name = "mthp_64kB", .want = 1 },
		{ .key = "vm.min_free_kbytes", .name = "thp_defrag", .want = 0 },
		{ .key = "vm.min_free_kbytes", .name = "governor", .want = 0 },
		{ .key = "transparent_hugepage/enabled", .name = "threads", .want = 0 },
		/* issue 20's knobs */
		{ .key = "hugetlb/hugepages-2048kB/nr_hugepages", .name = "nr_hugepages_2048kB",
		  .want = 1 },
		{ .key = "hugetlb/node1/hugepages-2048kB/nr_hugepages", .name = "nr_hugepages_2048kB",
		  .want = 1 },
		{ .key = "hugetlb/hugepages-2048kB/nr_hugepages",
		  .name = "nr_hugepages_2048kB_node0", .want = 1 },
		{ .key = "hugetlb/hugepages-1048576kB/nr_hugepages", .name = "nr_hugepages_2048kB",
		  .want = 0 },
		{ .key = "hugetlb/hugepages-2048kB/nr_overcommit_hugepages",
		  .name = "nr_hugepages_2048kB", .want = 0 },
		{ .key = "kernel.numa_balancing", .name = "numa_balancing", .want = 1 },
		{ .key = "transparent_hugepage/use_zero_page", .name = "use_zero_page", .want = 1 },
		{ .key = "transparent_hugepage/khugepaged/scan_sleep_millisecs",
		  .name = "khugepaged_scan_sleep_ms", .want = 1 },
		{ .key = "transparent_hugepage/hugepages-64kB/shmem_enabled",
		  .name = "mthp_shmem_64kB", .want = 1 },
		{ .key = "transparent_hugepage/hugepages-64kB/enabled", .name = "mthp_shmem_64kB",
		  .want = 0 },
		{ .key = "cpu.smt.active", .name = "smt", .want = 1 },
		{ .key = "cpu.online", .name = "smt", .want = 0 },
		{ .key = "cpuidle.state3.disable", .name = "cpuidle_max_latency_us", .want = 1 },
		{ .key = "cpuidle.state3.name", .name = "cpuidle_max_latency_us", .want = 0 },
		{ .key = "vm.compact_memory", .name = "compact_memory", .want = 0 },
		{ .key = "transparent_hugepage/enabled", .name = "", .want = 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (evidence_key_set_by(tab[i].key, tab[i].name) != tab[i].want)
			fprintf(stderr, "key %s name %s\n", tab[i].key, tab[i].name);
		T_EQ_INT(evidence_key_set_by(tab[i].key, tab[i].name), tab[i].want);
	}
	T_EQ_INT(evidence_key_set_by(NULL, "thp_enabled"), 0);
	T_EQ_INT(evidence_key_set_by("transparent_hugepage/enabled", NULL), 0);
}

/* A snapshot of a run: enabled, defrag and boot_id. */
static json_t *
run_snap(const char *enabled, const char *defrag, const char *boot)
{
	return json_pack("{s:s,s:s,s:s,s:s}", "transparent_hugepage/enabled", enabled,
	    "transparent_hugepage/defrag", defrag, "kernel.boot_id", boot,
	    "kernel.release", "6.12.0");
}

static void
test_drift(void)
{
	static const char *const thp_axis[] = { "thp_enabled" };
	json_t *s[4];
	struct evidence_run runs[5];
	struct evidence_lines w;
	const char *j;
	size_t i;

	memset(&w, 0, sizeof(w));
	/* a THP-mode axis: enabled differs by design between the cells */
	s[0] = run_snap("never", "madvise", "b1");
	s[1] = run_snap("never", "madvise", "b2");
	s[2] = run_snap("always", "madvise", "b3");
	s[3] = run_snap("always", "madvise", "b4");
	for (i = 0; i < 4; i++)
		runs[i] = (struct evidence_run){ .id = (int64_t)i + 1, .cell = i / 2,
		    .cell_label = i < 2 ? "thp_enabled=never" : "thp_enabled=always",
		    .snapshot = s[i] };
	runs[4] = (struct evidence_run){ .id = 9, .cell = 1, .cell_label = "thp_enabled=always",
	    .snapshot = NULL };
	T_OK(evidence_drift(runs, 5, thp_axis, 1, &w));
	T_EQ_INT(w.n, 0);
	/* without the axis the same snapshots drift */
	T_OK(evidence_drift(runs, 5, NULL, 0, &w));
	T_EQ_INT(w.n, 1);
	T_CONTAINS(joined(&w), "environment changed within the job: "
	    "transparent_hugepage/enabled (never in 2 runs from cell thp_enabled=never run 1, "
	    "always in 2 runs from cell thp_enabled=always run 3)\n");
	evidence_lines_free(&w);
	/* defrag changed between runs: across cells, it is not an axis */
	json_object_set_new(s[3], "transparent_hugepage/defrag", json_string("always"));
	/* and one run of the always cell ran under never */
	json_object_set_new(s[2], "transparent_hugepage/enabled", json_string("never"));
	T_OK(evidence_drift(runs, 5, thp_axis, 1, &w));
	j = joined(&w);
	T_CONTAINS(j, "environment changed within the job: transparent_hugepage/defrag "
	    "(madvise in 3 runs from cell thp_enabled=never run 1, always in 1 run from cell "
	    "thp_enabled=always run 4)\n");
	T_CONTAINS(j, "cell thp_enabled=always: environment changed within the cell: "
	    "transparent_hugepage/enabled (never in 1 run from cell thp_enabled=always run 3, "
	    "always in 1 run from cell thp_enabled=always run 4)\n");
	T_CHECK(strstr(j, "boot_id") == NULL);
	T_EQ_INT(w.n, 2);
	evidence_lines_free(&w);
	for (i = 0; i < 4; i++)
		json_decref(s[i]);
	T_OK(evidence_drift(runs, 0, NULL, 0, &w));
	T_EQ_INT(w.n, 0);
}

/* Ten keys drift: four named, the rest counted; hostile values quoted; a
 * snapshot envdiff refuses is left out with a note, the others compared. */
static void
test_drift_hostile(void)
{
	json_t *a = json_object(), *b = json_object(), *bad, *arr;
	struct evidence_run runs[4];
	struct evidence_lines w;
	char key[32];
	const char *j;
	int i;

	memset(&w, 0, sizeof(w));
	for (i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "vm.k%d", i);
		json_object_set_new(a, key, json_string("0"));
		json_object_set_new(b, key, json_string(i == 0 ? "x\ny" : "1"));
	}
	bad = json_pack("{s:i}", "vm.k0", 3);
	arr = json_array();
	runs[0] = (struct evidence_run){ .id = 1, .cell = 0, .cell_label = "c", .snapshot = a };
	runs[1] = (struct evidence_run){ .id = 2, .cell = 0, .cell_label = "c", .snapshot = b };
	runs[2] = (struct evidence_run){ .id = 3, .cell = 0, .cell_label = "c", .snapshot = bad };
	runs[3] = (struct evidence_run){ .id = 4, .cell = 0, .cell_label = NULL, .snapshot = arr };
	T_OK(evidence_drift(runs, 4, NULL, 0, &w));
	j = joined(&w);
	T_CONTAINS(j, "run 3 (cell c): its snapshot is left out of the drift check: ");
	T_CONTAINS(j, "vm.k0: an integer; expected a string or null");
	T_CONTAINS(j, "run 4 (cell ): its snapshot is left out of the drift check: ");
	T_CONTAINS(j, "environment changed within the job: vm.k0 (0 in 1 run from cell c run 1, "
	    "\"x\\x0ay\" in 1 run from cell c run 2); vm.k1 (0 in 1 run");
	T_CONTAINS(j, "vm.k3 (0 in 1 run from cell c run 1, 1 in 1 run from cell c run 2) "
	    "and 6 more\n");
	T_CHECK(strstr(j, "vm.k4") == NULL);
	T_EQ_INT(w.n, 3);
	evidence_lines_free(&w);
	json_decref(a);
	json_decref(b);
	json_decref(bad);
	json_decref(arr);
}

/* The recipe's expectations against cells: "when" by the text of values,
 * the mean compared, a cell without samples of the metric failing. */
static void
test_expect(void)
{
	static const char rtext[] = "{\"name\": \"r\", \"command\": [\"true\"],"
	    " \"params\": {\"threads\": {\"type\": \"int\", \"min\": 1, \"max\": 64, \"default\": 2}},"
	    " \"metrics\": [{\"name\": \"rps\", \"better\": \"higher\", \"source\": \"stdout\","
	    " \"regex\": \"([0-9]+)\"}],"
	    " \"expect\": [{\"when\": {\"thp_enabled\": \"always\"},"
	    " \"metric\": \"vmstat.thp_fault_alloc\", \"gt\": 0},"
	    " {\"when\": {\"threads\": 4, \"thp_enabled\": \"never\"}, \"metric\": \"rps\", \"ge\": 100},"
	    " {\"metric\": \"pmu.cycles\", \"lt\": 1e9}]}";
	static const struct evidence_mean m_zero[] = {
		{ .name = "rps", .mean = 50, .n = 3 },
		{ .name = "vmstat.thp_fault_alloc", .mean = 0, .n = 3 },
	};
	static const struct evidence_mean m_ok[] = {
		{ .name = "rps", .mean = 150, .n = 3 },
		{ .name = "vmstat.thp_fault_alloc", .mean = 12.5, .n = 3 },
		{ .name = "pmu.cycles", .mean = 2e9, .n = 3 },
	};
	struct recipe *rc = NULL;
	struct evidence_cell c[5];
	struct evidence_lines w;
	json_t *v[5];
	struct bf_diag d;
	const char *j;
	size_t i;

	memset(&w, 0, sizeof(w));
	T_EQ_INT(recipe_parse(rtext, strlen(rtext), &rc, &d), 0);
	v[0] = json_pack("{s:s,s:i}", "thp_enabled", "always", "threads", 2);
	v[1] = json_pack("{s:s,s:i}", "thp_enabled", "always", "threads", 4);
	v[2] = json_pack("{s:s,s:s}", "thp_enabled", "never", "threads", "4");	/* text 4 */
	v[3] = json_pack("{s:s,s:i}", "thp_enabled", "never", "threads", 2);
	v[4] = json_pack("{s:o,s:i}", "thp_enabled", json_object(), "threads", 2);
	c[0] = (struct evidence_cell){ .label = "thp_enabled=always threads=2", .values = v[0],
	    .means = m_zero, .nmeans = 2 };
	c[1] = (struct evidence_cell){ .label = "thp_enabled=always threads=4", .values = v[1],
	    .means = m_ok, .nmeans = 3 };
	c[2] = (struct evidence_cell){ .label = "thp_enabled=never threads=4", .values = v[2],
	    .means = m_zero, .nmeans = 2 };
	c[3] = (struct evidence_cell){ .label = "thp_enabled=never threads=2", .values = v[3],
	    .means = m_zero, .nmeans = 0 };	/* no samples yet: not checked */
	c[4] = (struct evidence_cell){ .label = "odd", .values = v[4], .means = m_zero,
	    .nmeans = 2 };
	T_OK(evidence_expect(rc, c, 5, &w));
	j = joined(&w);
	T_CONTAINS(j, "cell thp_enabled=always threads=2: expectation vmstat.thp_fault_alloc > 0 "
	    "failed: mean 0\n");
	T_CONTAINS(j, "cell thp_enabled=always threads=2: expectation pmu.cycles < 1000000000 "
	    "failed: no samples of pmu.cycles\n");
	T_CONTAINS(j, "cell thp_enabled=always threads=4: expectation pmu.cycles < 1000000000 "
	    "failed: mean 2e+09\n");
	T_CONTAINS(j, "cell thp_enabled=never threads=4: expectation rps >= 100 failed: mean 50\n");
	T_CHECK(strstr(j, "threads=4: expectation vmstat") == NULL);	/* 12.5 > 0 */
	T_CHECK(strstr(j, "threads=2: expectation rps") == NULL);	/* threads 2 */
	T_CHECK(strstr(j, "thp_enabled=never threads=2") == NULL);
	/* an object never matches a "when" value; the unconditional one still runs */
	T_CHECK(strstr(j, "cell odd: expectation vmstat") == NULL);
	T_CONTAINS(j, "cell odd: expectation pmu.cycles < 1000000000 failed: no samples");
	T_EQ_INT(w.n, 6);
	evidence_lines_free(&w);
	/* no recipe, or no values: nothing matches a "when", nothing crashes */
	T_OK(evidence_expect(NULL, c, 5, &w));
	T_EQ_INT(w.n, 0);
	for (i = 0; i < 5; i++)
		c[i].values = NULL;
	T_OK(evidence_expect(rc, c, 5, &w));
	T_EQ_INT(w.n, 4);	/* pmu.cycles, without "when", in 4 cells with samples */
	evidence_lines_free(&w);
	for (i = 0; i < 5; i++)
		json_decref(v[i]);
	recipe_free(rc);
}

int
main(void)
{
	test_is_counter();
	test_mode();
	test_pick();
	test_lines();
	test_put_value();
	test_thp();
	test_thp_hostile();
	test_key_set_by();
	test_drift();
	test_drift_hostile();
	test_expect();
	return t_done();
}
