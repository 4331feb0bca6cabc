/*
 * agent_test_knobset.c: a step's knobs applied, read back, recorded and
 * restored against a fake sysfs root (knob_set_root): optional knobs a
 * machine lacks read back "absent", a missing non-optional one fails, the
 * C-state limit's files are put back as they were, SMT forced off is
 * refused before anything is written, and a hugetlb pool that the "kernel"
 * fills short of the request fails the step naming the pages asked and
 * obtained. The pool's kernel is a child process serving a FIFO in the
 * order the agent opens the file: asking a real kernel for more huge pages
 * than it can give would take all of this shared machine's free memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "knob.h"
#include "knobset.h"
#include "step.h"
#include "t.h"

static char root[] = "/tmp/bf-knobset-XXXXXX";

static void
put(const char *rel, const char *text)
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
get(const char *rel, char *out, size_t outsz)
{
	char path[512];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	out[0] = '\0';
	if ((f = fopen(path, "r")) != NULL) {
		n = fread(out, 1, outsz - 1, f);
		fclose(f);
	}
	out[n] = '\0';
	while (n > 0 && out[n - 1] == '\n')
		out[--n] = '\0';
}

/*
 * Parse step json, apply its knobs with stdout captured into line, and
 * return knobset_apply's result; *stp keeps the step for the caller.
 */
