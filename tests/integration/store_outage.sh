#!/usr/bin/env bash
# store_outage.sh: the PostgreSQL store goes away mid-job (a fast shutdown,
# 6 s down, then up again on the same port). The coordinator must not die:
# the API answers 5xx naming the store while it is away; steps whose
# samples could not be stored start over, runs whose end the store missed
# are taken over once their lease lapses (--lease 4); afterwards the job
# completes with every sample exactly once, and the event stream goes on.
# PostgreSQL only, whatever BF_TEST_STORE says.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$BF_SRC/tests/lib/pg.sh"

ITER=3 NRUNS=8 LIMIT=180
work=$(mktemp -d /tmp/bf-so.XXXXXX)
defer "rm -rf '$work'"
pgdir=$(mktemp -d /tmp/bf-so-pg.XXXXXX)
pg_up "$pgdir" || { echo "FAIL: PostgreSQL did not start"; exit 1; }
dburl=$(pg_createdb bfso) || { echo "FAIL: no database"; exit 1; }
mkdir -p "$work/d"
echo "$dburl" >"$work/d/store.url"

fleet=$work/fleet
"$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 2 --subnet 10.97.0 --prefix bfso \
	--bridge bfbr97 --force >"$work/fleet.log" 2>&1 || { cat "$work/fleet.log"; echo "FAIL: fleet"; exit 1; }
defer "'$BF_SRC/tools/netns-fleet' down --dir '$fleet' >/dev/null 2>&1"

start_daemon "$work/d" --node so1 --lease 4 --known-hosts "$fleet/known_hosts" || exit 1
defer stop_daemon
check_contains "the daemon uses the PostgreSQL store" "$(cat "$work/d/daemon.log")" "$dburl"
while IFS=$'\t' read -r name addr port user key; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"so\"}")
	check_eq "register $name" "$(status_of "$r")" 201
done <"$fleet/hosts.tsv"
curl -sN "$URL/api/v1/events" >"$work/sse" 2>/dev/null &
SSE=$!
defer "kill $SSE 2>/dev/null"

# loops: about a second per iteration here
r=$(api POST /api/v1/jobs "{\"recipe\":\"cpu-loop\",\"machines\":{\"class\":\"so\"},
	\"matrix\":{\"loops\":[$(seq -s, 150000001 $((150000000 + NRUNS)))]},\"repetitions\":{\"iterations\":$ITER}}")
check_eq "submit" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)

# Down once two runs are done and others are running.
for i in $(seq 600); do
	d=$(curl -fsS "$URL/api/v1/jobs/$id" | jq -r .runs_done)
	[ "${d:-0}" -ge 2 ] && break
	sleep 0.1
done
check "two runs done before the outage" test "${d:-0}" -ge 2
_pg_as_postgres "$PG_BIN/pg_ctl" -D "$pgdir/pg" -m fast -w stop >/dev/null 2>&1
check "PostgreSQL is down" test "$("$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; echo $?)" != 0
sleep 2
r=$(api GET "/api/v1/jobs/$id")
check_eq "the API answers 503 while the store is away" "$(status_of "$r")" 503
check_contains "... and says the store failed" "$(body_of "$r")" "the store failed"
check "the daemon lives through the outage" kill -0 "$DAEMON_PID"
sleep 4
_pg_as_postgres "$PG_BIN/pg_ctl" -D "$pgdir/pg" -l "$pgdir/run/server.log" -w -t 60 \
	-o "-p $PG_PORT" start >/dev/null 2>&1
check "PostgreSQL is back" "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"
n_before=$(grep -c '^event: run' "$work/sse")

check_eq "the job completes" "$(wait_job "$id" $LIMIT)" done
check "the daemon still runs" kill -0 "$DAEMON_PID"
check_eq "every run done" \
	"$(bf_sql "$work/d" "select count(*) from runs where job_id = $id and state = 'done'")" $NRUNS
check_eq "every sample exactly once: wall_s" \
	"$(bf_sql "$work/d" "select count(*) from samples s join runs r on r.id = s.run_id where r.job_id = $id and s.metric = 'wall_s'")" \
	$((NRUNS * ITER))
check_eq "iterations 0..$((ITER - 1)) of every run" \
	"$(bf_sql "$work/d" "select count(distinct (s.run_id, s.iteration)) from samples s join runs r on r.id = s.run_id where r.job_id = $id")" \
	$((NRUNS * ITER))
check_eq "no run left running or queued" \
	"$(bf_sql "$work/d" "select count(*) from runs where state in ('queued','running')")" 0
check_eq "no machine left leased to a run" \
	"$(bf_sql "$work/d" "select count(*) from machines where state = 'running'")" 0
check "run events go on after the outage (LISTEN reconnected or local)" \
	test "$(grep -c '^event: run' "$work/sse")" -gt "$n_before"
redone=$(bf_sql "$work/d" "select count(*) from runs where job_id = $id and attempt > 1")
echo "runs started over after the outage: $redone of $NRUNS"
grep -E 'store|lease' "$work/d/daemon.log" | tail -5 | sed 's/^/  | /'
stop_daemon
check_sanitizers "$work/d/daemon.log"
finish
