/*
 * db-sqlite.c: the SQLite engine of db.h (db-int.h's db_sqlite_ops): a
 * file in WAL mode, owner-only, with foreign keys on. A statement is a
 * sqlite3_stmt prepared once and kept (SQLITE_PREPARE_PERSISTENT).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db-int.h"

#define LITE(db)	((sqlite3 *)(db)->be)
#define LST(st)		((sqlite3_stmt *)(st)->be)

static int
lite_fail(struct db *db, int rc)
{
	db_seterr(db != NULL && db->be != NULL ? sqlite3_errmsg(db->be) : sqlite3_errstr(rc));
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

	if ((rc = sqlite3_prepare_v2((sqlite3 *)db->be, sql, -1, &st, NULL)) != SQLITE_OK) {
		r = lite_fail(db, rc);
		bf_diag_set(d, NULL, "%s: %s", sql, db_last_error());
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		r = lite_fail(db, rc);
		bf_diag_set(d, NULL, "%s: %s", sql, db_last_error());
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
	/* Only a file that is not there yet is opened here: close(2) of any
	 * descriptor of the file drops every POSIX lock this process holds on
	 * it, those of its other connections (the store's readers) included,
	 * after which SQLite's WAL read locks and data_version went wrong. */
	if (stat(path, &sb) != 0) {
		if (errno != ENOENT) {
			bf_diag_set(d, NULL, "cannot open: %s", strerror(errno));
			return BF_ERR_IO;
		}
		if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) == -1 &&
		    errno != EEXIST) {
			bf_diag_set(d, NULL, "cannot open: %s", strerror(errno));
			return BF_ERR_IO;
		}
		if (fd != -1)
			close(fd);
	}
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
lite_open(struct db *db, struct bf_diag *d)
{
	const char *path = db->target;
	sqlite3 *c = NULL;
	int rc, r;

	if ((r = lite_check_mode(path, d)) != 0)
		return r;

	/* NOMUTEX: the store's mutex already serialises every use. */
	rc = sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	    SQLITE_OPEN_NOMUTEX, NULL);
	db->be = c;
	if (rc != SQLITE_OK) {
		r = lite_fail(db, rc);
		bf_diag_set(d, NULL, "cannot open: %s", db_last_error());
		return r;
	}
	sqlite3_extended_result_codes(c, 1);
	sqlite3_busy_timeout(c, 5000);
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

static void
lite_close(struct db *db)
{
	if (LITE(db) == NULL)
		return;
	sqlite3_exec(LITE(db), "PRAGMA optimize", NULL, NULL, NULL);
	sqlite3_close(LITE(db));
}

static int
lite_exec_script(struct db *db, const char *sql)
{
	char *err = NULL;
	int r = 0;

	if (sqlite3_exec(LITE(db), sql, NULL, NULL, &err) != SQLITE_OK) {
		r = lite_fail(db, sqlite3_errcode(LITE(db)));
		if (err != NULL)
			db_seterr(err);
	}
	sqlite3_free(err);
	return r;
}

static int
lite_prepare(struct db_stmt *st, const char *sql)
{
	sqlite3_stmt *s = NULL;
	int rc;

	rc = sqlite3_prepare_v3(LITE(st->db), sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
	if (rc != SQLITE_OK)
		return lite_fail(st->db, rc);
	st->be = s;
	return 0;
}

static void
lite_finalize(struct db_stmt *st)
{
	sqlite3_finalize(LST(st));
}

static void
lite_reset(struct db_stmt *st)
{
	sqlite3_reset(LST(st));
	sqlite3_clear_bindings(LST(st));
}

static int
lite_busy(struct db_stmt *st)
{
	return sqlite3_stmt_busy(LST(st));
}

static int
lite_bind_text(struct db_stmt *st, int i, const char *text)
{
	int rc;

	rc = text == NULL ? sqlite3_bind_null(LST(st), i) :
	    sqlite3_bind_text(LST(st), i, text, -1, SQLITE_TRANSIENT);
	return rc == SQLITE_OK ? 0 : lite_fail(st->db, rc);
}

static int
lite_bind_int64(struct db_stmt *st, int i, int64_t v)
{
	int rc = sqlite3_bind_int64(LST(st), i, v);

	return rc == SQLITE_OK ? 0 : lite_fail(st->db, rc);
}

static int
lite_bind_double(struct db_stmt *st, int i, double v)
{
	int rc = sqlite3_bind_double(LST(st), i, v);

	return rc == SQLITE_OK ? 0 : lite_fail(st->db, rc);
}

static int
lite_bind_blob(struct db_stmt *st, int i, const void *p, size_t n)
{
	int rc;

	if (n > 0x7fffffff)
		return BF_ERR_TOOBIG;
	rc = sqlite3_bind_blob(LST(st), i, p, (int)n, SQLITE_TRANSIENT);
	return rc == SQLITE_OK ? 0 : lite_fail(st->db, rc);
}

static int
lite_step(struct db_stmt *st)
{
	int rc;

	rc = sqlite3_step(LST(st));
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE) {
		st->db->changes = sqlite3_changes(LITE(st->db));
		return 0;
	}
	rc = lite_fail(st->db, rc);
	sqlite3_reset(LST(st));
	return rc;
}

static int
lite_in_tx(struct db *db)
{
	return sqlite3_get_autocommit(LITE(db)) == 0;
}

static int
lite_col_count(struct db_stmt *st)
{
	return sqlite3_column_count(LST(st));
}

static const char *
lite_col_name(struct db_stmt *st, int i)
{
	return sqlite3_column_name(LST(st), i);
}

static enum db_type
lite_col_type(struct db_stmt *st, int i)
{
	switch (sqlite3_column_type(LST(st), i)) {
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

static int64_t
lite_col_int64(struct db_stmt *st, int i)
{
	return sqlite3_column_int64(LST(st), i);
}

static double
lite_col_double(struct db_stmt *st, int i)
{
	return sqlite3_column_double(LST(st), i);
}

static const char *
lite_col_text(struct db_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(LST(st), i);
}

static size_t
lite_col_bytes(struct db_stmt *st, int i)
{
	return (size_t)sqlite3_column_bytes(LST(st), i);
}

static const void *
lite_col_blob(struct db_stmt *st, int i)
{
	return sqlite3_column_blob(LST(st), i);
}

/* One coordinator per file: there is nobody to notify. */
static int
lite_notify(struct db *db, const char *channel, const char *payload)
{
	(void)db;
	(void)channel;
	(void)payload;
	return 0;
}

const struct db_ops db_sqlite_ops = {
	.name = "sqlite",
	.kind = DB_SQLITE,
	.open = lite_open,
	.close = lite_close,
	.exec_script = lite_exec_script,
	.prepare = lite_prepare,
	.finalize = lite_finalize,
	.reset = lite_reset,
	.busy = lite_busy,
	.bind_text = lite_bind_text,
	.bind_int64 = lite_bind_int64,
	.bind_double = lite_bind_double,
	.bind_blob = lite_bind_blob,
	.step = lite_step,
	.in_tx = lite_in_tx,
	.col_count = lite_col_count,
	.col_name = lite_col_name,
	.col_type = lite_col_type,
	.col_int64 = lite_col_int64,
	.col_double = lite_col_double,
	.col_text = lite_col_text,
	.col_bytes = lite_col_bytes,
	.col_blob = lite_col_blob,
	.notify = lite_notify,
};
