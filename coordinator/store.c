/*
 * store.c: the coordinator's store: opening and closing, the lock, the
 * table of every statement and the query helpers the other store-*.c files
 * share. The schema and its migrations are in store-schema.c, machines in
 * store-machines.c, the claim in store-claim.c, jobs in store-jobs.c, runs,
 * samples and logs in store-runs.c.
 *
 * Timestamps: created_at and last_seen are integer unix seconds; started_at,
 * finished_at and a log line's at are REAL unix seconds from
 * CLOCK_REALTIME, since runs and log lines often lie under a second apart.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"

#include "err.h"
#include "caps.h"
#include "clock.h"
#include "boot.h"
#include "store.h"
#include "plan.h"
#include "store-int.h"
#include "store-claim.h"


/* store_job_from_row's columns, in its order: the counts are kept by
 * schema step 13's triggers, so the list reads one row per job. */
#define JOB_COLS \
	"j.id, j.recipe, j.name, j.state, j.created_at, j.started_at, j.finished_at," \
	" j.machine_class, j.machine_names, j.n_queued, j.n_running, j.n_done, j.n_failed," \
	" j.n_lost, j.n_boot_failed, j.n_cancelled, j.spread, j.pinned_machine"

#define RUN_COLS \
	"id AS id, job_id AS job_id, cell_index AS cell_index, label AS label, axes AS axes," \
	" \"values\" AS \"values\", boot AS boot, attempt AS attempt, state AS state," \
	" machine AS machine, hostname AS hostname, kernel AS kernel, boot_id AS boot_id," \
	" started_at AS started_at, finished_at AS finished_at, exit_status AS exit_status," \
	" error AS error, knobs AS knobs_requested, knob_state AS knobs," \
	" req_kernel AS req_kernel, req_cmdline AS req_cmdline, cmdline AS cmdline," \
	" snapshot_sha256 AS snapshot_sha256, fingerprint_doc_sha256 AS fingerprint_doc_sha256," \
	" req_machine AS req_machine"

#define MACHINE_COLS \
	"name, host, port, \"user\", key_path, class, state, hostname, kernel, arch, last_error," \
	" created_at, last_seen, fingerprint, fingerprint_sha256, boot, boot_key, roles"

