#!/usr/bin/env bash
# The seeds' knobs through a real job on the netns fleet (issue 20). The
# netns hosts share this machine's /sys and /proc, so every knob is set on
# this kernel: one machine runs each job, and each value is put back here
# on exit whatever happens. A cpu-loop job sets numa_balancing (when the
# kernel has it), use_zero_page, khugepaged_scan_sleep_ms, a 2 MiB hugetlb
# pool and compact_memory before each iteration: each run's knob record
# reads them back, its snapshot shows them in force, the kernel compacted,
# and afterwards the machine is as it was. A second job spans knobs this
# kernel lacks through knobs_optional (recorded "absent") beside a per-node
# pool; a missing knob that is not optional fails its run, naming it.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

[ "$(id -u)" = 0 ] || { echo "needs root: it sets this kernel's knobs"; exit 1; }
THP=/sys/kernel/mm/transparent_hugepage
ZP=$THP/use_zero_page
SS=$THP/khugepaged/scan_sleep_millisecs
HP=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
HPN=/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages
NB=/proc/sys/kernel/numa_balancing
for f in "$ZP" "$SS" "$HP" /proc/sys/vm/compact_memory; do
	[ -w "$f" ] || { echo "$f is not writable here"; exit 1; }
done
zp0=$(cat "$ZP"); ss0=$(cat "$SS"); hp0=$(cat "$HP")
defer "echo '$zp0' > '$ZP'; echo '$ss0' > '$SS'; echo '$hp0' > '$HP'"
if [ -w "$NB" ]; then
	nb0=$(cat "$NB")
	defer "echo '$nb0' > '$NB'"
fi
if [ -w "$HPN" ]; then
	hpn0=$(cat "$HPN")
	defer "echo '$hpn0' > '$HPN'"
fi
work=$(mktemp -d /tmp/bf-kseed.XXXXXX)
defer "rm -rf '$work'"
fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 1 --prefix bfkn \
	--subnet 10.121.0 --bridge bfbrkn --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
start_daemon "$work" --known-hosts "$fleet/known_hosts" || exit 1
defer stop_daemon
while IFS=$'\t' read -r name addr port user key; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"kseed\"}")
	check_eq "register $name" "$(status_of "$r")" 201
done < "$fleet/hosts.tsv"

# Values unlike the machine's own, so that a knob not applied shows.
zp1=$((1 - zp0)); ss1=1234; [ "$ss0" = 1234 ] && ss1=4321; hp1=$((hp0 + 8))
knobs="\"use_zero_page\":$zp1,\"khugepaged_scan_sleep_ms\":$ss1,\"nr_hugepages_2048kB\":$hp1,\"compact_memory\":1"
if [ -n "${nb0:-}" ]; then
	nb1=1; [ "$nb0" != 0 ] && nb1=0
	knobs="$knobs,\"numa_balancing\":$nb1"
else
	echo "note: this kernel has no $NB; numa_balancing not exercised"
fi
cms0=$(awk '$1 == "compact_migrate_scanned" { print $2 }' /proc/vmstat)
r=$(api POST /api/v1/jobs "{\"recipe\":\"cpu-loop\",\"preset\":\"test\",\"machines\":{\"names\":[\"bfkn1\"]},
	\"knobs\":{$knobs},\"repetitions\":{\"iterations\":2}}")
check_eq "submit" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
check_eq "job" "$(wait_job "$id" 180)" done
cms1=$(awk '$1 == "compact_migrate_scanned" { print $2 }' /proc/vmstat)
run=$(curl -fsS "$URL/api/v1/jobs/$id/runs" | jq -c '.runs[0]')
echo "knobs: $(jq -c .knobs <<<"$run")"
check_eq "use_zero_page read back" "$(jq -r .knobs.after.use_zero_page <<<"$run")" "$zp1"
check_eq "use_zero_page before" "$(jq -r .knobs.before.use_zero_page <<<"$run")" "$zp0"
check_eq "scan_sleep read back" "$(jq -r .knobs.after.khugepaged_scan_sleep_ms <<<"$run")" "$ss1"
check_eq "scan_sleep before" "$(jq -r .knobs.before.khugepaged_scan_sleep_ms <<<"$run")" "$ss0"
check_eq "pool read back: the pages obtained" "$(jq -r .knobs.after.nr_hugepages_2048kB <<<"$run")" "$hp1"
check_eq "pool before" "$(jq -r .knobs.before.nr_hugepages_2048kB <<<"$run")" "$hp0"
check_eq "compact_memory requested" "$(jq -r .knobs.requested.compact_memory <<<"$run")" 1
check_eq "compact_memory is an action, not read back" "$(jq -r '.knobs.after | has("compact_memory")' <<<"$run")" false
check_eq "2 samples" "$(jq '[.samples[] | select(.metric=="loops_per_s" and .value > 0)] | length' <<<"$run")" 2
# the kernel compacted: nothing else here writes compact_memory, so the
# migrate scanner's count moves only when a job asks for it
check "compact_memory ran (compact_migrate_scanned $cms0 -> $cms1)" test "$cms1" -gt "$cms0"
snap=$(curl -fsS "$URL/api/v1/snapshots/$(jq -r .snapshot_sha256 <<<"$run")")
check_eq "snapshot: use_zero_page in force" "$(jq -r '.snapshot["transparent_hugepage/use_zero_page"]' <<<"$snap")" "$zp1"
check_eq "snapshot: scan_sleep in force" \
	"$(jq -r '.snapshot["transparent_hugepage/khugepaged/scan_sleep_millisecs"]' <<<"$snap")" "$ss1"
