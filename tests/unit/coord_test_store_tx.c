/*
 * coord_test_store_tx.c: store_tx, the store's one transaction bracket, on
 * SQLite, and with BF_TEST_PG_URL (unit.coord_test_store_tx@pg) on
 * PostgreSQL: fn runs under the store lock; 0 commits, STORE_TX_UNDO and
 * errors roll back; an ordinary failure is never run again. On PostgreSQL
 * a second connection provokes a serialization failure (40001) and a
 * deadlock (40P01) inside the transaction, and store_tx runs it again,
 * up to BF_MAX_TX_ATTEMPTS times.
 *
 * It reaches inside the store (store-int.h): what it checks is the bracket
 * itself, which only the store's own files may call.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "caps.h"
#include "coord_fixture.h"
#include "db.h"
#include "store.h"
#include "store-int.h"
#include "t.h"

static struct fix_where where;

/* last_error of machine name, or "" when NULL; -1 when missing. */
static int
last_error_of(struct store *s, const char *name, char *buf, size_t n)
{
	struct store_machine *m = NULL;
	int r;

	if ((r = store_machine_get(s, name, &m)) != 0)
		return -1;
	snprintf(buf, n, "%s", m->last_error != NULL ? m->last_error : "");
	store_machine_free(m);
	return 0;
}

struct probe {
	int calls;
	int held;			/* fn saw the store lock held, every call */
	int ret;			/* what fn returns after its write */
	const char *sql;		/* its write */
};

static int
probe_tx(struct store *s, void *arg)
{
	struct probe *p = arg;

	p->calls++;
	p->held = p->held && store_holds(s);
	if (db_exec_script(s->db, p->sql) != 0)
		return BF_ERR_DB;
	return p->ret;
}

static int
probe(struct store *s, const char *sql, int ret, struct probe *p)
{
	memset(p, 0, sizeof(*p));
	p->held = 1;
	p->sql = sql;
	p->ret = ret;
	return store_tx(s, probe_tx, p);
}

/* On either engine: commit, roll back, undo, the lock, no retry of a
 * failure that is not a conflict. */
static void
test_bracket(void)
{
	struct store *s = fix_open_fresh(&where, "tx.db");
	struct store_machine m;
	struct probe p;
	char le[64];

	T_CHECK(s != NULL);
	if (s == NULL)
		return;
	memset(&m, 0, sizeof(m));
	m.name = "m1";
	m.host = "127.0.0.1";
	m.port = 22;
	m.klass = "c";
	T_EQ_INT(store_machine_add(s, &m, NULL), 0);
	T_CHECK(!store_holds(s));

	T_EQ_INT(probe(s, "UPDATE machines SET last_error = 'one' WHERE name = 'm1'", 0, &p), 0);
	T_EQ_INT(p.calls, 1);
	T_CHECK(p.held);
	T_CHECK(!store_holds(s));
	T_EQ_INT(last_error_of(s, "m1", le, sizeof(le)), 0);
	T_EQ_STR(le, "one");

	/* an error from fn: rolled back, returned, not run again */
	T_EQ_INT(probe(s, "UPDATE machines SET last_error = 'two' WHERE name = 'm1'",
	    BF_ERR_STATE, &p), BF_ERR_STATE);
	T_EQ_INT(p.calls, 1);
	T_EQ_INT(last_error_of(s, "m1", le, sizeof(le)), 0);
	T_EQ_STR(le, "one");

	/* undo: rolled back, and 0 */
	T_EQ_INT(probe(s, "UPDATE machines SET last_error = 'three' WHERE name = 'm1'",
	    STORE_TX_UNDO, &p), 0);
	T_EQ_INT(p.calls, 1);
	T_EQ_INT(last_error_of(s, "m1", le, sizeof(le)), 0);
	T_EQ_STR(le, "one");

	/* a failing statement (a CHECK constraint) is not a conflict */
	T_EQ_INT(probe(s, "UPDATE machines SET port = 0 WHERE name = 'm1'", 0, &p), BF_ERR_DB);
	T_EQ_INT(p.calls, 1);
	T_EQ_INT((long long)atomic_load(&s->tx_retries), 0);
	T_CHECK(!store_holds(s));
	/* the store is still usable: the failed transaction is gone */
	T_EQ_INT(probe(s, "UPDATE machines SET last_error = 'four' WHERE name = 'm1'", 0, &p), 0);
	T_EQ_INT(last_error_of(s, "m1", le, sizeof(le)), 0);
	T_EQ_STR(le, "four");
	store_close(s);
	fix_remove(&where, "tx.db");
}

