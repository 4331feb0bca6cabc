#!/usr/bin/env bash
# multi_coord.sh: two coordinators share one PostgreSQL store (always
# PostgreSQL, whatever BF_TEST_STORE says) and one 4-host netns fleet. A
# 16-run job is submitted to c1; c2 is killed with SIGKILL while it holds a
# run. c1 takes the lapsed leases over (--lease 4) and finishes the job.
# Every run of the recipe takes a non-blocking flock on a lock file of its
# own on the shared filesystem (the netns hosts see this machine's files),
# so two executions of one run at the same time are caught, and it records
# each start of an execution. Checked: the job done through c1 in time,
# every sample exactly once, no execution ever concurrent with another of
# the same run, one execution per iteration for the runs c2 never held,
# and both coordinators' event streams showing the runs the other one
# executed (LISTEN/NOTIFY between coordinators), and a change committed
# behind both of them too (the store's notify triggers).
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$BF_SRC/tests/lib/pg.sh"

ITER=2 NRUNS=16 LEASE=4 LIMIT=150
help=$("$BIN/benchfleetd" --help 2>&1)
for o in --node --lease; do
	case "$help" in *"$o "*) ;; *) echo "FAIL: benchfleetd --help has no $o option"; exit 1 ;; esac
done

work=$(mktemp -d /tmp/bf-mc.XXXXXX)
defer "rm -rf '$work'"
pg_up "$(mktemp -d /tmp/bf-mc-pg.XXXXXX)" || { echo "FAIL: PostgreSQL did not start"; exit 1; }
dburl=$(pg_createdb bfmc) || { echo "FAIL: no database"; exit 1; }
mkdir -p "$work/c1" "$work/c2" "$work/locks" "$work/recipes"
# One store for both: start_daemon passes DIR/store.url as --store.
echo "$dburl" >"$work/c1/store.url"
echo "$dburl" >"$work/c2/store.url"

cp "$BF_SRC"/recipes/*.json "$work/recipes/"
L=$work/locks
# $0 is the run's lock file, $1 its tag. A second execution of the same run
# while one holds the lock prints CONCURRENT, leaves a .concurrent file
# and exits 99. No braces in the script: they are the recipe's slots.
cat >"$work/recipes/mc-lock.json" <<JSON
{"name": "mc-lock",
 "description": "multi_coord.sh: one run at a time per tag, each start recorded",
 "params": {"tag": {"type": "int", "min": 1, "max": 1000, "default": 1}},
 "command": ["sh", "-c",
   "exec 9>>\"\$0\"; if ! flock -n 9; then echo CONCURRENT; echo \"\$1\" >>\"\$0.concurrent\"; exit 99; fi; echo \"\$1 \$(date +%s%N)\" >>\"\$0.starts\"; sleep 1.5; echo value: 1",
   "$L/lock.{tag}", "{tag}"],
 "timeout_s": 60,
 "metrics": [
   {"name": "wall_s", "unit": "s", "better": "lower", "source": "wall_s"},
   {"name": "value", "unit": "1", "better": "higher", "source": "stdout", "regex": "value: ([0-9.]+)"}]}
JSON

fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 4 --prefix bfmc \
	--subnet 10.95.0 --bridge bfbr95 --force || { echo "FAIL: fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"

export BF_RECIPES=$work/recipes
opts=(--known-hosts "$fleet/known_hosts" --lease "$LEASE" --probe-interval 2)
start_daemon "$work/c1" --node c1 "${opts[@]}" || { echo "FAIL: c1 did not start"; exit 1; }
PID1=$DAEMON_PID URL1=$URL
defer 'kill $PID1 2>/dev/null; wait $PID1 2>/dev/null'
start_daemon "$work/c2" --node c2 "${opts[@]}" || { echo "FAIL: c2 did not start"; exit 1; }
PID2=$DAEMON_PID URL2=$URL
defer 'kill -9 $PID2 2>/dev/null; wait $PID2 2>/dev/null'
check_contains "c1 uses the PostgreSQL store" "$(cat "$work/c1/daemon.log")" "$dburl"
check_contains "c2 uses the same store" "$(cat "$work/c2/daemon.log")" "$dburl"
check_eq "runs.owner names the coordinator holding a run" \
	"$(bf_sql "$work/c1" "select count(*) from information_schema.columns where table_name='runs' and column_name='owner'")" 1

# Both event streams, from before the job.
curl -sN "$URL1/api/v1/events" >"$work/c1.sse" 2>/dev/null &
SSE1=$!
curl -sN "$URL2/api/v1/events" >"$work/c2.sse" 2>/dev/null &
SSE2=$!
defer 'kill $SSE1 $SSE2 2>/dev/null'

# A coordinator drives a machine while it holds the machine's lease, renewed
# on every pass of its worker, so the coordinator a machine is registered
# through, whose worker starts at once, keeps it while it lives: two
# machines through each, else c2 would never get to run anything.
n=0
while IFS=$'\t' read -r name addr port user key; do
	n=$((n + 1))
	if [ $n -le 2 ]; then URL=$URL1 via=c1; else URL=$URL2 via=c2; fi
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"mc\"}")
	check_eq "register $name through $via" "$(status_of "$r")" 201
done <"$fleet/hosts.tsv"
for u in "$URL1" "$URL2"; do
	check_eq "$u lists all 4 machines of the shared store" \
		"$(curl -fsS "$u/api/v1/machines" | jq '[.machines[] | select(.class=="mc")] | length')" 4
done
URL=$URL1

r=$(api POST /api/v1/jobs "{\"recipe\":\"mc-lock\",\"machines\":{\"class\":\"mc\"},
	\"matrix\":{\"tag\":$(seq -s, 1 $NRUNS | sed 's/.*/[&]/')},\"repetitions\":{\"iterations\":$ITER,\"warmup\":0}}")
