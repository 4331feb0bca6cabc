/*
 * agent_test_counters.c: the counters of one iteration. Parsers and deltas
 * on fake /proc and /sys files in a mktemp tree (cgroup v1 and v2); PMU
 * software events counted inside the window only: a child that faults N
 * pages before the window and M inside (by ioctl, and by enable_on_exec
 * with a grandchild, as the agent does); and the agent itself printing a
 * snapshot line and a counters line per iteration.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "counters.h"
#include "ajson.h"
#include "parse.h"
#include "t.h"
#include "agent_fixture.h"

#define PAGE		4096
#define BEFORE_PAGES	20000	/* N: faulted before the window opens */
#define INSIDE_PAGES	3000	/* M: faulted inside it */

static char root[64] = "/tmp/bf-counters-XXXXXX";
static char self[PATH_MAX];

#define mk(path, text) fix_mk(root, (path), (text))

/* Touch n fresh pages, one fault each (no THP, whatever the machine's mode). */
static void
touch(size_t n)
{
	volatile char *m = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (m == MAP_FAILED)
		_exit(3);
	(void)madvise((void *)m, n * PAGE, MADV_NOHUGEPAGE);
	for (i = 0; i < n; i++)
		m[i * PAGE] = 1;
}

/* The exec'd side: half the pages here, half in a child (inherit). */
static int
fault_child(const char *arg)
{
	int64_t n;
	pid_t p;
	int st;

	if (parse_i64(arg, 0, 1 << 20, &n) != 0)
		return 2;
	if ((p = fork()) == 0) {
		touch((size_t)n / 2);
		_exit(0);
	}
	touch((size_t)n - (size_t)n / 2);
	if (p < 0 || waitpid(p, &st, 0) != p)
		return 4;
	return 0;
}

static const struct ajson *
mget(const struct ajson *line, const char *obj, const char *key)
{
	const struct ajson *o = ajson_get(line, obj);

	return o != NULL ? ajson_get(o, key) : NULL;
}

static struct ajson *
line_of(const struct counters *c, int64_t it)
{
	struct ajson *j = NULL;
	struct buf b;

	buf_init(&b, BF_MAX_COUNTERS_LINE);
	T_EQ_INT(counters_line(c, it, &b), 0);
	T_CHECK(b.data != NULL && ajson_parse(b.data, b.len, &j, NULL) == 0);
	if (j == NULL && b.data != NULL)
		fprintf(stderr, "bad counters line: %.300s\n", b.data);
	buf_free(&b);
	return j;
}

/* The page-faults count, or -1 when the event was not counted. */
static long long
faults_of(const struct ajson *j)
{
	const struct ajson *v = mget(j, "metrics", "pmu.page-faults");

	if (v == NULL) {
		v = mget(j, "unsupported", "pmu.page-faults");
		fprintf(stderr, "page-faults not counted: %s\n", v != NULL && v->str ? v->str : "?");
		return -1;
	}
	return (long long)v->num;
}

