/*
 * ebizzy.c: an ebizzy-style load, after ebizzy's published description
 * (LTP; not its code): C chunks of K KiB, each an array of records of R
 * bytes (a 64-bit key, then payload) filled with random keys and sorted.
 * T threads for S seconds each: pick a random chunk, allocate a copy, copy
 * it, binary-search the copy for Q keys taken from random records of the
 * chunk (each must be found: a miss fails the run), free the copy. Every
 * search is a record read; prints "N records/s" as ebizzy does.
 *
 * The copy is where ebizzy's memory traffic comes from: a fresh
 * allocation per search round (malloc, which maps and unmaps a chunk this
 * size, with --thp none; an aligned, advised mapping otherwise). A chunk
 * below 2 MiB (ebizzy's default is 512 KiB) cannot be THP-backed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "wl.h"

#define EBIZZY_MAX_THREADS	1024
#define EBIZZY_MAX_RECORD	4096

struct ebizzy_job {
	char **chunks;
	int64_t nchunks;
	size_t csize, rsize, nrec;
	int64_t searches;
	int thp;
	double end;
	uint64_t seed;
	int64_t records;
	int64_t misses;
	int failed;
};

static int
ebizzy_cmp(const void *a, const void *b)
{
	uint64_t x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x < y ? -1 : x > y;
}

static void *
ebizzy_alloc(size_t len, int thp)
{
	if (thp == WL_THP_NONE)
		return malloc(len);
	return wl_map("ebizzy", len, thp, 0);
}

static void
ebizzy_release(void *p, size_t len, int thp)
{
	if (thp == WL_THP_NONE)
		free(p);
	else if (p != NULL)
		munmap(p, len);
}

static void *
ebizzy_worker(void *arg)
{
	struct ebizzy_job *j = arg;
	uint64_t s = j->seed, key;
	char *copy, *c;
	int64_t q;

	while (wl_now() < j->end) {
		c = j->chunks[wl_rand(&s) % (uint64_t)j->nchunks];
		if ((copy = ebizzy_alloc(j->csize, j->thp)) == NULL) {
			j->failed = 1;
			break;
		}
		memcpy(copy, c, j->csize);
		for (q = 0; q < j->searches; q++) {
			memcpy(&key, c + (wl_rand(&s) % j->nrec) * j->rsize, sizeof(key));
			j->misses += bsearch(&key, copy, j->nrec, j->rsize, ebizzy_cmp) == NULL;
			j->records++;
		}
		ebizzy_release(copy, j->csize, j->thp);
	}
	return NULL;
}

int
ebizzy_main(int argc, char **argv)
{
	int64_t kb = 512, nchunks = 0, secs = 0, threads = 1, rsize = 8, searches = 1, t, c;
	int64_t total = 0, misses = 0, started = 0;
	struct wl_opt o[] = {
		{ "--chunk-kb", 4, (int64_t)1 << 22, &kb, 0 },
		{ "--chunks", 1, 1 << 20, &nchunks, 1 },
		{ "--seconds", 1, 86400, &secs, 1 },
		{ "--threads", 1, EBIZZY_MAX_THREADS, &threads, 0 },
		{ "--record-size", 8, EBIZZY_MAX_RECORD, &rsize, 0 },
		{ "--searches", 1, 1 << 24, &searches, 0 },
	};
	struct ebizzy_job *jobs = NULL;
	char **chunks = NULL;
	uint64_t s = 42, key;
	pthread_t *tid = NULL;
	size_t csize, nrec, i;
	double t0, dt;
	int r, thp = WL_THP_NONE, failed = 0;

	if ((r = wl_thp_opt("ebizzy", &argc, argv, &thp)) != 0 ||
	    (r = wl_parse("ebizzy", argc, argv, o, 6)) != 0)
		return r;
	csize = (size_t)kb * 1024;
	if (rsize % 8 != 0 || csize % (size_t)rsize != 0) {
		fprintf(stderr, "benchfleet-agent: work ebizzy: --record-size %lld must be a "
		    "multiple of 8 that divides the chunk (%zu bytes)\n", (long long)rsize, csize);
		return WL_EXIT_USAGE;
	}
	nrec = csize / (size_t)rsize;
	r = 1;
	chunks = calloc((size_t)nchunks, sizeof(*chunks));
	jobs = calloc((size_t)threads, sizeof(*jobs));
	tid = calloc((size_t)threads, sizeof(*tid));
	if (chunks == NULL || jobs == NULL || tid == NULL) {
		fprintf(stderr, "benchfleet-agent: ebizzy: out of memory\n");
		goto out;
	}
	for (c = 0; c < nchunks; c++) {
		if ((chunks[c] = ebizzy_alloc(csize, thp)) == NULL) {
			fprintf(stderr, "benchfleet-agent: ebizzy: out of memory\n");
			goto out;
		}
		memset(chunks[c], 0, csize);
		for (i = 0; i < nrec; i++) {
			key = wl_rand(&s);
			memcpy(chunks[c] + i * (size_t)rsize, &key, sizeof(key));
		}
		qsort(chunks[c], nrec, (size_t)rsize, ebizzy_cmp);
	}
	t0 = wl_now();
	for (t = 0; t < threads; t++) {
		jobs[t] = (struct ebizzy_job){ .chunks = chunks, .nchunks = nchunks,
		    .csize = csize, .rsize = (size_t)rsize, .nrec = nrec, .searches = searches,
		    .thp = thp, .end = t0 + (double)secs, .seed = 0xeb1 + (uint64_t)t * 104729 };
		if (pthread_create(&tid[t], NULL, ebizzy_worker, &jobs[t]) != 0) {
			fprintf(stderr, "benchfleet-agent: ebizzy: pthread_create failed\n");
			failed = 1;
			break;
		}
		started++;
	}
	for (t = 0; t < started; t++) {
		pthread_join(tid[t], NULL);
		total += jobs[t].records;
		misses += jobs[t].misses;
		failed |= jobs[t].failed;
	}
	dt = wl_now() - t0;
	if (failed)
		goto out;
	if (misses != 0) {
		fprintf(stderr, "benchfleet-agent: ebizzy: %lld searches missed a key that is in "
		    "the chunk\n", (long long)misses);
		goto out;
	}
	printf("%.0f records/s\n", (double)total / dt);
	printf("records_per_chunk: %zu\n", nrec);
	printf("anon_huge_kb: %ld\n", wl_anon_huge_kb());
	r = 0;
out:
	for (c = 0; chunks != NULL && c < nchunks; c++)
		ebizzy_release(chunks[c], csize, thp);
	free(chunks);
	free(jobs);
	free(tid);
	return r;
}
