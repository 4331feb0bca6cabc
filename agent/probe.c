/*
 * probe.c: the machine fingerprint. Every source is a small file under
 * /proc, /sys or /etc; one that cannot be read gives null, never a guess.
 * The identity hash covers what makes two machines comparable (CPU model
 * and stepping, topology, memory rounded to GiB), not what a reboot or an
 * upgrade changes (kernel, cmdline, microcode), which are recorded beside.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "emit.h"
#include "err.h"
#include "ajson.h"
#include "knob.h"
#include "parse.h"
#include "probe.h"
#include "sha256.h"

#define PROBE_MAX_FILE	(1024 * 1024)	/* cpuinfo of a 512-thread machine fits */
#define PROBE_MAX_IDS	4096
#define PROBE_MAX_NODES	1024

/* Value of "key<spaces>: value" on line l[0..n) into out; 1 when the key matches. */
static int
probe_kv(const char *l, size_t n, const char *key, char *out, size_t outsz)
{
	size_t k = strlen(key), i;

	if (n < k || memcmp(l, key, k) != 0)
		return 0;
	for (i = k; i < n && (l[i] == ' ' || l[i] == '\t'); i++)
		;
	if (i >= n || l[i] != ':')
		return 0;
	for (i++; i < n && (l[i] == ' ' || l[i] == '\t'); i++)
		;
	snprintf(out, outsz, "%.*s", (int)(n - i), l + i);
	return 1;
}

static int64_t
probe_num(const char *s)
{
	int64_t v;

	if (parse_i64(s, 0, INT64_MAX, &v) == 0)
		return v;
	/* "0x11" (arm64 cpuinfo) */
	if (s[0] == '0' && s[1] == 'x') {
		char *end;
		unsigned long long u;

		errno = 0;
		u = strtoull(s + 2, &end, 16);
		if (errno == 0 && *end == '\0' && end != s + 2 && u <= INT64_MAX)
			return (int64_t)u;
	}
	return -1;
}

static int
probe_has_word(const char *list, const char *word)
{
	size_t w = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[w] == '\0' || p[w] == ' '))
			return 1;
		p += w;
	}
	return 0;
}

int
probe_cpuinfo(const char *text, size_t len, struct probe_cpu *c)
{
	static int64_t ids[PROBE_MAX_IDS], pairs[PROBE_MAX_IDS];
	char v[4096];
	const char *l = text, *end = text + len, *nl;
	int64_t phys = -1, nids = 0, npairs = 0, x, i;
	int have_phys = 0;

	memset(c, 0, sizeof(*c));
	c->family = c->model_no = c->stepping = -1;
	while (l < end) {
		size_t n;

		nl = memchr(l, '\n', (size_t)(end - l));
		n = nl != NULL ? (size_t)(nl - l) : (size_t)(end - l);
		if (probe_kv(l, n, "processor", v, sizeof(v)))
			c->threads++;
		else if (c->model[0] == '\0' && probe_kv(l, n, "model name", v, sizeof(v)))
			snprintf(c->model, sizeof(c->model), "%.*s", (int)sizeof(c->model) - 1, v);
		else if (c->vendor[0] == '\0' && (probe_kv(l, n, "vendor_id", v, sizeof(v)) ||
		    probe_kv(l, n, "CPU implementer", v, sizeof(v))))
			snprintf(c->vendor, sizeof(c->vendor), "%.*s", (int)sizeof(c->vendor) - 1, v);
		else if (c->family < 0 && (probe_kv(l, n, "cpu family", v, sizeof(v)) ||
		    probe_kv(l, n, "CPU architecture", v, sizeof(v))))
			c->family = probe_num(v);
		else if (c->model_no < 0 && (probe_kv(l, n, "model", v, sizeof(v)) ||
		    probe_kv(l, n, "CPU part", v, sizeof(v))))
			c->model_no = probe_num(v);
		else if (c->stepping < 0 && (probe_kv(l, n, "stepping", v, sizeof(v)) ||
		    probe_kv(l, n, "CPU variant", v, sizeof(v))))
			c->stepping = probe_num(v);
		else if (c->microcode[0] == '\0' && probe_kv(l, n, "microcode", v, sizeof(v)))
			snprintf(c->microcode, sizeof(c->microcode), "%.*s",
			    (int)sizeof(c->microcode) - 1, v);
		else if (probe_kv(l, n, "flags", v, sizeof(v)) && probe_has_word(v, "la57"))
			c->la57 = 1;
		else if (probe_kv(l, n, "physical id", v, sizeof(v))) {
			have_phys = 1;
			phys = probe_num(v);
			for (i = 0; i < nids && ids[i] != phys; i++)
				;
			if (i == nids && nids < PROBE_MAX_IDS)
				ids[nids++] = phys;
		} else if (probe_kv(l, n, "core id", v, sizeof(v)) &&
		    (x = probe_num(v)) >= 0) {
			x = (phys < 0 ? 0 : phys) * 1000003 + x;
			for (i = 0; i < npairs && pairs[i] != x; i++)
				;
			if (i == npairs && npairs < PROBE_MAX_IDS)
				pairs[npairs++] = x;
		}
		l += n + 1;
	}
	c->sockets = have_phys ? nids : 1;
	c->cores = npairs > 0 ? npairs : c->threads;
	if (c->model[0] == '\0' && c->model_no >= 0)
		snprintf(c->model, sizeof(c->model), "part 0x%llx", (long long)c->model_no);
	return c->threads > 0 ? 0 : BF_ERR_PARSE;
}

