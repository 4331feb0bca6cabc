/*
 * agent_test_snapshot.c: the environment snapshot on a fake /sys, /proc,
 * /etc, /boot and /var/lib/dpkg tree in a mktemp directory (never the real
 * ones): every key group, choice files, per-policy summaries, unreadable
 * and planted files (a fifo, a directory), the caps, canonical order and
 * byte-stable output, and a one-setting change showing as one key.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "caps.h"
#include "ajson.h"
#include "snapshot.h"
#include "t.h"
#include "agent_fixture.h"

static char root[64] = "/tmp/bf-snapshot-XXXXXX";
static int cmd_calls;

#define mk(path, text) fix_mk(root, (path), (text))

static int
fake_run(void *arg, char *const *argv, struct buf *out)
{
	(void)arg;
	cmd_calls++;
	if (strcmp(argv[0], "/usr/bin/cc") == 0)
		return buf_puts(out, "cc (Fake 1.0) 1.0\nCopyright\n");
	return -6;
}

static void
tree(void)
{
	char rel[PATH_MAX], line[PATH_MAX + 64];
	const char *b;

	mk("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
	mk("/sys/kernel/mm/transparent_hugepage/defrag",
	    "always defer defer+madvise [madvise] never\n");
	mk("/sys/kernel/mm/transparent_hugepage/shmem_enabled",
	    "always within_size advise [never] deny force\n");
	mk("/sys/kernel/mm/transparent_hugepage/use_zero_page", "1\n");
	mk("/sys/kernel/mm/transparent_hugepage/khugepaged/defrag", "1\n");
	mk("/sys/kernel/mm/transparent_hugepage/khugepaged/pages_to_scan", "4096\n");
	mk("/sys/kernel/mm/transparent_hugepage/khugepaged/full_scans", "17\n");
	mk("/sys/kernel/mm/transparent_hugepage/khugepaged/pages_collapsed", "3\n");
	mk("/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled",
	    "always inherit madvise [never]\n");
	mk("/sys/kernel/mm/transparent_hugepage/hugepages-64kB/shmem_enabled",
	    "always inherit within_size advise [never]\n");
	mk("/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats/anon_fault_alloc", "5\n");
	mk("/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled",
	    "always [inherit] madvise never\n");
	mk("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "8\n");
	mk("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "3\n");
	mk("/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "0\n");
	mk("/sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       16000000 kB\n");
	mk("/sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:       16100000 kB\n");
	mk("/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "4\n");
	mk("/sys/devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages", "1\n");
	mk("/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages", "4\n");
	mk("/sys/devices/system/node/possible", "0-1\n");
	mk("/proc/sys/vm/zone_reclaim_mode", "0\n");
	mk("/proc/sys/vm/swappiness", "60\n");
	mk("/proc/sys/vm/lowmem_reserve_ratio", "256\t256\t32\t0\t0\n");
	mk("/proc/sys/vm/drop_caches", "0\n");
	mk("/proc/sys/vm/compact_memory", "");
	mk("/proc/sys/kernel/numa_balancing", "1\n");
	mk("/proc/sys/kernel/randomize_va_space", "2\n");
	mk("/proc/sys/kernel/osrelease", "6.1.0-test-amd64\n");
	mk("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.99-1 (2026-01-01)\n");
	mk("/proc/sys/kernel/random/boot_id", "11111111-2222-3333-4444-555555555555\n");
	mk("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/vda ro transparent_hugepage=madvise\n");
	mk("/proc/version", "Linux version 6.1.0-test-amd64 (debian-kernel@lists.debian.org) "
	    "(gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP\n");
	mk("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
	    "model\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nstepping\t: 8\n"
	    "microcode\t: 0x2b000590\nflags\t\t: fpu la57\n\nprocessor\t: 1\n");
	mk("/boot/config-6.1.0-test-amd64", "CONFIG_TRANSPARENT_HUGEPAGE=y\n");
	mk("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "performance\n");
	mk("/sys/devices/system/cpu/cpufreq/policy1/scaling_governor", "performance\n");
	mk("/sys/devices/system/cpu/cpufreq/policy2/scaling_governor", "performance\n");
	mk("/sys/devices/system/cpu/cpufreq/policy3/scaling_governor", "powersave\n");
	mk("/sys/devices/system/cpu/cpufreq/policy0/energy_performance_preference", "balance_power\n");
	mk("/sys/devices/system/cpu/cpufreq/boost", "1\n");
	mk("/sys/devices/system/cpu/smt/control", "on\n");
	mk("/sys/devices/system/cpu/cpu0/cpuidle/state0/name", "POLL\n");
	mk("/sys/devices/system/cpu/cpu0/cpuidle/state0/disable", "0\n");
	mk("/sys/devices/system/cpu/cpu0/cpuidle/state1/name", "C1E\n");
	mk("/sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "1\n");
	mk("/sys/devices/system/cpu/cpu1/cpuidle/state0/disable", "0\n");
	mk("/sys/devices/system/cpu/cpu1/cpuidle/state1/disable", "0\n");
	mk("/sys/module/intel_idle/parameters/max_cstate", "1\n");
	mk("/sys/class/dmi/id/bios_version", "2.1.7\n");
	mk("/sys/class/dmi/id/board_name", "X13DEI\n");
	mk("/sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
	mk("/etc/os-release", "NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n");
	/* a directory where a file is expected, and a fifo that must not hang */
	snprintf(rel, sizeof(rel), "%s/sys/class/dmi/id/bios_vendor", root);
	T_EQ_INT(mkdir(rel, 0755), 0);
	snprintf(rel, sizeof(rel), "%s/proc/sys/vm/trap", root);
	T_EQ_INT(mkfifo(rel, 0644), 0);
	/* a write-only file (an action, like compact_memory) is no setting,
	 * even to root, who can open it; a link is not followed */
	mk("/proc/sys/vm/write_only", "1\n");
	snprintf(rel, sizeof(rel), "%s/proc/sys/vm/write_only", root);
	T_EQ_INT(chmod(rel, 0200), 0);
	snprintf(rel, sizeof(rel), "%s/proc/sys/vm/link", root);
	T_EQ_INT(symlink("swappiness", rel), 0);
	/* dpkg's files for /bin/sh, whatever it resolves to on this machine */
	if (realpath("/bin/sh", rel) != NULL && (b = strrchr(rel, '/')) != NULL) {
		char lp[PATH_MAX + 64];

		snprintf(line, sizeof(line), "/.\n/usr\n%s\n", rel);
		snprintf(lp, sizeof(lp), "/var/lib/dpkg/info/%s.list", b + 1);
		mk(lp, line);
		mk("/var/lib/dpkg/info/other.list", "/.\n/usr/bin/other\n");
		snprintf(line, sizeof(line), "Package: x\nVersion: 1\n\nPackage: %s\n"
		    "Status: install ok installed\nVersion: 9.9-test\n\nPackage: y\nVersion: 2\n",
		    b + 1);
		mk("/var/lib/dpkg/status", line);
	}
}

