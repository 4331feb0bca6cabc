/*
 * graph.c: the graphs of graph500 and pagerank. Kronecker edges follow the
 * Graph500 specification's generator (each of scale levels picks a quadrant
 * with probabilities A=0.57, B=0.19, C=0.19, D=0.05; vertex labels are then
 * permuted at random); uniform edges pick both ends uniformly (GAPBS -u).
 * Edge e's ends depend on the seed and e alone, so a graph is the same for
 * any thread count. The specification also shuffles the edge list; ours are
 * drawn independently, so their order is already random. CSR keeps both
 * directions of every tuple (a self loop once) and duplicate edges.
 */
#include <stdlib.h>
#include <string.h>

#include "wl.h"
#include "wlx.h"

#define GRAPH_A	0.57
#define GRAPH_B	0.19
#define GRAPH_C	0.19

struct graph_job {
	struct graph *g;
	int kind, scale, t, nt;
	uint64_t seed;
	const uint32_t *perm;
	int64_t *cursor;
};

static double
graph_unit(uint64_t *s)
{
	return (double)(wl_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

static void
graph_slice(int64_t n, int t, int nt, int64_t *lo, int64_t *hi)
{
	*lo = n / nt * t + (t < n % nt ? t : n % nt);
	*hi = *lo + n / nt + (t < n % nt);
}

static void *
graph_gen_worker(void *arg)
{
	struct graph_job *j = arg;
	struct graph *g = j->g;
	const double ab = GRAPH_A + GRAPH_B, a_norm = GRAPH_A / ab;
	const double c_norm = GRAPH_C / (1.0 - ab);
	int64_t e, lo, hi;
	uint64_t s, i, k, ib, jb;
	int b;

	graph_slice(g->ne, j->t, j->nt, &lo, &hi);
	for (e = lo; e < hi; e++) {
		s = j->seed ^ ((uint64_t)e * 0xd1342543de82ef95ULL);
		if (j->kind == GRAPH_UNIFORM) {
			g->src[e] = (uint32_t)(wl_rand(&s) % (uint64_t)g->nv);
			g->dst[e] = (uint32_t)(wl_rand(&s) % (uint64_t)g->nv);
			continue;
		}
		i = k = 0;
		for (b = 0; b < j->scale; b++) {
			ib = graph_unit(&s) > ab;
			jb = graph_unit(&s) > (ib ? c_norm : a_norm);
			i |= ib << b;
			k |= jb << b;
		}
		g->src[e] = j->perm[i];
		g->dst[e] = j->perm[k];
	}
	return NULL;
}

int
graph_generate(struct graph *g, int kind, int scale, int ef, uint64_t seed, int threads,
    int thp)
{
	struct graph_job jobs[WLX_MAX_THREADS];
	uint32_t *perm = NULL, x;
	uint64_t s = seed ^ 0x7065726dULL, r;
	int64_t v;
	int t, rc = -1;

	memset(g, 0, sizeof(*g));
	g->thp = thp;
	g->nv = (int64_t)1 << scale;
	g->ne = g->nv * ef;
	g->src = wlx_alloc((size_t)g->ne * sizeof(uint32_t), thp);
	g->dst = wlx_alloc((size_t)g->ne * sizeof(uint32_t), thp);
	perm = wlx_alloc((size_t)g->nv * sizeof(uint32_t), thp);
	if (g->src == NULL || g->dst == NULL || perm == NULL)
		goto out;
	/* Fisher-Yates: the random relabelling of the vertices */
	for (v = 0; v < g->nv; v++)
		perm[v] = (uint32_t)v;
	for (v = g->nv - 1; v > 0; v--) {
		r = wl_rand(&s) % (uint64_t)(v + 1);
		x = perm[v];
		perm[v] = perm[r];
		perm[r] = x;
	}
	for (t = 0; t < threads; t++)
		jobs[t] = (struct graph_job){ .g = g, .kind = kind, .scale = scale, .t = t,
		    .nt = threads, .seed = seed, .perm = perm };
	wlx_par(threads, graph_gen_worker, jobs, sizeof(jobs[0]));
	rc = 0;
out:
	wlx_free(perm, (size_t)g->nv * sizeof(uint32_t));
	if (rc != 0)
		graph_free(g);
	return rc;
}

int
graph_from_edges(struct graph *g, int64_t nv, const uint32_t *src, const uint32_t *dst,
    int64_t ne)
{
	memset(g, 0, sizeof(*g));
	g->nv = nv;
	g->ne = ne;
	g->src = wlx_alloc((size_t)ne * sizeof(uint32_t), WLX_THP_NONE);
	g->dst = wlx_alloc((size_t)ne * sizeof(uint32_t), WLX_THP_NONE);
	if (g->src == NULL || g->dst == NULL) {
		graph_free(g);
		return -1;
	}
	memcpy(g->src, src, (size_t)ne * sizeof(uint32_t));
	memcpy(g->dst, dst, (size_t)ne * sizeof(uint32_t));
	return 0;
}

/* Pass 0 counts degrees into row[v + 1]; pass 1 places the edges through
 * per-vertex cursors (atomics: the order inside a row is not fixed). */
static void *
graph_degree_worker(void *arg)
{
	struct graph_job *j = arg;
	struct graph *g = j->g;
	int64_t e, lo, hi, p;
	uint32_t u, v;

	graph_slice(g->ne, j->t, j->nt, &lo, &hi);
	for (e = lo; e < hi; e++) {
		u = g->src[e];
		v = g->dst[e];
		if (j->cursor == NULL) {
			__atomic_fetch_add(&g->row[u + 1], 1, __ATOMIC_RELAXED);
			if (u != v)
				__atomic_fetch_add(&g->row[v + 1], 1, __ATOMIC_RELAXED);
			continue;
		}
		p = __atomic_fetch_add(&j->cursor[u], 1, __ATOMIC_RELAXED);
		g->adj[p] = v;
		if (u != v) {
			p = __atomic_fetch_add(&j->cursor[v], 1, __ATOMIC_RELAXED);
			g->adj[p] = u;
		}
	}
	return NULL;
}

int
graph_csr(struct graph *g, int threads)
{
	struct graph_job jobs[WLX_MAX_THREADS];
	int64_t v, *cursor = NULL;
	int t, rc = -1;

	g->row = wlx_alloc((size_t)(g->nv + 1) * sizeof(int64_t), g->thp);
	cursor = wlx_alloc((size_t)g->nv * sizeof(int64_t), g->thp);
	if (g->row == NULL || cursor == NULL)
		goto out;
	for (t = 0; t < threads; t++)
		jobs[t] = (struct graph_job){ .g = g, .t = t, .nt = threads };
	wlx_par(threads, graph_degree_worker, jobs, sizeof(jobs[0]));
	for (v = 0; v < g->nv; v++)
		g->row[v + 1] += g->row[v];
	g->adj = wlx_alloc((size_t)g->row[g->nv] * sizeof(uint32_t), g->thp);
	if (g->adj == NULL)
		goto out;
	memcpy(cursor, g->row, (size_t)g->nv * sizeof(int64_t));
	for (t = 0; t < threads; t++)
		jobs[t].cursor = cursor;
	wlx_par(threads, graph_degree_worker, jobs, sizeof(jobs[0]));
	rc = 0;
out:
	wlx_free(cursor, (size_t)g->nv * sizeof(int64_t));
	return rc;
}

void
graph_free(struct graph *g)
{
	if (g == NULL)
		return;
	wlx_free(g->src, (size_t)g->ne * sizeof(uint32_t));
	wlx_free(g->dst, (size_t)g->ne * sizeof(uint32_t));
	if (g->row != NULL)
		wlx_free(g->adj, (size_t)g->row[g->nv] * sizeof(uint32_t));
	wlx_free(g->row, (size_t)(g->nv + 1) * sizeof(int64_t));
	memset(g, 0, sizeof(*g));
}
