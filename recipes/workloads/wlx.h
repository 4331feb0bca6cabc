/*
 * wlx.h: the shared parts of the algorithm workloads (wlx.c) and the cores
 * of xsbench, graph500, pagerank, hashjoin and hint that the agent's unit
 * tests check directly (agent_test_algo.c).
 */
#ifndef BF_WLX_H
#define BF_WLX_H

#include <stddef.h>
#include <stdint.h>

#define WLX_MAX_THREADS	1024
/* No algorithm workload maps more than this, whatever its sizes say. */
#define WLX_MAX_BYTES	((int64_t)512 << 30)

enum { WLX_THP_NONE, WLX_THP_MADVISE, WLX_THP_NOHUGEPAGE };

/* Take "OPT WORD" out of argv (WORD one of choices, its index in *val; *val
 * keeps its default when OPT is absent). 0 or WL_EXIT_USAGE after a message. */
int wlx_word(const char *work, int *argc, char **argv, const char *opt,
    const char *const *choices, int nchoices, int *val);
/* "OPT X" with X a finite number in min..max, taken out like wlx_word. */
int wlx_num(const char *work, int *argc, char **argv, const char *opt, double min, double max,
    double *val);
/* --thp none|madvise|nohugepage, taken out of argv like wlx_word. */
int wlx_thp_arg(const char *work, int *argc, char **argv, int *thp);
/* Anonymous zeroed memory, madvised per thp; NULL when mmap fails. */
void *wlx_alloc(size_t bytes, int thp);
void wlx_free(void *p, size_t bytes);
/* fn(args + t*stride) on threads t = 0..threads-1 (0 is the caller); exits
 * the process when a thread cannot be created. */
void wlx_par(int threads, void *(*fn)(void *), void *args, size_t stride);
/* WL_EXIT_USAGE after a message when bytes exceeds WLX_MAX_BYTES. */
int wlx_cap(const char *work, double bytes);

/* graph.c: an undirected multigraph in CSR form, from a generated edge list. */
struct graph {
	int64_t nv, ne;			/* vertices; input edges (tuples) */
	uint32_t *src, *dst;		/* the edge list, ne tuples */
	int64_t *row;			/* nv + 1 offsets into adj */
	uint32_t *adj;			/* both directions, self loops once */
	int thp;
};
enum { GRAPH_KRONECKER, GRAPH_UNIFORM };
/* Edges of a Graph500 Kronecker generator (A=0.57, B=C=0.19, vertex labels
 * permuted, edges shuffled) or uniform random ones: ef * 2^scale tuples,
 * the same for a seed whatever the thread count. 0, or -1 out of memory. */
int graph_generate(struct graph *g, int kind, int scale, int ef, uint64_t seed, int threads,
    int thp);
/* The edge list given (copied), for tests. */
int graph_from_edges(struct graph *g, int64_t nv, const uint32_t *src, const uint32_t *dst,
    int64_t ne);
/* Build g->row and g->adj from the edge list. 0 or -1. */
int graph_csr(struct graph *g, int threads);
void graph_free(struct graph *g);

/* graph500.c: level-synchronous BFS from root; parent[v] = -1 unvisited,
 * parent[root] = root. 0, or -1 out of memory. */
int graph500_bfs(const struct graph *g, int64_t root, int64_t *parent, int threads);
/* The input edge tuples in the component the BFS traversed (the TEPS count). */
int64_t graph500_edges(const struct graph *g, const int64_t *parent);
/* The Graph500 specification's checks of a BFS tree against the edge list:
 * 0 when it is valid, else which check failed (1..5), message on stderr. */
int graph500_validate(const struct graph *g, int64_t root, const int64_t *parent);
/* Harmonic mean of n rates. */
double graph500_hmean(const double *x, int n);

/* pagerank.c: pull PageRank with damping d until the L1 change is below tol
 * or maxit iterations; scores[nv] sum to 1 (dangling mass spread evenly).
 * Returns the iterations done. */
int pagerank_run(const struct graph *g, double d, double tol, int maxit, int threads,
    double *scores);

/* hashjoin.c: the join of R and S on key (every equal pair counts), with a
 * linear-probing table built in parallel. *sum gets the sum of the matched
 * pairs' r payload + s payload (a checksum). Returns the matches. */
struct hashjoin_rel {
	int64_t n;
	uint64_t *key, *pay;
};
int64_t hashjoin_join(const struct hashjoin_rel *r, const struct hashjoin_rel *s, int threads,
    int thp, uint64_t *sum, double *build_s, double *probe_s);

/* hint.c: bound the integral of (1-x)/(1+x) on [0,1] on an integer grid by
 * splitting the interval of largest error until there are n (buf holds n
 * records of HINT_REC_BYTES); the bounds in grid units (the true area lies
 * in [lo, hi]). Returns the intervals made: fewer than n when none can be
 * split further. */
int64_t hint_run(void *buf, int64_t n, uint64_t *lo, uint64_t *hi);
#define HINT_REC_BYTES	32
/* The grid's side: areas are in units of 1/HINT_SCALE^2. */
#define HINT_SCALE	((uint64_t)1 << 30)

/* xsbench.c: the nuclide grids, the unionised energy grid and materials. */
struct xsbench {
	int64_t niso, ngrid;
	double *egrid;			/* niso * ngrid energies, each nuclide sorted */
	double *xs;			/* niso * ngrid * 5 cross sections */
	double *uegrid;			/* niso * ngrid, sorted union */
	int32_t *uindex;		/* [union point][nuclide]: nuclide point <= it */
	int nmat;
	int nnuc[12];
	int32_t *mnuc[12];		/* nuclides of each material */
	double *mconc[12];		/* their concentrations */
	int thp;
	size_t ubytes;
};
int xsbench_init(struct xsbench *x, int64_t niso, int64_t ngrid, uint64_t seed, int threads,
    int thp);
/* Material mat's macroscopic cross sections at energy e: through the
 * unionised grid, or (direct, for tests) by each nuclide's own search. */
void xsbench_lookup(const struct xsbench *x, double e, int mat, double macro[5]);
void xsbench_lookup_direct(const struct xsbench *x, double e, int mat, double macro[5]);
/* lookups random (energy, material) lookups, lookup i's from seed and i
 * alone: the verification hash is the same for any thread count. */
uint64_t xsbench_run(const struct xsbench *x, int64_t lookups, uint64_t seed, int threads);
void xsbench_free(struct xsbench *x);

#endif