/* The snapshot as a parsed object; checks it is canonical on the way. */
static struct ajson *
build(const char *const *bins, struct buf *text)
{
	struct snapshot_opts o = { .root = root, .bins = bins, .run = fake_run };
	struct ajson *j = NULL;
	size_t i;

	buf_reset(text);
	T_EQ_INT(snapshot_build(&o, text), 0);
	T_CHECK(text->data != NULL && text->len <= BF_MAX_SNAPSHOT + 64);
	if (text->data == NULL)
		return NULL;
	T_EQ_INT(ajson_parse(text->data, text->len, &j, NULL), 0);
	T_CHECK(j != NULL && j->type == AJSON_OBJ);
	for (i = 0; j != NULL && i < j->n; i++) {
		T_CHECK(j->items[i]->type == AJSON_STR || j->items[i]->type == AJSON_NULL);
		if (i > 0 && strcmp(j->items[i - 1]->key, j->items[i]->key) >= 0) {
			fprintf(stderr, "keys out of order: %s, %s\n", j->items[i - 1]->key,
			    j->items[i]->key);
			t_fails++;
		}
	}
	return j;
}

static const char *
val(const struct ajson *j, const char *key)
{
	const struct ajson *v = ajson_get(j, key);

	if (v == NULL)
		return "(missing)";
	return v->type == AJSON_STR ? v->str : "(null)";
}

