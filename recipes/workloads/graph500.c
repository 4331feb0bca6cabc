/*
 * graph500.c: our Graph500-style benchmark, written from the Graph500
 * specification: a Kronecker graph of 2^scale vertices and edgefactor *
 * 2^scale edge tuples (graph.c), its CSR (kernel 1), then a BFS (kernel 2)
 * from each of up to 64 random roots of degree >= 1, each tree validated by
 * the specification's checks. TEPS of a root = input edge tuples in the
 * traversed component / BFS seconds; the statistics over roots are the
 * specification's (harmonic mean of TEPS). The BFS is level-synchronous,
 * top-down, parents claimed with compare-and-swap.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl.h"
#include "wlx.h"

#define GRAPH500_LOCAL	1024	/* next-frontier vertices a thread buffers */
#define GRAPH500_MAX_ROOTS	64

struct graph500_bfs_job {
	const struct graph *g;
	int64_t *parent;
	uint32_t *cur, *next;
	int64_t *ncur, *nnext;
	pthread_barrier_t *bar;
	int t, nt;
};

static void
graph500_flush(struct graph500_bfs_job *j, const uint32_t *buf, int n)
{
	int64_t at;

	if (n == 0)
		return;
	at = __atomic_fetch_add(j->nnext, n, __ATOMIC_RELAXED);
	memcpy(&j->next[at], buf, (size_t)n * sizeof(*buf));
}

