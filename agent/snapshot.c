/*
 * snapshot.c: the environment snapshot of a step. Everything is read from
 * small files under a root prefix (so the unit tests run on a fake tree),
 * collected as (key, value) pairs, sorted, and printed as one JSON object
 * whose sha256 is its identity. The binaries and packages a step runs are
 * snapshot-bins.c's. Nothing that cannot be read is fatal: it is a null
 * value.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "caps.h"
#include "emit.h"
#include "err.h"
#include "ajson.h"
#include "parse.h"
#include "probe.h"
#include "sha256.h"
#include "snapshot.h"
#include "snapshot-int.h"

/* Counters and one-shot actions, not settings: never part of a snapshot. */
static const char *const snapshot_thp_skip[] = {
	"stats", "full_scans", "pages_collapsed", NULL
};
static const char *const snapshot_vm_skip[] = {
	"drop_caches", "compact_memory", "stat_refresh", NULL
};

static const char *const snapshot_policy_files[] = {
	"scaling_governor", "scaling_driver", "energy_performance_preference",
	"energy_performance_available_preferences", "scaling_min_freq", "scaling_max_freq",
	"cpuinfo_min_freq", "cpuinfo_max_freq", NULL
};

/* Files at fixed places: key, path under the root. */
struct snapshot_fixed {
	const char *key;
	const char *path;
};

static const struct snapshot_fixed snapshot_fixed_tab[] = {
	{ .key = "kernel.release", .path = "/proc/sys/kernel/osrelease" },
	{ .key = "kernel.version", .path = "/proc/sys/kernel/version" },
	{ .key = "kernel.cmdline", .path = "/proc/cmdline" },
	{ .key = "kernel.boot_id", .path = "/proc/sys/kernel/random/boot_id" },
	{ .key = "kernel.numa_balancing", .path = "/proc/sys/kernel/numa_balancing" },
	{ .key = "kernel.randomize_va_space", .path = "/proc/sys/kernel/randomize_va_space" },
	{ .key = "kernel.sched_autogroup_enabled",
	  .path = "/proc/sys/kernel/sched_autogroup_enabled" },
	{ .key = "kernel.perf_event_paranoid", .path = "/proc/sys/kernel/perf_event_paranoid" },
	{ .key = "cpu.smt.control", .path = "/sys/devices/system/cpu/smt/control" },
	{ .key = "cpu.smt.active", .path = "/sys/devices/system/cpu/smt/active" },
	{ .key = "cpu.online", .path = "/sys/devices/system/cpu/online" },
	{ .key = "cpufreq.boost", .path = "/sys/devices/system/cpu/cpufreq/boost" },
	{ .key = "cpufreq.intel_pstate.status",
	  .path = "/sys/devices/system/cpu/intel_pstate/status" },
	{ .key = "cpufreq.intel_pstate.no_turbo",
	  .path = "/sys/devices/system/cpu/intel_pstate/no_turbo" },
	{ .key = "cpufreq.amd_pstate.status", .path = "/sys/devices/system/cpu/amd_pstate/status" },
	{ .key = "cpuidle.current_driver", .path = "/sys/devices/system/cpu/cpuidle/current_driver" },
	{ .key = "cpuidle.current_governor",
	  .path = "/sys/devices/system/cpu/cpuidle/current_governor_ro" },
	{ .key = "cpuidle.intel_idle.max_cstate", .path = "/sys/module/intel_idle/parameters/max_cstate" },
	{ .key = "cpuidle.processor.max_cstate", .path = "/sys/module/processor/parameters/max_cstate" },
	{ .key = "dmi.bios_vendor", .path = "/sys/class/dmi/id/bios_vendor" },
	{ .key = "dmi.bios_version", .path = "/sys/class/dmi/id/bios_version" },
	{ .key = "dmi.bios_date", .path = "/sys/class/dmi/id/bios_date" },
	{ .key = "dmi.board_vendor", .path = "/sys/class/dmi/id/board_vendor" },
	{ .key = "dmi.board_name", .path = "/sys/class/dmi/id/board_name" },
	{ .key = "dmi.board_version", .path = "/sys/class/dmi/id/board_version" },
	{ .key = "dmi.sys_vendor", .path = "/sys/class/dmi/id/sys_vendor" },
	{ .key = "dmi.product_name", .path = "/sys/class/dmi/id/product_name" },
};

