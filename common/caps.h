/*
 * caps.h: every cap on untrusted input, by name. Change them here only.
 */
#ifndef BF_CAPS_H
#define BF_CAPS_H

#define BF_MAX_API_BODY		(1024 * 1024)	/* HTTP request body */
#define BF_MAX_API_BODIES	(64 * 1024 * 1024) /* bodies buffered at once; more: 503 */
#define BF_MAX_API_SLOW		16		/* slow handlers (fetch, probe, report) at once; more: 503 */
#define BF_MAX_CONNECTIONS	1000		/* HTTP connections in all */
#define BF_MAX_CONN_PER_IP	512		/* ... from one address (refused at accept: past headers) */
#define BF_MAX_CONN_SLOW	256		/* waiting for headers; a new one evicts the oldest */
#define BF_MAX_CONN_SLOW_PER_IP	16		/* ... from one address */
#define BF_MAX_CONN_TARPIT	4096		/* evicted sockets held open till their deadline */
#define BF_CONN_TARPIT_PACE	25		/* ... closed per 250 ms at most (100/s) */
#define BF_CONN_EVICT_GRACE_MS	250		/* a connection younger is spared ... */
#define BF_MAX_CONN_WAIT_PER_IP	384		/* ... up to this many waiting from one address */
#define BF_MAX_CONN_WAIT	768		/* ... and this many in all */
#define BF_CONN_PEEK		4096		/* a request head late, not slow, fits this */
#define BF_HTTP_HEADER_DEADLINE_S 10		/* request headers complete, trickle or not */
#define BF_HTTP_BODY_DEADLINE_S	60		/* a request body, from its headers on */
#define BF_HTTP_RETRY_AFTER_S	5		/* Retry-After of every 503 */
#define BF_MAX_ALLOW_HOSTS	32		/* --allow-host names */
#define BF_MAX_RECIPE_FILE	(256 * 1024)	/* one recipe document */
#define BF_MAX_JSON_DEPTH	32		/* nesting of any JSON we parse */
/* Values (containers, keys and scalars) and containers of one JSON document
 * of up to BF_MAX_API_BODY bytes, counted before jansson builds a tree
 * (jx_loads); larger documents get these per started MiB. jansson spends
 * ~235 bytes on an empty object, ~140 on an array, 40-90 on a scalar, so
 * a document at both caps costs at most ~17 MB of tree. A 1 MiB bundle
 * (samples of ~90 bytes, 7 values each) needs ~12k containers, ~80k values. */
#define BF_MAX_JSON_NODES	(128 * 1024)
#define BF_MAX_JSON_CONTAINERS	(32 * 1024)
#define BF_MAX_JSON_PARSES	4		/* concurrent jx_loads; more wait */
#define BF_MAX_NAME		64		/* recipe, machine, param, axis names */
#define BF_MAX_JOBS_PAGE	1000		/* jobs in one GET /jobs page */
#define BF_MAX_JOBS_Q		128		/* GET /jobs?q= search text, bytes */
#define BF_MAX_STR		4096		/* a string parameter value */
#define BF_MAX_ARGV		256		/* elements of a command */
#define BF_MAX_ARG		8192		/* one rendered argv element */
#define BF_MAX_PARAMS		64		/* parameters of a recipe */
#define BF_MAX_METRICS		32		/* metrics of a recipe */
#define BF_MAX_EXPECT		32		/* expectations of a recipe */
#define BF_MAX_EXPECT_WHEN	16		/* "when" keys of one */
#define BF_MAX_AXES		16		/* axes of a matrix */
#define BF_MAX_AXIS_VALUES	64		/* values on one axis */
#define BF_MAX_CELLS		4096		/* cells of an expanded matrix */
#define BF_MAX_ITERATIONS	10000
#define BF_MAX_WARMUP		100		/* warmup iterations of a run */
#define BF_MAX_GAP_MS		60000		/* repetitions.gap_ms: a pause between iterations */
#define BF_MAX_BOOTS		100
#define BF_MAX_TIMEOUT_S	86400		/* one iteration's timeout, seconds */
#define BF_MAX_LOG_LINE		4096		/* one log line; longer is cut */
#define BF_MAX_AGENT_LINE	(64 * 1024)	/* one JSON line from the agent */
#define BF_MAX_STEP		(256 * 1024)	/* step JSON sent to the agent */
#define BF_MAX_AGENT_OUTPUT	(16 * 1024 * 1024) /* one step's JSON lines */
#define BF_MAX_CAPTURE		(4 * 1024 * 1024) /* workload stdout kept by the agent */
#define BF_MAX_REGEX		512		/* a metric's extraction regex */
#define BF_MAX_HOST		253
#define BF_MAX_BUNDLE		(64 * 1024 * 1024) /* a result bundle posted to the API */
/* A bundle fetched by URL: the peer is anyone a submitter names, so far
 * less than a posted one, and its JSON tree is capped by node count
 * (jansson spends ~80 bytes per node: 256 Ki nodes are ~20 MB). */
#define BF_MAX_URL_BUNDLE	(4 * 1024 * 1024)
#define BF_MAX_URL_BUNDLE_NODES	(256 * 1024)
#define BF_MAX_FETCHES		2		/* URL fetches at once; more get 503 */
#define BF_FETCH_TIMEOUT_S	30		/* one fetch, start to end */
#define BF_FETCH_CONNECT_S	5		/* its TCP (and TLS) connect */
#define BF_FETCH_RESOLVE_S	5		/* its name lookup */
#define BF_MAX_RESOLVING	4		/* lookups at once, abandoned ones included */
#define BF_FETCH_MIN_RATE	1024		/* bytes/s, below which for ... */
#define BF_FETCH_MIN_RATE_S	10		/* ... this long a fetch is dropped */
#define BF_MAX_PEER_ALLOW	64		/* CIDRs of --peer-allow */
/* store_tx: times one transaction runs when PostgreSQL ends it on a
 * serialization failure or a deadlock (40001, 40P01); then BF_ERR_DB. */