static int
apply(const char *json, struct step **stp, char *line, size_t linesz, struct bf_diag *d)
{
	char cap[] = "/tmp/bf-knobset-out-XXXXXX";
	int fd, saved, r;
	ssize_t n;

	*stp = NULL;
	line[0] = '\0';
	bf_diag_clear(d);
	if ((r = step_parse(json, strlen(json), stp, d)) != 0)
		return r;
	if ((fd = mkstemp(cap)) < 0)
		return BF_ERR_IO;
	fflush(stdout);
	saved = dup(1);
	dup2(fd, 1);
	r = knobset_apply(*stp, d);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	lseek(fd, 0, SEEK_SET);
	n = read(fd, line, linesz - 1);
	line[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(cap);
	return r;
}

#define STEP_HEAD "{\"run\":1,\"iterations\":1,\"timeout_s\":5,\"argv\":[\"true\"],"

static void
test_optional(void)
{
	char line[4096], v[64], p[512];
	struct step *st = NULL;
	struct bf_diag d;

	/* plain files: a fake bracket file would not show the new [choice] */
	put("/proc/sys/kernel/numa_balancing", "1\n");
	/* a machine without 16 KiB mTHP, without compaction */
	T_EQ_INT(apply(STEP_HEAD "\"knobs\":{\"numa_balancing\":0,\"mthp_16kB\":\"always\","
	    "\"compact_memory\":1},\"knobs_optional\":[\"mthp_16kB\",\"compact_memory\"]}",
	    &st, line, sizeof(line), &d), 0);
	T_CONTAINS(line, "\"before\":{\"numa_balancing\":\"1\",\"mthp_16kB\":\"absent\","
	    "\"compact_memory\":\"absent\"}");
	T_CONTAINS(line, "\"requested\":{\"numa_balancing\":\"0\",\"mthp_16kB\":\"always\","
	    "\"compact_memory\":\"1\"}");
	T_CONTAINS(line, "\"after\":{\"numa_balancing\":\"0\",\"mthp_16kB\":\"absent\","
	    "\"compact_memory\":\"absent\"}");
	T_CHECK(st != NULL && st->knobs[1].absent && !st->knobs[0].absent);
	/* an absent action is not done: the iterations would fail on it */
	T_EQ_INT(st != NULL ? st->compact_memory : -1, 0);
	T_EQ_INT(knobset_actions(st, &d), 0);
	get("/proc/sys/kernel/numa_balancing", v, sizeof(v));
	T_EQ_STR(v, "0");
	T_EQ_INT(knobset_restore(&d), 0);
	get("/proc/sys/kernel/numa_balancing", v, sizeof(v));
	T_EQ_STR(v, "1");
	step_free(st);

	/* a present action and a present optional knob are what they always are */
	put("/proc/sys/vm/compact_memory", "");
	put("/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs", "10000\n");
	T_EQ_INT(apply(STEP_HEAD "\"knobs\":{\"khugepaged_scan_sleep_ms\":0,"
	    "\"compact_memory\":1},\"knobs_optional\":[\"khugepaged_scan_sleep_ms\","
	    "\"compact_memory\"]}", &st, line, sizeof(line), &d), 0);
	T_CONTAINS(line, "\"after\":{\"khugepaged_scan_sleep_ms\":\"0\"}");
	T_EQ_INT(st != NULL ? st->compact_memory : -1, 1);
	T_EQ_INT(knobset_actions(st, &d), 0);
	get("/proc/sys/vm/compact_memory", v, sizeof(v));
	T_EQ_STR(v, "1");
	T_EQ_INT(knobset_restore(&d), 0);
	get("/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs", v, sizeof(v));
	T_EQ_STR(v, "10000");
	step_free(st);

	/* not optional: the missing knob fails before anything is written */
	put("/sys/kernel/mm/transparent_hugepage/hugepages-16kB/enabled",
	    "always inherit madvise [never]\n");
	T_EQ_INT(apply(STEP_HEAD "\"knobs\":{\"numa_balancing\":0,\"mthp_32kB\":\"always\"}}",
	    &st, line, sizeof(line), &d), BF_ERR_NOTFOUND);
	T_CONTAINS(d.msg, "knobs.mthp_32kB: cannot set \"always\": no such mTHP size 32kB on "
	    "this machine; available: 16kB");
	T_EQ_STR(line, "");
	get("/proc/sys/kernel/numa_balancing", v, sizeof(v));
	T_EQ_STR(v, "1");
	T_EQ_INT(knobset_restore(&d), 0);
	step_free(st);
	snprintf(p, sizeof(p), "%s/proc/sys/vm/compact_memory", root);
	unlink(p);
	T_EQ_INT(apply(STEP_HEAD "\"knobs\":{\"compact_memory\":1}}", &st, line, sizeof(line),
	    &d), BF_ERR_NOTFOUND);
	T_CONTAINS(d.msg, "knobs.compact_memory: cannot set \"1\": ");
	T_CONTAINS(d.msg, "/proc/sys/vm/compact_memory does not exist on this machine");
	step_free(st);

	/* knobs_optional names the step's knobs only */
	T_EQ_INT(apply(STEP_HEAD "\"knobs\":{\"numa_balancing\":0},"
	    "\"knobs_optional\":[\"mthp_16kB\"]}", &st, line, sizeof(line), &d), BF_ERR_INVALID);
	T_EQ_STR(d.field, "knobs_optional[0]");
	T_CONTAINS(d.msg, "\"mthp_16kB\" is not one of the step's knobs");
	T_EQ_INT(apply(STEP_HEAD "\"knobs_optional\":[3]}", &st, line, sizeof(line), &d),
	    BF_ERR_INVALID);
	T_EQ_STR(d.field, "knobs_optional[0]");
	T_EQ_INT(apply(STEP_HEAD "\"knobs_optional\":\"smt\"}", &st, line, sizeof(line), &d),
	    BF_ERR_INVALID);
}

static void
test_cpuidle_restore(void)
{
	static const char *const lat[] = { "0", "2", "10", "100" };
	char rel[128], line[4096], v[16];
	struct step *st = NULL;
	struct bf_diag d;
	int cpu, s;

	for (cpu = 0; cpu < 2; cpu++)
		for (s = 0; s < 4; s++) {
			snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/"
			    "latency", cpu, s);
			put(rel, lat[s]);
			snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/"
			    "disable", cpu, s);
			/* cpu1's state1 was disabled by hand: the limit enables it, restore not */
			put(rel, cpu == 1 && s == 1 ? "1\n" : "0\n");
		}
	T_EQ_INT(apply(STEP_HEAD "\"knobs\":{\"cpuidle_max_latency_us\":5}}", &st, line,
	    sizeof(line), &d), 0);
	T_CONTAINS(line, "\"before\":{\"cpuidle_max_latency_us\":\"mixed\"}");
	T_CONTAINS(line, "\"after\":{\"cpuidle_max_latency_us\":\"2..10\"}");
	get("/sys/devices/system/cpu/cpu1/cpuidle/state1/disable", v, sizeof(v));
	T_EQ_STR(v, "0");
	get("/sys/devices/system/cpu/cpu0/cpuidle/state3/disable", v, sizeof(v));
	T_EQ_STR(v, "1");
	T_EQ_INT(knobset_restore(&d), 0);
	for (cpu = 0; cpu < 2; cpu++)
		for (s = 0; s < 4; s++) {
			snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/"
			    "disable", cpu, s);
			get(rel, v, sizeof(v));
			T_EQ_STR(v, cpu == 1 && s == 1 ? "1" : "0");
		}
	step_free(st);
	/* the signal path replays the same list */
	T_EQ_INT(apply(STEP_HEAD "\"knobs\":{\"cpuidle_max_latency_us\":0}}", &st, line,
	    sizeof(line), &d), 0);
	get("/sys/devices/system/cpu/cpu0/cpuidle/state1/disable", v, sizeof(v));
	T_EQ_STR(v, "1");
	knobset_restore_signal();
	get("/sys/devices/system/cpu/cpu0/cpuidle/state1/disable", v, sizeof(v));
	T_EQ_STR(v, "0");
	get("/sys/devices/system/cpu/cpu1/cpuidle/state1/disable", v, sizeof(v));
	T_EQ_STR(v, "1");
	step_free(st);
}

