/*
 * db-pg.c: the PostgreSQL engine of db.h (db-int.h's db_pg_ops) through
 * libpq. A statement is kept as its rewritten text ($N for ?N) and its
 * bound parameters, and runs with PQexecParams on the first step, so
 * nothing server-side outlives a reconnect. Also LISTEN/NOTIFY.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "db-int.h"
#include "parse.h"

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

#define PG(db)		((PGconn *)(db)->be)

struct pg_param {
	unsigned int oid;
	char *val;			/* NULL: SQL NULL */
	int len;
	int binary;
};

/* st->be of a PostgreSQL statement. */
struct pg_stmt {
	struct db *db;
	char *sql;
	int nparams;
	struct pg_param p[DB_MAX_PARAMS];
	PGresult *res;
	int row;			/* current row, -1 before the first */
	unsigned char **blobs;		/* decoded bytea per column of the row */
	size_t *bloblen;
};

static int
pg_fail_res(PGresult *res, PGconn *conn)
{
	const char *state;

	db_seterr(res != NULL ? PQresultErrorMessage(res) : PQerrorMessage(conn));
	state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (state == NULL)
		return BF_ERR_DB;
	if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0) {
		db_set_conflict();	/* serialization_failure, deadlock_detected */
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
		bf_diag_set(d, NULL, "cannot connect: %s", db_last_error());
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
		bf_diag_set(d, NULL, "setting up the session: %s", db_last_error());
	}
	PQclear(res);
	return r;
}

/* db->node as the session's benchfleet.node (a placeholder setting: any
 * name with a dot is one), read by the notify triggers. */
