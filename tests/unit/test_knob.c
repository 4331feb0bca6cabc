/*
 * test_knob.c: the knob table: validation (hostile values included), the
 * sysfs bracket parser, and apply/read-back against a fake sysfs tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "knob.h"
#include "t.h"

struct vcase {
	const char *name, *value;
	int r;
	const char *msg;	/* substring of the message when refused */
};

static const struct vcase vcases[] = {
	{ .name = "thp_enabled", .value = "never", .r = 0, .msg = NULL },
	{ .name = "thp_enabled", .value = "madvise", .r = 0, .msg = NULL },
	{ .name = "thp_enabled", .value = "always", .r = 0, .msg = NULL },
	{ .name = "thp_enabled", .value = "alwayz", .r = BF_ERR_INVALID,
	  .msg = "knobs.thp_enabled: \"alwayz\" is not one of never, madvise, always" },
	{ .name = "thp_enabled", .value = "always\n", .r = BF_ERR_INVALID,
	  .msg = "\"always\\x0a\" is not one of" },
	{ .name = "thp_enabled", .value = "", .r = BF_ERR_INVALID,
	  .msg = "\"\" is not one of" },
	{ .name = "thp_enabled", .value = "[always]", .r = BF_ERR_INVALID,
	  .msg = "is not one of" },
	{ .name = "thp_defrag", .value = "defer+madvise", .r = 0, .msg = NULL },
	{ .name = "thp_defrag", .value = "defer madvise", .r = BF_ERR_INVALID,
	  .msg = "is not one of" },
	{ .name = "thp_shmem_enabled", .value = "within_size", .r = 0, .msg = NULL },
	{ .name = "khugepaged_pages_to_scan", .value = "4096", .r = 0, .msg = NULL },
	{ .name = "khugepaged_pages_to_scan", .value = "0", .r = BF_ERR_INVALID,
	  .msg = "is not an integer in 1..4194304" },
	{ .name = "khugepaged_pages_to_scan", .value = "12 ", .r = BF_ERR_INVALID,
	  .msg = "is not an integer" },
	{ .name = "khugepaged_defrag", .value = "1", .r = 0, .msg = NULL },
	{ .name = "khugepaged_defrag", .value = "2", .r = BF_ERR_INVALID, .msg = "0..1" },
	{ .name = "mthp_64kB", .value = "always", .r = 0, .msg = NULL },
	{ .name = "mthp_16kB", .value = "inherit", .r = 0, .msg = NULL },
	{ .name = "mthp_2048kB", .value = "never", .r = 0, .msg = NULL },
	{ .name = "mthp_64kB", .value = "sometimes", .r = BF_ERR_INVALID,
	  .msg = "never, madvise, inherit, always" },
	{ .name = "mthp_64KB", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "mthp_kB", .value = "always", .r = BF_ERR_NOTFOUND, .msg = "is not a knob" },
	{ .name = "mthp_064kB", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "mthp_-64kB", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "mthp_../../../etc/passwdkB", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "mthp_99999999999999999999kB", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "randomize_va_space", .value = "0", .r = 0, .msg = NULL },
	{ .name = "randomize_va_space", .value = "2", .r = 0, .msg = NULL },
	{ .name = "randomize_va_space", .value = "3", .r = BF_ERR_INVALID, .msg = "0..2" },
	{ .name = "randomize_va_space", .value = "-0", .r = 0, .msg = NULL },
	{ .name = "randomize_va_space", .value = "0x1", .r = BF_ERR_INVALID,
	  .msg = "not an integer" },
	{ .name = "governor", .value = "performance", .r = 0, .msg = NULL },
	{ .name = "governor", .value = "../../../../etc/shadow", .r = BF_ERR_INVALID,
	  .msg = "is not one of performance" },
	{ .name = "governor", .value = "performance,powersave", .r = BF_ERR_INVALID,
	  .msg = "is not one of" },
	{ .name = "boost", .value = "1", .r = 0, .msg = NULL },
	{ .name = "boost", .value = "yes", .r = BF_ERR_INVALID, .msg = "0..1" },
	{ .name = "drop_caches", .value = "3", .r = 0, .msg = NULL },
	{ .name = "drop_caches", .value = "0", .r = BF_ERR_INVALID, .msg = "1..3" },
	{ .name = "thp", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "\"thp\" is not a knob" },
	/* the message lists the table, families with their form */
	{ .name = "thp", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "nr_hugepages_<N>kB, nr_hugepages_<N>kB_node<M>, numa_balancing" },
	{ .name = "thp", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "smt, cpuidle_max_latency_us, drop_caches, compact_memory)" },
	{ .name = "numa_balancing", .value = "0", .r = 0, .msg = NULL },
	{ .name = "numa_balancing", .value = "2", .r = 0, .msg = NULL },
	{ .name = "numa_balancing", .value = "4", .r = BF_ERR_INVALID, .msg = "0..3" },
	{ .name = "use_zero_page", .value = "0", .r = 0, .msg = NULL },
	{ .name = "use_zero_page", .value = "2", .r = BF_ERR_INVALID, .msg = "0..1" },
	{ .name = "khugepaged_scan_sleep_ms", .value = "0", .r = 0, .msg = NULL },
	{ .name = "khugepaged_scan_sleep_ms", .value = "-1", .r = BF_ERR_INVALID,
	  .msg = "0..86400000" },
	{ .name = "khugepaged_alloc_sleep_ms", .value = "60000", .r = 0, .msg = NULL },
	{ .name = "mthp_shmem_64kB", .value = "within_size", .r = 0, .msg = NULL },
	{ .name = "mthp_shmem_64kB", .value = "madvise", .r = BF_ERR_INVALID,
	  .msg = "never, always, within_size, advise, inherit" },
	{ .name = "mthp_shmem_kB", .value = "always", .r = BF_ERR_NOTFOUND, .msg = "is not a knob" },
	{ .name = "nr_hugepages_2048kB", .value = "512", .r = 0, .msg = NULL },
	{ .name = "nr_hugepages_1048576kB", .value = "0", .r = 0, .msg = NULL },
	{ .name = "nr_hugepages_2048kB", .value = "-1", .r = BF_ERR_INVALID, .msg = "0..1073741824" },
	{ .name = "nr_hugepages_2048kB_node0", .value = "16", .r = 0, .msg = NULL },
	{ .name = "nr_hugepages_2048kB_node12", .value = "16", .r = 0, .msg = NULL },
	{ .name = "nr_hugepages_2048kB_node", .value = "16", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "nr_hugepages_2048kB_node01", .value = "16", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "nr_hugepages_2048kB_node1024", .value = "16", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "nr_hugepages_2048kB_node-1", .value = "16", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "nr_hugepages_2048kB_node0/../x", .value = "16", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "nr_hugepages_2048", .value = "16", .r = BF_ERR_NOTFOUND, .msg = "is not a knob" },
	{ .name = "nr_hugepages_0kB", .value = "16", .r = BF_ERR_NOTFOUND, .msg = "is not a knob" },
	{ .name = "nr_hugepages", .value = "16", .r = BF_ERR_NOTFOUND, .msg = "is not a knob" },
	{ .name = "smt", .value = "off", .r = 0, .msg = NULL },
	{ .name = "smt", .value = "forceoff", .r = BF_ERR_INVALID, .msg = "is not one of on, off" },
	{ .name = "cpuidle_max_latency_us", .value = "0", .r = 0, .msg = NULL },
	{ .name = "cpuidle_max_latency_us", .value = "20", .r = 0, .msg = NULL },
	{ .name = "cpuidle_max_latency_us", .value = "ten", .r = BF_ERR_INVALID,
	  .msg = "not an integer" },
	{ .name = "compact_memory", .value = "1", .r = 0, .msg = NULL },
	{ .name = "compact_memory", .value = "2", .r = BF_ERR_INVALID, .msg = "1..1" },
	{ .name = "../thp_enabled", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "is not a knob" },
	{ .name = "thp_enabled\n", .value = "always", .r = BF_ERR_NOTFOUND,
	  .msg = "\"thp_enabled\\x0a\" is not a knob" },
};

