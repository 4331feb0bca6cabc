/*
 * knob.c: the knob table and the file-level mechanics of applying and
 * reading knobs back. libc only (the static agent compiles it). Values are
 * validated against the table before any path is touched, and every path
 * is built from table text plus, for mTHP, a parsed integer: no value a job
 * sends can name a file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "knob.h"
#include "knob-int.h"
#include "parse.h"

#define KNOB_THP	"/sys/kernel/mm/transparent_hugepage"
#define KNOB_HUGETLB	"/sys/kernel/mm/hugepages"
#define KNOB_NODE	"/sys/devices/system/node/node"
#define KNOB_MAX_MTHP_KB	((int64_t)16 * 1024 * 1024)	/* 16 GiB pages */
#define KNOB_MAX_NODE	1023
#define KNOB_MAX_POOL	((int64_t)1 << 30)	/* pages in one hugetlb pool */
#define KNOB_MAX_CPUS	KNOB_MAX_FILES

static const char *const knob_v_thp[] = { "never", "madvise", "always", NULL };
static const char *const knob_v_defrag[] = {
	"never", "madvise", "defer", "defer+madvise", "always", NULL
};
static const char *const knob_v_shmem[] = {
	"never", "advise", "within_size", "always", "deny", "force", NULL
};
static const char *const knob_v_mthp[] = { "never", "madvise", "inherit", "always", NULL };
static const char *const knob_v_mthp_shmem[] = {
	"never", "always", "within_size", "advise", "inherit", NULL
};
static const char *const knob_v_smt[] = { "on", "off", NULL };
static const char *const knob_v_gov[] = {
	"performance", "powersave", "schedutil", "ondemand", "conservative", "userspace", NULL
};

