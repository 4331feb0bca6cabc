/*
 * runsview: what GET /jobs/{id}/runs and a bundle's cells cost since the
 * store returns typed rows and api-view.c writes their JSON (issue 15):
 * read, render and serialise job 1 of a store REPS times; print the
 * median and fastest wall time, the answer's size and how much the
 * process's peak RSS grew over the first answer.
 *
 *   runsview STORE make              job 1: 1000 runs x 5 iterations x 10 metrics
 *   runsview STORE runs|cells REPS   time it
 *
 * Built with -DBF_OLD_VIEWS against a tree before the move (329dd99) it
 * calls store_job_runs_json / store_job_samples_json instead, which is how
 * docs/PERFORMANCE.md compares the two. BF_RUNSVIEW_DUMP=FILE writes the
 * first answer there (to compare the bytes of both).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "parse.h"
#include "store.h"
#ifndef BF_OLD_VIEWS
#include "api-view.h"
#endif

#define NRUNS	1000
#define NITER	5
#define NMETRIC	10
#define MAXREPS	64

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The process's peak RSS so far in kB, -1 if unknown. */
static long
hwm_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char l[256];
	long v = -1;

	while (f != NULL && fgets(l, sizeof(l), f) != NULL)
		if (strncmp(l, "VmHWM:", 6) == 0)
			v = strtol(l + 6, NULL, 10);
	if (f != NULL)
		fclose(f);
	return v;
}

static int
make(struct store *s)
{
	static struct store_run_new rn[NRUNS];
	struct store_machine m = { .name = "m", .host = "127.0.0.1", .port = 22, .klass = "b" };
	struct store_sample sm[NMETRIC];
	char names[NMETRIC][16];
	struct store_claim *c = NULL;
	struct bf_diag d;
	int64_t job;
	size_t i, k, j;

	if (store_machine_add(s, &m, &d) != 0)
		return 1;
	for (i = 0; i < NRUNS; i++) {
		rn[i].cell_index = (int64_t)i;
		rn[i].label = "n=1";
		rn[i].axes_json = rn[i].values_json = "{\"n\":1}";
		rn[i].run_order = (int64_t)i;
		rn[i].iterations = NITER;
		rn[i].timeout_s = 600;
	}
	if (store_job_create(s, "cpu-loop", "runsview", "{}", "b", NULL, rn, NRUNS, &job) != 0)
		return 1;
	for (j = 0; j < NMETRIC; j++)
		snprintf(names[j], sizeof(names[j]), "metric%zu", j);
	for (i = 0; i < NRUNS; i++) {
		if (store_run_claim(s, "m", "b", 600, &c) != 0 || c == NULL)
			return 1;
		for (k = 0; k < NITER; k++) {
			for (j = 0; j < NMETRIC; j++) {
				sm[j].metric = names[j];
				sm[j].value = 1.5 + (double)i + (double)k * 0.25 + (double)j;
				sm[j].unit = "s";
			}
			if (store_samples_add(s, c->run_id, c->boot, (int)k, sm, NMETRIC) != 0)
				return 1;
		}
		if (store_run_finish(s, c->run_id, "done", 0, NULL) != 0)
			return 1;
		store_claim_free(c);
		c = NULL;
	}
	printf("job %lld: %d runs, %d samples\n", (long long)job, NRUNS, NRUNS * NITER * NMETRIC);
	return 0;
}

static int
answer(struct store *s, int runs, json_t **o)
{
#ifdef BF_OLD_VIEWS
	return runs ? store_job_runs_json(s, 1, o) : store_job_samples_json(s, 1, o);
#else
	return runs ? api_view_job_runs_get(s, 1, 1, o) : api_view_job_cells_get(s, 1, o);
#endif
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	const char *dump = getenv("BF_RUNSVIEW_DUMP");
	double t[MAXREPS], t0;
	struct store *s = NULL;
	struct bf_diag d;
	long h0, h1 = -1;
	int64_t reps = 0;
	size_t len = 0;
	json_t *o;
	char *txt;
	int i, runs;

	if (argc < 3 || (strcmp(argv[2], "make") != 0 && (argc < 4 ||
	    parse_i64(argv[3], 1, MAXREPS, &reps) != 0))) {
		fprintf(stderr, "usage: runsview STORE make | runs|cells REPS (1..%d)\n", MAXREPS);
		return 2;
	}
	if (store_open(argv[1], &s, &d) != 0) {
		fprintf(stderr, "runsview: %s\n", d.msg);
		return 1;
	}
	if (strcmp(argv[2], "make") == 0) {
		i = make(s);
		store_close(s);
		return i;
	}
	runs = strcmp(argv[2], "runs") == 0;
	h0 = hwm_kb();
	for (i = 0; i < reps; i++) {
		t0 = now();
		if (answer(s, runs, &o) != 0 || (txt = json_dumps(o, JSON_COMPACT)) == NULL) {
			fprintf(stderr, "runsview: no answer\n");
			return 1;
		}
		len = strlen(txt);
		if (i == 0 && dump != NULL) {
			FILE *f = fopen(dump, "w");

			if (f == NULL || fputs(txt, f) < 0 || fclose(f) != 0)
				return 1;
		}
		free(txt);
		json_decref(o);
		t[i] = (now() - t0) * 1000;
		if (i == 0)
			h1 = hwm_kb();
	}
	qsort(t, (size_t)reps, sizeof(t[0]), cmp_double);
	printf("%s bytes=%zu median_ms=%.1f min_ms=%.1f peak_rss_growth_kb=%ld\n", argv[2], len,
	    t[reps / 2], t[0], h1 - h0);
	store_close(s);
	return 0;
}
