#!/usr/bin/env bash
# The arm64 half of the fleet on a real aarch64 machine: a
# qemu-system-aarch64 -M virt -cpu max VM under TCG (tests/vm/build-guest-arm64:
# Debian arm64 packages, bookworm-backports' 6.12 arm64 kernel with 4K
# pages) registered with a real benchfleetd, which uploads the static
# aarch64 agent (tools/build-agent-aarch64) over SFTP and fingerprints it:
# arch aarch64, page size 4096, the mTHP sizes the kernel offers (8K..2M).
#
# Then recipes/experiments/mthp-kernel-build-altra.json runs end to end as
# the experiment says (matrix mthp_16kB x mthp_64kB, knobs thp_enabled
# =madvise and randomize_va_space=0, drop_caches, interleaved), with ONE
# substitution: the measured workload is page-touch's test preset (64 MiB
# of anonymous memory, no madvise, so per-size mTHP alone decides the folio
# size, as for a compiler's heap) instead of kernel-build. The kernel build
# itself does not fit a CI run under TCG on this machine (docs/test-fleet.md,
# "arm64": measured cost). Asserted per cell: the mTHP sizes are set and
# read back, and the per-size counters under hugepages-NkB/stats/ are in the
# runs' samples and say which size served the faults (16K cells fault 16K
# folios, 64K cells 64K folios, never/never none); every knob is restored.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

VM=$BF_SRC/tests/vm/vm
GUEST=${BF_VM_GUEST_ARM64:-/var/tmp/benchfleet-vm-guest-arm64}
A64=$BIN/benchfleet-agent-aarch64
[ -x "$A64" ] || { echo "FAIL: $A64 not built (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"; exit 1; }
t0=$(date +%s.%N)
"$BF_SRC/tests/vm/build-guest-arm64" "$GUEST" || { echo "FAIL: build-guest-arm64"; exit 1; }
echo "vm_arm64: guest ready after $(echo "$(date +%s.%N) - $t0" | bc) s"
. "$GUEST/out/guest.env"
work=$(mktemp -d /tmp/bf-vmarm64.XXXXXX)
defer "rm -rf '$work'"
port=$(free_port)
N=bva$$
defer "'$VM' stop '$GUEST' '$N' >/dev/null 2>&1; rm -rf '$GUEST/vms/$N'"
"$VM" start "$GUEST" "$N" --port "$port" --timeout 300 || { echo "FAIL: arm64 VM did not come up"; exit 1; }
gsh() { "$VM" ssh "$GUEST" "$N" "$@"; }
check_eq "the guest is aarch64" "$(gsh uname -m)" aarch64
check_eq "the guest runs the 6.12 arm64 kernel" "$(gsh uname -r)" "$KERNEL_612"
cp "$GUEST/vms/$N/known_hosts" "$work/known_hosts"
start_daemon "$work" --known-hosts "$work/known_hosts" || exit 1
defer stop_daemon

# The experiment's machine class, so its "machines" stays as written.
r=$(api POST /api/v1/machines "$(jq -n --arg p "$port" --arg k "$GUEST/out/client_key" \
	'{name:"arm1", host:"127.0.0.1", port:($p|tonumber), user:"root", key:$k, class:"altra-1s"}')")
check_eq "register the arm64 VM" "$(status_of "$r")" 201
m=
for i in $(seq 300); do
	m=$(curl -fsS "$URL/api/v1/machines/arm1")
	[ "$(jq -r '.fingerprint.type // empty' <<<"$m")" = fingerprint ] && break
	sleep 0.5
done
fp=$(jq -c .fingerprint <<<"$m")
check_eq "fingerprint: arch" "$(jq -r .arch <<<"$fp")" aarch64
check_eq "fingerprint: page size" "$(jq -r .page_size <<<"$fp")" 4096
check_eq "fingerprint: kernel" "$(jq -r .kernel <<<"$fp")" "$KERNEL_612"
check_eq "fingerprint: the kernel's mTHP sizes" "$(jq -r .mthp_sizes <<<"$fp")" \
	"$(gsh ls /sys/kernel/mm/transparent_hugepage | sed -n 's/^hugepages-//p' | sort -n | joined ', ')"
for s in 16kB 32kB 64kB; do
	check_contains "fingerprint: mTHP $s discovered" "$(jq -r .mthp_sizes <<<"$fp")" "$s"
done
check_eq "fingerprint: config hash is the 6.12 arm64 kernel's config" \
	"$(jq -r .kernel_config_sha256 <<<"$fp")" "$(sha256sum "$GUEST/out/config-6.12" | cut -d' ' -f1)"
check_contains "fingerprint: distro" "$(jq -r .distro <<<"$fp")" "Debian GNU/Linux 12"
check_contains "fingerprint: kernel compiler" "$(jq -r .kernel_compiler <<<"$fp")" "aarch64-linux-gnu-gcc"
echo "vm_arm64: fingerprint $(jq -c '{cpu_model, cpu_vendor, arch, page_size, kernel, mthp_sizes, thp_enabled}' <<<"$fp")"
check_eq "the agent in the guest is the aarch64 build" \
	"$(gsh sha256sum .benchfleet/benchfleet-agent | cut -d' ' -f1)" "$(sha256sum "$A64" | cut -d' ' -f1)"

