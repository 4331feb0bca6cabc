/*
 * test_envdiff.c: environment diffs (common/envdiff.h): the group table, a
 * pair of real-looking snapshots (a THP reproduction gone wrong), absent vs
 * unreadable, malformed snapshots refused naming the key, drift over a
 * job's runs, every cap, and text output of hostile values. Ends with a
 * timing of envdiff_pair on two 400-key snapshots (printed, not asserted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "caps.h"
#include "envdiff.h"
#include "err.h"
#include "t.h"

/* A snapshot as the agent prints it (docs/evidence.md), abridged. */
static const char envdiff_snap_a[] =
    "{\"bin.stress-ng.package\":\"stress-ng 0.17.06-1\","
    "\"bin.stress-ng.path\":\"/usr/bin/stress-ng\","
    "\"bin.stress-ng.sha256\":\"5f1d0c1c0a7f3b9e2c4d6e8f00112233445566778899aabbccddeeff00112233\","
    "\"cgroup.version\":\"2\","
    "\"cpu.family\":\"6\",\"cpu.la57\":\"0\",\"cpu.microcode\":\"0xf0\","
    "\"cpu.model\":\"Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\",\"cpu.online\":\"0-7\","
    "\"cpu.smt.active\":\"1\",\"cpu.smt.control\":\"on\",\"cpu.threads\":\"8\","
    "\"cpufreq.boost\":null,\"cpufreq.scaling_driver\":\"intel_pstate\","
    "\"cpufreq.scaling_governor\":\"0-7:performance\","
    "\"cpuidle.current_driver\":\"intel_idle\",\"cpuidle.state1.disable\":\"0\","
    "\"dmi.bios_vendor\":\"SeaBIOS\",\"dmi.bios_version\":\"1.16.3-debian-1.16.3-2\","
    "\"dmi.product_name\":\"Standard PC (Q35 + ICH9, 2009)\","
    "\"hugetlb/hugepages-2048kB/nr_hugepages\":\"0\","
    "\"kernel.boot_id\":\"0e4f6a1c-1d2b-4c3d-9e8f-0a1b2c3d4e5f\","
    "\"kernel.cmdline\":\"BOOT_IMAGE=/vmlinuz-6.12.0 root=/dev/vda1 ro quiet\","
    "\"kernel.compiler\":\"gcc (Debian 14.2.0-19) 14.2.0\","
    "\"kernel.config_sha256\":\"aa11bb22cc33dd44ee55ff6600771188aa11bb22cc33dd44ee55ff6600771188\","
    "\"kernel.config_source\":\"/boot/config-6.12.0\","
    "\"kernel.numa_balancing\":\"1\",\"kernel.page_size\":\"4096\","
    "\"kernel.perf_event_paranoid\":\"2\",\"kernel.randomize_va_space\":\"2\","
    "\"kernel.release\":\"6.12.0\",\"kernel.sched_autogroup_enabled\":\"1\","
    "\"kernel.va_above_48bit\":\"0\","
    "\"kernel.version\":\"#1 SMP PREEMPT_DYNAMIC Debian 6.12.0-1 (2024-11-18)\","
    "\"numa.node0.mem_total_kb\":\"8126464\",\"numa.nodes\":\"0\","
    "\"os.pretty_name\":\"Debian GNU/Linux 13 (trixie)\","
    "\"sw.cc\":\"cc (Debian 14.2.0-19) 14.2.0\","
    "\"transparent_hugepage/defrag\":\"madvise\","
    "\"transparent_hugepage/enabled\":\"always\","
    "\"transparent_hugepage/hpage_pmd_size\":\"2097152\","
    "\"transparent_hugepage/hugepages-2048kB/enabled\":null,"
    "\"transparent_hugepage/hugepages-64kB/enabled\":\"never\","
    "\"transparent_hugepage/khugepaged/defrag\":\"1\","
    "\"transparent_hugepage/khugepaged/pages_to_scan\":\"4096\","
    "\"transparent_hugepage/shmem_enabled\":\"never\","
    "\"transparent_hugepage/use_zero_page\":\"1\","
    "\"vm.overcommit_memory\":\"0\",\"vm.swappiness\":\"60\",\"vm.zone_reclaim_mode\":\"0\"}";

static json_t *
load(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &e);

	if (j == NULL)
		fprintf(stderr, "test_envdiff: fixture: %s at %d\n", e.text, e.position);
	return j;
}

/* A copy of a snapshot with key set to v (NULL: removed, "=null": null). */
static void
set(json_t *s, const char *key, const char *v)
{
	if (v == NULL)
		T_OK(json_object_del(s, key));
	else if (strcmp(v, "=null") == 0)
		T_OK(json_object_set_new(s, key, json_null()));
	else
		T_OK(json_object_set_new(s, key, json_string(v)));
}