static const struct knob knob_tab[] = {
	{ .name = "thp_enabled", .kind = KNOB_BRACKET, .path = KNOB_THP "/enabled",
	  .values = knob_v_thp, .help = "THP for anonymous memory" },
	{ .name = "thp_defrag", .kind = KNOB_BRACKET, .path = KNOB_THP "/defrag",
	  .values = knob_v_defrag, .help = "THP fault-time compaction" },
	{ .name = "thp_shmem_enabled", .kind = KNOB_BRACKET, .path = KNOB_THP "/shmem_enabled",
	  .values = knob_v_shmem, .help = "THP for shmem/tmpfs" },
	{ .name = "khugepaged_pages_to_scan", .kind = KNOB_INT,
	  .path = KNOB_THP "/khugepaged/pages_to_scan", .min = 1, .max = 4194304,
	  .help = "pages khugepaged scans per pass" },
	{ .name = "khugepaged_defrag", .kind = KNOB_INT, .path = KNOB_THP "/khugepaged/defrag",
	  .min = 0, .max = 1, .help = "khugepaged may compact" },
	{ .name = "khugepaged_scan_sleep_ms", .kind = KNOB_INT,
	  .path = KNOB_THP "/khugepaged/scan_sleep_millisecs", .min = 0, .max = 86400000,
	  .help = "khugepaged's sleep between scan passes, ms" },
	{ .name = "khugepaged_alloc_sleep_ms", .kind = KNOB_INT,
	  .path = KNOB_THP "/khugepaged/alloc_sleep_millisecs", .min = 0, .max = 86400000,
	  .help = "khugepaged's sleep after a failed huge page allocation, ms" },
	{ .name = "use_zero_page", .kind = KNOB_INT, .path = KNOB_THP "/use_zero_page",
	  .min = 0, .max = 1, .help = "THP read faults may map the huge zero page" },
	{ .name = "mthp_", .family = KNOB_FAM_SIZE, .kind = KNOB_BRACKET,
	  .path = KNOB_THP "/hugepages-", .tail = "kB/enabled", .sizes = KNOB_THP,
	  .values = knob_v_mthp, .help = "per-size mTHP: mthp_<N>kB, sizes found on the machine" },
	{ .name = "mthp_shmem_", .family = KNOB_FAM_SIZE, .kind = KNOB_BRACKET,
	  .path = KNOB_THP "/hugepages-", .tail = "kB/shmem_enabled", .sizes = KNOB_THP,
	  .values = knob_v_mthp_shmem, .help = "per-size mTHP for shmem: mthp_shmem_<N>kB" },
	{ .name = "nr_hugepages_", .family = KNOB_FAM_SIZE, .kind = KNOB_INT, .pool = 1,
	  .path = KNOB_HUGETLB "/hugepages-", .tail = "kB/nr_hugepages", .sizes = KNOB_HUGETLB,
	  .min = 0, .max = KNOB_MAX_POOL,
	  .help = "hugetlb pool of one size: nr_hugepages_<N>kB, pages obtained read back" },
	{ .name = "nr_hugepages_", .family = KNOB_FAM_SIZE_NODE, .kind = KNOB_INT, .pool = 1,
	  .path = KNOB_NODE, .mid = "/hugepages/hugepages-", .tail = "kB/nr_hugepages",
	  .sizes = KNOB_HUGETLB, .min = 0, .max = KNOB_MAX_POOL,
	  .help = "hugetlb pool of one size on one node: nr_hugepages_<N>kB_node<M>" },
	{ .name = "numa_balancing", .kind = KNOB_INT, .path = "/proc/sys/kernel/numa_balancing",
	  .min = 0, .max = 3, .help = "automatic NUMA balancing (kernel.numa_balancing)" },
	{ .name = "randomize_va_space", .kind = KNOB_INT,
	  .path = "/proc/sys/kernel/randomize_va_space", .min = 0, .max = 2,
	  .help = "system-wide ASLR (kernel.randomize_va_space)" },
	{ .name = "governor", .kind = KNOB_GOVERNOR, .path = KNOB_CPU "/cpu",
	  .tail = "/cpufreq/scaling_governor", .values = knob_v_gov,
	  .help = "cpufreq governor of every cpu" },
	{ .name = "boost", .kind = KNOB_BOOST, .path = KNOB_CPU "/cpufreq/boost", .min = 0, .max = 1,
	  .help = "turbo/boost: 1 on, 0 off (cpufreq/boost or intel_pstate/no_turbo)" },
	{ .name = "smt", .kind = KNOB_SMT, .path = KNOB_CPU "/smt/control", .values = knob_v_smt,
	  .help = "SMT siblings on or off (smt/control; smt/active read back)" },
	{ .name = "cpuidle_max_latency_us", .kind = KNOB_CPUIDLE,
	  .path = KNOB_CPU "/cpu", .tail = "/cpuidle", .min = 0, .max = 100000000,
	  .help = "disable every C-state whose exit latency exceeds N us, on every cpu" },
	{ .name = "drop_caches", .kind = KNOB_ACTION, .path = "/proc/sys/vm/drop_caches",
	  .min = 1, .max = 3,
	  .help = "sync and write this to drop_caches before each iteration" },
	{ .name = "compact_memory", .kind = KNOB_ACTION, .path = "/proc/sys/vm/compact_memory",
	  .min = 1, .max = 1,
	  .help = "1: compact all zones before each iteration (after drop_caches)" },
};
#define KNOB_N	(sizeof(knob_tab) / sizeof(knob_tab[0]))

static char knob_root[KNOB_MAX_PATH / 2];

const struct knob *
knob_table(size_t *np)
{
	*np = KNOB_N;
	return knob_tab;
}

int
knob_set_root(const char *root)
{
	size_t n = strlen(root);

	if (n >= sizeof(knob_root))
		return BF_ERR_TOOBIG;
	memcpy(knob_root, root, n + 1);
	return 0;
}

/* Leading decimal digits of s, no leading zero unless the number is 0. */
static size_t
knob_digits(const char *s)
{
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	return n > 1 && s[0] == '0' ? 0 : n;
}

/*
 * name as a member of family k: "mthp_64kB" -> kb 64; for a _NODE family
 * "nr_hugepages_2048kB_node1" -> kb 2048, node 1. BF_ERR_PARSE unless it
 * is exactly <prefix><digits>kB[_node<digits>].
 */
