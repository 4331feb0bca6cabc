#!/usr/bin/env bash
# Crash safety: kill -9 the coordinator at 20+ random moments while a
# multi-run job executes on a real netns fleet, restart it each time, and
# let the job finish. The store must end with every sample exactly once,
# the job done, and no agent left running on any machine.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

KILLS=${BF_CRASH_KILLS:-20}
work=$(mktemp -d /tmp/bf-crash.XXXXXX)
defer "rm -rf '$work'"
fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 3 --prefix bfk \
	--subnet 10.85.0 --bridge bfbrk --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
defer 'kill -9 $DAEMON_PID 2>/dev/null'
opts=(--known-hosts "$fleet/known_hosts" --probe-interval 2)
start_daemon "$work" "${opts[@]}" || exit 1

while IFS=$'\t' read -r name addr port user key; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"crash\"}")
	check_eq "register $name" "$(status_of "$r")" 201
done < "$fleet/hosts.tsv"

# 12 runs x (1 warmup + 3 iterations) of a CPU loop of ~0.1 s each.
job='{"recipe":"cpu-loop","machines":{"class":"crash"},
      "matrix":{"loops":[20000000,21000000,22000000,23000000,24000000,25000000,
                         26000000,27000000,28000000,29000000,30000000,31000000]},
      "repetitions":{"iterations":3,"warmup":1}}'
r=$(api POST /api/v1/jobs "$job")
check_eq "submit" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)

for k in $(seq "$KILLS"); do
	# a random moment: 50..750 ms into this coordinator's life
	sleep "0.$(printf '%03d' $((RANDOM % 700 + 50)))"
	kill -9 "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	start_daemon "$work" "${opts[@]}" || { fail "restart $k"; break; }
done
echo "killed and restarted the coordinator $KILLS times"
st=$(wait_job "$id" 300)
check_eq "job completes after $KILLS kills" "$st" done

check_eq "every run done" "$(bf_sql "$work" "select count(*) from runs where job_id=$id and state='done'")" 12
for m in wall_s user_s sys_s maxrss_kb loops_per_s; do
	check_eq "samples of $m: 12 runs x 3" \
		"$(bf_sql "$work" "select count(*) from samples s join runs r on r.id=s.run_id where r.job_id=$id and s.metric='$m'")" 36
done
check_eq "no duplicated sample" \
	"$(bf_sql "$work" "select count(*) from (select run_id,boot,iteration,metric from samples group by 1,2,3,4 having count(*)>1) d")" 0
check_eq "iterations 0..2 of every run" \
	"$(bf_sql "$work" "select distinct iteration from samples s join runs r on r.id=s.run_id where r.job_id=$id order by iteration" | joined ,)" "0,1,2"
check_eq "every run has iterations 0..2 of wall_s" \
	"$(bf_sql "$work" "select count(*) from runs r where r.job_id=$id and (select count(distinct s.iteration) from samples s
		where s.run_id=r.id and s.metric='wall_s' and s.iteration between 0 and 2) = 3")" 12
again=$(bf_sql "$work" "select count(*) from runs where job_id=$id and attempt>1")
echo "runs interrupted by a kill and run again: $again of 12"
check "some kill hit a run in flight" test "$again" -gt 0
check_eq "API serves the same samples" \
	"$(curl -fsS "$URL/api/v1/jobs/$id/runs" | jq '[.runs[].samples[] | select(.metric=="wall_s")] | length')" 36
check_eq "no job half-written" "$(bf_sql "$work" "select count(*) from jobs j where not exists (select 1 from runs r where r.job_id=j.id)")" 0
sleep 1
# Only this fleet's agents count: those in the UTS namespace of one of its
# sshds (each host has its own hostname, hence its own UTS namespace).
fleet_uts=" "
for pf in "$fleet"/*/sshd.pid; do
	fleet_uts+="$(readlink "/proc/$(cat "$pf")/ns/uts" 2>/dev/null) "
done
check "the fleet's sshds are found" test "$(wc -w <<<"$fleet_uts")" -eq 3
fleet_agents() {
	local pid n=0
	for pid in $(pgrep -f 'benchfleet-agent step'); do
		case "$fleet_uts" in *" $(readlink "/proc/$pid/ns/uts" 2>/dev/null) "*) n=$((n + 1)) ;; esac
	done
	echo $n
}
# While the daemon runs, each idle worker keeps one agent waiting for its
# next step (runner_prestart): at most one per machine, none running a step.
check "at most one waiting agent per machine" test "$(fleet_agents)" -le 3
# SQLite: PRAGMA integrity_check; PostgreSQL: amcheck (pg_amcheck) of every
# table and index after 20 kill -9 of a client mid-transaction.
check_eq "integrity" "$(bf_integrity "$work")" ok
stop_daemon
# Its sessions closed, the waiting agents read EOF and exit; any agent of
# the 20 killed daemons' runs would still be here.
for _ in $(seq 50); do [ "$(fleet_agents)" = 0 ] && break; sleep 0.1; done
check_eq "no agent left running on the machines" "$(fleet_agents)" 0
check_sanitizers "$work/daemon.log"
finish