static void
test_smt(void)
{
	char line[4096], v[16];
	struct step *st = NULL;
	struct bf_diag d;

	put("/sys/devices/system/cpu/smt/control", "forceoff\n");
	put("/sys/devices/system/cpu/smt/active", "0\n");
	/* off is what it is: nothing to write, and it reads back */
	T_EQ_INT(apply(STEP_HEAD "\"knobs\":{\"smt\":\"off\"}}", &st, line, sizeof(line), &d), 0);
	T_CONTAINS(line, "\"after\":{\"smt\":\"off\"}");
	step_free(st);
	T_EQ_INT(apply(STEP_HEAD "\"knobs\":{\"smt\":\"on\"}}", &st, line, sizeof(line), &d),
	    BF_ERR_STATE);
	T_CONTAINS(d.msg, "knobs.smt: cannot set \"on\": SMT was forced off at boot");
	get("/sys/devices/system/cpu/smt/control", v, sizeof(v));
	T_EQ_STR(v, "forceoff");
	/* nothing was saved, so restoring writes nothing back */
	T_EQ_INT(knobset_restore(&d), 0);
	get("/sys/devices/system/cpu/smt/control", v, sizeof(v));
	T_EQ_STR(v, "forceoff");
	step_free(st);
	/* switchable, but the siblings do not come up: the read-back says so */
	put("/sys/devices/system/cpu/smt/control", "off\n");
	T_EQ_INT(apply(STEP_HEAD "\"knobs\":{\"smt\":\"on\"}}", &st, line, sizeof(line), &d),
	    BF_ERR_STATE);
	T_CONTAINS(d.msg, "knobs.smt: set to \"on\" but reads back \"off\"");
	get("/sys/devices/system/cpu/smt/control", v, sizeof(v));
	T_EQ_STR(v, "on");
	T_EQ_INT(knobset_restore(&d), 0);
	get("/sys/devices/system/cpu/smt/control", v, sizeof(v));
	T_EQ_STR(v, "off");
	step_free(st);
}

/*
 * The pool's "kernel": serve each open of the FIFO in turn. 'w' hands the
 * reader text; 'r' takes what the agent writes and reports it on out. A
 * pause after each open lets the agent close its end first, or the next
 * writer would join the same read.
 */
static void
pool_kernel(const char *fifo, const char *const *script, int out)
{
	char buf[64];
	size_t i, len;
	ssize_t n;
	int fd;

	alarm(20);
	for (i = 0; script[i] != NULL; i++) {
		if (script[i][0] == 'w') {
			if ((fd = open(fifo, O_WRONLY)) < 0)
				_exit(2);
			n = write(fd, script[i] + 1, strlen(script[i] + 1));
			close(fd);
		} else {
			if ((fd = open(fifo, O_RDONLY)) < 0)
				_exit(3);
			len = 0;
			while (len < sizeof(buf) - 2 &&
			    (n = read(fd, buf + len, sizeof(buf) - 2 - len)) > 0)
				len += (size_t)n;
			close(fd);
			buf[len++] = '\n';
			if (write(out, buf, len) < 0)
				_exit(4);
		}
		(void)n;
		usleep(200 * 1000);
	}
	_exit(0);
}

static void
test_pool_shortfall(void)
{
	/* before, saved for undo, the request, the pool obtained, the restore */
	static const char *const script[] = { "w0\n", "w0\n", "r", "w100\n", "r", NULL };
	char fifo[512], line[4096], got[128];
	struct step *st = NULL;
	struct bf_diag d;
	int p[2], status;
	ssize_t n;
	pid_t pid;

	put("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "0\n");
	snprintf(fifo, sizeof(fifo), "%s/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
	    root);
	T_OK(mkfifo(fifo, 0600));
	T_OK(pipe(p));
	if ((pid = fork()) == 0) {
		close(p[0]);
		pool_kernel(fifo, script, p[1]);
	}
	close(p[1]);
	T_EQ_INT(apply(STEP_HEAD "\"knobs\":{\"nr_hugepages_2048kB\":512}}", &st, line,
	    sizeof(line), &d), BF_ERR_STATE);
	/* recorded as obtained, and the run fails naming the shortfall */
	T_CONTAINS(line, "\"after\":{\"nr_hugepages_2048kB\":\"100\"}");
	T_CONTAINS(d.msg, "knobs.nr_hugepages_2048kB: asked for 512 pages, the kernel gave 100 "
	    "(412 short");
	T_EQ_INT(knobset_restore(&d), 0);
	T_EQ_INT(waitpid(pid, &status, 0), pid);
	T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* what the "kernel" was asked: the pool, then the pool as it was */
	n = read(p[0], got, sizeof(got) - 1);
	got[n > 0 ? n : 0] = '\0';
	close(p[0]);
	T_EQ_STR(got, "512\n0\n");
	step_free(st);
	unlink(fifo);
}

int
main(void)
{
	char cmd[600];

	if (mkdtemp(root) == NULL) {
		T_CHECK(0);
		return t_done();
	}
	T_EQ_INT(knob_set_root(root), 0);
	test_optional();
	test_cpuidle_restore();
	test_smt();
	test_pool_shortfall();
	T_EQ_INT(knob_set_root(""), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	T_EQ_INT(system(cmd), 0);
	return t_done();
}
