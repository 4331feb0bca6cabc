/*
 * knob-int.h: what knob.c and knob-sys.c share and nobody else uses: the
 * root-prefixed path builder, the small-file reader, and the knob kinds
 * whose files are not one fixed path (SMT, cpuidle).
 */
#ifndef BF_KNOB_INT_H
#define BF_KNOB_INT_H

#include <stddef.h>

#include "knob.h"

#define KNOB_CPU	"/sys/devices/system/cpu"
#define KNOB_MAX_READ	4096

/* root + head [+ arg + tail]: a numbered path (cpuN, hugepages-NkB) has a tail. */
int knob_mkpath(char *out, size_t outsz, const char *head, const char *tail, long long arg);
/* Read a small file into buf (NUL-terminated, trailing whitespace cut);
 * BF_ERR_NOTFOUND when it does not exist. */
int knob_slurp(const char *path, char *buf, size_t bufsz, char *why, size_t whysz);
int knob_exists(const char *path);

/* smt/control, when it can be written: BF_ERR_NOTFOUND without SMT
 * control or SMT, BF_ERR_STATE when forced off at boot. */
int knob_smt_files(char (*paths)[KNOB_MAX_PATH], size_t *np, char *why, size_t whysz);
/* "on" or "off" from smt/active. */
int knob_smt_read(char *out, size_t outsz, char *why, size_t whysz);

/* Every cpuN/cpuidle/stateK/disable; BF_ERR_NOTFOUND when there is none. */
int knob_cpuidle_files(char (*paths)[KNOB_MAX_PATH], size_t max, size_t *np, char *why,
    size_t whysz);
/* The limit in force as "X..Y", "X.." or "mixed" (knob.h, knob_same). */
int knob_cpuidle_read(char *out, size_t outsz, char *why, size_t whysz);
/* Disable every state whose latency exceeds us, enable the others. */
int knob_cpuidle_write(const char *us, char *why, size_t whysz);
int knob_cpuidle_same(const char *want, const char *got);

#endif
