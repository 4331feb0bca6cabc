/*
 * db.c: SQLite and PostgreSQL behind db.h. Each function switches on the
 * engine; the PostgreSQL half keeps a statement as its rewritten text and
 * its bound parameters, and runs it with PQexecParams on the first step,
 * so nothing server-side outlives a reconnect.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "caps.h"
#include "db.h"

/* PostgreSQL type OIDs (catalog/pg_type.dat) the store binds or reads. */
#define OID_BOOL	16
#define OID_BYTEA	17
#define OID_INT8	20
#define OID_INT2	21
#define OID_INT4	23
#define OID_TEXT	25
#define OID_OID		26
#define OID_FLOAT4	700
#define OID_FLOAT8	701
#define OID_NUMERIC	1700

#define DB_MAX_PARAMS	16

struct db {
	enum db_kind kind;
	sqlite3 *lite;
	PGconn *pg;
	char *target;
	int changes;
	struct db_stmt *stmts;		/* PostgreSQL: every live statement */
};

struct pg_param {
	unsigned int oid;
	char *val;			/* NULL: SQL NULL */
	int len;
	int binary;
};

struct db_stmt {
	struct db *db;
	sqlite3_stmt *lite;
	/* PostgreSQL */
	char *sql;
	int nparams;
	struct pg_param p[DB_MAX_PARAMS];
	PGresult *res;
	int row;			/* current row, -1 before the first */
	unsigned char **blobs;		/* decoded bytea per column of the row */
	size_t *bloblen;
	struct db_stmt *next, **prevp;
};

static __thread char db_errbuf[256];
static __thread int db_conflict;	/* see db_take_conflict */

const char *
db_last_error(void)
{
	return db_errbuf;
}

static void
db_seterr(const char *msg)
{
	size_t n;

	snprintf(db_errbuf, sizeof(db_errbuf), "%s", msg != NULL ? msg : "unknown error");
	/* libpq's messages end in a newline and may run over several lines */
	n = strcspn(db_errbuf, "\n");
	db_errbuf[n] = '\0';
}

int
db_take_conflict(void)
{
	int c = db_conflict;

	db_conflict = 0;
	return c;
}

int
db_is_pg_target(const char *target)
{
	return target != NULL && (strncmp(target, "postgresql://", 13) == 0 ||
	    strncmp(target, "postgres://", 11) == 0);
}

const char *
db_target_safe(const char *target)
{
	static __thread char buf[512];
	const char *at, *colon, *host;

	if (target == NULL)
		return "";
	snprintf(buf, sizeof(buf), "%s", target);
	if (!db_is_pg_target(target))
		return buf;
	host = strstr(target, "://") + 3;
	at = strchr(host, '@');
	colon = memchr(host, ':', at != NULL ? (size_t)(at - host) : 0);
	if (at != NULL && colon != NULL && (size_t)(colon - target) + 4 < sizeof(buf))
		snprintf(buf + (colon - target), sizeof(buf) - (size_t)(colon - target),
		    ":***%s", at);
	return buf;
}

/* --- SQLite --- */

static int
lite_fail(struct db *db, int rc)
{
	db_seterr(db != NULL && db->lite != NULL ? sqlite3_errmsg(db->lite) : sqlite3_errstr(rc));
	switch (rc) {
	case SQLITE_NOMEM:
		return BF_ERR_ALLOC;
	case SQLITE_CONSTRAINT_PRIMARYKEY:
	case SQLITE_CONSTRAINT_UNIQUE:
		return BF_ERR_EXISTS;
	case SQLITE_CONSTRAINT_FOREIGNKEY:
		return BF_ERR_NOTFOUND;
	case SQLITE_CONSTRAINT_CHECK:
	case SQLITE_CONSTRAINT_NOTNULL:
		return BF_ERR_INVALID;
	default:
		return BF_ERR_DB;
	}
}