/*
 * A serialization failure: fn reads under REPEATABLE READ (its snapshot),
 * another connection changes the row and commits, then fn writes the row:
 * PostgreSQL ends fn's transaction with 40001. The first `interfere`
 * attempts meet the other writer; the rest run alone.
 */
struct ser {
	struct db *other;
	int interfere;
	int calls;
	int other_ok;			/* every write of the other connection worked */
};

static int
ser_tx(struct store *s, void *arg)
{
	struct ser *a = arg;
	char sql[128];

	a->calls++;
	if (db_exec_script(s->db, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;"
	    " SELECT last_error FROM machines WHERE name = 'm1'") != 0)
		return BF_ERR_DB;
	if (a->calls <= a->interfere) {
		snprintf(sql, sizeof(sql), "UPDATE machines SET last_error = 'other %d'"
		    " WHERE name = 'm1'", a->calls);
		a->other_ok = a->other_ok && db_exec_script(a->other, sql) == 0;
	}
	snprintf(sql, sizeof(sql), "UPDATE machines SET last_error = 'mine %d'"
	    " WHERE name = 'm1'", a->calls);
	return db_exec_script(s->db, sql) != 0 ? BF_ERR_DB : 0;
}

/*
 * A deadlock: the other connection holds m2 and then asks for m1 while fn,
 * holding m1, waits for m2. fn waits first (a third connection watches
 * for it), so its deadlock check fires first and PostgreSQL ends fn's
 * transaction with 40P01; the other commits, and fn's second run goes
 * through.
 */
struct dl {
	struct db *other, *watch;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int holding, go;		/* the other holds m2; fn holds m1 */
	int done;			/* the other committed or rolled back */
	int calls;
	int other_r;
};

/* 1 when a session of this database waits for a row lock (fn, on m2). */
static int
dl_waiting(struct db *watch)
{
	struct db_stmt *st = NULL;
	int n = 0;

	if (db_prepare(watch, "SELECT COUNT(*) FROM pg_stat_activity WHERE datname ="
	    " current_database() AND wait_event_type = 'Lock'", &st) == 0 && db_step(st) == 1)
		n = db_col_int(st, 0);
	db_finalize(st);
	return n > 0;
}