void
snapshot_value(const char *text, size_t len, int choice, char *out, size_t outsz)
{
	const char *lb, *rb;
	size_t i, o = 0;
	int space = 0;

	out[0] = '\0';
	if (outsz == 0)
		return;
	if (choice && (lb = memchr(text, '[', len)) != NULL &&
	    (rb = memchr(lb, ']', len - (size_t)(lb - text))) != NULL && rb - lb > 1 &&
	    memchr(rb, '[', len - (size_t)(rb - text)) == NULL) {
		text = lb + 1;
		len = (size_t)(rb - lb - 1);
	}
	for (i = 0; i < len && o + 1 < outsz; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0') {
			space = o > 0;
			continue;
		}
		if (space && o + 2 < outsz)
			out[o++] = ' ';
		space = 0;
		out[o++] = (char)c;
	}
	out[o] = '\0';
}

int
snapshot_summary(const long long *idx, char *const *val, size_t n, size_t total,
    struct buf *out)
{
	size_t i, j;
	int r;

	for (i = 1; i < n && strcmp(val[i], val[0]) == 0; i++)
		;
	if (n > 0 && i == n && n == total)
		return buf_puts(out, val[0]);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && idx[j] == idx[j - 1] + 1 && strcmp(val[j], val[i]) == 0; j++)
			;
		if (j - i > 1)
			r = buf_printf(out, "%s%lld-%lld:%s", i ? "," : "", idx[i], idx[j - 1], val[i]);
		else
			r = buf_printf(out, "%s%lld:%s", i ? "," : "", idx[i], val[i]);
		if (r != 0)
			return r;
	}
	return 0;
}

/* Add a pair; both are copied. val NULL records the key as absent. */
int
snapshot_add(struct snapshot_set *s, const char *key, const char *val)
{
	struct snapshot_ent *ne;
	size_t kl = strlen(key);

	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;

		if (s->n >= BF_MAX_SNAPSHOT_FILES) {
			s->dropped++;
			return 0;
		}
		if ((ne = realloc(s->e, nc * sizeof(*ne))) == NULL)
			return BF_ERR_ALLOC;
		s->e = ne;
		s->cap = nc;
	}
	if (kl > SNAPSHOT_MAX_KEY)
		kl = SNAPSHOT_MAX_KEY;
	if ((s->e[s->n].key = strndup(key, kl)) == NULL)
		return BF_ERR_ALLOC;
	s->e[s->n].val = NULL;
	if (val != NULL && (s->e[s->n].val = strdup(val)) == NULL) {
		free(s->e[s->n].key);
		return BF_ERR_ALLOC;
	}
	s->n++;
	return 0;
}

/* snapshot_read_fd's how, or 0 for an fd of o->held (checked when it was
 * opened, and it stays open) */
#define SNAP_FD_CLOSE	1	/* close fd when done */
#define SNAP_FD_CHECK	2	/* fstat it first: not a regular file is BF_ERR_IO */

/* Read fd from offset 0 into s->val as snapshot_value() makes it: BF_ERR_IO
 * unless it reads (and, with SNAP_FD_CHECK, is a regular file). */
static int
snapshot_read_fd(struct snapshot_set *s, int fd, int choice, int how)
{
	char raw[BF_MAX_SNAPSHOT_VALUE];
	struct stat sb;
	size_t got = 0;
	ssize_t n;
	int r = BF_ERR_IO;

	if ((how & SNAP_FD_CHECK) && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)))
		goto out;
	/* pread from 0: sysfs and procfs make the text anew at offset 0 */
	while (got < sizeof(raw)) {
		n = pread(fd, raw + got, sizeof(raw) - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto out;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	snapshot_value(raw, got, choice, s->val, sizeof(s->val));
	r = 0;
out:
	if (how & SNAP_FD_CLOSE)
		close(fd);
	return r;
}

static int
snapshot_hfile_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snapshot_hfile *)a)->path,
	    ((const struct snapshot_hfile *)b)->path);
}

