#!/usr/bin/env bash
# A suite over two kernels on a real QEMU VM (tests/vm): three workloads
# (cpu-loop, page-touch, echo) x kernels [Debian 6.1, 6.12 backports] x 2
# boots. Each boot serves every workload before the next reboot, so the
# VM reboots exactly kernels x boots = 4 times, not x 3 workloads: 4
# kexecs logged, 4 distinct boot_ids, each shared by the 3 workloads of
# its (kernel, boot), and every run measured on the kernel its cell asked.
# page-touch runs in thp_enabled=madvise: thp_fault_alloc > 0 in each of
# its windows on both kernels (the madvise bar on the 6.12 guest kernel).
# The report ends with the suite's summary over the kernels (geometric
# mean per metric), and the suite's bundle compared with the suite gives
# an effect of the kernel per workload.
# Then the dashboard shows a real boot's record (tests/browser/bootrec.test.mjs).
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

VM=$BF_SRC/tests/vm/vm
GUEST=${BF_VM_GUEST:-/var/tmp/benchfleet-vm-guest}
"$BF_SRC/tests/vm/build-guest" "$GUEST" >/dev/null || { echo "FAIL: build-guest"; exit 1; }
. "$GUEST/out/guest.env"
work=$(mktemp -d /tmp/bf-suitevm.XXXXXX)
defer "rm -rf '$work'"
port=$(free_port)
N=bsv$$
defer "'$VM' stop '$GUEST' '$N' >/dev/null 2>&1; rm -rf '$GUEST/vms/$N'"
"$VM" start "$GUEST" "$N" --port "$port" --timeout 240 || { echo "FAIL: VM did not come up"; exit 1; }
cp "$GUEST/vms/$N/known_hosts" "$work/known_hosts"
cat >"$work/benchfleetd.conf" <<CONF
power.$N = '$VM' power-cycle '$GUEST' '$N'
CONF
start_daemon "$work" --config "$work/benchfleetd.conf" --known-hosts "$work/known_hosts" || exit 1
defer stop_daemon
ax() { bf_json "$work" axes "$1"; }

boot=$(jq -n --arg k1 "$KERNEL_61" --arg k2 "$KERNEL_612" --arg n "$N" '{
	method: "kexec",
	kernels: {($k1): {image: ("/boot/vmlinuz-" + $k1), initrd: ("/boot/initrd.img-" + $k1)},
	          ($k2): {image: ("/boot/vmlinuz-" + $k2), initrd: ("/boot/initrd.img-" + $k2)}},
	cmdline_base: "console=ttyS0 panic=-1 quiet", timeout_s: 180, power_cycle: $n}')
r=$(api POST /api/v1/machines "$(jq -n --arg p "$port" --arg k "$GUEST/out/client_key" \
	--argjson b "$boot" '{name:"vm1", host:"127.0.0.1", port:($p|tonumber), user:"root",
	key:$k, class:"vm", boot:$b}')")
check_eq "register the VM" "$(status_of "$r")" 201

r=$(api POST /api/v1/jobs "$(jq -n --arg k1 "$KERNEL_61" --arg k2 "$KERNEL_612" '{
	suite: [{recipe: "cpu-loop", preset: "test"},
	        {recipe: "page-touch", preset: "test", knobs: {thp_enabled: "madvise"}},
	        {recipe: "echo", label: "hi", params: {msg: "on every boot"}}],
	machines: {class: "vm"}, matrix: {kernel: [$k1, $k2]},
	repetitions: {iterations: 1, boots: 2}}')")
check_eq "submit the suite" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
check_eq "3 workloads x 2 kernels x 2 boots" "$(body_of "$r" | jq -r .runs)" 12
t0=$(date +%s.%N)
check_eq "suite job" "$(wait_job "$id" 780)" done
echo "12 runs over 4 boots took $(echo "$(date +%s.%N) - $t0" | bc) s"
bf_sql "$work" "select id, boot, workload, kernel, substr(boot_id,1,8) from runs where job_id=$id order by started_at"