struct bcase {
	const char *text;
	int r;
	const char *want;
};

static const struct bcase bcases[] = {
	{ .text = "always [madvise] never", .r = 0, .want = "madvise" },
	{ .text = "[always] madvise never\n", .r = 0, .want = "always" },
	{ .text = "always defer defer+madvise [madvise] never", .r = 0, .want = "madvise" },
	{ .text = "always within_size advise [never] deny force", .r = 0, .want = "never" },
	{ .text = "always inherit madvise [never]\n", .r = 0, .want = "never" },
	{ .text = "always madvise never", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "[always] [never]", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "[]", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "[al ways]", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "[always", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "always]", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "]always[", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "", .r = BF_ERR_PARSE, .want = NULL },
	{ .text = "[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]",
	  .r = BF_ERR_PARSE, .want = NULL },
};

static void
test_validate(void)
{
	char err[KNOB_MAX_WHY];
	size_t i;
	int r;

	for (i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
		err[0] = '\0';
		r = knob_validate(vcases[i].name, vcases[i].value, err, sizeof(err));
		if (r != vcases[i].r)
			fprintf(stderr, "case %zu (%s=%s): %s\n", i, vcases[i].name,
			    vcases[i].value, err);
		T_EQ_INT(r, vcases[i].r);
		if (vcases[i].msg != NULL)
			T_CONTAINS(err, vcases[i].msg);
	}
}