/* A pragma that answers one row; want, when set, must be the answer. */
static int
lite_pragma(struct db *db, const char *sql, const char *want, struct bf_diag *d)
{
	sqlite3_stmt *st = NULL;
	const char *got;
	int r, rc;

	if ((rc = sqlite3_prepare_v2(db->lite, sql, -1, &st, NULL)) != SQLITE_OK) {
		r = lite_fail(db, rc);
		bf_diag_set(d, NULL, "%s: %s", sql, db_errbuf);
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		r = lite_fail(db, rc);
		bf_diag_set(d, NULL, "%s: %s", sql, db_errbuf);
		goto out;
	}
	if (want != NULL) {
		got = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
		if (got == NULL || strcasecmp(got, want) != 0) {
			bf_diag_set(d, NULL, "%s gave %s, expected %s", sql,
			    got != NULL ? got : "nothing", want);
			r = BF_ERR_DB;
			goto out;
		}
	}
	r = 0;
out:
	sqlite3_finalize(st);
	return r;
}

/*
 * The store holds token hashes, machine access and every result: its owner
 * only. Create the file 0600 before SQLite does (SQLite gives -wal and -shm
 * the mode of the database), and refuse one, or a -wal or -shm beside it,
 * that the group or others may read or write.
 */
static int
lite_check_mode(const char *path, struct bf_diag *d)
{
	static const char *const sfx[] = { "", "-wal", "-shm" };
	char p[PATH_MAX];
	struct stat sb;
	size_t i;
	int fd;

	if (strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0)
		return 0;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		bf_diag_set(d, NULL, "cannot open: %s", strerror(errno));
		return BF_ERR_IO;
	}
	close(fd);
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		if ((size_t)snprintf(p, sizeof(p), "%s%s", path, sfx[i]) >= sizeof(p)) {
			bf_diag_set(d, NULL, "path too long");
			return BF_ERR_TOOBIG;
		}
		if (stat(p, &sb) != 0) {
			if (errno == ENOENT && i > 0)
				continue;
			bf_diag_set(d, NULL, "%s: %s", p, strerror(errno));
			return BF_ERR_IO;
		}
		if (!S_ISREG(sb.st_mode)) {
			bf_diag_set(d, NULL, "%s is not a regular file", p);
			return BF_ERR_INVALID;
		}
		if ((sb.st_mode & 077) != 0) {
			bf_diag_set(d, NULL, "refusing %s: its mode %04o lets the group or others "
			    "read or write it, and it holds token hashes and machine access; "
			    "chmod 600 %s", p, (unsigned int)(sb.st_mode & 07777), p);
			return BF_ERR_INVALID;
		}
	}
	return 0;
}

static int
lite_open(struct db *db, const char *path, struct bf_diag *d)
{
	int rc, r;

	if ((r = lite_check_mode(path, d)) != 0)
		return r;

	/* NOMUTEX: the store's mutex already serialises every use. */
	rc = sqlite3_open_v2(path, &db->lite, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		r = lite_fail(db, rc);
		bf_diag_set(d, NULL, "cannot open: %s", db_errbuf);
		return r;
	}
	sqlite3_extended_result_codes(db->lite, 1);
	sqlite3_busy_timeout(db->lite, 5000);
	/*
	 * WAL with synchronous=NORMAL: a commit is appended to the WAL and the
	 * fsync waits for the checkpoint. A killed process loses nothing, since
	 * the WAL is in the kernel's page cache and is replayed on the next
	 * open; only a power loss or OS crash may drop the last transactions,
	 * and even then the file stays consistent.
	 */
	if ((r = lite_pragma(db, "PRAGMA journal_mode = WAL",
	    strcmp(path, ":memory:") == 0 ? "memory" : "wal", d)) != 0 ||
	    (r = lite_pragma(db, "PRAGMA synchronous = NORMAL", NULL, d)) != 0 ||
	    (r = lite_pragma(db, "PRAGMA foreign_keys = ON", NULL, d)) != 0 ||
	    (r = lite_pragma(db, "PRAGMA foreign_keys", "1", d)) != 0)
		return r;
	return 0;
}

/* --- PostgreSQL --- */

