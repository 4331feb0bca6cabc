/*
 * agentline.h: one line of the agent's JSON-lines output (agent/emit.c,
 * hello.c, knobset.c, run.c; docs/agent-protocol.md), decoded into a typed
 * event. Pure: no I/O, no store, no events. The runner decides what each
 * event means for a run; the fuzzer (tests/fuzz/fuzz_agent_lines.c) runs
 * the same decoder.
 *
 * Fails closed: a line that is not one JSON object, whose "type" is not in
 * the table, that carries a field its type does not have, or whose field
 * has the wrong type or is out of range, is refused whole, and the
 * diagnostic says which field and why. Nothing of a refused line is used.
 */
#ifndef BF_AGENTLINE_H
#define BF_AGENTLINE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "caps.h"
#include "err.h"

enum agentline_type {
	AGENTLINE_NONE = 0,	/* refused, or not decoded yet */
	AGENTLINE_HELLO,
	AGENTLINE_LOG,
	AGENTLINE_KNOBS,
	AGENTLINE_ITERATION,
	AGENTLINE_ERROR,
	AGENTLINE_DONE,
	AGENTLINE_SNAPSHOT,	/* the step's environment (docs/evidence.md) */
	AGENTLINE_COUNTERS,	/* what the memory system did in one iteration */
	AGENTLINE_ARTIFACT,	/* a chunk of a profile's artifact */
	AGENTLINE_ARTIFACT_END	/* its size and sha256, or why it was dropped */
};

/* The agent's own per-iteration measurements, in this order. */
enum agentline_builtin_id {
	AGENTLINE_WALL_S,
	AGENTLINE_USER_S,
	AGENTLINE_SYS_S,
	AGENTLINE_MAXRSS_KB,
	AGENTLINE_NBUILTIN
};

struct agentline_builtin {
	const char *name;	/* the field of an iteration line */
	const char *unit;
};
extern const struct agentline_builtin agentline_builtins[AGENTLINE_NBUILTIN];

/* Caps of single fields, beyond BF_MAX_AGENT_LINE for the whole line. */
#define AGENTLINE_MAX_TYPE	32
#define AGENTLINE_MAX_KERNEL	256
#define AGENTLINE_MAX_ARCH	64
#define AGENTLINE_MAX_BOOT_ID	64
#define AGENTLINE_MAX_VERSION	64
/* A log line is cut to BF_MAX_LOG_LINE bytes by the agent, but each byte of
 * invalid UTF-8 in it arrives as a 3-byte U+FFFD. */
#define AGENTLINE_MAX_LOG	(BF_MAX_LOG_LINE * 8)
#define AGENTLINE_MAX_ITERATION	(BF_MAX_ITERATIONS + BF_MAX_WARMUP)
/* A snapshot key ("bin.<argv0>.package", argv0 a path) and value (cut at
 * BF_MAX_SNAPSHOT_VALUE bytes by the agent, invalid UTF-8 arriving as
 * 3-byte U+FFFDs). */
#define AGENTLINE_MAX_SNAPSHOT_KEY	1024
#define AGENTLINE_MAX_SNAPSHOT_VALUE	(BF_MAX_SNAPSHOT_VALUE * 3)
/* Counters of one line: every field the agent may read (agent/counters.c:
 * vmstat, mTHP stats, memory.stat, services, PMU events), and a name. */
#define AGENTLINE_MAX_COUNTERS	(BF_MAX_VMSTAT_FIELDS + BF_MAX_MTHP_STATS + 512 + 16 + \
	BF_MAX_PMU_EVENTS)
#define AGENTLINE_MAX_COUNTER_NAME	128
#define AGENTLINE_MAX_COUNTER_NOTES	64

/* Strings below are NUL-terminated, point into the event's document and
 * live until agentline_event_clear(); NULL when the field is absent (or
 * null, where the protocol allows null). "" is kept as "". */
struct agentline_hello {
	const char *agent;	/* the agent's version */
	const char *hostname;
	const char *kernel;	/* uname -r */
	const char *arch;	/* uname -m */
	const char *boot_id;
	const char *cmdline;	/* /proc/cmdline */
	int64_t pid;		/* -1 when absent */
};

struct agentline_log {
	int64_t iteration;	/* -1 when absent */
	int is_stderr;		/* "stream": "stderr" (else "stdout") */
	const char *line;	/* NULL on a dropped-lines count */
	int64_t dropped;	/* lines not sent; 0 unless "dropped" */
};