static void
test_parse(void)
{
	static const char vm[] = "nr_free_pages 100\nthp_fault_alloc 7\nbad\n x 1\n"
	    "neg -5\nspace  3\nover 99999999999999999999\npgfault 12\n";
	static const char smaps[] = "55d0-7ffd ---p 00000000 00:00 0 [rollup]\nRss: 10 kB\n"
	    "AnonHugePages:      4096 kB\nShmemHugePages: 0 kB\n";
	struct counters_list l = { .max = 4 };
	uint64_t cfg;
	int found;

	counters_parse(vm, strlen(vm), "vmstat.", &l);
	T_EQ_INT(l.n, 4);
	T_EQ_INT(l.dropped, 0);
	T_EQ_INT(counters_get(&l, "vmstat.thp_fault_alloc", &found), 7);
	T_EQ_INT(found, 1);
	T_EQ_INT(counters_get(&l, "vmstat.neg", &found), -5);
	T_EQ_INT(counters_get(&l, "vmstat.pgfault", &found), 12);
	(void)counters_get(&l, "vmstat.bad", &found);
	T_EQ_INT(found, 0);
	(void)counters_get(&l, "vmstat.over", &found);
	T_EQ_INT(found, 0);
	free(l.kv);
	memset(&l, 0, sizeof(l));
	l.max = 2;	/* the cap: the rest is counted, not kept */
	counters_parse(vm, strlen(vm), "", &l);
	T_EQ_INT(l.n, 2);
	T_EQ_INT(l.dropped, 2);
	free(l.kv);
	memset(&l, 0, sizeof(l));
	l.max = 4;
	counters_parse(vm, 20, "", &l);	/* cut mid-line */
	T_EQ_INT(l.n, 1);
	counters_parse("", 0, "", &l);
	T_EQ_INT(l.n, 1);
	free(l.kv);

	T_EQ_INT(counters_anon_huge_kb(smaps, strlen(smaps)), 4096);
	T_EQ_INT(counters_anon_huge_kb("Rss: 1 kB\n", 10), -1);
	T_EQ_INT(counters_anon_huge_kb(smaps, 60), -1);

	T_EQ_INT(counters_raw_config("r0108", &cfg), 0);
	T_EQ_INT(cfg, 0x108);
	T_EQ_INT(counters_raw_config("rFFffffffffffffff", &cfg), 0);
	T_CHECK(cfg == UINT64_MAX);
	T_CHECK(counters_raw_config("r", &cfg) != 0);
	T_CHECK(counters_raw_config("x0108", &cfg) != 0);
	T_CHECK(counters_raw_config("r01g8", &cfg) != 0);
	T_CHECK(counters_raw_config("r00000000000000001", &cfg) != 0);	/* 17 digits */
	T_CHECK(counters_raw_config("", &cfg) != 0);
}

/* A service's AnonHugePages: summed over its process group (work serve's
 * instances share the group of the wrapper, which holds no memory), from
 * /proc/PID/stat's pgrp however odd the comm. */
static void
test_service_group(void)
{
	struct counters c;
	struct ajson *j;
	const struct ajson *v;

	T_EQ_INT(counters_pgrp("10 (redis-server) S 1 10 10 0", 29), 10);
	T_EQ_INT(counters_pgrp("11 (a) b (c)) S 10 77 77 0", 26), 77);
	T_EQ_INT(counters_pgrp("12 (x) S 1", 10), -1);
	T_EQ_INT(counters_pgrp("12 x S 1 5", 10), -1);
	mk("/proc/40/stat", "40 (benchfleet-ag) S 1 40 40 0\n");
	mk("/proc/40/smaps_rollup", "Rss: 100 kB\nAnonHugePages:        0 kB\n");
	mk("/proc/41/stat", "41 (redis-server) S 40 40 40 0\n");
	mk("/proc/41/smaps_rollup", "Rss: 9000 kB\nAnonHugePages:     2048 kB\n");
	mk("/proc/42/stat", "42 (a) b (c)) S 40 40 40 0\n");
	mk("/proc/42/smaps_rollup", "Rss: 9000 kB\nAnonHugePages:     4096 kB\n");
	mk("/proc/43/stat", "43 (other) S 1 43 43 0\n");
	mk("/proc/43/smaps_rollup", "Rss: 9000 kB\nAnonHugePages:     8192 kB\n");
	mk("/proc/44/stat", "44 (gone) S 40 40 40 0\n");	/* exited: no smaps */
	counters_init(&c, root);
	counters_before(&c);
	counters_after(&c, (pid_t[]){ 40, 43, 99 }, 3);
	j = line_of(&c, 0);
	v = mget(j, "metrics", "smaps.service0.AnonHugePages_kb");
	T_EQ_INT(v ? v->i : -1, 6144);
	v = mget(j, "metrics", "smaps.service1.AnonHugePages_kb");
	T_EQ_INT(v ? v->i : -1, 8192);
	/* a service with no process left: unreadable, said so */
	T_CHECK(mget(j, "metrics", "smaps.service2.AnonHugePages_kb") == NULL);
	T_CHECK(mget(j, "unsupported", "smaps.service2.AnonHugePages_kb") != NULL);
	ajson_free(j);
	counters_free(&c);
}

