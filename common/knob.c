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
#include "parse.h"

#define KNOB_THP	"/sys/kernel/mm/transparent_hugepage"
#define KNOB_CPU	"/sys/devices/system/cpu"
#define KNOB_MAX_MTHP_KB	((int64_t)16 * 1024 * 1024)	/* 16 GiB pages */
#define KNOB_MAX_READ	4096
#define KNOB_MAX_CPUS	KNOB_MAX_FILES

static const char *const knob_v_thp[] = { "never", "madvise", "always", NULL };
static const char *const knob_v_defrag[] = {
	"never", "madvise", "defer", "defer+madvise", "always", NULL
};
static const char *const knob_v_shmem[] = {
	"never", "advise", "within_size", "always", "deny", "force", NULL
};
static const char *const knob_v_mthp[] = { "never", "madvise", "inherit", "always", NULL };
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
	{ .name = "mthp_", .family = 1, .kind = KNOB_BRACKET, .path = KNOB_THP "/hugepages-",
	  .tail = "kB/enabled", .values = knob_v_mthp,
	  .help = "per-size mTHP: mthp_<N>kB, sizes found on the machine" },
	{ .name = "randomize_va_space", .kind = KNOB_INT,
	  .path = "/proc/sys/kernel/randomize_va_space", .min = 0, .max = 2,
	  .help = "system-wide ASLR (kernel.randomize_va_space)" },
	{ .name = "governor", .kind = KNOB_GOVERNOR, .path = KNOB_CPU "/cpu",
	  .tail = "/cpufreq/scaling_governor", .values = knob_v_gov,
	  .help = "cpufreq governor of every cpu" },
	{ .name = "boost", .kind = KNOB_BOOST, .path = KNOB_CPU "/cpufreq/boost", .min = 0, .max = 1,
	  .help = "turbo/boost: 1 on, 0 off (cpufreq/boost or intel_pstate/no_turbo)" },
	{ .name = "drop_caches", .kind = KNOB_ACTION, .path = "/proc/sys/vm/drop_caches",
	  .min = 1, .max = 3,
	  .help = "sync and write this to drop_caches before each iteration" },
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

/* "mthp_64kB" -> 64; BF_ERR_PARSE unless it is exactly mthp_<digits>kB. */
static int
knob_mthp_kb(const char *name, int64_t *kb)
{
	size_t n = strlen(name);

	if (n < 8 || strncmp(name, "mthp_", 5) != 0 || strcmp(name + n - 2, "kB") != 0 ||
	    name[5] == '0' || name[5] == '+' || name[5] == '-')
		return BF_ERR_PARSE;
	return parse_i64_n(name + 5, n - 7, 1, KNOB_MAX_MTHP_KB, kb);
}

const struct knob *
knob_find(const char *name)
{
	int64_t kb;
	size_t i;

	for (i = 0; i < KNOB_N; i++) {
		if (!knob_tab[i].family && strcmp(name, knob_tab[i].name) == 0)
			return &knob_tab[i];
		if (knob_tab[i].family && knob_mthp_kb(name, &kb) == 0)
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

int
knob_check(const char *name, const char *value, char *why, size_t whysz)
{
	const struct knob *k;
	char rep[64], list[256];
	int64_t v;
	size_t i;

	if ((k = knob_find(name)) == NULL) {
		knob_repr(name, rep, sizeof(rep));
		snprintf(why, whysz, "%s is not a knob (thp_enabled, thp_defrag, "
		    "thp_shmem_enabled, khugepaged_pages_to_scan, khugepaged_defrag, "
		    "mthp_<N>kB, randomize_va_space, governor, boost, drop_caches)", rep);
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

/* Read a small file into buf (NUL-terminated, trailing whitespace cut). */
static int
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

/* root + head [+ arg + tail]: a numbered path (cpuN, hugepages-NkB) has a tail. */
static int
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

int
knob_mthp_sizes(char *out, size_t outsz)
{
	char dir[KNOB_MAX_PATH];
	int64_t kb[64];
	struct dirent *de;
	size_t n = 0, i, o = 0, len;
	DIR *d = NULL;
	int r;

	out[0] = '\0';
	if ((r = knob_mkpath(dir, sizeof(dir), KNOB_THP, NULL, 0)) != 0)
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

static int
knob_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

int
knob_files(const char *name, char (*paths)[KNOB_MAX_PATH], size_t max, size_t *np,
    char *why, size_t whysz)
{
	const struct knob *k;
	char sizes[256], probe[KNOB_MAX_PATH];
	int64_t kb = 0, cpu;
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
	default:
		if (k->family && (r = knob_mthp_kb(name, &kb)) != 0) {
			snprintf(why, whysz, "not an mTHP size");
			return r;
		}
		if ((r = knob_mkpath(paths[0], KNOB_MAX_PATH, k->path, k->tail,
		    (long long)kb)) != 0)
			return r;
		if (!knob_exists(paths[0])) {
			if (k->family) {
				(void)knob_mthp_sizes(sizes, sizeof(sizes));
				snprintf(why, whysz, "no such mTHP size %lldkB on this machine; "
				    "available: %s", (long long)kb, sizes);
			} else
				snprintf(why, whysz, "%s does not exist on this machine", paths[0]);
			return BF_ERR_NOTFOUND;
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

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
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

	if (k != NULL && k->values == NULL &&
	    parse_i64(want, INT64_MIN, INT64_MAX, &a) == 0 &&
	    parse_i64(got, INT64_MIN, INT64_MAX, &b) == 0)
		return a == b;
	return strcmp(want, got) == 0;
}
