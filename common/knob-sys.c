/*
 * knob-sys.c: the knobs whose files are not one fixed path. SMT is written
 * through smt/control but read back from smt/active, since control says
 * what was asked and active what the CPUs do; control's states that no
 * write can leave (forceoff, notsupported, notimplemented) are refused with
 * the reason before anything is written. The C-state limit spans every
 * cpu's cpuidle states: a limit of N us disables each state whose exit
 * latency exceeds N and enables the others, and it reads back as the range
 * of limits the machine's present state corresponds to. libc only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "knob.h"
#include "knob-int.h"
#include "parse.h"

#define KNOB_SMT_CONTROL	KNOB_CPU "/smt/control"
#define KNOB_SMT_ACTIVE		KNOB_CPU "/smt/active"
#define KNOB_MAX_IDLE_STATES	32	/* stateN per cpu looked at */
#define KNOB_MAX_LATENCY	((int64_t)1 << 40)

int
knob_smt_files(char (*paths)[KNOB_MAX_PATH], size_t *np, char *why, size_t whysz)
{
	char v[KNOB_MAX_VALUE];
	int64_t threads;
	int r;

	*np = 0;
	if ((r = knob_mkpath(paths[0], KNOB_MAX_PATH, KNOB_SMT_CONTROL, NULL, 0)) != 0)
		return r;
	if ((r = knob_slurp(paths[0], v, sizeof(v), why, whysz)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			snprintf(why, whysz, "no SMT control on this machine (%s)", paths[0]);
		return r;
	}
	if (strcmp(v, "on") == 0 || strcmp(v, "off") == 0 ||
	    parse_i64(v, 1, 1024, &threads) == 0) {
		*np = 1;
		return 0;
	}
	if (strcmp(v, "forceoff") == 0) {
		snprintf(why, whysz, "SMT was forced off at boot (smt/control is forceoff, "
		    "nosmt=force): it cannot change until a reboot without it");
		return BF_ERR_STATE;
	}
	if (strcmp(v, "notsupported") == 0) {
		snprintf(why, whysz, "this CPU has no SMT (smt/control is notsupported)");
		return BF_ERR_NOTFOUND;
	}
	if (strcmp(v, "notimplemented") == 0) {
		snprintf(why, whysz, "this kernel cannot switch SMT (smt/control is "
		    "notimplemented)");
		return BF_ERR_NOTFOUND;
	}
	snprintf(why, whysz, "%s: unexpected content \"%.40s\"", paths[0], v);
	return BF_ERR_PARSE;
}

int
knob_smt_read(char *out, size_t outsz, char *why, size_t whysz)
{
	char path[KNOB_MAX_PATH], v[KNOB_MAX_VALUE];
	int r;

	if ((r = knob_mkpath(path, sizeof(path), KNOB_SMT_ACTIVE, NULL, 0)) != 0)
		return r;
	if ((r = knob_slurp(path, v, sizeof(v), why, whysz)) != 0) {
		if (r == BF_ERR_NOTFOUND)
			snprintf(why, whysz, "no SMT control on this machine (%s)", path);
		return r;
	}
	if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
		snprintf(why, whysz, "%s: unexpected content \"%.40s\"", path, v);
		return BF_ERR_PARSE;
	}
	if (outsz < 4)
		return BF_ERR_TOOBIG;
	snprintf(out, outsz, "%s", v[0] == '1' ? "on" : "off");
	return 0;
}

int
knob_cpuidle_files(char (*paths)[KNOB_MAX_PATH], size_t max, size_t *np, char *why,
    size_t whysz)
{
	char dir[KNOB_MAX_PATH];
	long long cpu, st;
	size_t n = 0;
	int r;

	*np = 0;
	for (cpu = 0; cpu < KNOB_MAX_FILES; cpu++) {
		if ((r = knob_mkpath(dir, sizeof(dir), KNOB_CPU "/cpu", "", cpu)) != 0)
			return r;
		if (!knob_exists(dir))
			break;
		for (st = 0; st < KNOB_MAX_IDLE_STATES; st++) {
			if (n == max) {
				snprintf(why, whysz, "more than %zu cpuidle states", max);
				return BF_ERR_TOOBIG;
			}
			if ((size_t)snprintf(paths[n], KNOB_MAX_PATH, "%s/cpuidle/state%lld/disable",
			    dir, st) >= KNOB_MAX_PATH)
				return BF_ERR_TOOBIG;
			if (!knob_exists(paths[n]))
				break;
			n++;
		}
	}
	if (n == 0) {
		snprintf(why, whysz, "no cpuidle states on this machine (cpuN/cpuidle)");
		return BF_ERR_NOTFOUND;
	}
	*np = n;
	return 0;
}