/* Every statement the store runs. Values are always bound, never pasted. */
static const char *const store_sql[Q__COUNT] = {
	[Q_BEGIN] = "BEGIN IMMEDIATE",
	[Q_COMMIT] = "COMMIT",
	[Q_ROLLBACK] = "ROLLBACK",
	[Q_VERSION] = "PRAGMA user_version",
	/* commits of other connections (the monitor's, other processes'),
	 * then this connection's own changes */
	[Q_GENERATION] = "SELECT data_version, total_changes() FROM pragma_data_version",

	[Q_M_ADD] = "INSERT INTO machines (name, host, port, \"user\", key_path, class, state,"
	    " created_at, boot, roles) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[Q_M_GET] = "SELECT " MACHINE_COLS " FROM machines WHERE name = ?1",
	[Q_M_LIST] = "SELECT " MACHINE_COLS " FROM machines ORDER BY name",
	[Q_M_NAMES] = "SELECT name FROM machines",
	[Q_M_BUSY] = "SELECT id FROM runs WHERE machine = ?1 AND state = 'running' LIMIT 1",
	[Q_M_DELETE] = "DELETE FROM machines WHERE name = ?1",
	/* NULL keeps a field; "" clears an optional one. */
	[Q_M_UPDATE] = "UPDATE machines SET state = COALESCE(?2, state),"
	    " hostname = CASE WHEN ?3 IS NULL THEN hostname ELSE NULLIF(?3, '') END,"
	    " kernel = CASE WHEN ?4 IS NULL THEN kernel ELSE NULLIF(?4, '') END,"
	    " arch = CASE WHEN ?5 IS NULL THEN arch ELSE NULLIF(?5, '') END,"
	    " last_error = CASE WHEN ?6 IS NULL THEN last_error ELSE NULLIF(?6, '') END,"
	    " last_seen = CASE WHEN ?7 <> 0 THEN ?8 ELSE last_seen END"
	    " WHERE name = ?1",
	[Q_M_RUNNING] = "UPDATE machines SET state = 'running' WHERE name = ?1",
	/* An offline mark set by the scheduler while the run ended stays. */
	[Q_M_IDLE] = "UPDATE machines SET state = 'idle' WHERE name = ?1 AND state = 'running'",
	/* at start-up: ?1 all of them (SQLite: one coordinator), else those
	 * this coordinator (?2) held in its previous life */
	[Q_M_IDLE_ALL] = "UPDATE machines SET state = 'idle' WHERE state IN ('running', 'booting')"
	    " AND (?1 <> 0 OR owner = ?2)",

	[Q_J_ADD] = "INSERT INTO jobs (recipe, name, spec, machine_class, machine_names,"
	    " created_at, owner_token, spread) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULLIF(?7, 0), ?8)"
	    " RETURNING id",
	/* spread "pin": the first claim names the machine; a claim for another
	 * machine changes nothing (0 rows: its pick is undone) */
	[Q_J_PIN] = "UPDATE jobs SET pinned_machine = ?2 WHERE id = ?1 AND spread = 'pin'"
	    " AND (pinned_machine IS NULL OR pinned_machine = ?2)",
	[Q_J_GET] = "SELECT " JOB_COLS ", j.spec FROM jobs j WHERE j.id = ?1",
	/* Newest first from ?1 (0: the newest; keyset paging, so a page
	 * costs the same however deep); ?2 a mask of job states (bit i:
	 * store_job_states[i]; 0 any); ?3 recipe; ?4 a run on that machine;
	 * ?5 a LIKE pattern (lower case, '!' escapes) on id, name, recipe;
	 * ?6 published only; "" and 0 match anything. */
	[Q_J_LIST] = "SELECT " JOB_COLS " FROM jobs j WHERE (?1 = 0 OR j.id < ?1)"
	    " AND (?2 = 0 OR (?2 & CASE j.state WHEN 'queued' THEN 1 WHEN 'running' THEN 2"
	    "  WHEN 'done' THEN 4 WHEN 'failed' THEN 8 WHEN 'cancelled' THEN 16 ELSE 0 END) <> 0)"
	    " AND (?3 = '' OR j.recipe = ?3)"
	    " AND (?4 = '' OR EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id"
	    "  AND r.machine = ?4))"
	    " AND (?5 = '' OR CAST(j.id AS TEXT) LIKE ?5 ESCAPE '!'"
	    "  OR LOWER(j.recipe) LIKE ?5 ESCAPE '!'"
	    "  OR LOWER(COALESCE(j.name, '')) LIKE ?5 ESCAPE '!')"
	    " AND (?6 = 0 OR j.published = 1)"
	    " ORDER BY j.id DESC LIMIT ?7",
	[Q_J_HEAD] = "SELECT state, recipe FROM jobs WHERE id = ?1",
	[Q_J_CANCEL_RUNS] = "UPDATE runs SET state = 'cancelled', finished_at = ?2"
	    " WHERE job_id = ?1 AND state = 'queued'",
	[Q_J_CANCEL] = "UPDATE jobs SET state = 'cancelled' WHERE id = ?1",
	[Q_J_SETTLE] = "UPDATE jobs SET finished_at = ?2, state = CASE"
	    " WHEN state = 'cancelled' THEN 'cancelled'"
	    " WHEN NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = ?1 AND r.state <> 'done')"
	    "  THEN 'done' ELSE 'failed' END"
	    " WHERE id = ?1 AND finished_at IS NULL AND NOT EXISTS (SELECT 1 FROM runs r"
	    "  WHERE r.job_id = ?1 AND r.state IN ('queued','running'))",
	[Q_J_START] = "UPDATE jobs SET state = 'running', started_at = ?2"
	    " WHERE id = ?1 AND state = 'queued'",
	/* MIN(id) makes label and axes come from the cell's first run. */
	[Q_J_CELLS] = "SELECT r.id, r.cell_index AS cell_index, r.label AS label, r.axes AS axes"
	    " FROM runs r WHERE r.job_id = ?1 AND r.id = (SELECT MIN(r2.id) FROM runs r2"
	    "  WHERE r2.job_id = r.job_id AND r2.cell_index = r.cell_index)"
	    " ORDER BY r.cell_index",
	[Q_J_CELL_SAMPLES] = "SELECT r.cell_index, s.metric AS metric, s.unit AS unit,"
	    " s.boot AS boot, s.iteration AS iteration, s.value AS value, s.run_id AS run"
	    " FROM samples s JOIN runs r ON r.id = s.run_id"
	    " WHERE r.job_id = ?1 AND r.state = 'done'"
	    " ORDER BY r.cell_index, s.metric, s.boot, s.iteration, s.run_id",
	/* what the statistics read, in the order of runs_by_job and of the
	 * samples' UNIQUE index: no sort (store-samples.c orders each series) */
	[Q_J_SERIES] = "SELECT r.cell_index, r.id, s.metric, s.unit, s.boot, s.iteration,"
	    " s.value FROM runs r JOIN samples s ON s.run_id = r.id"
	    " WHERE r.job_id = ?1 AND r.state = 'done'"
	    " ORDER BY r.cell_index, r.boot, r.id, s.boot, s.iteration, s.metric",

	[Q_R_ADD] = "INSERT INTO runs (job_id, cell_index, label, axes, \"values\", boot, knobs,"
	    " req_kernel, req_cmdline, run_order, iterations, warmup, timeout_s, recipe, workload,"
	    " req_machine)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
	[Q_R_KNOBS] = "UPDATE runs SET knob_state = ?2 WHERE id = ?1",
	/* a snapshot row is written once and never changed: the first text of
	 * a hash is every later one, the hash being of the text */
	[Q_SN_ADD] = "INSERT INTO snapshots (sha256, json, created_at) VALUES (?1, ?2, ?3)"
	    " ON CONFLICT DO NOTHING",
	[Q_SN_GET] = "SELECT json FROM snapshots WHERE sha256 = ?1",
	/* a run's artifacts (step 11): bytes once per sha256, names per run */
	[Q_ART_ADD] = "INSERT INTO artifacts (sha256, bytes, size, created_at) VALUES (?1, ?2, ?3, ?4)"
	    " ON CONFLICT DO NOTHING",
	[Q_RA_DEL] = "DELETE FROM run_artifacts WHERE run_id = ?1 AND name = ?2",
	[Q_RA_ADD] = "INSERT INTO run_artifacts (run_id, name, sha256, event)"
	    " VALUES (?1, ?2, ?3, ?4)",
	[Q_RA_GET] = "SELECT a.bytes, a.size, a.sha256, ra.event FROM run_artifacts ra"
	    " JOIN artifacts a ON a.sha256 = ra.sha256 WHERE ra.run_id = ?1 AND ra.name = ?2",
	[Q_R_SNAPSHOT] = "UPDATE runs SET snapshot_sha256 = ?2 WHERE id = ?1",
	/* the same for the machine's fingerprint as the run starts (step 10) */
	[Q_FP_OF_RUN] = "SELECT m.fingerprint FROM runs r JOIN machines m ON m.name = r.machine"
	    " WHERE r.id = ?1 AND m.fingerprint IS NOT NULL",
	[Q_FP_ADD] = "INSERT INTO fingerprints (sha256, json, created_at) VALUES (?1, ?2, ?3)"
	    " ON CONFLICT DO NOTHING",
	[Q_FP_GET] = "SELECT json FROM fingerprints WHERE sha256 = ?1",
	[Q_R_FP] = "UPDATE runs SET fingerprint_doc_sha256 = ?2 WHERE id = ?1",
	/* One more boot of the run's cell (adaptive repetitions): the cell's
	 * next boot index, ranked one boot (PLAN_ORDER_BOOT_STEP) after the
	 * cell's last, whatever the job's order (plan.h). */
	[Q_R_CLONE_BOOT] = "INSERT INTO runs (job_id, cell_index, label, axes, \"values\", boot,"
	    " knobs, req_kernel, req_cmdline, run_order, iterations, warmup, timeout_s,"
	    " recipe, workload)"
	    " SELECT job_id, cell_index, label, axes, \"values\","
	    " (SELECT MAX(r2.boot) + 1 FROM runs r2 WHERE r2.job_id = runs.job_id"
	    "  AND r2.cell_index = runs.cell_index), knobs, req_kernel, req_cmdline,"
	    " (SELECT MAX(r2.run_order) + " BF_STR(PLAN_ORDER_BOOT_STEP) " FROM runs r2"
	    "  WHERE r2.job_id = runs.job_id AND r2.cell_index = runs.cell_index),"
	    " iterations, warmup, timeout_s, recipe, workload FROM runs WHERE id = ?1",
	/* A cell's samples of one metric: its done runs and run ?4 (finishing). */
	[Q_R_CELL_SAMPLES] = "SELECT r.boot, s.value FROM samples s JOIN runs r ON r.id = s.run_id"
	    " WHERE r.job_id = ?1 AND r.cell_index = ?2 AND s.metric = ?3"
	    " AND (r.state = 'done' OR r.id = ?4) ORDER BY r.boot, s.iteration",
	[Q_R_CELL_BOOTS] = "SELECT COUNT(*) FROM runs WHERE job_id = ?1 AND cell_index = ?2"
	    " AND state IN ('queued', 'running', 'done')",
	[Q_M_FINGERPRINT] = "UPDATE machines SET fingerprint = ?2, fingerprint_sha256 = ?3"
	    " WHERE name = ?1",
	[Q_M_BOOT] = "UPDATE machines SET boot = ?2 WHERE name = ?1",
	[Q_M_BOOT_KEY] = "UPDATE machines SET boot_key = ?2 WHERE name = ?1",
	[Q_R_BY_JOB] = "SELECT " RUN_COLS " FROM runs WHERE job_id = ?1"
	    " ORDER BY cell_index, boot, id",
	[Q_R_GET] = "SELECT " RUN_COLS " FROM runs WHERE id = ?1",
	[Q_R_HEAD] = "SELECT job_id, machine, state, owner FROM runs WHERE id = ?1",
	[Q_R_CLAIM_PICK_GROUP_FRESH] = store_claim_pick_group_fresh_sql,
	[Q_R_CLAIM_PICK_GROUP] = store_claim_pick_group_sql,
	[Q_R_CLAIM_PICK_FRESH] = store_claim_pick_fresh_sql,
	[Q_R_CLAIM_PICK_ANY] = store_claim_pick_any_sql,
	[Q_R_CLAIM] = "UPDATE runs SET state = 'running', machine = ?2, started_at = ?3,"
	    " lease_until = ?4, owner = ?5 WHERE id = ?1 AND state = 'queued'",
	/* Only the holder renews: a lease another coordinator took over is
	 * gone for good, and the run it covered is no longer ours. */
	[Q_R_RENEW] = "UPDATE runs SET lease_until = ?2 WHERE id = ?1 AND state = 'running'"
	    " AND owner = ?3",
	[Q_R_INFO] = "UPDATE runs SET hostname = COALESCE(?2, hostname),"
	    " kernel = COALESCE(?3, kernel), boot_id = COALESCE(?4, boot_id),"
	    " cmdline = COALESCE(?5, cmdline) WHERE id = ?1",
	[Q_R_CMDLINE] = "UPDATE runs SET cmdline = ?2 WHERE id = ?1",
	[Q_R_FINISH] = "UPDATE runs SET state = ?2, exit_status = ?3, error = ?4,"
	    " finished_at = ?5, lease_until = NULL WHERE id = ?1 AND state = 'running'"
	    " AND owner = ?6",
	/* A lost run starts over: the samples of its broken attempt are dropped
	 * so that a cell never mixes a partial attempt with a whole one. */
	[Q_R_RETRY] = "UPDATE runs SET state = 'queued', attempt = attempt + 1, error = ?2,"
	    " machine = NULL, hostname = NULL, kernel = NULL, boot_id = NULL,"
	    " snapshot_sha256 = NULL, fingerprint_doc_sha256 = NULL,"
	    " started_at = NULL, lease_until = NULL, owner = NULL"
	    " WHERE id = ?1 AND state = 'running' AND attempt < ?3 AND owner = ?4",
	[Q_R_DROP_SAMPLES] = "DELETE FROM samples WHERE run_id = ?1",
	/* and so are the artifacts it named: the next attempt profiles afresh
	 * (the bytes rows stay, content-addressed and maybe another run's) */
	[Q_R_DROP_ARTIFACTS] = "DELETE FROM run_artifacts WHERE run_id = ?1",
	[Q_S_ADD] = "INSERT INTO samples (run_id, boot, iteration, metric, value, unit)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
	[Q_S_BY_RUN] = "SELECT boot AS boot, iteration AS iteration, metric AS metric,"
	    " value AS value, unit AS unit FROM samples WHERE run_id = ?1"
	    " ORDER BY boot, iteration, metric",
	[Q_S_BY_JOB] = "SELECT s.run_id, s.boot AS boot, s.iteration AS iteration,"
	    " s.metric AS metric, s.value AS value, s.unit AS unit"
	    " FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.job_id = ?1"
	    " ORDER BY s.run_id, s.boot, s.iteration, s.metric",
	[Q_L_ADD] = "INSERT INTO run_logs (run_id, seq, stream, line, at)"
	    " SELECT ?1, COALESCE(MAX(seq), 0) + 1, ?2, ?3, ?4 FROM run_logs WHERE run_id = ?1",
	[Q_L_GET] = "SELECT seq AS seq, stream AS stream, line AS line, at AS at FROM run_logs"
	    " WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",

	/* Recovery takes the running runs of REC_SET: ?1 <> 0 all (SQLite at
	 * start-up), ?2 <> 0 those of this coordinator (?3) from its previous
	 * life, and always those whose lease lapsed (?4: now): their holder is
	 * gone, or is this coordinator, whose manager renews the lease of
	 * every run in flight first (a run whose end the store missed). */
#define REC_SET "state = 'running' AND (?1 <> 0 OR (?2 <> 0 AND (owner IS NULL" \
	" OR owner = ?3)) OR lease_until < ?4)"
	[Q_REC_SAMPLES] = "DELETE FROM samples WHERE run_id IN"
	    " (SELECT id FROM runs WHERE " REC_SET ")",
	[Q_REC_ARTIFACTS] = "DELETE FROM run_artifacts WHERE run_id IN"
	    " (SELECT id FROM runs WHERE " REC_SET ")",
	[Q_REC_LOG] = "INSERT INTO run_logs (run_id, seq, stream, line, at)"
	    " SELECT r.id, (SELECT COALESCE(MAX(l.seq), 0) + 1 FROM run_logs l"
	    "  WHERE l.run_id = r.id), 'coord', ?5, ?6 FROM runs r WHERE " REC_SET,
	[Q_REC_CANCEL] = "UPDATE runs SET state = 'cancelled', finished_at = ?5,"
	    " lease_until = NULL, owner = NULL WHERE " REC_SET
	    " AND job_id IN (SELECT id FROM jobs WHERE state = 'cancelled')",
	/* their machines are free again, for any coordinator to lease */
	[Q_REC_MACHINES] = "UPDATE machines SET owner = NULL, owner_until = NULL,"
	    " state = CASE WHEN state IN ('running', 'booting') THEN 'idle' ELSE state END"
	    " WHERE name IN (SELECT machine FROM runs WHERE " REC_SET ")",
	[Q_REC_REQUEUE] = "UPDATE runs SET state = 'queued', attempt = attempt + 1,"
	    " machine = NULL, hostname = NULL, kernel = NULL, boot_id = NULL,"
	    " snapshot_sha256 = NULL, fingerprint_doc_sha256 = NULL,"
	    " started_at = NULL, lease_until = NULL, owner = NULL WHERE " REC_SET,
	[Q_REC_JOBS] = "UPDATE jobs SET finished_at = ?1 WHERE state = 'cancelled'"
	    " AND finished_at IS NULL AND NOT EXISTS (SELECT 1 FROM runs r"
	    "  WHERE r.job_id = jobs.id AND r.state IN ('queued','running'))",
	/* federation and reproductions (store-repro.c) */
	[Q_J_PUBLISH] = "UPDATE jobs SET published = 1 WHERE id = ?1",
	[Q_J_PUBLISHED] = "SELECT published FROM jobs WHERE id = ?1",
	[Q_X_ADD] = "INSERT INTO reproductions (job_id, bundle, bundle_sha256, source,"
	    " delta_pct, info, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
	[Q_X_GET] = "SELECT job_id, bundle, bundle_sha256, source, delta_pct, info, created_at"
	    " FROM reproductions WHERE id = ?1",
	/* store_repro_list's columns, in its order: newest first, from ?1 down
	 * (0: the newest); the bundle (up to 1 MiB) stays in the store */
	[Q_X_LIST] = "SELECT x.id, x.job_id, x.bundle_sha256, x.source, x.delta_pct, x.info,"
	    " x.created_at, j.recipe, j.state, j.n_queued + j.n_running + j.n_done + j.n_failed"
	    " + j.n_lost + j.n_boot_failed + j.n_cancelled, j.n_done, j.n_failed + j.n_lost"
	    " + j.n_boot_failed FROM reproductions x JOIN jobs j ON j.id = x.job_id"
	    " WHERE (?1 = 0 OR x.id < ?1) ORDER BY x.id DESC LIMIT ?2",
	/* kernel builds (schema step 14, store-kbuild.c) */
	[Q_KB_INSERT] = "INSERT INTO kernel_builds (key, state, spec, node, machine, lease_until,"
	    " created_at, last_used) VALUES (?1, 'building', ?2, ?3, ?4, ?5, ?6, ?6)"
	    " ON CONFLICT DO NOTHING",
	[Q_KB_STEAL] = "UPDATE kernel_builds SET node = ?2, machine = ?3, lease_until = ?4"
	    " WHERE key = ?1 AND state = 'building' AND lease_until < ?5",
	[Q_KB_STATE] = "SELECT state, node, lease_until FROM kernel_builds WHERE key = ?1",
	[Q_KB_RENEW] = "UPDATE kernel_builds SET lease_until = ?3"
	    " WHERE key = ?1 AND state = 'building' AND node = ?2",
	[Q_KB_FINISH] = "UPDATE kernel_builds SET state = ?3, release = ?4, config_sha256 = ?5,"
	    " image_sha256 = ?6, modules_sha256 = ?7, sysmap_sha256 = ?8, log_sha256 = ?9,"
	    " error = ?10, finished_at = ?11, last_used = ?11, lease_until = NULL"
	    " WHERE key = ?1 AND state = 'building' AND node = ?2",
	[Q_KB_GET] = "SELECT key, state, machine, release, config_sha256, image_sha256,"
	    " modules_sha256, sysmap_sha256, log_sha256, error, created_at, finished_at,"
	    " last_used FROM kernel_builds WHERE key = ?1",
	/* the release names its key's first bytes (-bf<key8>): the newest
	 * done build of that release, when two keys share the tag */
	[Q_KB_BY_RELEASE] = "SELECT key, state, machine, release, config_sha256, image_sha256,"
	    " modules_sha256, sysmap_sha256, log_sha256, error, created_at, finished_at,"
	    " last_used FROM kernel_builds WHERE release = ?1 AND state = 'done'"
	    " ORDER BY finished_at DESC LIMIT 1",
	[Q_KB_TOUCH] = "UPDATE kernel_builds SET last_used = ?2 WHERE key = ?1",
	[Q_KA_ADD] = "INSERT INTO kernel_artifacts (sha256, kind, size, created_at)"
	    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
	[Q_KA_GET] = "SELECT kind, size FROM kernel_artifacts WHERE sha256 = ?1",
	[Q_ART_GET] = "SELECT bytes, size FROM artifacts WHERE sha256 = ?1",
	[Q_KA_TOTAL] = "SELECT COALESCE(SUM(size), 0) FROM kernel_artifacts",
	[Q_KB_OLDEST] = "SELECT key FROM kernel_builds WHERE state <> 'building'"
	    " ORDER BY last_used, key LIMIT 1",
	[Q_KB_DEL] = "DELETE FROM kernel_builds WHERE key = ?1",
	[Q_KA_ORPHANS] = "SELECT a.sha256 FROM kernel_artifacts a WHERE NOT EXISTS"
	    " (SELECT 1 FROM kernel_builds b WHERE a.sha256 IN (b.config_sha256, b.image_sha256,"
	    " b.modules_sha256, b.sysmap_sha256, b.log_sha256)) ORDER BY a.sha256 LIMIT 64",
	[Q_KA_DEL] = "DELETE FROM kernel_artifacts WHERE sha256 = ?1",
	/* bisections (schema step 17, store-bisect.c) */
	[Q_BI_ADD] = "INSERT INTO bisections (spec, state, lo, hi, created_at, updated_at)"
	    " VALUES (?1, 'running', 0, 0, ?2, ?2) RETURNING id",
	[Q_BI_GET] = "SELECT id, spec, state, commits, lo, hi, first_bad, message, machine_s,"
	    " created_at, updated_at, finished_at FROM bisections WHERE id = ?1",
	[Q_BI_LIST] = "SELECT id, spec, state, commits, lo, hi, first_bad, message, machine_s,"
	    " created_at, updated_at, finished_at FROM bisections ORDER BY id DESC LIMIT ?1",
	[Q_BI_RUNNING] = "SELECT id FROM bisections WHERE state = 'running' ORDER BY id",
	[Q_BI_SET] = "UPDATE bisections SET commits = ?2, lo = ?3, hi = ?4, first_bad = ?5,"
	    " message = ?6, machine_s = ?7, state = ?8, updated_at = ?9,"
	    " finished_at = CASE WHEN ?8 = 'running' THEN NULL ELSE ?9 END"
	    " WHERE id = ?1 AND state = 'running'",
	[Q_BI_CANCEL] = "UPDATE bisections SET state = 'cancelled', message = ?2,"
	    " updated_at = ?3, finished_at = ?3 WHERE id = ?1 AND state = 'running'",
	[Q_BS_ADD] = "INSERT INTO bisection_steps (bisection_id, step, round, idx, sha, job_id,"
	    " verdict) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending')",
	[Q_BS_LIST] = "SELECT step, round, idx, sha, job_id, verdict, stats FROM bisection_steps"
	    " WHERE bisection_id = ?1 ORDER BY step, round",
	[Q_BS_SET] = "UPDATE bisection_steps SET verdict = ?4, stats = ?5"
	    " WHERE bisection_id = ?1 AND step = ?2 AND round = ?3 AND verdict = 'pending'",
	/* trust (schema step 7, store-repro.c) */
	[Q_RI_ADD] = "INSERT INTO recipes_imported (sha256, name, json, actor, created_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
	[Q_RI_GET] = "SELECT json FROM recipes_imported WHERE sha256 = ?1",
	[Q_RI_BY_NAME] = "SELECT json FROM recipes_imported WHERE name = ?1"
	    " ORDER BY created_at DESC, sha256 LIMIT 1",
	/* store_recipes_imported_list's columns, in its order */
	[Q_RI_LIST] = "SELECT name, sha256, actor, created_at FROM recipes_imported"
	    " ORDER BY name, created_at LIMIT ?1",
	[Q_LAB_ADD] = "INSERT INTO labs (name, public_key, fingerprint, source, actor, created_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
	[Q_LAB_DEL] = "DELETE FROM labs WHERE name = ?1",
	[Q_LAB_BY_KEY] = "SELECT name FROM labs WHERE public_key = ?1",
	/* store_labs_list's columns, in its order */
	[Q_LAB_LIST] = "SELECT name, public_key, fingerprint, source, actor, created_at"
	    " FROM labs ORDER BY name LIMIT ?1",
	[Q_AUDIT_ADD] = "INSERT INTO audit (at, actor, action, subject, detail)"
	    " VALUES (?1, ?2, ?3, ?4, ?5)",
	/* store_audit_list's columns, in its order */
	[Q_AUDIT_LIST] = "SELECT id, at, actor, action, subject, detail FROM audit"
	    " ORDER BY id DESC LIMIT ?1",

	/* Serialises the transactions that end runs of one job (settle, the
	 * adaptive extra boot): a no-op on SQLite, whose writers are serial. */
	[Q_J_LOCK] = "SELECT id FROM jobs WHERE id = ?1",
	/* A machine is driven by one coordinator at a time: take it when it is
	 * free, ours already, or its holder let the lease lapse (?4: now). */
	[Q_M_LEASE] = "UPDATE machines SET owner = ?2, owner_until = ?3 WHERE name = ?1"
	    " AND (owner IS NULL OR owner = ?2 OR owner_until IS NULL OR owner_until < ?4)",
	[Q_M_LEASE_RENEW] = "UPDATE machines SET owner_until = ?3"
	    " WHERE name = (SELECT machine FROM runs WHERE id = ?1) AND owner = ?2",
	[Q_M_RELEASE] = "UPDATE machines SET owner = NULL, owner_until = NULL WHERE owner = ?1",
};

