/*
 * db-int.h: one interface, two engines (curl's lib/vtls/vtls_int.h shape).
 * db.c keeps what every engine shares (the struct db and db_stmt shells,
 * the list of live statements, the per-thread error text) and dispatches
 * each call through db->ops; db-sqlite.c and db-pg.c each fill one const
 * table. Not for other modules: they go through db.h.
 */
#ifndef BF_DB_INT_H
#define BF_DB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

struct db_ops {
	const char *name;
	enum db_kind kind;
	/* Connect db (db->target set) into db->be; d says why not. */
	int (*open)(struct db *db, struct bf_diag *d);
	void (*close)(struct db *db);		/* db->be may be NULL */
	int (*exec_script)(struct db *db, const char *sql);
	/* Fill st->be for sql; the shell is linked by db.c. */
	int (*prepare)(struct db_stmt *st, const char *sql);
	void (*finalize)(struct db_stmt *st);	/* st->be may be NULL */
	void (*reset)(struct db_stmt *st);	/* results and bindings */
	int (*busy)(struct db_stmt *st);	/* part way through its rows */
	int (*bind_text)(struct db_stmt *st, int i, const char *text);
	int (*bind_int64)(struct db_stmt *st, int i, int64_t v);
	int (*bind_double)(struct db_stmt *st, int i, double v);
	int (*bind_blob)(struct db_stmt *st, int i, const void *p, size_t n);
	/* As db_step; sets st->db->changes when the statement finished. */
	int (*step)(struct db_stmt *st);
	int (*in_tx)(struct db *db);
	int (*col_count)(struct db_stmt *st);
	const char *(*col_name)(struct db_stmt *st, int i);
	enum db_type (*col_type)(struct db_stmt *st, int i);
	int64_t (*col_int64)(struct db_stmt *st, int i);
	double (*col_double)(struct db_stmt *st, int i);
	const char *(*col_text)(struct db_stmt *st, int i);
	size_t (*col_bytes)(struct db_stmt *st, int i);
	const void *(*col_blob)(struct db_stmt *st, int i);
	int (*notify)(struct db *db, const char *channel, const char *payload);
	/* Apply db->node to the session (NULL: the engine has no use for it). */
	int (*set_node)(struct db *db);
};

struct db {
	const struct db_ops *ops;
	void *be;			/* sqlite3 *, PGconn * */
	char *target;
	char *node;			/* db_set_node's, owned; NULL until set */
	int changes;
	struct db_stmt *stmts;		/* every live statement */
};

struct db_stmt {
	struct db *db;
	void *be;			/* the engine's statement */
	struct db_stmt *next, **prevp;
};

extern const struct db_ops db_sqlite_ops;
extern const struct db_ops db_pg_ops;

/* The calling thread's text for db_last_error(); libpq's trailing newline
 * and continuation lines are cut. */
void db_seterr(const char *msg);
/* Mark the calling thread's last failure a conflict (db_take_conflict). */
void db_set_conflict(void);

#endif