static int
knob_fam_parse(const struct knob *k, const char *name, int64_t *kb, int64_t *node)
{
	size_t pre = strlen(k->name), n;
	const char *p;

	*kb = 0;
	*node = 0;
	if (strncmp(name, k->name, pre) != 0)
		return BF_ERR_PARSE;
	p = name + pre;
	if ((n = knob_digits(p)) == 0 || p[0] == '0' || strncmp(p + n, "kB", 2) != 0 ||
	    parse_i64_n(p, n, 1, KNOB_MAX_MTHP_KB, kb) != 0)
		return BF_ERR_PARSE;
	p += n + 2;
	if (k->family == KNOB_FAM_SIZE)
		return *p == '\0' ? 0 : BF_ERR_PARSE;
	if (strncmp(p, "_node", 5) != 0)
		return BF_ERR_PARSE;
	p += 5;
	if ((n = knob_digits(p)) == 0 || p[n] != '\0' ||
	    parse_i64_n(p, n, 0, KNOB_MAX_NODE, node) != 0)
		return BF_ERR_PARSE;
	return 0;
}

const struct knob *
knob_find(const char *name)
{
	int64_t kb, node;
	size_t i;

	for (i = 0; i < KNOB_N; i++) {
		if (!knob_tab[i].family && strcmp(name, knob_tab[i].name) == 0)
			return &knob_tab[i];
		if (knob_tab[i].family && knob_fam_parse(&knob_tab[i], name, &kb, &node) == 0)
			return &knob_tab[i];
	}
	return NULL;
}

/* Printable, quoted and cut form of a hostile value for a message. */
static void
knob_repr(const char *v, char *out, size_t outsz)
{
	size_t i, o = 0;

	if (outsz < 8)
		return;
	out[o++] = '"';
	for (i = 0; v[i] != '\0' && o + 6 < outsz; i++) {
		unsigned char c = (unsigned char)v[i];

		if (i == 40) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
			o += (size_t)snprintf(out + o, outsz - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o++] = '"';
	out[o] = '\0';
}

static void
knob_list(const char *const *vals, char *out, size_t outsz)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; vals[i] != NULL && o < outsz; i++)
		o += (size_t)snprintf(out + o, outsz - o, "%s%s", i ? ", " : "", vals[i]);
}

/* Every knob's name, families as mthp_<N>kB, for the "is not a knob" message. */
static void
knob_names(char *out, size_t outsz)
{
	static const char *const fam[] = { "", "<N>kB", "<N>kB_node<M>" };
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < KNOB_N && o < outsz; i++)
		o += (size_t)snprintf(out + o, outsz - o, "%s%s%s", i ? ", " : "",
		    knob_tab[i].name, fam[knob_tab[i].family]);
}

int
knob_check(const char *name, const char *value, char *why, size_t whysz)
{
	const struct knob *k;
	char rep[64], list[400];
	int64_t v;
	size_t i;

	if ((k = knob_find(name)) == NULL) {
		knob_repr(name, rep, sizeof(rep));
		knob_names(list, sizeof(list));
		snprintf(why, whysz, "%s is not a knob (%s)", rep, list);
		return BF_ERR_NOTFOUND;
	}
	knob_repr(value, rep, sizeof(rep));
	if (k->values == NULL) {
		if (parse_i64(value, k->min, k->max, &v) != 0) {
			snprintf(why, whysz, "%s is not an integer in %lld..%lld", rep,
			    (long long)k->min, (long long)k->max);
			return BF_ERR_INVALID;
		}
		return 0;
	}
	for (i = 0; k->values[i] != NULL; i++)
		if (strcmp(value, k->values[i]) == 0)
			return 0;
	knob_list(k->values, list, sizeof(list));
	snprintf(why, whysz, "%s is not one of %s", rep, list);
	return BF_ERR_INVALID;
}

int
knob_validate(const char *name, const char *value, char *errbuf, size_t errsz)
{
	char why[KNOB_MAX_WHY];
	int r;

	if ((r = knob_check(name, value, why, sizeof(why))) != 0) {
		if (r == BF_ERR_NOTFOUND)
			snprintf(errbuf, errsz, "knobs: %s", why);
		else
			snprintf(errbuf, errsz, "knobs.%.64s: %s", name, why);
	}
	return r;
}