/* Where PostgreSQL needs other words; NULL: store_sql's text serves both. */
static const char *const store_sql_pg[Q__COUNT] = {
	/* READ COMMITTED; what must not interleave takes row locks instead */
	[Q_BEGIN] = "BEGIN",
	[Q_VERSION] = "SELECT version FROM bf_schema",
	/* sorted here: the metric names in the database's collation, as ever */
	[Q_J_SERIES] = "SELECT r.cell_index, s.run_id, s.metric, s.unit, s.boot, s.iteration,"
	    " s.value FROM samples s JOIN runs r ON r.id = s.run_id"
	    " WHERE r.job_id = ?1 AND r.state = 'done'"
	    " ORDER BY r.cell_index, s.metric, s.boot, s.iteration, s.run_id",
	/* a commit anywhere moves xmax or empties an xip entry; read-only
	 * transactions take no xid, so reading leaves it as it is */
	[Q_GENERATION] = "SELECT txid_current_snapshot()::text, 0",
	[Q_R_CLAIM_PICK_GROUP_FRESH] = store_claim_pick_group_fresh_sql_pg,
	[Q_R_CLAIM_PICK_GROUP] = store_claim_pick_group_sql_pg,
	[Q_R_CLAIM_PICK_FRESH] = store_claim_pick_fresh_sql_pg,
	[Q_R_CLAIM_PICK_ANY] = store_claim_pick_any_sql_pg,
	[Q_J_LOCK] = "SELECT id FROM jobs WHERE id = ?1 FOR UPDATE",
};