static void
test_tree(void)
{
	static const char *const bins[] = { "/bin/sh", "/bin/sh", "no-such-binary-bf", "@agent",
		NULL };
	struct buf t1, t2;
	struct ajson *j, *k;
	char real[PATH_MAX];

	buf_init(&t1, BF_MAX_SNAPSHOT + 64);
	buf_init(&t2, BF_MAX_SNAPSHOT + 64);
	j = build(bins, &t1);
	T_EQ_STR(val(j, "transparent_hugepage/enabled"), "madvise");
	T_EQ_STR(val(j, "transparent_hugepage/defrag"), "madvise");
	T_EQ_STR(val(j, "transparent_hugepage/shmem_enabled"), "never");
	T_EQ_STR(val(j, "transparent_hugepage/use_zero_page"), "1");
	T_EQ_STR(val(j, "transparent_hugepage/khugepaged/defrag"), "1");
	T_EQ_STR(val(j, "transparent_hugepage/khugepaged/pages_to_scan"), "4096");
	T_EQ_STR(val(j, "transparent_hugepage/hugepages-64kB/enabled"), "never");
	T_EQ_STR(val(j, "transparent_hugepage/hugepages-64kB/shmem_enabled"), "never");
	T_EQ_STR(val(j, "transparent_hugepage/hugepages-2048kB/enabled"), "inherit");
	/* counters are not settings */
	T_EQ_STR(val(j, "transparent_hugepage/khugepaged/full_scans"), "(missing)");
	T_EQ_STR(val(j, "transparent_hugepage/khugepaged/pages_collapsed"), "(missing)");
	T_EQ_STR(val(j, "transparent_hugepage/hugepages-64kB/stats/anon_fault_alloc"),
	    "(missing)");
	T_EQ_STR(val(j, "hugetlb/hugepages-2048kB/nr_hugepages"), "8");
	T_EQ_STR(val(j, "hugetlb/hugepages-1048576kB/nr_hugepages"), "0");
	T_EQ_STR(val(j, "hugetlb/hugepages-2048kB/free_hugepages"), "(missing)");
	T_EQ_STR(val(j, "hugetlb/node0/hugepages-2048kB/nr_hugepages"), "4");
	T_EQ_STR(val(j, "hugetlb/node1/hugepages-2048kB/nr_hugepages"), "4");
	T_EQ_STR(val(j, "hugetlb/node0/hugepages-2048kB/free_hugepages"), "(missing)");
	T_EQ_STR(val(j, "numa.nodes"), "0-1");
	T_EQ_STR(val(j, "numa.node1.mem_total_kb"), "16100000");
	T_EQ_STR(val(j, "vm.zone_reclaim_mode"), "0");
	T_EQ_STR(val(j, "vm.swappiness"), "60");
	T_EQ_STR(val(j, "vm.lowmem_reserve_ratio"), "256 256 32 0 0");
	T_EQ_STR(val(j, "vm.drop_caches"), "(missing)");
	T_EQ_STR(val(j, "vm.compact_memory"), "(missing)");
	T_EQ_STR(val(j, "vm.trap"), "(missing)");	/* a fifo is not a file */
	T_EQ_STR(val(j, "vm.write_only"), "(missing)");
	T_EQ_STR(val(j, "vm.link"), "(missing)");
	T_EQ_STR(val(j, "kernel.numa_balancing"), "1");
	T_EQ_STR(val(j, "kernel.randomize_va_space"), "2");
	T_EQ_STR(val(j, "kernel.release"), "6.1.0-test-amd64");
	T_CONTAINS(val(j, "kernel.version"), "Debian 6.1.99-1");
	T_EQ_STR(val(j, "kernel.cmdline"),
	    "BOOT_IMAGE=/vmlinuz root=/dev/vda ro transparent_hugepage=madvise");
	T_EQ_STR(val(j, "kernel.boot_id"), "11111111-2222-3333-4444-555555555555");
	T_EQ_STR(val(j, "kernel.config_source"), "/boot/config");
	T_EQ_INT(strlen(val(j, "kernel.config_sha256")), 64);
	T_EQ_STR(val(j, "kernel.compiler"), "gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld "
	    "(GNU Binutils for Debian) 2.40");
	T_CHECK(strcmp(val(j, "kernel.page_size"), "(missing)") != 0);
	T_EQ_STR(val(j, "cpu.model"), "Intel(R) Xeon(R) Platinum 8480+");
	T_EQ_STR(val(j, "cpu.stepping"), "8");
	T_EQ_STR(val(j, "cpu.microcode"), "0x2b000590");
	T_EQ_STR(val(j, "cpu.la57"), "1");
	T_EQ_STR(val(j, "cpu.threads"), "2");
	T_EQ_STR(val(j, "cpu.smt.control"), "on");
	T_EQ_STR(val(j, "cpu.smt.active"), "(null)");
	T_EQ_STR(val(j, "cpufreq.scaling_governor"), "0-2:performance,3:powersave");
	T_EQ_STR(val(j, "cpufreq.energy_performance_preference"), "0:balance_power");
	T_EQ_STR(val(j, "cpufreq.scaling_driver"), "(null)");
	T_EQ_STR(val(j, "cpufreq.boost"), "1");
	T_EQ_STR(val(j, "cpuidle.state1.name"), "C1E");
	T_EQ_STR(val(j, "cpuidle.state1.disable"), "0:1,1:0");
	T_EQ_STR(val(j, "cpuidle.state0.disable"), "0");
	T_EQ_STR(val(j, "cpuidle.intel_idle.max_cstate"), "1");
	T_EQ_STR(val(j, "dmi.bios_version"), "2.1.7");
	T_EQ_STR(val(j, "dmi.board_name"), "X13DEI");
	T_EQ_STR(val(j, "dmi.bios_vendor"), "(null)");	/* a directory */
	T_EQ_STR(val(j, "dmi.sys_vendor"), "(null)");	/* absent */
	T_EQ_STR(val(j, "cgroup.version"), "2");
	T_EQ_STR(val(j, "os.pretty_name"), "Debian GNU/Linux 12 (bookworm)");
	/* binaries: resolved, hashed, packaged from the fake dpkg files */
	T_CHECK(realpath("/bin/sh", real) != NULL);
	T_EQ_STR(val(j, "bin./bin/sh.path"), real);
	T_EQ_INT(strlen(val(j, "bin./bin/sh.sha256")), 64);
	{
		const char *b = strrchr(real, '/') + 1;
		char want[PATH_MAX + 16];

		snprintf(want, sizeof(want), "%s 9.9-test", b);
		T_EQ_STR(val(j, "bin./bin/sh.package"), want);
	}
	T_EQ_STR(val(j, "bin.no-such-binary-bf.path"), "(null)");
	T_EQ_STR(val(j, "bin.no-such-binary-bf.sha256"), "(null)");
	T_CHECK(strcmp(val(j, "bin.@agent.path"), "(null)") != 0);
	T_EQ_STR(val(j, "bin.@agent.package"), "(missing)");
	if (access("/usr/bin/cc", X_OK) == 0)
		T_EQ_STR(val(j, "sw.cc"), "cc (Fake 1.0) 1.0");
	T_EQ_STR(val(j, "~dropped"), "(missing)");

	/* byte-identical when nothing changed */
	k = build(bins, &t2);
	T_CHECK(t1.len == t2.len && memcmp(t1.data, t2.data, t1.len) == 0);
	ajson_free(k);

	/* one setting changed: exactly that key differs */
	mk("/sys/kernel/mm/transparent_hugepage/khugepaged/defrag", "0\n");
	k = build(bins, &t2);
	T_CHECK(t1.len != t2.len || memcmp(t1.data, t2.data, t1.len) != 0);
	if (j != NULL && k != NULL) {
		size_t i, ndiff = 0;

		T_EQ_INT(j->n, k->n);
		for (i = 0; i < j->n && i < k->n; i++)
			if (strcmp(j->items[i]->key, k->items[i]->key) != 0 ||
			    strcmp(val(j, j->items[i]->key), val(k, k->items[i]->key)) != 0) {
				ndiff++;
				T_EQ_STR(k->items[i]->key, "transparent_hugepage/khugepaged/defrag");
			}
		T_EQ_INT(ndiff, 1);
	}
	T_EQ_STR(val(k, "transparent_hugepage/khugepaged/defrag"), "0");
	ajson_free(k);
	mk("/sys/kernel/mm/transparent_hugepage/khugepaged/defrag", "1\n");
	ajson_free(j);
	buf_free(&t1);
	buf_free(&t2);
}