struct group_case {
	const char *key, *group;
};

static const struct group_case group_cases[] = {
	{ .key = "kernel.release", .group = "kernel" },
	{ .key = "kernel.cmdline", .group = "kernel" },
	{ .key = "kernel.va_above_48bit", .group = "kernel" },
	{ .key = "kernel.config_source", .group = "kernel" },
	{ .key = "kernel.numa_balancing", .group = "vm sysctls" },
	{ .key = "kernel.randomize_va_space", .group = "vm sysctls" },
	{ .key = "kernel.sched_autogroup_enabled", .group = "vm sysctls" },
	{ .key = "kernel.perf_event_paranoid", .group = "vm sysctls" },
	{ .key = "vm.zone_reclaim_mode", .group = "vm sysctls" },
	{ .key = "transparent_hugepage/defrag", .group = "THP/mTHP" },
	{ .key = "transparent_hugepage/hugepages-64kB/enabled", .group = "THP/mTHP" },
	{ .key = "hugetlb/node0/hugepages-2048kB/nr_hugepages", .group = "hugetlb" },
	{ .key = "cpu.model", .group = "CPU/power" },
	{ .key = "cpufreq.intel_pstate.no_turbo", .group = "CPU/power" },
	{ .key = "cpuidle.state2.disable", .group = "CPU/power" },
	{ .key = "numa.node1.mem_total_kb", .group = "NUMA" },
	{ .key = "dmi.bios_date", .group = "firmware" },
	{ .key = "os.pretty_name", .group = "software" },
	{ .key = "sw.cc", .group = "software" },
	{ .key = "bin.stress-ng.sha256", .group = "software" },
	{ .key = "pkg.hpcc", .group = "software" },
	{ .key = "cgroup.version", .group = "software" },
	/* fails closed: nothing filed, or only something like a filed key */
	{ .key = "~dropped", .group = "other" },
	{ .key = "kernel.boot_id", .group = "other" },
	{ .key = "kernel.release2", .group = "other" },
	{ .key = "kernel.hostname", .group = "other" },
	{ .key = "kernel.", .group = "other" },
	{ .key = "kernel", .group = "other" },
	{ .key = "cpu", .group = "other" },
	{ .key = "cpux.model", .group = "other" },
	{ .key = "transparent_hugepage", .group = "other" },
	{ .key = "", .group = "other" },
	{ .key = "VM.swappiness", .group = "other" },
};

static void
test_groups(void)
{
	size_t i;

	for (i = 0; i < sizeof(group_cases) / sizeof(group_cases[0]); i++)
		T_EQ_STR(envdiff_group(group_cases[i].key), group_cases[i].group);
	T_CHECK(envdiff_ignored("kernel.boot_id"));
	T_CHECK(!envdiff_ignored("kernel.boot_id2"));
	T_CHECK(!envdiff_ignored("~dropped"));
}

/* Render d into a fresh buffer; the text (caller frees) or NULL. */
static char *
render(const json_t *d)
{
	struct buf b;
	int r;

	buf_init(&b, 0);
	r = envdiff_render_text(d, &b);
	T_EQ_INT(r, 0);
	if (r != 0) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b);
}

/* diff.groups[g].keys[k] */
static const json_t *
pkey(const json_t *diff, size_t g, size_t k)
{
	return json_array_get(json_object_get(json_array_get(json_object_get(diff, "groups"), g),
	    "keys"), k);
}