/* Preparing: keep fd under full when it is a /sys or /proc regular file
 * with read bits and there is room; otherwise close it. */
static void
snapshot_hold(struct snapshot_set *s, const char *full, int fd)
{
	struct snapshot_held *h = s->prep;
	const char *rel = full + strlen(s->o->root);
	struct stat sb;
	char *p = NULL;

	if (fd < 0)
		return;
	if (h->n >= SNAPSHOT_MAX_HELD || (strncmp(rel, "/sys/", 5) != 0 &&
	    strncmp(rel, "/proc/", 6) != 0) || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    (sb.st_mode & 0444) == 0 || (p = strdup(full)) == NULL ||
	    (h->f == NULL && (h->f = calloc(SNAPSHOT_MAX_HELD, sizeof(*h->f))) == NULL)) {
		free(p);
		close(fd);
		return;
	}
	h->f[h->n].path = p;
	h->f[h->n].fd = fd;
	h->n++;
}

/* The fd o->held keeps for full, or -1. */
static int
snapshot_held_fd(const struct snapshot_set *s, const char *full)
{
	const struct snapshot_held *h = s->o->held;
	struct snapshot_hfile key, *f;

	if (h == NULL || h->n == 0)
		return -1;
	key.path = (char *)full;
	f = bsearch(&key, h->f, h->n, sizeof(*h->f), snapshot_hfile_cmp);
	return f != NULL ? f->fd : -1;
}

/* Read root+path into s->val as snapshot_value() makes it; BF_ERR_IO when
 * it cannot be opened or read, or the read cap is spent. */
static int
snapshot_read(struct snapshot_set *s, const char *path, int choice)
{
	char full[SNAPSHOT_MAX_PATH];
	int fd;

	s->val[0] = '\0';
	if (s->reads >= BF_MAX_SNAPSHOT_FILES)
		return BF_ERR_IO;
	s->reads++;
	if ((size_t)snprintf(full, sizeof(full), "%s%s", s->o->root, path) >= sizeof(full))
		return BF_ERR_IO;
	/* O_NONBLOCK: a fifo planted in a tree must not hang the step */
	if (s->prep != NULL) {
		snapshot_hold(s, full, open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
		return BF_ERR_IO;
	}
	if ((fd = snapshot_held_fd(s, full)) >= 0)
		return snapshot_read_fd(s, fd, choice, 0);
	if ((fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
		return BF_ERR_IO;
	return snapshot_read_fd(s, fd, choice, SNAP_FD_CLOSE | SNAP_FD_CHECK);
}

/*
 * A regular file of a walk (readdir said DT_REG), opened relative to its
 * directory: one open instead of a stat and an open that each walk the
 * whole path (the walk reads ~100 files per step). As the walk by stat
 * did: a file without read bits is left out, one that fails to read is
 * null. 0 or BF_ERR_ALLOC.
 */
static int
snapshot_file_at(struct snapshot_set *s, int dfd, const char *dir, const char *name,
    const char *key, int choice)
{
	char full[SNAPSHOT_MAX_PATH];
	struct stat sb;
	int fd, flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW;

	s->val[0] = '\0';
	if (s->reads >= BF_MAX_SNAPSHOT_FILES)
		return snapshot_add(s, key, NULL);
	if ((size_t)snprintf(full, sizeof(full), "%s/%s", dir, name) >= sizeof(full))
		full[0] = '\0';
	if (s->prep != NULL) {
		s->reads++;
		if (full[0] != '\0')
			snapshot_hold(s, full, openat(dfd, name, flags));
		return 0;
	}
	if (full[0] != '\0' && (fd = snapshot_held_fd(s, full)) >= 0) {
		s->reads++;
		return snapshot_add(s, key, snapshot_read_fd(s, fd, choice, 0) == 0 ? s->val :
		    NULL);
	}
	if ((fd = openat(dfd, name, flags)) < 0) {
		if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode) ||
		    (sb.st_mode & 0444) == 0)
			return 0;
		s->reads++;
		return snapshot_add(s, key, NULL);
	}
	/* one fstat: the read bits, and that it is still a regular file */
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		s->reads++;
		return snapshot_add(s, key, NULL);
	}
	if ((sb.st_mode & 0444) == 0) {
		close(fd);
		return 0;
	}
	s->reads++;
	return snapshot_add(s, key, snapshot_read_fd(s, fd, choice, SNAP_FD_CLOSE) == 0 ?
	    s->val : NULL);
}

