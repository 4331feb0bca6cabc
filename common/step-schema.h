/*
 * step-schema.h: the step document, the one message the coordinator sends
 * the agent (docs/agent-protocol.md), named once for both ends. The
 * coordinator writes a step with these field names and within these caps
 * (the step builder, recipe_step_json); the agent refuses a step that uses
 * any other field or exceeds a cap (agent/step.c). A recipe is checked
 * against the same caps when it is loaded, so a recipe that loads always
 * gives a step the agent takes.
 *
 * libc only, macros only: the agent includes it and links no jansson.
 */
#ifndef BF_STEP_SCHEMA_H
#define BF_STEP_SCHEMA_H

#include "caps.h"

/* Top-level fields of the step object. */
#define STEP_FIELD_RUN		"run"		/* integer >= 0, required */
#define STEP_FIELD_ARGV		"argv"		/* the measured command, required */
#define STEP_FIELD_ITERATIONS	"iterations"	/* 1..STEP_MAX_ITERATIONS, required */
#define STEP_FIELD_WARMUP	"warmup"	/* 0..STEP_MAX_WARMUP */
#define STEP_FIELD_GAP_MS	"gap_ms"	/* 0..STEP_MAX_GAP_MS: pause before iterations 1.. */
#define STEP_FIELD_TIMEOUT_S	"timeout_s"	/* 1..STEP_MAX_TIMEOUT_S, required */
#define STEP_FIELD_ENV		"env"		/* object name -> string */
#define STEP_FIELD_CWD		"cwd"
#define STEP_FIELD_METRICS	"metrics"	/* array of metric rules */
#define STEP_FIELD_KNOBS	"knobs"		/* object knob -> string or integer */
#define STEP_FIELD_KNOBS_OPTIONAL "knobs_optional"	/* names of knobs: absent is no error */
#define STEP_FIELD_BIND		"bind"
#define STEP_FIELD_ASLR		"aslr"		/* false: ASLR off for the workload */
#define STEP_FIELD_DROP_CACHES	"drop_caches"	/* true */
#define STEP_FIELD_SETUP	"setup"		/* array of argv arrays */
#define STEP_FIELD_PRE		"pre_iteration"	/* array of argv arrays */
#define STEP_FIELD_SERVICES	"services"
#define STEP_FIELD_PATHS	"paths"
#define STEP_FIELD_PROFILE	"profile"	/* {"perf": "record", "freq": Hz} */
#define STEP_FIELD_PACKAGES	"packages"	/* [{debian, binary}]: checked first */
#define STEP_FIELD_FILES	"files"		/* [{name, text}], maybe []: a private workdir */
#define STEP_FIELD_PMU		"pmu"		/* {name: raw event}, at most BF_MAX_STEP_PMU;
						 * no recipe writes it yet */

/* packages[i]: the binary must be on PATH, the version goes in the snapshot */
#define STEP_PACKAGE_DEBIAN	"debian"
#define STEP_PACKAGE_BINARY	"binary"

/* files[i]: written into the step's private workdir, which is the cwd of
 * every command; the workdir and all in it is removed after the step */
#define STEP_FILE_NAME		"name"		/* [A-Za-z0-9_][A-Za-z0-9_.-]*, <= 64 */
#define STEP_FILE_TEXT		"text"

/* profile */
#define STEP_PROFILE_PERF	"perf"		/* "record": perf record -g */
#define STEP_PROFILE_RECORD	"record"
#define STEP_PROFILE_FREQ	"freq"		/* 1..BF_MAX_PROFILE_FREQ */

/* metrics[i] */
#define STEP_METRIC_NAME	"name"
#define STEP_METRIC_SOURCE	"source"	/* one of the three below */
#define STEP_SOURCE_STDOUT	"stdout"
#define STEP_SOURCE_STDERR	"stderr"
#define STEP_SOURCE_FILE	"file"		/* with STEP_METRIC_FILE */
#define STEP_METRIC_REGEX	"regex"
#define STEP_METRIC_CSV		"csv"		/* {row_match, column} */
#define STEP_METRIC_CSV_ROW	"row_match"
#define STEP_METRIC_CSV_COLUMN	"column"
#define STEP_METRIC_JSON	"json"		/* a dotted path */
#define STEP_METRIC_FILE	"file"		/* source "file": a workdir file's name */

/* services[i] */
#define STEP_SERVICE_ARGV	"argv"
#define STEP_SERVICE_READY	"ready"		/* {tcp, timeout_s} */
#define STEP_SERVICE_TCP	"tcp"		/* "host:port", numeric */
#define STEP_SERVICE_TIMEOUT_S	"timeout_s"

/* paths[i] */
#define STEP_PATH_NAME		"name"
#define STEP_PATH_PATH		"path"
#define STEP_PATH_ROOT		"root"

/* bind */
#define STEP_BIND_CPUS		"cpus"
#define STEP_BIND_MEMBIND	"membind"
#define STEP_BIND_CPUNODEBIND	"cpunodebind"

/* Caps. */
#define STEP_MAX_ITERATIONS	BF_MAX_ITERATIONS
#define STEP_MAX_WARMUP		BF_MAX_WARMUP
#define STEP_MAX_GAP_MS		BF_MAX_GAP_MS
#define STEP_MAX_TIMEOUT_S	86400		/* one iteration: a day */
#define STEP_DEFAULT_TIMEOUT_S	600		/* a recipe without timeout_s */
#define STEP_MAX_CMDS		32		/* setup, pre_iteration: commands each */
#define STEP_MAX_SERVICES	8
#define STEP_MAX_READY_S	3600		/* a service to become ready */
#define STEP_DEFAULT_READY_S	10
#define STEP_MAX_KNOBS		64
#define STEP_MAX_ENV		BF_MAX_ARGV	/* env entries */
#define STEP_MAX_PATH		BF_MAX_STR	/* cwd; PATH_MAX on Linux */
#define STEP_MAX_METRICS	BF_MAX_METRICS
#define STEP_MAX_PATHS		BF_MAX_PARAMS	/* one per path parameter at most */
#define STEP_MAX_PACKAGES	8		/* declared Debian packages */
#define STEP_MAX_FILES		8		/* workdir files */
#define STEP_MAX_FILE_LINES	512		/* lines of one file's template */
#define STEP_MAX_FILE_TEXT	BF_MAX_ARG	/* one rendered workdir file (one JSON string) */
#define STEP_MAX_FILE_NAME	64
#define STEP_MAX_PKG_NAME	64		/* a Debian package or binary name */

#endif
