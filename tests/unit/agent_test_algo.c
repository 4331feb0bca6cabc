/*
 * agent_test_algo.c: the algorithm workloads compute what they claim
 * (issue 20): xsbench's unionised-grid lookup equals a search of each
 * nuclide's own grid and its hash is the same for any thread count;
 * graph500's BFS trees pass the specification's checks and broken trees
 * fail the right one; pagerank sums to 1 and matches hand-computed scores;
 * the hash join counts what a nested-loop join counts; HINT's bounds hold
 * the true area. Then the agent itself: bad options exit 2 naming them,
 * and --thp madvise gets huge pages (their own AnonHugePages).
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl.h"
#include "wlx.h"
#include "t.h"

static const char *agent;
static char out[16384];

/* Run the agent with argv (NULL-terminated), stdout+stderr into out. */
static int
run_agent(const char *const *argv)
{
	char of[] = "/tmp/bf-algo-test.XXXXXX";
	int fd, status;
	ssize_t n;
	pid_t pid;

	if ((fd = mkstemp(of)) < 0)
		return -1;
	if ((pid = fork()) == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		execv(agent, (char *const *)argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		close(fd);
		unlink(of);
		return -1;
	}
	n = pread(fd, out, sizeof(out) - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(of);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
test_xsbench(void)
{
	struct xsbench x, y;
	double a[5], b[5], e;
	uint64_t s = 99, h1, h3;
	int i, m, same = 1;

	T_OK(xsbench_init(&x, 20, 300, 7, 2, WLX_THP_MADVISE));
	T_EQ_INT(x.nnuc[0], 10);	/* fewer than 68 nuclides: half are fuel */
	T_EQ_INT(x.nnuc[4], 20);	/* the RPV's 27, capped at the nuclides */
	T_EQ_INT(x.nnuc[1], 5);
	for (i = 0; i < 5000; i++) {
		e = (double)(wl_rand(&s) >> 11) / 9007199254740992.0;
		if (i == 0)
			e = 0;		/* below every grid point */
		if (i == 1)
			e = 0.999999999;	/* above them */
		m = (int)(wl_rand(&s) % 12);
		xsbench_lookup(&x, e, m, a);
		xsbench_lookup_direct(&x, e, m, b);
		/* bit for bit: the same grid points, the same arithmetic (at the
		 * ends both extrapolate, as XSBench does) */
		same &= memcmp(a, b, sizeof(a)) == 0 && a[0] != 0;
	}
	T_CHECK(same);
	h1 = xsbench_run(&x, 20000, 3, 1);
	h3 = xsbench_run(&x, 20000, 3, 3);
	T_EQ_INT(h1, h3);
	T_CHECK(xsbench_run(&x, 20000, 4, 2) != h1);
	T_CHECK(xsbench_run(&x, 19999, 3, 2) != h1);
	/* the same seed builds the same data, whatever the threads */
	T_OK(xsbench_init(&y, 20, 300, 7, 1, WLX_THP_NONE));
	T_EQ_INT(xsbench_run(&y, 20000, 3, 2), h1);
	xsbench_free(&y);
	T_OK(xsbench_init(&y, 20, 300, 8, 1, WLX_THP_NONE));
	T_CHECK(xsbench_run(&y, 20000, 3, 2) != h1);
	xsbench_free(&y);
	xsbench_free(&x);
	xsbench_free(NULL);
}

static void
test_graph_build(void)
{
	struct graph g, h;
	int64_t e, loops = 0, v, sum = 0;
	int same = 1;

	T_OK(graph_generate(&g, GRAPH_KRONECKER, 10, 16, 5, 3, WLX_THP_NONE));
	T_OK(graph_generate(&h, GRAPH_KRONECKER, 10, 16, 5, 1, WLX_THP_NONE));
	T_EQ_INT(g.nv, 1024);
	T_EQ_INT(g.ne, 16384);
	for (e = 0; e < g.ne; e++) {
		same &= g.src[e] == h.src[e] && g.dst[e] == h.dst[e];
		loops += g.src[e] == g.dst[e];
	}
	T_CHECK(same);
	T_OK(graph_csr(&g, 2));
	T_EQ_INT(g.row[g.nv], 2 * g.ne - loops);
	for (v = 0; v < g.nv; v++)
		sum += g.row[v + 1] - g.row[v];
	T_EQ_INT(sum, 2 * g.ne - loops);
	/* Kronecker degrees are skewed: the largest far above the mean 32 */
	for (e = 0, v = 0; v < g.nv; v++)
		if (g.row[v + 1] - g.row[v] > e)
			e = g.row[v + 1] - g.row[v];
	T_CHECK(e > 200);
	graph_free(&h);
	T_OK(graph_generate(&h, GRAPH_KRONECKER, 10, 16, 6, 1, WLX_THP_NONE));
	T_CHECK(memcmp(g.src, h.src, 64) != 0);
	graph_free(&h);
	graph_free(&g);
	graph_free(NULL);
}

static void
test_graph500(void)
{
	/* a 4-cycle 0-1-2-3-0 and a pendant 4 on 1; 5 is alone */
	static const uint32_t cs[] = { 0, 1, 2, 3, 1 }, cd[] = { 1, 2, 3, 0, 4 };
	struct graph g;
	int64_t p[6], *par, *par1, root = -1, v, e;
	double r[3] = { 1, 2, 4 };
	int lv_same = 1;

	T_OK(graph_from_edges(&g, 6, cs, cd, 5));
	T_OK(graph_csr(&g, 1));
	T_OK(graph500_bfs(&g, 0, p, 2));
	T_EQ_INT(p[0], 0);
	T_EQ_INT(p[1], 0);
	T_EQ_INT(p[3], 0);
	T_CHECK(p[2] == 1 || p[2] == 3);
	T_EQ_INT(p[4], 1);
	T_EQ_INT(p[5], -1);
	T_EQ_INT(graph500_validate(&g, 0, p), 0);
	T_EQ_INT(graph500_edges(&g, p), 5);
	/* a depth-first tree 0-1-2-3: edge 3-0 spans three levels */
	p[2] = 1;
	p[3] = 2;
	T_EQ_INT(graph500_validate(&g, 0, p), 3);
	/* 4 hung under 3: levels fit (0,1,2,3 / 4 at 3 would not) -> use 2 */
	p[3] = 0;
	p[4] = 3;
	T_EQ_INT(graph500_validate(&g, 0, p), 5);	/* there is no edge 3-4 */
	p[4] = 1;
	p[1] = 2;					/* 1 -> 2 -> 1: a cycle */
	T_EQ_INT(graph500_validate(&g, 0, p), 1);
	p[1] = 0;
	p[4] = -1;					/* 4 is reachable but left out */
	T_EQ_INT(graph500_validate(&g, 0, p), 4);
	p[4] = 1;
	p[0] = 3;
	T_EQ_INT(graph500_validate(&g, 0, p), 1);	/* the root has a parent */
	p[0] = 0;
	p[5] = 5;					/* a vertex its own parent */
	T_EQ_INT(graph500_validate(&g, 0, p), 1);
	graph_free(&g);

	/* a Kronecker graph: valid trees, and the same levels for 1 and 4 threads */
	T_OK(graph_generate(&g, GRAPH_KRONECKER, 11, 16, 2, 2, WLX_THP_MADVISE));
	T_OK(graph_csr(&g, 2));
	par = calloc((size_t)g.nv, sizeof(*par));
	par1 = calloc((size_t)g.nv, sizeof(*par1));
	for (v = 0; v < g.nv && root < 0; v++)
		for (e = g.row[v]; e < g.row[v + 1]; e++)
			if (g.adj[e] != v)
				root = v;
	T_CHECK(root >= 0);
	T_OK(graph500_bfs(&g, root, par, 4));
	T_EQ_INT(graph500_validate(&g, root, par), 0);
	T_OK(graph500_bfs(&g, root, par1, 1));
	T_EQ_INT(graph500_validate(&g, root, par1), 0);
	for (v = 0; v < g.nv; v++)
		lv_same &= (par[v] == -1) == (par1[v] == -1);
	T_CHECK(lv_same);
	T_CHECK(graph500_edges(&g, par) > g.ne / 2);
	/* break one tree edge's parent to a vertex with no edge to it */
	for (v = 0; v < g.nv; v++)
		if (v != root && par[v] != -1 && g.row[v + 1] - g.row[v] == 1)
			break;
	if (v < g.nv) {
		par[v] = root == 0 ? 1 : 0;
		T_CHECK(graph500_validate(&g, root, par) != 0);
	}
	free(par);
	free(par1);
	graph_free(&g);
	T_NEAR(graph500_hmean(r, 3), 3.0 / 1.75, 1e-12);
}

static void
test_pagerank(void)
{
	static const uint32_t ps[] = { 0, 1 }, pd[] = { 1, 2 };
	struct graph g;
	double s[4], *big, *big1, sum = 0, maxd = 0, b = 0.135 / 0.2775;
	int64_t v;
	int it, it1;

	/* the path 0-1-2: b = 0.05 + 0.85 (a + a), a = 0.05 + 0.85 b / 2 */
	T_OK(graph_from_edges(&g, 3, ps, pd, 2));
	T_OK(graph_csr(&g, 1));
	it = pagerank_run(&g, 0.85, 1e-13, 1000, 2, s);
	T_CHECK(it > 5 && it < 1000);
	T_NEAR(s[1], b, 1e-10);
	T_NEAR(s[0], (1 - b) / 2, 1e-10);
	T_NEAR(s[2], (1 - b) / 2, 1e-10);
	graph_free(&g);
	/* one edge 0-1 and two isolated vertices, whose mass is spread:
	 * s2 = 0.15/4 + 0.85 (2 s2) / 4, so s2 = 0.0375 / 0.575 */
	T_OK(graph_from_edges(&g, 4, ps, pd, 1));
	T_OK(graph_csr(&g, 1));
	T_CHECK(pagerank_run(&g, 0.85, 1e-13, 1000, 3, s) > 1);
	T_NEAR(s[2], 0.0375 / 0.575, 1e-10);
	T_NEAR(s[3], 0.0375 / 0.575, 1e-10);
	T_NEAR(s[0], (1 - 2 * 0.0375 / 0.575) / 2, 1e-10);
	T_NEAR(s[0] + s[1] + s[2] + s[3], 1, 1e-12);
	graph_free(&g);
	/* a Kronecker graph: a distribution, the same for 1 and 4 threads, and
	 * the tolerance and the iteration cap both stop it */
	T_OK(graph_generate(&g, GRAPH_KRONECKER, 10, 8, 3, 2, WLX_THP_NONE));
	T_OK(graph_csr(&g, 2));
	big = calloc((size_t)g.nv, sizeof(*big));
	big1 = calloc((size_t)g.nv, sizeof(*big1));
	it = pagerank_run(&g, 0.85, 1e-4, 100, 4, big);
	it1 = pagerank_run(&g, 0.85, 1e-4, 100, 1, big1);
	T_EQ_INT(it, it1);
	T_CHECK(it > 2 && it < 100);
	for (v = 0; v < g.nv; v++) {
		sum += big[v];
		if (fabs(big[v] - big1[v]) > maxd)
			maxd = fabs(big[v] - big1[v]);
	}
	T_NEAR(sum, 1, 1e-9);
	T_NEAR(maxd, 0, 1e-15);
	T_EQ_INT(pagerank_run(&g, 0.85, 1e-12, 3, 2, big), 3);
	free(big);
	free(big1);
	graph_free(&g);
}

static void
test_hashjoin(void)
{
	uint64_t rk[60], rp[60], sk[90], sp[90], s = 17, sum, nsum, k;
	struct hashjoin_rel r = { 60, rk, rp }, sr = { 90, sk, sp }, none = { 0, rk, rp };
	double bs, ps;
	int64_t m, nm = 0, i, j;
	int t;

	/* small key ranges: duplicates on both sides, and keys on one side only */
	for (i = 0; i < 60; i++) {
		rk[i] = wl_rand(&s) % 25;
		rp[i] = wl_rand(&s);
	}
	for (i = 0; i < 90; i++) {
		sk[i] = 10 + wl_rand(&s) % 30;
		sp[i] = wl_rand(&s);
	}
	for (nsum = 0, i = 0; i < 60; i++)
		for (j = 0; j < 90; j++)
			if (rk[i] == sk[j]) {
				nm++;
				nsum += rp[i] + sp[j];
			}
	T_CHECK(nm > 0);
	for (t = 1; t <= 4; t += 3) {
		m = hashjoin_join(&r, &sr, t, WLX_THP_MADVISE, &sum, &bs, &ps);
		T_EQ_INT(m, nm);
		T_EQ_INT(sum, nsum);
		T_CHECK(bs >= 0 && ps >= 0);
	}
	T_EQ_INT(hashjoin_join(&none, &sr, 2, WLX_THP_NONE, &sum, &bs, &ps), 0);
	T_EQ_INT(sum, 0);
	/* big keys, all distinct: each S tuple meets its one R tuple */
	for (i = 0; i < 60; i++)
		rk[i] = (uint64_t)i * 0x9e3779b97f4a7c15ULL >> 1;
	for (k = 0, i = 0; i < 90; i++)
		sk[i] = i % 2 ? rk[i % 60] : (k++, ((uint64_t)1 << 63) | (uint64_t)i);
	T_EQ_INT(hashjoin_join(&r, &sr, 3, WLX_THP_NONE, &sum, &bs, &ps), 90 - (int64_t)k);
}

static void
test_hint(void)
{
	const double area = (2 * log(2.0) - 1) * (double)HINT_SCALE * (double)HINT_SCALE;
	static const int64_t ns[] = { 1, 2, 10, 1000, 65536 };
	uint64_t lo, hi, last = UINT64_MAX;
	void *buf = wlx_alloc(65536 * HINT_REC_BYTES, WLX_THP_NONE);
	size_t i;
	int64_t made;

	T_CHECK(buf != NULL);
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		made = hint_run(buf, ns[i], &lo, &hi);
		T_EQ_INT(made, ns[i]);
		T_CHECK((double)lo <= area && area <= (double)hi);
		T_CHECK(hi - lo <= last);
		/* the error shrinks in proportion to the intervals */
		T_CHECK((double)HINT_SCALE * (double)HINT_SCALE / (double)(hi - lo) >=
		    (double)ns[i] / 2);
		last = hi - lo;
	}
	/* one interval: [0, 1] x [f(1), f(0)] = [0, 1] x [0, 1] */
	hint_run(buf, 1, &lo, &hi);
	T_EQ_INT(lo, 0);
	T_EQ_INT(hi, HINT_SCALE * HINT_SCALE);
	wlx_free(buf, 65536 * HINT_REC_BYTES);
}

/* The host's THP mode ("always", "madvise", "never"), or "" if unknown. */
static void
host_thp(char *buf, size_t n)
{
	char line[128], *a, *b;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(line, sizeof(line), f) != NULL && (a = strchr(line, '[')) != NULL &&
	    (b = strchr(a, ']')) != NULL) {
		*b = '\0';
		snprintf(buf, n, "%s", a + 1);
	}
	fclose(f);
}

/* "anon_huge_kb: N" of the last run, or -1. */
static long
anon_huge_kb(void)
{
	const char *p = strstr(out, "anon_huge_kb: ");

	return p != NULL ? strtol(p + 14, NULL, 10) : -1;
}

/* Our algorithms honour --thp madvise: huge pages back their arrays (their
 * own AnonHugePages while mapped) where the host allows madvise; none
 * under nohugepage. Each is sized past a few 2 MiB pages. */
static void
test_thp_evidence(void)
{
	const char *const runs[][12] = {
		{ agent, "work", "xsbench", "--isotopes", "20", "--gridpoints", "5000",
		  "--lookups", "1000", "--thp", "madvise", NULL },
		{ agent, "work", "graph500", "--scale", "15", "--roots", "2", "--thp", "madvise",
		  NULL },
		{ agent, "work", "pagerank", "--scale", "15", "--thp", "madvise", NULL },
		{ agent, "work", "hashjoin", "--r-tuples", "300000", "--s-tuples", "300000",
		  "--thp", "madvise", NULL },
		{ agent, "work", "hint", "--max-kb", "4096", "--thp", "madvise", NULL },
	};
	const char *noh[] = { agent, "work", "xsbench", "--isotopes", "20", "--gridpoints", "5000",
	    "--lookups", "1000", "--thp", "nohugepage", NULL };
	char mode[32];
	size_t i;

	host_thp(mode, sizeof(mode));
	fprintf(stderr, "host THP enabled: %s\n", mode);
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		T_EQ_INT(run_agent(runs[i]), 0);
		fprintf(stderr, "%s --thp madvise: anon_huge_kb %ld\n", runs[i][2], anon_huge_kb());
		if (strcmp(mode, "madvise") == 0 || strcmp(mode, "always") == 0)
			T_CHECK(anon_huge_kb() >= 2048);
		else
			T_CHECK(anon_huge_kb() >= 0);
	}
	T_EQ_INT(run_agent(noh), 0);
	T_EQ_INT(anon_huge_kb(), 0);
}

