/*
 * test_evidence.c: the report's evidence (common/evidence.h): which
 * counters become rows and in what order, the line list and its cap, and
 * how snapshot values are printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "caps.h"
#include "evidence.h"
#include "t.h"

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

int
main(void)
{
	test_is_counter();
	test_mode();
	test_pick();
	test_lines();
	test_put_value();
	return t_done();
}
