/*
 * parse.c: the one range-checked way to turn text into numbers. libc only:
 * the static agent compiles this file directly.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "parse.h"

/* Longest text we accept for a number; longer is surely hostile. */
#define PARSE_MAX_NUM	400

int
parse_i64_n(const char *s, size_t len, int64_t min, int64_t max, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	uint64_t acc = 0, lim;

	if (s == NULL || len == 0)
		return BF_ERR_PARSE;
	if (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == len)
		return BF_ERR_PARSE;
	/* magnitude limit of int64 in the chosen sign */
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < len; i++) {
		unsigned dgt;

		if (s[i] < '0' || s[i] > '9')
			return BF_ERR_PARSE;
		dgt = (unsigned)(s[i] - '0');
		if (acc > (lim - dgt) / 10) {
			/* keep scanning so that "99999x" is a parse error, not range */
			for (i++; i < len; i++)
				if (s[i] < '0' || s[i] > '9')
					return BF_ERR_PARSE;
			return BF_ERR_RANGE;
		}
		acc = acc * 10 + dgt;
	}
	{
		int64_t v;

		if (neg)
			v = acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc;
		else
			v = (int64_t)acc;
		if (v < min || v > max)
			return BF_ERR_RANGE;
		*out = v;
	}
	return 0;
}

int
parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	if (s == NULL)
		return BF_ERR_PARSE;
	return parse_i64_n(s, strlen(s), min, max, out);
}

/* strtod accepts hex floats, inf, nan and leading space; we take only plain decimals. */
static int
parse_is_decimal(const char *s, size_t len)
{
	size_t i = 0, digits = 0;

	if (i < len && (s[i] == '-' || s[i] == '+'))
		i++;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	if (i < len && s[i] == '.')
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			digits++;
	if (digits == 0)
		return 0;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t edig = 0;

		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
			i++;
		for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			edig++;
		if (edig == 0)
			return 0;
	}
	return i == len;
}

int
parse_double_n(const char *s, size_t len, double *out)
{
	char tmp[PARSE_MAX_NUM + 1], *end;
	double v;

	if (s == NULL || len == 0)
		return BF_ERR_PARSE;
	if (len > PARSE_MAX_NUM)
		return BF_ERR_TOOBIG;
	if (!parse_is_decimal(s, len))
		return BF_ERR_PARSE;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	errno = 0;
	v = strtod(tmp, &end);
	if (end != tmp + len)
		return BF_ERR_PARSE;
	/* ERANGE on underflow still gives a usable tiny value; overflow does not */
	if (!isfinite(v))
		return BF_ERR_RANGE;
	*out = v;
	return 0;
}

int
parse_double(const char *s, double *out)
{
	if (s == NULL)
		return BF_ERR_PARSE;
	return parse_double_n(s, strlen(s), out);
}

int
parse_regex_check(const char *re, const char **why)
{
	unsigned long product = 1, bound, v;
	const char *p;
	int digits, after_rep = 0;

	*why = NULL;
	for (p = re; *p != '\0'; p++) {
		/* a+++ nests repetitions just as (a+)+ does, and regcomp copies
		 * the tree for each: the fuzzer found 30 stacked '+' taking
		 * seconds. Stacked operators are refused. */
		if (*p == '*' || *p == '+' || *p == '?' || *p == '{') {
			if (after_rep && !(*p == '{' && !(p[1] >= '0' && p[1] <= '9'))) {
				*why = "stacked repetition operators (like a++ or a*{2}) are not "
				    "allowed";
				return BF_ERR_INVALID;
			}
		}
		after_rep = *p == '*' || *p == '+' || *p == '?';
		if (*p == '\\' && p[1] != '\0') {
			p++;		/* an escaped brace is a literal */
			continue;
		}
		if (*p == '[') {
			/* a bracket expression holds no repetition; skip it */
			p++;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p != '\0' && *p != ']')
				p++;
			if (*p == '\0')
				break;
			continue;
		}
		if (*p != '{')
			continue;
		/* {m}, {m,} or {m,n}: the largest number counts; {m,} is unbounded */
		bound = 0;
		v = 0;
		digits = 0;
		for (p++; *p != '\0' && *p != '}'; p++) {
			if (*p >= '0' && *p <= '9') {
				if (v > 100000) {
					*why = "a repetition bound is too large";
					return BF_ERR_INVALID;
				}
				v = v * 10 + (unsigned long)(*p - '0');
				digits = 1;
			} else if (*p == ',') {
				bound = v;
				v = 0;
				if (p[1] == '}') {
					*why = "an open repetition {m,} is not allowed; use + or *";
					return BF_ERR_INVALID;
				}
			} else {
				break;	/* not a bound: regcomp will judge it */
			}
		}
		if (v > bound)
			bound = v;
		if (*p == '\0')
			break;
		after_rep = *p == '}' && digits;
		if (!digits || bound <= 1)
			continue;
		if (bound > PARSE_REGEX_MAX_REPEAT || product > PARSE_REGEX_MAX_REPEAT / bound) {
			*why = "its {m,n} repetitions multiply past 1000; simplify it";
			return BF_ERR_INVALID;
		}
		product *= bound;
	}
	return 0;
}
