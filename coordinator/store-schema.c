/*
 * store-schema.c: the store's schema on both engines, as numbered steps,
 * and the migration that brings a store of any older version up to date
 * when it is opened.
 */
#include <stdio.h>

#include "db.h"

#include "err.h"
#include "store.h"
#include "store-int.h"

/*
 * Step 13's counters, one column per run state (store.h's enum
 * store_run_state, in its order). The same text on both engines but for
 * the column type and the trigger's wording: STEP13_SET(F) writes
 * "n_x = n_x F('x')" for each state x. Steps are append only, so these
 * macros must never change once shipped, like the steps' literal text.
 */
#define STEP13_COLS(type) \
	"ALTER TABLE jobs ADD COLUMN n_queued " type " NOT NULL DEFAULT 0;" \
	"ALTER TABLE jobs ADD COLUMN n_running " type " NOT NULL DEFAULT 0;" \
	"ALTER TABLE jobs ADD COLUMN n_done " type " NOT NULL DEFAULT 0;" \
	"ALTER TABLE jobs ADD COLUMN n_failed " type " NOT NULL DEFAULT 0;" \
	"ALTER TABLE jobs ADD COLUMN n_lost " type " NOT NULL DEFAULT 0;" \
	"ALTER TABLE jobs ADD COLUMN n_boot_failed " type " NOT NULL DEFAULT 0;" \
	"ALTER TABLE jobs ADD COLUMN n_cancelled " type " NOT NULL DEFAULT 0;"
#define STEP13_ONE(col, st) \
	" " col " = (SELECT COUNT(*) FROM runs r WHERE r.job_id = jobs.id AND r.state = '" st "')"
#define STEP13_BACKFILL \
	STEP13_ONE("n_queued", "queued") "," STEP13_ONE("n_running", "running") "," \
	STEP13_ONE("n_done", "done") "," STEP13_ONE("n_failed", "failed") "," \
	STEP13_ONE("n_lost", "lost") "," STEP13_ONE("n_boot_failed", "boot-failed") "," \
	STEP13_ONE("n_cancelled", "cancelled")
#define STEP13_SET(F) \
	" n_queued = n_queued " F("'queued'") "," \
	" n_running = n_running " F("'running'") "," \
	" n_done = n_done " F("'done'") "," \
	" n_failed = n_failed " F("'failed'") "," \
	" n_lost = n_lost " F("'lost'") "," \
	" n_boot_failed = n_boot_failed " F("'boot-failed'") "," \
	" n_cancelled = n_cancelled " F("'cancelled'")
#define STEP13_INS(x) "+ (NEW.state = " x ")"
#define STEP13_DEL(x) "- (OLD.state = " x ")"
#define STEP13_UPD(x) "+ (NEW.state = " x ") - (OLD.state = " x ")"
#define STEP13_PG(x) "+ (n IS NOT DISTINCT FROM " x ")::int - (o IS NOT DISTINCT FROM " x ")::int"

/*
 * Schema steps. Step i takes the file from user_version i to i + 1 and ends
 * with its own version bump, so the bump is a literal and commits in the
 * same transaction as the step. Append only: never edit a shipped step.
 */