static int
snapshot_file(struct snapshot_set *s, const char *key, const char *path, int choice)
{
	return snapshot_add(s, key, snapshot_read(s, path, choice) == 0 ? s->val : NULL);
}

static int
snapshot_skip(const char *name, const char *const *skip)
{
	size_t i;

	if (name[0] == '.')
		return 1;
	for (i = 0; skip != NULL && skip[i] != NULL; i++)
		if (strcmp(name, skip[i]) == 0)
			return 1;
	return 0;
}

/* Every readable regular file under root+dir, depth levels down, as
 * prefix + its path below dir ("transparent_hugepage/khugepaged/defrag"). */
static int
snapshot_walk(struct snapshot_set *s, const char *dir, const char *prefix, int depth,
    const char *const *skip, int choice)
{
	char full[SNAPSHOT_MAX_PATH], sub[SNAPSHOT_MAX_PATH], key[SNAPSHOT_MAX_PATH];
	struct dirent *de;
	struct stat sb;
	DIR *d;
	int r = 0;

	if ((size_t)snprintf(full, sizeof(full), "%s%s", s->o->root, dir) >= sizeof(full) ||
	    (d = opendir(full)) == NULL)
		return 0;
	while (r == 0 && (de = readdir(d)) != NULL) {
		if (snapshot_skip(de->d_name, skip) ||
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= sizeof(sub) ||
		    (size_t)snprintf(key, sizeof(key), "%s%s", prefix, de->d_name) >= sizeof(key))
			continue;
		if (de->d_type == DT_REG) {
			r = snapshot_file_at(s, dirfd(d), full, de->d_name, key, choice);
			continue;
		}
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISDIR(sb.st_mode) && depth > 0) {
			char kdir[SNAPSHOT_MAX_PATH + 1];

			snprintf(kdir, sizeof(kdir), "%s/", key);
			r = snapshot_walk(s, sub, kdir, depth - 1, skip, choice);
		} else if (S_ISREG(sb.st_mode) && (sb.st_mode & 0444) != 0)
			r = snapshot_file(s, key, sub, choice);
	}
	closedir(d);
	return r;
}

/* Numbers N of the entries "<stem>N" of root+dir, sorted; *np of them. */
static int
snapshot_ids(struct snapshot_set *s, const char *dir, const char *stem, long long **idsp,
    size_t *np)
{
	char full[SNAPSHOT_MAX_PATH];
	long long *ids = NULL, t;
	size_t n = 0, i, j, sl = strlen(stem);
	struct dirent *de;
	int64_t v;
	DIR *d;

	*idsp = NULL;
	*np = 0;
	if ((size_t)snprintf(full, sizeof(full), "%s%s", s->o->root, dir) >= sizeof(full) ||
	    (d = opendir(full)) == NULL)
		return 0;
	if ((ids = calloc(SNAPSHOT_MAX_CPUS, sizeof(*ids))) == NULL) {
		closedir(d);
		return BF_ERR_ALLOC;
	}
	while ((de = readdir(d)) != NULL && n < SNAPSHOT_MAX_CPUS)
		if (strncmp(de->d_name, stem, sl) == 0 &&
		    parse_i64(de->d_name + sl, 0, SNAPSHOT_MAX_CPUS * 16, &v) == 0)
			ids[n++] = (long long)v;
	closedir(d);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			t = ids[j];
			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	*idsp = ids;
	*np = n;
	return 0;
}

