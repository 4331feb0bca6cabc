/*
 * pagerank.c: our GAPBS-style PageRank: pull direction (each vertex sums
 * the contributions score/degree of its neighbours), damping 0.85, until
 * the L1 norm of the change falls below the tolerance or the iteration cap,
 * over a Kronecker or uniform graph (graph.c, undirected, so in-neighbours
 * are the neighbours). Unlike GAPBS, the mass of vertices without edges is
 * spread evenly, so the scores are a distribution (they sum to 1). Each
 * trial starts from 1/N and is timed; average_time_s is their mean.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "wl.h"
#include "wlx.h"

#define PAGERANK_MAX_TRIALS	1000

struct pagerank_shared {
	const struct graph *g;
	double d, tol, *score, *contrib, dangling, err;
	double part_d[WLX_MAX_THREADS], part_e[WLX_MAX_THREADS];
	int maxit, iters, nt;
	pthread_barrier_t bar;
};

struct pagerank_job {
	struct pagerank_shared *sh;
	int t;
};

static void *
pagerank_worker(void *arg)
{
	struct pagerank_job *j = arg;
	struct pagerank_shared *sh = j->sh;
	const struct graph *g = sh->g;
	int64_t v, e, lo, hi, n = g->nv, deg;
	double dang, err, sum, base = (1.0 - sh->d) / (double)n, x;
	int it, k;

	lo = n / sh->nt * j->t + (j->t < n % sh->nt ? j->t : n % sh->nt);
	hi = lo + n / sh->nt + (j->t < n % sh->nt);
	for (it = 0; it < sh->maxit; it++) {
		dang = 0;
		for (v = lo; v < hi; v++) {
			deg = g->row[v + 1] - g->row[v];
			if (deg == 0) {
				dang += sh->score[v];
				sh->contrib[v] = 0;
			} else
				sh->contrib[v] = sh->score[v] / (double)deg;
		}
		sh->part_d[j->t] = dang;
		pthread_barrier_wait(&sh->bar);
		/* every thread adds the partials in the same order: the same sum */
		for (dang = 0, k = 0; k < sh->nt; k++)
			dang += sh->part_d[k];
		err = 0;
		for (v = lo; v < hi; v++) {
			sum = 0;
			for (e = g->row[v]; e < g->row[v + 1]; e++)
				sum += sh->contrib[g->adj[e]];
			x = base + sh->d * (sum + dang / (double)n);
			err += fabs(x - sh->score[v]);
			sh->score[v] = x;
		}
		sh->part_e[j->t] = err;
		pthread_barrier_wait(&sh->bar);
		for (err = 0, k = 0; k < sh->nt; k++)
			err += sh->part_e[k];
		/* nobody rewrites part_* before all have read them */
		pthread_barrier_wait(&sh->bar);
		if (err < sh->tol)
			break;
	}
	if (j->t == 0)
		sh->iters = it < sh->maxit ? it + 1 : sh->maxit;
	return NULL;
}

int
pagerank_run(const struct graph *g, double d, double tol, int maxit, int threads,
    double *scores)
{
	size_t cb = (size_t)g->nv * sizeof(double);
	struct pagerank_shared *sh = calloc(1, sizeof(*sh));
	struct pagerank_job jobs[WLX_MAX_THREADS];
	double *contrib = wlx_alloc(cb, g->thp);
	int64_t v;
	int t, iters;

	if (sh == NULL || contrib == NULL) {
		free(sh);
		wlx_free(contrib, cb);
		return -1;
	}
	*sh = (struct pagerank_shared){ .g = g, .d = d, .tol = tol, .score = scores,
	    .contrib = contrib, .maxit = maxit, .nt = threads };
	for (v = 0; v < g->nv; v++)
		scores[v] = 1.0 / (double)g->nv;
	pthread_barrier_init(&sh->bar, NULL, (unsigned)threads);
	for (t = 0; t < threads; t++)
		jobs[t] = (struct pagerank_job){ .sh = sh, .t = t };
	wlx_par(threads, pagerank_worker, jobs, sizeof(jobs[0]));
	pthread_barrier_destroy(&sh->bar);
	iters = sh->iters;
	wlx_free(sh->contrib, cb);
	free(sh);
	return iters;
}