check_eq "snapshot: pool in force" "$(jq -r '.snapshot["hugetlb/hugepages-2048kB/nr_hugepages"]' <<<"$snap")" "$hp1"
if [ -n "${nb0:-}" ]; then
	check_eq "numa_balancing read back" "$(jq -r .knobs.after.numa_balancing <<<"$run")" "$nb1"
	check_eq "numa_balancing before" "$(jq -r .knobs.before.numa_balancing <<<"$run")" "$nb0"
	check_eq "snapshot: numa_balancing in force" "$(jq -r '.snapshot["kernel.numa_balancing"]' <<<"$snap")" "$nb1"
	check_eq "numa_balancing restored" "$(cat "$NB")" "$nb0"
fi
check_eq "use_zero_page restored" "$(cat "$ZP")" "$zp0"
check_eq "scan_sleep restored" "$(cat "$SS")" "$ss0"
check_eq "pool restored" "$(cat "$HP")" "$hp0"
check "report renders" curl -fsS -o /dev/null "$URL/api/v1/jobs/$id/report"

# knobs_optional: what this kernel lacks is absent, the rest applied as ever.
opt='"mthp_3kB":"always"'; optl='"mthp_3kB"'
[ -d /sys/kernel/mm/hugepages/hugepages-1048576kB ] ||
	{ opt="$opt,\"nr_hugepages_1048576kB\":1"; optl="$optl,\"nr_hugepages_1048576kB\""; }
node=""
if [ -n "${hpn0:-}" ]; then
	hpn1=$((hpn0 + 4)); node=",\"nr_hugepages_2048kB_node0\":$hpn1"
fi
r=$(api POST /api/v1/jobs "{\"recipe\":\"cpu-loop\",\"preset\":\"test\",\"machines\":{\"names\":[\"bfkn1\"]},
	\"knobs\":{$opt$node},\"knobs_optional\":[$optl],\"repetitions\":{\"iterations\":1}}")
check_eq "optional: submit" "$(status_of "$r")" 201
oid=$(body_of "$r" | jq -r .id)
check_eq "optional: job done despite knobs this kernel lacks" "$(wait_job "$oid" 120)" done
orun=$(curl -fsS "$URL/api/v1/jobs/$oid/runs" | jq -c '.runs[0]')
echo "optional knobs: $(jq -c .knobs <<<"$orun")"
check_eq "optional: mthp_3kB absent after" "$(jq -r .knobs.after.mthp_3kB <<<"$orun")" absent
check_eq "optional: mthp_3kB absent before" "$(jq -r .knobs.before.mthp_3kB <<<"$orun")" absent
check_eq "optional: mthp_3kB requested" "$(jq -r .knobs.requested.mthp_3kB <<<"$orun")" always
if [[ $optl == *1048576kB* ]]; then
	check_eq "optional: 1 GiB pool absent" "$(jq -r .knobs.after.nr_hugepages_1048576kB <<<"$orun")" absent
fi
check_eq "optional: measured" "$(jq '[.samples[] | select(.metric=="loops_per_s")] | length' <<<"$orun")" 1
if [ -n "$node" ]; then
	check_eq "node pool read back" "$(jq -r .knobs.after.nr_hugepages_2048kB_node0 <<<"$orun")" "$hpn1"
	check_eq "node pool restored" "$(cat "$HPN")" "$hpn0"
fi
check_eq "pool restored after the node job" "$(cat "$HP")" "$hp0"
check "optional: report renders" curl -fsS -o /dev/null "$URL/api/v1/jobs/$oid/report"

# Not optional: the run fails naming the knob, and nothing is measured.
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["bfkn1"]},
	"knobs":{"nr_hugepages_4096kB":1,"use_zero_page":'"$zp1"'},"repetitions":{"iterations":1}}')
check_eq "missing pool: submit" "$(status_of "$r")" 201
bid=$(body_of "$r" | jq -r .id)
check_eq "missing pool: job failed" "$(wait_job "$bid" 60)" failed
brun=$(curl -fsS "$URL/api/v1/jobs/$bid/runs" | jq -c '.runs[0]')
check_contains "missing pool: reason" "$(jq -r .error <<<"$brun")" \
	'knobs.nr_hugepages_4096kB: cannot set "1": no hugetlb pool of 4096kB pages on this machine; available: 2048kB'
check_eq "missing pool: nothing measured" "$(jq '.samples | length' <<<"$brun")" 0
check_eq "missing pool: nothing changed" "$(cat "$ZP")" "$zp0"
# Refused at submit: knobs_optional naming no knob of the job, a bad value.
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"class":"kseed"},"knobs":{"smt":"off"},"knobs_optional":["mthp_16kB"]}')
check_eq "knobs_optional outside the job refused" "$(status_of "$r")" 400
check_eq "knobs_optional: field named" "$(body_of "$r" | jq -r .detail.field)" "knobs_optional[0]"
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"class":"kseed"},"knobs":{"nr_hugepages_2048kB":-1}}')
check_eq "negative pool refused" "$(status_of "$r")" 400
check_contains "negative pool: named" "$(body_of "$r")" "knobs.nr_hugepages_2048kB"
stop_daemon
check_sanitizers "$work/daemon.log"
finish