static int
pg_fail_res(PGresult *res, PGconn *conn)
{
	const char *state;

	db_seterr(res != NULL ? PQresultErrorMessage(res) : PQerrorMessage(conn));
	state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (state == NULL)
		return BF_ERR_DB;
	if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0) {
		db_conflict = 1;	/* serialization_failure, deadlock_detected */
		return BF_ERR_DB;
	}
	if (strcmp(state, "23505") == 0)	/* unique_violation */
		return BF_ERR_EXISTS;
	if (strcmp(state, "23503") == 0)	/* foreign_key_violation */
		return BF_ERR_NOTFOUND;
	if (strcmp(state, "23514") == 0 || strcmp(state, "23502") == 0 ||
	    strcmp(state, "22P02") == 0 || strcmp(state, "22021") == 0)
		return BF_ERR_INVALID;		/* check, not null, bad text, bad encoding */
	if (strcmp(state, "53100") == 0 || strcmp(state, "53200") == 0)
		return BF_ERR_ALLOC;
	return BF_ERR_DB;
}

static void
pg_quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;			/* NOTICEs (IF NOT EXISTS ...) are not errors */
}

static PGconn *
pg_connect(const char *target, struct bf_diag *d)
{
	PGconn *c;

	c = PQconnectdb(target);
	if (c == NULL) {
		bf_diag_set(d, NULL, "out of memory");
		return NULL;
	}
	if (PQstatus(c) != CONNECTION_OK) {
		db_seterr(PQerrorMessage(c));
		bf_diag_set(d, NULL, "cannot connect: %s", db_errbuf);
		PQfinish(c);
		return NULL;
	}
	PQsetNoticeProcessor(c, pg_quiet, NULL);
	return c;
}

/* Settings every connection of ours runs with. */
static int
pg_setup(PGconn *c, struct bf_diag *d)
{
	PGresult *res;
	int r = 0;

	res = PQexec(c, "SET client_encoding = 'UTF8'; SET TIME ZONE 'UTC';"
	    " SET lock_timeout = '30s'");
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		r = pg_fail_res(res, c);
		bf_diag_set(d, NULL, "setting up the session: %s", db_errbuf);
	}
	PQclear(res);
	return r;
}

/* The server went away (restart, idle kill): reconnect outside a
 * transaction. A transaction that was open is lost, as it would be. */
static int
pg_alive(struct db *db)
{
	if (PQstatus(db->pg) == CONNECTION_OK)
		return 0;
	PQreset(db->pg);
	if (PQstatus(db->pg) != CONNECTION_OK) {
		db_seterr(PQerrorMessage(db->pg));
		return BF_ERR_DB;
	}
	return pg_setup(db->pg, NULL);
}

/* ?N -> $N and a bare ? -> the next $k, outside quotes. *np: highest index. */
static char *
pg_rewrite(const char *sql, int *np)
{
	size_t n = strlen(sql), o = 0;
	char *out, quote = 0;
	int next = 1, max = 0, k;
	const char *p;

	if ((out = malloc(n * 2 + 16)) == NULL)
		return NULL;
	for (p = sql; *p != '\0'; p++) {
		if (quote != 0) {
			if (*p == quote)
				quote = 0;
			out[o++] = *p;
			continue;
		}
		if (*p == '\'' || *p == '"') {
			quote = *p;
			out[o++] = *p;
			continue;
		}
		if (*p != '?') {
			out[o++] = *p;
			continue;
		}
		if (isdigit((unsigned char)p[1])) {
			k = (int)strtol(p + 1, NULL, 10);
			while (isdigit((unsigned char)p[1]))
				p++;
		} else
			k = next;
		next = k + 1;
		if (k > max)
			max = k;
		o += (size_t)snprintf(out + o, 12, "$%d", k);
	}
	out[o] = '\0';
	*np = max;
	return out;
}

static void
pg_clear_row(struct db_stmt *st)
{
	int i, n;

	if (st->blobs == NULL)
		return;
	n = st->res != NULL ? PQnfields(st->res) : 0;
	for (i = 0; i < n; i++)
		PQfreemem(st->blobs[i]);
	free(st->blobs);
	free(st->bloblen);
	st->blobs = NULL;
	st->bloblen = NULL;
}

static void
pg_reset(struct db_stmt *st)
{
	pg_clear_row(st);
	PQclear(st->res);
	st->res = NULL;
	st->row = -1;
}

