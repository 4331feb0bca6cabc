#!/usr/bin/env bash
# Reproducing another lab's numbers: two benchfleetd on loopback (lab A and
# lab B), each with its own store, its own lab key and its own 2-host netns
# fleet of the same "hardware". Lab A runs a page-touch job (the fault
# count is deterministic) and publishes it, signed with its key; lab B
# refuses to rerun it until it trusts lab A's key (fetched from A's
# GET /api/v1/lab), then reproduces it by URL and gets `reproduced`, with
# the verdict naming lab A; a rerun with a parameter changed gets `differs`
# with the field in the environment diff; unpublished, tampered, oversized
# and unmatched bundles are refused, the last with nothing written.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-repro.XXXXXX)
defer "rm -rf '$work'"
mkdir -p "$work/a" "$work/b" "$work/www"
for lab in a b; do
	case $lab in a) sub=10.90.0 ;; b) sub=10.91.0 ;; esac
	bash "$BF_SRC/tools/netns-fleet" up --dir "$work/$lab/fleet" --hosts 2 \
		--prefix bfp$lab --subnet $sub --bridge bfbrp$lab --force ||
		{ echo "fleet $lab did not come up"; exit 1; }
	defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$work/$lab/fleet'"
done
start_daemon "$work/a" --known-hosts "$work/a/fleet/known_hosts" || exit 1
URL_A=$URL PID_A=$DAEMON_PID
defer "kill $PID_A 2>/dev/null; wait $PID_A 2>/dev/null"
start_daemon "$work/b" --known-hosts "$work/b/fleet/known_hosts" \
	--peer-allow 127.0.0.0/8 --peer-allow-http || exit 1
URL_B=$URL PID_B=$DAEMON_PID
defer "kill $PID_B 2>/dev/null; wait $PID_B 2>/dev/null"
DAEMON_PID=
lab() { URL=$1; }	# api/wait_job use $URL
cli() { "$BIN/benchfleet" --url "$URL" "$@"; }

for l in a b; do
	[ $l = a ] && lab "$URL_A" || lab "$URL_B"
	while IFS=$'\t' read -r name addr port user key; do
		r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"lab\"}")
		check_eq "lab $l: register $name" "$(status_of "$r")" 201
	done < "$work/$l/fleet/hosts.tsv"
done

# --- lab A: the original job ---
lab "$URL_A"
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","preset":"test","name":"orig",
	"machines":{"class":"lab"},"matrix":{"passes":[1,2]},"repetitions":{"iterations":3}}')
check_eq "lab A: submit" "$(status_of "$r")" 201
JA=$(body_of "$r" | jq -r .id)
check_eq "lab A: job" "$(wait_job "$JA" 180)" done
BUNDLE_URL=$URL_A/api/v1/jobs/$JA/bundle

# The admin here sees the bundle; another lab does not, until published.
code=$(curl -sS -o "$work/bundle.json" -w '%{http_code}' "$BUNDLE_URL")
check_eq "lab A: own admin exports an unpublished job" "$code" 200
check_eq "bundle format" "$(jq -r .format "$work/bundle.json")" benchfleet-bundle
check_eq "bundle samples" "$(jq '[.samples[] | select(.metric=="faults")] | length' "$work/bundle.json")" 6
check_eq "bundle has fingerprints" "$(jq -r '.machines[0].fingerprint.type' "$work/bundle.json")" fingerprint
code=$(curl -sS -o /dev/null -w '%{http_code}' -H 'X-Benchfleet-Peer: test' "$BUNDLE_URL")
check_eq "peer: unpublished bundle" "$code" 404
check_eq "not in the published list" "$(curl -fsS "$URL_A/api/v1/jobs?published=1" | jq '.jobs | length')" 0

