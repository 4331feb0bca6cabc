/*
 * runner-adaptive.c: the add-a-boot question of adaptive repetitions, as
 * the runner asks it of a finishing run (runner.h). Moved out of runner.c
 * unchanged, so runner.c stays under the size limit as it grows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "stats.h"

/*
 * Adaptive repetitions: whether the cell of a run gets one more boot is
 * decided inside the transaction that finishes the run, under the lock of
 * its job (store_run_finish_adaptive), so two boots of one cell finishing
 * together, on one coordinator or two sharing a PostgreSQL store, cannot
 * both see the other as still running and both leave the cell short.
 * Here: what the question is, for a successful run about to finish.
 */
int
runner_adaptive_prepare(const struct runner_claim *rc, struct runner_adaptive *ad)
{
	const struct job_spec *job = rc->job;
	const struct recipe *r = rc->recipe;
	const char *metric;

	memset(ad, 0, sizeof(*ad));
	if (job->target_ci_pct <= 0)
		return 0;
	metric = job->target_metric;
	if (metric == NULL && r->nmetrics > 0)
		metric = r->metrics[0].name;
	if (metric == NULL || strlen(metric) >= sizeof(ad->metric))
		return 0;
	snprintf(ad->metric, sizeof(ad->metric), "%s", metric);
	ad->target_ci_pct = job->target_ci_pct;
	ad->max_boots = job->max_boots;
	return 1;
}

int
runner_adaptive_decide(void *arg, const double *v, const int *boot, size_t n, int planned)
{
	struct runner_adaptive *ad = arg;
	double *means = NULL, half;
	size_t k = 0;
	struct stats_summary sm;
	int want = 0;

	ad->note[0] = '\0';
	if (n == 0 || (means = calloc(n, sizeof(*means))) == NULL ||
	    stats_boot_means(v, boot, n, means, &k) != 0)
		goto out;
	if ((int)k < planned || planned >= ad->max_boots || k < 2)
		goto out;	/* other boots still to come, or at the cap */
	if (stats_summarize(means, k, &sm) != 0 || !isfinite(sm.ci_hi) || sm.mean == 0)
		goto out;
	half = 100 * (sm.ci_hi - sm.mean) / fabs(sm.mean);
	if (half > ad->target_ci_pct) {
		want = 1;
		snprintf(ad->note, sizeof(ad->note), "adaptive: %s 95%% CI +-%.3g%% over %zu "
		    "boots is wider than the target %.3g%%; adding boot %d", ad->metric, half, k,
		    ad->target_ci_pct, planned);
	}
out:
	free(means);
	return want;
}
