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
		if (pthread_mutex_init(&r->mu, NULL) != 0 ||
		    pthread_mutex_init(&r->gen_mu, NULL) != 0) {
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

/*
 * store_generation with readers. The token is the store connection's, as
 * without readers, so that every thread gives the same one and a tag
 * taken on one thread gives 304 on the next (http_hygiene); but reading it
 * there waits for the store lock, which every write holds, once per GET.
 * So the last token read is kept in s->gen_slot, and a thread reads only
 * its reader's data_version, which moves with every commit of any other
 * connection (the store's, the monitor's process, another coordinator's):
 * unmoved since the reader last looked, no commit came since, and the slot,
 * filled at or after that look, is the token now. Moved, the thread reads
 * the store's token into the slot, under gen_mu so that slots are written
 * in the order their tokens were read: once per reader per commit.
 */
int
store_generation_rd(struct store *s, char *out, size_t outsz)
{
	struct db_stmt *st;
	struct store *r;
	int64_t dv;
	int rc;

	r = store_rlock(s);
	if ((rc = store_q(r, Q_GENERATION, &st, "")) == 0 && (rc = store_q_step(r, st)) == 0)
		rc = BF_ERR_DB;
	dv = rc > 0 ? db_col_int64(st, 0) : 0;
	store_unlock(r);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&s->gen_mu);
	if (!r->gen_seen || r->gen_dv != dv || s->gen_slot[0] == '\0') {
		store_lock(s);
		rc = store_generation_conn(s, s->gen_slot, sizeof(s->gen_slot));
		store_unlock(s);
		if (rc != 0) {
			s->gen_slot[0] = '\0';
			pthread_mutex_unlock(&s->gen_mu);
			return rc;
		}
		r->gen_dv = dv;
		r->gen_seen = 1;
	}
	rc = snprintf(out, outsz, "%s", s->gen_slot) >= (int)outsz ? BF_ERR_TOOBIG : 0;
	pthread_mutex_unlock(&s->gen_mu);
	if (rc != 0)
		out[0] = '\0';
	return rc;
}