# Lab B's machines must be fingerprinted before matching.
for n in bfpb1 bfpb2; do
	for i in $(seq 100); do
		[ "$(curl -fsS "$URL_B/api/v1/machines/$n" | jq -r '.fingerprint.type // empty')" = fingerprint ] && break
		[ "$i" = 5 ] && curl -sS -X POST "${JSON[@]}" "$URL_B/api/v1/machines/$n/probe" >/dev/null
		sleep 0.3
	done
done
lab "$URL_B"
njobs_b=$(curl -fsS "$URL_B/api/v1/jobs" | jq '.jobs | length')
r=$(api POST /api/v1/reproductions "{\"url\":\"$BUNDLE_URL\"}")
check_eq "lab B: unpublished job by URL" "$(status_of "$r")" 502
check "lab B: logs the peer's 404" grep -q "answered HTTP 404" "$work/b/daemon.log"

lab "$URL_A"
check "lab A: publish (CLI)" cli publish "$JA"
check_eq "published list" "$(curl -fsS "$URL_A/api/v1/jobs?published=1" | jq -r '.jobs[0].id')" "$JA"

# --- lab B: lab A's signature is not trusted yet ---
lab "$URL_B"
check_eq "bundle signed by lab A" "$(curl -fsS "$BUNDLE_URL" | jq -r .signature.public_key)" \
	"$(curl -fsS "$URL_A/api/v1/lab" | jq -r .public_key)"
FP_A=$(curl -fsS "$URL_A/api/v1/lab" | jq -r .fingerprint)
check "the two labs have different keys" test "$FP_A" != "$(curl -fsS "$URL_B/api/v1/lab" | jq -r .fingerprint)"
r=$(api POST /api/v1/reproductions "{\"url\":\"$BUNDLE_URL\"}")
check_eq "lab B: untrusted lab A, no rerun" "$(status_of "$r")" 409
check_eq "lab B: untrusted: the signature" "$(body_of "$r" | jq -r .detail.trust.state)" untrusted
check_contains "lab B: untrusted: the key" "$(body_of "$r" | jq -r .error)" "untrusted key $FP_A"
check_eq "lab B: untrusted: nothing written" "$(curl -fsS "$URL_B/api/v1/jobs" | jq '.jobs | length')" "$njobs_b"
# B's admin trusts A's key, fetched from A, pinned to the fingerprint A
# told B by another channel
out=$(cli labs trust lab-a "$URL_A/api/v1/lab" --fingerprint "$FP_A")
check_contains "lab B: labs trust by URL" "$out" "$FP_A"
check_eq "lab B: keyring" "$(cli --json labs | jq -r '.labs[0].name')" lab-a

# --- lab B: reproduce by URL ---
r=$(api POST /api/v1/reproductions "{\"url\":\"$BUNDLE_URL\",\"delta_pct\":2}")
check_eq "lab B: reproduction" "$(status_of "$r")" 201
check_eq "lab B: signed by lab A" "$(body_of "$r" | jq -r .signature)" "signed by lab lab-a (key $FP_A)"
R1=$(body_of "$r" | jq -r .id)
J1=$(body_of "$r" | jq -r .job_id)
check_eq "lab B: matched both machines" "$(body_of "$r" | jq '[.matches[].here[]] | unique | length')" 2
st=$(curl -fsS "$URL_B/api/v1/reproductions/$R1" | jq -r .state)
check_contains "lab B: running or done" "running done" "$st"
check_eq "lab B: rerun job" "$(wait_job "$J1" 180)" done
rep=$(curl -fsS "$URL_B/api/v1/reproductions/$R1")
check_eq "reproduction done" "$(jq -r .state <<<"$rep")" done
check_eq "a verdict per cell (faults)" "$(jq '[.cells[].metrics[] | select(.metric=="faults")] | length' <<<"$rep")" 2
check_eq "faults reproduced in every cell" "$(jq -r '[.cells[].metrics[] | select(.metric=="faults") | .verdict] | unique | join(",")' <<<"$rep")" reproduced
check_eq "every metric has a verdict" "$(jq '[.cells[].metrics[] | select(.verdict == null)] | length' <<<"$rep")" 0
check_eq "verdict names the lab" "$(jq -r .signature <<<"$rep")" "signed by lab lab-a (key $FP_A)"
txt=$(curl -fsS "$URL_B/api/v1/reproductions/$R1?format=text")
check_contains "text report: verdict" "$txt" reproduced
check_contains "text report: names the lab" "$txt" "bundle signed by lab lab-a (key $FP_A)"
check_contains "text report: diff section" "$txt" "Environment diff"
echo "$txt"

