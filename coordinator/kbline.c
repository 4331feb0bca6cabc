/*
 * kbline.c: the build's lines (kbline.h). The step's own types go through
 * agentline_decode; the build's are a table of their fields here.
 */
#include <string.h>

#include <jansson.h>

#include "caps.h"
#include "jx.h"
#include "kbline.h"
#include "sha256.h"

/* The artifacts a build sends (common/kbuild.c's plan). */
static const char *const kbline_artifacts[] = { "image", "config", "sysmap", "modules", NULL };
/* What a captured command is (common/kbuild.c). */
/* tree, release: a kernel build's (kdispatch.c); good, bad: a bisection's
 * revisions resolved to commits (bisect-drive.c) */
static const char *const kbline_values[] = { "tree", "release", "good", "bad", NULL };

static int
kbline_in(const char *s, const char *const *set)
{
	size_t i;

	for (i = 0; set[i] != NULL; i++)
		if (strcmp(s, set[i]) == 0)
			return 1;
	return 0;
}

static int
kbline_name(const json_t *o, const char *path, const char **name, struct bf_diag *d)
{
	char p[BF_DIAG_FIELD];
	int r;

	if ((r = jx_str(o, "name", JX_REQUIRED, 16, name, path, d)) != 0)
		return r;
	if (kbline_in(*name, kbline_artifacts))
		return 0;
	bf_diag_set(d, jx_path(p, sizeof(p), path, "name"), "\"%.16s\" is not one of image, "
	    "config, sysmap, modules", *name);
	return BF_ERR_INVALID;
}

static const char *const kbline_value_fields[] = { "type", "what", "value", NULL };

static int
kbline_value(const json_t *o, struct kbline *l, struct bf_diag *d)
{
	struct kbline_value *v = &l->u.value;
	int r;

	if ((r = jx_str(o, "what", JX_REQUIRED, KBLINE_MAX_WHAT, &v->what, "build_value",
	    d)) != 0 || (r = jx_str(o, "value", JX_REQUIRED, KBLINE_MAX_VALUE, &v->value,
	    "build_value", d)) != 0)
		return r;
	if (!kbline_in(v->what, kbline_values)) {
		bf_diag_set(d, "build_value.what", "\"%.32s\" is not one of tree, release, good, bad",
		    v->what);
		return BF_ERR_INVALID;
	}
	return 0;
}

static const char *const kbline_failed_fields[] = { "type", "what", "index", "status", NULL };

static int
kbline_failed(const json_t *o, struct kbline *l, struct bf_diag *d)
{
	struct kbline_failed *f = &l->u.failed;
	const json_t *st = json_object_get(o, "status");
	int r;

	if ((r = jx_str(o, "what", JX_REQUIRED, KBLINE_MAX_WHAT, &f->what, "build_failed",
	    d)) != 0 || (r = jx_int(o, "index", JX_REQUIRED, -1, 1024, &f->index,
	    "build_failed", d)) != 0)
		return r;
	if (json_is_string(st)) {
		if ((r = jx_str(o, "status", JX_REQUIRED, 256, &f->why, "build_failed", d)) != 0)
			return r;
		f->timeout = strcmp(f->why, "timeout") == 0;
		f->status = -1;
		return 0;
	}
	return jx_int(o, "status", JX_REQUIRED, 0, 255, &f->status, "build_failed", d);
}

static const char *const kbline_artifact_fields[] = { "type", "name", "seq", "data", NULL };

static int
kbline_artifact(const json_t *o, struct kbline *l, struct bf_diag *d)
{
	struct agentline_artifact *a = &l->u.artifact;
	int r;

	a->max = KBLINE_MAX_ARTIFACT;
	if ((r = kbline_name(o, "artifact", &a->name, d)) != 0 ||
	    (r = jx_int(o, "seq", JX_REQUIRED, 0, KBLINE_MAX_ARTIFACT / BF_ARTIFACT_CHUNK + 1,
	    &a->seq, "artifact", d)) != 0 ||
	    (r = jx_str(o, "data", JX_REQUIRED, (BF_ARTIFACT_CHUNK + 2) / 3 * 4, &a->data,
	    "artifact", d)) != 0)
		return r;
	a->data_len = strlen(a->data);
	return 0;
}