static const char *
sval(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* The reproduction ran with four THP settings and two sysctls changed. */
static void
test_pair_real(void)
{
	json_t *a = load(envdiff_snap_a), *b = json_deep_copy(a), *diff = NULL, *g;
	struct bf_diag d;
	char *text;

	set(b, "transparent_hugepage/defrag", "always");
	set(b, "transparent_hugepage/khugepaged/defrag", "0");
	set(b, "transparent_hugepage/hugepages-64kB/enabled", "always");
	set(b, "transparent_hugepage/shmem_enabled", "advise");
	set(b, "vm.zone_reclaim_mode", "1");
	set(b, "kernel.numa_balancing", "0");
	set(b, "kernel.boot_id", "9a8b7c6d-0000-4000-8000-123456789abc");
	T_EQ_INT(envdiff_pair(a, b, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), 6);
	T_EQ_INT(json_integer_value(json_object_get(diff, "more")), 0);
	T_EQ_INT(json_array_size(json_object_get(diff, "groups")), 2);
	g = json_array_get(json_object_get(diff, "groups"), 0);
	T_EQ_STR(sval(g, "group"), "THP/mTHP");
	T_EQ_INT(json_integer_value(json_object_get(g, "n")), 4);
	T_EQ_INT(json_array_size(json_object_get(g, "keys")), 4);
	T_EQ_STR(sval(pkey(diff, 0, 0), "key"), "transparent_hugepage/defrag");
	T_EQ_STR(sval(pkey(diff, 0, 0), "a"), "madvise");
	T_EQ_STR(sval(pkey(diff, 0, 0), "b"), "always");
	T_CHECK(json_object_get(pkey(diff, 0, 0), "a_absent") == NULL);
	T_EQ_STR(sval(pkey(diff, 0, 1), "key"), "transparent_hugepage/hugepages-64kB/enabled");
	T_EQ_STR(sval(pkey(diff, 0, 2), "key"), "transparent_hugepage/khugepaged/defrag");
	T_EQ_STR(sval(pkey(diff, 0, 3), "key"), "transparent_hugepage/shmem_enabled");
	g = json_array_get(json_object_get(diff, "groups"), 1);
	T_EQ_STR(sval(g, "group"), "vm sysctls");
	T_EQ_STR(sval(pkey(diff, 1, 0), "key"), "kernel.numa_balancing");
	T_EQ_STR(sval(pkey(diff, 1, 1), "key"), "vm.zone_reclaim_mode");
	text = render(diff);
	T_EQ_STR(text,
	    "  THP/mTHP: transparent_hugepage/defrag: madvise -> always\n"
	    "  THP/mTHP: transparent_hugepage/hugepages-64kB/enabled: never -> always\n"
	    "  THP/mTHP: transparent_hugepage/khugepaged/defrag: 1 -> 0\n"
	    "  THP/mTHP: transparent_hugepage/shmem_enabled: never -> advise\n"
	    "  vm sysctls: kernel.numa_balancing: 1 -> 0\n"
	    "  vm sysctls: vm.zone_reclaim_mode: 0 -> 1\n");
	free(text);
	json_decref(diff);
	diff = NULL;

	/* the same snapshot, and one differing only in boot id: nothing */
	T_EQ_INT(envdiff_pair(a, a, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), 0);
	text = render(diff);
	T_EQ_STR(text, "  (none)\n");
	free(text);
	json_decref(diff);
	json_decref(b);
	b = json_deep_copy(a);
	set(b, "kernel.boot_id", "another");
	diff = NULL;
	T_EQ_INT(envdiff_pair(a, b, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), 0);
	json_decref(diff);
	/* a boot id in one snapshot only is not a difference either */
	set(b, "kernel.boot_id", NULL);
	diff = NULL;
	T_EQ_INT(envdiff_pair(a, b, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), 0);
	json_decref(diff);
	json_decref(a);
	json_decref(b);
}

/* null means unreadable, a missing key absent: both kept apart. */
static void
test_pair_absent(void)
{
	json_t *a = load(envdiff_snap_a), *b = json_deep_copy(a), *diff = NULL, *k;
	struct bf_diag d;
	char *text;

	/* hugepages-2048kB/enabled: null in a, missing in b */
	set(b, "transparent_hugepage/hugepages-2048kB/enabled", NULL);
	/* cpufreq.boost: null in a, "1" in b */
	set(b, "cpufreq.boost", "1");
	/* hugepages-16kB/enabled: missing in a, "inherit" in b */
	set(b, "transparent_hugepage/hugepages-16kB/enabled", "inherit");
	/* vm.swappiness: "60" in a, null in b */
	set(b, "vm.swappiness", "=null");
	/* ~dropped: missing in a, counted in b */
	set(b, "~dropped", "3");
	T_EQ_INT(envdiff_pair(a, b, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), 5);
	text = render(diff);
	T_EQ_STR(text,
	    "  THP/mTHP: transparent_hugepage/hugepages-16kB/enabled: (absent) -> inherit\n"
	    "  THP/mTHP: transparent_hugepage/hugepages-2048kB/enabled: (unreadable) -> (absent)\n"
	    "  vm sysctls: vm.swappiness: 60 -> (unreadable)\n"
	    "  CPU/power: cpufreq.boost: (unreadable) -> 1\n"
	    "  other: ~dropped: (absent) -> 3\n");
	free(text);
	/* the JSON says the same: THP first, its keys' absent flags */
	k = (json_t *)pkey(diff, 0, 0);
	T_EQ_STR(sval(json_array_get(json_object_get(diff, "groups"), 0), "group"), "THP/mTHP");
	T_EQ_STR(sval(k, "key"), "transparent_hugepage/hugepages-16kB/enabled");
	T_CHECK(json_is_null(json_object_get(k, "a")));
	T_CHECK(json_is_true(json_object_get(k, "a_absent")));
	T_CHECK(json_object_get(k, "b_absent") == NULL);
	k = (json_t *)pkey(diff, 0, 1);
	T_CHECK(json_is_null(json_object_get(k, "a")));
	T_CHECK(json_object_get(k, "a_absent") == NULL);
	T_CHECK(json_is_null(json_object_get(k, "b")));
	T_CHECK(json_is_true(json_object_get(k, "b_absent")));
	k = (json_t *)pkey(diff, 2, 0);
	T_EQ_STR(sval(k, "key"), "cpufreq.boost");
	T_CHECK(json_is_null(json_object_get(k, "a")));
	T_CHECK(json_object_get(k, "a_absent") == NULL);
	T_EQ_STR(sval(k, "b"), "1");
	json_decref(diff);

	/* ~dropped the same on both sides: nothing; null on both: nothing */
	json_decref(b);
	b = json_deep_copy(a);
	set(a, "~dropped", "2");
	set(b, "~dropped", "2");
	diff = NULL;
	T_EQ_INT(envdiff_pair(a, b, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), 0);
	json_decref(diff);
	set(b, "~dropped", "5");
	diff = NULL;
	T_EQ_INT(envdiff_pair(a, b, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), 1);
	text = render(diff);
	T_EQ_STR(text, "  other: ~dropped: 2 -> 5\n");
	free(text);
	json_decref(diff);
	/* empty snapshots against a full one: every key but boot_id, absent in a */
	json_decref(b);
	b = json_object();
	diff = NULL;
	T_EQ_INT(envdiff_pair(b, a, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")),
	    (long long)json_object_size(a) - 1);
	json_decref(diff);
	json_decref(a);
	json_decref(b);
}

struct bad_case {
	const char *a, *b;
	const char *msg;	/* the start of the message */
};

static const struct bad_case bad_cases[] = {
	{ .a = "[]", .b = "{}", .msg = "a: an array; expected a snapshot object" },
	{ .a = "{}", .b = "[\"vm.swappiness\"]", .msg = "b: an array; expected a snapshot" },
	{ .a = "{\"vm.swappiness\":60}", .b = "{}",
	  .msg = "a.vm.swappiness: an integer; expected a string or null" },
	{ .a = "{}", .b = "{\"vm.swappiness\":\"60\",\"vm.dirty_ratio\":2.5}",
	  .msg = "b.vm.dirty_ratio: a real number; expected a string or null" },
	{ .a = "{\"transparent_hugepage/khugepaged\":{\"defrag\":\"1\"}}", .b = "{}",
	  .msg = "a.transparent_hugepage/khugepaged: an object; expected a string or null" },
	{ .a = "{}", .b = "{\"cpu.smt.active\":true}",
	  .msg = "b.cpu.smt.active: a boolean" },
	{ .a = "{\"vm.x\\ny: forged\":[]}", .b = "{}",
	  .msg = "a.vm.x\\x0ay: forged: an array" },
};

static void
test_pair_bad(void)
{
	struct bf_diag d;
	json_t *a, *b, *diff;
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		a = load(bad_cases[i].a);
		b = load(bad_cases[i].b);
		diff = (json_t *)&d;	/* a sentinel: must stay untouched */
		bf_diag_clear(&d);
		T_EQ_INT(envdiff_pair(a, b, &diff, &d), BF_ERR_INVALID);
		T_CHECK(diff == (json_t *)&d);
		T_CHECK(strncmp(d.msg, bad_cases[i].msg, strlen(bad_cases[i].msg)) == 0);
		if (strncmp(d.msg, bad_cases[i].msg, strlen(bad_cases[i].msg)) != 0)
			fprintf(stderr, "  case %zu: \"%s\"\n", i, d.msg);
		json_decref(a);
		json_decref(b);
	}
	/* a number where a snapshot belongs, and NULL */
	a = json_integer(3);
	b = json_object();
	T_EQ_INT(envdiff_pair(b, a, &diff, &d), BF_ERR_INVALID);
	T_EQ_STR(d.msg, "b: an integer; expected a snapshot object");
	T_EQ_INT(envdiff_pair(NULL, b, &diff, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "a");
	json_decref(a);
	json_decref(b);
}

/* Five runs of a job, one without a snapshot: zone_reclaim_mode drifted,
 * one run's kernel has no 64kB mTHP, every boot id differs. */
static void
test_drift(void)
{
	static const char *const labels[] = { "cell a run 1", "cell a run 2", "cell b run 3",
		"cell b run 4", NULL, "cell c run 6" };
	json_t *s[6], *diff = NULL, *k, *v;
	const json_t *const *cs = (const json_t *const *)s;
	struct bf_diag d;
	char *text, id[32];
	size_t i;

	for (i = 0; i < 6; i++) {
		s[i] = load(envdiff_snap_a);
		snprintf(id, sizeof(id), "boot-%zu", i);
		set(s[i], "kernel.boot_id", id);
	}
	set(s[2], "vm.zone_reclaim_mode", "1");
	set(s[3], "vm.zone_reclaim_mode", "1");
	set(s[5], "transparent_hugepage/hugepages-64kB/enabled", NULL);
	json_decref(s[4]);
	s[4] = NULL;
	T_EQ_INT(envdiff_drift(cs, labels, 6, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), 2);
	T_EQ_INT(json_integer_value(json_object_get(diff, "runs")), 5);
	T_EQ_INT(json_integer_value(json_object_get(diff, "more")), 0);
	k = json_array_get(json_object_get(diff, "keys"), 0);
	T_EQ_STR(sval(k, "key"), "transparent_hugepage/hugepages-64kB/enabled");
	T_EQ_STR(sval(k, "group"), "THP/mTHP");
	v = json_array_get(json_object_get(k, "values"), 1);
	T_CHECK(json_is_null(json_object_get(v, "value")));
	T_CHECK(json_is_true(json_object_get(v, "absent")));
	T_EQ_INT(json_integer_value(json_object_get(v, "first_index")), 5);
	k = json_array_get(json_object_get(diff, "keys"), 1);
	T_EQ_STR(sval(k, "key"), "vm.zone_reclaim_mode");
	T_EQ_INT(json_array_size(json_object_get(k, "values")), 2);
	v = json_array_get(json_object_get(k, "values"), 0);
	T_EQ_STR(sval(v, "value"), "0");
	T_EQ_INT(json_integer_value(json_object_get(v, "count")), 3);
	T_EQ_STR(sval(v, "first"), "cell a run 1");
	v = json_array_get(json_object_get(k, "values"), 1);
	T_EQ_STR(sval(v, "value"), "1");
	T_EQ_INT(json_integer_value(json_object_get(v, "count")), 2);
	T_EQ_STR(sval(v, "first"), "cell b run 3");
	T_EQ_INT(json_integer_value(json_object_get(v, "first_index")), 2);
	T_EQ_INT(json_integer_value(json_object_get(k, "more_values")), 0);
	text = render(diff);
	T_EQ_STR(text,
	    "  THP/mTHP: transparent_hugepage/hugepages-64kB/enabled: never (4 runs), "
	    "(absent) (1 run, first cell c run 6)\n"
	    "  vm sysctls: vm.zone_reclaim_mode: 0 (3 runs), 1 (2 runs, first cell b run 3)\n");
	free(text);
	json_decref(diff);

	/* without labels the index names the run */
	diff = NULL;
	T_EQ_INT(envdiff_drift(cs, NULL, 6, &diff, &d), 0);
	text = render(diff);
	T_CONTAINS(text, "1 (2 runs, first #2)");
	T_CHECK(json_is_null(json_object_get(json_array_get(json_object_get(json_array_get(
	    json_object_get(diff, "keys"), 1), "values"), 1), "first")));
	free(text);
	json_decref(diff);

	/* the runs agreeing (boot ids aside): nothing; no runs at all: nothing */
	diff = NULL;
	T_EQ_INT(envdiff_drift(cs, labels, 2, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "runs")), 2);
	text = render(diff);
	T_EQ_STR(text, "  (none)\n");
	free(text);
	json_decref(diff);
	diff = NULL;
	T_EQ_INT(envdiff_drift(cs + 4, labels + 4, 1, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "runs")), 0);
	json_decref(diff);
	diff = NULL;
	T_EQ_INT(envdiff_drift(NULL, NULL, 0, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), 0);
	json_decref(diff);

	/* a label that is not UTF-8 is kept, escaped, rather than refused */
	diff = NULL;
	T_EQ_INT(envdiff_drift(cs + 1, (const char *const []){ "x", "bad \xff label" }, 2, &diff,
	    &d), 0);
	T_EQ_STR(sval(json_array_get(json_object_get(json_array_get(json_object_get(diff, "keys"),
	    0), "values"), 1), "first"), "bad \\xff label");
	json_decref(diff);

	/* a malformed run is refused, named by its label, or by its index */
	set(s[3], "vm.swappiness", "=null");
	T_OK(json_object_set_new(s[3], "vm.dirty_ratio", json_integer(20)));
	diff = NULL;
	T_EQ_INT(envdiff_drift(cs, labels, 6, &diff, &d), BF_ERR_INVALID);
	T_CHECK(diff == NULL);
	T_EQ_STR(d.msg, "cell b run 4.vm.dirty_ratio: an integer; expected a string or null");
	T_EQ_INT(envdiff_drift(cs, NULL, 6, &diff, &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "snapshots[3].vm.dirty_ratio");
	for (i = 0; i < 6; i++)
		json_decref(s[i]);
}

/* n snapshot objects {"<prefix><i>": "v"} differing in every key */
static void
fill(json_t *a, json_t *b, const char *prefix, size_t n)
{
	char key[64];
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "%s%04zu", prefix, i);
		set(a, key, "0");
		set(b, key, "1");
	}
}