const char *
store_last_error(void)
{
	return db_last_error();
}

/* Its address names the calling thread in store->holder. */
static __thread char store_me;

void
store_lock(struct store *s)
{
	assert(!store_holds(s));	/* mu is not recursive: this would deadlock */
	pthread_mutex_lock(&s->mu);
	atomic_store(&s->holder, &store_me);
}

void
store_unlock(struct store *s)
{
	store_assert_locked(s);
	db_reset_all(s->db);
	atomic_store(&s->holder, NULL);
	pthread_mutex_unlock(&s->mu);
}

int
store_holds(const struct store *s)
{
	return s != NULL && atomic_load(&s->holder) == &store_me;
}

static const char *
store_sql_of(const struct store *s, enum store_q id)
{
	return s->pg && store_sql_pg[id] != NULL ? store_sql_pg[id] : store_sql[id];
}

static int
store_vq(struct store *s, enum store_q id, struct db_stmt **stp, const char *fmt, va_list ap)
{
	struct db_stmt *st;
	int r, i;

	store_assert_locked(s);
	if (s->st[id] == NULL && (r = db_prepare(s->db, store_sql_of(s, id), &s->st[id])) != 0)
		return r;
	st = s->st[id];
	db_reset(st);
	for (i = 1; *fmt != '\0'; fmt++, i++) {
		switch (*fmt) {
		case 't':
			r = db_bind_text(st, i, va_arg(ap, const char *));
			break;
		case 'I':
			r = db_bind_int64(st, i, va_arg(ap, int64_t));
			break;
		case 'd':
			r = db_bind_double(st, i, va_arg(ap, double));
			break;
		case 'b': {	/* a blob: pointer, then size_t length */
			const void *p = va_arg(ap, const void *);

			r = db_bind_blob(st, i, p, va_arg(ap, size_t));
			break;
		}
		default:
			r = BF_ERR_INVALID;
			break;
		}
		if (r != 0)
			return r;
	}
	*stp = st;
	return 0;
}

