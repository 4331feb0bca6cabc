/*
 * agentline.c: decoding one agent output line into a typed event, through
 * a table keyed by the line's "type" (as OpenSSH's monitor dispatches its
 * requests): each entry names the fields its type may carry and the
 * function that decodes them. A type not in the table, or a field not in
 * its entry's list, refuses the line.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agentline.h"
#include "jx.h"
#include "sha256.h"

const struct agentline_builtin agentline_builtins[AGENTLINE_NBUILTIN] = {
	[AGENTLINE_WALL_S] = { .name = "wall_s", .unit = "s" },
	[AGENTLINE_USER_S] = { .name = "user_s", .unit = "s" },
	[AGENTLINE_SYS_S] = { .name = "sys_s", .unit = "s" },
	[AGENTLINE_MAXRSS_KB] = { .name = "maxrss_kb", .unit = "KiB" },
};

struct agentline_kind {
	const char *name;
	enum agentline_type type;
	const char *const *fields;	/* NULL-terminated, "type" included */
	int (*decode)(const json_t *o, struct agentline_event *ev, struct bf_diag *d);
};

/*
 * A string of at most max bytes, "" allowed (jx_str refuses it: an empty
 * workload line is still a line). nullable: JSON null reads as absent.
 */
static int
agentline_str(const json_t *o, const char *key, size_t max, int nullable, const char **out,
    const char *path, struct bf_diag *d)
{
	char p[BF_DIAG_FIELD];
	const json_t *v;
	size_t n;

	*out = NULL;
	if ((v = json_object_get(o, key)) == NULL || (nullable && json_is_null(v)))
		return 0;
	jx_path(p, sizeof(p), path, key);
	if (!json_is_string(v)) {
		bf_diag_set(d, p, "expected a string, got %s", jx_type_name(v));
		return BF_ERR_INVALID;
	}
	n = json_string_length(v);
	if (n != strlen(json_string_value(v))) {
		bf_diag_set(d, p, "contains a NUL byte");
		return BF_ERR_INVALID;
	}
	if (n > max) {
		bf_diag_set(d, p, "is %zu bytes long; at most %zu allowed", n, max);
		return BF_ERR_TOOBIG;
	}
	*out = json_string_value(v);
	return 0;
}

/* A finite number, or null (what the agent writes for NaN and infinities). */
static int
agentline_num_or_null(const json_t *v, double *out, int *set, const char *path,
    struct bf_diag *d)
{
	*set = 0;
	if (json_is_null(v))
		return 0;
	if (!json_is_number(v)) {
		bf_diag_set(d, path, "expected a number or null, got %s", jx_type_name(v));
		return BF_ERR_INVALID;
	}
	*out = json_number_value(v);
	if (!isfinite(*out)) {
		bf_diag_set(d, path, "is not a finite number");
		return BF_ERR_RANGE;
	}
	*set = 1;
	return 0;
}

static const char *const agentline_hello_fields[] = {
	"type", "agent", "hostname", "kernel", "arch", "boot_id", "cmdline", "pid", NULL
};

static int
agentline_hello(const json_t *o, struct agentline_event *ev, struct bf_diag *d)
{
	struct agentline_hello *h = &ev->u.hello;
	int r;

	h->pid = -1;
	if ((r = agentline_str(o, "agent", AGENTLINE_MAX_VERSION, 0, &h->agent, "hello", d)) != 0 ||
	    (r = agentline_str(o, "hostname", BF_MAX_HOST, 0, &h->hostname, "hello", d)) != 0 ||
	    (r = agentline_str(o, "kernel", AGENTLINE_MAX_KERNEL, 0, &h->kernel, "hello",
	    d)) != 0 ||
	    (r = agentline_str(o, "arch", AGENTLINE_MAX_ARCH, 0, &h->arch, "hello", d)) != 0 ||
	    (r = agentline_str(o, "boot_id", AGENTLINE_MAX_BOOT_ID, 1, &h->boot_id, "hello",
	    d)) != 0 ||
	    (r = agentline_str(o, "cmdline", BF_MAX_STR, 1, &h->cmdline, "hello", d)) != 0)
		return r;
	return jx_int(o, "pid", JX_OPTIONAL, 0, INT32_MAX, &h->pid, "hello", d);
}