static void
test_caps(void)
{
	json_t *a = json_object(), *b = json_object(), *diff = NULL, *g, *s[14];
	const json_t *const *cs = (const json_t *const *)s;
	struct bf_diag d;
	char *text, v[16], big[3000];
	size_t i;

	/* 5 kernel keys and cap+10 vm keys differ: the first cap are listed */
	set(a, "kernel.release", "6.12.0");
	set(b, "kernel.release", "6.13.0");
	set(a, "kernel.cmdline", "ro");
	set(b, "kernel.cmdline", "ro quiet");
	set(a, "kernel.version", "#1");
	set(b, "kernel.version", "#2");
	set(a, "kernel.page_size", "4096");
	set(b, "kernel.page_size", "16384");
	set(a, "kernel.compiler", "gcc 14");
	set(b, "kernel.compiler", "clang 19");
	fill(a, b, "vm.knob", BF_MAX_ENVDIFF_KEYS + 10);
	T_EQ_INT(envdiff_pair(a, b, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), BF_MAX_ENVDIFF_KEYS + 15);
	T_EQ_INT(json_integer_value(json_object_get(diff, "more")), 15);
	g = json_array_get(json_object_get(diff, "groups"), 0);
	T_EQ_STR(sval(g, "group"), "kernel");
	T_EQ_INT(json_array_size(json_object_get(g, "keys")), 5);
	g = json_array_get(json_object_get(diff, "groups"), 1);
	T_EQ_INT(json_integer_value(json_object_get(g, "n")), BF_MAX_ENVDIFF_KEYS + 10);
	T_EQ_INT(json_array_size(json_object_get(g, "keys")), BF_MAX_ENVDIFF_KEYS - 5);
	T_EQ_STR(sval(json_array_get(json_object_get(g, "keys"), 0), "key"), "vm.knob0000");
	text = render(diff);
	T_CONTAINS(text, "  kernel: kernel.page_size: 4096 -> 16384\n");
	T_CONTAINS(text, "  kernel: kernel.cmdline: ro -> \"ro quiet\"\n");
	T_CONTAINS(text, "  vm sysctls: vm.knob0506: 0 -> 1\n  vm sysctls: and 15 more\n");
	T_CHECK(strstr(text, "vm.knob0507") == NULL);
	free(text);
	json_decref(diff);

	/* drift: cap+3 keys drift over two runs, the rest are counted */
	s[0] = a;
	s[1] = b;
	diff = NULL;
	T_EQ_INT(envdiff_drift(cs, NULL, 2, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), BF_MAX_ENVDIFF_KEYS + 15);
	T_EQ_INT(json_array_size(json_object_get(diff, "keys")), BF_MAX_ENVDIFF_KEYS);
	T_EQ_INT(json_integer_value(json_object_get(diff, "more")), 15);
	text = render(diff);
	T_CONTAINS(text, "\n  and 15 more keys\n");
	free(text);
	json_decref(diff);
	json_decref(a);
	json_decref(b);

	/* 14 runs, 12 distinct values: 8 listed, 4 more values in 6 runs */
	for (i = 0; i < 14; i++) {
		s[i] = json_object();
		snprintf(v, sizeof(v), "%zu", i < 12 ? i : 9);
		set(s[i], "vm.swappiness", v);
	}
	diff = NULL;
	T_EQ_INT(envdiff_drift(cs, NULL, 14, &diff, &d), 0);
	g = json_array_get(json_object_get(diff, "keys"), 0);
	T_EQ_INT(json_array_size(json_object_get(g, "values")), BF_MAX_ENVDIFF_VALUES);
	T_EQ_INT(json_integer_value(json_object_get(g, "more_values")), 12 - BF_MAX_ENVDIFF_VALUES);
	T_EQ_INT(json_integer_value(json_object_get(g, "more_runs")), 14 - BF_MAX_ENVDIFF_VALUES);
	text = render(diff);
	T_CONTAINS(text, "7 (1 run, first #7), and 4 more values (6 runs)\n");
	free(text);
	json_decref(diff);
	/* absent and null past the cap are values of their own */
	set(s[12], "vm.swappiness", NULL);
	set(s[13], "vm.swappiness", "=null");
	diff = NULL;
	T_EQ_INT(envdiff_drift(cs, NULL, 14, &diff, &d), 0);
	g = json_array_get(json_object_get(diff, "keys"), 0);
	T_EQ_INT(json_integer_value(json_object_get(g, "more_values")), 6);
	T_EQ_INT(json_integer_value(json_object_get(g, "more_runs")), 6);
	json_decref(diff);

	/* a value past BF_MAX_ENVDIFF_TEXT is cut, and the cut counted */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	set(s[0], "kernel.cmdline", big);
	set(s[1], "kernel.cmdline", "ro");
	diff = NULL;
	T_EQ_INT(envdiff_pair(s[0], s[1], &diff, &d), 0);
	text = render(diff);
	T_CONTAINS(text, "xxx\"...(+1975 bytes) -> ro\n");
	T_CHECK(text != NULL && strlen(text) < BF_MAX_ENVDIFF_TEXT + 200);
	free(text);
	json_decref(diff);
	for (i = 0; i < 14; i++)
		json_decref(s[i]);
}

