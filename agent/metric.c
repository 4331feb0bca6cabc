/*
 * metric.c: regex extraction of metrics. The capture may hold NUL bytes (a
 * binary workload), so matching uses REG_STARTEND over the counted buffer.
 */
#include <regex.h>
#include <string.h>

#include "err.h"
#include "metric.h"
#include "parse.h"

int
metric_extract(const struct step_metric *m, const char *out, size_t len, double *value)
{
	regmatch_t pm[2];
	char num[METRIC_MAX_NUM];
	size_t i, n = 0;
	int r, flags = 0;

	if (m == NULL || !m->re_ok || out == NULL) {
		r = BF_ERR_INVALID;
		goto out;
	}
	pm[0].rm_so = 0;
	pm[0].rm_eo = (regoff_t)len;
#ifdef REG_STARTEND
	flags = REG_STARTEND;
#endif
	if (regexec(&m->re, out, 2, pm, flags) != 0 || pm[1].rm_so < 0) {
		r = BF_ERR_NOTFOUND;
		goto out;
	}
	for (i = (size_t)pm[1].rm_so; i < (size_t)pm[1].rm_eo; i++) {
		if (out[i] == ',')
			continue;
		if (n == sizeof(num)) {
			r = BF_ERR_TOOBIG;
			goto out;
		}
		num[n++] = out[i];
	}
	r = parse_double_n(num, n, value);
out:
	return r;
}
