/*
 * t.h: the unit-test harness. Checks record a failure and go on; main
 * returns t_done(), non-zero when any check failed.
 */
#ifndef BF_T_H
#define BF_T_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int t_fails, t_checks;

#define T_CHECK(c) do { t_checks++; if (!(c)) { t_fails++; \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); } } while (0)
#define T_EQ_INT(a, b) do { long long t_a = (long long)(a), t_b = (long long)(b); t_checks++; \
	if (t_a != t_b) { t_fails++; fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
	__FILE__, __LINE__, #a, t_a, #b, t_b); } } while (0)
#define T_EQ_STR(a, b) do { const char *t_a = (a), *t_b = (b); t_checks++; \
	if (t_a == NULL || t_b == NULL || strcmp(t_a, t_b) != 0) { t_fails++; \
	fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
	t_a ? t_a : "(null)", t_b ? t_b : "(null)"); } } while (0)
#define T_NEAR(a, b, tol) do { double t_a = (a), t_b = (b); t_checks++; \
	if (!(fabs(t_a - t_b) <= (tol))) { t_fails++; fprintf(stderr, \
	"%s:%d: %s == %.17g, expected %.17g (tol %g)\n", __FILE__, __LINE__, #a, t_a, t_b, \
	(double)(tol)); } } while (0)
#define T_CONTAINS(hay, needle) do { const char *t_h = (hay), *t_n = (needle); t_checks++; \
	if (t_h == NULL || strstr(t_h, t_n) == NULL) { t_fails++; fprintf(stderr, \
	"%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, t_h ? t_h : "(null)", \
	t_n); } } while (0)
/* A setup step that must succeed (a buffer append, say): counted only when
 * it fails, so a loop of appends does not swell the check count. */
#define T_OK(e) do { long long t_r = (long long)(e); if (t_r != 0) { t_checks++; \
	t_fails++; fprintf(stderr, "%s:%d: %s returned %lld\n", __FILE__, __LINE__, #e, \
	t_r); } } while (0)

static inline int
t_done(void)
{
	fprintf(stderr, "%d checks, %d failed\n", t_checks, t_fails);
	return t_fails != 0;
}

#endif