int
store_q(struct store *s, enum store_q id, struct db_stmt **stp, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = store_vq(s, id, stp, fmt, ap);
	va_end(ap);
	return r;
}

int
store_q_step(struct store *s, struct db_stmt *st)
{
	store_assert_locked(s);
	return db_step(st);
}

int
store_q_exec(struct store *s, enum store_q id, int *changes, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = store_q_vexec(s, id, changes, fmt, ap);
	va_end(ap);
	return r;
}

int
store_q_vexec(struct store *s, enum store_q id, int *changes, const char *fmt, va_list ap)
{
	struct db_stmt *st = NULL;
	int r;

	r = store_vq(s, id, &st, fmt, ap);
	if (r != 0)
		goto out;
	/* drain: an INSERT ... RETURNING or a SELECT used for its locks */
	while ((r = db_step(st)) == 1)
		;
	if (r < 0)
		goto out;
	if (changes != NULL)
		*changes = db_changes(s->db);
	r = 0;
out:
	db_reset(st);
	return r;
}

int
store_q_id(struct store *s, enum store_q id, int64_t *idp, const char *fmt, ...)
{
	struct db_stmt *st = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = store_vq(s, id, &st, fmt, ap);
	va_end(ap);
	if (r != 0)
		goto out;
	if ((r = db_step(st)) < 0)
		goto out;
	if (r == 0) {
		r = BF_ERR_DB;
		goto out;
	}
	*idp = db_col_int64(st, 0);
	r = 0;
out:
	db_reset(st);
	return r;
}

