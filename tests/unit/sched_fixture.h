/*
 * sched_fixture.h: a scheduler over a real store (SQLite, or with
 * BF_TEST_PG_URL a PostgreSQL database per case) whose workers reach their
 * machines through the scripted fake transport (transport-fake.h), for
 * coord_test_sched*.c. Call sched_fixture_setup() first (0 or 1: the
 * test's exit status) and sched_fixture_done() last.
 */
#ifndef BF_SCHED_FIXTURE_H
#define BF_SCHED_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "api-view.h"
#include "coord_fixture.h"
#include "db.h"
#include "sched.h"
#include "sha256.h"
#include "transport-fake.h"
#include "t.h"

static char tmpdir[256], dbpath[700], agentpath[300], shaline[128];
static struct recipes *rs;
static const char *pg_url;	/* BF_TEST_PG_URL: the @pg variant */
static int ndb;

#define HELLO "{\"type\":\"hello\",\"hostname\":\"fake1\",\"kernel\":\"6.1\"," \
	"\"arch\":\"x86_64\",\"boot_id\":\"b-1\"}\n"
#define ITER(i, w) "{\"type\":\"iteration\",\"iteration\":" #i ",\"wall_s\":" #w "}\n"
#define SHA64 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define DONE_OK "{\"type\":\"done\",\"ok\":true}\n"
#define PROBE "{\"type\":\"fingerprint\",\"sha256\":\"" \
	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"}\n"
#define BOOTCFG "{\"method\":\"kexec\",\"kernels\":{\"6.1\":{\"image\":\"/boot/vmlinuz-6.1\"}}," \
	"\"timeout_s\":60}"

static inline struct store *
open_store(const char *node)
{
	struct store *st = NULL;
	struct bf_diag d;

	bf_diag_clear(&d);
	if (store_open(dbpath, &st, &d) != 0) {
		fprintf(stderr, "store_open: %s\n", d.msg);
		return NULL;
	}
	if (node != NULL && store_set_node(st, node) != 0) {
		store_close(st);
		return NULL;
	}
	return st;
}

/* The statement sql on pg_url's own database (CREATE DATABASE). */
static inline int
pg_admin(const char *sql)
{
	struct db *db = NULL;
	int r;

	if ((r = db_open(pg_url, &db, NULL)) == 0)
		r = db_exec_script(db, sql);
	if (r != 0)
		fprintf(stderr, "%s: %s\n", sql, db_last_error());
	db_close(db);
	return r;
}

/* A fresh store (a new file, or a new database) with one machine. */
static inline struct store *
fresh_store(const char *boot)
{
	struct store *st;
	char sql[128];

	if (pg_url != NULL) {
		const char *slash = strrchr(pg_url, '/');

		snprintf(sql, sizeof(sql), "CREATE DATABASE bft_sched_%d_%d", (int)getpid(),
		    ++ndb);
		if (pg_admin(sql) != 0)
			return NULL;
		snprintf(dbpath, sizeof(dbpath), "%.*sbft_sched_%d_%d", (int)(slash - pg_url) + 1,
		    pg_url, (int)getpid(), ndb);
	} else
		unlink(dbpath);
	if ((st = open_store(NULL)) == NULL)
		return NULL;
	T_EQ_INT(fix_machine(st, "fake1", boot), 0);
	return st;
}

/* The dormant machines' prober asks this (cfg.reach) instead of TCP. */
static atomic_int reach_up, reach_calls, reach_hold;
static int (*start_reach)(void *arg, const char *host, int port);

static inline int
fake_reach(void *arg, const char *host, int port)
{
	(void)arg;
	(void)host;
	(void)port;
	atomic_fetch_add(&reach_calls, 1);
	while (atomic_load(&reach_hold))	/* a try in flight, held */
		nanosleep(&(struct timespec){ 0, 10000000L }, NULL);
	return atomic_load(&reach_up) ? 0 : BF_ERR_LOST;
}

static inline struct sched *
start(struct store *st, struct fake_script *fs, int lease_s)
{
	struct sched_config cfg;
	struct sched *s = NULL;
	struct bf_diag d;

	memset(&cfg, 0, sizeof(cfg));
	cfg.known_hosts = "/nonexistent/known_hosts";
	cfg.agent_local = agentpath;
	cfg.agent_remote = ".benchfleet/agent";
	cfg.lease_s = lease_s;
	cfg.connect_timeout_ms = 1000;
	cfg.probe_interval_s = 60;
	cfg.probe_failures = 3;
	cfg.max_attempts = 3;
	cfg.link_timeout_ms = 5000;
	cfg.boot_failures = 2;
	cfg.recipes = rs;
	cfg.connect = fake_connect;
	cfg.connect_arg = fs;
	cfg.reach = start_reach;
	bf_diag_clear(&d);
	T_EQ_INT(sched_start(&cfg, st, &s, &d), 0);
	return s;
}

static inline const char *
job_state(struct store *st, int64_t id, char *buf, size_t n)
{
	json_t *j = NULL;

	buf[0] = '\0';
	if (api_view_job_get(st, id, &j) == 0)
		snprintf(buf, n, "%s", json_string_value(json_object_get(j, "state")));
	json_decref(j);
	return buf;
}

/* Wait up to secs for the job to end; its state. */
static inline const char *
wait_job(struct store *st, int64_t id, int secs, char *buf, size_t n)
{
	int i;

	for (i = 0; i < secs * 10; i++) {
		job_state(st, id, buf, n);
		if (strcmp(buf, "done") == 0 || strcmp(buf, "failed") == 0)
			break;
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
	}
	return buf;
}

static inline int
sched_fixture_setup(void)
{
	char path[600], sha[65];
	const char *src = getenv("BF_SRC");
	struct bf_diag d;
	FILE *f;

	pg_url = getenv("BF_TEST_PG_URL");
	if (pg_url != NULL && strrchr(pg_url, '/') == NULL)
		return 1;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bf-sched-XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	snprintf(dbpath, sizeof(dbpath), "%s/store.db", tmpdir);
	/* the "agent" the scheduler hashes; the fake machine reports its hash */
	snprintf(agentpath, sizeof(agentpath), "%s/agent", tmpdir);
	if ((f = fopen(agentpath, "w")) == NULL || fputs("not an agent\n", f) < 0 ||
	    fclose(f) != 0 || sha256_file(agentpath, sha) != 0)
		return 1;
	snprintf(shaline, sizeof(shaline), "%s  agent\n", sha);
	snprintf(path, sizeof(path), "%s/recipes", src != NULL ? src : ".");
	bf_diag_clear(&d);
	if (recipes_load_dir(path, &rs, &d) != 0) {
		fprintf(stderr, "recipes: %s\n", d.msg);
		return 1;
	}
	return 0;
}

static inline void
sched_fixture_done(void)
{
	char path[600];

	recipes_free(rs);
	snprintf(path, sizeof(path), "rm -rf -- '%s'", tmpdir);
	if (strncmp(tmpdir, "/tmp/bf-sched-", 14) == 0 && system(path) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

#endif
