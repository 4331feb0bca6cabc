/*
 * store-int.h: what the store-*.c files share. Not for other modules: they
 * go through store.h.
 *
 * Every statement is prepared once, on first use, and cached in struct
 * store by its id; all SQL text lives in one table in store.c (the claim's
 * pick, which is the scheduling policy, in store-claim.c) so that the
 * queries can be read side by side with the schema in store-schema.c.
 */
#ifndef BF_STORE_INT_H
#define BF_STORE_INT_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <jansson.h>

#include "db.h"

#include "store.h"

enum store_q {
	Q_BEGIN, Q_COMMIT, Q_ROLLBACK, Q_VERSION, Q_GENERATION,
	/* machines */
	Q_M_ADD, Q_M_GET, Q_M_LIST, Q_M_BUSY, Q_M_DELETE, Q_M_UPDATE, Q_M_RUNNING,
	Q_M_IDLE, Q_M_IDLE_ALL, Q_M_NAMES,
	/* jobs */
	Q_J_ADD, Q_J_GET, Q_J_LIST, Q_J_HEAD, Q_J_CANCEL_RUNS, Q_J_CANCEL, Q_J_SETTLE,
	Q_J_START, Q_J_CELLS, Q_J_CELL_SAMPLES, Q_J_SERIES, Q_J_PIN,
	/* runs */
	Q_R_ADD, Q_R_BY_JOB, Q_R_GET, Q_R_HEAD, Q_R_CLAIM_PICK_GROUP_FRESH, Q_R_CLAIM_PICK_GROUP,
	Q_R_CLAIM_PICK_FRESH, Q_R_CLAIM_PICK_ANY, Q_R_CLAIM, Q_R_RENEW,
	Q_R_INFO, Q_R_CMDLINE, Q_R_KNOBS, Q_SN_ADD, Q_SN_GET, Q_R_SNAPSHOT,
	Q_ART_ADD, Q_RA_DEL, Q_RA_ADD, Q_RA_GET,
	Q_FP_OF_RUN, Q_FP_ADD, Q_FP_GET, Q_R_FP, Q_R_CLONE_BOOT, Q_R_CELL_SAMPLES, Q_R_CELL_BOOTS, Q_M_FINGERPRINT, Q_M_BOOT, Q_M_BOOT_KEY, Q_R_FINISH, Q_R_RETRY, Q_R_DROP_SAMPLES, Q_R_DROP_ARTIFACTS, Q_S_ADD, Q_S_BY_RUN, Q_S_BY_JOB, Q_L_ADD, Q_L_GET,
	/* recovery */
	Q_REC_SAMPLES, Q_REC_ARTIFACTS, Q_REC_LOG, Q_REC_CANCEL, Q_REC_REQUEUE, Q_REC_JOBS,
	/* federation and reproductions */
	Q_J_PUBLISH, Q_J_PUBLISHED, Q_X_ADD, Q_X_GET, Q_X_LIST,
	/* trust (schema step 7) */
	Q_RI_ADD, Q_RI_GET, Q_RI_BY_NAME, Q_RI_LIST, Q_LAB_ADD, Q_LAB_DEL, Q_LAB_BY_KEY,
	Q_LAB_LIST, Q_AUDIT_ADD, Q_AUDIT_LIST,
	/* kernel builds (schema step 14, store-kbuild.c) */
	Q_KB_INSERT, Q_KB_STEAL, Q_KB_STATE, Q_KB_RENEW, Q_KB_FINISH, Q_KB_GET, Q_KB_BY_RELEASE, Q_KB_TOUCH,
	Q_KA_ADD, Q_KA_GET, Q_ART_GET, Q_KA_TOTAL, Q_KB_OLDEST, Q_KB_DEL, Q_KA_ORPHANS, Q_KA_DEL,
	/* bisections (schema step 17, store-bisect.c) */
	Q_BI_ADD, Q_BI_GET, Q_BI_LIST, Q_BI_RUNNING, Q_BI_SET, Q_BI_CANCEL, Q_BS_ADD, Q_BS_LIST,
	Q_BS_SET,
	/* several coordinators (schema step 6) */
	Q_J_LOCK, Q_M_LEASE, Q_M_LEASE_RENEW, Q_M_RELEASE, Q_REC_MACHINES,
	Q__COUNT
};

struct store {
	struct db *db;
	int pg;				/* PostgreSQL: shared with other coordinators */
	char *node;			/* this coordinator's name in leases */
	char *target;			/* the path or URL it was opened with */
	pthread_mutex_t mu;
	_Atomic(const void *) holder;	/* the thread holding mu (store_holds) */
	_Atomic(unsigned long) tx_retries; /* store_tx runs again, for tests and logs */
	_Atomic(unsigned long) tx_gave_up; /* ... and still conflicted at the cap */
	struct db_stmt *st[Q__COUNT];
	uint64_t gen_nonce;		/* this opening's: store_generation across restarts */
	/*
	 * store_generation with readers (store-read.c). On the store: the token
	 * last read from its connection, and gen_mu over it and over every
	 * reader's gen_dv. On a reader: its data_version when it last looked.
	 */
	pthread_mutex_t gen_mu;
	char gen_slot[STORE_GENERATION_MAX];
	int64_t gen_dv;
	int gen_seen;			/* gen_dv holds a value */
	struct store **rd;		/* read-only connections (store-read.c), owned */
	size_t nrd;
	_Atomic(size_t) rd_next;	/* the next thread's reader */
};

/* store_generation's token as s's own connection sees it (store.c); the
 * caller holds s's lock. */
