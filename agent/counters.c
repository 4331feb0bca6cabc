/*
 * counters.c: the evidence of one iteration. Everything but the PMU is
 * read before and after the window and given as deltas; the PMU events are
 * opened on the workload before its exec (it waits for us in exec.c) with
 * enable_on_exec and inherit, so they count the workload and its children
 * from the exec to their exit, and nothing of the agent. An event the
 * machine cannot count (no PMU under TCG, EACCES) is "unsupported" with its
 * errno, never a 0.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "counters.h"
#include "emit.h"
#include "err.h"
#include "ajson.h"
#include "parse.h"

#define COUNTERS_MAX_FILE	(256 * 1024)	/* /proc/vmstat is ~5 KiB, memory.stat ~2 */
#define COUNTERS_MAX_CG		256		/* memory.stat fields */
#define COUNTERS_THP		"/sys/kernel/mm/transparent_hugepage"

struct counters_default {
	const char *name;
	uint32_t type;
	uint64_t config;
};

#define COUNTERS_CACHE(id) ((uint64_t)(id) | ((uint64_t)PERF_COUNT_HW_CACHE_OP_READ << 8) | \
	((uint64_t)PERF_COUNT_HW_CACHE_RESULT_MISS << 16))

static const struct counters_default counters_defaults[] = {
	{ .name = "cycles", .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES },
	{ .name = "instructions", .type = PERF_TYPE_HARDWARE,
	  .config = PERF_COUNT_HW_INSTRUCTIONS },
	{ .name = "dTLB-load-misses", .type = PERF_TYPE_HW_CACHE,
	  .config = COUNTERS_CACHE(PERF_COUNT_HW_CACHE_DTLB) },
	{ .name = "iTLB-load-misses", .type = PERF_TYPE_HW_CACHE,
	  .config = COUNTERS_CACHE(PERF_COUNT_HW_CACHE_ITLB) },
	{ .name = "context-switches", .type = PERF_TYPE_SOFTWARE,
	  .config = PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ .name = "cpu-migrations", .type = PERF_TYPE_SOFTWARE,
	  .config = PERF_COUNT_SW_CPU_MIGRATIONS },
};

/*
 * Events a caller may add by name (counters_add_named), not opened by
 * default. page-faults is here because counting it costs: the software
 * event runs on every fault, and it made page-touch 4.6% [2.9, 6.3]
 * slower (150 runs a side, 2026-12-06, bench/ANALYSIS.md). The step's
 * fault counts come from the workload's rusage instead (rusage.minflt).
 */
static const struct counters_default counters_named[] = {
	{ .name = "page-faults", .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS },
};

/* Fields printed even when their delta is 0, so that "no huge page was
 * allocated" is a 0 and not an absence; the rest only when they moved. */
static const char *const counters_always[] = {
	"vmstat.thp_", "vmstat.numa_", "vmstat.compact_", "vmstat.pgfault",
	"vmstat.pgmajfault", "vmstat.pgmigrate_", "vmstat.nr_anon_transparent_hugepages",
	".anon_fault_alloc", ".anon_fault_fallback", "cgroup.memory.stat.anon_thp",
	"cgroup.memory.stat.thp_", "cgroup.memory.stat.pgfault", NULL
};

/* A closed, unread event of table entry e. */
static void
counters_pmu_set(struct counters_pmu *p, const struct counters_default *e)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", e->name);
	p->type = e->type;
	p->config = e->config;
	p->fd = -1;
}

void
counters_init(struct counters *c, const char *root)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->root = root != NULL ? root : "";
	c->vm0.max = c->vm1.max = BF_MAX_VMSTAT_FIELDS;
	c->th0.max = c->th1.max = BF_MAX_MTHP_STATS;
	c->cg0.max = c->cg1.max = COUNTERS_MAX_CG;
	c->peak_fd = -1;
	c->vm_fd = -1;
	c->hold_fd = -1;
	c->peak = -1;
	for (i = 0; i < sizeof(counters_defaults) / sizeof(counters_defaults[0]); i++)
		counters_pmu_set(&c->pmu[c->npmu++], &counters_defaults[i]);
}

int
counters_add_named(struct counters *c, const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(counters_named) / sizeof(counters_named[0]); i++)
		if (strcmp(counters_named[i].name, name) == 0)
			break;
	if (i == sizeof(counters_named) / sizeof(counters_named[0]))
		return BF_ERR_NOTFOUND;
	if (c->npmu >= BF_MAX_PMU_EVENTS)
		return BF_ERR_TOOBIG;
	counters_pmu_set(&c->pmu[c->npmu++], &counters_named[i]);
	return 0;
}