/* A state's exit latency in us, from the latency file beside its disable. */
static int
knob_idle_latency(const char *disable, int64_t *us, char *why, size_t whysz)
{
	char path[KNOB_MAX_PATH], v[KNOB_MAX_VALUE];
	size_t n = strlen(disable);
	int r;

	if (n < 7 || strcmp(disable + n - 7, "disable") != 0 || n >= sizeof(path))
		return BF_ERR_INVALID;
	memcpy(path, disable, n - 7);
	memcpy(path + n - 7, "latency", 8);
	if ((r = knob_slurp(path, v, sizeof(v), why, whysz)) != 0)
		return r;
	if (parse_i64(v, 0, KNOB_MAX_LATENCY, us) != 0) {
		snprintf(why, whysz, "%s: not a latency: \"%.40s\"", path, v);
		return BF_ERR_PARSE;
	}
	return 0;
}

int
knob_cpuidle_read(char *out, size_t outsz, char *why, size_t whysz)
{
	char (*paths)[KNOB_MAX_PATH] = NULL, v[KNOB_MAX_VALUE], lo[24] = "", hi[24] = "";
	int64_t lat, maxen = -1, mindis = INT64_MAX;
	size_t n = 0, i;
	int r;

	if ((paths = calloc(KNOB_MAX_FILES, KNOB_MAX_PATH)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = knob_cpuidle_files(paths, KNOB_MAX_FILES, &n, why, whysz)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		if ((r = knob_idle_latency(paths[i], &lat, why, whysz)) != 0 ||
		    (r = knob_slurp(paths[i], v, sizeof(v), why, whysz)) != 0)
			goto out;
		if (strcmp(v, "0") == 0)
			maxen = lat > maxen ? lat : maxen;
		else if (strcmp(v, "1") == 0)
			mindis = lat < mindis ? lat : mindis;
		else {
			snprintf(why, whysz, "%s: unexpected content \"%.40s\"", paths[i], v);
			r = BF_ERR_PARSE;
			goto out;
		}
	}
	if (maxen >= 0)
		snprintf(lo, sizeof(lo), "%lld", (long long)maxen);
	if (mindis != INT64_MAX)
		snprintf(hi, sizeof(hi), "%lld", (long long)mindis);
	/* a disabled state shallower than an enabled one: no limit gives this */
	if ((size_t)snprintf(out, outsz, "%s", maxen >= mindis ? "mixed" : "") >= outsz ||
	    (maxen < mindis && (size_t)snprintf(out, outsz, "%s..%s", lo, hi) >= outsz)) {
		r = BF_ERR_TOOBIG;
		goto out;
	}
	r = 0;
out:
	free(paths);
	return r;
}

int
knob_cpuidle_write(const char *us, char *why, size_t whysz)
{
	char (*paths)[KNOB_MAX_PATH] = NULL;
	int64_t limit, lat;
	size_t n = 0, i;
	int r;

	if (parse_i64(us, 0, INT64_MAX, &limit) != 0) {
		snprintf(why, whysz, "not a latency");
		r = BF_ERR_INVALID;
		goto out;
	}
	if ((paths = calloc(KNOB_MAX_FILES, KNOB_MAX_PATH)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	if ((r = knob_cpuidle_files(paths, KNOB_MAX_FILES, &n, why, whysz)) != 0)
		goto out;
	for (i = 0; i < n; i++)
		if ((r = knob_idle_latency(paths[i], &lat, why, whysz)) != 0 ||
		    (r = knob_file_put(paths[i], lat > limit ? "1" : "0", why, whysz)) != 0)
			goto out;
	r = 0;
out:
	free(paths);
	return r;
}

/* One end of "X..Y": empty is unbounded. */
static int
knob_range_end(const char *s, size_t len, int64_t none, int64_t *v)
{
	if (len == 0) {
		*v = none;
		return 0;
	}
	return parse_i64_n(s, len, 0, KNOB_MAX_LATENCY, v);
}

int
knob_cpuidle_same(const char *want, const char *got)
{
	const char *dots = strstr(got, "..");
	int64_t n, lo, hi;

	if (dots == NULL || parse_i64(want, 0, INT64_MAX, &n) != 0 ||
	    knob_range_end(got, (size_t)(dots - got), -1, &lo) != 0 ||
	    knob_range_end(dots + 2, strlen(dots + 2), INT64_MAX, &hi) != 0)
		return 0;
	return lo <= n && n < hi;
}