# Sizes this kernel does not have: the job is taken (a class may span
# kernels with other sizes) but the run fails naming the size and measures
# nothing, as on x86 (knobs_job.sh).
for bad in mthp_4kB mthp_4096kB; do
	r=$(api POST /api/v1/jobs "$(jq -n --arg k "$bad" '{recipe:"cpu-loop", preset:"test",
		machines:{names:["arm1"]}, knobs:{($k):"always"}, repetitions:{iterations:1}}')")
	if [ "$(status_of "$r")" = 201 ]; then
		bid=$(body_of "$r" | jq -r .id)
		check_eq "$bad: job failed" "$(wait_job "$bid" 120)" failed
		brun=$(curl -fsS "$URL/api/v1/jobs/$bid/runs" | jq -c '.runs[0]')
		check_contains "$bad: the reason names the size" "$(jq -r .error <<<"$brun")" "${bad#mthp_}"
		check_eq "$bad: nothing measured" "$(jq '.samples | length' <<<"$brun")" 0
	else
		check_contains "$bad refused at submit, named" "$(body_of "$r")" "$bad"
	fi
done

before=$(gsh 'for f in /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/hugepages-*/enabled /proc/sys/kernel/randomize_va_space; do echo "$f $(cat $f)"; done')
job=$(jq '.recipe = "page-touch" | .preset = "test" | .params = {mb: 64, thp: "none"}
	| .name = "mTHP 16K/64K x page-touch (kernel-build stand-in under TCG)"
	| .repetitions = {boots: 1, iterations: 2, warmup: 0}' \
	"$BF_SRC/recipes/experiments/mthp-kernel-build-altra.json")
check_eq "the experiment's matrix is kept" "$(jq -c .matrix <<<"$job")" \
	'{"mthp_16kB":["never","always"],"mthp_64kB":["never","always"]}'
r=$(api POST /api/v1/jobs "$job")
check_eq "submit the experiment" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
check_eq "4 cells x 1 boot" "$(body_of "$r" | jq -r .runs)" 4
t1=$(date +%s.%N)
check_eq "experiment job" "$(wait_job "$id" 600)" done
echo "vm_arm64: 4 runs x 2 iterations took $(echo "$(date +%s.%N) - $t1" | bc) s"
runs=$(curl -fsS "$URL/api/v1/jobs/$id/runs")
check_eq "4 runs done" "$(jq '[.runs[] | select(.state == "done")] | length' <<<"$runs")" 4

# mtsum RUN SIZE STAT: the per-size stat summed over the run's iterations.
mtsum() { jq --arg m "hugepages-$2.$3" '[.samples[] | select(.metric == $m) | .value] | add // "absent"' <<<"$1"; }
for a in never always; do
	for b in never always; do
		run=$(jq -c --arg a "$a" --arg b "$b" \
			'.runs[] | select(.axes.mthp_16kB == $a and .axes.mthp_64kB == $b)' <<<"$runs")
		c="16K=$a 64K=$b"
		check_eq "$c: 16K read back" "$(jq -r .knobs.after.mthp_16kB <<<"$run")" "$a"
		check_eq "$c: 64K read back" "$(jq -r .knobs.after.mthp_64kB <<<"$run")" "$b"
		check_eq "$c: thp_enabled read back" "$(jq -r .knobs.after.thp_enabled <<<"$run")" madvise
		check_eq "$c: randomize_va_space read back" \
			"$(jq -r .knobs.after.randomize_va_space <<<"$run")" 0
		check_eq "$c: 2 pages_per_s samples" \
			"$(jq '[.samples[] | select(.metric == "pages_per_s" and .value > 0)] | length' <<<"$run")" 2
		f16=$(mtsum "$run" 16kB anon_fault_alloc)
		f64=$(mtsum "$run" 64kB anon_fault_alloc)
		f32=$(mtsum "$run" 32kB anon_fault_alloc)
		echo "vm_arm64: $c anon_fault_alloc 16K=$f16 32K=$f32 64K=$f64" \
			"pmd=$(mtsum "$run" 2048kB anon_fault_alloc) faults=$(jq '[.samples[] | select(.metric == "faults") | .value] | add' <<<"$run")"
		check "$c: per-size stats captured" test "$f16" != absent -a "$f64" != absent -a "$f32" != absent
		check_eq "$c: the disabled 32K size served nothing" "$f32" 0
		# the guest boots with THP always; the experiment's madvise and
		# no MADV_HUGEPAGE in the workload leave the 2M PMD size unused
		check_eq "$c: thp_enabled=madvise: no PMD folio" "$(mtsum "$run" 2048kB anon_fault_alloc)" 0
		# 64 MiB twice: 64K folios, when enabled, serve nearly all of it
		# (highest enabled order first); 16K then serves nothing but
		# the odd unaligned edge.
		if [ $b = always ]; then
			check "$c: 64K folios faulted (>= 2x900)" test "$f64" -ge 1800
		else
			check_eq "$c: no 64K folio" "$f64" 0
		fi
		if [ $a = always ] && [ $b = never ]; then
			check "$c: 16K folios faulted (>= 2x3600)" test "$f16" -ge 7200
		elif [ $a = never ]; then
			check_eq "$c: no 16K folio" "$f16" 0
		fi
	done
done
# The knobs in the guest are as they were before the job.
check_eq "every knob restored" "$(gsh 'for f in /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/hugepages-*/enabled /proc/sys/kernel/randomize_va_space; do echo "$f $(cat $f)"; done')" "$before"
rep=$(curl -fsS "$URL/api/v1/jobs/$id/report")
check_contains "report: the 64K counter beside the results" "$rep" "hugepages-64kB"
stop_daemon
check_sanitizers "$work/daemon.log"
echo "vm_arm64: total $(echo "$(date +%s.%N) - $t0" | bc) s"
finish