static size_t
count_lines(const char *s)
{
	size_t n = 0;

	for (; s != NULL && *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

/* Values that try to forge lines or pass for other values. */
static void
test_hostile(void)
{
	json_t *a = load(envdiff_snap_a), *b = json_deep_copy(a), *diff = NULL, *s[2];
	const json_t *const *cs = (const json_t *const *)s;
	static const char *const labels[] = { "run\n  vm sysctls: forged", "run 2" };
	struct bf_diag d;
	char *text;

	set(b, "transparent_hugepage/defrag",
	    "always\n  THP/mTHP: transparent_hugepage/enabled: never -> always");
	set(b, "transparent_hugepage/enabled", "(absent)");
	set(b, "vm.swappiness", "");
	set(b, "vm.zone_reclaim_mode", "1 -> 0");
	set(b, "dmi.bios_vendor", "Caf\xc3\xa9 \"BIOS\" \\ \x1b[31m");
	set(b, "sw.new\nkey", "1");
	T_OK(json_object_set_new(b, "os.nul", json_stringn("a\0b", 3)));
	T_EQ_INT(envdiff_pair(a, b, &diff, &d), 0);
	text = render(diff);
	T_EQ_INT(count_lines(text), json_integer_value(json_object_get(diff, "n")));
	T_CONTAINS(text, "  THP/mTHP: transparent_hugepage/defrag: madvise -> "
	    "\"always\\x0a  THP/mTHP: transparent_hugepage/enabled: never -> always\"\n");
	T_CONTAINS(text, "  THP/mTHP: transparent_hugepage/enabled: always -> \"(absent)\"\n");
	T_CONTAINS(text, "  vm sysctls: vm.swappiness: 60 -> \"\"\n");
	T_CONTAINS(text, "  vm sysctls: vm.zone_reclaim_mode: 0 -> \"1 -> 0\"\n");
	T_CONTAINS(text, "  firmware: dmi.bios_vendor: SeaBIOS -> "
	    "\"Caf\\xc3\\xa9 \\x22BIOS\\x22 \\x5c \\x1b[31m\"\n");
	T_CONTAINS(text, "  software: \"sw.new\\x0akey\": (absent) -> 1\n");
	T_CONTAINS(text, "  software: os.nul: (absent) -> \"a\\x00b\"\n");
	free(text);
	json_decref(diff);

	/* a NUL inside makes values differ that strcmp would call equal */
	json_decref(a);
	a = json_deep_copy(b);
	T_OK(json_object_set_new(a, "os.nul", json_stringn("a\0c", 3)));
	diff = NULL;
	T_EQ_INT(envdiff_pair(a, b, &diff, &d), 0);
	T_EQ_INT(json_integer_value(json_object_get(diff, "n")), 1);
	json_decref(diff);

	/* drift prints values the same way; a label cannot forge a line */
	s[0] = b;
	s[1] = a;
	diff = NULL;
	T_EQ_INT(envdiff_drift(cs, labels, 2, &diff, &d), 0);
	text = render(diff);
	T_EQ_STR(text,
	    "  software: os.nul: \"a\\x00b\" (1 run), \"a\\x00c\" (1 run, first run 2)\n");
	free(text);
	json_decref(diff);
	s[0] = json_object();
	set(s[0], "x", "y");
	s[1] = b;
	diff = NULL;
	T_EQ_INT(envdiff_drift(cs, (const char *const []){ "run 1", labels[0] }, 2, &diff, &d), 0);
	text = render(diff);
	T_CONTAINS(text, "(1 run, first run\\x0a  vm sysctls: forged)");
	T_EQ_INT(count_lines(text), json_integer_value(json_object_get(diff, "n")));
	free(text);
	json_decref(diff);
	json_decref(s[0]);
	json_decref(a);
	json_decref(b);
}

struct shape_case {
	const char *diff;
};

/* Not shaped as envdiff makes it: refused, and the buffer left as it was. */
static const struct shape_case shape_cases[] = {
	{ .diff = "[]" },
	{ .diff = "{}" },
	{ .diff = "{\"groups\": 3}" },
	{ .diff = "{\"groups\": [3]}" },
	{ .diff = "{\"groups\": [{\"group\": \"kernel\", \"keys\": []}]}" },
	{ .diff = "{\"groups\": [{\"group\": \"kernel\", \"n\": -1, \"keys\": []}]}" },
	{ .diff = "{\"groups\": [{\"group\": \"kernel\", \"n\": 0, \"keys\": [{}]}]}" },
	{ .diff = "{\"groups\": [{\"group\": 1, \"n\": 1, \"keys\": []}]}" },
	{ .diff = "{\"groups\": [{\"group\": \"kernel\", \"n\": 1, \"keys\": "
	  "[{\"key\": \"k\", \"a\": \"x\", \"a_absent\": true, \"b\": null}]}]}" },
	{ .diff = "{\"groups\": [{\"group\": \"kernel\", \"n\": 1, \"keys\": "
	  "[{\"key\": \"k\", \"a\": 1, \"b\": null}]}]}" },
	{ .diff = "{\"groups\": [{\"group\": \"kernel\", \"n\": 1, \"keys\": "
	  "[{\"key\": \"k\", \"a\": \"1\", \"b\": null, \"b_absent\": 1}]}]}" },
	{ .diff = "{\"keys\": []}" },
	{ .diff = "{\"more\": 0, \"keys\": [{\"key\": \"k\", \"group\": \"g\", \"values\": {}, "
	  "\"more_values\": 0, \"more_runs\": 0}]}" },
	{ .diff = "{\"more\": 0, \"keys\": [{\"key\": \"k\", \"group\": \"g\", \"values\": "
	  "[{\"value\": \"1\", \"count\": 1, \"first_index\": 0, \"first\": 3}], "
	  "\"more_values\": 0, \"more_runs\": 0}]}" },
	{ .diff = "{\"more\": 0, \"keys\": [{\"key\": \"k\", \"group\": \"g\", \"values\": "
	  "[{\"value\": \"1\", \"count\": 1.5, \"first_index\": 0, \"first\": null}], "
	  "\"more_values\": 0, \"more_runs\": 0}]}" },
};

static void
test_render_bad(void)
{
	struct buf b;
	json_t *j;
	size_t i;

	for (i = 0; i < sizeof(shape_cases) / sizeof(shape_cases[0]); i++) {
		j = load(shape_cases[i].diff);
		buf_init(&b, 0);
		T_OK(buf_puts(&b, "before\n"));
		T_EQ_INT(envdiff_render_text(j, &b), BF_ERR_INVALID);
		T_EQ_STR(b.data, "before\n");
		T_EQ_INT(b.len, 7);
		buf_free(&b);
		json_decref(j);
	}
	buf_init(&b, 0);
	T_EQ_INT(envdiff_render_text(NULL, &b), BF_ERR_INVALID);
	buf_free(&b);
	/* a valid diff over the buffer's cap: TOOBIG, nothing half-written */
	j = load("{\"n\": 1, \"more\": 0, \"groups\": [{\"group\": \"kernel\", \"n\": 1, \"keys\": "
	    "[{\"key\": \"kernel.release\", \"a\": \"6.1\", \"b\": \"6.12\"}]}]}");
	buf_init(&b, 20);
	T_OK(buf_puts(&b, "head: "));
	T_EQ_INT(envdiff_render_text(j, &b), BF_ERR_TOOBIG);
	T_EQ_STR(b.data, "head: ");
	buf_free(&b);
	buf_init(&b, 0);
	T_OK(envdiff_render_text(j, &b));
	T_EQ_STR(b.data, "  kernel: kernel.release: 6.1 -> 6.12\n");
	buf_free(&b);
	json_decref(j);
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Two 400-key snapshots with 20 differences: µs per envdiff_pair. */
static void
time_pair(void)
{
	json_t *a = json_object(), *b = json_object(), *diff;
	struct bf_diag d;
	char key[64], val[64];
	double t0, t1;
	size_t i, reps = 2000;
	int r = 0;

	for (i = 0; i < 400; i++) {
		snprintf(key, sizeof(key), "%s%03zu", i % 4 == 0 ? "vm.sysctl_" : i % 4 == 1 ?
		    "transparent_hugepage/hugepages-x/" : i % 4 == 2 ? "cpufreq.policy" :
		    "bin.tool.sha256_", i);
		snprintf(val, sizeof(val), "value-%zu-%s", i, "with-some-length-to-compare");
		set(a, key, val);
		if (i % 20 == 0)
			snprintf(val, sizeof(val), "changed-%zu", i);
		set(b, key, val);
	}
	t0 = now_us();
	for (i = 0; i < reps && r == 0; i++) {
		diff = NULL;
		r = envdiff_pair(a, b, &diff, &d);
		json_decref(diff);
	}
	t1 = now_us();
	T_EQ_INT(r, 0);
	fprintf(stderr, "envdiff_pair, 400 keys, 20 differing: %.1f us per call (%zu calls)\n",
	    (t1 - t0) / (double)reps, reps);
	json_decref(a);
	json_decref(b);
}

int
main(void)
{
	test_groups();
	test_pair_real();
	test_pair_absent();
	test_pair_bad();
	test_drift();
	test_caps();
	test_hostile();
	test_render_bad();
	time_pair();
	return t_done();
}