# --- axes not in alphabetical order: the job runs whole (its stored spec
# keeps the order it expands in), the bundle carries that order, and the
# rerun numbers its cells as lab A did; cells are paired by their axes in
# any case (repro_align_cells), so each is compared with its own ---
lab "$URL_A"
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","preset":"test","name":"two axes",
	"machines":{"class":"lab"},"matrix":{"passes":[1,2],"mb":[8,16]},"repetitions":{"iterations":2}}')
check_eq "lab A: two-axis job" "$(status_of "$r")" 201
JX=$(body_of "$r" | jq -r .id)
st=$(wait_job "$JX" 240)
check_eq "lab A: two-axis job done" "$st" done
[ "$st" = done ] || curl -fsS "$URL_A/api/v1/jobs/$JX/runs" | jq -c '.runs[] | {label: .label, state: .state, err: .error}'
check "lab A: publish the two-axis job" cli publish "$JX"
lab "$URL_B"
r=$(api POST /api/v1/reproductions "{\"url\":\"$URL_A/api/v1/jobs/$JX/bundle\"}")
check_eq "lab B: two-axis reproduction" "$(status_of "$r")" 201
RX=$(body_of "$r" | jq -r .id)
check_eq "lab B: two-axis rerun" "$(wait_job "$(body_of "$r" | jq -r .job_id)" 240)" done
rep=$(curl -fsS "$URL_B/api/v1/reproductions/$RX")
check_eq "two axes: lab B numbered the cells as lab A did" \
	"$(curl -fsS "$URL_B/api/v1/jobs/$(jq -r .job_id <<<"$rep")/runs" | jq -c '[.runs[] | {(.cell_index|tostring): .axes}] | add')" \
	"$(curl -fsS "$URL_A/api/v1/jobs/$JX/runs" | jq -c '[.runs[] | {(.cell_index|tostring): .axes}] | add')"
check_eq "two axes: faults reproduced in all four cells" \
	"$(jq -r '[.cells[].metrics[] | select(.metric=="faults") | .verdict] | "\(length) \(unique | join(","))"' <<<"$rep")" "4 reproduced"

# --- a deliberately different rerun: more memory touched, more faults ---
r=$(api POST /api/v1/reproductions "{\"url\":\"$BUNDLE_URL\",\"params\":{\"mb\":48}}")
check_eq "lab B: second reproduction" "$(status_of "$r")" 201
R2=$(body_of "$r" | jq -r .id)
J2=$(body_of "$r" | jq -r .job_id)
check_eq "lab B: second rerun" "$(wait_job "$J2" 180)" done
rep=$(curl -fsS "$URL_B/api/v1/reproductions/$R2")
check_eq "faults differ in every cell" "$(jq -r '[.cells[].metrics[] | select(.metric=="faults") | .verdict] | unique | join(",")' <<<"$rep")" differs
d=$(jq '[.cells[].metrics[] | select(.metric=="faults") | .delta_pct][0]' <<<"$rep")
check "faults +50% (got $d)" awk -v d="$d" 'BEGIN { exit !(d > 45 && d < 55) }'
echo "differs: $(jq -c '[.cells[0].metrics[] | select(.metric=="faults")][0]' <<<"$rep")"
echo "diff: $(jq -c .environment_diff <<<"$rep")"
check_contains "environment diff names the parameter" "$(jq -c .environment_diff <<<"$rep")" '"field":"job.params.mb"'
check_contains "text diff names the parameter" "$(curl -fsS "$URL_B/api/v1/reproductions/$R2?format=text")" "job.params.mb: null (bundle) vs 48 (here)"

