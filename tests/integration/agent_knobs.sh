#!/usr/bin/env bash
# The agent's knobs on this machine's own sysfs, as root: THP set to each
# of never/madvise/always, read back and restored after the step (also on
# SIGTERM and on a stdout hang-up); a missing mTHP size or cpufreq fails
# the step with the reason and measures nothing; aslr false gives fixed
# addresses; bind cpus "0" pins the workload; setup and service failures.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

A=$BIN/benchfleet-agent
THP=/sys/kernel/mm/transparent_hugepage/enabled
t0=$(date +%s.%N)
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 0; }
[ -w "$THP" ] || { echo "SKIP: $THP is not writable"; exit 0; }
bracket() { sed -n 's/.*\[\(.*\)\].*/\1/p' "$1"; }
orig=$(bracket "$THP")
# whatever happens below, the machine keeps its THP mode
defer "echo '$orig' > '$THP'"
work=$(mktemp -d /tmp/bf-knobs.XXXXXX)
defer "rm -rf '$work'"

step() { # step EXTRA_JSON ARGV_JSON: run one step, output in $work/out, status in $rc
	printf '{"run":1,"iterations":1,"timeout_s":30,"argv":%s%s}' "$2" "$1" >"$work/step"
	"$A" step <"$work/step" >"$work/out" 2>"$work/err"
	rc=$?
}
line() { grep "\"type\":\"$1\"" "$work/out" | head -1; }

# --- THP to each mode, read back, restored ---
for mode in never madvise always; do
	step ",\"knobs\":{\"thp_enabled\":\"$mode\"}" "[\"cat\",\"$THP\"]"
	check_eq "thp=$mode: exit" "$rc" 0
	k=$(line knobs)
	check_eq "thp=$mode: before" "$(jq -r .before.thp_enabled <<<"$k")" "$orig"
	check_eq "thp=$mode: requested" "$(jq -r .requested.thp_enabled <<<"$k")" "$mode"
	check_eq "thp=$mode: after" "$(jq -r .after.thp_enabled <<<"$k")" "$mode"
	# the workload saw the mode in force
	check_contains "thp=$mode: workload view" "$(line log)" "[$mode]"
	check_eq "thp=$mode: restored" "$(bracket "$THP")" "$orig"
	# knobs come before any iteration, and the snapshot after the knobs:
	# it records the mode the iterations ran under
	check_eq "thp=$mode: order" "$(jq -r .type "$work/out" | head -4 | tr '\n' ' ')" \
		"hello knobs snapshot log "
	check_eq "thp=$mode: snapshot" \
		"$(line snapshot | jq -r '.snapshot["transparent_hugepage/enabled"]')" "$mode"
done

# --- several knobs at once, integers as numbers, drop_caches as an action ---
rv=$(cat /proc/sys/kernel/randomize_va_space)
defer "echo '$rv' > /proc/sys/kernel/randomize_va_space"
step ',"knobs":{"thp_enabled":"never","randomize_va_space":1,"thp_defrag":"never"},"drop_caches":true' \
	'["cat","/proc/sys/kernel/randomize_va_space"]'
check_eq "multi: exit" "$rc" 0
check_eq "multi: after" "$(line knobs | jq -c .after)" \
	'{"thp_enabled":"never","randomize_va_space":"1","thp_defrag":"never"}'
check_contains "multi: workload saw randomize_va_space 1" "$(line log)" '"line":"1"'
check_eq "multi: randomize_va_space restored" "$(cat /proc/sys/kernel/randomize_va_space)" "$rv"
check_eq "multi: thp restored" "$(bracket "$THP")" "$orig"

# --- an mTHP size the kernel lacks: named with the sizes there are ---
if [ -d /sys/kernel/mm/transparent_hugepage/hugepages-64kB ]; then
	step ',"knobs":{"thp_enabled":"never","mthp_3kB":"always"}' '["@agent","work","echo","x"]'
	check_eq "mthp_3kB: exit 2" "$rc" 2
	e=$(line error | jq -r .msg)
	check_contains "mthp_3kB: size named" "$e" "knobs.mthp_3kB: cannot set \"always\": no such mTHP size 3kB"
	check_contains "mthp_3kB: sizes listed" "$e" "available: "
	check_contains "mthp_3kB: 64kB listed" "$e" "64kB"
	check_eq "mthp_3kB: nothing measured" "$(grep -c '"type":"iteration"' "$work/out")" 0
	check_eq "mthp_3kB: nothing changed" "$(bracket "$THP")" "$orig"
	check_eq "mthp_3kB: done ok false" "$(line done | jq -r .ok)" false
	# an existing size is set and restored
	m0=$(bracket /sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled)
	step ',"knobs":{"mthp_64kB":"always"}' '["cat","/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"]'
	check_eq "mthp_64kB: exit" "$rc" 0
	check_eq "mthp_64kB: after" "$(line knobs | jq -r .after.mthp_64kB)" always
	check_eq "mthp_64kB: restored" \
		"$(bracket /sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled)" "$m0"
fi

# --- a knob the machine lacks entirely ---
if ! ls /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor >/dev/null 2>&1; then
	step ',"knobs":{"governor":"performance"}' '["@agent","work","echo","x"]'
	check_eq "governor: exit 2" "$rc" 2
	check_contains "governor: reason" "$(line error | jq -r .msg)" \
		'knobs.governor: cannot set "performance": no cpufreq'
	check_eq "governor: nothing measured" "$(grep -c '"type":"iteration"' "$work/out")" 0