check_eq "submit to c1" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
t0=$(date +%s)

# Who holds which run, sampled from the store every 0.2 s: "ms|run|owner".
(while :; do
	bf_sql "$work/c1" "select id, owner from runs where job_id=$id and state='running' and owner is not null" |
		sed "s/^/$(date +%s%3N)|/"
	sleep 0.2
done) >"$work/owners" 2>"$work/owners.err" &
POLL=$!
defer 'kill $POLL 2>/dev/null'

# only_done OWNER: runs of the job done now that OWNER, and only OWNER,
# was seen holding.
only_done() {
	comm -23 <(awk -F'|' -v o="$1" '$3 == o { print $2 }' "$work/owners" | sort -u) \
		<(awk -F'|' -v o="$1" '$3 != o { print $2 }' "$work/owners" | sort -u) |
		sort | comm -12 - <(bf_sql "$work/c1" "select id from runs where job_id=$id and state='done'" | sort)
}
# Kill c2 once each coordinator has finished a run of its own and c2 has
# just started another (so it dies in the middle of an execution). The
# fresh run is looked up last, right before the kill: on a loaded machine
# the only_done queries alone can outlast a run.
for _ in $(seq 600); do
	[ -n "$(only_done c1)" ] && [ -n "$(only_done c2)" ] && break
	sleep 0.1
