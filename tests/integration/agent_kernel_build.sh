#!/usr/bin/env bash
# kernel-build's test preset through the real agent: the Debian
# linux-source-6.1 tarball is unpacked once by setup (`work unpack`,
# cached in workdir between steps), configured with tinyconfig, make clean
# runs before each iteration, and the measured `make -j2 mm/` gives a
# positive wall_s. The step carries the recipe's path parameters under
# their roots, as the coordinator sends them. The long test: the first
# unpack costs about 25 s here.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

A=$BIN/benchfleet-agent
t0=$(date +%s.%N)
pkgs=(linux-source-6.1 build-essential bc bison flex libelf-dev libssl-dev)
miss=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || miss+=("$p")
done
if [ ${#miss[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
		  apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null 2>&1; } ||
		{ fail "cannot install ${miss[*]}"; finish; exit; }
fi
work=$(mktemp -d /tmp/bf-kbuild.XXXXXX)
defer "rm -rf '$work'"
# the tree is kept under the recipe's root, so later runs skip the unpack;
# its own tree, not the recipe's default (recipes_api builds there), and
# locked, so a second run of this test on the machine waits rather than
# cleaning the tree under the first one's make
wd=/var/tmp/benchfleet/kbuild-6.1-agent-test
mkdir -p /var/tmp/benchfleet
exec 8>/var/tmp/benchfleet/.kbuild-agent-test.lock
flock 8
tree=$wd/linux-source-6.1
step() {
	jq -nc --arg wd "$wd" --arg tree "$tree" '{run: 1, iterations: 1, warmup: 0, timeout_s: 900,
	  paths: [{name: "tarball", path: "/usr/src/linux-source-6.1.tar.xz", root: "/usr/src"},
	          {name: "workdir", path: $wd, root: "/var/tmp/benchfleet"}],
	  setup: [["@agent", "work", "unpack", "--tar", "/usr/src/linux-source-6.1.tar.xz",
	           "--dir", $wd], ["make", "-C", $tree, "-s", "tinyconfig"]],
	  pre_iteration: [["make", "-C", $tree, "-s", "clean"]],
	  argv: ["make", "-C", $tree, "-s", "-j2", "mm/"], metrics: []}'
}
step >"$work/step"
"$A" step <"$work/step" >"$work/out" 2>"$work/err"
check_eq "kernel-build: exit" "$?" 0
it=$(grep '"type":"iteration"' "$work/out")
check_eq "kernel-build: one iteration" "$(grep -c . <<<"$it")" 1
check "kernel-build: wall_s plausible" awk -v v="$(jq -r .wall_s <<<"$it")" 'BEGIN { exit !(v > 0.5 && v < 600) }'
check "kernel-build: mm objects built" test -e "$tree/mm/memory.o"
check "kernel-build: unpack stamp" test -e "$wd/.bf-unpacked"
check "kernel-build: workdir stamp" test -e "$wd/.benchfleet-workdir"
grep '"type":"error"' "$work/out" >&2
echo "kernel-build wall_s: $(jq -r .wall_s <<<"$it") s"
# a broken setup fails the step before anything is measured
jq -c '.setup[1] = ["make", "-C", "/nonexistent", "tinyconfig"]' "$work/step" >"$work/bad"
"$A" step <"$work/bad" >"$work/out" 2>/dev/null
check_eq "kernel-build bad setup: exit 2" "$?" 2
check_contains "kernel-build bad setup: reason" "$(grep '"type":"error"' "$work/out")" \
	'setup[1]: \"make\" exited with status 2'
check_eq "kernel-build bad setup: nothing measured" "$(grep -c '"type":"iteration"' "$work/out")" 0
echo "agent_kernel_build: $(echo "$(date +%s.%N) - $t0" | bc) s"
finish
