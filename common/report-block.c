/*
 * report-block.c: the pooled, machine-blocked comparison of a "block" job
 * (report-block.h): geometric mean of the per-machine ratios of means,
 * Student t over their logs.
 */
#include <math.h>
#include <string.h>

#include "err.h"
#include "report.h"
#include "report-block.h"
#include "stats.h"

int
report_block_pool(const double *a, const double *b, size_t n, int higher_better,
    int no_direction, size_t min_n, struct report_block_res *out)
{
	double lr[REPORT_BLOCK_MAX], t, se;
	struct stats_summary s;
	size_t m, k = 0;
	int r;

	if (a == NULL || b == NULL || out == NULL || n > REPORT_BLOCK_MAX)
		return BF_ERR_INVALID;
	memset(out, 0, sizeof(*out));
	out->ratio = out->lo = out->hi = out->p = NAN;
	out->pct = out->pct_lo = out->pct_hi = NAN;
	out->mark = "";
	if (min_n == 0)
		min_n = REPORT_MIN_N;
	for (m = 0; m < n; m++) {
		if (isnan(a[m]) || isnan(b[m]))
			continue;
		if (!(a[m] > 0) || !(b[m] > 0) || !isfinite(a[m]) || !isfinite(b[m])) {
			out->note = "a mean <= 0: no log ratio, not pooled";
			return 0;
		}
		lr[k++] = log(b[m] / a[m]);
	}
	out->n = k;
	if (k == 0) {
		out->note = "no machine ran both cells";
		return 0;
	}
	if ((r = stats_summarize(lr, k, &s)) != 0)
		return r;
	out->ratio = exp(s.mean);
	out->pct = 100 * (out->ratio - 1);
	if (k < 2) {
		out->note = "one machine: no CI over machines";
		out->mark = no_direction ? "" : "low n";
		return 0;
	}
	if ((r = stats_t_quantile(0.975, (double)(k - 1), &t)) != 0)
		return r;
	se = s.sd / sqrt((double)k);
	out->lo = exp(s.mean - t * se);
	out->hi = exp(s.mean + t * se);
	out->pct_lo = 100 * (out->lo - 1);
	out->pct_hi = 100 * (out->hi - 1);
	if (se > 0) {
		if ((r = stats_t_p2(s.mean / se, (double)(k - 1), &out->p)) != 0)
			return r;
	} else
		out->p = s.mean == 0 ? 1 : 0;
	out->sig = out->p < 0.05 && k >= min_n;
	if (no_direction)
		out->mark = "";
	else if (k < min_n)
		out->mark = "low n";
	else if (out->sig)
		out->mark = (s.mean > 0) == (higher_better != 0) ? "better" : "worse";
	return 0;
}

int
report_block_decimals(const struct report_block_res *r)
{
	double hw = (r->pct_hi - r->pct_lo) / 2;
	int d = 2;

	if (isfinite(hw) && hw > 0 && 1 - (int)floor(log10(hw)) > d)
		d = 1 - (int)floor(log10(hw));
	return d > 12 ? 12 : d;
}