# --- issue 16: effects. mb=48 moved every absolute fault count by +50%;
# what a second pass changes (passes:2 vs passes:1: no new faults) is the
# same in both labs, and the effect comparison says so.
rep=$(curl -fsS "$URL_B/api/v1/reproductions/$R2")
check_eq "effects: default baseline, the first axis's first value" "$(jq -r .effects.baseline <<<"$rep")" passes:1
check_eq "effects: margin defaults to delta_pct" "$(jq -r .effects.delta_pct <<<"$rep")" 2
frow=$(jq -c '[.effects.rows[] | select(.metric=="faults")][0]' <<<"$rep")
echo "effects row: $frow"
check_eq "effects: cell passes=2 against passes=1" "$(jq -r '"\(.cell) \(.baseline_cell) \(.label)"' <<<"$frow")" "1 0 passes=2"
check_eq "effects: absolute faults of that cell differ" \
	"$(jq -r '.cells[1].metrics[] | select(.metric=="faults") | .verdict' <<<"$rep")" differs
check_eq "effects: the effect on faults reproduces" "$(jq -r .verdict <<<"$frow")" reproduced
check "effects: ratio of effects within 1% (got $(jq .ratio <<<"$frow"))" \
	awk -v r="$(jq .ratio <<<"$frow")" 'BEGIN { exit !(r > 0.99 && r < 1.01) }'
check "effects: both sides' effects named, with CIs" \
	jq -e '(.bundle.pct | type) == "number" and (.here.ci | length) == 2 and (.ci90 | length) == 2' <<<"$frow"
check_eq "effects: counters left out" "$(jq '[.effects.rows[] | select(.metric | test("^(vmstat|hugepages|pmu|smaps|cgroup)"))] | length' <<<"$rep")" 0
check_eq "effects: the same on a re-read" "$(jq -cS .effects <<<"$rep")" \
	"$(curl -fsS "$URL_B/api/v1/reproductions/$R2" | jq -cS .effects)"
txt=$(curl -fsS "$URL_B/api/v1/reproductions/$R2?format=text")
check_contains "effects: text table" "$txt" "Effects vs baseline passes:1"
check "effects: text row for passes=2 faults, reproduced" \
	grep -Eq '^passes=2 +faults .* reproduced$' <<<"$txt"
echo "$txt" | sed -n '/^Effects vs baseline/,/TOST/p'
rep=$(curl -fsS "$URL_B/api/v1/reproductions/$R2?baseline=passes:2&effect_delta_pct=5")
check_eq "effects: ?baseline=passes:2" "$(jq -r '[.effects.rows[] | select(.metric=="faults")][0] | "\(.cell) \(.baseline_cell)"' <<<"$rep")" "0 1"
check_eq "effects: ?effect_delta_pct" "$(jq -r .effects.delta_pct <<<"$rep")" 5
check_eq "effects: ?baseline=none" "$(curl -fsS "$URL_B/api/v1/reproductions/$R2?baseline=none" | jq -c .effects)" null
for q in "baseline=passes:9" "baseline=thp:never" "baseline=passes" "effect_delta_pct=0" "effect_delta_pct=abc"; do
	r=$(api GET "/api/v1/reproductions/$R2?$q")
	check_eq "effects: ?$q refused" "$(status_of "$r")" 400
	check_eq "effects: ?$q names the field" "$(body_of "$r" | jq -r .detail.field)" "${q%%=*}"