static void *
graph500_bfs_worker(void *arg)
{
	struct graph500_bfs_job *j = arg;
	const struct graph *g = j->g;
	uint32_t buf[GRAPH500_LOCAL], u, v, *sw;
	int64_t i, lo, hi, n, e, expect;
	int nb;

	for (;;) {
		n = *j->ncur;
		if (n == 0)
			break;
		lo = n / j->nt * j->t + (j->t < n % j->nt ? j->t : n % j->nt);
		hi = lo + n / j->nt + (j->t < n % j->nt);
		nb = 0;
		for (i = lo; i < hi; i++) {
			u = j->cur[i];
			for (e = g->row[u]; e < g->row[u + 1]; e++) {
				v = g->adj[e];
				expect = -1;
				if (__atomic_load_n(&j->parent[v], __ATOMIC_RELAXED) != -1 ||
				    !__atomic_compare_exchange_n(&j->parent[v], &expect, (int64_t)u, 0,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
					continue;
				buf[nb++] = v;
				if (nb == GRAPH500_LOCAL) {
					graph500_flush(j, buf, nb);
					nb = 0;
				}
			}
		}
		graph500_flush(j, buf, nb);
		pthread_barrier_wait(j->bar);
		if (j->t == 0) {
			sw = j->cur;
			j->cur = j->next;
			j->next = sw;
			*j->ncur = *j->nnext;
			*j->nnext = 0;
		}
		pthread_barrier_wait(j->bar);
		if (j->t != 0) {
			sw = j->cur;
			j->cur = j->next;
			j->next = sw;
		}
	}
	return NULL;
}

int
graph500_bfs(const struct graph *g, int64_t root, int64_t *parent, int threads)
{
	struct graph500_bfs_job jobs[WLX_MAX_THREADS];
	size_t qb = (size_t)g->nv * sizeof(uint32_t);
	uint32_t *cur, *next;
	int64_t v, ncur = 1, nnext = 0;
	pthread_barrier_t bar;
	int t;

	cur = wlx_alloc(qb, g->thp);
	next = wlx_alloc(qb, g->thp);
	if (cur == NULL || next == NULL) {
		wlx_free(cur, qb);
		wlx_free(next, qb);
		return -1;
	}
	for (v = 0; v < g->nv; v++)
		parent[v] = -1;
	parent[root] = root;
	cur[0] = (uint32_t)root;
	pthread_barrier_init(&bar, NULL, (unsigned)threads);
	for (t = 0; t < threads; t++)
		jobs[t] = (struct graph500_bfs_job){ .g = g, .parent = parent, .cur = cur,
		    .next = next, .ncur = &ncur, .nnext = &nnext, .bar = &bar, .t = t,
		    .nt = threads };
	wlx_par(threads, graph500_bfs_worker, jobs, sizeof(jobs[0]));
	pthread_barrier_destroy(&bar);
	wlx_free(cur, qb);
	wlx_free(next, qb);
	return 0;
}

int64_t
graph500_edges(const struct graph *g, const int64_t *parent)
{
	int64_t e, m = 0;

	for (e = 0; e < g->ne; e++)
		m += parent[g->src[e]] != -1;
	return m;
}

static int
graph500_bad(int check, const char *what, int64_t v)
{
	fprintf(stderr, "benchfleet-agent: graph500: BFS validation check %d failed: %s "
	    "(vertex %lld)\n", check, what, (long long)v);
	return check;
}

/* The levels implied by the parents; -1 on a cycle or a parent that is not
 * itself in the tree. level[] and stack[] have nv entries. */
static int64_t
graph500_levels(const struct graph *g, int64_t root, const int64_t *parent, int64_t *level,
    int64_t *stack)
{
	int64_t v, u, n, d;

	for (v = 0; v < g->nv; v++)
		level[v] = -1;
	level[root] = 0;
	for (v = 0; v < g->nv; v++) {
		if (parent[v] == -1 || level[v] != -1)
			continue;
		n = 0;
		for (u = v; level[u] == -1; u = parent[u]) {
			if (n == g->nv || parent[u] < 0 || parent[u] >= g->nv || parent[u] == u)
				return u;
			stack[n++] = u;
		}
		d = level[u];
		while (n > 0)
			level[stack[--n]] = ++d;
	}
	return -1;
}

int
graph500_validate(const struct graph *g, int64_t root, const int64_t *parent)
{
	size_t b = (size_t)g->nv * sizeof(int64_t);
	int64_t *level = wlx_alloc(b, WLX_THP_NONE), *stack = wlx_alloc(b, WLX_THP_NONE);
	uint8_t *seen = wlx_alloc((size_t)g->nv, WLX_THP_NONE);
	int64_t e, v, u, w, lu, lw;
	int rc = 0;

	if (level == NULL || stack == NULL || seen == NULL) {
		rc = graph500_bad(1, "out of memory", root);
		goto out;
	}
	/* 1: the parents form a tree rooted at root (no cycle, no dangling parent) */
	if (parent[root] != root) {
		rc = graph500_bad(1, "the root is not its own parent", root);
		goto out;
	}
	if ((v = graph500_levels(g, root, parent, level, stack)) != -1) {
		rc = graph500_bad(1, "a parent chain does not reach the root", v);
		goto out;
	}
	for (e = 0; e < g->ne; e++) {
		u = g->src[e];
		w = g->dst[e];
		lu = level[u];
		lw = level[w];
		/* 4: an edge with one end in the tree has both: it spans the component */
		if ((lu < 0) != (lw < 0)) {
			rc = graph500_bad(4, "an edge leaves the traversed component", lu < 0 ? u : w);
			goto out;
		}
		/* 3: the ends of every input edge are at most one level apart */
		if (lu >= 0 && (lu - lw > 1 || lw - lu > 1)) {
			rc = graph500_bad(3, "an edge joins levels more than one apart", u);
			goto out;
		}
		if (parent[w] == u)
			seen[w] = 1;
		if (parent[u] == w)
			seen[u] = 1;
	}
	for (v = 0; v < g->nv; v++) {
		if (v == root || parent[v] == -1)
			continue;
		/* 2: a tree edge joins levels exactly one apart */
		if (level[v] != level[parent[v]] + 1) {
			rc = graph500_bad(2, "a tree edge does not go down one level", v);
			goto out;
		}
		/* 5: a vertex and its parent are joined by an input edge */
		if (!seen[v]) {
			rc = graph500_bad(5, "a tree edge is not an edge of the graph", v);
			goto out;
		}
	}
out:
	wlx_free(level, b);
	wlx_free(stack, b);
	wlx_free(seen, (size_t)g->nv);
	return rc;
}

double
graph500_hmean(const double *x, int n)
{
	double s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += 1.0 / x[i];
	return n / s;
}

static int
graph500_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Roots: distinct, random, each with an edge to another vertex. */
static int
graph500_roots(const struct graph *g, uint64_t seed, int want, int64_t *roots)
{
	uint64_t s = seed ^ 0x726f6f74ULL;
	int64_t v, e, tries;
	int n = 0, k, dup, other;

	for (tries = 0; n < want && tries < 64 * g->nv + 1000; tries++) {
		v = (int64_t)(wl_rand(&s) % (uint64_t)g->nv);
		other = 0;
		for (e = g->row[v]; e < g->row[v + 1] && !other; e++)
			other = g->adj[e] != (uint32_t)v;
		for (dup = 0, k = 0; k < n; k++)
			dup |= roots[k] == v;
		if (other && !dup)
			roots[n++] = v;
	}
	return n;
}

int
graph500_main(int argc, char **argv)
{
	int64_t scale = 0, ef = 16, nroots = GRAPH500_MAX_ROOTS, threads = 1, seed = 1;
	struct wl_opt o[] = {
		{ "--scale", 1, 31, &scale, 1 },
		{ "--edgefactor", 1, 64, &ef, 0 },
		{ "--roots", 1, GRAPH500_MAX_ROOTS, &nroots, 0 },
		{ "--threads", 1, WLX_MAX_THREADS, &threads, 0 },
		{ "--seed", 0, INT64_MAX, &seed, 0 },
	};
	int64_t roots[GRAPH500_MAX_ROOTS], *parent = NULL, m;
	double teps[GRAPH500_MAX_ROOTS], times[GRAPH500_MAX_ROOTS], t0, tgen, tcsr, tsum = 0;
	struct graph g = { 0 };
	size_t pb = 0;
	int thp, r, i, n;

	if ((r = wlx_thp_arg("graph500", &argc, argv, &thp)) != 0 ||
	    (r = wl_parse("graph500", argc, argv, o, 5)) != 0)
		return r;
	/* edge list and adjacency 8 B each per tuple; row, parent, queues, checks per vertex */
	if ((r = wlx_cap("graph500", (double)((int64_t)1 << scale) * (double)(16 * ef + 48))) != 0)
		return r;
	t0 = wl_now();
	if (graph_generate(&g, GRAPH_KRONECKER, (int)scale, (int)ef, (uint64_t)seed, (int)threads,
	    thp) != 0)
		goto oom;
	tgen = wl_now() - t0;
	t0 = wl_now();
	if (graph_csr(&g, (int)threads) != 0)
		goto oom;
	tcsr = wl_now() - t0;
	pb = (size_t)g.nv * sizeof(int64_t);
	if ((parent = wlx_alloc(pb, thp)) == NULL)
		goto oom;
	n = graph500_roots(&g, (uint64_t)seed, (int)nroots, roots);
	if (n == 0) {
		fprintf(stderr, "benchfleet-agent: graph500: no vertex with an edge\n");
		wlx_free(parent, pb);
		graph_free(&g);
		return 1;
	}
	for (i = 0; i < n; i++) {
		t0 = wl_now();
		if (graph500_bfs(&g, roots[i], parent, (int)threads) != 0)
			goto oom;
		times[i] = wl_now() - t0;
		if (graph500_validate(&g, roots[i], parent) != 0) {
			wlx_free(parent, pb);
			graph_free(&g);
			return 1;
		}
		m = graph500_edges(&g, parent);
		teps[i] = (double)m / times[i];
		tsum += times[i];
	}
	printf("SCALE: %lld\nedgefactor: %lld\nNBFS: %d\n", (long long)scale, (long long)ef, n);
	printf("graph_generation: %.6f\nconstruction_time: %.6f\n", tgen, tcsr);
	printf("mean_time: %.6f\n", tsum / n);
	printf("harmonic_mean_TEPS: %.6g\n", graph500_hmean(teps, n));
	qsort(teps, (size_t)n, sizeof(teps[0]), graph500_cmp);
	printf("min_TEPS: %.6g\nmedian_TEPS: %.6g\nmax_TEPS: %.6g\n", teps[0],
	    n % 2 ? teps[n / 2] : (teps[n / 2 - 1] + teps[n / 2]) / 2, teps[n - 1]);
	printf("validation: passed\n");
	printf("anon_huge_kb: %ld\n", wl_anon_huge_kb());
	wlx_free(parent, pb);
	graph_free(&g);
	return 0;
oom:
	fprintf(stderr, "benchfleet-agent: graph500: out of memory\n");
	wlx_free(parent, pb);
	graph_free(&g);
	return 1;
}