static void
store_tx_rollback(struct store *s)
{
	/* Pending reads would otherwise keep part of the transaction alive. */
	db_reset_all(s->db);
	if (db_in_tx(s->db))
		(void)store_q_exec(s, Q_ROLLBACK, NULL, "");
}

int
store_tx(struct store *s, store_tx_fn fn, void *arg)
{
	int r, attempt;

	store_lock(s);
	for (attempt = 1;; attempt++) {
		(void)db_take_conflict();	/* only this attempt's failures count */
		if ((r = store_q_exec(s, Q_BEGIN, NULL, "")) == 0 && (r = fn(s, arg)) == 0 &&
		    (r = store_q_exec(s, Q_COMMIT, NULL, "")) == 0)
			break;
		store_tx_rollback(s);
		if (r == STORE_TX_UNDO) {
			r = 0;
			break;
		}
		if (!s->pg || !db_take_conflict())
			break;
		if (attempt >= BF_MAX_TX_ATTEMPTS) {
			/* another coordinator keeps winning: worth a line, and a counter */
			atomic_fetch_add(&s->tx_gave_up, 1);
			fprintf(stderr, "benchfleetd: store: a transaction met %d serialization "
			    "conflicts in a row and gave up (%s)\n", attempt, bf_err_str(r));
			break;
		}
		atomic_fetch_add(&s->tx_retries, 1);
	}
	store_unlock(s);
	return r;
}