void
counters_rusage(struct counters *c, long minflt, long majflt)
{
	c->minflt = minflt;
	c->majflt = majflt;
	c->have_ru = 1;
}

int
counters_raw_config(const char *spec, uint64_t *config)
{
	uint64_t v = 0;
	size_t i;

	if (spec[0] != 'r' || spec[1] == '\0' || strlen(spec) > 17)
		return BF_ERR_INVALID;
	for (i = 1; spec[i] != '\0'; i++) {
		char ch = spec[i];
		unsigned d;

		if (ch >= '0' && ch <= '9')
			d = (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			d = (unsigned)(ch - 'a' + 10);
		else if (ch >= 'A' && ch <= 'F')
			d = (unsigned)(ch - 'A' + 10);
		else
			return BF_ERR_INVALID;
		v = v << 4 | d;
	}
	*config = v;
	return 0;
}

int
counters_add_raw(struct counters *c, const char *name, const char *spec)
{
	struct counters_pmu *p;
	uint64_t cfg;

	if (strlen(name) == 0 || strlen(name) > BF_MAX_NAME ||
	    counters_raw_config(spec, &cfg) != 0)
		return BF_ERR_INVALID;
	if (c->npmu >= BF_MAX_PMU_EVENTS)
		return BF_ERR_TOOBIG;
	p = &c->pmu[c->npmu++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->type = PERF_TYPE_RAW;
	p->config = cfg;
	p->fd = -1;
	return 0;
}

static int
counters_add(struct counters_list *l, const char *name, size_t nlen, int64_t v)
{
	if (l->kv == NULL && (l->kv = calloc(l->max, sizeof(*l->kv))) == NULL)
		return BF_ERR_ALLOC;
	if (l->n >= l->max || nlen >= COUNTERS_MAX_NAME) {
		l->dropped++;
		return 0;
	}
	memcpy(l->kv[l->n].name, name, nlen);
	l->kv[l->n].name[nlen] = '\0';
	l->kv[l->n].v = v;
	l->n++;
	return 0;
}

void
counters_parse(const char *text, size_t len, const char *prefix, struct counters_list *l)
{
	const char *p = text, *end = text + len, *nl, *sp;
	char name[COUNTERS_MAX_NAME];
	size_t pl = strlen(prefix), n;
	int64_t v;

	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		sp = memchr(p, ' ', (size_t)(nl - p));
		n = sp != NULL ? (size_t)(sp - p) : 0;
		if (sp != NULL && n > 0 && pl + n < sizeof(name) &&
		    parse_i64_n(sp + 1, (size_t)(nl - sp - 1), INT64_MIN, INT64_MAX, &v) == 0) {
			memcpy(name, prefix, pl);
			memcpy(name + pl, p, n);
			if (counters_add(l, name, pl + n, v) != 0)
				return;
		}
		p = nl + 1;
	}
}

int64_t
counters_get(const struct counters_list *l, const char *name, int *found)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->kv[i].name, name) == 0) {
			*found = 1;
			return l->kv[i].v;
		}
	*found = 0;
	return -1;
}

int64_t
counters_anon_huge_kb(const char *text, size_t len)
{
	const char *p, *e = text + len, *nl;
	int64_t v;

	if ((p = memmem(text, len, "\nAnonHugePages:", 15)) == NULL)
		return -1;
	for (p += 15; p < e && *p == ' '; p++)
		;
	if ((nl = memchr(p, ' ', (size_t)(e - p))) == NULL ||
	    parse_i64_n(p, (size_t)(nl - p), 0, INT64_MAX, &v) != 0)
		return -1;
	return v;
}

/* root+path into b (reset first); 0 or BF_ERR_IO. */
static int
counters_slurp(const struct counters *c, const char *path, struct buf *b)
{
	char full[1024], chunk[8192];
	ssize_t n;
	int fd, r = 0;

	buf_reset(b);
	if ((size_t)snprintf(full, sizeof(full), "%s%s", c->root, path) >= sizeof(full) ||
	    (fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return BF_ERR_IO;
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? BF_ERR_IO : 0;
			break;
		}
		if ((r = buf_append(b, chunk, (size_t)n)) != 0)
			break;
	}
	close(fd);
	return r;
}

