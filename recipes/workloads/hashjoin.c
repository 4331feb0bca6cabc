/*
 * hashjoin.c: our hash join, in the style of the Mitosis/vMitosis hashjoin
 * workload: an equi-join of relations R (build) and S (probe) of
 * (key, payload) tuples. T threads insert R into one open-addressing table
 * (linear probing, slots claimed with compare-and-swap, 2x R rounded up to
 * a power of two), then probe it with S; every equal (r, s) pair is a match.
 * The workload makes R's keys distinct and gives a --selectivity percent of
 * S a key from R, the rest keys absent from R, so the expected matches are
 * known: a different count fails the run.
 */
#include <stdio.h>
#include <stdlib.h>

#include "wl.h"
#include "wlx.h"

#define HASHJOIN_EMPTY	UINT64_MAX	/* keys are below it */

struct hashjoin_job {
	const struct hashjoin_rel *rel;
	uint64_t *slot_key, *slot_pay, mask;
	int64_t matches;
	uint64_t sum;
	int t, nt;
};

static uint64_t
hashjoin_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	return k ^ (k >> 33);
}

static void
hashjoin_slice(int64_t n, int t, int nt, int64_t *lo, int64_t *hi)
{
	*lo = n / nt * t + (t < n % nt ? t : n % nt);
	*hi = *lo + n / nt + (t < n % nt);
}

/* Build and probe are separate phases (wlx_par joins between them), so a
 * slot's payload may be written after its key is claimed. */