static void
test_long_value(void)
{
	char big[10000], err[KNOB_MAX_WHY];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	T_EQ_INT(knob_validate("thp_enabled", big, err, sizeof(err)), BF_ERR_INVALID);
	T_CHECK(strlen(err) < 200);
	T_CONTAINS(err, "...");
	T_EQ_INT(knob_validate(big, "always", err, sizeof(err)), BF_ERR_NOTFOUND);
	T_EQ_INT(knob_validate("khugepaged_pages_to_scan", big + 9000, err, sizeof(err)),
	    BF_ERR_INVALID);
}

static void
test_bracket(void)
{
	char out[64];
	size_t i;
	int r;

	for (i = 0; i < sizeof(bcases) / sizeof(bcases[0]); i++) {
		out[0] = '\0';
		r = knob_bracket(bcases[i].text, strlen(bcases[i].text), out, sizeof(out));
		T_EQ_INT(r, bcases[i].r);
		if (bcases[i].want != NULL)
			T_EQ_STR(out, bcases[i].want);
	}
	/* counted input: the bracket past len is not seen */
	T_EQ_INT(knob_bracket("[never] x", 3, out, sizeof(out)), BF_ERR_PARSE);
	/* a word exactly filling the buffer leaves no room for the NUL */
	T_EQ_INT(knob_bracket("[abcd]", 6, out, 4), BF_ERR_PARSE);
	T_EQ_INT(knob_bracket("[abc]", 5, out, 4), 0);
}