/* vmstat, mTHP and cgroup v2 deltas from a fake tree, then cgroup v1. */
static void
test_tree(void)
{
	struct counters c;
	struct ajson *j;
	const struct ajson *v;
	char path[PATH_MAX];

	mk("/proc/vmstat", "nr_free_pages 1000\npgfault 500\nthp_fault_alloc 10\n"
	    "thp_fault_fallback 4\npgsteal_kswapd 9\nnuma_hint_faults 3\n");
	mk("/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats/anon_fault_alloc", "1\n");
	mk("/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats/split", "0\n");
	mk("/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/stats/anon_fault_alloc", "2\n");
	mk("/sys/fs/cgroup/cgroup.controllers", "memory\n");
	mk("/proc/self/cgroup", "0::/bench.scope\n");
	mk("/sys/fs/cgroup/bench.scope/memory.stat", "anon 4096\nthp_fault_alloc 1\nfile 7\n");
	mk("/sys/fs/cgroup/bench.scope/memory.peak", "999\n");

	counters_init(&c, root);
	counters_before(&c);
	mk("/proc/vmstat", "nr_free_pages 800\npgfault 4500\nthp_fault_alloc 16390\n"
	    "thp_fault_fallback 4\npgsteal_kswapd 9\nnuma_hint_faults 3\nnew_field 5\n");
	mk("/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats/anon_fault_alloc", "101\n");
	mk("/sys/fs/cgroup/bench.scope/memory.stat", "anon 8192\nthp_fault_alloc 1\nfile 7\n");
	mk("/sys/fs/cgroup/bench.scope/memory.peak", "123456\n");
	counters_after(&c, NULL, 0);
	j = line_of(&c, 3);
	T_EQ_STR(ajson_get(j, "type") ? ajson_get(j, "type")->str : "", "counters");
	T_EQ_INT(ajson_get(j, "iteration") ? ajson_get(j, "iteration")->i : -1, 3);
	v = mget(j, "metrics", "vmstat.thp_fault_alloc");
	T_EQ_INT(v ? v->i : -1, 16380);
	v = mget(j, "metrics", "vmstat.pgfault");
	T_EQ_INT(v ? v->i : -1, 4000);
	v = mget(j, "metrics", "vmstat.nr_free_pages");
	T_EQ_INT(v ? v->i : 0, -200);
	/* unchanged: only the THP/NUMA/fault fields are there as 0 */
	v = mget(j, "metrics", "vmstat.thp_fault_fallback");
	T_EQ_INT(v ? v->i : -1, 0);
	v = mget(j, "metrics", "vmstat.numa_hint_faults");
	T_EQ_INT(v ? v->i : -1, 0);
	T_CHECK(mget(j, "metrics", "vmstat.pgsteal_kswapd") == NULL);
	T_CHECK(mget(j, "metrics", "vmstat.new_field") == NULL);	/* no before value */
	v = mget(j, "metrics", "hugepages-64kB.anon_fault_alloc");
	T_EQ_INT(v ? v->i : -1, 100);
	v = mget(j, "metrics", "hugepages-2048kB.anon_fault_alloc");
	T_EQ_INT(v ? v->i : -1, 0);
	T_CHECK(mget(j, "metrics", "hugepages-64kB.split") == NULL);
	v = mget(j, "metrics", "cgroup.memory.peak");
	T_EQ_INT(v ? v->i : -1, 123456);
	v = mget(j, "metrics", "cgroup.memory.stat.anon");
	T_EQ_INT(v ? v->i : -1, 4096);
	v = mget(j, "metrics", "cgroup.memory.stat.thp_fault_alloc");
	T_EQ_INT(v ? v->i : -1, 0);
	T_CHECK(mget(j, "metrics", "cgroup.memory.stat.file") == NULL);
	T_CHECK(mget(j, "unsupported", "cgroup") == NULL);
	/* never attached: every event says why, none is a 0 */
	T_CHECK(mget(j, "metrics", "pmu.context-switches") == NULL);
	v = mget(j, "unsupported", "pmu.context-switches");
	T_CHECK(v != NULL && v->type == AJSON_STR);
	/* page-faults is not a default event (counting it slows faults); no
	 * rusage was given, so no rusage field either */
	T_CHECK(mget(j, "unsupported", "pmu.page-faults") == NULL);
	T_CHECK(mget(j, "metrics", "pmu.page-faults") == NULL);
	T_CHECK(mget(j, "metrics", "rusage.minflt") == NULL);
	ajson_free(j);
	counters_free(&c);

	/* cgroup v1: said so */
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/cgroup.controllers", root);
	T_EQ_INT(unlink(path), 0);
	counters_init(&c, root);
	counters_before(&c);
	counters_after(&c, NULL, 0);
	j = line_of(&c, 0);
	v = mget(j, "unsupported", "cgroup");
	T_EQ_STR(v ? v->str : "", "absent: cgroup v1");
	T_CHECK(mget(j, "metrics", "cgroup.memory.peak") == NULL);
	ajson_free(j);
	counters_free(&c);

	/* no /proc/vmstat at all */
	snprintf(path, sizeof(path), "%s/proc/vmstat", root);
	T_EQ_INT(unlink(path), 0);
	counters_init(&c, root);
	counters_before(&c);
	counters_after(&c, NULL, 0);
	j = line_of(&c, 0);
	T_CHECK(mget(j, "unsupported", "vmstat") != NULL);
	ajson_free(j);
	counters_free(&c);
}

