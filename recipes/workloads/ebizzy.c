/*
 * ebizzy.c: an ebizzy-style load (after LTP's ebizzy): C chunks of K KiB
 * are allocated, then T threads for S seconds each pick a random chunk,
 * copy it, search the copy for a random record and free it. Prints
 * "N records/s" as ebizzy does. A chunk of 2 MiB or more can be THP-backed;
 * ebizzy's default 512 KiB cannot.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl.h"

#define EBIZZY_MAX_THREADS	1024

struct ebizzy_job {
	uint64_t **chunks;
	int64_t nchunks;
	size_t words;
	double end;
	uint64_t seed;
	int64_t records;
	int64_t found;
};

static void *
ebizzy_worker(void *arg)
{
	struct ebizzy_job *j = arg;
	uint64_t s = j->seed, key, *copy;
	size_t w;
	int64_t c;

	while (wl_now() < j->end) {
		c = (int64_t)(wl_rand(&s) % (uint64_t)j->nchunks);
		if ((copy = malloc(j->words * sizeof(*copy))) == NULL)
			break;
		memcpy(copy, j->chunks[c], j->words * sizeof(*copy));
		/* the copy must happen: the compiler may not read the source instead */
		__asm__ volatile("" : : "r"(copy) : "memory");
		key = j->chunks[c][wl_rand(&s) % j->words];
		for (w = 0; w < j->words; w++)
			if (copy[w] == key)
				break;
		j->found += w < j->words;
		free(copy);
		j->records++;
	}
	return NULL;
}

int
ebizzy_main(int argc, char **argv)
{
	int64_t kb = 512, nchunks = 0, secs = 0, threads = 1, t, c, total = 0;
	struct wl_opt o[] = {
		{ "--chunk-kb", 4, (int64_t)1 << 22, &kb, 0 },
		{ "--chunks", 1, 1 << 20, &nchunks, 1 },
		{ "--seconds", 1, 86400, &secs, 1 },
		{ "--threads", 1, EBIZZY_MAX_THREADS, &threads, 0 },
	};
	struct ebizzy_job *jobs;
	uint64_t **chunks, s = 42;
	pthread_t *tid;
	size_t w, words;
	double t0, dt;
	int r;

	if ((r = wl_parse("ebizzy", argc, argv, o, 4)) != 0)
		return r;
	words = (size_t)kb * 1024 / sizeof(uint64_t);
	chunks = calloc((size_t)nchunks, sizeof(*chunks));
	jobs = calloc((size_t)threads, sizeof(*jobs));
	tid = calloc((size_t)threads, sizeof(*tid));
	if (chunks == NULL || jobs == NULL || tid == NULL) {
		fprintf(stderr, "benchfleet-agent: ebizzy: out of memory\n");
		return 1;
	}
	for (c = 0; c < nchunks; c++) {
		if ((chunks[c] = malloc(words * sizeof(uint64_t))) == NULL) {
			fprintf(stderr, "benchfleet-agent: ebizzy: out of memory\n");
			return 1;
		}
		for (w = 0; w < words; w++)
			chunks[c][w] = wl_rand(&s);
	}
	t0 = wl_now();
	for (t = 0; t < threads; t++) {
		jobs[t] = (struct ebizzy_job){ chunks, nchunks, words, t0 + (double)secs,
		    0xeb1 + (uint64_t)t * 104729, 0, 0 };
		if (pthread_create(&tid[t], NULL, ebizzy_worker, &jobs[t]) != 0) {
			fprintf(stderr, "benchfleet-agent: ebizzy: pthread_create failed\n");
			return 1;
		}
	}
	for (t = 0; t < threads; t++) {
		pthread_join(tid[t], NULL);
		total += jobs[t].records;
	}
	dt = wl_now() - t0;
	printf("%.0f records/s\n", (double)total / dt);
	for (c = 0; c < nchunks; c++)
		free(chunks[c]);
	free(chunks);
	free(jobs);
	free(tid);
	return 0;
}