static const char *const agentline_log_fields[] = {
	"type", "iteration", "stream", "line", "dropped", NULL
};

static int
agentline_log(const json_t *o, struct agentline_event *ev, struct bf_diag *d)
{
	struct agentline_log *l = &ev->u.log;
	const char *stream = NULL;
	int r;

	l->iteration = -1;
	if ((r = jx_int(o, "iteration", JX_OPTIONAL, 0, AGENTLINE_MAX_ITERATION, &l->iteration,
	    "log", d)) != 0 ||
	    (r = agentline_str(o, "stream", AGENTLINE_MAX_TYPE, 0, &stream, "log", d)) != 0 ||
	    (r = agentline_str(o, "line", AGENTLINE_MAX_LOG, 0, &l->line, "log", d)) != 0 ||
	    (r = jx_int(o, "dropped", JX_OPTIONAL, 0, INT64_MAX, &l->dropped, "log", d)) != 0)
		return r;
	if (stream != NULL && strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0) {
		bf_diag_set(d, "log.stream", "\"%.32s\" is not one of stdout, stderr", stream);
		return BF_ERR_INVALID;
	}
	if (l->line != NULL && json_object_get(o, "dropped") != NULL) {
		bf_diag_set(d, "log", "has both line and dropped");
		return BF_ERR_INVALID;
	}
	l->is_stderr = stream != NULL && strcmp(stream, "stderr") == 0;
	return 0;
}

static const char *const agentline_knobs_fields[] = {
	"type", "before", "requested", "after", NULL
};

/* Stored with the run as the agent wrote it: only its shape is checked. */
static int
agentline_knobs(const json_t *o, struct agentline_event *ev, struct bf_diag *d)
{
	static const char *const parts[] = { "before", "requested", "after" };
	const char *k;
	json_t *part, *v;
	char p[BF_DIAG_FIELD], pk[BF_DIAG_FIELD];
	size_t i;
	int r;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		part = NULL;	/* jx_obj leaves it as it was when the part is absent */
		if ((r = jx_obj(o, parts[i], JX_OPTIONAL, &part, "knobs", d)) != 0)
			return r;
		if (part == NULL)
			continue;
		json_object_foreach(part, k, v) {
			if (!json_is_string(v) && !json_is_integer(v) && !json_is_null(v)) {
				jx_path(p, sizeof(p), "knobs", parts[i]);
				bf_diag_set(d, jx_path(pk, sizeof(pk), p, k),
				    "expected a string, an integer or null, got %s",
				    jx_type_name(v));
				return BF_ERR_INVALID;
			}
		}
	}
	if ((ev->u.knobs.text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
		bf_diag_set(d, "knobs", "out of memory");
		return BF_ERR_ALLOC;
	}
	return 0;
}

static const char *const agentline_iteration_fields[] = {
	"type", "iteration", "warmup", "exit", "signal", "timeout", "wall_s", "user_s", "sys_s",
	"maxrss_kb", "metrics", "missing", "error", "profile", NULL
};

static int
agentline_iter_metrics(const json_t *o, struct agentline_iteration *it, struct bf_diag *d)
{
	char p[BF_DIAG_FIELD];
	json_t *metrics = NULL, *missing = NULL, *v;
	const char *k;
	size_t i;
	int r;

	if ((r = jx_obj(o, "metrics", JX_OPTIONAL, &metrics, "iteration", d)) != 0 ||
	    (r = jx_arr(o, "missing", JX_OPTIONAL, 0, BF_MAX_METRICS, &missing, "iteration",
	    d)) != 0)
		return r;
	if (metrics != NULL && json_object_size(metrics) > BF_MAX_METRICS) {
		bf_diag_set(d, "iteration.metrics", "%zu metrics; at most %d allowed",
		    json_object_size(metrics), BF_MAX_METRICS);
		return BF_ERR_TOOBIG;
	}
	if (metrics != NULL) {
		json_object_foreach(metrics, k, v) {
			struct agentline_metric *m = &it->metrics[it->nmetrics];

			jx_path(p, sizeof(p), "iteration.metrics", k);
			if (strlen(k) == 0 || strlen(k) > BF_MAX_NAME) {
				bf_diag_set(d, p, "a metric name is 1..%d bytes", BF_MAX_NAME);
				return BF_ERR_INVALID;
			}
			if ((r = agentline_num_or_null(v, &m->value, &m->set, p, d)) != 0)
				return r;
			m->name = k;
			it->nmetrics++;
		}
	}
	for (i = 0; missing != NULL && i < json_array_size(missing); i++) {
		const char *name;

		jx_path_idx(p, sizeof(p), "iteration.missing", i);
		if ((r = jx_as_str(json_array_get(missing, i), BF_MAX_NAME, &name, p, d)) != 0)
			return r;
		if (i == 0)
			it->missing_first = name;
		it->nmissing++;
	}
	return 0;
}