/*
 * counters_prepare opens what the window reads before the step: once the
 * files are open, they are read through those fds. Moving the trees away
 * after prepare shows it: by path, nothing would be found.
 */
static void
test_prepare(void)
{
	static const char *const thp = "/sys/kernel/mm/transparent_hugepage";
	struct counters c;
	struct ajson *j;
	const struct ajson *v;
	char from[PATH_MAX], to[PATH_MAX];
	int pass;

	for (pass = 0; pass < 2; pass++) {
		mk("/proc/vmstat", "pgfault 500\nthp_fault_alloc 10\n");
		mk("/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats/anon_fault_alloc",
		    "1\n");
		counters_init(&c, root);
		if (pass == 0) {
			counters_prepare(&c);
			/* the dummy event that keeps perf's scheduler hooks on
			 * (software events work here: test_window_* use them) */
			T_CHECK(c.hold_fd >= 0);
		}
		snprintf(from, sizeof(from), "%s%s", root, thp);
		snprintf(to, sizeof(to), "%s%s.moved", root, thp);
		T_EQ_INT(rename(from, to), 0);
		snprintf(from, sizeof(from), "%s/proc/vmstat", root);
		snprintf(to, sizeof(to), "%s/proc/vmstat.moved", root);
		T_EQ_INT(rename(from, to), 0);
		counters_before(&c);
		mk("/proc/vmstat.moved", "pgfault 800\nthp_fault_alloc 13\n");
		mk("/sys/kernel/mm/transparent_hugepage.moved/hugepages-64kB/stats/"
		    "anon_fault_alloc", "6\n");
		counters_after(&c, NULL, 0);
		j = line_of(&c, 0);
		if (pass == 0) {
			v = mget(j, "metrics", "vmstat.pgfault");
			T_EQ_INT(v ? v->i : -1, 300);
			v = mget(j, "metrics", "hugepages-64kB.anon_fault_alloc");
			T_EQ_INT(v ? v->i : -1, 5);
		} else {
			/* not prepared: the window looked for them by path */
			T_CHECK(mget(j, "metrics", "vmstat.pgfault") == NULL);
			T_CHECK(mget(j, "metrics", "hugepages-64kB.anon_fault_alloc") == NULL);
		}
		ajson_free(j);
		counters_free(&c);
		T_EQ_INT(c.hold_fd, -1);
		snprintf(from, sizeof(from), "rm -rf '%s%s.moved' '%s/proc/vmstat.moved'", root,
		    thp, root);
		T_EQ_INT(system(from), 0);
	}
}

