/*
 * db.c: db.h's calls, dispatched through db->ops to the engine that
 * opened the target (db-sqlite.c, db-pg.c; the table is in db-int.h), and
 * what both share: the list of live statements, and the per-thread error
 * text and conflict flag.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-int.h"

static __thread char db_errbuf[256];
static __thread int db_conflict;	/* see db_take_conflict */

const char *
db_last_error(void)
{
	return db_errbuf;
}

void
db_seterr(const char *msg)
{
	size_t n;

	snprintf(db_errbuf, sizeof(db_errbuf), "%s", msg != NULL ? msg : "unknown error");
	/* libpq's messages end in a newline and may run over several lines */
	n = strcspn(db_errbuf, "\n");
	db_errbuf[n] = '\0';
}

void
db_set_conflict(void)
{
	db_conflict = 1;
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
	db->ops = db_is_pg_target(target) ? &db_pg_ops : &db_sqlite_ops;
	if ((r = db->ops->open(db, d)) != 0) {
		db_close(db);
		return r;
	}
	*out = db;
	return 0;
}

void
db_close(struct db *db)
{
	if (db == NULL)
		return;
	while (db->stmts != NULL)
		db_finalize(db->stmts);
	db->ops->close(db);
	free(db->node);
	free(db->target);
	free(db);
}

enum db_kind
db_kind(const struct db *db)
{
	return db->ops->kind;
}

int
db_exec_script(struct db *db, const char *sql)
{
	return db->ops->exec_script(db, sql);
}

int
db_prepare(struct db *db, const char *sql, struct db_stmt **out)
{
	struct db_stmt *st;
	int r;

	*out = NULL;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return BF_ERR_ALLOC;
	st->db = db;
	if ((r = db->ops->prepare(st, sql)) != 0) {
		free(st);
		return r;
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
	if (st == NULL)
		return;
	*st->prevp = st->next;
	if (st->next != NULL)
		st->next->prevp = st->prevp;
	st->db->ops->finalize(st);
	free(st);
}

void
db_reset(struct db_stmt *st)
{
	if (st != NULL)
		st->db->ops->reset(st);
}

void
db_reset_all(struct db *db)
{
	struct db_stmt *st;

	for (st = db->stmts; st != NULL; st = st->next)
		if (db->ops->busy(st))
			db_reset(st);
}

int
db_bind_text(struct db_stmt *st, int i, const char *text)
{
	return st->db->ops->bind_text(st, i, text);
}

int
db_bind_int64(struct db_stmt *st, int i, int64_t v)
{
	return st->db->ops->bind_int64(st, i, v);
}

int
db_bind_double(struct db_stmt *st, int i, double v)
{
	return st->db->ops->bind_double(st, i, v);
}

int
db_bind_blob(struct db_stmt *st, int i, const void *p, size_t n)
{
	return st->db->ops->bind_blob(st, i, p, n);
}

int
db_step(struct db_stmt *st)
{
	return st->db->ops->step(st);
}

int
db_changes(struct db *db)
{
	return db->changes;
}

int
db_in_tx(struct db *db)
{
	return db->ops->in_tx(db);
}

int
db_col_count(struct db_stmt *st)
{
	return st->db->ops->col_count(st);
}

const char *
db_col_name(struct db_stmt *st, int i)
{
	return st->db->ops->col_name(st, i);
}

enum db_type
db_col_type(struct db_stmt *st, int i)
{
	return st->db->ops->col_type(st, i);
}

int64_t
db_col_int64(struct db_stmt *st, int i)
{
	return st->db->ops->col_int64(st, i);
}

int
db_col_int(struct db_stmt *st, int i)
{
	return (int)db_col_int64(st, i);
}

double
db_col_double(struct db_stmt *st, int i)
{
	return st->db->ops->col_double(st, i);
}

const char *
db_col_text(struct db_stmt *st, int i)
{
	return st->db->ops->col_text(st, i);
}

size_t
db_col_bytes(struct db_stmt *st, int i)
{
	return st->db->ops->col_bytes(st, i);
}

const void *
db_col_blob(struct db_stmt *st, int i)
{
	return st->db->ops->col_blob(st, i);
}

int
db_notify(struct db *db, const char *channel, const char *payload)
{
	return db->ops->notify(db, channel, payload);
}

int
db_set_node(struct db *db, const char *node)
{
	char *n;

	if (db == NULL || node == NULL)
		return BF_ERR_INVALID;
	if ((n = strdup(node)) == NULL)
		return BF_ERR_ALLOC;
	free(db->node);
	db->node = n;
	return db->ops->set_node != NULL ? db->ops->set_node(db) : 0;
}
