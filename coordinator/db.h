/*
 * db.h: the two database engines under the store, behind one small
 * interface: SQLite (a file path, the embedded default) and PostgreSQL
 * through libpq (a postgresql:// or postgres:// URI).
 *
 * SQL is written once with SQLite's numbered parameters (?1, ?2, ...);
 * the PostgreSQL side rewrites them to $1, $2 and sends the parameter types
 * the caller bound, so "?3 IS NULL" works there too. Where the dialects
 * differ the store keeps a second text (store.c).
 *
 * Neither struct is thread-safe: the store serialises its connection with
 * its own mutex. Errors are BF_ERR_*, with the engine's text kept per
 * thread for db_last_error().
 */
#ifndef BF_DB_H
#define BF_DB_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum db_kind { DB_SQLITE, DB_PG };
enum db_type { DB_NULL, DB_INT, DB_FLOAT, DB_TEXT, DB_BLOB };

struct db;
struct db_stmt;

/* 1 if target names a PostgreSQL database rather than a SQLite file. */
int db_is_pg_target(const char *target);
/* Connect or open (SQLite: create, WAL, foreign keys). d says why not. */
int db_open(const char *target, struct db **out, struct bf_diag *d);
void db_close(struct db *db);			/* accepts NULL */
enum db_kind db_kind(const struct db *db);
/* The engine's text for the last failure of the calling thread. */
const char *db_last_error(void);
/*
 * 1 when a statement of the calling thread failed on a serialization
 * failure or a deadlock (PostgreSQL SQLSTATE 40001, 40P01) since the last
 * call, and clears it: the server ended that transaction, which may be run
 * again from its start. Always 0 on SQLite, whose writers are serial.
 */
int db_take_conflict(void);
/* The target with any password blanked, for logs. Static per thread. */
const char *db_target_safe(const char *target);

/* Run a script of several statements (migrations); no parameters. */
int db_exec_script(struct db *db, const char *sql);

int db_prepare(struct db *db, const char *sql, struct db_stmt **out);
void db_finalize(struct db_stmt *st);		/* accepts NULL */
/* Forget the result and the bindings; the statement can be bound again. */
void db_reset(struct db_stmt *st);
/* Reset every statement of db that is part way through its rows. */
void db_reset_all(struct db *db);

/* Parameters count from 1. Text and blobs are copied. text NULL binds a
 * NULL of type text. */
int db_bind_text(struct db_stmt *st, int i, const char *text);
int db_bind_int64(struct db_stmt *st, int i, int64_t v);
int db_bind_double(struct db_stmt *st, int i, double v);
int db_bind_blob(struct db_stmt *st, int i, const void *p, size_t n);

/* 1: a row is ready; 0: no more rows; BF_ERR_* on failure (the statement
 * is reset). PostgreSQL runs the statement on the first step. */
int db_step(struct db_stmt *st);
/* Rows written by the last statement that finished on db. */
int db_changes(struct db *db);
/* 1 inside an open transaction. */
int db_in_tx(struct db *db);

/* Columns of the current row, counting from 0. */
int db_col_count(struct db_stmt *st);
const char *db_col_name(struct db_stmt *st, int i);
enum db_type db_col_type(struct db_stmt *st, int i);
int64_t db_col_int64(struct db_stmt *st, int i);	/* NULL reads as 0 */
int db_col_int(struct db_stmt *st, int i);
double db_col_double(struct db_stmt *st, int i);
/* NUL-terminated; NULL for a NULL column. Valid until the next step. */
const char *db_col_text(struct db_stmt *st, int i);
size_t db_col_bytes(struct db_stmt *st, int i);
const void *db_col_blob(struct db_stmt *st, int i);

/* --- PostgreSQL notifications (LISTEN/NOTIFY) --- */
/* Send payload on channel from db's connection (outside a transaction it
 * is delivered at once). A no-op returning 0 on SQLite. */
int db_notify(struct db *db, const char *channel, const char *payload);
/*
 * The name this connection's writes are announced under: on PostgreSQL the
 * session setting benchfleet.node, which the store's notify triggers put in
 * each notification (store-schema.c, step 18), kept across reconnects. A
 * no-op returning 0 on SQLite. node is copied.
 */
int db_set_node(struct db *db, const char *node);
/*
 * A second connection that LISTENs on channel: db_listen_wait() waits up to
 * timeout_ms and calls cb for each notification received; it reconnects
 * (and LISTENs again) when the server went away. Not for SQLite.
 */
struct db_listener;
typedef void (*db_notify_cb)(const char *payload, void *arg);
int db_listen_open(const char *target, const char *channel, struct db_listener **out,
    struct bf_diag *d);
int db_listen_wait(struct db_listener *l, int timeout_ms, db_notify_cb cb, void *arg);
void db_listen_close(struct db_listener *l);	/* accepts NULL */

#endif