/* One file of every "<stem>N" under dir, summarised as snapshot_summary(). */
static int
snapshot_per(struct snapshot_set *s, const char *key, const char *dir, const char *stem,
    const long long *ids, size_t n, const char *file)
{
	char path[SNAPSHOT_MAX_PATH], **vals = NULL;
	long long *have = NULL;
	size_t i, k = 0;
	struct buf b;
	int r;

	buf_init(&b, BF_MAX_SNAPSHOT_VALUE);
	if ((vals = calloc(n + 1, sizeof(*vals))) == NULL ||
	    (have = calloc(n + 1, sizeof(*have))) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s%lld/%s", dir, stem, ids[i], file);
		if (snapshot_read(s, path, 0) != 0)
			continue;
		if ((vals[k] = strdup(s->val)) == NULL) {
			r = BF_ERR_ALLOC;
			goto out;
		}
		have[k++] = ids[i];
	}
	/* a summary over the value cap is cut: still a stable value */
	if (k > 0 && snapshot_summary(have, vals, k, n, &b) != 0 && b.len == 0 &&
	    buf_puts(&b, "(too long)") != 0) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	r = snapshot_add(s, key, k > 0 ? b.data : NULL);
out:
	for (i = 0; vals != NULL && i < k; i++)
		free(vals[i]);
	free(vals);
	free(have);
	buf_free(&b);
	return r;
}

static int
snapshot_cpufreq(struct snapshot_set *s)
{
	const char *dir = "/sys/devices/system/cpu/cpufreq";
	char key[128];
	long long *ids = NULL;
	size_t n, i;
	int r;

	if ((r = snapshot_ids(s, dir, "policy", &ids, &n)) != 0)
		goto out;
	for (i = 0; snapshot_policy_files[i] != NULL; i++) {
		snprintf(key, sizeof(key), "cpufreq.%s", snapshot_policy_files[i]);
		if ((r = snapshot_per(s, key, dir, "policy", ids, n, snapshot_policy_files[i])) != 0)
			goto out;
	}
	r = 0;
out:
	free(ids);
	return r;
}

/* C-state limits: per state, its name (first cpu that has it) and which
 * cpus have it disabled. */
static int
snapshot_cpuidle(struct snapshot_set *s)
{
	const char *dir = "/sys/devices/system/cpu";
	char key[128], file[64];
	long long *ids = NULL;
	size_t n, k;
	int r;

	if ((r = snapshot_ids(s, dir, "cpu", &ids, &n)) != 0)
		goto out;
	for (k = 0; k < SNAPSHOT_MAX_IDLE && n > 0; k++) {
		snprintf(file, sizeof(file), "%s/cpu%lld/cpuidle/state%zu/name", dir, ids[0], k);
		if (snapshot_read(s, file, 0) != 0)
			break;
		snprintf(key, sizeof(key), "cpuidle.state%zu.name", k);
		if ((r = snapshot_add(s, key, s->val)) != 0)
			goto out;
		snprintf(key, sizeof(key), "cpuidle.state%zu.disable", k);
		snprintf(file, sizeof(file), "cpuidle/state%zu/disable", k);
		if ((r = snapshot_per(s, key, dir, "cpu", ids, n, file)) != 0)
			goto out;
	}
	r = 0;
out:
	free(ids);
	return r;
}