static void
put(const char *root, const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = dir + strlen(root) + 1; (slash = strchr(slash, '/')) != NULL; slash++) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	if ((f = fopen(path, "w")) != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static void
test_fake_sysfs(void)
{
	char root[] = "/tmp/bf-knob-XXXXXX", out[256], why[KNOB_MAX_WHY];
	char cmd[600];

	if (mkdtemp(root) == NULL) {
		T_CHECK(0);
		return;
	}
	T_EQ_INT(knob_set_root(root), 0);
	put(root, "/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
	put(root, "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled",
	    "always inherit madvise [never]\n");
	put(root, "/sys/kernel/mm/transparent_hugepage/hugepages-16kB/enabled",
	    "always inherit madvise [never]\n");
	put(root, "/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled",
	    "always [inherit] madvise never\n");
	put(root, "/proc/sys/kernel/randomize_va_space", "2\n");
	put(root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n");
	put(root, "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");
	put(root, "/sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");

	T_EQ_INT(knob_read("thp_enabled", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "madvise");
	T_EQ_INT(knob_read("mthp_2048kB", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "inherit");
	T_EQ_INT(knob_mthp_sizes(out, sizeof(out)), 0);
	T_EQ_STR(out, "16kB, 64kB, 2048kB");
	T_EQ_INT(knob_read("mthp_32kB", out, sizeof(out), why, sizeof(why)), BF_ERR_NOTFOUND);
	T_CONTAINS(why, "no such mTHP size 32kB on this machine; available: 16kB, 64kB, 2048kB");
	T_EQ_INT(knob_write("mthp_32kB", "always", why, sizeof(why)), BF_ERR_NOTFOUND);
	T_EQ_INT(knob_read("randomize_va_space", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "2");
	T_CHECK(knob_same("randomize_va_space", "02", "2"));
	T_CHECK(!knob_same("thp_enabled", "always", "madvise"));
	/* cpus disagree: both are named */
	T_EQ_INT(knob_read("governor", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "0:powersave,1:performance");
	/* no_turbo 1 means boost off */
	T_EQ_INT(knob_read("boost", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "0");
	T_EQ_INT(knob_write("boost", "1", why, sizeof(why)), 0);
	T_EQ_INT(knob_read("boost", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "1");
	/* a plain file takes the word; a real sysfs would then show it bracketed */
	T_EQ_INT(knob_write("governor", "performance", why, sizeof(why)), 0);
	T_EQ_INT(knob_read("governor", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "performance");
	T_EQ_INT(knob_write("thp_enabled", "bogus", why, sizeof(why)), BF_ERR_INVALID);
	T_EQ_INT(knob_read("drop_caches", out, sizeof(out), why, sizeof(why)), BF_ERR_INVALID);
	/* the THP file without brackets is refused, not misread */
	put(root, "/sys/kernel/mm/transparent_hugepage/enabled", "always\n");
	T_EQ_INT(knob_read("thp_enabled", out, sizeof(out), why, sizeof(why)), BF_ERR_PARSE);
	T_CONTAINS(why, "no [selected] value");
	T_EQ_INT(knob_read("thp_defrag", out, sizeof(out), why, sizeof(why)), BF_ERR_NOTFOUND);
	T_EQ_INT(knob_read("boost", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_INT(knob_set_root(""), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	T_EQ_INT(system(cmd), 0);
}

/* hugetlb pools, per size and per node: paths, missing sizes and nodes,
 * and a shortfall named with the pages asked and obtained. */
static void
test_pools(const char *root)
{
	char out[256], why[KNOB_MAX_WHY], path[KNOB_MAX_PATH];
	long long node;

	put(root, "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "0\n");
	put(root, "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "0\n");
	put(root, "/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "3\n");
	T_EQ_INT(knob_read("nr_hugepages_2048kB", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "0");
	T_EQ_INT(knob_write("nr_hugepages_2048kB", "64", why, sizeof(why)), 0);
	T_EQ_INT(knob_read("nr_hugepages_2048kB", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "64");
	T_EQ_INT(knob_read("nr_hugepages_2048kB_node0", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "3");
	T_EQ_INT(knob_read("nr_hugepages_4096kB", out, sizeof(out), why, sizeof(why)),
	    BF_ERR_NOTFOUND);
	T_EQ_STR(why, "no hugetlb pool of 4096kB pages on this machine; available: 2048kB, "
	    "1048576kB");
	T_EQ_INT(knob_read("nr_hugepages_2048kB_node1", out, sizeof(out), why, sizeof(why)),
	    BF_ERR_NOTFOUND);
	T_EQ_STR(why, "no NUMA node 1 on this machine");
	T_EQ_INT(knob_read("nr_hugepages_1048576kB_node0", out, sizeof(out), why, sizeof(why)),
	    BF_ERR_NOTFOUND);
	T_CONTAINS(why, "no hugetlb pool of 1048576kB pages");
	/* the table's own paths, no root */
	T_EQ_INT(knob_path("nr_hugepages_2048kB_node1", path, sizeof(path), &node), 0);
	T_EQ_STR(path, "/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages");
	T_EQ_INT(node, 1);
	T_EQ_INT(knob_path("mthp_shmem_64kB", path, sizeof(path), &node), 0);
	T_EQ_STR(path, "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/shmem_enabled");
	T_EQ_INT(node, -1);
	T_EQ_INT(knob_path("governor", path, sizeof(path), &node), BF_ERR_INVALID);
	T_EQ_INT(knob_path("nope", path, sizeof(path), &node), BF_ERR_NOTFOUND);
	/* shortfall: fewer pages than asked is named; anything else is the plain mismatch */
	knob_mismatch("nr_hugepages_2048kB", "512", "100", why, sizeof(why));
	T_CONTAINS(why, "asked for 512 pages, the kernel gave 100 (412 short");
	knob_mismatch("nr_hugepages_2048kB_node0", "8", "7", why, sizeof(why));
	T_CONTAINS(why, "asked for 8 pages, the kernel gave 7 (1 short");
	knob_mismatch("thp_enabled", "always", "never", why, sizeof(why));
	T_EQ_STR(why, "set to \"always\" but reads back \"never\"");
	T_CHECK(knob_same("nr_hugepages_2048kB", "512", "512"));
	T_CHECK(!knob_same("nr_hugepages_2048kB", "512", "511"));
}

/* SMT: written through control, read back from active; control states no
 * write can leave are refused with the reason. */
static void
test_smt(const char *root)
{
	char out[64], why[KNOB_MAX_WHY];
	char paths[1][KNOB_MAX_PATH];
	size_t n;

	T_EQ_INT(knob_read("smt", out, sizeof(out), why, sizeof(why)), BF_ERR_NOTFOUND);
	T_CONTAINS(why, "no SMT control on this machine");
	put(root, "/sys/devices/system/cpu/smt/control", "on\n");
	put(root, "/sys/devices/system/cpu/smt/active", "1\n");
	T_EQ_INT(knob_read("smt", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "on");
	T_EQ_INT(knob_write("smt", "off", why, sizeof(why)), 0);
	put(root, "/sys/devices/system/cpu/smt/active", "0\n");	/* as the kernel would */
	T_EQ_INT(knob_read("smt", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "off");
	T_EQ_INT(knob_files("smt", paths, 1, &n, why, sizeof(why)), 0);
	T_EQ_INT(n, 1);
	T_CONTAINS(paths[0], "/sys/devices/system/cpu/smt/control");
	put(root, "/sys/devices/system/cpu/smt/control", "forceoff\n");
	T_EQ_INT(knob_write("smt", "on", why, sizeof(why)), BF_ERR_STATE);
	T_CONTAINS(why, "SMT was forced off at boot");
	/* read back still works: SMT is off */
	T_EQ_INT(knob_read("smt", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "off");
	put(root, "/sys/devices/system/cpu/smt/control", "notsupported\n");
	T_EQ_INT(knob_write("smt", "on", why, sizeof(why)), BF_ERR_NOTFOUND);
	T_CONTAINS(why, "this CPU has no SMT");
	put(root, "/sys/devices/system/cpu/smt/control", "2\n");	/* threads per core */
	T_EQ_INT(knob_files("smt", paths, 1, &n, why, sizeof(why)), 0);
	put(root, "/sys/devices/system/cpu/smt/control", "on\n");
	put(root, "/sys/devices/system/cpu/smt/active", "yes\n");
	T_EQ_INT(knob_read("smt", out, sizeof(out), why, sizeof(why)), BF_ERR_PARSE);
	put(root, "/sys/devices/system/cpu/smt/active", "1\n");
}

static void
idle_state(const char *root, int cpu, int st, const char *lat, const char *dis)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/latency", cpu, st);
	put(root, rel, lat);
	snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/disable", cpu, st);
	put(root, rel, dis);
}

static void
slurp(const char *root, const char *rel, char *out, size_t outsz)
{
	char path[512];
	FILE *f;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	out[0] = '\0';
	if ((f = fopen(path, "r")) != NULL) {
		n = fread(out, 1, outsz - 1, f);
		fclose(f);
	}
	out[n] = '\0';
	if (n > 0 && out[n - 1] == '\n')
		out[n - 1] = '\0';
}

/* The C-state limit: states above N us disabled on every cpu, the others
 * enabled; read back as the range of limits the state corresponds to. */
static void
test_cpuidle(const char *root)
{
	static const char *const lat[] = { "0", "2", "10", "100" };
	char out[64], why[KNOB_MAX_WHY], got[16], rel[128];
	int cpu, st;

	T_EQ_INT(knob_read("cpuidle_max_latency_us", out, sizeof(out), why, sizeof(why)),
	    BF_ERR_NOTFOUND);
	T_CONTAINS(why, "no cpuidle states");
	for (cpu = 0; cpu < 2; cpu++)
		for (st = 0; st < 4; st++)
			idle_state(root, cpu, st, lat[st], "0\n");
	T_EQ_INT(knob_read("cpuidle_max_latency_us", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "100..");
	T_CHECK(knob_same("cpuidle_max_latency_us", "100", out));
	T_CHECK(knob_same("cpuidle_max_latency_us", "5000", out));
	T_CHECK(!knob_same("cpuidle_max_latency_us", "99", out));
	T_EQ_INT(knob_write("cpuidle_max_latency_us", "5", why, sizeof(why)), 0);
	for (cpu = 0; cpu < 2; cpu++)
		for (st = 0; st < 4; st++) {
			snprintf(rel, sizeof(rel),
			    "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/disable", cpu, st);
			slurp(root, rel, got, sizeof(got));
			T_EQ_STR(got, st >= 2 ? "1" : "0");
		}
	T_EQ_INT(knob_read("cpuidle_max_latency_us", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "2..10");
	T_CHECK(knob_same("cpuidle_max_latency_us", "5", out));
	T_CHECK(knob_same("cpuidle_max_latency_us", "2", out));
	T_CHECK(!knob_same("cpuidle_max_latency_us", "10", out));
	T_CHECK(!knob_same("cpuidle_max_latency_us", "1", out));
	/* a limit of 0: only the 0 us state (POLL) stays */
	T_EQ_INT(knob_write("cpuidle_max_latency_us", "0", why, sizeof(why)), 0);
	T_EQ_INT(knob_read("cpuidle_max_latency_us", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "0..2");
	/* a shallow state disabled under an enabled deeper one: no limit is in force */
	idle_state(root, 1, 3, "100", "0\n");
	T_EQ_INT(knob_read("cpuidle_max_latency_us", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "mixed");
	T_CHECK(!knob_same("cpuidle_max_latency_us", "100", out));
	/* everything off */
	for (cpu = 0; cpu < 2; cpu++)
		for (st = 0; st < 4; st++)
			idle_state(root, cpu, st, lat[st], "1\n");
	T_EQ_INT(knob_read("cpuidle_max_latency_us", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "..0");
	T_CHECK(!knob_same("cpuidle_max_latency_us", "0", out));
	idle_state(root, 0, 1, "fast", "0\n");
	T_EQ_INT(knob_read("cpuidle_max_latency_us", out, sizeof(out), why, sizeof(why)),
	    BF_ERR_PARSE);
	T_CONTAINS(why, "not a latency");
	idle_state(root, 0, 1, "2", "0\n");
}

/* The rest of the new knobs are plain files; actions exist or not. */
static void
test_new_plain(const char *root)
{
	char out[64], why[KNOB_MAX_WHY];

	put(root, "/proc/sys/kernel/numa_balancing", "1\n");
	put(root, "/sys/kernel/mm/transparent_hugepage/use_zero_page", "1\n");
	put(root, "/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs", "10000\n");
	put(root, "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/shmem_enabled",
	    "always inherit within_size advise [never]\n");
	T_EQ_INT(knob_write("numa_balancing", "0", why, sizeof(why)), 0);
	T_EQ_INT(knob_read("numa_balancing", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "0");
	T_EQ_INT(knob_read("use_zero_page", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "1");
	T_EQ_INT(knob_read("khugepaged_scan_sleep_ms", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "10000");
	T_EQ_INT(knob_read("khugepaged_alloc_sleep_ms", out, sizeof(out), why, sizeof(why)),
	    BF_ERR_NOTFOUND);
	T_CONTAINS(why, "alloc_sleep_millisecs does not exist on this machine");
	T_EQ_INT(knob_read("mthp_shmem_64kB", out, sizeof(out), why, sizeof(why)), 0);
	T_EQ_STR(out, "never");
	T_EQ_INT(knob_read("mthp_shmem_32kB", out, sizeof(out), why, sizeof(why)),
	    BF_ERR_NOTFOUND);
	T_CONTAINS(why, "no such mTHP size 32kB on this machine");
	T_EQ_INT(knob_action_exists("compact_memory", why, sizeof(why)), 0);
	T_CONTAINS(why, "/proc/sys/vm/compact_memory does not exist on this machine");
	put(root, "/proc/sys/vm/compact_memory", "");
	T_EQ_INT(knob_action_exists("compact_memory", why, sizeof(why)), 1);
	T_EQ_INT(knob_write("compact_memory", "1", why, sizeof(why)), 0);
	T_EQ_INT(knob_read("compact_memory", out, sizeof(out), why, sizeof(why)), BF_ERR_INVALID);
}

static void
test_new_knobs(void)
{
	char root[] = "/tmp/bf-knob2-XXXXXX", cmd[600];

	if (mkdtemp(root) == NULL) {
		T_CHECK(0);
		return;
	}
	T_EQ_INT(knob_set_root(root), 0);
	test_pools(root);
	test_smt(root);
	test_cpuidle(root);
	test_new_plain(root);
	T_EQ_INT(knob_set_root(""), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	T_EQ_INT(system(cmd), 0);
}

static void
test_table(void)
{
	const struct knob *t;
	size_t n, i;

	t = knob_table(&n);
	T_CHECK(n >= 10);
	for (i = 0; i < n; i++)
		T_CHECK(t[i].name != NULL && t[i].path != NULL && t[i].help != NULL);
	T_CHECK(knob_find("mthp_64kB") != NULL && knob_find("mthp_64kB")->family);
	T_CHECK(knob_find("governor") != NULL);
	T_CHECK(knob_find("mthp_") == NULL);
}

int
main(void)
{
	test_validate();
	test_long_value();
	test_bracket();
	test_fake_sysfs();
	test_new_knobs();
	test_table();
	return t_done();
}