static int
agentline_iteration(const json_t *o, struct agentline_event *ev, struct bf_diag *d)
{
	struct agentline_iteration *it = &ev->u.iteration;
	char p[BF_DIAG_FIELD];
	const json_t *v;
	size_t i;
	int r;

	if ((r = jx_int(o, "iteration", JX_REQUIRED, 0, AGENTLINE_MAX_ITERATION, &it->index,
	    "iteration", d)) != 0 ||
	    (r = jx_bool(o, "warmup", JX_OPTIONAL, &it->warmup, "iteration", d)) != 0 ||
	    (r = jx_bool(o, "timeout", JX_OPTIONAL, &it->timeout, "iteration", d)) != 0 ||
	    (r = jx_bool(o, "profile", JX_OPTIONAL, &it->profile, "iteration", d)) != 0 ||
	    (r = jx_int(o, "exit", JX_OPTIONAL, -1, 255, &it->exit, "iteration", d)) != 0 ||
	    (r = jx_int(o, "signal", JX_OPTIONAL, 0, 128, &it->signal, "iteration", d)) != 0 ||
	    (r = agentline_str(o, "error", BF_MAX_LOG_LINE, 0, &it->error, "iteration", d)) != 0)
		return r;
	for (i = 0; i < AGENTLINE_NBUILTIN; i++) {
		if ((v = json_object_get(o, agentline_builtins[i].name)) == NULL)
			continue;
		jx_path(p, sizeof(p), "iteration", agentline_builtins[i].name);
		if ((r = agentline_num_or_null(v, &it->builtin[i], &it->builtin_set[i], p,
		    d)) != 0)
			return r;
	}
	return agentline_iter_metrics(o, it, d);
}

static const char *const agentline_error_fields[] = { "type", "msg", NULL };

static int
agentline_error(const json_t *o, struct agentline_event *ev, struct bf_diag *d)
{
	return agentline_str(o, "msg", BF_MAX_LOG_LINE, 0, &ev->u.error.msg, "error", d);
}

static const char *const agentline_done_fields[] = { "type", "ok", "iterations", NULL };

static int
agentline_done(const json_t *o, struct agentline_event *ev, struct bf_diag *d)
{
	int r;

	ev->u.done.iterations = -1;
	if ((r = jx_bool(o, "ok", JX_OPTIONAL, &ev->u.done.ok, "done", d)) != 0)
		return r;
	return jx_int(o, "iterations", JX_OPTIONAL, 0, AGENTLINE_MAX_ITERATION,
	    &ev->u.done.iterations, "done", d);
}

static const char *const agentline_snapshot_fields[] = {
	"type", "sha256", "snapshot", NULL
};

/* Every value a string or null, every key a name of the agent's shape:
 * what the store keeps is checked here, never trusted to be so. */