void
store_tx_stats(struct store *s, unsigned long *retries, unsigned long *gave_up)
{
	*retries = atomic_load(&s->tx_retries);
	*gave_up = atomic_load(&s->tx_gave_up);
}

int
store_generation_conn(struct store *s, char *out, size_t outsz)
{
	struct db_stmt *st;
	const char *v;
	int r, n;

	store_assert_locked(s);
	if ((r = store_q(s, Q_GENERATION, &st, "")) != 0 || (r = store_q_step(s, st)) < 0)
		return r;
	if (r == 0 || (v = db_col_text(st, 0)) == NULL)
		return BF_ERR_DB;
	n = snprintf(out, outsz, "%016llx-%s-%lld", (unsigned long long)s->gen_nonce, v,
	    (long long)db_col_int64(st, 1));
	return n < 0 || (size_t)n >= outsz ? BF_ERR_TOOBIG : 0;
}

int
store_generation(struct store *s, char *out, size_t outsz)
{
	int r;

	if (s == NULL || outsz == 0)
		return BF_ERR_INVALID;
	out[0] = '\0';
	if (s->nrd > 0)
		return store_generation_rd(s, out, outsz);
	store_lock(s);
	r = store_generation_conn(s, out, outsz);
	store_unlock(s);
	if (r != 0)
		out[0] = '\0';
	return r;
}

int64_t
store_now_s(void)
{
	return (int64_t)time(NULL);
}

double
store_now(void)
{
	return bf_wall();
}

/* Length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid. */
static size_t
utf8_seq(const unsigned char *p, size_t n)
{
	uint32_t cp, min;
	size_t len, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2, cp = p[0] & 0x1f, min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3, cp = p[0] & 0x0f, min = 0x800;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4, cp = p[0] & 0x07, min = 0x10000;
	} else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/*
 * Workload output and SSH replies are arbitrary bytes, and jansson refuses
 * strings that are not UTF-8; a bad byte becomes U+FFFD here instead of
 * failing a whole API answer later.
 */
char *
store_text_clean(const char *p, size_t n, size_t max, size_t *lenp)
{
	static const char repl[] = "\xef\xbf\xbd";
	const unsigned char *u = (const unsigned char *)p;
	size_t cap, i = 0, len = 0, k, kout;
	char *o;

	cap = n > (SIZE_MAX - 1) / 3 ? max : n * 3;
	if (cap > max)
		cap = max;
	if ((o = malloc(cap + 1)) == NULL)
		return NULL;
	while (i < n) {
		k = kout = utf8_seq(u + i, n - i);
		if (k == 0)
			k = 1, kout = 3;
		if (kout > cap - len)
			break;
		memcpy(o + len, kout == k ? p + i : repl, kout);
		i += k;
		len += kout;
	}
	o[len] = '\0';
	if (lenp != NULL)
		*lenp = len;
	return o;
}

int
store_page(struct store *s, enum store_q id, size_t limit, size_t size, store_row_fn fill,
    store_clear_fn clear, void **out, size_t *nout)
{
	struct db_stmt *st;
	char *a = NULL;
	size_t n = 0, i;
	int r;

	*out = NULL;
	*nout = 0;
	if (s == NULL)
		return BF_ERR_INVALID;
	if (limit == 0 || limit > STORE_MAX_PAGE)
		limit = STORE_MAX_PAGE;
	/* a page is at most STORE_MAX_PAGE small structs: no growing */
	if ((a = calloc(limit, size)) == NULL)
		return BF_ERR_ALLOC;
	s = store_rlock(s);	/* a reader: no transaction needed */
	if ((r = store_q(s, id, &st, "I", (int64_t)limit)) != 0)
		goto out;
	while (n < limit && (r = store_q_step(s, st)) == 1)
		if ((r = fill(st, a + n++ * size)) != 0)
			goto out;
	if (r < 0)
		goto out;
	*out = a;
	*nout = n;
	a = NULL;
	r = 0;
out:
	store_unlock(s);
	for (i = 0; a != NULL && i < n; i++)
		clear(a + i * size);
	free(a);
	return r;
}