static int
pg_node_apply(struct db *db)
{
	const char *vals[1] = { db->node };
	PGresult *res;
	int r = 0;

	if (db->node == NULL)
		return 0;
	res = PQexecParams(PG(db), "SELECT set_config('benchfleet.node', $1, false)", 1, NULL,
	    vals, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		r = pg_fail_res(res, PG(db));
	PQclear(res);
	return r;
}

/* The server went away (restart, idle kill): reconnect outside a
 * transaction. A transaction that was open is lost, as it would be. */
static int
pg_alive(struct db *db)
{
	int r;

	if (PQstatus(PG(db)) == CONNECTION_OK)
		return 0;
	PQreset(PG(db));
	if (PQstatus(PG(db)) != CONNECTION_OK) {
		db_seterr(PQerrorMessage(PG(db)));
		return BF_ERR_DB;
	}
	if ((r = pg_setup(PG(db), NULL)) != 0)
		return r;
	return pg_node_apply(db);
}

/* A reconnect (pg_alive) applies the node itself. */
static int
pg_set_node(struct db *db)
{
	if (PQstatus(PG(db)) != CONNECTION_OK)
		return pg_alive(db);
	return pg_node_apply(db);
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
pg_clear_row(struct pg_stmt *st)
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
pg_clear(struct pg_stmt *st)
{
	pg_clear_row(st);
	PQclear(st->res);
	st->res = NULL;
	st->row = -1;
}

static int
pg_param_set(struct pg_stmt *st, int i, unsigned int oid, const void *val, size_t len, int binary)
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
pg_run(struct pg_stmt *st)
{
	const char *vals[DB_MAX_PARAMS];
	unsigned int oids[DB_MAX_PARAMS];
	int lens[DB_MAX_PARAMS], fmts[DB_MAX_PARAMS], i, r;
	ExecStatusType es;
	const char *ct;
	int64_t changes;

	if (st->res == NULL) {
		if ((r = pg_alive(st->db)) != 0)
			return r;
		for (i = 0; i < st->nparams; i++) {
			vals[i] = st->p[i].val;
			oids[i] = st->p[i].oid;
			lens[i] = st->p[i].len;
			fmts[i] = st->p[i].binary;
		}
		st->res = PQexecParams(PG(st->db), st->sql, st->nparams, oids, vals, lens, fmts, 0);
		es = PQresultStatus(st->res);
		if (es != PGRES_TUPLES_OK && es != PGRES_COMMAND_OK) {
			r = pg_fail_res(st->res, PG(st->db));
			pg_clear(st);
			return r;
		}
		ct = PQcmdTuples(st->res);
		if (ct == NULL || *ct == '\0' || parse_i64(ct, 0, INT_MAX, &changes) != 0)
			changes = 0;
		st->db->changes = (int)changes;
		st->row = -1;
	}
	pg_clear_row(st);
	if (PQresultStatus(st->res) != PGRES_TUPLES_OK || st->row + 1 >= PQntuples(st->res))
		return 0;
	st->row++;
	return 1;
}

static int
pg_isnull(struct pg_stmt *st, int i)
{
	return st->res == NULL || st->row < 0 || st->row >= PQntuples(st->res) ||
	    i < 0 || i >= PQnfields(st->res) || PQgetisnull(st->res, st->row, i);
}

/* bytea arrives in text form as \x<hex>; decoded once per row and column. */
static const unsigned char *
pg_blob(struct pg_stmt *st, int i, size_t *lenp)
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

/* --- the table's entries --- */

static int
pg_open(struct db *db, struct bf_diag *d)
{
	if ((db->be = pg_connect(db->target, d)) == NULL)
		return BF_ERR_DB;
	return pg_setup(PG(db), d);
}

static void
pg_close(struct db *db)
{
	if (PG(db) != NULL)
		PQfinish(PG(db));
}

static int
pg_exec_script(struct db *db, const char *sql)
{
	PGresult *res;
	int r;

	if ((r = pg_alive(db)) != 0)
		return r;
	res = PQexec(PG(db), sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		r = pg_fail_res(res, PG(db));
	PQclear(res);
	return r;
}

static int
pg_prepare(struct db_stmt *s, const char *sql)
{
	struct pg_stmt *st;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return BF_ERR_ALLOC;
	st->db = s->db;
	st->row = -1;
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
	s->be = st;
	return 0;
}

static void
pg_reset(struct db_stmt *s)
{
	struct pg_stmt *st = s->be;
	int i;

	pg_clear(st);
	for (i = 0; i < DB_MAX_PARAMS; i++) {
		free(st->p[i].val);
		memset(&st->p[i], 0, sizeof(st->p[i]));
	}
}

static void
pg_finalize(struct db_stmt *s)
{
	struct pg_stmt *st = s->be;

	if (st == NULL)
		return;
	pg_reset(s);
	free(st->sql);
	free(st);
}

static int
pg_busy(struct db_stmt *s)
{
	return ((struct pg_stmt *)s->be)->res != NULL;
}

static int
pg_bind_text(struct db_stmt *s, int i, const char *text)
{
	return pg_param_set(s->be, i, OID_TEXT, text, text != NULL ? strlen(text) : 0, 0);
}

static int
pg_bind_int64(struct db_stmt *s, int i, int64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%lld", (long long)v);
	return pg_param_set(s->be, i, OID_INT8, b, strlen(b), 0);
}

static int
pg_bind_double(struct db_stmt *s, int i, double v)
{
	char b[40];

	snprintf(b, sizeof(b), "%.17g", v);
	return pg_param_set(s->be, i, OID_FLOAT8, b, strlen(b), 0);
}

static int
pg_bind_blob(struct db_stmt *s, int i, const void *p, size_t n)
{
	return pg_param_set(s->be, i, OID_BYTEA, p, n, 1);
}

static int
pg_step(struct db_stmt *s)
{
	return pg_run(s->be);
}

static int
pg_in_tx(struct db *db)
{
	return PQtransactionStatus(PG(db)) != PQTRANS_IDLE;
}

static int
pg_col_count(struct db_stmt *s)
{
	struct pg_stmt *st = s->be;

	return st->res != NULL ? PQnfields(st->res) : 0;
}

static const char *
pg_col_name(struct db_stmt *s, int i)
{
	struct pg_stmt *st = s->be;

	return st->res != NULL ? PQfname(st->res, i) : NULL;
}

static enum db_type
pg_col_type(struct db_stmt *s, int i)
{
	struct pg_stmt *st = s->be;
	const char *v;

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

static int64_t
pg_col_int64(struct db_stmt *s, int i)
{
	struct pg_stmt *st = s->be;
	const char *v;

	if (pg_isnull(st, i))
		return 0;
	v = PQgetvalue(st->res, st->row, i);
	if (PQftype(st->res, i) == OID_BOOL)
		return v[0] == 't';
	return strtoll(v, NULL, 10);
}

static double
pg_col_double(struct db_stmt *s, int i)
{
	struct pg_stmt *st = s->be;

	if (pg_isnull(st, i))
		return 0.0;
	return strtod(PQgetvalue(st->res, st->row, i), NULL);
}

static const char *
pg_col_text(struct db_stmt *s, int i)
{
	struct pg_stmt *st = s->be;

	if (pg_isnull(st, i))
		return NULL;
	return PQgetvalue(st->res, st->row, i);
}

static size_t
pg_col_bytes(struct db_stmt *s, int i)
{
	struct pg_stmt *st = s->be;
	size_t n;

	if (pg_isnull(st, i))
		return 0;
	if (PQftype(st->res, i) == OID_BYTEA) {
		pg_blob(st, i, &n);
		return n;
	}
	return (size_t)PQgetlength(st->res, st->row, i);
}

static const void *
pg_col_blob(struct db_stmt *s, int i)
{
	struct pg_stmt *st = s->be;
	size_t n;

	if (pg_isnull(st, i))
		return NULL;
	if (PQftype(st->res, i) == OID_BYTEA)
		return pg_blob(st, i, &n);
	return PQgetvalue(st->res, st->row, i);
}

static int
pg_notify(struct db *db, const char *channel, const char *payload)
{
	const char *vals[2] = { channel, payload };
	PGresult *res;
	int r;

	if ((r = pg_alive(db)) != 0)
		return r;
	res = PQexecParams(PG(db), "SELECT pg_notify($1, $2)", 2, NULL, vals, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		r = pg_fail_res(res, PG(db));
	PQclear(res);
	return r;
}

const struct db_ops db_pg_ops = {
	.name = "postgresql",
	.kind = DB_PG,
	.open = pg_open,
	.close = pg_close,
	.exec_script = pg_exec_script,
	.prepare = pg_prepare,
	.finalize = pg_finalize,
	.reset = pg_reset,
	.busy = pg_busy,
	.bind_text = pg_bind_text,
	.bind_int64 = pg_bind_int64,
	.bind_double = pg_bind_double,
	.bind_blob = pg_bind_blob,
	.step = pg_step,
	.in_tx = pg_in_tx,
	.col_count = pg_col_count,
	.col_name = pg_col_name,
	.col_type = pg_col_type,
	.col_int64 = pg_col_int64,
	.col_double = pg_col_double,
	.col_text = pg_col_text,
	.col_bytes = pg_col_bytes,
	.col_blob = pg_col_blob,
	.notify = pg_notify,
	.set_node = pg_set_node,
};

/* --- notifications: a connection of its own that LISTENs --- */

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
		bf_diag_set(d, NULL, "LISTEN: %s", db_last_error());
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