static int
pg_bind(struct db_stmt *st, int i, unsigned int oid, const void *val, size_t len, int binary)
{
	struct pg_param *p;
	char *v = NULL;

	if (i < 1 || i > DB_MAX_PARAMS || i > st->nparams) {
		db_seterr("parameter index out of range");
		return BF_ERR_INVALID;
	}
	if (len > 0x7fffffff)
		return BF_ERR_TOOBIG;
	if (val != NULL) {
		if ((v = malloc(len + 1)) == NULL)
			return BF_ERR_ALLOC;
		memcpy(v, val, len);
		v[len] = '\0';
	}
	p = &st->p[i - 1];
	free(p->val);
	p->oid = oid;
	p->val = v;
	p->len = (int)len;
	p->binary = binary;
	return 0;
}

static int
pg_step(struct db_stmt *st)
{
	const char *vals[DB_MAX_PARAMS];
	unsigned int oids[DB_MAX_PARAMS];
	int lens[DB_MAX_PARAMS], fmts[DB_MAX_PARAMS], i, r;
	ExecStatusType es;
	const char *ct;

	if (st->res == NULL) {
		if ((r = pg_alive(st->db)) != 0)
			return r;
		for (i = 0; i < st->nparams; i++) {
			vals[i] = st->p[i].val;
			oids[i] = st->p[i].oid;
			lens[i] = st->p[i].len;
			fmts[i] = st->p[i].binary;
		}
		st->res = PQexecParams(st->db->pg, st->sql, st->nparams, oids, vals, lens, fmts, 0);
		es = PQresultStatus(st->res);
		if (es != PGRES_TUPLES_OK && es != PGRES_COMMAND_OK) {
			r = pg_fail_res(st->res, st->db->pg);
			pg_reset(st);
			return r;
		}
		ct = PQcmdTuples(st->res);
		st->db->changes = ct != NULL && *ct != '\0' ? atoi(ct) : 0;
		st->row = -1;
	}
	pg_clear_row(st);
	if (PQresultStatus(st->res) != PGRES_TUPLES_OK || st->row + 1 >= PQntuples(st->res))
		return 0;
	st->row++;
	return 1;
}

static int
pg_isnull(struct db_stmt *st, int i)
{
	return st->res == NULL || st->row < 0 || st->row >= PQntuples(st->res) ||
	    i < 0 || i >= PQnfields(st->res) || PQgetisnull(st->res, st->row, i);
}

/* bytea arrives in text form as \x<hex>; decoded once per row and column. */
static const unsigned char *
pg_blob(struct db_stmt *st, int i, size_t *lenp)
{
	int n = PQnfields(st->res);

	*lenp = 0;
	if (pg_isnull(st, i))
		return NULL;
	if (st->blobs == NULL) {
		if ((st->blobs = calloc((size_t)n, sizeof(*st->blobs))) == NULL ||
		    (st->bloblen = calloc((size_t)n, sizeof(*st->bloblen))) == NULL) {
			free(st->blobs);
			st->blobs = NULL;
			return NULL;
		}
	}
	if (st->blobs[i] == NULL)
		st->blobs[i] = PQunescapeBytea((const unsigned char *)PQgetvalue(st->res,
		    st->row, i), &st->bloblen[i]);
	*lenp = st->bloblen[i];
	return st->blobs[i];
}

/* --- the interface --- */

int
db_open(const char *target, struct db **out, struct bf_diag *d)
{
	struct db *db;
	int r;

	*out = NULL;
	if (target == NULL || *target == '\0') {
		bf_diag_set(d, "store", "no store path or URL given");
		return BF_ERR_INVALID;
	}
	if ((db = calloc(1, sizeof(*db))) == NULL || (db->target = strdup(target)) == NULL) {
		free(db);
		return BF_ERR_ALLOC;
	}
	if (db_is_pg_target(target)) {
		db->kind = DB_PG;
		if ((db->pg = pg_connect(target, d)) == NULL) {
			r = BF_ERR_DB;
			goto fail;
		}
		if ((r = pg_setup(db->pg, d)) != 0)
			goto fail;
	} else {
		db->kind = DB_SQLITE;
		if ((r = lite_open(db, target, d)) != 0)
			goto fail;
	}
	*out = db;
	return 0;
fail:
	db_close(db);
	return r;
}

