/*
 * xsbench.c: our XSBench-style macroscopic cross-section lookup, written
 * from Tramm et al., "XSBench - the development and verification of a
 * performance abstraction for Monte Carlo reactor analysis" (2014): each of
 * n_isotopes nuclides has n_gridpoints sorted energies with five cross
 * sections each; the unionised energy grid (every nuclide's energies,
 * sorted) stores, per union point, each nuclide's grid index, so a lookup
 * is one binary search. A lookup draws an energy and a material (the
 * paper's H-M reactor materials and their lookup probabilities), then sums
 * concentration x interpolated cross sections over the material's
 * nuclides. Lookup i's draws come from the seed and i alone, so the
 * verification hash (the sum of a hash of each lookup's largest
 * cross-section index) is the same for any thread count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl.h"
#include "wlx.h"

#define XSBENCH_NXS	5
#define XSBENCH_NMAT	12

/* Nuclides per material past the fuel (cladding, cold and hot borated
 * water, reactor pressure vessel, reflectors, plates, nozzles, assembly
 * tops and bottoms) and each material's share of the lookups. */
static const int xsbench_mat_nuc[XSBENCH_NMAT] = { 0, 5, 4, 4, 27, 21, 21, 21, 21, 21, 9, 9 };
static const double xsbench_mat_p[XSBENCH_NMAT] = {
	0.140, 0.052, 0.275, 0.134, 0.154, 0.064, 0.066, 0.055, 0.008, 0.015, 0.025, 0.013
};