static void *
hashjoin_build(void *arg)
{
	struct hashjoin_job *j = arg;
	int64_t i, lo, hi;
	uint64_t h, expect, k;

	hashjoin_slice(j->rel->n, j->t, j->nt, &lo, &hi);
	for (i = lo; i < hi; i++) {
		k = j->rel->key[i];
		for (h = hashjoin_hash(k) & j->mask;; h = (h + 1) & j->mask) {
			expect = HASHJOIN_EMPTY;
			if (__atomic_load_n(&j->slot_key[h], __ATOMIC_RELAXED) == HASHJOIN_EMPTY &&
			    __atomic_compare_exchange_n(&j->slot_key[h], &expect, k, 0,
			    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				break;
		}
		j->slot_pay[h] = j->rel->pay[i];
	}
	return NULL;
}

static void *
hashjoin_probe(void *arg)
{
	struct hashjoin_job *j = arg;
	int64_t i, lo, hi, m = 0;
	uint64_t h, k, sk, sum = 0;

	hashjoin_slice(j->rel->n, j->t, j->nt, &lo, &hi);
	for (i = lo; i < hi; i++) {
		k = j->rel->key[i];
		for (h = hashjoin_hash(k) & j->mask; (sk = j->slot_key[h]) != HASHJOIN_EMPTY;
		    h = (h + 1) & j->mask)
			if (sk == k) {
				m++;
				sum += j->slot_pay[h] + j->rel->pay[i];
			}
	}
	j->matches = m;
	j->sum = sum;
	return NULL;
}

int64_t
hashjoin_join(const struct hashjoin_rel *r, const struct hashjoin_rel *s, int threads,
    int thp, uint64_t *sum, double *build_s, double *probe_s)
{
	struct hashjoin_job jobs[WLX_MAX_THREADS];
	uint64_t cap = 2, *key, *pay, h;
	int64_t m = 0;
	double t0;
	int t;

	while (cap < 2 * (uint64_t)r->n)
		cap *= 2;
	key = wlx_alloc(cap * sizeof(uint64_t), thp);
	pay = wlx_alloc(cap * sizeof(uint64_t), thp);
	if (key == NULL || pay == NULL) {
		wlx_free(key, cap * sizeof(uint64_t));
		wlx_free(pay, cap * sizeof(uint64_t));
		return -1;
	}
	t0 = wl_now();
	for (h = 0; h < cap; h++)
		key[h] = HASHJOIN_EMPTY;
	for (t = 0; t < threads; t++)
		jobs[t] = (struct hashjoin_job){ .rel = r, .slot_key = key, .slot_pay = pay,
		    .mask = cap - 1, .t = t, .nt = threads };
	wlx_par(threads, hashjoin_build, jobs, sizeof(jobs[0]));
	*build_s = wl_now() - t0;
	t0 = wl_now();
	for (t = 0; t < threads; t++)
		jobs[t].rel = s;
	wlx_par(threads, hashjoin_probe, jobs, sizeof(jobs[0]));
	*probe_s = wl_now() - t0;
	for (*sum = 0, t = 0; t < threads; t++) {
		m += jobs[t].matches;
		*sum += jobs[t].sum;
	}
	wlx_free(key, cap * sizeof(uint64_t));
	wlx_free(pay, cap * sizeof(uint64_t));
	return m;
}

/* Key i of R: a bijection of i below 2^62; S's misses use keys at or above
 * 2^62, which no R key reaches. */
static uint64_t
hashjoin_key(uint64_t i)
{
	const uint64_t m62 = ((uint64_t)1 << 62) - 1;
	uint64_t x = (i * 0x9e3779b97f4a7c15ULL) & m62;	/* odd: a bijection mod 2^62 */

	return x ^ (x >> 31);
}

struct hashjoin_fill {
	struct hashjoin_rel *rel;
	int64_t rsize, sel;
	int is_s, t, nt;
	int64_t hits;
};

static void *
hashjoin_fill_worker(void *arg)
{
	struct hashjoin_fill *f = arg;
	int64_t i, lo, hi;
	uint64_t s;

	hashjoin_slice(f->rel->n, f->t, f->nt, &lo, &hi);
	for (i = lo; i < hi; i++) {
		s = 0x6a6f696eULL ^ ((uint64_t)i * 0xd1342543de82ef95ULL) ^ (uint64_t)f->is_s;
		if (!f->is_s) {
			f->rel->key[i] = hashjoin_key((uint64_t)i);
		} else if ((int64_t)(wl_rand(&s) % 10000) < f->sel) {
			f->rel->key[i] = hashjoin_key(wl_rand(&s) % (uint64_t)f->rsize);
			f->hits++;
		} else {
			f->rel->key[i] = ((uint64_t)1 << 62) | (wl_rand(&s) >> 2);
		}
		f->rel->pay[i] = (uint64_t)i;
	}
	return NULL;
}

static int64_t
hashjoin_make(struct hashjoin_rel *rel, int64_t n, int is_s, int64_t rsize, int64_t sel,
    int threads, int thp)
{
	struct hashjoin_fill f[WLX_MAX_THREADS];
	int64_t hits = 0;
	int t;

	rel->n = n;
	rel->key = wlx_alloc((size_t)n * sizeof(uint64_t), thp);
	rel->pay = wlx_alloc((size_t)n * sizeof(uint64_t), thp);
	if (rel->key == NULL || rel->pay == NULL)
		return -1;
	for (t = 0; t < threads; t++)
		f[t] = (struct hashjoin_fill){ .rel = rel, .rsize = rsize, .sel = sel,
		    .is_s = is_s, .t = t, .nt = threads };
	wlx_par(threads, hashjoin_fill_worker, f, sizeof(f[0]));
	for (t = 0; t < threads; t++)
		hits += f[t].hits;
	return hits;
}

static void
hashjoin_drop(struct hashjoin_rel *rel)
{
	wlx_free(rel->key, (size_t)rel->n * sizeof(uint64_t));
	wlx_free(rel->pay, (size_t)rel->n * sizeof(uint64_t));
}

int
hashjoin_main(int argc, char **argv)
{
	int64_t rn = 0, sn = 0, threads = 1, iters = 1, it, expect, m = 0;
	double sel = 100, bs, ps, tb = 0, tp = 0;
	struct wl_opt o[] = {
		{ "--r-tuples", 1, (int64_t)1 << 34, &rn, 1 },
		{ "--s-tuples", 1, (int64_t)1 << 36, &sn, 1 },
		{ "--threads", 1, WLX_MAX_THREADS, &threads, 0 },
		{ "--repeat", 1, 1000, &iters, 0 },
	};
	struct hashjoin_rel r = { 0 }, s = { 0 };
	uint64_t sum;
	int thp, rc;

	if ((rc = wlx_thp_arg("hashjoin", &argc, argv, &thp)) != 0 ||
	    (rc = wlx_num("hashjoin", &argc, argv, "--selectivity", 0, 100, &sel)) != 0 ||
	    (rc = wl_parse("hashjoin", argc, argv, o, 4)) != 0)
		return rc;
	/* R and S 16 B a tuple, the table 2..4 slots of 16 B per R tuple */
	if ((rc = wlx_cap("hashjoin", (double)rn * 80 + (double)sn * 16)) != 0)
		return rc;
	if (hashjoin_make(&r, rn, 0, rn, 0, (int)threads, thp) < 0 ||
	    (expect = hashjoin_make(&s, sn, 1, rn, (int64_t)(sel * 100 + 0.5), (int)threads,
	    thp)) < 0)
		goto oom;
	for (it = 0; it < iters; it++) {
		if ((m = hashjoin_join(&r, &s, (int)threads, thp, &sum, &bs, &ps)) < 0)
			goto oom;
		if (m != expect) {
			fprintf(stderr, "benchfleet-agent: hashjoin: %lld matches, expected %lld\n",
			    (long long)m, (long long)expect);
			hashjoin_drop(&r);
			hashjoin_drop(&s);
			return 1;
		}
		tb += bs;
		tp += ps;
	}
	printf("matches: %lld\n", (long long)m);
	printf("build_s: %.6f\nprobe_s: %.6f\n", tb / (double)iters, tp / (double)iters);
	printf("seconds: %.6f\n", (tb + tp) / (double)iters);
	printf("tuples_per_s: %.0f\n", (double)(rn + sn) * (double)iters / (tb + tp));
	printf("anon_huge_kb: %ld\n", wl_anon_huge_kb());
	hashjoin_drop(&r);
	hashjoin_drop(&s);
	return 0;
oom:
	fprintf(stderr, "benchfleet-agent: hashjoin: out of memory\n");
	hashjoin_drop(&r);
	hashjoin_drop(&s);
	return 1;
}