void
db_close(struct db *db)
{
	if (db == NULL)
		return;
	while (db->stmts != NULL)
		db_finalize(db->stmts);
	if (db->lite != NULL) {
		sqlite3_exec(db->lite, "PRAGMA optimize", NULL, NULL, NULL);
		sqlite3_close(db->lite);
	}
	if (db->pg != NULL)
		PQfinish(db->pg);
	free(db->target);
	free(db);
}

enum db_kind
db_kind(const struct db *db)
{
	return db->kind;
}

int
db_exec_script(struct db *db, const char *sql)
{
	PGresult *res;
	char *err = NULL;
	int r = 0;

	if (db->kind == DB_SQLITE) {
		if (sqlite3_exec(db->lite, sql, NULL, NULL, &err) != SQLITE_OK) {
			r = lite_fail(db, sqlite3_errcode(db->lite));
			if (err != NULL)
				db_seterr(err);
		}
		sqlite3_free(err);
		return r;
	}
	if ((r = pg_alive(db)) != 0)
		return r;
	res = PQexec(db->pg, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		r = pg_fail_res(res, db->pg);
	PQclear(res);
	return r;
}

int
db_prepare(struct db *db, const char *sql, struct db_stmt **out)
{
	struct db_stmt *st;
	int rc;

	*out = NULL;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return BF_ERR_ALLOC;
	st->db = db;
	st->row = -1;
	if (db->kind == DB_SQLITE) {
		rc = sqlite3_prepare_v3(db->lite, sql, -1, SQLITE_PREPARE_PERSISTENT, &st->lite,
		    NULL);
		if (rc != SQLITE_OK) {
			free(st);
			return lite_fail(db, rc);
		}
	} else {
		if ((st->sql = pg_rewrite(sql, &st->nparams)) == NULL) {
			free(st);
			return BF_ERR_ALLOC;
		}
		if (st->nparams > DB_MAX_PARAMS) {
			db_seterr("too many parameters");
			free(st->sql);
			free(st);
			return BF_ERR_INVALID;
		}
	}
	st->next = db->stmts;
	if (db->stmts != NULL)
		db->stmts->prevp = &st->next;
	st->prevp = &db->stmts;
	db->stmts = st;
	*out = st;
	return 0;
}

void
db_finalize(struct db_stmt *st)
{
	int i;

	if (st == NULL)
		return;
	*st->prevp = st->next;
	if (st->next != NULL)
		st->next->prevp = st->prevp;
	if (st->lite != NULL)
		sqlite3_finalize(st->lite);
	pg_reset(st);
	for (i = 0; i < DB_MAX_PARAMS; i++)
		free(st->p[i].val);
	free(st->sql);
	free(st);
}

void
db_reset(struct db_stmt *st)
{
	int i;

	if (st == NULL)
		return;
	if (st->lite != NULL) {
		sqlite3_reset(st->lite);
		sqlite3_clear_bindings(st->lite);
		return;
	}
	pg_reset(st);
	for (i = 0; i < DB_MAX_PARAMS; i++) {
		free(st->p[i].val);
		memset(&st->p[i], 0, sizeof(st->p[i]));
	}
}

void
db_reset_all(struct db *db)
{
	struct db_stmt *st;

	for (st = db->stmts; st != NULL; st = st->next)
		if (st->lite != NULL ? sqlite3_stmt_busy(st->lite) : st->res != NULL)
			db_reset(st);
}

int
db_bind_text(struct db_stmt *st, int i, const char *text)
{
	int rc;

	if (st->lite == NULL)
		return pg_bind(st, i, OID_TEXT, text, text != NULL ? strlen(text) : 0, 0);
	rc = text == NULL ? sqlite3_bind_null(st->lite, i) :
	    sqlite3_bind_text(st->lite, i, text, -1, SQLITE_TRANSIENT);
	return rc == SQLITE_OK ? 0 : lite_fail(st->db, rc);
}

int
db_bind_int64(struct db_stmt *st, int i, int64_t v)
{
	char b[24];
	int rc;

	if (st->lite == NULL) {
		snprintf(b, sizeof(b), "%lld", (long long)v);
		return pg_bind(st, i, OID_INT8, b, strlen(b), 0);
	}
	rc = sqlite3_bind_int64(st->lite, i, v);
	return rc == SQLITE_OK ? 0 : lite_fail(st->db, rc);
}

int
db_bind_double(struct db_stmt *st, int i, double v)
{
	char b[40];
	int rc;

	if (st->lite == NULL) {
		snprintf(b, sizeof(b), "%.17g", v);
		return pg_bind(st, i, OID_FLOAT8, b, strlen(b), 0);
	}
	rc = sqlite3_bind_double(st->lite, i, v);
	return rc == SQLITE_OK ? 0 : lite_fail(st->db, rc);
}

int
db_bind_blob(struct db_stmt *st, int i, const void *p, size_t n)
{
	int rc;

	if (st->lite == NULL)
		return pg_bind(st, i, OID_BYTEA, p, n, 1);
	if (n > 0x7fffffff)
		return BF_ERR_TOOBIG;
	rc = sqlite3_bind_blob(st->lite, i, p, (int)n, SQLITE_TRANSIENT);
	return rc == SQLITE_OK ? 0 : lite_fail(st->db, rc);
}

int
db_step(struct db_stmt *st)
{
	int rc;

	if (st->lite == NULL)
		return pg_step(st);
	rc = sqlite3_step(st->lite);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE) {
		st->db->changes = sqlite3_changes(st->db->lite);
		return 0;
	}
	rc = lite_fail(st->db, rc);
	sqlite3_reset(st->lite);
	return rc;
}