static double
xsbench_unit(uint64_t *s)
{
	return (double)(wl_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

static int
xsbench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct xsbench_job {
	const struct xsbench *x;
	int64_t lo, hi;
	uint64_t seed, hash;
};

/* Each nuclide's index below every union point, one merge-like sweep. */
static void *
xsbench_index_worker(void *arg)
{
	struct xsbench_job *j = arg;
	const struct xsbench *x = j->x;
	int64_t n, u, p, nu = x->niso * x->ngrid;
	const double *e;

	for (n = j->lo; n < j->hi; n++) {
		e = &x->egrid[n * x->ngrid];
		for (p = 0, u = 0; u < nu; u++) {
			while (p < x->ngrid - 2 && e[p + 1] <= x->uegrid[u])
				p++;
			x->uindex[u * x->niso + n] = (int32_t)p;
		}
	}
	return NULL;
}

int
xsbench_init(struct xsbench *x, int64_t niso, int64_t ngrid, uint64_t seed, int threads,
    int thp)
{
	struct xsbench_job jobs[WLX_MAX_THREADS];
	int64_t n, i, nu = niso * ngrid;
	uint64_t s = seed ^ 0x78736265ULL;
	int32_t *all = NULL, t32;
	int m, k, t;

	memset(x, 0, sizeof(*x));
	x->niso = niso;
	x->ngrid = ngrid;
	x->thp = thp;
	x->nmat = XSBENCH_NMAT;
	x->egrid = wlx_alloc((size_t)nu * sizeof(double), thp);
	x->xs = wlx_alloc((size_t)nu * XSBENCH_NXS * sizeof(double), thp);
	x->uegrid = wlx_alloc((size_t)nu * sizeof(double), thp);
	x->ubytes = (size_t)nu * (size_t)niso * sizeof(int32_t);
	x->uindex = wlx_alloc(x->ubytes, thp);
	all = calloc((size_t)niso, sizeof(*all));
	if (x->egrid == NULL || x->xs == NULL || x->uegrid == NULL || x->uindex == NULL ||
	    all == NULL)
		goto fail;
	for (n = 0; n < niso; n++) {
		for (i = 0; i < ngrid; i++)
			x->egrid[n * ngrid + i] = xsbench_unit(&s);
		qsort(&x->egrid[n * ngrid], (size_t)ngrid, sizeof(double), xsbench_cmp);
	}
	for (i = 0; i < nu * XSBENCH_NXS; i++)
		x->xs[i] = xsbench_unit(&s);
	memcpy(x->uegrid, x->egrid, (size_t)nu * sizeof(double));
	qsort(x->uegrid, (size_t)nu, sizeof(double), xsbench_cmp);
	for (t = 0; t < threads; t++)
		jobs[t] = (struct xsbench_job){ .x = x, .lo = niso / threads * t +
		    (t < niso % threads ? t : niso % threads) };
	for (t = 0; t < threads; t++)
		jobs[t].hi = jobs[t].lo + niso / threads + (t < niso % threads);
	wlx_par(threads, xsbench_index_worker, jobs, sizeof(jobs[0]));
	/* materials: the fuel takes all but 34 nuclides of a large problem (321
	 * of 355, 34 of 68), the others a random distinct draw of the paper's
	 * counts (fewer when there are fewer nuclides) */
	for (m = 0; m < XSBENCH_NMAT; m++) {
		x->nnuc[m] = m == 0 ? (int)(niso >= 68 ? niso - 34 : (niso + 1) / 2) :
		    (int)(xsbench_mat_nuc[m] < niso ? xsbench_mat_nuc[m] : niso);
		x->mnuc[m] = calloc((size_t)x->nnuc[m], sizeof(int32_t));
		x->mconc[m] = calloc((size_t)x->nnuc[m], sizeof(double));
		if (x->mnuc[m] == NULL || x->mconc[m] == NULL)
			goto fail;
		for (n = 0; n < niso; n++)
			all[n] = (int32_t)n;
		for (k = 0; k < x->nnuc[m]; k++) {
			if (m > 0) {
				i = k + (int64_t)(wl_rand(&s) % (uint64_t)(niso - k));
				t32 = all[k];
				all[k] = all[i];
				all[i] = t32;
			}
			x->mnuc[m][k] = all[k];
			x->mconc[m][k] = 1.0 - xsbench_unit(&s);
		}
	}
	free(all);
	return 0;
fail:
	free(all);
	xsbench_free(x);
	return -1;
}

static void
xsbench_interp(const struct xsbench *x, int64_t nuc, int64_t i, double e, double conc,
    double macro[XSBENCH_NXS])
{
	const double *lo = &x->xs[(nuc * x->ngrid + i) * XSBENCH_NXS], *hi = lo + XSBENCH_NXS;
	double elo = x->egrid[nuc * x->ngrid + i], ehi = x->egrid[nuc * x->ngrid + i + 1];
	double f = ehi > elo ? (ehi - e) / (ehi - elo) : 0;
	int k;

	for (k = 0; k < XSBENCH_NXS; k++)
		macro[k] += conc * (hi[k] - f * (hi[k] - lo[k]));
}

/* The largest index i of a[0..n) with a[i] <= e, clamped to 0..n-1 (and
 * the caller clamps to leave room for i + 1). */
static int64_t
xsbench_search(const double *a, int64_t n, double e)
{
	int64_t lo = 0, hi = n - 1, mid;

	if (e < a[0])
		return 0;
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (a[mid] <= e)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

void
xsbench_lookup(const struct xsbench *x, double e, int mat, double macro[XSBENCH_NXS])
{
	int64_t u = xsbench_search(x->uegrid, x->niso * x->ngrid, e);
	const int32_t *idx = &x->uindex[u * x->niso];
	int k;

	memset(macro, 0, XSBENCH_NXS * sizeof(double));
	for (k = 0; k < x->nnuc[mat]; k++)
		xsbench_interp(x, x->mnuc[mat][k], idx[x->mnuc[mat][k]], e, x->mconc[mat][k], macro);
}

void
xsbench_lookup_direct(const struct xsbench *x, double e, int mat, double macro[XSBENCH_NXS])
{
	int64_t i, nuc;
	int k;

	memset(macro, 0, XSBENCH_NXS * sizeof(double));
	for (k = 0; k < x->nnuc[mat]; k++) {
		nuc = x->mnuc[mat][k];
		i = xsbench_search(&x->egrid[nuc * x->ngrid], x->ngrid, e);
		if (i > x->ngrid - 2)
			i = x->ngrid - 2;
		xsbench_interp(x, nuc, i, e, x->mconc[mat][k], macro);
	}
}

static void *
xsbench_worker(void *arg)
{
	struct xsbench_job *j = arg;
	double macro[XSBENCH_NXS], e, p;
	uint64_t s, h = 0, z;
	int64_t i;
	int m, k, best;

	for (i = j->lo; i < j->hi; i++) {
		s = j->seed ^ ((uint64_t)i * 0xd1342543de82ef95ULL);
		e = xsbench_unit(&s);
		p = xsbench_unit(&s) * 1.001;	/* the paper's shares sum to 1.001 */
		for (m = 0; m < XSBENCH_NMAT - 1 && p >= xsbench_mat_p[m]; m++)
			p -= xsbench_mat_p[m];
		xsbench_lookup(j->x, e, m, macro);
		for (best = 0, k = 1; k < XSBENCH_NXS; k++)
			if (macro[k] > macro[best])
				best = k;
		z = (uint64_t)i * 5 + (uint64_t)best;
		h += wl_rand(&z);
	}
	j->hash = h;
	return NULL;
}

uint64_t
xsbench_run(const struct xsbench *x, int64_t lookups, uint64_t seed, int threads)
{
	struct xsbench_job jobs[WLX_MAX_THREADS];
	uint64_t h = 0;
	int t;

	for (t = 0; t < threads; t++) {
		jobs[t] = (struct xsbench_job){ .x = x, .seed = seed,
		    .lo = lookups / threads * t + (t < lookups % threads ? t : lookups % threads) };
		jobs[t].hi = jobs[t].lo + lookups / threads + (t < lookups % threads);
	}
	wlx_par(threads, xsbench_worker, jobs, sizeof(jobs[0]));
	for (t = 0; t < threads; t++)
		h += jobs[t].hash;
	return h;
}

void
xsbench_free(struct xsbench *x)
{
	size_t nu;
	int m;

	if (x == NULL)
		return;
	nu = (size_t)(x->niso * x->ngrid);
	wlx_free(x->egrid, nu * sizeof(double));
	wlx_free(x->xs, nu * XSBENCH_NXS * sizeof(double));
	wlx_free(x->uegrid, nu * sizeof(double));
	wlx_free(x->uindex, x->ubytes);
	for (m = 0; m < XSBENCH_NMAT; m++) {
		free(x->mnuc[m]);
		free(x->mconc[m]);
	}
	memset(x, 0, sizeof(*x));
}

int
xsbench_main(int argc, char **argv)
{
	int64_t niso = 355, ngrid = 11303, lookups = 15000000, threads = 1, seed = 1;
	struct wl_opt o[] = {
		{ "--isotopes", 1, 100000, &niso, 0 },
		{ "--gridpoints", 2, 10000000, &ngrid, 0 },
		{ "--lookups", 1, (int64_t)1 << 40, &lookups, 0 },
		{ "--threads", 1, WLX_MAX_THREADS, &threads, 0 },
		{ "--seed", 0, INT64_MAX, &seed, 0 },
	};
	struct xsbench x;
	double t0, dt, bytes;
	uint64_t h;
	int thp, r;

	if ((r = wlx_thp_arg("xsbench", &argc, argv, &thp)) != 0 ||
	    (r = wl_parse("xsbench", argc, argv, o, 5)) != 0)
		return r;
	bytes = (double)niso * (double)ngrid * (56.0 + 4.0 * (double)niso);
	if ((r = wlx_cap("xsbench", bytes)) != 0)
		return r;
	t0 = wl_now();
	if (xsbench_init(&x, niso, ngrid, (uint64_t)seed, (int)threads, thp) != 0) {
		fprintf(stderr, "benchfleet-agent: xsbench: out of memory\n");
		return 1;
	}
	printf("Initialization: %.6f seconds\n", wl_now() - t0);
	printf("Memory: %.1f MiB\n", bytes / 1048576.0);
	t0 = wl_now();
	h = xsbench_run(&x, lookups, (uint64_t)seed, (int)threads);
	dt = wl_now() - t0;
	printf("Lookups: %lld\n", (long long)lookups);
	printf("Runtime: %.6f seconds\n", dt);
	printf("Lookups/s: %.0f\n", (double)lookups / dt);
	printf("Verification checksum: %llu\n", (unsigned long long)h);
	printf("anon_huge_kb: %ld\n", wl_anon_huge_kb());
	xsbench_free(&x);
	return 0;
}