/* The process group in /proc/PID/stat text, or -1. comm may hold spaces
 * and ')', so the fields are counted from the last ')': state, ppid, pgrp. */
int64_t
counters_pgrp(const char *text, size_t len)
{
	const char *p = NULL, *q, *e = text + len;
	int64_t v;
	int f;

	for (q = text; q < e; q++)
		if (*q == ')')
			p = q;
	if (p == NULL)
		return -1;
	for (p++, f = 0; f < 2; f++) {
		while (p < e && *p == ' ')
			p++;
		while (p < e && *p != ' ')
			p++;
	}
	while (p < e && *p == ' ')
		p++;
	for (q = p; q < e && *q >= '0' && *q <= '9'; q++)
		;
	if (q == p || parse_i64_n(p, (size_t)(q - p), 0, INT64_MAX, &v) != 0)
		return -1;
	return v;
}

/*
 * AnonHugePages (kB) summed over the processes of group pgid: a service is
 * its own group leader, and work serve's instances (the redis-servers)
 * share its group, so this is the servers' huge memory, not the wrapper's.
 * -1 when no process of the group could be read.
 */
static int64_t
counters_group_ahp(const struct counters *c, pid_t pgid, struct buf *tmp)
{
	char dir[600], path[64];
	struct dirent *de;
	int64_t sum = -1, v, pid;
	size_t seen = 0;
	DIR *d;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/proc", c->root) >= sizeof(dir) ||
	    (d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL && seen < COUNTERS_MAX_PROCS) {
		if (parse_i64(de->d_name, 1, INT32_MAX, &pid) != 0)
			continue;
		seen++;
		snprintf(path, sizeof(path), "/proc/%lld/stat", (long long)pid);
		if (counters_slurp(c, path, tmp) != 0 || tmp->data == NULL ||
		    counters_pgrp(tmp->data, tmp->len) != (int64_t)pgid)
			continue;
		snprintf(path, sizeof(path), "/proc/%lld/smaps_rollup", (long long)pid);
		if (counters_slurp(c, path, tmp) != 0 || tmp->data == NULL ||
		    (v = counters_anon_huge_kb(tmp->data, tmp->len)) < 0)
			continue;
		sum = (sum < 0 ? 0 : sum) + v;
	}
	closedir(d);
	return sum;
}

static int
counters_file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct counters_file *)a)->name,
	    ((const struct counters_file *)b)->name);
}

/*
 * Find every hugepages-<N>kB/stats/<field> once per step and keep the first
 * COUNTERS_MAX_HELD open: reading ~160 of them by path before and after
 * each iteration was most of the counters' cost (each open walks six sysfs
 * directories). sysfs shows a file anew on every pread at offset 0.
 */
static void
counters_mthp_find(struct counters *c)
{
	char dir[1024], path[1600];
	struct dirent *de, *fe;
	struct counters_file *f;
	DIR *d, *s;
	size_t n;

	c->th_found = 1;
	snprintf(dir, sizeof(dir), "%s%s", c->root, COUNTERS_THP);
	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "hugepages-", 10) != 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s/stats", dir, de->d_name) >=
		    sizeof(path) || (s = opendir(path)) == NULL)
			continue;
		while ((fe = readdir(s)) != NULL) {
			if (fe->d_name[0] == '.')
				continue;
			if (c->th_files == NULL && (c->th_files = calloc(BF_MAX_MTHP_STATS,
			    sizeof(*c->th_files))) == NULL)
				break;
			if (c->nth_files >= BF_MAX_MTHP_STATS) {
				c->th_skipped++;
				continue;
			}
			f = &c->th_files[c->nth_files];
			if ((n = (size_t)snprintf(f->name, sizeof(f->name), "%s.%s", de->d_name,
			    fe->d_name)) >= sizeof(f->name) ||
			    (size_t)snprintf(f->path, sizeof(f->path), "%s/%s/stats/%s",
			    COUNTERS_THP, de->d_name, fe->d_name) >= sizeof(f->path)) {
				c->th_skipped++;
				continue;
			}
			f->fd = c->nth_files < COUNTERS_MAX_HELD ? openat(dirfd(s), fe->d_name,
			    O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
			c->nth_files++;
		}
		closedir(s);
	}
	closedir(d);
	if (c->nth_files > 1)
		qsort(c->th_files, c->nth_files, sizeof(*c->th_files), counters_file_cmp);
}