static int
wait_byte(int fd)
{
	char ch;
	ssize_t n;

	while ((n = read(fd, &ch, 1)) < 0 && errno == EINTR)
		;
	return n == 1 ? 0 : -1;
}

/* Hardware events: a number that is not 0, or unsupported with an errno. */
static void
check_hw(const struct ajson *j)
{
	static const char *const hw[] = { "pmu.cycles", "pmu.instructions",
		"pmu.dTLB-load-misses", "pmu.iTLB-load-misses", NULL };
	const struct ajson *v, *u;
	size_t i;

	for (i = 0; hw[i] != NULL; i++) {
		v = mget(j, "metrics", hw[i]);
		u = mget(j, "unsupported", hw[i]);
		T_CHECK((v == NULL) != (u == NULL));
		if (u != NULL)
			T_CONTAINS(u->str, "errno");
		if (v != NULL && strcmp(hw[i], "pmu.cycles") == 0)
			T_CHECK(v->num > 0);
	}
}

/* The window by ioctl: N faults before enable, M inside, more after disable. */
static void
test_window_ioctl(void)
{
	int up[2], down[2];
	struct counters c;
	struct ajson *j;
	long long pf;
	pid_t pid;
	int st;

	T_EQ_INT(pipe(up), 0);
	T_EQ_INT(pipe(down), 0);
	if ((pid = fork()) == 0) {
		close(up[0]);
		close(down[1]);
		touch(BEFORE_PAGES);
		if (write(up[1], "r", 1) != 1 || wait_byte(down[0]) != 0)
			_exit(5);
		touch(INSIDE_PAGES);
		if (write(up[1], "d", 1) != 1 || wait_byte(down[0]) != 0)
			_exit(5);
		touch(BEFORE_PAGES);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	T_EQ_INT(wait_byte(up[0]), 0);
	counters_init(&c, "");
	T_EQ_INT(counters_add_named(&c, "page-faults"), 0);
	T_EQ_INT(counters_add_named(&c, "no-such-event"), BF_ERR_NOTFOUND);
	counters_before(&c);
	counters_attach(&c, pid, 0);
	counters_enable(&c);
	T_EQ_INT(write(down[1], "g", 1), 1);
	T_EQ_INT(wait_byte(up[0]), 0);
	counters_disable(&c);
	T_EQ_INT(write(down[1], "e", 1), 1);
	T_EQ_INT(waitpid(pid, &st, 0), pid);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	counters_after(&c, NULL, 0);
	j = line_of(&c, 0);
	pf = faults_of(j);
	fprintf(stderr, "ioctl window: %lld page faults for %d pages inside, %d outside\n",
	    pf, INSIDE_PAGES, 2 * BEFORE_PAGES);
	T_CHECK(pf >= INSIDE_PAGES && pf <= INSIDE_PAGES + 64);
	T_CHECK(mget(j, "metrics", "pmu.context-switches") != NULL);
	check_hw(j);
	ajson_free(j);
	counters_free(&c);
	close(up[0]);
	close(down[1]);
}

/* enable_on_exec: N faults before the exec, M after it, half of them in a
 * grandchild (inherit). */
static void
test_window_exec(void)
{
	char arg[16];
	int up[2], down[2];
	struct counters c;
	struct ajson *j;
	long long pf;
	pid_t pid;
	int st;

	snprintf(arg, sizeof(arg), "%d", INSIDE_PAGES);
	T_EQ_INT(pipe(up), 0);
	T_EQ_INT(pipe2(down, O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		close(up[0]);
		close(down[1]);
		touch(BEFORE_PAGES);
		if (write(up[1], "r", 1) != 1 || wait_byte(down[0]) != 0)
			_exit(5);
		execl(self, self, "--fault-child", arg, (char *)NULL);
		_exit(6);
	}
	close(up[1]);
	close(down[0]);
	T_EQ_INT(wait_byte(up[0]), 0);
	counters_init(&c, "");
	T_EQ_INT(counters_add_named(&c, "page-faults"), 0);
	T_EQ_INT(counters_add_named(&c, "no-such-event"), BF_ERR_NOTFOUND);
	counters_before(&c);
	counters_attach(&c, pid, 1);
	T_EQ_INT(write(down[1], "g", 1), 1);
	T_EQ_INT(waitpid(pid, &st, 0), pid);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	counters_after(&c, NULL, 0);
	j = line_of(&c, 0);
	pf = faults_of(j);
	/* the exec'd binary's own start (loader, libc) is inside: a few hundred */
	fprintf(stderr, "exec window: %lld page faults for %d pages inside, %d before\n",
	    pf, INSIDE_PAGES, BEFORE_PAGES);
	T_CHECK(pf >= INSIDE_PAGES && pf <= INSIDE_PAGES + 1500);
	ajson_free(j);
	counters_free(&c);
	close(up[0]);
	close(down[1]);
}

/* The agent's lines: snapshot once, after knobs and before the first
 * iteration; counters after each iteration line; page-faults from exec. */
static void
test_agent(const char *agent)
{
	char step[PATH_MAX + 512];
	int st, nsnap = 0, nit = 0, nctr = 0, last_it = -1;
	struct buf raw;
	char *p, *nl;

	snprintf(step, sizeof(step), "{\"run\":1,\"argv\":[\"%s\",\"--fault-child\",\"%d\"],"
	    "\"iterations\":2,\"warmup\":1,\"timeout_s\":60,\"pmu\":{\"walk_active\":\"r0108\"}}",
	    self, INSIDE_PAGES);
	buf_init(&raw, 0);
	st = fix_agent_step(agent, step, &raw);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (p = raw.data; p != NULL && (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		struct ajson *j = NULL;
		const struct ajson *t, *v;

		T_EQ_INT(ajson_parse(p, (size_t)(nl - p), &j, NULL), 0);
		t = j != NULL ? ajson_get(j, "type") : NULL;
		if (t == NULL || t->type != AJSON_STR) {
			ajson_free(j);
			continue;
		}
		if (strcmp(t->str, "snapshot") == 0) {
			nsnap++;
			T_EQ_INT(nit, 0);
			v = ajson_get(j, "sha256");
			T_CHECK(v != NULL && v->type == AJSON_STR && v->len == 64);
			v = ajson_get(j, "snapshot");
			T_CHECK(v != NULL && v->type == AJSON_OBJ &&
			    ajson_get(v, "transparent_hugepage/enabled") != NULL);
		} else if (strcmp(t->str, "iteration") == 0) {
			nit++;
			v = ajson_get(j, "iteration");
			last_it = v != NULL ? (int)v->i : -2;
		} else if (strcmp(t->str, "counters") == 0) {
			const struct ajson *mf = mget(j, "metrics", "rusage.minflt");
			long long pf = mf != NULL ? (long long)mf->i : -1;

			nctr++;
			v = ajson_get(j, "iteration");
			T_EQ_INT(v != NULL ? v->i : -1, last_it);
			T_EQ_INT(nctr, nit);
			fprintf(stderr, "agent: iteration %d: %lld page faults for %d pages\n",
			    last_it, pf, INSIDE_PAGES);
			T_CHECK(pf >= INSIDE_PAGES && pf <= INSIDE_PAGES + 1500);
			T_CHECK(mget(j, "metrics", "rusage.majflt") != NULL);
			/* not opened by the agent: it would slow the faults it counts */
			T_CHECK(mget(j, "metrics", "pmu.page-faults") == NULL &&
			    mget(j, "unsupported", "pmu.page-faults") == NULL);
			T_CHECK(mget(j, "metrics", "vmstat.pgfault") != NULL);
			/* the named raw event: counted or unsupported, never absent */
			T_CHECK((mget(j, "metrics", "pmu.walk_active") != NULL) !=
			    (mget(j, "unsupported", "pmu.walk_active") != NULL));
			check_hw(j);
		}
		ajson_free(j);
	}
	T_EQ_INT(nsnap, 1);
	T_EQ_INT(nit, 3);
	T_EQ_INT(nctr, 3);
	buf_free(&raw);

	/* a bad raw event is refused before anything runs */
	snprintf(step, sizeof(step), "{\"run\":1,\"argv\":[\"true\"],\"iterations\":1,"
	    "\"timeout_s\":5,\"pmu\":{\"walk\":\"0108\"}}");
	buf_init(&raw, 0);
	st = fix_agent_step(agent, step, &raw);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	T_CONTAINS(raw.data, "\"pmu: \\\"walk\\\": expected");
	T_CHECK(raw.data == NULL || strstr(raw.data, "\"type\":\"snapshot\"") == NULL);
	buf_free(&raw);
}

/*
 * More mTHP stat files than are held open (COUNTERS_MAX_HELD): every one is
 * read again after the window, the held ones by pread, the rest by path,
 * and a second iteration with the same counters sees its own deltas.
 */
static void
test_mthp_many(void)
{
	enum { SIZES = 20, FIELDS = 15 };
	struct counters c;
	struct ajson *j;
	const struct ajson *m, *v;
	char path[PATH_MAX], val[32];
	size_t i, k, n, bad;
	int it;

	T_CHECK(SIZES * FIELDS > COUNTERS_MAX_HELD);
	for (i = 0; i < SIZES; i++)
		for (k = 0; k < FIELDS; k++) {
			snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/"
			    "hugepages-%zukB/stats/f%02zu", (size_t)4 << i, k);
			mk(path, "7\n");
		}
	counters_init(&c, root);
	for (it = 1; it <= 2; it++) {
		counters_before(&c);
		for (i = 0; i < SIZES; i++)
			for (k = 0; k < FIELDS; k++) {
				snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/"
				    "hugepages-%zukB/stats/f%02zu", (size_t)4 << i, k);
				/* iteration 1: +i*100+k+1; iteration 2: back by 1 */
				snprintf(val, sizeof(val), "%zu\n", it == 1 ? 7 + i * 100 + k + 1 :
				    7 + i * 100 + k);
				mk(path, val);
			}
		counters_after(&c, NULL, 0);
		j = line_of(&c, it);
		m = j != NULL ? ajson_get(j, "metrics") : NULL;
		n = bad = 0;
		for (i = 0; m != NULL && i < SIZES; i++)
			for (k = 0; k < FIELDS; k++) {
				snprintf(path, sizeof(path), "hugepages-%zukB.f%02zu", (size_t)4 << i, k);
				v = ajson_get(m, path);
				n += v != NULL;
				if (v == NULL || v->i != (it == 1 ? (int64_t)(i * 100 + k + 1) : -1))
					bad++;
			}
		T_EQ_INT(n, SIZES * FIELDS);
		T_EQ_INT(bad, 0);
		ajson_free(j);
	}
	counters_free(&c);
	for (i = 0; i < SIZES; i++) {
		snprintf(path, sizeof(path), "rm -rf '%s/sys/kernel/mm/transparent_hugepage/"
		    "hugepages-%zukB'", root, (size_t)4 << i);
		T_EQ_INT(system(path), 0);
	}
}

int
main(int argc, char **argv)
{
	const char *agent = getenv("BF_AGENT");
	char cmd[128];
	ssize_t n;

	if (argc == 3 && strcmp(argv[1], "--fault-child") == 0)
		return fault_child(argv[2]);
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0) {
		perror("readlink");
		return 1;
	}
	self[n] = '\0';
	if (mkdtemp(root) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_parse();
	test_tree();
	test_prepare();
	test_mthp_many();
	test_service_group();
	test_window_ioctl();
	test_window_exec();
	if (agent != NULL)
		test_agent(agent);
	else {
		fprintf(stderr, "BF_AGENT must name the built benchfleet-agent\n");
		t_fails++;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (strncmp(root, "/tmp/bf-counters-", 17) == 0 && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return t_done();
}