static void *
dl_other(void *arg)
{
	struct dl *a = arg;
	int r, i;

	/* The victim must be fn: the other's own deadlock check waits 10 s, so
	 * on a loaded box fn's (1 s, the server's default) always fires first
	 * (the test cluster's user is a superuser, which SET needs). */
	r = db_exec_script(a->other, "SET deadlock_timeout = '10s'");
	if (r == 0)
		r = db_exec_script(a->other, "BEGIN; UPDATE machines SET last_error = 'other'"
		    " WHERE name = 'm2'");
	pthread_mutex_lock(&a->mu);
	a->holding = 1;
	pthread_cond_broadcast(&a->cv);
	while (!a->go)
		pthread_cond_wait(&a->cv, &a->mu);
	pthread_mutex_unlock(&a->mu);
	/* fn must wait for m2 before this asks for m1, so that its deadlock
	 * check is the first to fire */
	for (i = 0; r == 0 && i < 200 && !dl_waiting(a->watch); i++)
		usleep(50 * 1000);
	usleep(100 * 1000);
	if (r == 0)
		r = db_exec_script(a->other, "UPDATE machines SET last_error = 'other'"
		    " WHERE name = 'm1'");
	if (r == 0)
		r = db_exec_script(a->other, "COMMIT");
	else
		(void)db_exec_script(a->other, "ROLLBACK");
	pthread_mutex_lock(&a->mu);
	a->other_r = r;
	a->done = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

static int
dl_tx(struct store *s, void *arg)
{
	struct dl *a = arg;

	if (++a->calls == 1) {
		pthread_mutex_lock(&a->mu);
		while (!a->holding)
			pthread_cond_wait(&a->cv, &a->mu);
		pthread_mutex_unlock(&a->mu);
	}
	/* The second run starts after the other's COMMIT: begun before it, its
	 * snapshot would not see the other's rows and its writes would meet a
	 * serialization failure, a third run (seen under load). */
	if (a->calls == 2) {
		pthread_mutex_lock(&a->mu);
		while (!a->done)
			pthread_cond_wait(&a->cv, &a->mu);
		pthread_mutex_unlock(&a->mu);
	}
	if (db_exec_script(s->db, "UPDATE machines SET last_error = 'mine'"
	    " WHERE name = 'm1'") != 0)
		return BF_ERR_DB;
	if (a->calls == 1) {
		pthread_mutex_lock(&a->mu);
		a->go = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
	}
	if (db_exec_script(s->db, "UPDATE machines SET last_error = 'mine'"
	    " WHERE name = 'm2'") != 0)
		return BF_ERR_DB;
	return 0;
}

static void
test_conflicts(void)
{
	struct store *s = fix_open_fresh(&where, "txpg.db");
	struct store_machine m;
	struct db *other = NULL, *watch = NULL;
	struct ser a;
	struct dl b;
	pthread_t th;
	unsigned long before, r0, g0, r1, g1;
	char le[64];

	T_CHECK(s != NULL);
	if (s == NULL)
		return;
	memset(&m, 0, sizeof(m));
	m.host = "127.0.0.1";
	m.port = 22;
	m.klass = "c";
	m.name = "m1";
	T_EQ_INT(store_machine_add(s, &m, NULL), 0);
	m.name = "m2";
	T_EQ_INT(store_machine_add(s, &m, NULL), 0);
	/* the second connection: another coordinator on the same store */
	T_EQ_INT(db_open(fix_target(&where, "txpg.db"), &other, NULL), 0);
	T_EQ_INT(db_open(fix_target(&where, "txpg.db"), &watch, NULL), 0);
	if (other == NULL || watch == NULL)
		goto out;

	/* one serialization failure: a second run commits */
	memset(&a, 0, sizeof(a));
	a.other = other;
	a.interfere = 1;
	a.other_ok = 1;
	before = atomic_load(&s->tx_retries);
	T_EQ_INT(store_tx(s, ser_tx, &a), 0);
	T_EQ_INT(a.calls, 2);
	T_CHECK(a.other_ok);
	T_EQ_INT((long long)(atomic_load(&s->tx_retries) - before), 1);
	T_EQ_INT(last_error_of(s, "m1", le, sizeof(le)), 0);
	T_EQ_STR(le, "mine 2");
	T_CHECK(!db_take_conflict());	/* store_tx consumed it */

	/* conflicts every time: BF_MAX_TX_ATTEMPTS runs, then the error */
	memset(&a, 0, sizeof(a));
	a.other = other;
	a.interfere = BF_MAX_TX_ATTEMPTS + 10;
	a.other_ok = 1;
	before = atomic_load(&s->tx_retries);
	store_tx_stats(s, &r0, &g0);
	T_EQ_INT(store_tx(s, ser_tx, &a), BF_ERR_DB);
	T_EQ_INT(a.calls, BF_MAX_TX_ATTEMPTS);
	T_CHECK(a.other_ok);
	T_EQ_INT((long long)(atomic_load(&s->tx_retries) - before), BF_MAX_TX_ATTEMPTS - 1);
	store_tx_stats(s, &r1, &g1);
	T_EQ_INT((long long)(r1 - r0), BF_MAX_TX_ATTEMPTS - 1);
	T_EQ_INT((long long)(g1 - g0), 1);	/* gave up once, and said so */
	T_EQ_INT(last_error_of(s, "m1", le, sizeof(le)), 0);
	snprintf(le + 32, 32, "other %d", BF_MAX_TX_ATTEMPTS);
	T_EQ_STR(le, le + 32);	/* the other's last write stands, none of ours */

	/* a deadlock */
	memset(&b, 0, sizeof(b));
	b.other = other;
	b.watch = watch;
	pthread_mutex_init(&b.mu, NULL);
	pthread_cond_init(&b.cv, NULL);
	before = atomic_load(&s->tx_retries);
	T_EQ_INT(pthread_create(&th, NULL, dl_other, &b), 0);
	T_EQ_INT(store_tx(s, dl_tx, &b), 0);
	pthread_join(th, NULL);
	T_EQ_INT(b.calls, 2);
	T_EQ_INT(b.other_r, 0);
	T_EQ_INT((long long)(atomic_load(&s->tx_retries) - before), 1);
	T_EQ_INT(last_error_of(s, "m1", le, sizeof(le)), 0);
	T_EQ_STR(le, "mine");
	T_EQ_INT(last_error_of(s, "m2", le, sizeof(le)), 0);
	T_EQ_STR(le, "mine");
	pthread_cond_destroy(&b.cv);
	pthread_mutex_destroy(&b.mu);
out:
	db_close(watch);
	db_close(other);
	store_close(s);
	fix_remove(&where, "txpg.db");
}

int
main(void)
{
	if (fix_where_init(&where, "storetx") != 0)
		return 1;
	test_bracket();
	/* SQLite has no serialization failure to provoke: BEGIN IMMEDIATE
	 * serialises writers, and test_bracket shows it is never retried. */
	if (where.pg_url != NULL)
		test_conflicts();
	rmdir(where.dir);
	return t_done();
}
