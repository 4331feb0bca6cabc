/*
 * jx.h: the accessor layer over jansson. Every value taken from untrusted
 * JSON goes through here, so that its type and range are checked and an
 * error names the field by its path ("repetitions.iterations").
 *
 * Getters take the object, the key, and the path of the object itself
 * ("" for the document root). On failure they return a BF_ERR_* code and
 * fill d. A missing optional key leaves *out untouched and returns 0
 * (set the default before calling); a missing required key is
 * BF_ERR_INVALID with "<path>.<key>: is required".
 */
#ifndef BF_JX_H
#define BF_JX_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "err.h"

#define JX_REQUIRED	1
#define JX_OPTIONAL	0

/*
 * Parse a JSON document of at most max bytes. It must be an object or array
 * (JSON_REJECT_DUPLICATES is on: a repeated key is an error). Depth is capped
 * by BF_MAX_JSON_DEPTH. Before jansson builds anything, a scan of the text
 * counts its values and containers against BF_MAX_JSON_NODES and
 * BF_MAX_JSON_CONTAINERS (per started MiB of max), so that a hostile
 * document costs no more tree than those caps allow; the parse itself holds
 * one of BF_MAX_JSON_PARSES slots of jx_parse_gate. On malformed input
 * BF_ERR_PARSE with a message naming line, column and byte position; over
 * max or a cap, BF_ERR_TOOBIG. *out is a new reference the caller
 * json_decref()s.
 */
int jx_loads(const char *text, size_t len, size_t max, json_t **out, struct bf_diag *d);

struct jx_caps {
	size_t max_nodes;		/* values: containers, keys, scalars */
	size_t max_containers;		/* objects and arrays */
};
/* jx_loads with explicit caps (a URL bundle takes far smaller ones). */
int jx_loads_capped(const char *text, size_t len, size_t max, const struct jx_caps *caps,
    json_t **out, struct bf_diag *d);

/*
 * A counting semaphore on heavy work done for the network: jx_loads holds a
 * slot of jx_parse_gate while jansson runs; a fetch path may declare its own
 * gate (static struct jx_gate g = JX_GATE_INIT(n)). enter blocks while all
 * slots are taken; every enter needs one leave. Never hold a slot of
 * jx_parse_gate across a call of jx_loads (it would wait on itself).
 */
struct jx_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int busy;
	int max;
};
#define JX_GATE_INIT(n)	{ PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, (n) }
extern struct jx_gate jx_parse_gate;
void jx_gate_enter(struct jx_gate *g);
void jx_gate_leave(struct jx_gate *g);

/* Build "parent.key" (or "key" when parent is "") into buf. */
const char *jx_path(char *buf, size_t bufsz, const char *parent, const char *key);
/* Build "parent[idx]". */
const char *jx_path_idx(char *buf, size_t bufsz, const char *parent, size_t idx);

/* Refuse keys outside allowed (a NULL-terminated list):
 * 'repetitions.iteratons: unknown key; expected one of boots, iterations, warmup'. */
int jx_only_keys(const json_t *obj, const char *const *allowed, const char *path, struct bf_diag *d);

/*
 * The getters below: a key that is absent and not required returns 0 and
 * leaves *out as it was (so a caller sets its default, or NULL, first).
 */
/* String of 1..maxlen bytes with no NUL. *out points into obj (borrowed). */
int jx_str(const json_t *obj, const char *key, int required, size_t maxlen,
    const char **out, const char *path, struct bf_diag *d);
/* An integer (a JSON integer, not a real) in [min, max]. */
int jx_int(const json_t *obj, const char *key, int required, int64_t min, int64_t max,
    int64_t *out, const char *path, struct bf_diag *d);
/* A finite number (integer or real) in [min, max]. */
int jx_num(const json_t *obj, const char *key, int required, double min, double max,
    double *out, const char *path, struct bf_diag *d);
int jx_bool(const json_t *obj, const char *key, int required, int *out,
    const char *path, struct bf_diag *d);
/* An object; *out borrowed. */
int jx_obj(const json_t *obj, const char *key, int required, json_t **out,
    const char *path, struct bf_diag *d);
/* An array of at most maxlen elements (and at least minlen); *out borrowed. */
int jx_arr(const json_t *obj, const char *key, int required, size_t minlen, size_t maxlen,
    json_t **out, const char *path, struct bf_diag *d);

/* Check a name: 1..BF_MAX_NAME bytes of [A-Za-z0-9_.-], starting with an
 * alphanumeric. Used for recipe, machine, parameter and axis names. */
int jx_check_name(const char *s, const char *path, struct bf_diag *d);

/* A value's JSON text for messages, cut to about 60 bytes ("\"alwayz\"").
 * Writes into buf and returns it. */
const char *jx_repr(const json_t *v, char *buf, size_t bufsz);

/*
 * Checks on a value itself rather than obj[key], for array elements and
 * parameter values; path names v. Same rules and messages as the getters.
 */
int jx_as_str(const json_t *v, size_t maxlen, const char **out, const char *path,
    struct bf_diag *d);
int jx_as_int(const json_t *v, int64_t min, int64_t max, int64_t *out, const char *path,
    struct bf_diag *d);
int jx_as_num(const json_t *v, double min, double max, double *out, const char *path,
    struct bf_diag *d);

/* "a string", "an integer", "a real number", "an object", ... for messages. */
const char *jx_type_name(const json_t *v);

#endif