done
c1done=$(only_done c1 | tr '\n' ' ')
c2done=$(only_done c2 | tr '\n' ' ')
sleep 0.3	# the done events of those runs reach the other stream
held=
for _ in $(seq 600); do
	held=$(bf_sql "$work/c1" "select id from runs where job_id=$id and state='running' and owner='c2'
		and started_at > extract(epoch from now()) - 1.0 limit 1")
	[ -n "$held" ] && break
	sleep 0.1
done
# ... once the owners poller has seen it too (the run lasts 3 s)
for _ in $(seq 15); do
	[ -z "$held" ] || grep -q "|$held|c2\$" "$work/owners" && break
	sleep 0.1
done
check "c2 holds a fresh run after each coordinator finished one (run ${held:-none})" test -n "$held"
if [ -z "$held" ]; then
	echo "machines (name|owner|owner_until|state):" >&2
	bf_sql "$work/c1" "select name, owner, owner_until, state from machines order by name" >&2
	held=$(bf_sql "$work/c1" "select id from runs where job_id=$id and state='running' and owner='c2' limit 1")
fi
kill_ms=$(date +%s%3N)
kill -9 "$PID2"
wait "$PID2" 2>/dev/null
echo "killed c2 while it held run $held, $(($(date +%s) - t0)) s into the job"

URL=$URL1
st=$(wait_job "$id" "$LIMIT")
t_done=$(date +%s%3N)
check_eq "job done through c1 within ${LIMIT} s of the kill" "$st" done
echo "job took $(($(date +%s) - t0)) s"
sse_runs() { # sse_runs FILE: "id state" of each run event
	awk '/^event: run$/ { r = 1; next } r && /^data: / { sub(/^data: /, ""); print; r = 0 } /^$/ { r = 0 }' "$1" |
		jq -r 'select(.job_id == '"$id"') | "\(.id) \(.state)"' 2>/dev/null
}
# The job's state is read from the store, where the last runs' done is
# committed before their events go out (read back, through the privsep
# pipe, to each stream): on a loaded machine that takes more than a
# moment. Wait for them, up to 15 s, rather than for a fixed time.
for _ in $(seq 150); do
	[ "$(sse_runs "$work/c1.sse" | awk '$2 == "done" { print $1 }' | sort -u | wc -l)" -ge "$NRUNS" ] && break
	sleep 0.1
done
echo "c1's stream had every run's done $(($(date +%s%3N) - t_done)) ms after the store said the job was done"
kill "$POLL" 2>/dev/null

# --- the store ---
check_eq "every run done" "$(bf_sql "$work/c1" "select count(*) from runs where job_id=$id and state='done'")" "$NRUNS"
check_eq "$ITER samples of value per run" \
	"$(bf_sql "$work/c1" "select count(*) from runs r where r.job_id=$id and
		(select count(*) from samples s where s.run_id=r.id and s.metric='value') = $ITER")" "$NRUNS"
check_eq "$ITER samples of wall_s per run" \
	"$(bf_sql "$work/c1" "select count(*) from runs r where r.job_id=$id and
		(select count(*) from samples s where s.run_id=r.id and s.metric='wall_s') = $ITER")" "$NRUNS"
check_eq "no duplicate (run_id, boot, iteration, metric)" \
	"$(bf_sql "$work/c1" "select count(*) from (select run_id, boot, iteration, metric from samples
		group by run_id, boot, iteration, metric having count(*) > 1) d")" 0
check_eq "no run exited 99 (a concurrent execution)" \
	"$(bf_sql "$work/c1" "select count(*) from runs where job_id=$id and exit_status=99")" 0
check_eq "no CONCURRENT in the run logs" \
	"$(bf_sql "$work/c1" "select count(*) from run_logs l join runs r on r.id=l.run_id
		where r.job_id=$id and l.line like '%CONCURRENT%'")" 0
check_eq "no execution ran beside another of the same run" \
	"$(cat "$L"/*.concurrent 2>/dev/null | sort -n | tr '\n' ' ')" ""
check_eq "store integrity (amcheck)" "$(bf_integrity "$work/c1")" ok

# --- executions per run ---
runs=$(curl -fsS "$URL1/api/v1/jobs/$id/runs")
c2runs=" $(awk -F'|' '$3=="c2" {print $2}' "$work/owners" | sort -un | tr '\n' ' ')"
echo "runs c2 held: $c2runs; done before the kill by c1 alone: $c1done, by c2 alone: $c2done"
check "the poller saw c2 hold run $held" grep -q " $held " <<<"$c2runs "
while read -r rid tag attempt; do
	n=$(cat "$L/lock.$tag.starts" 2>/dev/null | wc -l)
	case "$c2runs " in
	*" $rid "*) check "run $rid (tag $tag), held by c2: >= $ITER executions (got $n, attempt $attempt)" test "$n" -ge "$ITER" ;;
	*) check_eq "run $rid (tag $tag), never held by c2: executions" "$n" "$ITER" ;;
	esac