done
# compare-only, with the baseline in the body: kept as GET's default
nrep=$(curl -fsS "$URL_B/api/v1/jobs" | jq '.jobs | length')
r=$(api POST /api/v1/reproductions "{\"bundle\":$(cat "$work/bundle.json"),\"compare_job\":$J2,\"baseline\":\"passes:7\"}")
check_eq "effects: compare-only with a bad baseline" "$(status_of "$r")" 400
check_eq "effects: compare-only bad baseline names the field" "$(body_of "$r" | jq -r .detail.field)" baseline
r=$(api POST /api/v1/reproductions "{\"bundle\":$(cat "$work/bundle.json"),\"compare_job\":$J2,\"baseline\":\"passes:2\",\"effect_delta_pct\":3}")
check_eq "effects: compare-only with a baseline" "$(status_of "$r")" 201
RC=$(body_of "$r" | jq -r .id)
rep=$(curl -fsS "$URL_B/api/v1/reproductions/$RC")
check_eq "effects: compare-only's baseline and margin" "$(jq -r '"\(.effects.baseline) \(.effects.delta_pct)"' <<<"$rep")" "passes:2 3"
check_eq "effects: compare-only effect reproduces" "$(jq -r '[.effects.rows[] | select(.metric=="faults")][0].verdict' <<<"$rep")" reproduced
check_eq "effects: compare-only ran nothing" "$(curl -fsS "$URL_B/api/v1/jobs" | jq '.jobs | length')" "$nrep"

check_eq "the same environment on both sides: no snapshot difference" \
	"$(curl -fsS "$URL_B/api/v1/reproductions/$R1" | jq '[.environment_snapshots.groups[].diff.n] | add')" 0
check_eq "bundle carries one snapshot per run's environment" \
	"$(jq '[.runs[] | select(.snapshot_sha256 != null)] | length' "$work/bundle.json")" \
	"$(jq '.runs | length' "$work/bundle.json")"

# --- issue 16: settings changed between the original and the rerun ---
# The netns hosts of both labs share this kernel's sysfs and sysctls:
# change six host-wide MM settings no job sets (THP defrag, khugepaged
# defrag, shmem_enabled, the 64 kB mTHP size, vm.zone_reclaim_mode,
# kernel.numa_balancing), then rerun, with no machine re-probed. The
# fingerprints are the same; only the snapshots at each run can say what
# changed, and each must be named with both values.
thp=/sys/kernel/mm/transparent_hugepage
declare -A want=()		# snapshot key -> "old->new"
bracket() { sed -n 's/.*\[\(.*\)\].*/\1/p' "$1"; }
flip() {			# flip KEY FILE OLD NEW
	[ -w "$2" ] || return 0
	defer "echo '$3' > '$2'"
	echo "$4" > "$2" && want[$1]="$3->$4"
	restore+=("$3	$2")
}
restore=()
o=$(bracket $thp/defrag); n=always; [ "$o" = always ] && n=never
flip transparent_hugepage/defrag $thp/defrag "$o" "$n"
odefrag=$o ndefrag=$n
o=$(cat $thp/khugepaged/defrag); n=$((1 - o))
flip transparent_hugepage/khugepaged/defrag $thp/khugepaged/defrag "$o" "$n"
o=$(bracket $thp/shmem_enabled); n=advise; [ "$o" = advise ] && n=never
flip transparent_hugepage/shmem_enabled $thp/shmem_enabled "$o" "$n"
o64=
if [ -w $thp/hugepages-64kB/enabled ]; then
	o64=$(bracket $thp/hugepages-64kB/enabled); n64=always; [ "$o64" = always ] && n64=never
	flip transparent_hugepage/hugepages-64kB/enabled $thp/hugepages-64kB/enabled "$o64" "$n64"
fi
o=$(cat /proc/sys/vm/zone_reclaim_mode); n=1; [ "$o" != 0 ] && n=0
flip vm.zone_reclaim_mode /proc/sys/vm/zone_reclaim_mode "$o" "$n"
if [ -e /proc/sys/kernel/numa_balancing ]; then
	o=$(cat /proc/sys/kernel/numa_balancing); n=1; [ "$o" != 0 ] && n=0
	flip kernel.numa_balancing /proc/sys/kernel/numa_balancing "$o" "$n"