int
db_changes(struct db *db)
{
	return db->changes;
}

int
db_in_tx(struct db *db)
{
	if (db->kind == DB_SQLITE)
		return sqlite3_get_autocommit(db->lite) == 0;
	return PQtransactionStatus(db->pg) != PQTRANS_IDLE;
}

int
db_col_count(struct db_stmt *st)
{
	if (st->lite != NULL)
		return sqlite3_column_count(st->lite);
	return st->res != NULL ? PQnfields(st->res) : 0;
}

const char *
db_col_name(struct db_stmt *st, int i)
{
	if (st->lite != NULL)
		return sqlite3_column_name(st->lite, i);
	return st->res != NULL ? PQfname(st->res, i) : NULL;
}

enum db_type
db_col_type(struct db_stmt *st, int i)
{
	const char *v;

	if (st->lite != NULL) {
		switch (sqlite3_column_type(st->lite, i)) {
		case SQLITE_NULL:
			return DB_NULL;
		case SQLITE_INTEGER:
			return DB_INT;
		case SQLITE_FLOAT:
			return DB_FLOAT;
		case SQLITE_BLOB:
			return DB_BLOB;
		default:
			return DB_TEXT;
		}
	}
	if (pg_isnull(st, i))
		return DB_NULL;
	switch (PQftype(st->res, i)) {
	case OID_BOOL:
	case OID_INT2:
	case OID_INT4:
	case OID_INT8:
	case OID_OID:
		return DB_INT;
	case OID_FLOAT4:
	case OID_FLOAT8:
		return DB_FLOAT;
	case OID_NUMERIC:
		v = PQgetvalue(st->res, st->row, i);
		return strpbrk(v, ".eEN") != NULL ? DB_FLOAT : DB_INT;
	case OID_BYTEA:
		return DB_BLOB;
	default:
		return DB_TEXT;
	}
}

int64_t
db_col_int64(struct db_stmt *st, int i)
{
	const char *v;

	if (st->lite != NULL)
		return sqlite3_column_int64(st->lite, i);
	if (pg_isnull(st, i))
		return 0;
	v = PQgetvalue(st->res, st->row, i);
	if (PQftype(st->res, i) == OID_BOOL)
		return v[0] == 't';
	return strtoll(v, NULL, 10);
}

int
db_col_int(struct db_stmt *st, int i)
{
	return (int)db_col_int64(st, i);
}

double
db_col_double(struct db_stmt *st, int i)
{
	if (st->lite != NULL)
		return sqlite3_column_double(st->lite, i);
	if (pg_isnull(st, i))
		return 0.0;
	return strtod(PQgetvalue(st->res, st->row, i), NULL);
}