static const char *const kbline_end_fields[] = {
	"type", "name", "bytes", "sha256", "dropped", NULL
};

static int
kbline_end(const json_t *o, struct kbline *l, struct bf_diag *d)
{
	struct agentline_artifact_end *e = &l->u.artifact_end;
	int r;

	e->max = KBLINE_MAX_ARTIFACT;
	if ((r = kbline_name(o, "artifact_end", &e->name, d)) != 0 ||
	    (r = jx_str(o, "dropped", JX_OPTIONAL, 256, &e->dropped, "artifact_end", d)) != 0 ||
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
	return 0;
}

static const struct {
	const char *name;
	enum kbline_type type;
	const char *const *fields;
	int (*decode)(const json_t *o, struct kbline *l, struct bf_diag *d);
} kbline_kinds[] = {
	{ "build_value", KBLINE_VALUE, kbline_value_fields, kbline_value },
	{ "build_failed", KBLINE_FAILED, kbline_failed_fields, kbline_failed },
	{ "artifact", KBLINE_ARTIFACT, kbline_artifact_fields, kbline_artifact },
	{ "artifact_end", KBLINE_ARTIFACT_END, kbline_end_fields, kbline_end },
};
#define KBLINE_NKINDS (sizeof(kbline_kinds) / sizeof(kbline_kinds[0]))

void
kbline_clear(struct kbline *l)
{
	agentline_event_clear(&l->ev);
	json_decref(l->doc);
	memset(l, 0, sizeof(*l));
}

/* log, error and done: the step's lines, decoded by agentline. */
static int
kbline_step(const char *line, size_t len, struct kbline *l, struct bf_diag *d)
{
	int r;

	if ((r = agentline_decode(line, len, &l->ev, d)) != 0)
		return r;
	switch (l->ev.type) {
	case AGENTLINE_LOG:
		l->type = KBLINE_LOG;
		l->u.log = l->ev.u.log;
		return 0;
	case AGENTLINE_ERROR:
		l->type = KBLINE_ERROR;
		l->u.error = l->ev.u.error;
		return 0;
	case AGENTLINE_DONE:
		l->type = KBLINE_DONE;
		l->u.done = l->ev.u.done;
		return 0;
	default:
		bf_diag_set(d, "type", "a %s line has no place in a build",
		    agentline_type_name(l->ev.type));
		agentline_event_clear(&l->ev);
		return BF_ERR_PROTO;
	}
}

int
kbline_decode(const char *line, size_t len, struct kbline *l, struct bf_diag *d)
{
	const char *type = NULL;
	json_t *o = NULL;
	size_t i;
	int r;

	memset(l, 0, sizeof(*l));
	bf_diag_clear(d);
	if (len > BF_MAX_AGENT_LINE) {
		bf_diag_set(d, NULL, "a line of %zu bytes; at most %d allowed", len,
		    BF_MAX_AGENT_LINE);
		return BF_ERR_TOOBIG;
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
	for (i = 0; i < KBLINE_NKINDS; i++)
		if (strcmp(kbline_kinds[i].name, type) == 0)
			break;
	if (i == KBLINE_NKINDS) {
		r = kbline_step(line, len, l, d);
		goto out;
	}
	if ((r = jx_only_keys(o, kbline_kinds[i].fields, kbline_kinds[i].name, d)) != 0 ||
	    (r = kbline_kinds[i].decode(o, l, d)) != 0) {
		memset(&l->u, 0, sizeof(l->u));
		goto out;
	}
	l->type = kbline_kinds[i].type;
	l->doc = o;
	o = NULL;
out:
	json_decref(o);
	return r;
}
