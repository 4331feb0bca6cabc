/*
 * recipe_fixture.h: what test_recipe.c and test_recipe_param.c share: a good
 * recipe (base) with one parameter of each scalar type, and a check that a
 * diagnostic starts as expected.
 */
#ifndef BF_RECIPE_FIXTURE_H
#define BF_RECIPE_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "t.h"

#define PARAMS \
	"{\"loops\": {\"type\": \"int\", \"min\": 1, \"max\": 1000000000, \"default\": 1000000}," \
	" \"ratio\": {\"type\": \"number\", \"min\": 0, \"max\": 1, \"default\": 0.5}," \
	" \"mode\": {\"type\": \"enum\", \"values\": [\"a\", \"b\"], \"default\": \"a\"}," \
	" \"msg\": {\"type\": \"string\", \"max_len\": 256, \"default\": \"hi\"}," \
	" \"flag\": {\"type\": \"bool\", \"default\": false}}"
#define NAMES "loops, ratio, mode, msg, flag"

static const char base[] =
    "{\"name\": \"cpu-loop\", \"description\": \"a loop\","
    " \"params\": " PARAMS ","
    " \"presets\": {\"test\": {\"loops\": 1000}, \"paper\": {\"loops\": 100000000}},"
    " \"command\": [\"@agent\", \"work\", \"cpu\", \"--loops\", \"{loops}\"],"
    " \"timeout_s\": 60,"
    " \"metrics\": [{\"name\": \"wall_s\", \"unit\": \"s\", \"better\": \"lower\","
    " \"source\": \"wall_s\"}, {\"name\": \"ops\", \"unit\": \"ops/s\", \"better\": \"higher\","
    " \"source\": \"stdout\", \"regex\": \"([0-9.]+) ops/s\"}]}";

static inline void
expect_msg(const char *what, const struct bf_diag *d, const char *want)
{
	t_checks++;
	if (strncmp(d->msg, want, strlen(want)) != 0) {
		t_fails++;
		fprintf(stderr, "%s: message \"%s\", expected it to start with \"%s\"\n", what,
		    d->msg, want);
	}
}

#endif