int
knob_bracket(const char *text, size_t len, char *out, size_t outsz)
{
	const char *open = NULL, *close = NULL;
	size_t i, n;

	for (i = 0; i < len; i++) {
		if (text[i] == '[') {
			if (open != NULL)
				return BF_ERR_PARSE;
			open = text + i;
		} else if (text[i] == ']') {
			if (open == NULL || close != NULL)
				return BF_ERR_PARSE;
			close = text + i;
		}
	}
	if (open == NULL || close == NULL || close <= open + 1)
		return BF_ERR_PARSE;
	n = (size_t)(close - open - 1);
	if (n >= outsz)
		return BF_ERR_PARSE;
	for (i = 0; i < n; i++)
		if ((unsigned char)open[1 + i] <= ' ' || open[1 + i] == 0x7f)
			return BF_ERR_PARSE;
	memcpy(out, open + 1, n);
	out[n] = '\0';
	return 0;
}

int
knob_slurp(const char *path, char *buf, size_t bufsz, char *why, size_t whysz)
{
	size_t len = 0;
	ssize_t n;
	int fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(why, whysz, "cannot read %s: %s", path, strerror(errno));
		r = errno == ENOENT ? BF_ERR_NOTFOUND : BF_ERR_IO;
		goto out;
	}
	while (len + 1 < bufsz) {
		n = read(fd, buf + len, bufsz - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(why, whysz, "cannot read %s: %s", path, strerror(errno));
			r = BF_ERR_IO;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		len--;
	buf[len] = '\0';
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	return r;
}

int
knob_mkpath(char *out, size_t outsz, const char *head, const char *tail, long long arg)
{
	int n;

	if (tail != NULL)
		n = snprintf(out, outsz, "%s%s%lld%s", knob_root, head, arg, tail);
	else
		n = snprintf(out, outsz, "%s%s", knob_root, head);
	return n < 0 || (size_t)n >= outsz ? BF_ERR_TOOBIG : 0;
}

static int
knob_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The hugepages-<N>kB entries of directory head (under the root), ascending. */
static int
knob_sizes(const char *head, char *out, size_t outsz)
{
	char dir[KNOB_MAX_PATH];
	int64_t kb[64];
	struct dirent *de;
	size_t n = 0, i, o = 0, len;
	DIR *d = NULL;
	int r;

	out[0] = '\0';
	if ((r = knob_mkpath(dir, sizeof(dir), head, NULL, 0)) != 0)
		goto out;
	if ((d = opendir(dir)) == NULL) {
		snprintf(out, outsz, "none");
		r = BF_ERR_IO;
		goto out;
	}
	while ((de = readdir(d)) != NULL && n < sizeof(kb) / sizeof(kb[0])) {
		len = strlen(de->d_name);
		if (len > 12 && strncmp(de->d_name, "hugepages-", 10) == 0 &&
		    strcmp(de->d_name + len - 2, "kB") == 0 &&
		    parse_i64_n(de->d_name + 10, len - 12, 4, KNOB_MAX_MTHP_KB, &kb[n]) == 0)
			n++;
	}
	qsort(kb, n, sizeof(kb[0]), knob_cmp_i64);
	for (i = 0; i < n && o < outsz; i++)
		o += (size_t)snprintf(out + o, outsz - o, "%s%lldkB", i ? ", " : "",
		    (long long)kb[i]);
	if (n == 0)
		snprintf(out, outsz, "none");
	r = 0;
out:
	if (d != NULL)
		closedir(d);
	return r;
}

int
knob_mthp_sizes(char *out, size_t outsz)
{
	return knob_sizes(KNOB_THP, out, outsz);
}

int
knob_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

int
knob_path(const char *name, char *out, size_t outsz, long long *node)
{
	const struct knob *k = knob_find(name);
	int64_t kb = 0, nd = 0;
	int n;

	*node = -1;
	if (k == NULL)
		return BF_ERR_NOTFOUND;
	if (k->kind == KNOB_GOVERNOR || k->kind == KNOB_CPUIDLE)
		return BF_ERR_INVALID;
	if (k->family && knob_fam_parse(k, name, &kb, &nd) != 0)
		return BF_ERR_NOTFOUND;
	if (k->family == KNOB_FAM_SIZE_NODE) {
		*node = (long long)nd;
		n = snprintf(out, outsz, "%s%lld%s%lld%s", k->path, (long long)nd, k->mid,
		    (long long)kb, k->tail);
	} else if (k->family)
		n = snprintf(out, outsz, "%s%lld%s", k->path, (long long)kb, k->tail);
	else
		n = snprintf(out, outsz, "%s", k->path);
	return n < 0 || (size_t)n >= outsz ? BF_ERR_TOOBIG : 0;
}

/* The file of a family member: "mthp_64kB" -> .../hugepages-64kB/enabled. A
 * missing one is named with what the machine has instead. */
static int
knob_fam_file(const struct knob *k, const char *name, char *path, char *why, size_t whysz)
{
	char sizes[256], dir[KNOB_MAX_PATH];
	int64_t kb, node;
	int r;

	if ((r = knob_fam_parse(k, name, &kb, &node)) != 0) {
		snprintf(why, whysz, "not a member of %s", k->name);
		return r;
	}
	if (k->family == KNOB_FAM_SIZE_NODE) {
		if ((r = knob_mkpath(dir, sizeof(dir), k->path, k->mid, (long long)node)) != 0)
			return r;
		if ((size_t)snprintf(path, KNOB_MAX_PATH, "%s%lld%s", dir, (long long)kb,
		    k->tail) >= KNOB_MAX_PATH)
			return BF_ERR_TOOBIG;
		if ((r = knob_mkpath(dir, sizeof(dir), k->path, "", (long long)node)) != 0)
			return r;
		if (!knob_exists(dir)) {
			snprintf(why, whysz, "no NUMA node %lld on this machine", (long long)node);
			return BF_ERR_NOTFOUND;
		}
	} else if ((r = knob_mkpath(path, KNOB_MAX_PATH, k->path, k->tail, (long long)kb)) != 0)
		return r;
	if (knob_exists(path))
		return 0;
	(void)knob_sizes(k->sizes, sizes, sizeof(sizes));
	if (k->pool)
		snprintf(why, whysz, "no hugetlb pool of %lldkB pages on this machine; "
		    "available: %s", (long long)kb, sizes);
	else
		snprintf(why, whysz, "no such mTHP size %lldkB on this machine; available: %s",
		    (long long)kb, sizes);
	return BF_ERR_NOTFOUND;
}

int
knob_files(const char *name, char (*paths)[KNOB_MAX_PATH], size_t max, size_t *np,
    char *why, size_t whysz)
{
	const struct knob *k;
	char probe[KNOB_MAX_PATH];
	int64_t cpu;
	size_t n = 0;
	int r;

	*np = 0;
	if ((k = knob_find(name)) == NULL || max == 0) {
		snprintf(why, whysz, "not a knob");
		return BF_ERR_NOTFOUND;
	}
	switch (k->kind) {
	case KNOB_GOVERNOR:
		for (cpu = 0; cpu < KNOB_MAX_CPUS && n < max; cpu++) {
			if ((r = knob_mkpath(paths[n], KNOB_MAX_PATH, k->path, k->tail,
			    (long long)cpu)) != 0)
				return r;
			if (!knob_exists(paths[n])) {
				/* a cpu without cpufreq ends the list; a missing cpuN too */
				if ((r = knob_mkpath(probe, sizeof(probe), KNOB_CPU "/cpu", "",
				    (long long)cpu)) != 0)
					return r;
				if (!knob_exists(probe))
					break;
				continue;
			}
			n++;
		}
		if (n == 0) {
			snprintf(why, whysz, "no cpufreq scaling_governor on this machine");
			return BF_ERR_NOTFOUND;
		}
		break;
	case KNOB_BOOST:
		if ((r = knob_mkpath(paths[0], KNOB_MAX_PATH, k->path, NULL, 0)) != 0)
			return r;
		if (!knob_exists(paths[0]) &&
		    ((r = knob_mkpath(paths[0], KNOB_MAX_PATH,
		    KNOB_CPU "/intel_pstate/no_turbo", NULL, 0)) != 0 || !knob_exists(paths[0]))) {
			snprintf(why, whysz, "no cpufreq/boost or intel_pstate/no_turbo on this "
			    "machine");
			return BF_ERR_NOTFOUND;
		}
		n = 1;
		break;
	case KNOB_SMT:
		if ((r = knob_smt_files(paths, &n, why, whysz)) != 0)
			return r;
		break;
	case KNOB_CPUIDLE:
		if ((r = knob_cpuidle_files(paths, max, &n, why, whysz)) != 0)
			return r;
		break;
	default:
		if (k->family) {
			if ((r = knob_fam_file(k, name, paths[0], why, whysz)) != 0)
				return r;
		} else {
			if ((r = knob_mkpath(paths[0], KNOB_MAX_PATH, k->path, NULL, 0)) != 0)
				return r;
			if (!knob_exists(paths[0])) {
				snprintf(why, whysz, "%s does not exist on this machine", paths[0]);
				return BF_ERR_NOTFOUND;
			}
		}
		n = 1;
		break;
	}
	*np = n;
	return 0;
}

int
knob_file_get(const char *name, const char *path, char *out, size_t outsz, char *why,
    size_t whysz)
{
	const struct knob *k;
	char raw[KNOB_MAX_READ];
	size_t len;
	int r;

	if ((k = knob_find(name)) == NULL) {
		snprintf(why, whysz, "not a knob");
		return BF_ERR_NOTFOUND;
	}
	if ((r = knob_slurp(path, raw, sizeof(raw), why, whysz)) != 0)
		return r;
	if (k->kind == KNOB_BRACKET) {
		if ((r = knob_bracket(raw, strlen(raw), out, outsz)) != 0)
			snprintf(why, whysz, "%s: no [selected] value in \"%.80s\"", path, raw);
		return r;
	}
	len = strlen(raw);
	if (len >= outsz || len == 0) {
		snprintf(why, whysz, "%s: unexpected content \"%.80s\"", path, raw);
		return BF_ERR_PARSE;
	}
	memcpy(out, raw, len + 1);
	return 0;
}

int
knob_file_put(const char *path, const char *value, char *why, size_t whysz)
{
	size_t len = strlen(value);
	ssize_t n;
	int fd, r;

	if ((fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0) {
		snprintf(why, whysz, "cannot open %s: %s", path, strerror(errno));
		r = BF_ERR_SYS;
		goto out;
	}
	do
		n = write(fd, value, len);
	while (n < 0 && errno == EINTR);
	if (n < 0 || (size_t)n != len) {
		snprintf(why, whysz, "writing \"%s\" to %s: %s%s", value, path,
		    n < 0 ? strerror(errno) : "short write",
		    n < 0 && errno == EINVAL ? " (value not accepted by the kernel)" : "");
		r = BF_ERR_SYS;
		goto out;
	}
	r = 0;
out:
	if (fd >= 0 && close(fd) != 0 && r == 0) {
		/* sysfs may report a rejected value only at close */
		snprintf(why, whysz, "writing \"%s\" to %s: %s", value, path, strerror(errno));
		r = BF_ERR_SYS;
	}
	return r;
}

static int
knob_is_no_turbo(const char *path)
{
	size_t n = strlen(path);

	return n >= 8 && strcmp(path + n - 8, "no_turbo") == 0;
}

/* A freshly allocated path array; the governor needs one per cpu. */
static char (*knob_paths_alloc(void))[KNOB_MAX_PATH]
{
	return calloc(KNOB_MAX_FILES, KNOB_MAX_PATH);
}

int
knob_read(const char *name, char *out, size_t outsz, char *why, size_t whysz)
{
	char (*paths)[KNOB_MAX_PATH] = NULL;
	char v[KNOB_MAX_VALUE], first[KNOB_MAX_VALUE];
	const struct knob *k;
	size_t n = 0, i, o = 0;
	int r, mixed = 0;

	if ((k = knob_find(name)) == NULL || k->kind == KNOB_ACTION) {
		snprintf(why, whysz, "%s cannot be read back", name);
		r = BF_ERR_INVALID;
		goto out;
	}
	if (k->kind == KNOB_SMT) {
		r = knob_smt_read(out, outsz, why, whysz);
		goto out;
	}
	if (k->kind == KNOB_CPUIDLE) {
		r = knob_cpuidle_read(out, outsz, why, whysz);
		goto out;
	}
	if ((paths = knob_paths_alloc()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = knob_files(name, paths, KNOB_MAX_FILES, &n, why, whysz)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		if ((r = knob_file_get(name, paths[i], v, sizeof(v), why, whysz)) != 0)
			goto out;
		if (i == 0)
			memcpy(first, v, sizeof(first));
		else if (strcmp(first, v) != 0)
			mixed = 1;
	}
	if (k->kind == KNOB_BOOST && knob_is_no_turbo(paths[0]))
		snprintf(first, sizeof(first), "%s", strcmp(first, "0") == 0 ? "1" : "0");
	if (!mixed) {
		if ((size_t)snprintf(out, outsz, "%s", first) >= outsz) {
			r = BF_ERR_TOOBIG;
			goto out;
		}
		r = 0;
		goto out;
	}
	/* cpus disagree: say which has what, cut to the buffer */
	out[0] = '\0';
	for (i = 0; i < n && o + 1 < outsz; i++) {
		if (knob_file_get(name, paths[i], v, sizeof(v), why, whysz) != 0)
			snprintf(v, sizeof(v), "?");
		o += (size_t)snprintf(out + o, outsz - o, "%s%zu:%s", i ? "," : "", i, v);
	}
	r = 0;
out:
	free(paths);
	return r;
}

int
knob_write(const char *name, const char *value, char *why, size_t whysz)
{
	char (*paths)[KNOB_MAX_PATH] = NULL;
	const struct knob *k;
	const char *put = value;
	size_t n = 0, i;
	int r;

	if ((r = knob_check(name, value, why, whysz)) != 0)
		goto out;
	k = knob_find(name);
	if (k->kind == KNOB_CPUIDLE) {
		r = knob_cpuidle_write(value, why, whysz);
		goto out;
	}
	if ((paths = knob_paths_alloc()) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if (k->kind == KNOB_ACTION) {
		if ((r = knob_mkpath(paths[0], KNOB_MAX_PATH, k->path, NULL, 0)) != 0)
			goto out;
		n = 1;
	} else if ((r = knob_files(name, paths, KNOB_MAX_FILES, &n, why, whysz)) != 0)
		goto out;
	if (k->kind == KNOB_BOOST && knob_is_no_turbo(paths[0]))
		put = strcmp(value, "0") == 0 ? "1" : "0";
	for (i = 0; i < n; i++)
		if ((r = knob_file_put(paths[i], put, why, whysz)) != 0)
			goto out;
	r = 0;
out:
	free(paths);
	return r;
}

int
knob_same(const char *name, const char *want, const char *got)
{
	const struct knob *k = knob_find(name);
	int64_t a, b;

	if (k != NULL && k->kind == KNOB_CPUIDLE)
		return knob_cpuidle_same(want, got);
	if (k != NULL && k->values == NULL &&
	    parse_i64(want, INT64_MIN, INT64_MAX, &a) == 0 &&
	    parse_i64(got, INT64_MIN, INT64_MAX, &b) == 0)
		return a == b;
	return strcmp(want, got) == 0;
}

void
knob_mismatch(const char *name, const char *want, const char *got, char *why, size_t whysz)
{
	const struct knob *k = knob_find(name);
	int64_t a, b;

	if (k != NULL && k->pool && parse_i64(want, 0, KNOB_MAX_POOL, &a) == 0 &&
	    parse_i64(got, 0, INT64_MAX, &b) == 0 && b < a) {
		snprintf(why, whysz, "asked for %lld pages, the kernel gave %lld (%lld short: "
		    "not enough free contiguous memory; compact_memory, or reserve the pool at "
		    "boot)", (long long)a, (long long)b, (long long)(a - b));
		return;
	}
	snprintf(why, whysz, "set to \"%s\" but reads back \"%s\"", want, got);
}

int
knob_action_exists(const char *name, char *why, size_t whysz)
{
	const struct knob *k = knob_find(name);
	char path[KNOB_MAX_PATH];

	if (k == NULL || k->kind != KNOB_ACTION ||
	    knob_mkpath(path, sizeof(path), k->path, NULL, 0) != 0)
		return 0;
	if (knob_exists(path))
		return 1;
	snprintf(why, whysz, "%s does not exist on this machine", path);
	return 0;
}