fi
check_eq "six settings changed here" "${#want[@]}" 6
# Lab A re-probes its machines under the new settings: its machines now
# say so, but the finished job's bundle stays the same bytes, since its
# machines are as the runs found them.
curl -fsS -o "$work/bundle-before.json" "$BUNDLE_URL"
lab "$URL_A"
for name in $(cut -f1 "$work/a/fleet/hosts.tsv"); do
	r=$(api POST "/api/v1/machines/$name/probe" '')
	check_eq "lab A: re-probe $name" "$(status_of "$r")" 202
done
fp_defrags() {
	for name in $(cut -f1 "$work/a/fleet/hosts.tsv"); do
		curl -fsS "$URL_A/api/v1/machines/$name" | jq -r .fingerprint.thp_defrag
	done | sort -u | paste -sd,
}
for i in $(seq 1 60); do
	[ "$(fp_defrags)" = "$ndefrag" ] && break
	sleep 1
done
check_eq "lab A: machines re-probed under the new defrag" "$(fp_defrags)" "$ndefrag"
curl -fsS -o "$work/bundle-after.json" "$BUNDLE_URL"
check "the finished job's bundle is byte-identical across a re-probe" \
	cmp -s "$work/bundle-before.json" "$work/bundle-after.json"
check_eq "its machines still say the defrag the job ran under" \
	"$(jq -r '[.machines[].fingerprint.thp_defrag] | unique | join(",")' "$work/bundle-after.json")" "$odefrag"
lab "$URL_B"
r=$(api POST /api/v1/reproductions "{\"url\":\"$BUNDLE_URL\"}")
check_eq "lab B: third reproduction" "$(status_of "$r")" 201
R3=$(body_of "$r" | jq -r .id)
check_eq "lab B: third rerun" "$(wait_job "$(body_of "$r" | jq -r .job_id)" 180)" done
for x in "${restore[@]}"; do echo "${x%%	*}" > "${x#*	}"; done
# Every setting is back as it was; the stored reproduction still names them.
rep=$(curl -fsS "$URL_B/api/v1/reproductions/$R3")
keys=$(jq -c '[.environment_snapshots.groups[].diff.groups[].keys[]]' <<<"$rep")
echo "snapshot diff: $keys"
for k in "${!want[@]}"; do
	check_eq "snapshot diff names $k, bundle vs here" \
		"$(jq -r --arg k "$k" '[.[] | select(.key==$k) | "\(.a)->\(.b)"] | unique | join(",")' <<<"$keys")" \
		"${want[$k]}"
done
check_eq "every cell compared" "$(jq '[.environment_snapshots.groups[].cells[]] | length' <<<"$rep")" 2
check_eq "nothing else differs" \
	"$(jq -r --argjson w "$(printf '%s\n' "${!want[@]}" | jq -R . | jq -sc .)" '[.[].key | select(. as $k | $w | index($k) | not)] | unique | join(",")' <<<"$keys")" ""
if [ -n "${o64:-}" ] && [ "$n64" = always ]; then
	# page-touch faults its pages in: with 64 kB mTHP on, the kernel
	# allocates 64 kB folios, and the counters say so.
	check_contains "counters name the 64 kB faults" \
		"$(jq -c '[.cells[].counters_changed[]]' <<<"$rep")" "hugepages-64kB.anon_fault_alloc: 0 -> "
	# a THP change gives `differs`, explained by the setting and the counter
	check_eq "faults differ in every cell" \
		"$(jq -r '[.cells[].metrics[] | select(.metric=="faults") | .verdict] | unique | join(",")' <<<"$rep")" differs
	ex=$(jq -c '[.cells[].metrics[] | select(.metric=="faults") | .explained_by]' <<<"$rep")
	check_contains "explained by the 64 kB setting" "$ex" "hugepages-64kB/enabled"
	check_contains "explained by the 64 kB counter" "$ex" "hugepages-64kB.anon_fault_alloc"