static int
agentline_snapshot(const json_t *o, struct agentline_event *ev, struct bf_diag *d)
{
	struct agentline_snapshot *sn = &ev->u.snapshot;
	char p[BF_DIAG_FIELD];
	json_t *obj = NULL;
	const char *k, *v;
	json_t *jv;
	size_t i;
	int r;

	if ((r = jx_str(o, "sha256", JX_REQUIRED, 64, &sn->agent_sha256, "snapshot", d)) != 0)
		return r;
	for (i = 0; sn->agent_sha256[i] != '\0'; i++)
		if (!((sn->agent_sha256[i] >= '0' && sn->agent_sha256[i] <= '9') ||
		    (sn->agent_sha256[i] >= 'a' && sn->agent_sha256[i] <= 'f')))
			break;
	if (i != 64 || sn->agent_sha256[i] != '\0') {
		bf_diag_set(d, "snapshot.sha256", "expected 64 lowercase hex digits");
		return BF_ERR_INVALID;
	}
	if ((r = jx_obj(o, "snapshot", JX_REQUIRED, &obj, "snapshot", d)) != 0)
		return r;
	json_object_foreach(obj, k, jv) {
		jx_path(p, sizeof(p), "snapshot.snapshot", k);
		if (k[0] == '\0' || strlen(k) > AGENTLINE_MAX_SNAPSHOT_KEY) {
			bf_diag_set(d, p, "a key is 1..%d bytes", AGENTLINE_MAX_SNAPSHOT_KEY);
			return BF_ERR_INVALID;
		}
		if (json_is_null(jv))
			continue;
		if ((r = agentline_str(obj, k, AGENTLINE_MAX_SNAPSHOT_VALUE, 0, &v,
		    "snapshot.snapshot", d)) != 0)
			return r;
	}
	sn->nkeys = json_object_size(obj);
	if (sn->nkeys == 0) {
		bf_diag_set(d, "snapshot.snapshot", "is empty");
		return BF_ERR_INVALID;
	}
	if ((sn->text = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS)) == NULL) {
		bf_diag_set(d, "snapshot", "out of memory");
		return BF_ERR_ALLOC;
	}
	return 0;
}

static const char *const agentline_counters_fields[] = {
	"type", "iteration", "metrics", "unsupported", "notes", NULL
};

static int
agentline_counters(const json_t *o, struct agentline_event *ev, struct bf_diag *d)
{
	struct agentline_counters *c = &ev->u.counters;
	char p[BF_DIAG_FIELD];
	json_t *m = NULL, *un = NULL, *notes = NULL, *v;
	const char *k, *s;
	double x;
	size_t i;
	int r, set;

	if ((r = jx_int(o, "iteration", JX_REQUIRED, 0, AGENTLINE_MAX_ITERATION, &c->iteration,
	    "counters", d)) != 0 ||
	    (r = jx_obj(o, "metrics", JX_REQUIRED, &m, "counters", d)) != 0 ||
	    (r = jx_obj(o, "unsupported", JX_OPTIONAL, &un, "counters", d)) != 0 ||
	    (r = jx_arr(o, "notes", JX_OPTIONAL, 0, AGENTLINE_MAX_COUNTER_NOTES, &notes,
	    "counters", d)) != 0)
		return r;
	if (json_object_size(m) > AGENTLINE_MAX_COUNTERS ||
	    (un != NULL && json_object_size(un) > AGENTLINE_MAX_COUNTERS)) {
		bf_diag_set(d, json_object_size(m) > AGENTLINE_MAX_COUNTERS ? "counters.metrics" :
		    "counters.unsupported", "more than %d counters", AGENTLINE_MAX_COUNTERS);
		return BF_ERR_TOOBIG;
	}
	json_object_foreach(m, k, v) {
		jx_path(p, sizeof(p), "counters.metrics", k);
		if (k[0] == '\0' || strlen(k) > AGENTLINE_MAX_COUNTER_NAME) {
			bf_diag_set(d, p, "a counter name is 1..%d bytes",
			    AGENTLINE_MAX_COUNTER_NAME);
			return BF_ERR_INVALID;
		}
		/* a counter is a number; an unreadable one is in "unsupported" */
		if ((r = agentline_num_or_null(v, &x, &set, p, d)) != 0)
			return r;
		if (!set) {
			bf_diag_set(d, p, "expected a number, got null");
			return BF_ERR_INVALID;
		}
	}
	json_object_foreach(un, k, v) {
		jx_path(p, sizeof(p), "counters.unsupported", k);
		if (k[0] == '\0' || strlen(k) > AGENTLINE_MAX_COUNTER_NAME) {
			bf_diag_set(d, p, "a counter name is 1..%d bytes",
			    AGENTLINE_MAX_COUNTER_NAME);
			return BF_ERR_INVALID;
		}
		if ((r = agentline_str(un, k, BF_MAX_LOG_LINE, 0, &s, "counters.unsupported",
		    d)) != 0)
			return r;
	}
	for (i = 0; notes != NULL && i < json_array_size(notes); i++) {
		jx_path_idx(p, sizeof(p), "counters.notes", i);
		if ((r = jx_as_str(json_array_get(notes, i), BF_MAX_LOG_LINE, &s, p, d)) != 0)
			return r;
	}
	c->metrics = m;
	c->unsupported = un;
	c->notes = notes;
	return 0;
}