/* Every hugepages-<N>kB/stats/<field> as "hugepages-<N>kB.<field>", sorted;
 * a file that cannot be read now is left out, as its field. */
static void
counters_mthp(struct counters *c, struct counters_list *l, struct buf *tmp)
{
	char num[64];
	const char *text;
	size_t i, len;
	ssize_t got;
	int64_t v;

	if (!c->th_found)
		counters_mthp_find(c);
	for (i = 0; i < c->nth_files; i++) {
		const struct counters_file *f = &c->th_files[i];

		if (f->fd >= 0) {
			/* one number: a full buffer is not one */
			if ((got = pread(f->fd, num, sizeof(num) - 1, 0)) <= 0 ||
			    (size_t)got >= sizeof(num) - 1)
				continue;
			num[got] = '\0';
			text = num;
			len = (size_t)got;
		} else {
			if (counters_slurp(c, f->path, tmp) != 0 || tmp->data == NULL)
				continue;
			text = tmp->data;
			len = tmp->len;
		}
		while (len > 0 && text[len - 1] == '\n')
			len--;
		if (parse_i64_n(text, len, INT64_MIN, INT64_MAX, &v) != 0)
			continue;
		(void)counters_add(l, f->name, strlen(f->name), v);
	}
	l->dropped += c->th_skipped;
}

/* /proc/vmstat's fd, kept for the step; -1 when it cannot be opened. */
static int
counters_vmstat_fd(struct counters *c)
{
	char full[1024];

	if (c->vm_fd < 0 && (size_t)snprintf(full, sizeof(full), "%s/proc/vmstat", c->root) <
	    sizeof(full))
		c->vm_fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	return c->vm_fd;
}