int
store_col_dup(struct db_stmt *st, int i, char **out)
{
	const char *t;

	*out = NULL;
	if (db_col_type(st, i) == DB_NULL)
		return 0;
	if ((t = (const char *)db_col_text(st, i)) == NULL ||
	    (*out = strdup(t)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

/* Column i as text, NULL for SQL NULL; bytes that are not UTF-8 become
 * U+FFFD so that every view can show the row. */
int
store_col_text(struct db_stmt *st, int i, char **out)
{
	const char *t;

	*out = NULL;
	if (db_col_type(st, i) == DB_NULL)
		return 0;
	if ((t = (const char *)db_col_text(st, i)) == NULL ||
	    (*out = store_text_clean(t, db_col_bytes(st, i), SIZE_MAX - 1, NULL)) == NULL)
		return BF_ERR_ALLOC;
	return 0;
}

/* --- opening --- */


void
store_free(struct store *s)
{
	int i;

	if (s == NULL)
		return;
	if (s->db != NULL) {
		db_reset_all(s->db);
		for (i = 0; i < Q__COUNT; i++)
			db_finalize(s->st[i]);
		db_close(s->db);
	}
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->gen_mu);
	free(s->node);
	free(s->target);
	free(s);
}

/* This coordinator's default name in leases: its host name. */
static char *
store_default_node(void)
{
	char h[256];

	if (gethostname(h, sizeof(h) - 1) != 0)
		snprintf(h, sizeof(h), "benchfleetd");
	h[sizeof(h) - 1] = '\0';
	return strdup(h);
}

int
store_open(const char *target, struct store **out, struct bf_diag *d)
{
	struct store *s = NULL;
	const char *where = db_target_safe(target);
	int r;

	*out = NULL;
	if (target == NULL || *target == '\0') {
		bf_diag_set(d, "store", "no store path given");
		return BF_ERR_INVALID;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return BF_ERR_ALLOC;
	if (pthread_mutex_init(&s->mu, NULL) != 0 || pthread_mutex_init(&s->gen_mu, NULL) != 0) {
		free(s);
		return BF_ERR_SYS;
	}
	if ((s->node = store_default_node()) == NULL || (s->target = strdup(target)) == NULL) {
		r = BF_ERR_ALLOC;
		goto out;
	}
	s->pg = db_is_pg_target(target);
	/* wall time (a restart's tags differ) mixed with what tells two
	 * openings in one process or two processes apart */
	s->gen_nonce = (uint64_t)(bf_wall() * 1e6) ^ (uint64_t)bf_mono_ns() ^
	    ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)s;
	if ((r = db_open(target, &s->db, d)) != 0) {
		if (d != NULL && d->msg[0] != '\0') {
			char why[sizeof(d->msg)];

			snprintf(why, sizeof(why), "%s", d->msg);
			bf_diag_set(d, NULL, "store %s: %s", where, why);
		}
		goto out;
	}
	/* the name the notify triggers announce this coordinator's writes
	 * under (store-schema.c, step 18) */
	if ((r = db_set_node(s->db, s->node)) != 0) {
		bf_diag_set(d, NULL, "store %s: %s", where, db_last_error());
		goto out;
	}
	if ((r = store_schema_migrate(s, where, d)) != 0)
		goto out;
	*out = s;
	s = NULL;
	r = 0;
out:
	store_free(s);
	return r;
}

void
store_close(struct store *s)
{
	size_t i;

	for (i = 0; s != NULL && i < s->nrd; i++)
		store_free(s->rd[i]);
	if (s != NULL)
		free(s->rd);
	store_free(s);
}

int
store_set_node(struct store *s, const char *node)
{
	char *n;
	int r;

	if (s == NULL || store_check_str(node, "node", BF_MAX_NAME, 1, NULL) != 0)
		return BF_ERR_INVALID;
	if ((n = strdup(node)) == NULL)
		return BF_ERR_ALLOC;
	store_lock(s);
	free(s->node);
	s->node = n;
	r = db_set_node(s->db, n);
	store_unlock(s);
	return r;
}

const char *
store_node(const struct store *s)
{
	return s->node;
}

int
store_is_shared(const struct store *s)
{
	return s != NULL && s->pg;
}

const char *
store_target(const struct store *s)
{
	return s->target;
}

int
store_check_str(const char *v, const char *field, size_t max, int required, struct bf_diag *d)
{
	size_t n, i, k;

	if (v == NULL) {
		if (!required)
			return 0;
		bf_diag_set(d, field, "is required");
		return BF_ERR_INVALID;
	}
	if ((n = strlen(v)) == 0 || n > max) {
		bf_diag_set(d, field, "must be 1 to %zu bytes, not %zu", max, n);
		return BF_ERR_INVALID;
	}
	for (i = 0; i < n; i += k)
		if ((k = utf8_seq((const unsigned char *)v + i, n - i)) == 0 ||
		    (unsigned char)v[i] < 0x20) {
			bf_diag_set(d, field, "has a control character or invalid UTF-8 at byte %zu",
			    i);
			return BF_ERR_INVALID;
		}
	return 0;
}