fi
txt=$(curl -fsS "$URL_B/api/v1/reproductions/$R3?format=text")
check_contains "text: snapshot section" "$txt" "Environment at each run (snapshots, bundle's lab vs here):"
check_contains "text: the defrag change" "$txt" "transparent_hugepage/defrag: $odefrag -> $ndefrag"
check_contains "text: counters section" "$txt" "MM counters that changed"
echo "$txt" | sed -n '/Environment at each run/,$p'

# --- refusals ---
jq -c '.samples[0].value += 1' "$work/bundle.json" >"$work/tampered.json"
r=$(api POST /api/v1/reproductions "$(cat "$work/tampered.json")")
check_eq "tampered bundle" "$(status_of "$r")" 400
check_eq "tampered: names the hash" "$(body_of "$r" | jq -r .detail.field)" sha256
jq -c '.job.repetitions.iterations = 9' "$work/bundle.json" >"$work/tampered2.json"
r=$(api POST /api/v1/reproductions "{\"bundle\":$(cat "$work/tampered2.json")}")
check_eq "tampered job" "$(status_of "$r")" 400
check_eq "tampered job: names the hash" "$(body_of "$r" | jq -r .detail.field)" job_sha256
# No refusal prints a hash: they are checksums, and the expected value
# would only help a forger.
check "tampered: no hash in the answer" bash -c '! grep -Eq "[0-9a-f]{64}" <<<"$1"' _ "$(body_of "$r")"
r=$(api POST /api/v1/reproductions '{"bundle":{"format":"benchfleet-bundle","version":"1"}}')
check_eq "wrong type" "$(status_of "$r")" 400
check_eq "wrong type: field" "$(body_of "$r" | jq -r .detail.field)" version
r=$(api POST /api/v1/reproductions '{"url":"file:///etc/passwd"}')
check_eq "file URL refused" "$(status_of "$r")" 502

# Hardware that matches nothing: the fingerprint edited and every hash
# recomputed (bf-bundle rehash, which drops A's signature): the edit is
# refused as unsigned, and with an admin's override (auth is off here:
# every local caller is an admin) it gets as far as the machine match.
jq -c '.machines |= map(.fingerprint.cpu_model = "Imaginary CPU 9999")' \
	"$work/bundle.json" | "$BIN/bf-bundle" rehash >"$work/other.json"
r=$(api POST /api/v1/reproductions "$(cat "$work/other.json")")
check_eq "edited bundle: unsigned, no rerun" "$(status_of "$r")" 409
check_eq "edited bundle: says unsigned" "$(body_of "$r" | jq -r .detail.trust.state)" unsigned
jq -c --slurpfile s "$work/bundle.json" '.signature = $s[0].signature' "$work/other.json" >"$work/o2"
r=$(api POST /api/v1/reproductions "$(cat "$work/o2")")
check_eq "edited bundle with A's signature kept: 400" "$(status_of "$r")" 400
check_eq "edited bundle with A's signature kept: names it" "$(body_of "$r" | jq -r .detail.field)" signature
r=$(api POST /api/v1/reproductions "{\"bundle\":$(cat "$work/other.json"),\"override\":true}")
check_eq "unmatched hardware" "$(status_of "$r")" 409
echo "unmatched: $(body_of "$r")"
check_contains "unmatched: nearest machine named" "$(body_of "$r" | jq -r .detail.nearest)" bfpb
check_contains "unmatched: field named" "$(body_of "$r" | jq -c .detail.differs)" '"field":"cpu_model"'
check_eq "unmatched: nothing written" "$(curl -fsS "$URL_B/api/v1/jobs" | jq ".jobs | length")" $((njobs_b + 4))
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL_B/api/v1/reproductions/$((R3 + 1))")
check_eq "unmatched: no reproduction recorded" "$code" 404

