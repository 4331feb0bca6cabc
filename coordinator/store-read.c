/*
 * store-read.c: read-only connections beside the store's own, for reads
 * that need no transaction (the API's GETs: lists, a job, its runs, a
 * report's samples). On SQLite in WAL mode a reader never waits for the
 * writer, but one connection has one mutex: every GET of the API waited
 * for every other store call of its process. Each reader is a struct
 * store of its own (its mutex, statement cache and connection, opened
 * with query_only); a thread keeps to one reader, picked round robin at
 * its first read. PostgreSQL gets none: its connection is remote, and a
 * reader there would be one more session per coordinator.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store-int.h"

/* This thread's reader, as an index into any store's readers. */
static __thread size_t store_rd_mine = SIZE_MAX;

int
store_readers_open(struct store *s, size_t n, struct bf_diag *d)
{
	struct store **rd = NULL, *r;
	size_t i;
	int rc = 0;

	if (s == NULL || s->pg || n == 0 || s->nrd > 0)
		return 0;
	if (n > STORE_MAX_READERS)
		n = STORE_MAX_READERS;
	if ((rd = calloc(n, sizeof(*rd))) == NULL)
		return BF_ERR_ALLOC;
	for (i = 0; i < n; i++) {
		if ((r = calloc(1, sizeof(*r))) == NULL) {
			rc = BF_ERR_ALLOC;
			goto out;
		}
		rd[i] = r;
		if (pthread_mutex_init(&r->mu, NULL) != 0) {
			free(r);
			rd[i] = NULL;
			rc = BF_ERR_SYS;
			goto out;
		}
		r->gen_nonce = s->gen_nonce ^ (uint64_t)(i + 1);
		if ((r->node = strdup(s->node)) == NULL || (r->target = strdup(s->target)) == NULL) {
			rc = BF_ERR_ALLOC;
			goto out;
		}
		if ((rc = db_open(s->target, &r->db, d)) != 0 ||
		    (rc = db_exec_script(r->db, "PRAGMA query_only = 1")) != 0)
			goto out;
	}
	s->rd = rd;
	s->nrd = n;
	rd = NULL;
out:
	for (i = 0; rd != NULL && i < n; i++)
		store_free(rd[i]);
	free(rd);
	return rc;
}

struct store *
store_rlock(struct store *s)
{
	struct store *r = s;

	if (s->nrd > 0) {
		if (store_rd_mine == SIZE_MAX)
			store_rd_mine = atomic_fetch_add(&s->rd_next, 1);
		r = s->rd[store_rd_mine % s->nrd];
	}
	store_lock(r);
	return r;
}
