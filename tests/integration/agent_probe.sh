#!/usr/bin/env bash
# `benchfleet-agent probe` on this machine: one fingerprint line whose
# fields agree with what the machine says through other tools, and an
# identity hash that is stable from one probe to the next.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

A=$BIN/benchfleet-agent

fails() { ! "$@" >/dev/null 2>&1; }
# An agent started ahead of its step (the coordinator's prestart) gives up
# when no step comes: nothing of ours stays on an idle machine.
t=$(date +%s%N)
out=$("$A" step --wait 1 < <(sleep 6) 2>&1)
rc=$?
ms=$(( ($(date +%s%N) - t) / 1000000 ))
check "step --wait 1 with no step: exits ($rc) after about 1 s, not 6 ($ms ms)" \
	test "$rc" -ne 0 -a "$ms" -ge 900 -a "$ms" -lt 4000
check_contains "... its hello first" "$out" '"type":"hello"'
check_contains "... then why" "$out" "none came within 1 s: not waiting longer"
for bad in 0 -1 3601 1x '' 99999999999999999999; do
	check "step --wait '$bad' is refused" fails "$A" step --wait "$bad" </dev/null
done
check "step with another argument is refused" fails "$A" step --now </dev/null
# a step that does come is read at once, with the limit on
out=$(printf '{}' | "$A" step --wait 5 2>&1)
check_contains "step --wait 5 reads a step that came (and judges it)" "$out" '"type":"done"'
t0=$(date +%s.%N)
out=$("$A" probe)
check_eq "probe: exit" "$?" 0
check_eq "probe: one line" "$(grep -c . <<<"$out")" 1
check_eq "probe: type" "$(jq -r .type <<<"$out")" fingerprint
check_eq "probe: threads" "$(jq -r .threads <<<"$out")" "$(grep -c '^processor' /proc/cpuinfo)"
check_eq "probe: kernel" "$(jq -r .kernel <<<"$out")" "$(uname -r)"
check_eq "probe: arch" "$(jq -r .arch <<<"$out")" "$(uname -m)"
check_eq "probe: page_size" "$(jq -r .page_size <<<"$out")" "$(getconf PAGESIZE)"
check_eq "probe: cmdline" "$(jq -r .cmdline <<<"$out")" "$(cat /proc/cmdline)"
check_eq "probe: mem_total_kb" "$(jq -r .mem_total_kb <<<"$out")" \
	"$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
m=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
[ -n "$m" ] && check_eq "probe: cpu_model" "$(jq -r .cpu_model <<<"$out")" "$m"
la=false; grep -qw la57 /proc/cpuinfo && la=true
check_eq "probe: la57" "$(jq -r .la57 <<<"$out")" "$la"
if [ -r /etc/os-release ]; then
	check_eq "probe: distro" "$(jq -r .distro <<<"$out")" "$(. /etc/os-release; echo "$PRETTY_NAME")"
fi
if [ -r /sys/kernel/mm/transparent_hugepage/enabled ]; then
	check_eq "probe: thp_enabled" "$(jq -r .thp_enabled <<<"$out")" \
		"$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled)"
fi
if [ -r "/boot/config-$(uname -r)" ]; then
	check_eq "probe: config hash" "$(jq -r .kernel_config_sha256 <<<"$out")" \
		"$(sha256sum "/boot/config-$(uname -r)" | cut -d' ' -f1)"
elif [ -r /proc/config.gz ]; then
	check_eq "probe: config.gz hash" "$(jq -r .kernel_config_sha256 <<<"$out")" \
		"$(sha256sum /proc/config.gz | cut -d' ' -f1)"
	check_contains "probe: says gzip" "$(jq -r .kernel_config_source <<<"$out")" "gzip"
fi
check_eq "probe: nodes" "$(jq '.numa_nodes | length' <<<"$out")" \
	"$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)"
check "probe: sha256 is 64 hex" grep -Eq '^[0-9a-f]{64}$' <<<"$(jq -r .sha256 <<<"$out")"
check_eq "probe: identity stable" "$("$A" probe | jq -r .sha256)" "$(jq -r .sha256 <<<"$out")"
"$A" probe extra >/dev/null 2>&1
check_eq "probe: arguments refused" "$?" 2
echo "agent_probe: $(echo "$(date +%s.%N) - $t0" | bc) s"
finish