check_eq "12 runs done" "$(bf_sql "$work" "select count(*) from runs where job_id=$id and state='done'")" 12
check_eq "reboots: 4 distinct boots for 2 kernels x 2 boots" \
	"$(bf_sql "$work" "select count(distinct boot_id) from runs where job_id=$id")" 4
check_eq "each boot served all 3 workloads" \
	"$(bf_sql "$work" "select count(*) from (select count(distinct workload) n from runs where job_id=$id group by boot_id) g where n = 3")" 4
check_eq "4 kexecs logged, not 12" \
	"$(bf_sql "$work" "select count(*) from run_logs l join runs r on r.id=l.run_id where r.job_id=$id and l.stream='coord' and l.line like 'boot %: kexec into %'")" 4
check_eq "every run on its cell's kernel" \
	"$(bf_sql "$work" "select count(*) from runs where job_id=$id and kernel = $(ax kernel)")" 12
# The madvise bar on the VM's kernels (issue 20): page-touch runs with
# thp_enabled=madvise, so its thp param follows the knob to madvise, and
# each window faults huge pages, on the 6.12 kernel as on 6.1.
runs=$(curl -fsS "$URL/api/v1/jobs/$id/runs")
for k in "$KERNEL_61" "$KERNEL_612"; do
	sel='.runs[] | select(.axes.workload=="page-touch" and .kernel==$k)'
	check_eq "$k: page-touch ran madvise in a madvise cell" \
		"$(jq -r --arg k "$k" "[$sel | \"\(.knobs.after.thp_enabled)/\(.values.thp)\"] | unique | join(\",\")" <<<"$runs")" \
		"madvise/madvise"
	tfa=$(jq -r --arg k "$k" "[$sel | .samples[] | select(.metric==\"vmstat.thp_fault_alloc\") | .value] | join(\" \")" <<<"$runs")
	echo "$k page-touch madvise thp_fault_alloc: $tfa"
	check_eq "$k: thp_fault_alloc > 0 in every madvise window" \
		"$(jq --arg k "$k" "[$sel | .samples[] | select(.metric==\"vmstat.thp_fault_alloc\" and .value > 0)] | length" <<<"$runs")" 2
done
rep=$(curl -fsS "$URL/api/v1/jobs/$id/report")
check_contains "report: section per workload" "$rep" "job $id: hi (echo)"
check_contains "report: both kernels" "$rep" "$KERNEL_612"
# The seed's table over the two kernels (issue 20): after the sections,
# the suite's summary (workload, metric, A, B, % change, CI, sig) and a
# geometric mean of B/A per metric over the workloads.
check_contains "report: the suite's summary, A = 6.1" "$rep" "Summary: A = $KERNEL_61, B against it"
sum=$(sed -n '/: the suite.s summary$/,$p' <<<"$rep")
echo "$sum"
hdr=$(grep -m1 '^workload ' <<<"$sum")
for col in workload metric A B "% change" "95% CI of change" sig; do
	check "summary header has '$col'" grep -qE "(^| )$col( |\$)" <<<"$hdr"
done
for w in cpu-loop page-touch hi; do
	check_contains "summary: a row of $w" "$sum" "workload=$w"
done
check_contains "summary: geometric mean over the workloads" "$sum" "Geometric mean of B/A, wall_s, B = $KERNEL_612:"
check "summary: wall_s's geometric mean over the 3 workloads" \
	grep -qE "Geometric mean of B/A, wall_s, B = [^ ]+: [^G]*, 3 rows" <<<"$(tr -s ' \n' ' ' <<<"$sum")"
check_eq "summary: each workload's own metrics only" \
	"$(grep -c 'no samples' <<<"$sum")" 0
js=$(curl -fsS "$URL/api/v1/jobs/$id/report?format=json")
check_eq "summary json: wall_s of every workload" \
	"$(jq -r '[.summary.lines[] | select(.metric=="wall_s") | .workload] | join(",")' <<<"$js")" \
	"workload=cpu-loop,workload=page-touch,workload=hi"
want=$(jq -r '[.summary.lines[] | select(.metric=="wall_s") | (.mean_b / .mean_a | log)] | add / length | exp' <<<"$js")
got=$(jq -r '.summary.geomeans[] | select(.metric=="wall_s") | .ratio' <<<"$js")
check "summary: geometric mean $got is exp(mean log ratio) $want" \
	awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 1e-9 * a) }'