/* /proc/vmstat into l, through an fd kept open for the step. */
static void
counters_vmstat(struct counters *c, struct counters_list *l, struct buf *tmp)
{
	char chunk[8192];
	ssize_t n;

	buf_reset(tmp);
	if (counters_vmstat_fd(c) < 0)
		return;
	for (;;) {
		n = pread(c->vm_fd, chunk, sizeof(chunk), (off_t)tmp->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;
		if (n == 0 || buf_append(tmp, chunk, (size_t)n) != 0)
			break;
	}
	if (tmp->data != NULL)
		counters_parse(tmp->data, tmp->len, "vmstat.", l);
}

/* The step's own cgroup v2 directory, from /proc/self/cgroup's "0::/x". */
static void
counters_cgroup_find(struct counters *c, struct buf *tmp)
{
	char path[512];
	const char *p, *nl;
	struct stat sb;

	c->cg_state = -1;
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/cgroup.controllers", c->root);
	if (stat(path, &sb) != 0) {
		snprintf(c->cg_why, sizeof(c->cg_why), "absent: cgroup v1");
		return;
	}
	if (counters_slurp(c, "/proc/self/cgroup", tmp) != 0 || tmp->data == NULL ||
	    (p = strstr(tmp->data, "0::/")) == NULL || (p != tmp->data && p[-1] != '\n')) {
		snprintf(c->cg_why, sizeof(c->cg_why), "absent: no cgroup v2 entry in "
		    "/proc/self/cgroup");
		return;
	}
	p += 3;
	if ((nl = strchr(p, '\n')) == NULL)
		nl = p + strlen(p);
	if ((size_t)snprintf(c->cg_dir, sizeof(c->cg_dir), "/sys/fs/cgroup%.*s", (int)(nl - p),
	    p) >= sizeof(c->cg_dir) || strstr(c->cg_dir, "/..") != NULL) {
		snprintf(c->cg_why, sizeof(c->cg_why), "absent: cgroup path too long");
		return;
	}
	c->cg_state = 1;
}

void
counters_prepare(struct counters *c)
{
	struct buf tmp;

	buf_init(&tmp, COUNTERS_MAX_FILE);
	if (c->hold_fd < 0) {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
		a.disabled = 1;
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		/* on this process only; a failure (no perf) costs nothing */
		c->hold_fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	(void)counters_vmstat_fd(c);
	if (!c->th_found)
		counters_mthp_find(c);
	if (c->cg_state == 0)
		counters_cgroup_find(c, &tmp);
	buf_free(&tmp);
}

void
counters_before(struct counters *c)
{
	char path[600], full[1100];
	struct buf tmp;

	buf_init(&tmp, COUNTERS_MAX_FILE);
	c->vm0.n = c->vm1.n = c->th0.n = c->th1.n = c->cg0.n = c->cg1.n = 0;
	c->vm0.dropped = c->th0.dropped = c->cg0.dropped = 0;
	c->nsvc = 0;
	c->peak = -1;
	c->have_ru = 0;
	counters_vmstat(c, &c->vm0, &tmp);
	counters_mthp(c, &c->th0, &tmp);
	if (c->cg_state == 0)
		counters_cgroup_find(c, &tmp);
	if (c->cg_state > 0) {
		snprintf(path, sizeof(path), "%s/memory.stat", c->cg_dir);
		if (counters_slurp(c, path, &tmp) == 0 && tmp.data != NULL)
			counters_parse(tmp.data, tmp.len, "cgroup.memory.stat.", &c->cg0);
		if (c->peak_fd >= 0)
			close(c->peak_fd);
		/* a write to memory.peak resets the peak seen through this fd
		 * only (Linux 6.12); older kernels refuse it: since creation */
		snprintf(full, sizeof(full), "%s%s/memory.peak", c->root, c->cg_dir);
		c->peak_fd = open(full, O_RDWR | O_CLOEXEC | O_NONBLOCK);
		if (c->peak_fd < 0)
			c->peak_fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		c->peak_reset = c->peak_fd >= 0 && write(c->peak_fd, "reset\n", 6) == 6;
	}
	buf_free(&tmp);
}

static int
counters_open(struct counters_pmu *p, pid_t pid, int on_exec, int user_only)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = p->type;
	a.config = p->config;
	a.disabled = 1;
	a.inherit = 1;
	a.enable_on_exec = on_exec ? 1 : 0;
	a.exclude_hv = 1;
	a.exclude_kernel = user_only ? 1 : 0;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

void
counters_attach(struct counters *c, pid_t pid, int on_exec)
{
	size_t i;

	for (i = 0; i < c->npmu; i++) {
		struct counters_pmu *p = &c->pmu[i];

		p->have = 0;
		p->user_only = 0;
		if ((p->fd = counters_open(p, pid, on_exec, 0)) < 0 &&
		    (errno == EACCES || errno == EPERM)) {
			/* perf_event_paranoid >= 2 without CAP_PERFMON: user space only */
			p->user_only = 1;
			p->fd = counters_open(p, pid, on_exec, 1);
		}
		p->err = p->fd < 0 ? errno : 0;
	}
}

void
counters_enable(struct counters *c)
{
	size_t i;

	for (i = 0; i < c->npmu; i++)
		if (c->pmu[i].fd >= 0)
			(void)ioctl(c->pmu[i].fd, PERF_EVENT_IOC_ENABLE, 0);
}

void
counters_disable(struct counters *c)
{
	size_t i;

	for (i = 0; i < c->npmu; i++)
		if (c->pmu[i].fd >= 0)
			(void)ioctl(c->pmu[i].fd, PERF_EVENT_IOC_DISABLE, 0);
}

void
counters_after(struct counters *c, const pid_t *pids, size_t n)
{
	uint64_t v[3];
	char path[600];
	struct buf tmp;
	size_t i;

	buf_init(&tmp, COUNTERS_MAX_FILE);
	for (i = 0; i < c->npmu; i++) {
		struct counters_pmu *p = &c->pmu[i];

		if (p->fd < 0)
			continue;
		if (read(p->fd, v, sizeof(v)) == (ssize_t)sizeof(v)) {
			p->value = v[0];
			p->enabled = v[1];
			p->running = v[2];
			p->have = 1;
		} else
			p->err = errno != 0 ? errno : EIO;
		close(p->fd);
		p->fd = -1;
	}
	counters_vmstat(c, &c->vm1, &tmp);
	counters_mthp(c, &c->th1, &tmp);
	if (c->cg_state > 0) {
		snprintf(path, sizeof(path), "%s/memory.stat", c->cg_dir);
		if (counters_slurp(c, path, &tmp) == 0 && tmp.data != NULL)
			counters_parse(tmp.data, tmp.len, "cgroup.memory.stat.", &c->cg1);
		if (c->peak_fd >= 0) {
			char num[32];
			ssize_t got = pread(c->peak_fd, num, sizeof(num) - 1, 0);
			int64_t pk;

			while (got > 0 && (num[got - 1] == '\n' || num[got - 1] == ' '))
				got--;
			if (got > 0 && parse_i64_n(num, (size_t)got, 0, INT64_MAX, &pk) == 0)
				c->peak = pk;
		}
	}
	for (i = 0; i < n && i < sizeof(c->svc) / sizeof(c->svc[0]); i++) {
		c->svc[i] = pids[i];
		c->svc_ahp[i] = counters_group_ahp(c, pids[i], &tmp);
		c->nsvc = i + 1;
	}
	buf_free(&tmp);
}

static int
counters_is_always(const char *name)
{
	size_t i;

	for (i = 0; counters_always[i] != NULL; i++)
		if (counters_always[i][0] == '.' ? strstr(name, counters_always[i]) != NULL :
		    strncmp(name, counters_always[i], strlen(counters_always[i])) == 0)
			return 1;
	return 0;
}

/* after - before for every field of after that before has too. */
static int
counters_deltas(const struct counters_list *b0, const struct counters_list *b1, struct buf *b,
    size_t *nput)
{
	size_t i;
	int64_t v0;
	int found, r;

	for (i = 0; i < b1->n; i++) {
		const struct counters_kv *kv = &b1->kv[i];

		/* the kernel keeps the order: look at the same index first */
		if (i < b0->n && strcmp(b0->kv[i].name, kv->name) == 0) {
			v0 = b0->kv[i].v;
			found = 1;
		} else
			v0 = counters_get(b0, kv->name, &found);
		if (!found || (kv->v == v0 && !counters_is_always(kv->name)))
			continue;
		if ((r = buf_puts(b, (*nput)++ ? "," : "")) != 0 ||
		    (r = ajson_put_str(b, kv->name, strlen(kv->name))) != 0 ||
		    (r = buf_printf(b, ":%lld", (long long)((uint64_t)kv->v - (uint64_t)v0))) != 0)
			return r;
	}
	return 0;
}

static int
counters_why(struct buf *b, size_t *n, const char *name, const char *why)
{
	int r;

	if ((r = buf_printf(b, "%s", (*n)++ ? "," : "")) != 0 ||
	    (r = ajson_put_str(b, name, strlen(name))) != 0 || (r = buf_puts(b, ":")) != 0)
		return r;
	return ajson_put_str(b, why, strlen(why));
}

int
counters_line(const struct counters *c, int64_t it, struct buf *b)
{
	struct buf un;
	char name[BF_MAX_NAME + 16], why[160];
	size_t i, nm = 0, nu = 0;
	int r;

	buf_init(&un, BF_MAX_COUNTERS_LINE);
	if ((r = buf_printf(b, "{\"type\":\"counters\",\"iteration\":%lld,\"metrics\":{",
	    (long long)it)) != 0 ||
	    (r = counters_deltas(&c->vm0, &c->vm1, b, &nm)) != 0 ||
	    (r = counters_deltas(&c->th0, &c->th1, b, &nm)) != 0 ||
	    (r = counters_deltas(&c->cg0, &c->cg1, b, &nm)) != 0)
		goto out;
	if (c->vm1.n == 0 && (r = counters_why(&un, &nu, "vmstat", "absent: /proc/vmstat "
	    "unreadable")) != 0)
		goto out;
	if (c->cg_state < 0 && (r = counters_why(&un, &nu, "cgroup", c->cg_why)) != 0)
		goto out;
	if (c->cg_state > 0) {
		if (c->peak >= 0)
			r = buf_printf(b, "%s\"cgroup.memory.peak\":%lld", nm++ ? "," : "",
			    (long long)c->peak);
		else
			r = counters_why(&un, &nu, "cgroup.memory.peak", "absent: unreadable");
		if (r != 0)
			goto out;
	}
	for (i = 0; i < c->nsvc; i++) {
		snprintf(name, sizeof(name), "smaps.service%zu.AnonHugePages_kb", i);
		if (c->svc_ahp[i] >= 0)
			r = buf_printf(b, "%s\"%s\":%lld", nm++ ? "," : "", name,
			    (long long)c->svc_ahp[i]);
		else
			r = counters_why(&un, &nu, name, "absent: smaps_rollup unreadable");
		if (r != 0)
			goto out;
	}
	if (c->have_ru && (r = buf_printf(b, "%s\"rusage.minflt\":%ld,\"rusage.majflt\":%ld",
	    nm++ ? "," : "", c->minflt, c->majflt)) != 0)
		goto out;
	for (i = 0; i < c->npmu; i++) {
		const struct counters_pmu *p = &c->pmu[i];

		snprintf(name, sizeof(name), "pmu.%s", p->name);
		if (!p->have) {
			snprintf(why, sizeof(why), "unsupported: errno %d (%s)", p->err,
			    strerror(p->err));
			r = counters_why(&un, &nu, name, why);
		} else if (p->enabled == 0 || p->running == 0)
			r = counters_why(&un, &nu, name, p->enabled == 0 ? "not counted: never "
			    "enabled (the workload did not exec)" : "not counted: never scheduled "
			    "on a counter (multiplexed out)");
		else if (p->running < p->enabled) {
			/* multiplexed: scaled to the time it was enabled, and said so */
			r = buf_printf(b, "%s\"%s\":", nm++ ? "," : "", name);
			if (r == 0)
				r = ajson_put_num(b, (double)p->value * (double)p->enabled /
				    (double)p->running);
		} else
			r = buf_printf(b, "%s\"%s\":%llu", nm++ ? "," : "", name,
			    (unsigned long long)p->value);
		if (r != 0)
			goto out;
	}
	if ((r = buf_puts(b, "},\"unsupported\":{")) != 0 ||
	    (un.len > 0 && (r = buf_append(b, un.data, un.len)) != 0) ||
	    (r = buf_puts(b, "},\"notes\":[")) != 0)
		goto out;
	nu = 0;
	for (i = 0; i < c->npmu; i++) {
		const struct counters_pmu *p = &c->pmu[i];

		if (p->have && p->running > 0 && p->running < p->enabled) {
			snprintf(why, sizeof(why), "pmu.%s: multiplexed, counted %.1f%% of the "
			    "window, scaled", p->name, 100.0 * (double)p->running /
			    (double)p->enabled);
			if ((r = buf_puts(b, nu++ ? "," : "")) != 0 ||
			    (r = ajson_put_str(b, why, strlen(why))) != 0)
				goto out;
		}
		if (p->have && p->user_only) {
			snprintf(why, sizeof(why), "pmu.%s: user space only (perf_event_paranoid)",
			    p->name);
			if ((r = buf_puts(b, nu++ ? "," : "")) != 0 ||
			    (r = ajson_put_str(b, why, strlen(why))) != 0)
				goto out;
		}
	}
	if (c->cg_state > 0 && c->peak >= 0 && !c->peak_reset &&
	    (r = buf_printf(b, "%s\"cgroup.memory.peak: since the cgroup was created (this "
	    "kernel cannot reset it per reader)\"", nu++ ? "," : "")) != 0)
		goto out;
	if (c->vm1.dropped + c->th1.dropped + c->cg1.dropped > 0 &&
	    (r = buf_printf(b, "%s\"%zu fields over the caps not read\"", nu++ ? "," : "",
	    c->vm1.dropped + c->th1.dropped + c->cg1.dropped)) != 0)
		goto out;
	r = buf_puts(b, "]}");
out:
	buf_free(&un);
	return r;
}

int
counters_emit(const struct counters *c, int64_t it)
{
	struct buf b;
	int r;

	buf_init(&b, BF_MAX_COUNTERS_LINE);
	if ((r = counters_line(c, it, &b)) != 0)
		goto out;
	r = emit_line(&b);
out:
	buf_free(&b);
	return r;
}

void
counters_free(struct counters *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->npmu; i++)
		if (c->pmu[i].fd >= 0) {
			close(c->pmu[i].fd);
			c->pmu[i].fd = -1;
		}
	if (c->peak_fd >= 0)
		close(c->peak_fd);
	c->peak_fd = -1;
	if (c->vm_fd >= 0)
		close(c->vm_fd);
	c->vm_fd = -1;
	if (c->hold_fd >= 0)
		close(c->hold_fd);
	c->hold_fd = -1;
	for (i = 0; i < c->nth_files; i++)
		if (c->th_files[i].fd >= 0)
			close(c->th_files[i].fd);
	free(c->th_files);
	c->th_files = NULL;
	c->nth_files = c->th_skipped = 0;
	c->th_found = 0;
	free(c->vm0.kv);
	free(c->vm1.kv);
	free(c->th0.kv);
	free(c->th1.kv);
	free(c->cg0.kv);
	free(c->cg1.kv);
	c->vm0.kv = c->vm1.kv = c->th0.kv = c->th1.kv = c->cg0.kv = c->cg1.kv = NULL;
}
