/*
 * btree.c: our own B-tree lookup benchmark (after the Mitosis btree
 * workload, whose generator gave every key the same value): build a tree
 * of N distinct random keys, then T threads each do L/T random lookups of
 * keys known to be in it. Every lookup must hit; a miss is a bug and
 * fails the run. Prints lookups/s and the lookup phase's seconds.
 * The nodes come from one arena mapped in the THP mode asked for (--thp,
 * wl.h), sized for the most nodes N keys can need (every node but the
 * root holds ORDER-1 keys or more); untouched parts cost nothing.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "wl.h"

#define BTREE_ORDER	16	/* keys per node at most: 2*ORDER-1 */
#define BTREE_MAXK	(2 * BTREE_ORDER - 1)
#define BTREE_MAX_THREADS	1024

struct btree_node {
	int n, leaf;
	uint64_t key[BTREE_MAXK];
	uint64_t val[BTREE_MAXK];
	struct btree_node *kid[BTREE_MAXK + 1];
};

/* The node arena: mapped once, handed out in order, never freed early. */
static struct btree_node *btree_arena;
static size_t btree_used, btree_cap;

static struct btree_node *
btree_new(int leaf)
{
	struct btree_node *x;

	if (btree_used == btree_cap) {
		/* cannot happen: the arena holds the bound; fail loudly if it does */
		fprintf(stderr, "benchfleet-agent: btree: node arena full (%zu)\n", btree_cap);
		exit(1);
	}
	x = &btree_arena[btree_used++];
	x->leaf = leaf;
	return x;
}

static void
btree_split(struct btree_node *p, int i)
{
	struct btree_node *y = p->kid[i], *z = btree_new(y->leaf);
	int j;

	z->n = BTREE_ORDER - 1;
	for (j = 0; j < BTREE_ORDER - 1; j++) {
		z->key[j] = y->key[j + BTREE_ORDER];
		z->val[j] = y->val[j + BTREE_ORDER];
	}
	if (!y->leaf)
		for (j = 0; j < BTREE_ORDER; j++)
			z->kid[j] = y->kid[j + BTREE_ORDER];
	y->n = BTREE_ORDER - 1;
	for (j = p->n; j > i; j--)
		p->kid[j + 1] = p->kid[j];
	p->kid[i + 1] = z;
	for (j = p->n - 1; j >= i; j--) {
		p->key[j + 1] = p->key[j];
		p->val[j + 1] = p->val[j];
	}
	p->key[i] = y->key[BTREE_ORDER - 1];
	p->val[i] = y->val[BTREE_ORDER - 1];
	p->n++;
}

static void
btree_insert_nonfull(struct btree_node *x, uint64_t k, uint64_t v)
{
	int i = x->n - 1;

	while (!x->leaf) {
		while (i >= 0 && k < x->key[i])
			i--;
		i++;
		if (x->kid[i]->n == BTREE_MAXK) {
			btree_split(x, i);
			if (k > x->key[i])
				i++;
		}
		x = x->kid[i];
		i = x->n - 1;
	}
	while (i >= 0 && k < x->key[i]) {
		x->key[i + 1] = x->key[i];
		x->val[i + 1] = x->val[i];
		i--;
	}
	x->key[i + 1] = k;
	x->val[i + 1] = v;
	x->n++;
}

static struct btree_node *
btree_insert(struct btree_node *root, uint64_t k, uint64_t v)
{
	struct btree_node *s;

	if (root->n == BTREE_MAXK) {
		s = btree_new(0);
		s->kid[0] = root;
		btree_split(s, 0);
		btree_insert_nonfull(s, k, v);
		return s;
	}
	btree_insert_nonfull(root, k, v);
	return root;
}

static int
btree_find(const struct btree_node *x, uint64_t k, uint64_t *v)
{
	int lo, hi, mid;

	while (x != NULL) {
		lo = 0;
		hi = x->n;
		while (lo < hi) {
			mid = (lo + hi) / 2;
			if (x->key[mid] < k)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < x->n && x->key[lo] == k) {
			*v = x->val[lo];
			return 1;
		}
		if (x->leaf)
			return 0;
		x = x->kid[lo];
	}
	return 0;
}

/* Key i of the set: a bijection of i (odd multiplier, xor-shift), so the N
 * keys are distinct and random-looking without a dedup table. */
static uint64_t
btree_key(uint64_t i)
{
	uint64_t x = i * 0x9e3779b97f4a7c15ULL;

	return x ^ (x >> 29);
}

struct btree_job {
	const struct btree_node *root;
	int64_t keys, lookups;
	uint64_t seed;
	int64_t misses;
};

static void *
btree_worker(void *arg)
{
	struct btree_job *j = arg;
	uint64_t s = j->seed, i, v;
	int64_t n;

	for (n = 0; n < j->lookups; n++) {
		i = wl_rand(&s) % (uint64_t)j->keys;
		if (!btree_find(j->root, btree_key(i), &v) || v != i)
			j->misses++;
	}
	return NULL;
}

int
btree_main(int argc, char **argv)
{
	int64_t keys = 0, lookups = 0, threads = 1, t, misses = 0, i;
	struct wl_opt o[] = {
		{ "--keys", 1, (int64_t)1 << 34, &keys, 1 },
		{ "--lookups", 1, (int64_t)1 << 40, &lookups, 1 },
		{ "--threads", 1, BTREE_MAX_THREADS, &threads, 0 },
	};
	struct btree_job *jobs;
	pthread_t *tid;
	struct btree_node *root;
	double t0, dt;
	int r, thp = WL_THP_NONE;

	if ((r = wl_thp_opt("btree", &argc, argv, &thp)) != 0 ||
	    (r = wl_parse("btree", argc, argv, o, 3)) != 0)
		return r;
	btree_cap = (size_t)keys / (BTREE_ORDER - 1) + 2;
	if ((btree_arena = wl_map("btree", btree_cap * sizeof(*btree_arena), thp,
	    MAP_NORESERVE)) == NULL)
		return 1;
	root = btree_new(1);
	for (i = 0; i < keys; i++)
		root = btree_insert(root, btree_key((uint64_t)i), (uint64_t)i);
	jobs = calloc((size_t)threads, sizeof(*jobs));
	tid = calloc((size_t)threads, sizeof(*tid));
	if (jobs == NULL || tid == NULL) {
		fprintf(stderr, "benchfleet-agent: btree: out of memory\n");
		return 1;
	}
	t0 = wl_now();
	for (t = 0; t < threads; t++) {
		jobs[t] = (struct btree_job){ root, keys, lookups / threads +
		    (t < lookups % threads), 0x5eed + (uint64_t)t * 7919, 0 };
		if (pthread_create(&tid[t], NULL, btree_worker, &jobs[t]) != 0) {
			fprintf(stderr, "benchfleet-agent: btree: pthread_create failed\n");
			return 1;
		}
	}
	for (t = 0; t < threads; t++) {
		pthread_join(tid[t], NULL);
		misses += jobs[t].misses;
	}
	dt = wl_now() - t0;
	if (misses != 0) {
		fprintf(stderr, "benchfleet-agent: btree: %lld lookups missed\n", (long long)misses);
		return 1;
	}
	printf("lookups_per_s: %.0f\n", (double)lookups / dt);
	printf("seconds: %.6f\n", dt);
	printf("nodes: %zu\n", btree_used);
	/* the evidence that --thp madvise took: huge pages while the tree is mapped */
	printf("anon_huge_kb: %ld\n", wl_anon_huge_kb());
	free(jobs);
	free(tid);
	munmap(btree_arena, btree_cap * sizeof(*btree_arena));
	return 0;
}
