#!/usr/bin/env bash
# Lost machines: a host's link goes down mid-run (ip link down in the
# fleet), another host's sshd is killed with its sessions mid-run. The
# runs are retried elsewhere, the job completes on the other hosts, the
# reasons are stored, and the hosts come back once reachable.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-lost.XXXXXX)
defer "rm -rf '$work'"
fleet=$work/fleet
nf() { bash "$BF_SRC/tools/netns-fleet" "$@"; }
nf up --dir "$fleet" --hosts 3 --prefix bfl --subnet 10.86.0 --bridge bfbrl --force ||
	{ echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
start_daemon "$work" --known-hosts "$fleet/known_hosts" --link-timeout 6 \
	--probe-interval 2 --probe-failures 2 || exit 1
defer stop_daemon
while IFS=$'\t' read -r name addr port user key; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"lost\"}")
	check_eq "register $name" "$(status_of "$r")" 201
done < "$fleet/hosts.tsv"

# 6 runs of 2 iterations of ~1-2 s each.
job='{"recipe":"cpu-loop","machines":{"class":"lost"},
      "matrix":{"loops":[300000000,310000000,320000000,330000000,340000000,350000000]},
      "repetitions":{"iterations":2}}'
r=$(api POST /api/v1/jobs "$job")
check_eq "submit" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)

# Wait until bfl1 and bfl2 are each running a run, then break them.
for _ in $(seq 200); do
	busy=$(bf_sql "$work" "select count(distinct machine) from runs where job_id=$id and state='running' and machine in ('bfl1','bfl2')")
	[ "$busy" = 2 ] && break
	sleep 0.1
done
check_eq "bfl1 and bfl2 busy" "$busy" 2
run1=$(bf_sql "$work" "select id from runs where job_id=$id and state='running' and machine='bfl1'")
run2=$(bf_sql "$work" "select id from runs where job_id=$id and state='running' and machine='bfl2'")
t0=$(date +%s.%N)
nf link-down --dir "$fleet" bfl1
nf kill-sshd --dir "$fleet" bfl2 --all

st=$(wait_job "$id" 240)
t1=$(date +%s.%N)
check_eq "job completes on the remaining host" "$st" done
echo "job finished $(echo "$t1 - $t0" | bc) s after the failures"
check_eq "every run done" "$(bf_sql "$work" "select count(*) from runs where job_id=$id and state='done'")" 6
for rid in $run1 $run2; do
	check "run $rid retried" test "$(bf_sql "$work" "select attempt from runs where id=$rid")" -ge 2
	why=$(bf_sql "$work" "select line from run_logs where run_id=$rid and stream='coord' order by seq" | joined ' | ')
	check_contains "run $rid: reason stored" "$why" "lost on"
	echo "run $rid: $why"
	check_eq "run $rid: 2 samples, none from the broken attempt" \
		"$(bf_sql "$work" "select count(*) from samples where run_id=$rid and metric='wall_s'")" 2
done
check_eq "lost runs finished elsewhere" \
	"$(bf_sql "$work" "select count(*) from runs where id in ($run1,$run2) and machine in ('bfl1','bfl2')")" 0
m1=$(curl -fsS "$URL/api/v1/machines/bfl1")
check_eq "bfl1 offline" "$(jq -r .state <<<"$m1")" offline
check "bfl1 last_error says why" test -n "$(jq -r '.last_error // empty' <<<"$m1")"
echo "bfl1: $(jq -r .last_error <<<"$m1")"
check_eq "bfl2 offline" "$(curl -fsS "$URL/api/v1/machines/bfl2" | jq -r .state)" offline

# Both come back once reachable again.
nf link-up --dir "$fleet" bfl1
nf start-sshd --dir "$fleet" bfl2 >/dev/null
for _ in $(seq 100); do
	s1=$(curl -fsS "$URL/api/v1/machines/bfl1" | jq -r .state)
	s2=$(curl -fsS "$URL/api/v1/machines/bfl2" | jq -r .state)
	[ "$s1" = idle ] && [ "$s2" = idle ] && break
	sleep 0.2
done
check_eq "bfl1 back" "$s1" idle
check_eq "bfl2 back" "$s2" idle
# And they take work again.
r=$(api POST /api/v1/jobs '{"recipe":"echo","machines":{"names":["bfl1","bfl2"]},"matrix":{"msg":["a","b","c","d"]},"repetitions":{"iterations":1}}')
id2=$(body_of "$r" | jq -r .id)
check_eq "second job" "$(wait_job "$id2" 60)" done
stop_daemon
check_sanitizers "$work/daemon.log"
finish