/* The artifacts of a profile, by name, with their caps. */
static const struct {
	const char *name;
	int64_t max;
} agentline_artifacts[] = {
	{ .name = "folded", .max = BF_MAX_ARTIFACT_FOLDED },
	{ .name = "perf.data", .max = BF_MAX_ARTIFACT_PERF },
};

static int
agentline_artifact_name(const json_t *o, const char *path, const char **name, int64_t *max,
    struct bf_diag *d)
{
	char p[BF_DIAG_FIELD];
	size_t i;
	int r;

	if ((r = jx_str(o, "name", JX_REQUIRED, BF_MAX_NAME, name, path, d)) != 0)
		return r;
	for (i = 0; i < sizeof(agentline_artifacts) / sizeof(agentline_artifacts[0]); i++)
		if (strcmp(*name, agentline_artifacts[i].name) == 0) {
			*max = agentline_artifacts[i].max;
			return 0;
		}
	bf_diag_set(d, jx_path(p, sizeof(p), path, "name"), "\"%.64s\" is not one of folded, "
	    "perf.data", *name);
	return BF_ERR_INVALID;
}

static const char *const agentline_artifact_fields[] = { "type", "name", "seq", "data", NULL };

static int
agentline_artifact(const json_t *o, struct agentline_event *ev, struct bf_diag *d)
{
	struct agentline_artifact *a = &ev->u.artifact;
	int r;

	if ((r = agentline_artifact_name(o, "artifact", &a->name, &a->max, d)) != 0 ||
	    (r = jx_int(o, "seq", JX_REQUIRED, 0, AGENTLINE_MAX_ARTIFACT_SEQ, &a->seq, "artifact",
	    d)) != 0 ||
	    (r = jx_str(o, "data", JX_REQUIRED, (BF_ARTIFACT_CHUNK + 2) / 3 * 4, &a->data,
	    "artifact", d)) != 0)
		return r;
	a->data_len = strlen(a->data);
	return 0;
}

static const char *const agentline_artifact_end_fields[] = {
	"type", "name", "bytes", "sha256", "dropped", "event", NULL
};

/* The events the agent's perf record samples on (agent/profile.c). */
static const char *const agentline_perf_events[] = { "cycles", "cpu-clock", NULL };

static int
agentline_artifact_end(const json_t *o, struct agentline_event *ev, struct bf_diag *d)
{
	struct agentline_artifact_end *e = &ev->u.artifact_end;
	size_t i;
	int r;

	if ((r = agentline_artifact_name(o, "artifact_end", &e->name, &e->max, d)) != 0 ||
	    (r = agentline_str(o, "dropped", AGENTLINE_MAX_DROPPED, 0, &e->dropped,
	    "artifact_end", d)) != 0 ||
	    (r = jx_str(o, "sha256", JX_OPTIONAL, 64, &e->sha256, "artifact_end", d)) != 0 ||
	    (r = jx_int(o, "bytes", JX_REQUIRED, 0, e->dropped != NULL ? INT64_MAX : e->max,
	    &e->bytes, "artifact_end", d)) != 0)
		return r;
	if ((e->sha256 == NULL) == (e->dropped == NULL)) {
		bf_diag_set(d, "artifact_end", "needs exactly one of sha256 and dropped");
		return BF_ERR_INVALID;
	}
	if (e->sha256 != NULL && !sha256_is_hex(e->sha256)) {
		bf_diag_set(d, "artifact_end.sha256", "is not 64 lowercase hex digits");
		return BF_ERR_INVALID;
	}
	if ((r = jx_str(o, "event", JX_OPTIONAL, 16, &e->event, "artifact_end", d)) != 0)
		return r;
	for (i = 0; e->event != NULL && agentline_perf_events[i] != NULL &&
	    strcmp(e->event, agentline_perf_events[i]) != 0; i++)
		;
	if (e->event != NULL && agentline_perf_events[i] == NULL) {
		bf_diag_set(d, "artifact_end.event", "\"%.16s\" is not one of cycles, cpu-clock",
		    e->event);
		return BF_ERR_INVALID;
	}
	return 0;
}