int store_generation_conn(struct store *s, char *out, size_t outsz);
/* ... and with readers open, through them (store-read.c). */
int store_generation_rd(struct store *s, char *out, size_t outsz);

/* Pages of lists are cut here whatever the caller asks (0 = this many). */
#define STORE_MAX_PAGE	1000

/* Takes the store lock; asserts the calling thread does not hold it. */
void store_lock(struct store *s);
/* Takes the lock of one of s's read-only connections (s's own if it has
 * none) and returns that store: a read that needs no transaction runs on
 * it, then store_unlock() of what this returned. */
struct store *store_rlock(struct store *s);
/* Frees s (not its readers: store_close does). */
void store_free(struct store *s);
/* Resets any statement left mid-step (an early goto out), then unlocks. */
void store_unlock(struct store *s);
/* 1 when the calling thread holds s's lock. */
int store_holds(const struct store *s);
/*
 * Every function that touches the connection or the statement cache asserts
 * this, as SQLite asserts sqlite3_mutex_held() in btree.c: a missing
 * store_lock() is caught where it happens, not as a corrupt statement later.
 * A macro, so that the assertion names the caller's line.
 */
#define store_assert_locked(s) assert(store_holds(s))

/*
 * The one transaction bracket: takes the store lock, begins, runs fn(s,
 * arg) and commits when it returns 0; STORE_TX_UNDO rolls back and gives 0
 * (nothing to do, and what fn wrote on the way must not stay); a BF_ERR_*
 * rolls back and is returned. On PostgreSQL, when a statement or the commit fails on a
 * serialization failure or deadlock (db_take_conflict) the transaction is
 * rolled back and fn runs again from the start, BF_MAX_TX_ATTEMPTS times in
 * all. So fn must be safe to run twice: it changes nothing outside the
 * store but what it leaves in arg, and frees or overwrites on entry what an
 * attempt before it left there. fn may return early without resetting its
 * statements: store_tx resets them.
 */
#define STORE_TX_UNDO	1
typedef int (*store_tx_fn)(struct store *s, void *arg);
int store_tx(struct store *s, store_tx_fn fn, void *arg);


/*
 * Fetch cached statement id, reset it and bind its parameters from fmt:
 * 't' const char * (NULL binds NULL), 'I' int64_t, 'd' double, 'b' a blob
 * (const void *, then size_t; copied). Pass every
 * integer cast to int64_t: the varargs are not type-checked. Text is bound
 * SQLITE_STATIC, so it must stay alive until the statement is next reset.
 */
int store_q(struct store *s, enum store_q id, struct db_stmt **stp, const char *fmt, ...);
/* store_q for statements without result rows; *changes (may be NULL) gets
 * the number of rows written. */
int store_q_exec(struct store *s, enum store_q id, int *changes, const char *fmt, ...);
int store_q_vexec(struct store *s, enum store_q id, int *changes, const char *fmt, va_list ap);
/* store_q_exec for an INSERT ... RETURNING id: *idp gets the id. */
int store_q_id(struct store *s, enum store_q id, int64_t *idp, const char *fmt, ...);
/* 1 on a row, 0 when done, BF_ERR_* on failure. */
int store_q_step(struct store *s, struct db_stmt *st);

/* Bring the store up to the latest schema (store-schema.c); where names it
 * in messages. BF_ERR_DB when it is newer than this build or a step fails. */
int store_schema_migrate(struct store *s, const char *where, struct bf_diag *d);

/* 0 when run_id is running under this coordinator; NOTFOUND; STATE. */
int store_run_held(struct store *s, int64_t run_id);
/* Inside a store_tx: name the run's machine's fingerprint as it is now in
 * runs.fingerprint_doc_sha256, storing the document once (store-evidence.c).
 * A machine without a fingerprint leaves the run's NULL. */
int store_run_fp_locked(struct store *s, int64_t run_id);
/* Inside a transaction: the run's snapshot row and name (store-evidence.c),
 * sha256 being the hash of text; as store_run_set_snapshot. */
int store_snapshot_locked(struct store *s, int64_t run_id, const char *text,
    const char *sha256);

int64_t store_now_s(void);
double store_now(void);

/* At most max bytes of valid UTF-8 from p[0..n), cut on a character
 * boundary; *lenp (may be NULL) gets the length. Caller frees. NULL on ENOMEM. */
char *store_text_clean(const char *p, size_t n, size_t max, size_t *lenp);
/* Names and addresses come from the API: check size and encoding here too,
 * since a stored bad byte would break every later listing. v NULL is fine
 * unless required; d may be NULL. BF_ERR_INVALID. */
int store_check_str(const char *v, const char *field, size_t max, int required,
    struct bf_diag *d);
/* One row of a page into the struct at elem (store_page); its clear
 * frees what fill copied, even when fill failed halfway. */
typedef int (*store_row_fn)(struct db_stmt *st, void *elem);
typedef void (*store_clear_fn)(void *elem);
/* The rows of statement id bound with "I" limit (0 or over STORE_MAX_PAGE:
 * STORE_MAX_PAGE) as an array of *nout structs of size bytes, each filled
 * by fill, under the store lock. The caller frees each with clear, then the
 * array. */
int store_page(struct store *s, enum store_q id, size_t limit, size_t size, store_row_fn fill,
    store_clear_fn clear, void **out, size_t *nout);
/* strdup of a text column; NULL column gives NULL. BF_ERR_ALLOC. */
int store_col_dup(struct db_stmt *st, int i, char **out);
/* The same cleaned to UTF-8 (store_text_clean): text a view shows. */
int store_col_text(struct db_stmt *st, int i, char **out);

#endif
