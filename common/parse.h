/*
 * parse.h: the one range-checked way to turn text into numbers.
 * Never use atoi, strtol without checks, or sscanf.
 */
#ifndef BF_PARSE_H
#define BF_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Whole string must be a decimal integer in [min, max]; no spaces.
 * BF_ERR_PARSE or BF_ERR_RANGE otherwise. */
int parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
/* Same on a counted, non-NUL-terminated span. */
int parse_i64_n(const char *s, size_t len, int64_t min, int64_t max, int64_t *out);
/* A finite decimal floating-point number (strtod syntax, no inf/nan). */
int parse_double(const char *s, double *out);
int parse_double_n(const char *s, size_t len, double *out);

#define PARSE_REGEX_MAX_REPEAT	1000	/* product of all {m,n} bounds */
/*
 * Refuse a POSIX extended regex whose bounded repetitions could make glibc's
 * regcomp expand it without limit ((a{255}){255} takes minutes and
 * gigabytes: the fuzzer found it): the product of every {m,n} upper bound
 * must stay under PARSE_REGEX_MAX_REPEAT. Conservative: nesting is not
 * tracked, every bound multiplies. BF_ERR_INVALID with *why set.
 */
int parse_regex_check(const char *re, const char **why);

#endif