/* Nodes, memory per node, and hugetlb pools per size and per node. */
static int
snapshot_numa(struct snapshot_set *s)
{
	const char *dir = "/sys/devices/system/node";
	char key[SNAPSHOT_MAX_PATH], path[SNAPSHOT_MAX_PATH];
	long long *ids = NULL, kb;
	size_t n, i, j;
	struct buf b;
	int r;

	buf_init(&b, BF_MAX_SNAPSHOT_VALUE);
	if ((r = snapshot_walk(s, "/sys/kernel/mm/hugepages", "hugetlb/", 1,
	    (const char *const[]){ "free_hugepages", "resv_hugepages", "surplus_hugepages",
	    NULL }, 0)) != 0 ||
	    (r = snapshot_ids(s, dir, "node", &ids, &n)) != 0)
		goto out;
	for (i = 0; i < n; i = j) {	/* "0-3,6" */
		for (j = i + 1; j < n && ids[j] == ids[j - 1] + 1; j++)
			;
		if ((r = j - i > 1 ? buf_printf(&b, "%s%lld-%lld", i ? "," : "", ids[i],
		    ids[j - 1]) : buf_printf(&b, "%s%lld", i ? "," : "", ids[i])) != 0)
			goto out;
	}
	if ((r = snapshot_add(s, "numa.nodes", n > 0 ? b.data : NULL)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/node%lld/meminfo", dir, ids[i]);
		snprintf(key, sizeof(key), "numa.node%lld.mem_total_kb", ids[i]);
		kb = -1;
		if (snapshot_read(s, path, 0) == 0)
			kb = probe_memtotal_kb(s->val, strlen(s->val));
		snprintf(s->val, sizeof(s->val), "%lld", kb);
		if ((r = snapshot_add(s, key, kb >= 0 ? s->val : NULL)) != 0)
			goto out;
		snprintf(path, sizeof(path), "%s/node%lld/hugepages", dir, ids[i]);
		snprintf(key, sizeof(key), "hugetlb/node%lld/", ids[i]);
		if ((r = snapshot_walk(s, path, key, 1, (const char *const[]){ "free_hugepages",
		    "surplus_hugepages", NULL }, 0)) != 0)
			goto out;
	}
	r = 0;
out:
	free(ids);
	buf_free(&b);
	return r;
}

/* CPU identity from cpuinfo, the kernel's compiler, the distro. */
static int
snapshot_cpu(struct snapshot_set *s)
{
	char full[SNAPSHOT_MAX_PATH], num[32], text[1024];
	struct probe_cpu c;
	struct buf b;
	int r, have;

	buf_init(&b, SNAPSHOT_MAX_CPUINFO);
	snprintf(full, sizeof(full), "%s/proc/cpuinfo", s->o->root);
	have = 0;
	{
		FILE *f = fopen(full, "re");
		char chunk[8192];
		size_t n;

		while (f != NULL && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			if (buf_append(&b, chunk, n) != 0)
				break;	/* a cut cpuinfo still names the first cpu */
		if (f != NULL)
			fclose(f);
		have = b.data != NULL && probe_cpuinfo(b.data, b.len, &c) == 0;
	}
	if ((r = snapshot_add(s, "cpu.model", have && c.model[0] ? c.model : NULL)) != 0 ||
	    (r = snapshot_add(s, "cpu.vendor", have && c.vendor[0] ? c.vendor : NULL)) != 0 ||
	    (r = snapshot_add(s, "cpu.microcode", have && c.microcode[0] ? c.microcode : NULL))
	    != 0 ||
	    (r = snapshot_add(s, "cpu.la57", have ? (c.la57 ? "1" : "0") : NULL)) != 0)
		goto out;
	snprintf(num, sizeof(num), "%lld", have ? (long long)c.family : -1LL);
	if ((r = snapshot_add(s, "cpu.family", have && c.family >= 0 ? num : NULL)) != 0)
		goto out;
	snprintf(num, sizeof(num), "%lld", have ? (long long)c.model_no : -1LL);
	if ((r = snapshot_add(s, "cpu.model_number", have && c.model_no >= 0 ? num : NULL)) != 0)
		goto out;
	snprintf(num, sizeof(num), "%lld", have ? (long long)c.stepping : -1LL);
	if ((r = snapshot_add(s, "cpu.stepping", have && c.stepping >= 0 ? num : NULL)) != 0)
		goto out;
	snprintf(num, sizeof(num), "%lld", have ? (long long)c.threads : -1LL);
	if ((r = snapshot_add(s, "cpu.threads", have ? num : NULL)) != 0)
		goto out;
	text[0] = '\0';
	if (snapshot_read(s, "/proc/version", 0) == 0)
		probe_compiler(s->val, text, sizeof(text));
	if ((r = snapshot_add(s, "kernel.compiler", text[0] ? text : NULL)) != 0)
		goto out;
	buf_reset(&b);
	snprintf(full, sizeof(full), "%s/etc/os-release", s->o->root);
	text[0] = '\0';
	{
		FILE *f = fopen(full, "re");
		char chunk[4096];
		size_t n;

		if (f != NULL) {
			if ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
				probe_os_release(chunk, n, text, sizeof(text));
			fclose(f);
		}
	}
	r = snapshot_add(s, "os.pretty_name", text[0] ? text : NULL);
out:
	buf_free(&b);
	return r;
}

/* Kernel config hash, page size, 5-level paging in use, cgroup version. */
static int
snapshot_kernel(struct snapshot_set *s)
{
	char path[SNAPSHOT_MAX_PATH], hex[65], rel[256];
	const char *src = NULL, *cg;
	struct stat sb;
	int r;

	rel[0] = '\0';
	if (snapshot_read(s, "/proc/sys/kernel/osrelease", 0) == 0)
		snprintf(rel, sizeof(rel), "%.*s", (int)sizeof(rel) - 1, s->val);
	snprintf(path, sizeof(path), "%s/boot/config-%s", s->o->root, rel);
	if (rel[0] != '\0' && strchr(rel, '/') == NULL && sha256_file(path, hex) == 0)
		src = "/boot/config";
	else {
		snprintf(path, sizeof(path), "%s/proc/config.gz", s->o->root);
		if (sha256_file(path, hex) == 0)
			src = "/proc/config.gz (gzip bytes)";
	}
	if ((r = snapshot_add(s, "kernel.config_sha256", src != NULL ? hex : NULL)) != 0 ||
	    (r = snapshot_add(s, "kernel.config_source", src)) != 0)
		return r;
	snprintf(s->val, sizeof(s->val), "%ld", sysconf(_SC_PAGESIZE));
	if ((r = snapshot_add(s, "kernel.page_size", s->val)) != 0)
		return r;
#if defined(__x86_64__) || defined(__aarch64__)
	{
		/* the kernel maps above 47 (48) bits only for a hint up there, and
		 * only with 5-level (52-bit) page tables in use */
		void *p = mmap((void *)(1UL << 56), 4096, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		int high = p != MAP_FAILED && (unsigned long)p >= (1UL << 48);

		if (p != MAP_FAILED)
			munmap(p, 4096);
		if ((r = snapshot_add(s, "kernel.va_above_48bit", high ? "1" : "0")) != 0)
			return r;
	}
#endif
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/cgroup.controllers", s->o->root);
	if (stat(path, &sb) == 0)
		cg = "2";
	else {
		snprintf(path, sizeof(path), "%s/sys/fs/cgroup/unified/cgroup.controllers",
		    s->o->root);
		cg = stat(path, &sb) == 0 ? "1 (+2 unified hierarchy)" : "1";
		snprintf(path, sizeof(path), "%s/sys/fs/cgroup", s->o->root);
		if (cg[1] == '\0' && stat(path, &sb) != 0)
			cg = NULL;
	}
	return snapshot_add(s, "cgroup.version", cg);
}


static int
snapshot_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snapshot_ent *)a)->key, ((const struct snapshot_ent *)b)->key);
}