const char *
db_col_text(struct db_stmt *st, int i)
{
	if (st->lite != NULL)
		return (const char *)sqlite3_column_text(st->lite, i);
	if (pg_isnull(st, i))
		return NULL;
	return PQgetvalue(st->res, st->row, i);
}

size_t
db_col_bytes(struct db_stmt *st, int i)
{
	size_t n;

	if (st->lite != NULL)
		return (size_t)sqlite3_column_bytes(st->lite, i);
	if (pg_isnull(st, i))
		return 0;
	if (PQftype(st->res, i) == OID_BYTEA) {
		pg_blob(st, i, &n);
		return n;
	}
	return (size_t)PQgetlength(st->res, st->row, i);
}

const void *
db_col_blob(struct db_stmt *st, int i)
{
	size_t n;

	if (st->lite != NULL)
		return sqlite3_column_blob(st->lite, i);
	if (pg_isnull(st, i))
		return NULL;
	if (PQftype(st->res, i) == OID_BYTEA)
		return pg_blob(st, i, &n);
	return PQgetvalue(st->res, st->row, i);
}

/* --- notifications --- */

int
db_notify(struct db *db, const char *channel, const char *payload)
{
	const char *vals[2] = { channel, payload };
	PGresult *res;
	int r = 0;

	if (db->kind != DB_PG)
		return 0;
	if ((r = pg_alive(db)) != 0)
		return r;
	res = PQexecParams(db->pg, "SELECT pg_notify($1, $2)", 2, NULL, vals, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		r = pg_fail_res(res, db->pg);
	PQclear(res);
	return r;
}

struct db_listener {
	char *target;
	char *channel;
	PGconn *c;
};

static int
listen_connect(struct db_listener *l, struct bf_diag *d)
{
	PGresult *res;
	char *q = NULL, *id;
	int r = 0;

	if (l->c != NULL)
		PQfinish(l->c);
	if ((l->c = pg_connect(l->target, d)) == NULL)
		return BF_ERR_DB;
	if ((id = PQescapeIdentifier(l->c, l->channel, strlen(l->channel))) == NULL ||
	    (q = malloc(strlen(id) + 8)) == NULL) {
		PQfreemem(id);
		return BF_ERR_ALLOC;
	}
	sprintf(q, "LISTEN %s", id);
	PQfreemem(id);
	res = PQexec(l->c, q);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		r = pg_fail_res(res, l->c);
		bf_diag_set(d, NULL, "LISTEN: %s", db_errbuf);
	}
	PQclear(res);
	free(q);
	return r;
}

int
db_listen_open(const char *target, const char *channel, struct db_listener **out,
    struct bf_diag *d)
{
	struct db_listener *l;
	int r;

	*out = NULL;
	if (!db_is_pg_target(target))
		return BF_ERR_INVALID;
	if ((l = calloc(1, sizeof(*l))) == NULL || (l->target = strdup(target)) == NULL ||
	    (l->channel = strdup(channel)) == NULL) {
		db_listen_close(l);
		return BF_ERR_ALLOC;
	}
	if ((r = listen_connect(l, d)) != 0) {
		db_listen_close(l);
		return r;
	}
	*out = l;
	return 0;
}

int
db_listen_wait(struct db_listener *l, int timeout_ms, db_notify_cb cb, void *arg)
{
	struct pollfd pfd;
	PGnotify *n;
	int got = 0;

	if (PQstatus(l->c) != CONNECTION_OK && listen_connect(l, NULL) != 0) {
		poll(NULL, 0, timeout_ms);
		return BF_ERR_DB;
	}
	pfd.fd = PQsocket(l->c);
	pfd.events = POLLIN;
	if (poll(&pfd, 1, timeout_ms) < 0 && errno != EINTR)
		return BF_ERR_SYS;
	if (!PQconsumeInput(l->c)) {
		db_seterr(PQerrorMessage(l->c));
		return BF_ERR_DB;	/* reconnects on the next call */
	}
	while ((n = PQnotifies(l->c)) != NULL) {
		cb(n->extra, arg);
		PQfreemem(n);
		got++;
	}
	return got;
}

void
db_listen_close(struct db_listener *l)
{
	if (l == NULL)
		return;
	if (l->c != NULL)
		PQfinish(l->c);
	free(l->target);
	free(l->channel);
	free(l);
}