void
probe_os_release(const char *text, size_t len, char *out, size_t outsz)
{
	const char *l = text, *end = text + len, *nl, *v;
	size_t n, vn;

	out[0] = '\0';
	while (l < end) {
		nl = memchr(l, '\n', (size_t)(end - l));
		n = nl != NULL ? (size_t)(nl - l) : (size_t)(end - l);
		if (n > 12 && memcmp(l, "PRETTY_NAME=", 12) == 0) {
			v = l + 12;
			vn = n - 12;
			if (vn >= 2 && (v[0] == '"' || v[0] == '\'') && v[vn - 1] == v[0]) {
				v++;
				vn -= 2;
			}
			snprintf(out, outsz, "%.*s", (int)vn, v);
			return;
		}
		l += n + 1;
	}
}

int
probe_cmdline_has(const char *cmdline, const char *word)
{
	size_t w = strlen(word);
	const char *p = cmdline;

	while ((p = strstr(p, word)) != NULL) {
		if ((p == cmdline || p[-1] == ' ') &&
		    (p[w] == '\0' || p[w] == ' ' || p[w] == '=' || p[w] == '\n'))
			return 1;
		p += w;
	}
	return 0;
}

void
probe_compiler(const char *version, char *out, size_t outsz)
{
	const char *p = version, *start = NULL;
	int depth = 0, group = 0;

	out[0] = '\0';
	for (; *p != '\0'; p++) {
		if (*p == '(') {
			if (depth++ == 0 && ++group == 2)
				start = p + 1;
		} else if (*p == ')' && depth > 0) {
			if (--depth == 0 && group == 2 && start != NULL) {
				snprintf(out, outsz, "%.*s", (int)(p - start), start);
				return;
			}
		}
	}
}

int64_t
probe_memtotal_kb(const char *text, size_t len)
{
	const char *p, *e;
	int64_t v;
	char num[32];
	size_t n;

	if ((p = memmem(text, len, "MemTotal:", 9)) == NULL)
		return -1;
	p += 9;
	e = text + len;
	while (p < e && *p == ' ')
		p++;
	for (n = 0; p + n < e && p[n] >= '0' && p[n] <= '9' && n < sizeof(num) - 1; n++)
		num[n] = p[n];
	num[n] = '\0';
	return parse_i64(num, 0, INT64_MAX, &v) == 0 ? v : -1;
}

int
probe_identity(const struct probe_cpu *c, int64_t nodes, int64_t mem_kb, struct buf *b)
{
	/* memory in whole GiB, rounded: firmware reservations move MemTotal */
	return buf_printf(b, "cpu_model=%s\nvendor=%s\nfamily=%lld\nmodel=%lld\nstepping=%lld\n"
	    "sockets=%lld\ncores=%lld\nthreads=%lld\nnodes=%lld\nmem_gib=%lld\n", c->model,
	    c->vendor, (long long)c->family, (long long)c->model_no, (long long)c->stepping,
	    (long long)c->sockets, (long long)c->cores, (long long)c->threads,
	    (long long)nodes, mem_kb < 0 ? -1LL : (long long)((mem_kb + 524288) / 1048576));
}

static int
probe_slurp(const char *path, struct buf *b)
{
	char chunk[8192];
	ssize_t n;
	int fd, r = 0;

	buf_reset(b);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
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
	while (r == 0 && b->len > 0 && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == 0))
		b->data[--b->len] = '\0';
	return r;
}