static void
test_agent_options(void)
{
	const char *thp[] = { agent, "work", "hint", "--max-kb", "8", "--thp", "always", NULL };
	const char *tol[] = { agent, "work", "pagerank", "--scale", "4", "--tolerance", "2", NULL };
	const char *gr[] = { agent, "work", "pagerank", "--scale", "4", "--graph", "rmat", NULL };
	const char *cap[] = { agent, "work", "xsbench", "--isotopes", "100000", "--gridpoints",
	    "10000000", NULL };
	const char *sel[] = { agent, "work", "hashjoin", "--r-tuples", "10", "--s-tuples", "10",
	    "--selectivity", "101", NULL };
	const char *sc[] = { agent, "work", "graph500", "--scale", "32", NULL };
	const char *ok[] = { agent, "work", "hashjoin", "--r-tuples", "1000", "--s-tuples",
	    "3000", "--selectivity", "25", "--threads", "2", "--thp", "madvise", NULL };
	const char *g5[] = { agent, "work", "graph500", "--scale", "8", "--roots", "8",
	    "--threads", "2", "--thp", "nohugepage", NULL };

	T_EQ_INT(run_agent(thp), 2);
	T_CONTAINS(out, "--thp \"always\": expected one of none, madvise, nohugepage");
	T_EQ_INT(run_agent(tol), 2);
	T_CONTAINS(out, "--tolerance");
	T_EQ_INT(run_agent(gr), 2);
	T_CONTAINS(out, "--graph \"rmat\"");
	T_EQ_INT(run_agent(cap), 2);
	T_CONTAINS(out, "GiB cap");
	T_EQ_INT(run_agent(sel), 2);
	T_CONTAINS(out, "--selectivity");
	T_EQ_INT(run_agent(sc), 2);
	T_CONTAINS(out, "--scale");
	T_EQ_INT(run_agent(ok), 0);
	T_CONTAINS(out, "tuples_per_s: ");
	/* 25% of 3000 probes hit, to within the draw */
	T_CHECK(strstr(out, "matches: ") != NULL &&
	    labs(strtol(strstr(out, "matches: ") + 9, NULL, 10) - 750) < 120);
	T_EQ_INT(run_agent(g5), 0);
	T_CONTAINS(out, "NBFS: 8\n");
	T_CONTAINS(out, "harmonic_mean_TEPS: ");
	T_CONTAINS(out, "validation: passed");
}

int
main(void)
{
	agent = getenv("BF_AGENT");
	if (agent == NULL) {
		fprintf(stderr, "BF_AGENT must name the built benchfleet-agent\n");
		return 1;
	}
	test_xsbench();
	test_graph_build();
	test_graph500();
	test_pagerank();
	test_hashjoin();
	test_hint();
	test_agent_options();
	test_thp_evidence();
	return t_done();
}