static const char *const store_migrations[] = {
	/* 1: the first schema */
	"CREATE TABLE machines ("
	" name TEXT PRIMARY KEY NOT NULL,"
	" host TEXT NOT NULL,"
	" port INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),"
	" user TEXT,"
	" key_path TEXT,"
	" class TEXT NOT NULL,"
	" state TEXT NOT NULL DEFAULT 'idle'"
	"  CHECK (state IN ('idle','running','offline','booting','quarantined')),"
	" hostname TEXT, kernel TEXT, arch TEXT, last_error TEXT,"
	" created_at INTEGER NOT NULL,"
	" last_seen INTEGER);"
	/* AUTOINCREMENT: ids are in URLs and bundles, so never reuse one. */
	"CREATE TABLE jobs ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" recipe TEXT NOT NULL,"
	" name TEXT,"
	" spec TEXT NOT NULL,"
	" machine_class TEXT,"
	" machine_names TEXT,"
	" state TEXT NOT NULL DEFAULT 'queued'"
	"  CHECK (state IN ('queued','running','done','failed','cancelled')),"
	" created_at INTEGER NOT NULL,"
	" finished_at REAL);"
	"CREATE INDEX jobs_active ON jobs(id) WHERE state IN ('queued','running');"
	/* runs.machine is no foreign key: a deleted machine keeps its history. */
	"CREATE TABLE runs ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" cell_index INTEGER NOT NULL,"
	" label TEXT NOT NULL,"
	" axes TEXT NOT NULL,"
	" \"values\" TEXT NOT NULL,"
	" boot INTEGER NOT NULL,"
	" attempt INTEGER NOT NULL DEFAULT 1,"
	" state TEXT NOT NULL DEFAULT 'queued'"
	"  CHECK (state IN ('queued','running','done','failed','lost','boot-failed','cancelled')),"
	" machine TEXT, hostname TEXT, kernel TEXT, boot_id TEXT,"
	" started_at REAL, finished_at REAL, lease_until INTEGER,"
	" exit_status INTEGER, error TEXT);"
	/* The claim walks jobs_active by id and, per job, this partial index in
	 * claim order, so it never sorts and never visits finished runs. */
	"CREATE INDEX runs_claim ON runs(job_id, boot, cell_index, id) WHERE state = 'queued';"
	"CREATE INDEX runs_running ON runs(machine) WHERE state = 'running';"
	"CREATE INDEX runs_by_job ON runs(job_id, cell_index, boot);"
	"CREATE INDEX runs_job_state ON runs(job_id, state);"
	/* The UNIQUE constraint's index also serves every samples-by-run lookup. */
	"CREATE TABLE samples ("
	" run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" boot INTEGER NOT NULL,"
	" iteration INTEGER NOT NULL,"
	" metric TEXT NOT NULL,"
	" value REAL NOT NULL,"
	" unit TEXT,"
	" UNIQUE (run_id, boot, iteration, metric));"
	"CREATE TABLE run_logs ("
	" run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" seq INTEGER NOT NULL,"
	" stream TEXT NOT NULL CHECK (stream IN ('stdout','stderr','agent','coord')),"
	" line TEXT NOT NULL,"
	" at REAL NOT NULL,"
	" PRIMARY KEY (run_id, seq)) WITHOUT ROWID;"
	"PRAGMA user_version = 1;",
	/* 2: API tokens (auth.h; read and written by store-auth.c) and job
	 * owners. Only salt and SHA-256(salt || secret) are kept; rows are
	 * revoked, never deleted, so a job's owner_token always resolves. */
	"CREATE TABLE tokens ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" name TEXT,"
	" role TEXT NOT NULL CHECK (role IN ('viewer','submitter','admin')),"
	" salt BLOB NOT NULL CHECK (length(salt) = 16),"
	" hash BLOB NOT NULL CHECK (length(hash) = 32),"
	" created_at INTEGER NOT NULL,"
	" last_used INTEGER,"
	" revoked_at INTEGER);"
	"ALTER TABLE jobs ADD COLUMN owner_token INTEGER REFERENCES tokens(id);"
	"PRAGMA user_version = 2;",
	/* 3: what a run asked of the machine and what was in force. knobs: the
	 * requested knob values; knob_state: the agent's read-back (before,
	 * requested, after); req_kernel/req_cmdline: the boot it needs. A
	 * machine's fingerprint (from `benchfleet-agent probe`) and its hash;
	 * boot: its boot configuration (boot.h); boot_key: the boot it is in. */
	"ALTER TABLE runs ADD COLUMN knobs TEXT;"
	"ALTER TABLE runs ADD COLUMN knob_state TEXT;"
	"ALTER TABLE runs ADD COLUMN req_kernel TEXT;"
	"ALTER TABLE runs ADD COLUMN req_cmdline TEXT;"
	"ALTER TABLE machines ADD COLUMN fingerprint TEXT;"
	"ALTER TABLE machines ADD COLUMN fingerprint_sha256 TEXT;"
	"ALTER TABLE machines ADD COLUMN boot TEXT;"
	"ALTER TABLE machines ADD COLUMN boot_key TEXT;"
	"PRAGMA user_version = 3;",
	/* 4: federation and reproduction (bundle.h, repro.h). published: an
	 * admin let other labs fetch the job's bundle. A reproduction keeps
	 * the verified bundle it reruns, its hash and where it came from;
	 * info is JSON (matched machines, notes, overrides). */
	"ALTER TABLE jobs ADD COLUMN published INTEGER NOT NULL DEFAULT 0;"
	"CREATE TABLE reproductions ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" job_id INTEGER NOT NULL REFERENCES jobs(id),"
	" bundle TEXT NOT NULL,"
	" bundle_sha256 TEXT NOT NULL,"
	" source TEXT,"
	" delta_pct REAL NOT NULL,"
	" info TEXT NOT NULL,"
	" created_at INTEGER NOT NULL);"
	"PRAGMA user_version = 4;",
	/* 5: the /proc/cmdline a run was measured under, as the agent read it. */
	"ALTER TABLE runs ADD COLUMN cmdline TEXT;"
	"PRAGMA user_version = 5;",
	/* 6: several coordinators on one store. runs.owner: the coordinator
	 * (--node) holding the run's lease; machines.owner/owner_until: the
	 * one driving the machine and until when. Either lease lapses unless
	 * renewed, and another coordinator then takes over. */
	"ALTER TABLE runs ADD COLUMN owner TEXT;"
	"ALTER TABLE machines ADD COLUMN owner TEXT;"
	"ALTER TABLE machines ADD COLUMN owner_until INTEGER;"
	"CREATE INDEX runs_lease ON runs(lease_until) WHERE state = 'running';"
	"PRAGMA user_version = 6;",
	/* 7: trust (docs/bundle.md). recipes_imported: recipes an admin
	 * installed from elsewhere (benchfleet recipes import), by canonical
	 * sha256; with the recipe directory they are what may run. labs: the
	 * keyring of trusted labs' ed25519 public keys (base64). audit: who
	 * did what to trust (imports, trust/untrust, publish, overrides). */
	"CREATE TABLE recipes_imported ("
	" sha256 TEXT PRIMARY KEY NOT NULL,"
	" name TEXT NOT NULL,"
	" json TEXT NOT NULL,"
	" actor TEXT NOT NULL,"
	" created_at INTEGER NOT NULL);"
	"CREATE INDEX recipes_imported_name ON recipes_imported(name, created_at);"
	"CREATE TABLE labs ("
	" name TEXT PRIMARY KEY NOT NULL,"
	" public_key TEXT NOT NULL UNIQUE,"
	" fingerprint TEXT NOT NULL,"
	" source TEXT,"
	" actor TEXT NOT NULL,"
	" created_at INTEGER NOT NULL);"
	"CREATE TABLE audit ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" at REAL NOT NULL,"
	" actor TEXT NOT NULL,"
	" action TEXT NOT NULL,"
	" subject TEXT,"
	" detail TEXT);"
	"PRAGMA user_version = 7;",
	/* 8: each run's plan (common/plan.h) in columns, so a claim needs no
	 * JSON of its job to order or size it: run_order is its claim rank
	 * within the job, iterations, warmup and timeout_s what its step does.
	 * Rows from before are filled from their job's spec as the runner read
	 * it (defaults 5, 0, 600; "order" absent or "interleaved": boot-major
	 * boot * 4096 + cell, "sequential": cell * 524288 + boot * 4096, the
	 * steps of plan.h written out: a shipped step never changes). A spec
	 * that is not JSON, or a number that is not an integer, leaves the
	 * default; the runner refuses a run whose columns are not its plan. */
	"ALTER TABLE runs ADD COLUMN run_order INTEGER;"
	"ALTER TABLE runs ADD COLUMN iterations INTEGER;"
	"ALTER TABLE runs ADD COLUMN warmup INTEGER;"
	"ALTER TABLE runs ADD COLUMN timeout_s INTEGER;"
	"UPDATE runs SET (iterations, warmup, timeout_s, run_order) = (SELECT"
	" COALESCE(CASE WHEN json_type(p.spec, '$.job.repetitions.iterations') = 'integer'"
	"  AND json_extract(p.spec, '$.job.repetitions.iterations') BETWEEN 0 AND 999999999"
	"  THEN json_extract(p.spec, '$.job.repetitions.iterations') END, 5),"
	" COALESCE(CASE WHEN json_type(p.spec, '$.job.repetitions.warmup') = 'integer'"
	"  AND json_extract(p.spec, '$.job.repetitions.warmup') BETWEEN 0 AND 999999999"
	"  THEN json_extract(p.spec, '$.job.repetitions.warmup') END, 0),"
	" COALESCE(CASE WHEN json_type(p.spec, '$.recipe.timeout_s') = 'integer'"
	"  AND json_extract(p.spec, '$.recipe.timeout_s') BETWEEN 0 AND 999999999"
	"  THEN json_extract(p.spec, '$.recipe.timeout_s') END, 600),"
	" CASE WHEN json_extract(p.spec, '$.job.order') IS 'sequential'"
	"  THEN runs.cell_index * 524288 + runs.boot * 4096"
	"  ELSE runs.boot * 4096 + runs.cell_index END"
	" FROM (SELECT CASE WHEN json_valid(spec) THEN spec ELSE '{}' END AS spec"
	"  FROM jobs WHERE jobs.id = runs.job_id) p);"
	/* the claim walks a job's queued runs in claim order */
	"DROP INDEX runs_claim;"
	"CREATE INDEX runs_claim ON runs(job_id, run_order, id) WHERE state = 'queued';"
	"PRAGMA user_version = 8;",
	/* 9: the environment each run was measured in (issue 16): the agent's
	 * snapshot line, one row per distinct snapshot (sha256 of its JSON
	 * text as the coordinator stores it), named by each run. Never
	 * updated: a row is what some run saw. Runs from before have none.
	 * No REFERENCES: the row is written in the transaction that names it
	 * (store-evidence.c), and a foreign-key column could not be dropped. */
	"CREATE TABLE snapshots ("
	" sha256 TEXT PRIMARY KEY,"
	" json TEXT NOT NULL,"
	" created_at REAL NOT NULL);"
	"ALTER TABLE runs ADD COLUMN snapshot_sha256 TEXT;"
	"PRAGMA user_version = 9;",
	/* 10: the machine's fingerprint as it was when each run started (issue
	 * 16): one row per distinct fingerprint document (sha256 of its text),
	 * named by runs.fingerprint_doc_sha256, written when the agent's hello
	 * names the run's host. A bundle's machines come from these, so a
	 * re-probe after the job cannot change what the job says it ran on.
	 * Runs from before have none (a bundle then falls back to the machine
	 * as it is now). */
	"CREATE TABLE fingerprints ("
	" sha256 TEXT PRIMARY KEY,"
	" json TEXT NOT NULL,"
	" created_at REAL NOT NULL);"
	"ALTER TABLE runs ADD COLUMN fingerprint_doc_sha256 TEXT;"
	"PRAGMA user_version = 10;",
	/* 11: profiles as artifacts (issue 16): the bytes of each distinct
	 * artifact once (sha256 computed by the store over exactly them,
	 * size-capped before they get here), and the artifacts each run names
	 * ("folded", "perf.data") with the perf event they were sampled on
	 * (cycles, cpu-clock; NULL when the agent did not say). A retried or
	 * requeued run loses its names with its samples; the bytes row is
	 * never changed. No REFERENCES, as for
	 * snapshots: both rows are written in one transaction. */
	"CREATE TABLE artifacts ("
	" sha256 TEXT PRIMARY KEY,"
	" bytes BLOB NOT NULL,"
	" size INTEGER NOT NULL,"
	" created_at REAL NOT NULL);"
	"CREATE TABLE run_artifacts ("
	" run_id INTEGER NOT NULL,"
	" name TEXT NOT NULL,"
	" sha256 TEXT NOT NULL,"
	" event TEXT,"
	" PRIMARY KEY (run_id, name));"
	"PRAGMA user_version = 11;",
	/* 12: suites (job.h): a job of several workloads on the same boots.
	 * runs.recipe: the recipe the run runs, NULL for the job's own (every
	 * run before this step, and every run of a single-recipe job);
	 * runs.workload: its suite entry's label, NULL outside a suite. */
	"ALTER TABLE runs ADD COLUMN recipe TEXT;"
	"ALTER TABLE runs ADD COLUMN workload TEXT;"
	"PRAGMA user_version = 12;",
	/* 13: the jobs list without a COUNT per job and state (api-view.c):
	 * each job counts its runs by state in columns that triggers keep,
	 * so every statement that inserts, deletes or changes the state of a
	 * run, in whatever transaction, moves the counts with it. started_at:
	 * the job's first claim (store-claim.c); for the jobs already there,
	 * the earliest start of a run still recorded (NULL when none is). */
	"ALTER TABLE jobs ADD COLUMN started_at REAL;"
	STEP13_COLS("INTEGER")
	"UPDATE jobs SET started_at = (SELECT MIN(r.started_at) FROM runs r"
	"  WHERE r.job_id = jobs.id)," STEP13_BACKFILL ";"
	"CREATE TRIGGER runs_count_ins AFTER INSERT ON runs BEGIN UPDATE jobs SET"
	STEP13_SET(STEP13_INS)
	" WHERE id = NEW.job_id; END;"
	"CREATE TRIGGER runs_count_del AFTER DELETE ON runs BEGIN UPDATE jobs SET"
	STEP13_SET(STEP13_DEL)
	" WHERE id = OLD.job_id; END;"
	"CREATE TRIGGER runs_count_upd AFTER UPDATE OF state ON runs"
	" WHEN OLD.state <> NEW.state BEGIN UPDATE jobs SET"
	STEP13_SET(STEP13_UPD)
	" WHERE id = NEW.job_id; END;"
	"PRAGMA user_version = 13;",
	/* 14: issue 18:
	 * kernels built from a spec (kspec.h), one row per build key (the
	 * sha256 of tree, .config, compiler, arch, localversion), so a key is
	 * built once. state: 'building' under node's lease, then 'done' with
	 * its artifacts or 'failed' with the compiler's error line. The
	 * artifacts' bytes live in the artifact directory (kstore.h), named by
	 * their sha256; kernel_artifacts says which exist, their size and
	 * kind, and when a build last used them (retention). */
	"CREATE TABLE kernel_builds ("
	" key TEXT PRIMARY KEY CHECK (length(key) = 64),"
	" state TEXT NOT NULL CHECK (state IN ('building','done','failed')),"
	" spec TEXT NOT NULL,"
	" node TEXT,"
	" machine TEXT,"
	" lease_until INTEGER,"
	" release TEXT,"
	" config_sha256 TEXT,"
	" image_sha256 TEXT,"
	" modules_sha256 TEXT,"
	" sysmap_sha256 TEXT,"
	" log_sha256 TEXT,"
	" error TEXT,"
	" created_at REAL NOT NULL,"
	" finished_at REAL,"
	" last_used REAL NOT NULL);"
	"CREATE TABLE kernel_artifacts ("
	" sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 64),"
	" kind TEXT NOT NULL CHECK (kind IN ('image','modules','config','sysmap','log')),"
	" size INTEGER NOT NULL CHECK (size >= 0),"
	" created_at REAL NOT NULL);"
	/* what a machine is for: "run" (NULL, every machine before this step),
	 * "build", or "run,build" */
	"ALTER TABLE machines ADD COLUMN roles TEXT;"
	"PRAGMA user_version = 14;",
	/* 15 (issue 17's step, numbered 16 in its brief; k18 took 14): machines.spread
	 * (job.h). jobs.spread: any, pin or block ('any' for every job before
	 * this step, which is what they did); jobs.pinned_machine: a pin
	 * job's machine, set by its first claim; runs.req_machine: a block
	 * job's run is for that machine only. */
	"ALTER TABLE jobs ADD COLUMN spread TEXT NOT NULL DEFAULT 'any';"
	"ALTER TABLE jobs ADD COLUMN pinned_machine TEXT;"
	"ALTER TABLE runs ADD COLUMN req_machine TEXT;"
	"PRAGMA user_version = 15;",
	/* 16 (issue 21): samples WITHOUT ROWID, clustered on the key every
	 * reader walks (run, boot, iteration, metric). A report read each
	 * sample's value through the UNIQUE index and then the table, by
	 * rowid; now the key's own B-tree holds the row. 1M samples of 100
	 * runs: the report's scan 0.86-1.08 s -> 53-67 ms, the file 52 -> 28
	 * MB (sqlite3 3.40, this 2-core VM). The rows are copied once, here. */
	"CREATE TABLE samples_step16 ("
	" run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" boot INTEGER NOT NULL,"
	" iteration INTEGER NOT NULL,"
	" metric TEXT NOT NULL,"
	" value REAL NOT NULL,"
	" unit TEXT,"
	" PRIMARY KEY (run_id, boot, iteration, metric)) WITHOUT ROWID;"
	"INSERT INTO samples_step16 (run_id, boot, iteration, metric, value, unit)"
	" SELECT run_id, boot, iteration, metric, value, unit FROM samples;"
	"DROP TABLE samples;"
	"ALTER TABLE samples_step16 RENAME TO samples;"
	"PRAGMA user_version = 16;",
	/* 17 (issue 18's bisect, numbered 16 in its brief; issue 21 took 16;
	 * bisect.h). A bisection's spec (the request
	 * as validated), its state, the commit list good..bad oldest first
	 * (JSON, filled once the builder resolved it), the open interval
	 * lo..hi of indexes into it, the first bad commit when done, and the
	 * machine time its steps' runs took. One row per (step, round): the
	 * commit tried, the job that measures it (made in the transaction
	 * that makes the row), and its verdict with the numbers. */
	"CREATE TABLE bisections ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" spec TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN ('running','done','failed','cancelled')),"
	" commits TEXT,"
	" lo INTEGER,"
	" hi INTEGER,"
	" first_bad TEXT,"
	" message TEXT,"
	" machine_s REAL NOT NULL DEFAULT 0,"
	" created_at REAL NOT NULL,"
	" updated_at REAL NOT NULL,"
	" finished_at REAL);"
	"CREATE INDEX bisections_state ON bisections(state);"
	"CREATE TABLE bisection_steps ("
	" bisection_id INTEGER NOT NULL REFERENCES bisections(id),"
	" step INTEGER NOT NULL CHECK (step >= 0),"
	" round INTEGER NOT NULL CHECK (round >= 0),"
	" idx INTEGER NOT NULL,"
	" sha TEXT NOT NULL CHECK (length(sha) = 40),"
	" job_id INTEGER REFERENCES jobs(id),"
	" verdict TEXT NOT NULL CHECK (verdict IN ('pending','good','bad','skip','more')),"
	" stats TEXT,"
	" PRIMARY KEY (bisection_id, step, round));"
	"PRAGMA user_version = 17;",
	/* 18: PostgreSQL's notify triggers (below). One coordinator per
	 * SQLite file has nobody to tell: the version moves so that both
	 * lists stay one for one. */
	"PRAGMA user_version = 18;",
};