static int
probe_put_str(struct buf *o, const char *key, const char *v)
{
	int r;

	if ((r = buf_printf(o, ",\"%s\":", key)) != 0)
		return r;
	if (v == NULL)
		return buf_puts(o, "null");
	return ajson_put_str(o, v, strlen(v));
}

static int
probe_put_int(struct buf *o, const char *key, int64_t v)
{
	if (v < 0)
		return buf_printf(o, ",\"%s\":null", key);
	return buf_printf(o, ",\"%s\":%lld", key, (long long)v);
}

/* Nodes with their memory: "numa_nodes":[{"node":0,"mem_kb":N},...]. */
static int
probe_nodes(struct buf *o, struct buf *tmp, int64_t *count)
{
	char path[96];
	struct dirent *de;
	int64_t ids[PROBE_MAX_NODES], id, n = 0, i, j, kb;
	DIR *d;
	int r;

	*count = 0;
	if ((d = opendir("/sys/devices/system/node")) != NULL) {
		while ((de = readdir(d)) != NULL && n < PROBE_MAX_NODES)
			if (strncmp(de->d_name, "node", 4) == 0 &&
			    parse_i64(de->d_name + 4, 0, PROBE_MAX_NODES - 1, &id) == 0)
				ids[n++] = id;
		closedir(d);
	}
	for (i = 1; i < n; i++)	/* insertion sort: node order, not readdir's */
		for (j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			id = ids[j];
			ids[j] = ids[j - 1];
			ids[j - 1] = id;
		}
	if ((r = buf_puts(o, ",\"numa_nodes\":[")) != 0)
		return r;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%lld/meminfo",
		    (long long)ids[i]);
		kb = probe_slurp(path, tmp) == 0 ? probe_memtotal_kb(tmp->data, tmp->len) : -1;
		if ((r = buf_printf(o, "%s{\"node\":%lld", i ? "," : "", (long long)ids[i])) != 0 ||
		    (r = probe_put_int(o, "mem_kb", kb)) != 0 || (r = buf_puts(o, "}")) != 0)
			return r;
	}
	*count = n;
	return buf_puts(o, "]");
}

/* sha256 of the kernel config: /boot/config-RELEASE, else /proc/config.gz
 * (hashed as the compressed bytes it is; the source says so). */
static int
probe_config(struct buf *o, const char *release)
{
	char path[400], hex[65];
	int r;

	snprintf(path, sizeof(path), "/boot/config-%s", release);
	if (sha256_file(path, hex) == 0) {
		if ((r = probe_put_str(o, "kernel_config_sha256", hex)) != 0)
			return r;
		return probe_put_str(o, "kernel_config_source", path);
	}
	if (sha256_file("/proc/config.gz", hex) == 0) {
		if ((r = probe_put_str(o, "kernel_config_sha256", hex)) != 0)
			return r;
		return probe_put_str(o, "kernel_config_source", "/proc/config.gz (gzip bytes)");
	}
	if ((r = probe_put_str(o, "kernel_config_sha256", NULL)) != 0)
		return r;
	return probe_put_str(o, "kernel_config_source", NULL);
}