fi
# --- a refused value never reaches sysfs ---
step ',"knobs":{"thp_enabled":"always\nnever"}' '["@agent","work","echo","x"]'
check_eq "hostile value: exit 2" "$rc" 2
check_contains "hostile value: reason" "$(line error | jq -r .msg)" 'knobs.thp_enabled: "always\x0anever" is not one of'

# --- SIGTERM mid-step restores ---
other=never; [ "$orig" = never ] && other=always
printf '{"run":1,"iterations":1,"timeout_s":60,"argv":["sleep","30"],"knobs":{"thp_enabled":"%s"}}' \
	"$other" >"$work/step"
"$A" step <"$work/step" >"$work/out" 2>/dev/null &
apid=$!
for i in $(seq 100); do grep -q '"type":"knobs"' "$work/out" && break; sleep 0.05; done
check_eq "sigterm: knob in force" "$(bracket "$THP")" "$other"
kill -TERM $apid
wait $apid
check_eq "sigterm: agent died of SIGTERM" "$?" 143
check_eq "sigterm: restored" "$(bracket "$THP")" "$orig"
check_eq "sigterm: no sleep left" "$(pgrep -f 'sleep 30' -P $apid | wc -l)" 0

# --- stdout hang-up (the SSH link dropped) restores ---
( "$A" step <"$work/step" 2>/dev/null | head -n 2 >"$work/head" ) &
hpid=$!
for i in $(seq 100); do [ "$(wc -l <"$work/head")" -ge 2 ] && break; sleep 0.05; done
wait $hpid
for i in $(seq 100); do [ "$(bracket "$THP")" = "$orig" ] && break; sleep 0.05; done
check_eq "hangup: restored" "$(bracket "$THP")" "$orig"

# --- aslr false: the same addresses twice; with ASLR they differ ---
step ',"aslr":false' '["@agent","work","addr"]'; a1=$(grep '"type":"log"' "$work/out" | jq -r .line | tr '\n' ' ')
step ',"aslr":false' '["@agent","work","addr"]'; a2=$(grep '"type":"log"' "$work/out" | jq -r .line | tr '\n' ' ')
check_contains "aslr off: printed" "$a1" "stack: 0x"
check_eq "aslr off: fixed addresses" "$a1" "$a2"
if [ "$(cat /proc/sys/kernel/randomize_va_space)" != 0 ]; then
	step '' '["@agent","work","addr"]'; b1=$(grep '"type":"log"' "$work/out" | jq -r .line | tr '\n' ' ')
	step '' '["@agent","work","addr"]'; b2=$(grep '"type":"log"' "$work/out" | jq -r .line | tr '\n' ' ')
	check "aslr on: addresses differ" [ "$b1" != "$b2" ]
fi

# --- bind cpus 0: the workload's affinity is {0} ---
step ',"bind":{"cpus":"0"}' '["grep","Cpus_allowed_list","/proc/self/status"]'
check_eq "bind: exit" "$rc" 0
check_eq "bind: affinity" "$(line log | jq -r .line)" "$(printf 'Cpus_allowed_list:\t0')"
step ',"bind":{"cpus":"0","membind":"0","cpunodebind":"0"}' '["grep","Mems_allowed_list","/proc/self/status"]'
check_eq "membind: exit" "$rc" 0
step ',"bind":{"cpus":"1000"}' '["@agent","work","echo","x"]'
check_eq "bind cpus 1000: exit 2" "$rc" 2
check_contains "bind cpus 1000: reason" "$(line error | jq -r .msg)" "bind: no cpu is left"
step ',"bind":{"membind":"7"}' '["@agent","work","echo","x"]'
check_contains "membind 7: reason" "$(line error | jq -r .msg)" "bind.membind: node 7 does not exist"

# --- setup, pre_iteration and services ---
step ',"setup":[["true"],["false"]]' '["@agent","work","echo","x"]'
check_eq "setup fails: exit 2" "$rc" 2
check_contains "setup fails: reason" "$(line error | jq -r .msg)" 'setup[1]: "false" exited with status 1'
check_eq "setup fails: nothing measured" "$(grep -c '"type":"iteration"' "$work/out")" 0
step ",\"setup\":[[\"touch\",\"$work/s\"]],\"pre_iteration\":[[\"rm\",\"$work/s\"]]" '["@agent","work","echo","x"]'
check_eq "setup+pre: exit" "$rc" 0
check "setup+pre: ran in order" [ ! -e "$work/s" ]
step ',"services":[{"argv":["@agent","work","echo","bye"],"ready":{"tcp":"127.0.0.1:1","timeout_s":5}}]' \
	'["@agent","work","echo","x"]'
check_eq "dying service: exit 2" "$rc" 2
check_contains "dying service: reason" "$(line error | jq -r .msg)" \
	'services[0]: "@agent" exited with status 0 before it was ready: bye'
step ',"services":[{"argv":["sleep","6173"],"ready":{"tcp":"127.0.0.1:1","timeout_s":1}}]' \
	'["@agent","work","echo","x"]'
check_contains "never ready: reason" "$(line error | jq -r .msg)" 'did not accept a connection on 127.0.0.1:1 within 1 s'
check_eq "never ready: service killed" "$(pgrep -x -f 'sleep 6173' | wc -l)" 0

check_eq "THP is as it was" "$(bracket "$THP")" "$orig"
echo "agent_knobs: $(echo "$(date +%s.%N) - $t0" | bc) s"
finish