/* Past the caps: a value cut, keys dropped and counted, the whole bounded. */
/*
 * snapshot_prepare holds the /sys and /proc files open, and a snapshot
 * built with them is the same text, reads what a file says now, and reads
 * through the fd (a file moved away after prepare still reads; without
 * the held fds it is null). Nothing outside /sys and /proc is held.
 */
static void
test_prepare(void)
{
	static const char *const bins[] = { "/bin/sh", NULL };
	struct snapshot_opts o = { .root = root, .bins = bins, .run = fake_run };
	struct snapshot_held h;
	struct buf t0, t1;
	struct ajson *j;
	char sys[PATH_MAX], proc[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	size_t i, outside = 0, unsorted = 0;

	buf_init(&t0, BF_MAX_SNAPSHOT + 64);
	buf_init(&t1, BF_MAX_SNAPSHOT + 64);
	T_EQ_INT(snapshot_build(&o, &t0), 0);
	snapshot_prepare(&(struct snapshot_opts){ .root = root }, &h);
	T_CHECK(h.n > 20);
	snprintf(sys, sizeof(sys), "%s/sys/", root);
	snprintf(proc, sizeof(proc), "%s/proc/", root);
	for (i = 0; i < h.n; i++) {
		outside += strncmp(h.f[i].path, sys, strlen(sys)) != 0 &&
		    strncmp(h.f[i].path, proc, strlen(proc)) != 0;
		unsorted += i > 0 && strcmp(h.f[i - 1].path, h.f[i].path) > 0;
	}
	T_EQ_INT(outside, 0);
	T_EQ_INT(unsorted, 0);
	o.held = &h;
	T_EQ_INT(snapshot_build(&o, &t1), 0);
	T_CHECK(t0.len == t1.len && t0.data != NULL && t1.data != NULL &&
	    memcmp(t0.data, t1.data, t0.len) == 0);
	/* what the file says now, through the held fd */
	mk("/proc/sys/kernel/randomize_va_space", "0\n");
	snprintf(from, sizeof(from), "%s/proc/sys/kernel/randomize_va_space", root);
	snprintf(to, sizeof(to), "%s/proc/sys/kernel/randomize_va_space.moved", root);
	T_EQ_INT(rename(from, to), 0);
	buf_reset(&t1);
	T_EQ_INT(snapshot_build(&o, &t1), 0);
	T_CHECK(t1.data != NULL && ajson_parse(t1.data, t1.len, &j, NULL) == 0);
	T_EQ_STR(val(j, "kernel.randomize_va_space"), "0");
	ajson_free(j);
	/* not held: by path, which is gone */
	o.held = NULL;
	buf_reset(&t1);
	T_EQ_INT(snapshot_build(&o, &t1), 0);
	T_CHECK(t1.data != NULL && ajson_parse(t1.data, t1.len, &j, NULL) == 0);
	T_EQ_STR(val(j, "kernel.randomize_va_space"), "(null)");
	ajson_free(j);
	T_EQ_INT(rename(to, from), 0);
	mk("/proc/sys/kernel/randomize_va_space", "2\n");
	snapshot_held_free(&h);
	T_EQ_INT(h.n, 0);
	buf_free(&t0);
	buf_free(&t1);
}

static void
test_caps(void)
{
	static char big[3 * BF_MAX_SNAPSHOT_VALUE];
	char name[160];
	struct buf t;
	struct ajson *j;
	const char *d;
	int i;

	memset(big, 'x', sizeof(big) - 1);
	mk("/proc/sys/vm/zz_big", big);
	buf_init(&t, BF_MAX_SNAPSHOT + 64);
	j = build(NULL, &t);
	T_EQ_INT(strlen(val(j, "vm.zz_big")), BF_MAX_SNAPSHOT_VALUE);
	ajson_free(j);

	/* a value each of ~4 KiB: far more than BF_MAX_SNAPSHOT in all */
	memset(big, 'y', BF_MAX_SNAPSHOT_VALUE - 1);
	big[BF_MAX_SNAPSHOT_VALUE - 1] = '\0';
	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "/proc/sys/vm/zz_fill%02d", i);
		mk(name, big);
	}
	j = build(NULL, &t);
	T_CHECK(t.len <= BF_MAX_SNAPSHOT + 64);
	d = val(j, "~dropped");
	T_CHECK(strcmp(d, "(missing)") != 0 && d[0] >= '1' && d[0] <= '9');
	/* the keys kept are a prefix of the sorted order: an early one stays */
	T_EQ_STR(val(j, "cgroup.version"), "2");
	T_EQ_STR(val(j, "vm.zz_fill39"), "(missing)");
	ajson_free(j);
	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "%s/proc/sys/vm/zz_fill%02d", root, i);
		unlink(name);
	}
	snprintf(name, sizeof(name), "%s/proc/sys/vm/zz_big", root);
	unlink(name);

	/* more files than BF_MAX_SNAPSHOT_FILES reads: bounded, not fatal */
	for (i = 0; i < BF_MAX_SNAPSHOT_FILES + 100; i++) {
		snprintf(name, sizeof(name), "/proc/sys/vm/f%05d", i);
		mk(name, "1");
	}
	{
		struct snapshot_opts o = { .root = root };

		buf_reset(&t);
		T_EQ_INT(snapshot_build(&o, &t), 0);
		T_CHECK(t.len <= BF_MAX_SNAPSHOT + 64);
		T_CHECK(t.data != NULL && strstr(t.data, "\"~dropped\":\"") != NULL);
		T_CHECK(t.data != NULL && t.data[t.len - 1] == '}');
	}
	buf_free(&t);
}