#define BF_MAX_TX_ATTEMPTS	5
#define BF_MAX_API_RESPONSE	(64 * 1024 * 1024) /* a response the CLI reads (reports, bundles) */
/* An answer the CLI reads over plain http:// (cli/http-parse.c): its head
 * (status line and header lines, interim 100 answers and chunked trailers
 * counted in) and one line of it or of a chunk's size line. */
#define BF_MAX_HTTP_RESP_HEAD	(64 * 1024)
#define BF_MAX_HTTP_RESP_LINE	(8 * 1024)
/* The environment snapshot of a step (agent/snapshot.c): files read, bytes
 * kept of one value, and the whole object, which must fit in one agent line
 * with room for its envelope; keys past the total are dropped and counted.
 * A binary of the step is hashed only up to BF_MAX_SNAPSHOT_HASH bytes. */
#define BF_MAX_SNAPSHOT_FILES	8192
#define BF_MAX_SNAPSHOT_VALUE	4096
#define BF_MAX_SNAPSHOT		(56 * 1024)
#define BF_MAX_SNAPSHOT_BINS	16		/* distinct binaries a step executes */
#define BF_MAX_SNAPSHOT_HASH	(256 * 1024 * 1024)
#define BF_SNAPSHOT_CMD_S	10		/* rpm -qf, cc --version */
/* An agent started ahead of its step (runner_prestart) waits for it at
 * most BF_AGENT_STEP_WAIT_S, then exits: nothing of ours stays on an idle
 * machine. The coordinator uses one no older than BF_PRESTART_KEEP_MS, so
 * it never sends a step to an agent that is about to give up. */
#define BF_AGENT_STEP_WAIT_S	60
#define BF_AGENT_STEP_WAIT_MAX	3600		/* step --wait's range: 1.. */
#define BF_PRESTART_KEEP_MS	((BF_AGENT_STEP_WAIT_S - 15) * 1000)
/* Environment diffs (common/envdiff.c): keys listed per diff, distinct
 * values listed per drifting key, bytes of one value (or label) printed.
 * Past each cap the rest is counted in the output, not listed. */
#define BF_MAX_ENVDIFF_KEYS	512
#define BF_MAX_ENVDIFF_VALUES	8
#define BF_MAX_ENVDIFF_TEXT	1024
/* Counters of one iteration (agent/counters.c): /proc/vmstat fields and
 * mTHP stat files read, perf events opened (the default set plus the
 * step's named raw events), and the one "counters" line. */
#define BF_MAX_VMSTAT_FIELDS	512
#define BF_MAX_MTHP_STATS	1024
#define BF_MAX_PMU_EVENTS	16		/* of which the step may name 8 */
#define BF_MAX_STEP_PMU		8
#define BF_MAX_COUNTERS_LINE	(48 * 1024)
/* Profiles (job "profile": {"perf": "record"}; docs/evidence.md): perf's
 * sampling frequency, and the artifacts of the one profiled iteration.
 * Past its cap an artifact is dropped (and said so); the run stays valid.
 * An artifact travels in lines of BF_ARTIFACT_CHUNK bytes, base64: 4/3 of
 * it plus the envelope stays well within BF_MAX_AGENT_LINE. */
#define BF_MAX_PROFILE_FREQ	20000		/* Hz */
#define BF_PROFILE_DEFAULT_FREQ	999
#define BF_MAX_ARTIFACT_PERF	(32 * 1024 * 1024)	/* perf.data */
#define BF_MAX_ARTIFACT_FOLDED	(4 * 1024 * 1024)	/* its folded stacks */
#define BF_ARTIFACT_CHUNK	(36 * 1024)
#define BF_MAX_PERF_SCRIPT	(256 * 1024 * 1024)	/* perf script text read to fold */
#define BF_MAX_FOLD_FRAMES	512		/* frames of one stack; deeper are cut */
#define BF_MAX_FOLD_SYMBOL	1024		/* bytes of one frame's symbol */
/* Distinct snapshots one job report loads for its evidence checks (~80 KB
 * of tree each); runs past it are counted in a warning, not checked. */
#define BF_MAX_REPORT_SNAPSHOTS	512

/* A bisection (issue 18; coordinator/bisect.h). The commit list good..bad
 * is resolved on the builder and held in the store as JSON (41 bytes a
 * commit); a step is a job of 3 kernels x boots_per_round boots. */
#define BF_MAX_BISECT_COMMITS	4096		/* commits in good..bad */
#define BF_MAX_BISECT_REV	128		/* bytes of a good/bad revision name */
#define BF_MAX_BISECT_BOOTS	10		/* boots_per_round */
#define BF_MAX_BISECT_ROUNDS	16		/* max_rounds: jobs for one step */
#define BF_MAX_BISECT_STEPS	64		/* max_steps */
#define BF_MAX_BISECT_RUNNING	16		/* bisections running at once */
#define BF_MAX_BISECT_THRESHOLD	1000.0		/* threshold_pct */

/* A cap as a string literal: BF_STR(BF_HTTP_RETRY_AFTER_S) is "5". */
#define BF_STR_(x)		#x
#define BF_STR(x)		BF_STR_(x)

#endif