# Effects per workload of the kernel (issue 20): the suite's bundle
# compared with the suite itself (compare-only: nothing rerun, no VM
# time), so each workload's 6.12-vs-6.1 effect is the same on both sides;
# across two labs: suite_job.sh.
curl -fsS "$URL/api/v1/jobs/$id/bundle" >"$work/bundle.json"
{ printf '{"compare_job":%s,"bundle":' "$id"; cat "$work/bundle.json"; printf '}'; } >"$work/compare.json"
out=$(curl -sS -X POST "${JSON[@]}" --data-binary "@$work/compare.json" -w '\n%{http_code}' \
	"$URL/api/v1/reproductions")
r="${out##*$'\n'} ${out%$'\n'*}"
check_eq "compare the suite's bundle with the suite" "$(status_of "$r")" 201
rr=$(curl -fsS "$URL/api/v1/reproductions/$(body_of "$r" | jq -r .id)")
echo "effects: $(jq -c '.effects | {baseline, workloads, summary, notes}' <<<"$rr")"
check_eq "effects: baseline the first kernel" "$(jq -r .effects.baseline <<<"$rr")" "kernel:$KERNEL_61"
check_eq "effects: every workload on it" \
	"$(jq -r '[.effects.workloads[] | "\(.workload)=\(.baseline)"] | join(",")' <<<"$rr")" \
	"cpu-loop=kernel:$KERNEL_61,page-touch=kernel:$KERNEL_61,hi=kernel:$KERNEL_61"
check_eq "effects: the kernel's effect on wall_s per workload" \
	"$(jq -r '[.effects.rows[] | select(.metric=="wall_s") | "\(.workload):\(.baseline_label | test("kernel=" + $k))"] | join(",")' --arg k "$KERNEL_61" <<<"$rr")" \
	"cpu-loop:true,page-touch:true,hi:true"
jq -r '.effects.rows[] | "  \(.workload) \(.metric) \(.bundle.pct) \(.here.pct) \(.ratio) \(.verdict)"' <<<"$rr"
check "effects: equal on both sides where defined (ratio 1, 0 pp)" \
	jq -e 'def abs: if . < 0 then -. else . end;
		([.effects.rows[] | select(.metric == "wall_s" and .ratio != null)] | length) == 3 and
		([.effects.rows[] | select(.ratio != null) |
		  ((.ratio - 1) | abs) < 1e-9 and (.difference_pp | abs) < 1e-6] | all)' <<<"$rr"
check_contains "effects: text per workload" "$(curl -fsS "$URL/api/v1/reproductions/$(body_of "$r" | jq -r .id)?format=text")" \
	"workload page-touch, baseline kernel:$KERNEL_61:"
# The dashboard's boot record of a run that really booted (issue 19):
# kernel, cmdline, boot_id, verify and time to SSH, in headless Chromium.
if browser_ready; then
	mkdir -p "$BF_BUILD/suite-vm-artifacts"
	t0=$(date +%s%N)
	BF_URL=$URL BF_JOB=$id BF_ART=$BF_BUILD/suite-vm-artifacts timeout 120 \
		node "$BF_SRC/tests/browser/bootrec.test.mjs" 2>&1 | tee "$work/bootrec.log"
	check_browser "the boot record on the job page (browser)" "${PIPESTATUS[0]}" "$work/bootrec.log"
	echo "boot record browser check: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
else
	fail "no browser for the boot record check"
fi
stop_daemon
check_sanitizers "$work/daemon.log"
finish
