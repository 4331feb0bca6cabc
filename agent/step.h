/*
 * step.h: one step of a run, as sent by the coordinator on stdin, parsed and
 * validated in full before anything is executed.
 */
#ifndef BF_AGENT_STEP_H
#define BF_AGENT_STEP_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum step_source {
	STEP_STDOUT,
	STEP_STDERR
};

struct step_metric {
	char *name;
	enum step_source source;
	char *regex;
	regex_t re;		/* compiled REG_EXTENDED, at least one group */
	int re_ok;		/* re needs regfree */
};

struct step {
	int64_t run;
	char **argv;		/* NULL-terminated; argv[0] "@agent" kept as is */
	size_t argc;
	int64_t iterations;
	int64_t warmup;
	int64_t timeout_s;
	char **env_name;	/* nenv entries each */
	char **env_value;
	size_t nenv;
	char *cwd;		/* NULL when absent */
	struct step_metric *metrics;
	size_t nmetrics;
};

/*
 * Parse and validate the step document text[0..len). On success *out is
 * the caller's, freed with step_free(). On failure d names the field at
 * fault, e.g. 'argv[2]: number where a string is expected'.
 */
int step_parse(const char *text, size_t len, struct step **out, struct bf_diag *d);
void step_free(struct step *st);	/* accepts NULL */

#endif