/*
 * The same steps for PostgreSQL, one for one: the same tables, columns,
 * constraints and indexes in its dialect (BIGINT identity for AUTOINCREMENT,
 * DOUBLE PRECISION for REAL, BYTEA for BLOB, "user" quoted). The version
 * lives in bf_schema; each step bumps it in its own transaction. The two
 * lists must stay the same length: a test compares the resulting columns.
 */
static const char *const store_migrations_pg[] = {
	/* 1 */
	"CREATE TABLE machines ("
	" name TEXT PRIMARY KEY NOT NULL,"
	" host TEXT NOT NULL,"
	" port INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),"
	" \"user\" TEXT,"
	" key_path TEXT,"
	" class TEXT NOT NULL,"
	" state TEXT NOT NULL DEFAULT 'idle'"
	"  CHECK (state IN ('idle','running','offline','booting','quarantined')),"
	" hostname TEXT, kernel TEXT, arch TEXT, last_error TEXT,"
	" created_at BIGINT NOT NULL,"
	" last_seen BIGINT);"
	"CREATE TABLE jobs ("
	" id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
	" recipe TEXT NOT NULL,"
	" name TEXT,"
	" spec TEXT NOT NULL,"
	" machine_class TEXT,"
	" machine_names TEXT,"
	" state TEXT NOT NULL DEFAULT 'queued'"
	"  CHECK (state IN ('queued','running','done','failed','cancelled')),"
	" created_at BIGINT NOT NULL,"
	" finished_at DOUBLE PRECISION);"
	"CREATE INDEX jobs_active ON jobs(id) WHERE state IN ('queued','running');"
	"CREATE TABLE runs ("
	" id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
	" job_id BIGINT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
	" cell_index INTEGER NOT NULL,"
	" label TEXT NOT NULL,"
	" axes TEXT NOT NULL,"
	" \"values\" TEXT NOT NULL,"
	" boot INTEGER NOT NULL,"
	" attempt INTEGER NOT NULL DEFAULT 1,"
	" state TEXT NOT NULL DEFAULT 'queued'"
	"  CHECK (state IN ('queued','running','done','failed','lost','boot-failed','cancelled')),"
	" machine TEXT, hostname TEXT, kernel TEXT, boot_id TEXT,"
	" started_at DOUBLE PRECISION, finished_at DOUBLE PRECISION, lease_until BIGINT,"
	" exit_status INTEGER, error TEXT);"
	"CREATE INDEX runs_claim ON runs(job_id, boot, cell_index, id) WHERE state = 'queued';"
	"CREATE INDEX runs_running ON runs(machine) WHERE state = 'running';"
	"CREATE INDEX runs_by_job ON runs(job_id, cell_index, boot);"
	"CREATE INDEX runs_job_state ON runs(job_id, state);"
	"CREATE TABLE samples ("
	" run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" boot INTEGER NOT NULL,"
	" iteration INTEGER NOT NULL,"
	" metric TEXT NOT NULL,"
	" value DOUBLE PRECISION NOT NULL,"
	" unit TEXT,"
	" UNIQUE (run_id, boot, iteration, metric));"
	"CREATE TABLE run_logs ("
	" run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" seq BIGINT NOT NULL,"
	" stream TEXT NOT NULL CHECK (stream IN ('stdout','stderr','agent','coord')),"
	" line TEXT NOT NULL,"
	" at DOUBLE PRECISION NOT NULL,"
	" PRIMARY KEY (run_id, seq));"
	"UPDATE bf_schema SET version = 1;",
	/* 2 */
	"CREATE TABLE tokens ("
	" id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
	" name TEXT,"
	" role TEXT NOT NULL CHECK (role IN ('viewer','submitter','admin')),"
	" salt BYTEA NOT NULL CHECK (length(salt) = 16),"
	" hash BYTEA NOT NULL CHECK (length(hash) = 32),"
	" created_at BIGINT NOT NULL,"
	" last_used BIGINT,"
	" revoked_at BIGINT);"
	"ALTER TABLE jobs ADD COLUMN owner_token BIGINT REFERENCES tokens(id);"
	"UPDATE bf_schema SET version = 2;",
	/* 3 */
	"ALTER TABLE runs ADD COLUMN knobs TEXT;"
	"ALTER TABLE runs ADD COLUMN knob_state TEXT;"
	"ALTER TABLE runs ADD COLUMN req_kernel TEXT;"
	"ALTER TABLE runs ADD COLUMN req_cmdline TEXT;"
	"ALTER TABLE machines ADD COLUMN fingerprint TEXT;"
	"ALTER TABLE machines ADD COLUMN fingerprint_sha256 TEXT;"
	"ALTER TABLE machines ADD COLUMN boot TEXT;"
	"ALTER TABLE machines ADD COLUMN boot_key TEXT;"
	"UPDATE bf_schema SET version = 3;",
	/* 4 */
	"ALTER TABLE jobs ADD COLUMN published INTEGER NOT NULL DEFAULT 0;"
	"CREATE TABLE reproductions ("
	" id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
	" job_id BIGINT NOT NULL REFERENCES jobs(id),"
	" bundle TEXT NOT NULL,"
	" bundle_sha256 TEXT NOT NULL,"
	" source TEXT,"
	" delta_pct DOUBLE PRECISION NOT NULL,"
	" info TEXT NOT NULL,"
	" created_at BIGINT NOT NULL);"
	"UPDATE bf_schema SET version = 4;",
	/* 5 */
	"ALTER TABLE runs ADD COLUMN cmdline TEXT;"
	"UPDATE bf_schema SET version = 5;",
	/* 6 */
	"ALTER TABLE runs ADD COLUMN owner TEXT;"
	"ALTER TABLE machines ADD COLUMN owner TEXT;"
	"ALTER TABLE machines ADD COLUMN owner_until BIGINT;"
	"CREATE INDEX runs_lease ON runs(lease_until) WHERE state = 'running';"
	"UPDATE bf_schema SET version = 6;",
	/* 7 */
	"CREATE TABLE recipes_imported ("
	" sha256 TEXT PRIMARY KEY NOT NULL,"
	" name TEXT NOT NULL,"
	" json TEXT NOT NULL,"
	" actor TEXT NOT NULL,"
	" created_at BIGINT NOT NULL);"
	"CREATE INDEX recipes_imported_name ON recipes_imported(name, created_at);"
	"CREATE TABLE labs ("
	" name TEXT PRIMARY KEY NOT NULL,"
	" public_key TEXT NOT NULL UNIQUE,"
	" fingerprint TEXT NOT NULL,"
	" source TEXT,"
	" actor TEXT NOT NULL,"
	" created_at BIGINT NOT NULL);"
	"CREATE TABLE audit ("
	" id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
	" at DOUBLE PRECISION NOT NULL,"
	" actor TEXT NOT NULL,"
	" action TEXT NOT NULL,"
	" subject TEXT,"
	" detail TEXT);"
	"UPDATE bf_schema SET version = 7;",
	/* 8: as on SQLite. A spec that is not JSON fails the cast and the
	 * step, and the store does not open: every spec was checked to be a
	 * JSON object when written, and the claim has always cast each one.
	 * A number is taken only when it is a non-negative integer, as on
	 * SQLite (where 3.0 is a real, and here is not /^[0-9]+$/). */
	"ALTER TABLE runs ADD COLUMN run_order BIGINT;"
	"ALTER TABLE runs ADD COLUMN iterations INTEGER;"
	"ALTER TABLE runs ADD COLUMN warmup INTEGER;"
	"ALTER TABLE runs ADD COLUMN timeout_s INTEGER;"
	"UPDATE runs SET"
	" iterations = COALESCE(CASE WHEN jsonb_typeof(p.it) = 'number'"
	"  AND p.it::text ~ '^[0-9]{1,9}$' THEN p.it::text::integer END, 5),"
	" warmup = COALESCE(CASE WHEN jsonb_typeof(p.wu) = 'number'"
	"  AND p.wu::text ~ '^[0-9]{1,9}$' THEN p.wu::text::integer END, 0),"
	" timeout_s = COALESCE(CASE WHEN jsonb_typeof(p.tmo) = 'number'"
	"  AND p.tmo::text ~ '^[0-9]{1,9}$' THEN p.tmo::text::integer END, 600),"
	" run_order = CASE WHEN p.ord IS NOT DISTINCT FROM 'sequential'"
	"  THEN runs.cell_index::bigint * 524288 + runs.boot * 4096"
	"  ELSE runs.boot::bigint * 4096 + runs.cell_index END"
	" FROM (SELECT id, spec::jsonb #> '{job,repetitions,iterations}' AS it,"
	"  spec::jsonb #> '{job,repetitions,warmup}' AS wu,"
	"  spec::jsonb #> '{recipe,timeout_s}' AS tmo,"
	"  spec::jsonb #>> '{job,order}' AS ord FROM jobs) p"
	" WHERE p.id = runs.job_id;"
	"DROP INDEX runs_claim;"
	"CREATE INDEX runs_claim ON runs(job_id, run_order, id) WHERE state = 'queued';"
	"UPDATE bf_schema SET version = 8;",
	/* 9: as on SQLite */
	"CREATE TABLE snapshots ("
	" sha256 TEXT PRIMARY KEY,"
	" json TEXT NOT NULL,"
	" created_at DOUBLE PRECISION NOT NULL);"
	"ALTER TABLE runs ADD COLUMN snapshot_sha256 TEXT;"
	"UPDATE bf_schema SET version = 9;",
	/* 10: as on SQLite */
	"CREATE TABLE fingerprints ("
	" sha256 TEXT PRIMARY KEY,"
	" json TEXT NOT NULL,"
	" created_at DOUBLE PRECISION NOT NULL);"
	"ALTER TABLE runs ADD COLUMN fingerprint_doc_sha256 TEXT;"
	"UPDATE bf_schema SET version = 10;",
	/* 11: as on SQLite */
	"CREATE TABLE artifacts ("
	" sha256 TEXT PRIMARY KEY,"
	" bytes BYTEA NOT NULL,"
	" size BIGINT NOT NULL,"
	" created_at DOUBLE PRECISION NOT NULL);"
	"CREATE TABLE run_artifacts ("
	" run_id BIGINT NOT NULL,"
	" name TEXT NOT NULL,"
	" sha256 TEXT NOT NULL,"
	" event TEXT,"
	" PRIMARY KEY (run_id, name));"
	"UPDATE bf_schema SET version = 11;",
	/* 12: as on SQLite */
	"ALTER TABLE runs ADD COLUMN recipe TEXT;"
	"ALTER TABLE runs ADD COLUMN workload TEXT;"
	"UPDATE bf_schema SET version = 12;",
	/* 13: as on SQLite; one trigger function serves the three events */
	"ALTER TABLE jobs ADD COLUMN started_at DOUBLE PRECISION;"
	STEP13_COLS("BIGINT")
	"UPDATE jobs SET started_at = (SELECT MIN(r.started_at) FROM runs r"
	"  WHERE r.job_id = jobs.id)," STEP13_BACKFILL ";"
	"CREATE FUNCTION bf_runs_count() RETURNS trigger LANGUAGE plpgsql AS $$"
	" DECLARE o TEXT := NULL; n TEXT := NULL; j BIGINT;"
	" BEGIN"
	"  IF TG_OP <> 'INSERT' THEN o := OLD.state; j := OLD.job_id; END IF;"
	"  IF TG_OP <> 'DELETE' THEN n := NEW.state; j := NEW.job_id; END IF;"
	"  IF o IS NOT DISTINCT FROM n THEN RETURN NULL; END IF;"
	"  UPDATE jobs SET"
	STEP13_SET(STEP13_PG)
	"  WHERE id = j;"
	"  RETURN NULL;"
	" END $$;"
	"CREATE TRIGGER runs_count AFTER INSERT OR DELETE OR UPDATE OF state ON runs"
	" FOR EACH ROW EXECUTE FUNCTION bf_runs_count();"
	"UPDATE bf_schema SET version = 13;",
	/* 14: as on SQLite */
	"CREATE TABLE kernel_builds ("
	" key TEXT PRIMARY KEY CHECK (length(key) = 64),"
	" state TEXT NOT NULL CHECK (state IN ('building','done','failed')),"
	" spec TEXT NOT NULL,"
	" node TEXT,"
	" machine TEXT,"
	" lease_until BIGINT,"
	" release TEXT,"
	" config_sha256 TEXT,"
	" image_sha256 TEXT,"
	" modules_sha256 TEXT,"
	" sysmap_sha256 TEXT,"
	" log_sha256 TEXT,"
	" error TEXT,"
	" created_at DOUBLE PRECISION NOT NULL,"
	" finished_at DOUBLE PRECISION,"
	" last_used DOUBLE PRECISION NOT NULL);"
	"CREATE TABLE kernel_artifacts ("
	" sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 64),"
	" kind TEXT NOT NULL CHECK (kind IN ('image','modules','config','sysmap','log')),"
	" size BIGINT NOT NULL CHECK (size >= 0),"
	" created_at DOUBLE PRECISION NOT NULL);"
	"ALTER TABLE machines ADD COLUMN roles TEXT;"
	"UPDATE bf_schema SET version = 14;",
	/* 15: as on SQLite */
	"ALTER TABLE jobs ADD COLUMN spread TEXT NOT NULL DEFAULT 'any';"
	"ALTER TABLE jobs ADD COLUMN pinned_machine TEXT;"
	"ALTER TABLE runs ADD COLUMN req_machine TEXT;"
	"UPDATE bf_schema SET version = 15;",
	/* 16: PostgreSQL keeps its heap and the UNIQUE index (no clustered
	 * tables; an INCLUDE index would double what each sample writes); the
	 * version moves so that both lists stay one for one. */
	"UPDATE bf_schema SET version = 16;",
	/* 17: as on SQLite */
	"CREATE TABLE bisections ("
	" id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
	" spec TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN ('running','done','failed','cancelled')),"
	" commits TEXT,"
	" lo BIGINT,"
	" hi BIGINT,"
	" first_bad TEXT,"
	" message TEXT,"
	" machine_s DOUBLE PRECISION NOT NULL DEFAULT 0,"
	" created_at DOUBLE PRECISION NOT NULL,"
	" updated_at DOUBLE PRECISION NOT NULL,"
	" finished_at DOUBLE PRECISION);"
	"CREATE INDEX bisections_state ON bisections(state);"
	"CREATE TABLE bisection_steps ("
	" bisection_id BIGINT NOT NULL REFERENCES bisections(id),"
	" step BIGINT NOT NULL CHECK (step >= 0),"
	" round BIGINT NOT NULL CHECK (round >= 0),"
	" idx BIGINT NOT NULL,"
	" sha TEXT NOT NULL CHECK (length(sha) = 40),"
	" job_id BIGINT REFERENCES jobs(id),"
	" verdict TEXT NOT NULL CHECK (verdict IN ('pending','good','bad','skip','more')),"
	" stats TEXT,"
	" PRIMARY KEY (bisection_id, step, round));"
	"UPDATE bf_schema SET version = 17;",
	/* 18: a change of a run's or a job's state goes out to the other
	 * coordinators (LISTEN benchfleet, events.c) in the transaction
	 * that makes it: PostgreSQL delivers a NOTIFY at commit, so a
	 * writer killed between its commit and its own publish no longer
	 * loses the event for everyone else. The note names the row (the
	 * listeners read it) and the writer (benchfleet.node, db_set_node),
	 * whose own listener skips it. The run columns are those of a run
	 * event (events.c, events_run). A queued run cancelled has no note
	 * of its own: a cancel changes every queued run of a job at once,
	 * and its job's note (runs_cancelled) is what pages read the runs
	 * again on, as on the cancelling coordinator. OR REPLACE: the step
	 * runs again on its own result (a store a test set back). */
	"CREATE OR REPLACE FUNCTION bf_notify_run() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN"
	"  PERFORM pg_notify('benchfleet', json_build_object("
	"   'n', current_setting('benchfleet.node', true), 't', 'run_ref',"
	"   'd', json_build_object('id', NEW.id, 'job_id', NEW.job_id))::text);"
	"  RETURN NULL;"
	" END $$;"
	"CREATE OR REPLACE TRIGGER runs_notify AFTER UPDATE ON runs FOR EACH ROW"
	" WHEN (NOT (OLD.state = 'queued' AND NEW.state = 'cancelled') AND"
	"  (OLD.state IS DISTINCT FROM NEW.state OR OLD.machine IS DISTINCT FROM NEW.machine"
	"  OR OLD.hostname IS DISTINCT FROM NEW.hostname OR OLD.error IS DISTINCT FROM NEW.error"
	"  OR OLD.started_at IS DISTINCT FROM NEW.started_at"
	"  OR OLD.finished_at IS DISTINCT FROM NEW.finished_at))"
	" EXECUTE FUNCTION bf_notify_run();"
	"CREATE OR REPLACE FUNCTION bf_notify_job() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN"
	"  PERFORM pg_notify('benchfleet', json_build_object("
	"   'n', current_setting('benchfleet.node', true), 't', 'job_ref',"
	"   'd', json_build_object('id', NEW.id))::text);"
	"  RETURN NULL;"
	" END $$;"
	"CREATE OR REPLACE TRIGGER jobs_notify_ins AFTER INSERT ON jobs FOR EACH ROW"
	" EXECUTE FUNCTION bf_notify_job();"
	"CREATE OR REPLACE TRIGGER jobs_notify_upd AFTER UPDATE OF state ON jobs FOR EACH ROW"
	" WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION bf_notify_job();"
	"UPDATE bf_schema SET version = 18;",
};
#undef STEP13_COLS
#undef STEP13_BACKFILL
#undef STEP13_SET
#undef STEP13_ONE
#undef STEP13_INS
#undef STEP13_DEL
#undef STEP13_UPD
#undef STEP13_PG
_Static_assert(sizeof(store_migrations) == sizeof(store_migrations_pg),
    "every schema step exists for both engines");