static const struct agentline_kind agentline_kinds[] = {
	{ .name = "hello", .type = AGENTLINE_HELLO, .fields = agentline_hello_fields,
	  .decode = agentline_hello },
	{ .name = "log", .type = AGENTLINE_LOG, .fields = agentline_log_fields,
	  .decode = agentline_log },
	{ .name = "knobs", .type = AGENTLINE_KNOBS, .fields = agentline_knobs_fields,
	  .decode = agentline_knobs },
	{ .name = "iteration", .type = AGENTLINE_ITERATION, .fields = agentline_iteration_fields,
	  .decode = agentline_iteration },
	{ .name = "error", .type = AGENTLINE_ERROR, .fields = agentline_error_fields,
	  .decode = agentline_error },
	{ .name = "done", .type = AGENTLINE_DONE, .fields = agentline_done_fields,
	  .decode = agentline_done },
	{ .name = "snapshot", .type = AGENTLINE_SNAPSHOT, .fields = agentline_snapshot_fields,
	  .decode = agentline_snapshot },
	{ .name = "counters", .type = AGENTLINE_COUNTERS, .fields = agentline_counters_fields,
	  .decode = agentline_counters },
	{ .name = "artifact", .type = AGENTLINE_ARTIFACT, .fields = agentline_artifact_fields,
	  .decode = agentline_artifact },
	{ .name = "artifact_end", .type = AGENTLINE_ARTIFACT_END,
	  .fields = agentline_artifact_end_fields, .decode = agentline_artifact_end },
};
#define AGENTLINE_NKINDS (sizeof(agentline_kinds) / sizeof(agentline_kinds[0]))

const char *
agentline_type_name(enum agentline_type t)
{
	size_t i;

	for (i = 0; i < AGENTLINE_NKINDS; i++)
		if (agentline_kinds[i].type == t)
			return agentline_kinds[i].name;
	return "none";
}

void
agentline_event_clear(struct agentline_event *ev)
{
	if (ev == NULL)
		return;
	if (ev->type == AGENTLINE_KNOBS)
		free(ev->u.knobs.text);
	if (ev->type == AGENTLINE_SNAPSHOT)
		free(ev->u.snapshot.text);
	json_decref(ev->doc);
	memset(ev, 0, sizeof(*ev));
}

int
agentline_decode(const char *line, size_t len, struct agentline_event *ev,
    struct bf_diag *d)
{
	const struct agentline_kind *kind = NULL;
	const char *type = NULL;
	json_t *o = NULL;
	size_t i;
	int r;

	memset(ev, 0, sizeof(*ev));
	bf_diag_clear(d);
	if (len > BF_MAX_AGENT_LINE) {
		bf_diag_set(d, NULL, "a line of %zu bytes; at most %d allowed", len,
		    BF_MAX_AGENT_LINE);
		r = BF_ERR_TOOBIG;
		goto out;
	}
	if ((r = jx_loads(line, len, BF_MAX_AGENT_LINE, &o, d)) != 0)
		goto out;
	if (!json_is_object(o)) {
		bf_diag_set(d, NULL, "expected an object, got %s", jx_type_name(o));
		r = BF_ERR_PROTO;
		goto out;
	}
	if ((r = jx_str(o, "type", JX_REQUIRED, AGENTLINE_MAX_TYPE, &type, "", d)) != 0) {
		r = BF_ERR_PROTO;
		goto out;
	}
	for (i = 0; i < AGENTLINE_NKINDS && kind == NULL; i++)
		if (strcmp(agentline_kinds[i].name, type) == 0)
			kind = &agentline_kinds[i];
	if (kind == NULL) {
		bf_diag_set(d, "type", "unknown type \"%.32s\"", type);
		r = BF_ERR_PROTO;
		goto out;
	}
	/* A refused line is cleared again: a caller finds nothing of it to
	 * half-use, only the type it claimed. */
	ev->claimed = kind->type;
	ev->type = kind->type;
	if ((r = jx_only_keys(o, kind->fields, kind->name, d)) != 0 ||
	    (r = kind->decode(o, ev, d)) != 0) {
		agentline_event_clear(ev);
		ev->claimed = kind->type;
		goto out;
	}
	ev->doc = o;
	o = NULL;
	r = 0;
out:
	json_decref(o);
	return r;
}