static int
snapshot_collect(struct snapshot_set *s)
{
	size_t i;
	int r;

	for (i = 0; i < sizeof(snapshot_fixed_tab) / sizeof(snapshot_fixed_tab[0]); i++)
		if ((r = snapshot_file(s, snapshot_fixed_tab[i].key, snapshot_fixed_tab[i].path, 0))
		    != 0)
			return r;
	if ((r = snapshot_walk(s, "/sys/kernel/mm/transparent_hugepage", "transparent_hugepage/",
	    2, snapshot_thp_skip, 1)) != 0 ||
	    (r = snapshot_walk(s, "/proc/sys/vm", "vm.", 0, snapshot_vm_skip, 0)) != 0 ||
	    (s->prep == NULL && (r = snapshot_kernel(s)) != 0) || (r = snapshot_cpu(s)) != 0 ||
	    (r = snapshot_cpufreq(s)) != 0 || (r = snapshot_cpuidle(s)) != 0 ||
	    (r = snapshot_numa(s)) != 0)
		return r;
	/* preparing: the kernel's config hash, packages and binaries are the
	 * step's to read (and cost a hash or a dpkg lookup, not an open) */
	if (s->prep != NULL)
		return 0;
	if ((r = snapshot_pkgs(s)) != 0)
		return r;
	return snapshot_bins(s);
}

