/*
 * step.h: one step of a run, as sent by the coordinator on stdin, parsed and
 * validated in full before anything is executed.
 */
#ifndef BF_AGENT_STEP_H
#define BF_AGENT_STEP_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "bind.h"
#include "err.h"
#include "step-schema.h"


enum step_source {
	STEP_STDOUT,
	STEP_STDERR,
	STEP_FILE		/* a file of the workdir, read after the iteration */
};

enum step_rule {
	STEP_RULE_REGEX,	/* first match, first capture group */
	STEP_RULE_CSV,		/* first row whose first field contains row_match */
	STEP_RULE_JSON		/* a dotted path into one JSON document */
};

struct step_metric {
	char *name;
	enum step_source source;
	enum step_rule rule;
	char *regex;
	regex_t re;		/* compiled REG_EXTENDED, at least one group */
	int re_ok;		/* re needs regfree */
	char *row_match;	/* csv */
	char *column;		/* csv: header name of the column */
	char *path;		/* json: "a.b.0.c" */
	char *file;		/* STEP_FILE: a file name of the workdir */
};

/* "packages": a Debian package and the binary of it the step runs. */
struct step_package {
	char *debian;
	char *binary;
};

/* "files": written into the private workdir before anything runs. */
struct step_file {
	char *name;
	char *text;
	size_t len;
};

/* A command: NULL-terminated argv. */
struct step_cmd {
	char **argv;
	size_t argc;
};

struct step_service {
	struct step_cmd cmd;
	char *host;		/* numeric IPv4 or IPv6 address */
	int port;
	int64_t timeout_s;	/* to become ready */
};

struct step_knob {
	char *name;
	char *value;		/* as text: integers are written in decimal */
	int optional;		/* in knobs_optional: a machine without it records absent */
	int absent;		/* set by knobset_apply: optional and missing here */
};

struct step {
	int64_t run;
	char **argv;		/* NULL-terminated; argv[0] "@agent" kept as is */
	size_t argc;
	int64_t iterations;
	int64_t warmup;
	int64_t gap_ms;		/* pause before each iteration but the first */
	int64_t timeout_s;
	char **env_name;	/* nenv entries each */
	char **env_value;
	size_t nenv;
	char *cwd;		/* NULL when absent */
	struct step_metric *metrics;
	size_t nmetrics;
	struct step_knob *knobs;	/* in the order given */
	size_t nknobs;
	struct bind bind;		/* bind, aslr */
	int drop_caches;		/* 0, or the value written before each iteration */
	int compact_memory;		/* 1: compact_memory before each iteration */
	struct step_cmd *setup;
	size_t nsetup;
	struct step_cmd *pre;		/* pre_iteration */
	size_t npre;
	struct step_service *services;
	size_t nservices;
	char **pmu_name;		/* "pmu": named raw events, npmu each */
	char **pmu_spec;		/* "r0108" */
	size_t npmu;
	int profile;			/* "profile": one more iteration under perf record */
	int profile_freq;		/* its -F, Hz */
	struct step_package *packages;
	size_t npackages;
	struct step_file *files;
	size_t nfiles;
	int workdir;			/* "files" present, even [] */
	/* With files: cwd is set to the private workdir when it is made
	 * (workdir.c), and the workdir is removed after the step. */
};

/*
 * Parse and validate the step document text[0..len). On success *out is
 * the caller's, freed with step_free(). On failure d names the field at
 * fault, e.g. 'argv[2]: number where a string is expected'.
 */
int step_parse(const char *text, size_t len, struct step **out, struct bf_diag *d);
void step_free(struct step *st);	/* accepts NULL */

/* step-files.c: the "packages" and "files" fields, and the checks that
 * need the whole step (a "file" metric needs files; files and cwd exclude
 * each other). */
struct ajson;
int step_f_packages(const struct ajson *v, struct step *st, struct bf_diag *d);
int step_f_files(const struct ajson *v, struct step *st, struct bf_diag *d);
int step_files_check(const struct step *st, struct bf_diag *d);
void step_files_free(struct step *st);
/* A name in one directory, [A-Za-z0-9_][A-Za-z0-9_.-]* (plus: '+' too). */
int step_name_ok(const char *s, size_t max, int plus);

#endif