# A bundle URL larger than the cap (4 MiB): refused by its length, and
# when no length is sent, cut off at the cap as it arrives.
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$PID_B/status"; }
truncate -s $((64 * 1024 * 1024 + 1)) "$work/www/big.json"
(cd "$work/www" && exec python3 -u -m http.server --bind 127.0.0.1 0 >"$work/http.log" 2>&1) &
HTTP_PID=$!
defer "kill $HTTP_PID 2>/dev/null"
cat >"$work/stream.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        chunk = b" " * (1 << 20)
        try:
            for _ in range(200):
                self.wfile.write(chunk)
        except Exception:
            pass
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
python3 "$work/stream.py" "$work/stream.port" &
STREAM_PID=$!
defer "kill $STREAM_PID 2>/dev/null"
for i in $(seq 50); do
	port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/http.log" | head -1)
	[ -n "$port" ] && [ -s "$work/stream.port" ] && break
	sleep 0.1
done
h0=$(hwm)
r=$(api POST /api/v1/reproductions "{\"url\":\"http://127.0.0.1:$port/big.json\"}")
check_eq "oversized bundle by length" "$(status_of "$r")" 502
h1=$(hwm)
check "no memory taken for the announced size (VmHWM $h0 -> $h1 kB)" test $((h1 - h0)) -lt 32768
r=$(api POST /api/v1/reproductions "{\"url\":\"http://127.0.0.1:$(cat "$work/stream.port")/x\"}")
check_eq "oversized bundle without a length" "$(status_of "$r")" 502
check "oversized: the log says so" grep -q "larger than" "$work/b/daemon.log"
h2=$(hwm)
echo "VmHWM: $h0 -> $h1 -> $h2 kB"
# The body is kept up to the cap (4 MiB), grown by doubling; under ASan its
# quarantine holds the freed smaller buffers too: about 2.5x the cap at most.
check "memory bounded by the cap (VmHWM $h1 -> $h2 kB)" test $((h2 - h1)) -lt $((200 * 1024))

# --- the CLI: a file, waiting for the verdicts ---
out=$(cli reproduce "$work/bundle.json" --delta 5 --wait 2>&1)
check_contains "CLI reproduce --wait: verdicts" "$out" "reproduced"
check_contains "CLI reproduce --wait: diff" "$out" "Environment diff"

# --- with auth on in lab A: unpublished bundles for its admins only ---
lab "$URL_A"
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","preset":"test","machines":{"class":"lab"},"repetitions":{"iterations":1}}')
JU=$(body_of "$r" | jq -r .id)
view=$("$BIN/benchfleetd" token create --store "$(bf_store "$work/a")" --role viewer 2>/dev/null)
admin=$("$BIN/benchfleetd" token create --store "$(bf_store "$work/a")" --role admin 2>/dev/null)
bcode() { curl -sS -o /dev/null -w '%{http_code}' ${1:+-H "Authorization: Bearer $1"} "$URL_A/api/v1/jobs/$2/bundle"; }
check_eq "auth: no token" "$(bcode "" "$JA")" 401
check_eq "auth: viewer, published" "$(bcode "$view" "$JA")" 200
check_eq "auth: viewer, unpublished" "$(bcode "$view" "$JU")" 404
check_eq "auth: admin, unpublished" "$(bcode "$admin" "$JU")" 200
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "${JSON[@]}" -H "Authorization: Bearer $view" "$URL_A/api/v1/jobs/$JU/publish")
check_eq "auth: viewer cannot publish" "$code" 403
wait_job_auth() { local i; for i in $(seq 300); do
	case $(curl -fsS -H "Authorization: Bearer $admin" "$URL_A/api/v1/jobs/$JU" | jq -r .state) in
	done|failed|cancelled) return 0 ;; esac; sleep 0.2; done; }
wait_job_auth

for p in $PID_A $PID_B; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
check_sanitizers "$work/a/daemon.log"
check_sanitizers "$work/b/daemon.log"
finish
