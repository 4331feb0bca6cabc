#!/bin/bash
# agent_aarch64.sh: benchfleet-agent cross-built for aarch64
# (tools/build-agent-aarch64, Debian's gcc-aarch64-linux-gnu, static)
# runs under qemu-user-static: its hello line says aarch64, its JSON lines
# parse, and for a small step (`@agent work cpu`, which re-executes the
# agent itself and so needs binfmt_misc) it prints the same line types and
# keys as the x86_64 agent. binfmt_misc is mounted and qemu-aarch64
# registered for the test if they were not, and undone afterwards.
set -u

: "${BF_SRC:?BF_SRC must be set}" "${BF_BUILD:?BF_BUILD must be set}"
. "$BF_SRC/tests/lib/common.sh"
[ "$(id -u)" = 0 ] || { echo "FAIL: needs root (apt-get, binfmt_misc)" >&2; exit 1; }
need=()
for p in gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static jq; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "agent_aarch64: installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
		--no-install-recommends "${need[@]}" >/dev/null || { echo "FAIL: apt-get install" >&2; exit 1; }
fi

W=$(mktemp -d /tmp/bf-agent-aarch64.XXXXXX)
defer "rm -rf '$W'"
A64=$W/benchfleet-agent-aarch64
X86=$BIN/benchfleet-agent
t0=$(date +%s.%N)
"$BF_SRC/tools/build-agent-aarch64" "$A64" || { echo "FAIL: cross build" >&2; exit 1; }
echo "agent_aarch64: cross-built in $(echo "$(date +%s.%N) - $t0" | bc) s"
check_contains "ELF is aarch64 and static" "$(file -b "$A64")" "ARM aarch64"
check_contains "ELF is static" "$(file -b "$A64")" "statically linked"

# binfmt_misc, so that the agent can exec itself (@agent) under qemu.
BFM=/proc/sys/fs/binfmt_misc
if [ ! -e $BFM/register ]; then
	mount -t binfmt_misc binfmt_misc $BFM && defer "umount $BFM"
fi
if [ ! -e $BFM/qemu-aarch64 ] && [ -e $BFM/register ]; then
	if cat /usr/lib/binfmt.d/qemu-aarch64.conf >$BFM/register; then
		defer "echo -1 >$BFM/qemu-aarch64"
	fi
fi
[ -e $BFM/qemu-aarch64 ] || fail "cannot register qemu-aarch64 with binfmt_misc"

STEP='{"run":7,"argv":["@agent","work","cpu","--loops","20000"],"iterations":2,"warmup":1,"timeout_s":120}'
printf '%s' "$STEP" | timeout 120 qemu-aarch64-static "$A64" step >"$W/a64.out" 2>"$W/a64.err"
rc=$?
check_eq "aarch64 agent exit status" "$rc" 0
printf '%s' "$STEP" | timeout 120 "$X86" step >"$W/x86.out" 2>"$W/x86.err"
check "every aarch64 line is JSON" jq -e . "$W/a64.out" >/dev/null
check_eq "hello arch" "$(jq -r 'select(.type=="hello") | .arch' "$W/a64.out")" aarch64
check_eq "done ok" "$(jq -r 'select(.type=="done") | .ok' "$W/a64.out")" true
check_eq "iterations reported" "$(jq -r 'select(.type=="done") | .iterations' "$W/a64.out")" 2
check_contains "workload output seen" "$(cat "$W/a64.out")" "loops/s"
# Same protocol as x86_64: the same sequence of line types, the same keys
# per type (values such as times and arch differ).
shape() { jq -c '[.type, (keys | sort)]' "$1"; }
check_eq "same line types and keys as the x86_64 agent" "$(shape "$W/a64.out")" "$(shape "$W/x86.out")"
check_eq "x86_64 hello arch" "$(jq -r 'select(.type=="hello") | .arch' "$W/x86.out")" x86_64
# The algorithm workloads (issue 20) answer the same on both: xsbench's
# checksum and the hash join's matches depend on the seed only, and the
# BFS trees (CAS-claimed parents, weaker memory ordering) validate.
for w in "xsbench --isotopes 12 --gridpoints 200 --lookups 20000 --threads 3" \
    "hashjoin --r-tuples 5000 --s-tuples 20000 --selectivity 30 --threads 3"; do
	a=$(timeout 120 qemu-aarch64-static "$A64" work $w | grep -E '^(Verification checksum|matches):')
	x=$("$X86" work $w | grep -E '^(Verification checksum|matches):')
	check "aarch64 work ${w%% *} answers" test -n "$a"
	check_eq "aarch64 work ${w%% *} = x86_64" "$a" "$x"
done
check_contains "aarch64 graph500 trees validate" \
	"$(timeout 120 qemu-aarch64-static "$A64" work graph500 --scale 10 --roots 8 --threads 4)" \
	"validation: passed"
if [ "$T_FAILS" != 0 ]; then
	echo "--- aarch64 stdout"; head -c 2000 "$W/a64.out"; echo "--- stderr"; head -c 1000 "$W/a64.err"
fi
finish