static void
snapshot_set_free(struct snapshot_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->e[i].key);
		free(s->e[i].val);
	}
	free(s->e);
	free(s);
}

void
snapshot_prepare(const struct snapshot_opts *o, struct snapshot_held *h)
{
	struct snapshot_set *s;

	memset(h, 0, sizeof(*h));
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return;
	s->o = o;
	s->prep = h;
	(void)snapshot_collect(s);
	snapshot_set_free(s);
	if (h->n > 1)
		qsort(h->f, h->n, sizeof(*h->f), snapshot_hfile_cmp);
}

void
snapshot_held_free(struct snapshot_held *h)
{
	size_t i;

	if (h == NULL)
		return;
	for (i = 0; i < h->n; i++) {
		close(h->f[i].fd);
		free(h->f[i].path);
	}
	free(h->f);
	memset(h, 0, sizeof(*h));
}

int
snapshot_build(const struct snapshot_opts *o, struct buf *out)
{
	struct snapshot_set *s;
	size_t i, start = out->len, mark;
	int r;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return BF_ERR_ALLOC;
	s->o = o;
	if ((r = snapshot_collect(s)) != 0)
		goto out;
	qsort(s->e, s->n, sizeof(*s->e), snapshot_cmp);
	if ((r = buf_puts(out, "{")) != 0)
		goto out;
	for (i = 0; i < s->n; i++) {
		if (i > 0 && strcmp(s->e[i].key, s->e[i - 1].key) == 0)
			continue;	/* the same file reached twice: keep one */
		mark = out->len;
		if ((r = buf_puts(out, out->len > start + 1 ? "," : "")) != 0 ||
		    (r = ajson_put_str(out, s->e[i].key, strlen(s->e[i].key))) != 0 ||
		    (r = buf_puts(out, ":")) != 0 ||
		    (r = s->e[i].val != NULL ? ajson_put_str(out, s->e[i].val, strlen(s->e[i].val)) :
		    buf_puts(out, "null")) != 0 || out->len - start > BF_MAX_SNAPSHOT) {
			if (r == BF_ERR_ALLOC)
				goto out;
			out->len = mark;
			out->data[mark] = '\0';
			s->dropped++;
		}
	}
	if (s->dropped > 0 && (r = buf_printf(out, "%s\"~dropped\":\"%zu\"",
	    out->len > start + 1 ? "," : "", s->dropped)) != 0)
		goto out;
	r = buf_puts(out, "}");
out:
	snapshot_set_free(s);
	return r;
}

int
snapshot_emit(const struct snapshot_opts *o)
{
	struct buf obj, line;
	char hex[65];
	int r;

	buf_init(&obj, BF_MAX_SNAPSHOT + 64);
	buf_init(&line, EMIT_MAX_LINE);
	if ((r = snapshot_build(o, &obj)) != 0)
		goto out;
	sha256_hex(obj.data, obj.len, hex);
	if ((r = buf_printf(&line, "{\"type\":\"snapshot\",\"sha256\":\"%s\",\"snapshot\":",
	    hex)) != 0 || (r = buf_append(&line, obj.data, obj.len)) != 0 ||
	    (r = buf_puts(&line, "}")) != 0)
		goto out;
	r = emit_line(&line);
out:
	buf_free(&obj);
	buf_free(&line);
	return r;
}
