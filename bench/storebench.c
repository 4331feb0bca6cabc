/*
 * storebench: the store's run cycle (claim, one iteration of samples, a
 * log line, finish) as fast as it goes, by NCOORD coordinators at once,
 * each with its own connection and lease name and its own machine, on a
 * SQLite file or a PostgreSQL database. Prints one line:
 *
 *   engine=sqlite coords=4 runs=2000 seconds=1.234 runs_per_s=1620.7 twice=0
 *
 * twice counts runs claimed by two coordinators (must be 0); the exit
 * status is non-zero if any run was lost or claimed twice.
 *
 *   storebench TARGET NRUNS NCOORD
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "parse.h"
#include "store.h"

static const char *target;
static atomic_int *claimed;		/* per run id: how many claims */
static int64_t first_id;
static size_t nruns;

struct coord {
	int idx;
	size_t done;
	int err;
	pthread_t th;
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *
coord_main(void *arg)
{
	struct coord *c = arg;
	struct store *s = NULL;
	struct store_claim *cl = NULL;
	struct store_sample sm[3] = { { "wall_s", 1.5, "s" }, { "ops", 1e6, "ops/s" },
	    { "rss", 4096, "KiB" } };
	char node[32], mach[32];
	int idle = 0, r;

	snprintf(node, sizeof(node), "c%d", c->idx);
	snprintf(mach, sizeof(mach), "m%d", c->idx);
	if (store_open(target, &s, NULL) != 0 || store_set_node(s, node) != 0) {
		c->err = 1;
		goto out;
	}
	while (idle < 3) {
		if ((r = store_run_claim(s, mach, "bench", 60, &cl)) != 0) {
			fprintf(stderr, "storebench: %s: claim: %s: %s\n", node, bf_err_str(r),
			    store_last_error());
			c->err = 1;
			break;
		}
		if (cl == NULL) {
			idle++;		/* others may still hold a few runs */
			usleep(20000);
			continue;
		}
		idle = 0;
		if (cl->run_id >= first_id && (size_t)(cl->run_id - first_id) < nruns)
			atomic_fetch_add(&claimed[cl->run_id - first_id], 1);
		if ((r = store_samples_add(s, cl->run_id, 0, 0, sm, 3)) != 0 ||
		    (r = store_run_log_add(s, cl->run_id, "stdout", "iteration 0 done")) != 0 ||
		    (r = store_run_finish(s, cl->run_id, "done", 0, NULL)) != 0) {
			fprintf(stderr, "storebench: %s: run %lld: %s: %s\n", node,
			    (long long)cl->run_id, bf_err_str(r), store_last_error());
			c->err = 1;
			break;
		}
		c->done++;
		store_claim_free(cl);
		cl = NULL;
	}
out:
	store_claim_free(cl);
	store_close(s);
	return NULL;
}

int
main(int argc, char **argv)
{
	struct store_run_new *rn;
	struct store_machine m;
	struct coord *cs;
	struct store *s = NULL;
	struct bf_diag d;
	size_t i, done = 0, twice = 0, lost = 0;
	int ncoord, err = 0;
	int64_t job, n, nc;
	double t0, t1;
	char name[32];

	if (argc != 4 || parse_i64(argv[2], 1, INT32_MAX, &n) != 0 ||
	    parse_i64(argv[3], 1, 64, &nc) != 0) {
		fprintf(stderr, "usage: storebench TARGET NRUNS NCOORD (NCOORD 1..64)\n");
		return 2;
	}
	nruns = (size_t)n;
	ncoord = (int)nc;
	target = argv[1];
	bf_diag_clear(&d);
	if (store_open(target, &s, &d) != 0) {
		fprintf(stderr, "storebench: %s\n", d.msg);
		return 1;
	}
	for (i = 0; i < (size_t)ncoord; i++) {
		memset(&m, 0, sizeof(m));
		snprintf(name, sizeof(name), "m%zu", i);
		m.name = name;
		m.host = "127.0.0.1";
		m.port = 22;
		m.klass = "bench";
		if (store_machine_add(s, &m, &d) != 0) {
			fprintf(stderr, "storebench: %s (use an empty store)\n", d.msg);
			return 1;
		}
	}
	if ((rn = calloc(nruns, sizeof(*rn))) == NULL ||
	    (claimed = calloc(nruns, sizeof(*claimed))) == NULL ||
	    (cs = calloc((size_t)ncoord, sizeof(*cs))) == NULL)
		return 1;
	for (i = 0; i < nruns; i++) {
		rn[i].cell_index = i;
		rn[i].label = "n=1";
		rn[i].axes_json = "{\"n\":1}";
		rn[i].values_json = "{\"n\":1}";
		rn[i].run_order = (int64_t)i;
		rn[i].iterations = 5;
		rn[i].timeout_s = 600;
	}
	if (store_job_create(s, "cpu-loop", "storebench", "{}", "bench", NULL, rn, nruns,
	    &job) != 0) {
		fprintf(stderr, "storebench: job: %s\n", store_last_error());
		return 1;
	}
	{
		struct store_runs *rs = NULL;

		if (store_job_runs(s, job, 0, &rs) != 0 || rs->n == 0) {
			fprintf(stderr, "storebench: runs: %s\n", store_last_error());
			store_runs_free(rs);
			return 1;
		}
		first_id = rs->run[0].id;
		store_runs_free(rs);
	}
	t0 = now();
	for (i = 0; i < (size_t)ncoord; i++) {
		cs[i].idx = (int)i;
		pthread_create(&cs[i].th, NULL, coord_main, &cs[i]);
	}
	for (i = 0; i < (size_t)ncoord; i++) {
		pthread_join(cs[i].th, NULL);
		done += cs[i].done;
		err |= cs[i].err;
	}
	t1 = now();
	for (i = 0; i < nruns; i++) {
		if (claimed[i] > 1)
			twice++;
		if (claimed[i] == 0)
			lost++;
	}
	printf("engine=%s coords=%d runs=%zu seconds=%.3f runs_per_s=%.1f twice=%zu "
	    "unclaimed=%zu errors=%d\n", db_is_pg_target(target) ? "postgresql" : "sqlite",
	    ncoord, done, t1 - t0, (double)done / (t1 - t0), twice, lost, err);
	store_close(s);
	free(rn);
	free(cs);
	free((void *)claimed);
	return twice == 0 && lost == 0 && err == 0 && done == nruns ? 0 : 1;
}