static void
test_value(void)
{
	static const char *const v3[] = { "a", "a", "b" };
	static const char *const v2[] = { "a", "a" };
	static const long long idx3[] = { 0, 1, 2 }, gap[] = { 0, 2, 3 };
	char out[64];
	struct buf b;

	snapshot_value("always [madvise] never\n", 23, 1, out, sizeof(out));
	T_EQ_STR(out, "madvise");
	snapshot_value("always [madvise] never\n", 23, 0, out, sizeof(out));
	T_EQ_STR(out, "always [madvise] never");
	snapshot_value("  a\t\tb \n\n", 9, 0, out, sizeof(out));
	T_EQ_STR(out, "a b");
	snapshot_value("[a] [b]", 7, 1, out, sizeof(out));	/* two choices: not a choice file */
	T_EQ_STR(out, "[a] [b]");
	snapshot_value("x [] y", 6, 1, out, sizeof(out));
	T_EQ_STR(out, "x [] y");
	snapshot_value("[unclosed", 9, 1, out, sizeof(out));
	T_EQ_STR(out, "[unclosed");
	snapshot_value("a\0b", 3, 0, out, sizeof(out));
	T_EQ_STR(out, "a b");
	snapshot_value("abcdef", 6, 0, out, 4);
	T_EQ_STR(out, "abc");
	snapshot_value("", 0, 1, out, sizeof(out));
	T_EQ_STR(out, "");

	buf_init(&b, 256);
	T_EQ_INT(snapshot_summary(idx3, (char *const *)v2, 2, 2, &b), 0);
	T_EQ_STR(b.data, "a");
	buf_reset(&b);
	T_EQ_INT(snapshot_summary(idx3, (char *const *)v3, 3, 3, &b), 0);
	T_EQ_STR(b.data, "0-1:a,2:b");
	buf_reset(&b);
	T_EQ_INT(snapshot_summary(gap, (char *const *)v3, 3, 3, &b), 0);
	T_EQ_STR(b.data, "0:a,2:a,3:b");
	buf_reset(&b);	/* agreeing, but one of three lacks the file */
	T_EQ_INT(snapshot_summary(idx3, (char *const *)v2, 2, 3, &b), 0);
	T_EQ_STR(b.data, "0-1:a");
	buf_free(&b);
}

int
main(void)
{
	char cmd[128];

	if (mkdtemp(root) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	tree();
	test_value();
	test_tree();
	test_prepare();
	test_caps();
	T_CHECK(cmd_calls > 0 || access("/usr/bin/cc", X_OK) != 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (strncmp(root, "/tmp/bf-snapshot-", 17) == 0 && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return t_done();
}