struct agentline_knobs {
	char *text;		/* the whole line, compact, keys sorted (owned) */
};

struct agentline_metric {
	const char *name;
	double value;
	int set;		/* 0: the agent wrote null (a NaN or infinity) */
};

struct agentline_iteration {
	int64_t index;			/* "iteration": from 0 across warmup */
	int warmup;
	int timeout;
	int64_t exit;			/* 0 when absent */
	int64_t signal;			/* 0 when absent */
	double builtin[AGENTLINE_NBUILTIN];
	int builtin_set[AGENTLINE_NBUILTIN];	/* absent or null: 0 */
	struct agentline_metric metrics[BF_MAX_METRICS];	/* "metrics", in order */
	size_t nmetrics;
	const char *missing_first;	/* "missing"[0], NULL when none */
	size_t nmissing;
	const char *error;		/* the workload could not start */
	int profile;			/* the profiled iteration: no measurement */
};

struct agentline_error {
	const char *msg;	/* NULL when absent */
};

struct agentline_done {
	int ok;			/* 0 when absent */
	int64_t iterations;	/* -1 when absent */
};

struct agentline_snapshot {
	const char *agent_sha256;	/* what the agent says it hashed (64 hex) */
	/* The snapshot object as the coordinator keeps it: compact, keys
	 * sorted (owned). Its sha256, not the agent's, names it in the store. */
	char *text;
	size_t nkeys;
};

/* Borrowed from the event's document, checked: metrics maps names to
 * finite numbers, unsupported names to strings, notes is strings. */
struct agentline_counters {
	int64_t iteration;
	const json_t *metrics;		/* never NULL once decoded (maybe empty) */
	const json_t *unsupported;	/* NULL when absent */
	const json_t *notes;		/* NULL when absent */
};

/* The artifacts a profile may have, and the chunks of the largest. */
#define AGENTLINE_MAX_ARTIFACT_SEQ	(BF_MAX_ARTIFACT_PERF / BF_ARTIFACT_CHUNK + 1)
#define AGENTLINE_MAX_DROPPED		256

struct agentline_artifact {
	const char *name;	/* "folded" or "perf.data" */
	int64_t max;		/* its cap: BF_MAX_ARTIFACT_FOLDED or _PERF */
	int64_t seq;		/* from 0, one up per line */
	const char *data;	/* base64 of at most BF_ARTIFACT_CHUNK bytes */
	size_t data_len;
};

struct agentline_artifact_end {
	const char *name;
	int64_t max;
	int64_t bytes;		/* <= max unless dropped */
	const char *sha256;	/* 64 lowercase hex; NULL when dropped */
	const char *dropped;	/* why the agent did not send it; NULL when sent */
	const char *event;	/* what perf sampled on: "cycles", "cpu-clock"; or NULL */
};

struct agentline_event {
	enum agentline_type type;	/* AGENTLINE_NONE when refused */
	/* Refused: the type the line claimed, when it named one of the
	 * table's (else AGENTLINE_NONE). Decoded: type again. */
	enum agentline_type claimed;
	union {
		struct agentline_hello hello;
		struct agentline_log log;
		struct agentline_knobs knobs;
		struct agentline_iteration iteration;
		struct agentline_error error;
		struct agentline_done done;
		struct agentline_snapshot snapshot;
		struct agentline_counters counters;
		struct agentline_artifact artifact;
		struct agentline_artifact_end artifact_end;
	} u;
	json_t *doc;			/* owned: the strings above point into it */
};

/*
 * Decode line[0..len) (without its newline; at most BF_MAX_AGENT_LINE
 * bytes). 0: ev holds the event. Else BF_ERR_PARSE (not JSON),
 * BF_ERR_TOOBIG, BF_ERR_PROTO (not an object, no or an unknown type),
 * BF_ERR_INVALID or BF_ERR_RANGE (a field), with d (may be NULL) naming
 * the field, e.g. 'iteration.exit: 300 is out of range -1..255'; ev then
 * holds nothing but claimed. Either way the caller calls
 * agentline_event_clear(ev).
 */
int agentline_decode(const char *line, size_t len, struct agentline_event *ev,
    struct bf_diag *d);
/* Free what ev holds and zero it; accepts NULL and a zeroed event. */
void agentline_event_clear(struct agentline_event *ev);
/* "hello", "iteration", ...; "none" for AGENTLINE_NONE. */
const char *agentline_type_name(enum agentline_type t);

#endif