int
probe_main(int argc, char **argv)
{
	struct probe_cpu cpu;
	struct utsname u;
	struct buf o, tmp, id;
	char s[1024], why[KNOB_MAX_WHY], hex[65];
	int64_t nodes = 0, mem_kb = -1;
	int r, have_cpu;

	(void)argv;
	buf_init(&o, EMIT_MAX_LINE);
	buf_init(&tmp, PROBE_MAX_FILE);
	buf_init(&id, 4096);
	if (argc != 1) {
		fprintf(stderr, "benchfleet-agent: probe takes no arguments\n");
		r = 2;
		goto out;
	}
	if (uname(&u) != 0) {
		r = 2;
		goto out;
	}
	have_cpu = probe_slurp("/proc/cpuinfo", &tmp) == 0 &&
	    probe_cpuinfo(tmp.data, tmp.len, &cpu) == 0;
	if (!have_cpu) {
		memset(&cpu, 0, sizeof(cpu));
		cpu.family = cpu.model_no = cpu.stepping = -1;
	}
	if ((r = buf_puts(&o, "{\"type\":\"fingerprint\"")) != 0 ||
	    (r = probe_put_str(&o, "cpu_model", cpu.model[0] ? cpu.model : NULL)) != 0 ||
	    (r = probe_put_str(&o, "cpu_vendor", cpu.vendor[0] ? cpu.vendor : NULL)) != 0 ||
	    (r = probe_put_int(&o, "cpu_family", cpu.family)) != 0 ||
	    (r = probe_put_int(&o, "cpu_model_number", cpu.model_no)) != 0 ||
	    (r = probe_put_int(&o, "cpu_stepping", cpu.stepping)) != 0 ||
	    (r = probe_put_str(&o, "microcode", cpu.microcode[0] ? cpu.microcode : NULL)) != 0 ||
	    (r = probe_put_int(&o, "sockets", have_cpu ? cpu.sockets : -1)) != 0 ||
	    (r = probe_put_int(&o, "cores", have_cpu ? cpu.cores : -1)) != 0 ||
	    (r = probe_put_int(&o, "threads", have_cpu ? cpu.threads : -1)) != 0 ||
	    (r = probe_nodes(&o, &tmp, &nodes)) != 0)
		goto out;
	if (probe_slurp("/proc/meminfo", &tmp) == 0)
		mem_kb = probe_memtotal_kb(tmp.data, tmp.len);
	if ((r = probe_put_int(&o, "mem_total_kb", mem_kb)) != 0 ||
	    (r = probe_put_str(&o, "kernel", u.release)) != 0 ||
	    (r = probe_put_str(&o, "arch", u.machine)) != 0 ||
	    (r = probe_put_int(&o, "page_size", sysconf(_SC_PAGESIZE))) != 0 ||
	    (r = probe_config(&o, u.release)) != 0)
		goto out;
	if (probe_slurp("/proc/cmdline", &tmp) != 0)
		buf_reset(&tmp);
	if ((r = probe_put_str(&o, "cmdline", tmp.data != NULL ? tmp.data : "")) != 0 ||
	    (r = buf_printf(&o, ",\"la57\":%s,\"no5lvl\":%s", cpu.la57 ? "true" : "false",
	    tmp.data != NULL && probe_cmdline_has(tmp.data, "no5lvl") ? "true" : "false")) != 0)
		goto out;
	if ((r = probe_put_str(&o, "thp_enabled", knob_read("thp_enabled", s, sizeof(s), why,
	    sizeof(why)) == 0 ? s : NULL)) != 0 ||
	    (r = probe_put_str(&o, "thp_defrag", knob_read("thp_defrag", s, sizeof(s), why,
	    sizeof(why)) == 0 ? s : NULL)) != 0 ||
	    (r = probe_put_str(&o, "mthp_sizes", knob_mthp_sizes(s, sizeof(s)) == 0 ? s : NULL))
	    != 0 ||
	    (r = probe_put_str(&o, "governor", knob_read("governor", s, sizeof(s), why,
	    sizeof(why)) == 0 ? s : NULL)) != 0 ||
	    (r = probe_put_str(&o, "boost", knob_read("boost", s, sizeof(s), why,
	    sizeof(why)) == 0 ? s : NULL)) != 0)
		goto out;
	s[0] = '\0';
	if (probe_slurp("/etc/os-release", &tmp) == 0)
		probe_os_release(tmp.data, tmp.len, s, sizeof(s));
	if ((r = probe_put_str(&o, "distro", s[0] ? s : NULL)) != 0)
		goto out;
	s[0] = '\0';
	if (probe_slurp("/proc/version", &tmp) == 0)
		probe_compiler(tmp.data, s, sizeof(s));
	if ((r = probe_put_str(&o, "kernel_compiler", s[0] ? s : NULL)) != 0)
		goto out;
	if ((r = probe_identity(&cpu, nodes, mem_kb, &id)) != 0)
		goto out;
	sha256_hex(id.data != NULL ? id.data : "", id.len, hex);
	if ((r = buf_puts(&o, ",\"identity\":[\"cpu_model\",\"cpu_vendor\",\"cpu_family\","
	    "\"cpu_model_number\",\"cpu_stepping\",\"sockets\",\"cores\",\"threads\","
	    "\"numa_nodes\",\"mem_gib\"]")) != 0 ||
	    (r = probe_put_str(&o, "sha256", hex)) != 0 ||
	    (r = buf_puts(&o, "}")) != 0 || (r = emit_line(&o)) != 0)
		goto out;
	r = 0;
out:
	buf_free(&o);
	buf_free(&tmp);
	buf_free(&id);
	return r == 0 ? 0 : 2;
}
