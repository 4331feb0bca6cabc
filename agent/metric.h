/*
 * metric.h: pulling a number out of a workload's captured output.
 */
#ifndef BF_AGENT_METRIC_H
#define BF_AGENT_METRIC_H

#include <stddef.h>

#include "step.h"

/* Longest captured number text we try to parse (after stripping commas). */
#define METRIC_MAX_NUM	128

/*
 * Match m's regex against out[0..len) (the first match wins) and parse its
 * first capture group, commas stripped, into *value. BF_ERR_NOTFOUND when
 * the rule finds nothing (regex no match, no CSV row/column, no JSON path), BF_ERR_PARSE or
 * BF_ERR_RANGE when the group is not a finite number.
 */
int metric_extract(const struct step_metric *m, const char *out, size_t len, double *value);

#endif