done < <(jq -r '.runs[] | "\(.id) \(.values.tag) \(.attempt)"' <<<"$runs")
check_eq "c2's run ${held:-none} was taken over and run again" \
	"$(bf_sql "$work/c1" "select case when attempt > 1 then 'yes' else 'no' end from runs where id=${held:-0}")" yes

# --- events across coordinators ---
ev1=$(sse_runs "$work/c1.sse")
ev2=$(sse_runs "$work/c2.sse")
for rid in $c2done; do
	check "c1's event stream shows run $rid, run by c2 alone, starting" grep -q "^$rid running$" <<<"$ev1"
	check "c1's event stream shows run $rid, run by c2 alone, done" grep -q "^$rid done$" <<<"$ev1"
done
for rid in $c1done; do
	check "c2's event stream shows run $rid, run by c1 alone, starting" grep -q "^$rid running$" <<<"$ev2"
	check "c2's event stream shows run $rid, run by c1 alone, done" grep -q "^$rid done$" <<<"$ev2"
done
check_eq "c1's event stream shows every run done" \
	"$(awk '$2 == "done" { print $1 }' <<<"$ev1" | sort -u | wc -l)" "$NRUNS"
for rid in $(bf_sql "$work/c1" "select id from runs where job_id=$id order by id"); do
	grep -q "^$rid done$" <<<"$ev1" && continue
	echo "c1's stream lacks run $rid done: finished $(bf_sql "$work/c1" "select (finished_at * 1000)::bigint - $kill_ms from runs where id=$rid") ms after the kill," \
		"attempt $(bf_sql "$work/c1" "select attempt from runs where id=$rid"), owners seen: $(awk -F'|' -v r="$rid" '$2 == r { print $3 }' "$work/owners" | sort -u | tr '\n' ' ')" >&2
done

# A change committed by a writer that never published it (a coordinator
# killed between its commit and its events; psql here) still reaches c1's
# stream: the store's trigger sends its note in the commit (schema step 18).
hr=$(bf_sql "$work/c1" "select min(id) from runs where job_id=$id")
bf_sql "$work/c1" "update runs set error = 'set by hand $hr' where id = $hr" >/dev/null
for _ in $(seq 100); do
	grep -q "set by hand $hr" "$work/c1.sse" && break
	sleep 0.05
done
check_eq "c1's stream shows a run change committed behind every coordinator" \
	"$(awk '/^event: run$/ { r = 1; next } r && /^data: / { sub(/^data: /, ""); print; r = 0 }' "$work/c1.sse" |
		jq -r 'select(.id == '"$hr"' and .error == "set by hand '"$hr"'") | .state' 2>/dev/null)" done

# Serialization conflicts between the two are retried, counted, and none
# of them ran out of attempts (the log would say so).
m=$(curl -fsS "$URL1/metrics")
check "c1's metrics count transaction retries" grep -Eq '^benchfleet_store_tx_retries_total [0-9]+$' <<<"$m"
check_eq "no transaction gave up" "$(awk '$1 == "benchfleet_store_tx_gave_up_total" { print $2 }' <<<"$m")" 0
echo "c1: $(grep '^benchfleet_store_tx' <<<"$m" | tr '\n' ' ')"

kill "$PID1" 2>/dev/null
wait "$PID1" 2>/dev/null
check_sanitizers "$work/c1/daemon.log"
check_sanitizers "$work/c2/daemon.log"
finish
