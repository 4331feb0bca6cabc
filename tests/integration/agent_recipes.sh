#!/usr/bin/env bash
# Each recipe's test preset run by the real agent on this machine, with
# the step rendered from the recipe the way the coordinator renders it
# (defaults <- test preset, {param} slots, setup/services/metrics): the
# built-in workloads give plausible values; redis-server + redis-benchmark
# and memcached + memcaslap give positive rates through their services.
# kernel-build has its own test (agent_kernel_build.sh).
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

A=$BIN/benchfleet-agent
work=$(mktemp -d /tmp/bf-recipes.XXXXXX)
defer "rm -rf '$work'"

# render RECIPE [KNOBS_JSON]: the step for the test preset, on stdout
render() {
	jq -c --argjson knobs "${2:-{\}}" '
	  ([.params // {} | to_entries[] | {(.key): .value.default}] | add // {}) as $d
	  | ($d + (.presets.test // {})) as $v
	  | def r: if type == "string" then
	      gsub("\\{(?<k>[A-Za-z0-9_.-]+)\\}"; ($v[.k] | tostring)) else map(r) end;
	  {run: 1, iterations: 2, warmup: 0, timeout_s: (.timeout_s // 600),
	   argv: (.command | r),
	   metrics: [.metrics[] | select(.source == "stdout" or .source == "stderr")
	             | {name, source} + (if .regex then {regex} elif .csv then {csv}
	                                 else {json} end)]}
	  + (if .setup then {setup: [.setup[] | r]} else {} end)
	  + (if .pre_iteration then {pre_iteration: [.pre_iteration[] | r]} else {} end)
	  + (if .services then {services: [.services[] | {argv: (.argv | r),
	       ready: {tcp: (.ready.tcp | r), timeout_s: (.ready.timeout_s // 10)}}]} else {} end)
	  + (if .files then {files: [.files | to_entries[] |
	       {name: .key, text: ((.value | map(r) | join("\n")) + "\n")}]}
	     elif .workdir then {files: []} else {} end)
	  + (if $knobs == {} then {} else {knobs: $knobs} end)
	' "$BF_SRC/recipes/$1.json"
}

# run_recipe RECIPE METRIC MIN MAX: both iterations ok, METRIC in [MIN, MAX]
run_recipe() {
	local t0 t1 out v
	t0=$(date +%s.%N)
	# a second metric of the same recipe reads the same run
	if [ ! -s "$work/$1.out" ]; then
		render "$1" >"$work/$1.step" || { fail "$1: render"; return; }
		"$A" step <"$work/$1.step" >"$work/$1.out" 2>"$work/$1.err"
		check_eq "$1: agent exit" "$?" 0
	fi
	t1=$(date +%s.%N)
	out=$(grep '"type":"iteration"' "$work/$1.out")
	check_eq "$1: two iterations" "$(grep -c . <<<"$out")" 2
	while read -r v; do
		check "$1: $2=$v in [$3, $4]" awk -v v="$v" -v lo="$3" -v hi="$4" \
			'BEGIN { exit !(v != "null" && v + 0 >= lo + 0 && v + 0 <= hi + 0) }'
	done < <(jq -r ".metrics[\"$2\"]" <<<"$out")
	printf '%-18s %-14s %s   (%.1f s)\n' "$1" "$2" "$(jq -r ".metrics[\"$2\"]" <<<"$out" | tr '\n' ' ')" \
		"$(echo "$t1 - $t0" | bc)"
	grep -q '"type":"error"' "$work/$1.out" && { fail "$1: error line"; grep '"type":"error"' "$work/$1.out" >&2; }
}

t0=$(date +%s.%N)
run_recipe lat-pagefault pagefault_us 0.001 1000
run_recipe dtlb-touch ns_per_touch 0.01 10000
run_recipe zero-page-thrash ns_per_read 0.01 10000
run_recipe btree lookups_per_s 1000 1e10
run_recipe btree seconds 0.0001 60
run_recipe gups gups 0.00001 100
run_recipe ebizzy records_per_s 1 1e9
# our own implementations of the seeds' algorithms (issue 20)
run_recipe xsbench lookups_per_s 1000 1e10
run_recipe graph500 harmonic_mean_TEPS 1e4 1e12
run_recipe graph500 mean_time_s 0.000001 60
run_recipe pagerank average_time_s 0.0001 60
run_recipe pagerank iterations 2 20
run_recipe hashjoin seconds 0.0001 60
run_recipe hashjoin tuples_per_s 1e4 1e11
for m in quips_4KiB quips_64KiB quips_1MiB quips_16MiB peak_quips mean_quips; do
	run_recipe hint $m 1e3 1e12
done
# their thp=madvise default makes a thp_enabled=madvise cell fault huge
# pages into the workload's own data (hint's test preset maps 16 MiB)
THP=/sys/kernel/mm/transparent_hugepage/enabled
if [ -w "$THP" ]; then
	orig=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$THP")
	for thp in madvise nohugepage; do
		render hint '{"thp_enabled":"madvise"}' |
			jq -c --arg t "$thp" 'if .argv[-2] == "--thp" then .argv[-1] = $t else . end' \
			>"$work/hint-$thp.step"
		"$A" step <"$work/hint-$thp.step" >"$work/hint-$thp.out" 2>/dev/null
		check_eq "hint thp=$thp: exit" "$?" 0
		check_eq "hint thp=$thp: argv" "$(jq -r '.argv[-1]' "$work/hint-$thp.step")" "$thp"
		check_eq "hint thp=$thp: knob" \
			"$(grep '"type":"knobs"' "$work/hint-$thp.out" | jq -r .after.thp_enabled)" madvise
	done
	# vmstat is machine-wide, so only the madvise side can be asserted
	check "hint thp=madvise: thp_fault_alloc > 0 in every iteration" test \
		"$(grep '"type":"counters"' "$work/hint-madvise.out" |
		   jq -r '.metrics["vmstat.thp_fault_alloc"] > 0' | sort -u)" = true
	check_eq "hint: THP restored" "$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$THP")" "$orig"
fi
run_recipe page-touch pages_per_s 1 1e12
# the test presets run the new options: gups on 2 threads, redis and
# memcached as 2 instances (serve/fanout) whose rates are summed
check_eq "gups: 2 threads" "$(jq -r '.argv | join(" ")' "$work/gups.step" | grep -c -- '--threads 2 ')" 1

install_missing() {
	local p miss=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || miss+=("$p")
	done
	[ ${#miss[@]} -eq 0 ] && return 0
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null 2>&1; }
}
if install_missing redis-server redis-tools; then
	# the Debian package may start its own server on 6379; ours is on 16379
	run_recipe redis get_rps 1000 1e9
	run_recipe redis set_rps 1000 1e9
	check_eq "redis: servers gone after the step" "$(pgrep -f 'redis-server .*:(16379|16380)' | wc -l)" 0
	check_contains "redis: two instances summed" "$(cat "$work/redis.out")" 'instances: 2'
	check_contains "redis: the second instance on its own port" "$(cat "$work/redis.out")" 'instance 1 (port 16380)' 
	# the THP mode of a matrix cell is in force for the service too
	THP=/sys/kernel/mm/transparent_hugepage/enabled
	if [ -w "$THP" ]; then
		orig=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$THP")
		defer "echo '$orig' > '$THP'"
		for mode in never always; do
			render redis "{\"thp_enabled\":\"$mode\"}" >"$work/rk.step"
			"$A" step <"$work/rk.step" >"$work/rk.out" 2>/dev/null
			check_eq "redis thp=$mode: exit" "$?" 0
			check_eq "redis thp=$mode: after" \
				"$(grep '"type":"knobs"' "$work/rk.out" | jq -r .after.thp_enabled)" "$mode"
			check_eq "redis thp=$mode: samples" \
				"$(grep '"type":"iteration"' "$work/rk.out" | jq -r '.metrics.get_rps > 0' | sort -u)" true
		done
		check_eq "redis: THP restored" "$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$THP")" "$orig"
	fi
else
	fail "redis-server could not be installed"
fi
if install_missing memcached libmemcached-tools; then
	run_recipe memcached tps 100 1e9
	check_eq "memcached: servers gone after the step" "$(pgrep -x memcached -a | grep -c '2121[12]')" 0
	check_contains "memcached: two instances summed" "$(cat "$work/memcached.out")" 'instances: 2' 
else
	fail "memcached could not be installed"
fi
echo "agent_recipes: $(echo "$(date +%s.%N) - $t0" | bc) s"
finish