#define STORE_SCHEMA_LATEST ((int)(sizeof(store_migrations) / sizeof(store_migrations[0])))

static int
store_version_read(struct store *s, int *vp)
{
	struct db_stmt *st = NULL;
	int r;

	store_assert_locked(s);
	if ((r = store_q(s, Q_VERSION, &st, "")) != 0)
		goto out;
	if ((r = store_q_step(s, st)) < 0)
		goto out;
	*vp = r == 1 ? db_col_int(st, 0) : 0;
	r = 0;
out:
	db_reset(st);
	return r;
}

/*
 * Each step in its own transaction, re-reading the version inside it, so
 * two processes opening one old store cannot both apply a step: SQLite's
 * BEGIN IMMEDIATE takes the write lock first; on PostgreSQL a transaction
 * advisory lock does, and bf_schema is made under it.
 */
#define STORE_PG_MIGRATE_LOCK "SELECT pg_advisory_xact_lock(7120260601)"

struct migrate_arg {
	const char *where;		/* the store, in messages */
	struct bf_diag *d;
	int said;			/* d says why this attempt failed */
	int done;			/* the store is at the latest version */
};

/* One step in one transaction, or none when the store is up to date. */
static int
migrate_step(struct store *s, void *arg)
{
	struct migrate_arg *a = arg;
	const char *const *steps = s->pg ? store_migrations_pg : store_migrations;
	int r, v, v2 = 0;

	a->said = 1;
	a->done = 0;
	if (s->pg && (r = db_exec_script(s->db, STORE_PG_MIGRATE_LOCK ";"
	    "CREATE TABLE IF NOT EXISTS bf_schema (version INTEGER NOT NULL);"
	    "INSERT INTO bf_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM bf_schema)"))
	    != 0) {
		bf_diag_set(a->d, NULL, "store %s: %s", a->where, db_last_error());
		return r;
	}
	if ((r = store_version_read(s, &v)) != 0) {
		bf_diag_set(a->d, NULL, "store %s: %s", a->where, db_last_error());
		return r;
	}
	if (v > STORE_SCHEMA_LATEST) {
		bf_diag_set(a->d, NULL, "store %s: schema version %d is newer than the %d this "
		    "benchfleetd knows; refusing to open it (upgrade benchfleetd)", a->where, v,
		    STORE_SCHEMA_LATEST);
		return BF_ERR_DB;
	}
	if (v < 0) {
		bf_diag_set(a->d, NULL, "store %s: bad schema version %d", a->where, v);
		return BF_ERR_DB;
	}
	if (v == STORE_SCHEMA_LATEST) {
		a->said = 0;
		a->done = 1;
		return 0;
	}
	/* a step is several statements of fixed text */
	if (db_exec_script(s->db, steps[v]) != 0) {
		bf_diag_set(a->d, NULL, "store %s: migration to version %d failed: %s", a->where,
		    v + 1, db_last_error());
		return BF_ERR_DB;
	}
	/* A step that forgot its bump would make the caller loop forever. */
	if ((r = store_version_read(s, &v2)) != 0 || v2 != v + 1) {
		bf_diag_set(a->d, NULL, "store %s: migration step %d left version %d", a->where,
		    v + 1, v2);
		return BF_ERR_DB;
	}
	a->said = 0;
	return 0;
}

int
store_schema_migrate(struct store *s, const char *where, struct bf_diag *d)
{
	struct migrate_arg a = { .where = where, .d = d };
	int r;

	do {
		if ((r = store_tx(s, migrate_step, &a)) != 0) {
			/* BEGIN or COMMIT failed: the step had nothing to say */
			if (!a.said)
				bf_diag_set(d, NULL, "store %s: %s", where, db_last_error());
			return r;
		}
	} while (!a.done);
	return 0;
}

int
store_schema_version(struct store *s)
{
	int r, v = 0;

	if (s == NULL)
		return BF_ERR_INVALID;
	store_lock(s);
	r = store_version_read(s, &v);
	store_unlock(s);
	return r != 0 ? r : v;
}