int
pagerank_main(int argc, char **argv)
{
	static const char *const kinds[] = { "kronecker", "uniform" };
	int64_t scale = 0, degree = 16, trials = 16, maxit = 20, threads = 1, seed = 1, i;
	struct wl_opt o[] = {
		{ "--scale", 1, 31, &scale, 1 },
		{ "--degree", 1, 64, &degree, 0 },
		{ "--trials", 1, PAGERANK_MAX_TRIALS, &trials, 0 },
		{ "--max-iters", 1, 10000, &maxit, 0 },
		{ "--threads", 1, WLX_MAX_THREADS, &threads, 0 },
		{ "--seed", 0, INT64_MAX, &seed, 0 },
	};
	double tol = 1e-4, t0, dt, tsum = 0, tmin = 0, tmax = 0, sum;
	struct graph g = { 0 };
	double *scores = NULL;
	size_t sb;
	int thp, kind = GRAPH_KRONECKER, r, it = 0;
	int64_t v;

	if ((r = wlx_thp_arg("pagerank", &argc, argv, &thp)) != 0 ||
	    (r = wlx_word("pagerank", &argc, argv, "--graph", kinds, 2, &kind)) != 0 ||
	    (r = wlx_num("pagerank", &argc, argv, "--tolerance", 1e-12, 1, &tol)) != 0 ||
	    (r = wl_parse("pagerank", argc, argv, o, 6)) != 0)
		return r;
	/* edge list and adjacency 8 B each per tuple; CSR, labels, scores per vertex */
	if ((r = wlx_cap("pagerank", (double)((int64_t)1 << scale) * (double)(16 * degree + 40))) != 0)
		return r;
	t0 = wl_now();
	if (graph_generate(&g, kind, (int)scale, (int)degree, (uint64_t)seed, (int)threads,
	    thp) != 0 || graph_csr(&g, (int)threads) != 0)
		goto oom;
	printf("graph_build_s: %.6f\n", wl_now() - t0);
	sb = (size_t)g.nv * sizeof(double);
	if ((scores = wlx_alloc(sb, thp)) == NULL)
		goto oom;
	for (i = 0; i < trials; i++) {
		t0 = wl_now();
		if ((it = pagerank_run(&g, 0.85, tol, (int)maxit, (int)threads, scores)) < 0)
			goto oom;
		dt = wl_now() - t0;
		tsum += dt;
		tmin = i == 0 || dt < tmin ? dt : tmin;
		tmax = dt > tmax ? dt : tmax;
	}
	for (sum = 0, v = 0; v < g.nv; v++)
		sum += scores[v];
	/* the scores are a distribution, or the run measured something broken */
	if (fabs(sum - 1.0) > 1e-6) {
		fprintf(stderr, "benchfleet-agent: pagerank: scores sum to %.9f, not 1\n", sum);
		wlx_free(scores, sb);
		graph_free(&g);
		return 1;
	}
	printf("iterations: %d\nscore_sum: %.9f\n", it, sum);
	printf("min_time_s: %.6f\nmax_time_s: %.6f\n", tmin, tmax);
	printf("average_time_s: %.6f\n", tsum / (double)trials);
	printf("anon_huge_kb: %ld\n", wl_anon_huge_kb());
	wlx_free(scores, sb);
	graph_free(&g);
	return 0;
oom:
	fprintf(stderr, "benchfleet-agent: pagerank: out of memory\n");
	wlx_free(scores, (size_t)g.nv * sizeof(double));
	graph_free(&g);
	return 1;
}
