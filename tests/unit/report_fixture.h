/*
 * report_fixture.h: the samples test_report and test_report_model share:
 * the seeds' btree numbers and a three-boot ops/s series, as two metrics
 * (time, lower is better; rps, higher is better) of two cells. Each test
 * names its own cells.
 */
#ifndef BF_REPORT_FIXTURE_H
#define BF_REPORT_FIXTURE_H

#include "report.h"

/* The seeds' btree numbers (seconds, lower is better). */
static const double a_time[] = { 381.5, 382.9, 382.0, 381.8, 382.8 };
static const double b_time[] = { 388.1, 392.0, 385.2, 389.9, 388.8 };
/* ops/s, higher is better, 3 boots x 3 iterations each. */
static const double a_rps[] = { 1000, 1010, 1005, 1100, 1090, 1095, 1050, 1040, 1060 };
static const double b_rps[] = { 1200, 1210, 1190, 1250, 1260, 1240, 1180, 1170, 1185 };
static const int boots9[] = { 0, 0, 0, 1, 1, 1, 2, 2, 2 };

static const struct report_metric metrics[] = {
	{ .name = "time", .unit = "s", .higher_better = 0 },
	{ .name = "rps", .unit = "ops/s", .higher_better = 1 },
};
static const struct report_series series[] = {
	{ .v = a_time, .boot = NULL, .n = 5 }, { .v = a_rps, .boot = boots9, .n = 9 },
	{ .v = b_time, .boot = NULL, .n = 5 }, { .v = b_rps, .boot = boots9, .n = 9 },
};
static const int baseline_of[] = { -1, 0 };

#endif
