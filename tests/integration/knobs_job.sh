#!/usr/bin/env bash
# Knobs through the whole system: a redis job with matrix thp_enabled
# [never, always] x 2 iterations on the netns fleet. Each run's stored knob
# state shows the requested THP mode read back; a knob that cannot be set
# fails its run with the reason and no samples; THP is restored; machines
# are fingerprinted and POST /machines/{name}/probe refreshes it.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

thp=/sys/kernel/mm/transparent_hugepage/enabled
[ -w "$thp" ] || { echo "THP sysfs is not writable here: $thp"; exit 1; }
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
	{ echo "redis-server/redis-benchmark missing: bash deploy/install-deps --test"; exit 1; }
orig=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$thp")
defer "echo '$orig' > '$thp'"
work=$(mktemp -d /tmp/bf-knobs.XXXXXX)
defer "rm -rf '$work'"
fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 2 --prefix bfn \
	--subnet 10.87.0 --bridge bfbrn --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
start_daemon "$work" --known-hosts "$fleet/known_hosts" || exit 1
defer stop_daemon
while IFS=$'\t' read -r name addr port user key; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"knobs\"}")
	check_eq "register $name" "$(status_of "$r")" 201
done < "$fleet/hosts.tsv"

# The netns hosts share this kernel's sysfs, so the two THP modes must not
# be applied at the same time: one machine runs the whole job.
r=$(api POST /api/v1/jobs '{"recipe":"redis","preset":"test","machines":{"names":["bfn1"]},
	"matrix":{"thp_enabled":["never","always"]},"repetitions":{"iterations":2}}')
check_eq "submit" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
check_eq "job" "$(wait_job "$id" 240)" done
runs=$(curl -fsS "$URL/api/v1/jobs/$id/runs")
for mode in never always; do
	run=$(jq -c --arg m "$mode" '.runs[] | select(.axes.thp_enabled==$m)' <<<"$runs")
	check_eq "thp=$mode requested" "$(jq -r .knobs_requested.thp_enabled <<<"$run")" "$mode"
	check_eq "thp=$mode read back" "$(jq -r .knobs.after.thp_enabled <<<"$run")" "$mode"
	check "thp=$mode: state before recorded" test -n "$(jq -r '.knobs.before.thp_enabled // empty' <<<"$run")"
	check_eq "thp=$mode: 2 get_rps samples" "$(jq '[.samples[] | select(.metric=="get_rps" and .value > 0)] | length' <<<"$run")" 2
	echo "thp=$mode get_rps: $(jq -r '[.samples[] | select(.metric=="get_rps") | .value] | join(" ")' <<<"$run")"
	# Evidence (docs/evidence.md): the environment as it was at this run,
	# and the MM counters inside each timed window.
	sha=$(jq -r .snapshot_sha256 <<<"$run")
	check "thp=$mode: run names its snapshot" grep -qE '^[0-9a-f]{64}$' <<<"$sha"
	snap=$(curl -fsS "$URL/api/v1/snapshots/$sha")
	check_eq "thp=$mode: snapshot shows the mode it ran under" \
		"$(jq -r '.snapshot["transparent_hugepage/enabled"]' <<<"$snap")" "$mode"
	check_eq "thp=$mode: snapshot hash is over its canonical text" \
		"$(jq -cjS .snapshot <<<"$snap" | sha256sum | cut -c1-64)" "$sha"
	eval "sha_$mode=$sha"
	check_eq "thp=$mode: vmstat.pgfault counted in both windows" \
		"$(jq '[.samples[] | select(.metric=="vmstat.pgfault" and .value > 0 and .unit=="count")] | length' <<<"$run")" 2
	check_eq "thp=$mode: thp_fault_alloc recorded per iteration" \
		"$(jq '[.samples[] | select(.metric=="vmstat.thp_fault_alloc")] | length' <<<"$run")" 2
	echo "thp=$mode thp_fault_alloc: $(jq -r '[.samples[] | select(.metric=="vmstat.thp_fault_alloc") | .value] | join(" ")' <<<"$run")"
done
check "two THP modes, two snapshots" test "$sha_never" != "$sha_always"
check_eq "thp=never: no huge page faulted in any window" \
	"$(jq '[.runs[] | select(.axes.thp_enabled=="never") | .samples[] | select(.metric=="vmstat.thp_fault_alloc" and .value != 0)] | length' <<<"$runs")" 0
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/snapshots/$(printf '0%.0s' $(seq 64))")
check_eq "unknown snapshot" "$code" 404
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/snapshots/${sha_never^^}")
check_eq "snapshot name must be lowercase hex" "$code" 400
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/snapshots/..%2f..%2fetc")
check "snapshot name with a path is refused" test "$code" -ge 400 -a "$code" -lt 500
check_eq "THP restored after the job" "$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$thp")" "$orig"
rep=$(curl -fsS "$URL/api/v1/jobs/$id/report?baseline=thp_enabled:never")
check_contains "report compares THP modes" "$rep" "thp_enabled=always"
# The report's evidence (docs/report.md): THP counter rows beside get_rps,
# no better or worse; the THP mode is the axis, so its snapshots differ by
# design (enabled, and the vm.min_free_kbytes khugepaged sets with it) and
# no drift of those is reported. This kernel's sysfs is shared with
# whatever else runs here: a setting another test changes mid-job (seen:
# transparent_hugepage/defrag) is drift the report rightly names, so only
# the keys the axis moves are asserted, the rest printed.
echo "$rep"
check_contains "report: thp_fault_alloc row" "$rep" "vmstat.thp_fault_alloc (count) - no better or worse"
jrep=$(curl -fsS "$URL/api/v1/jobs/$id/report?baseline=thp_enabled:never&format=json")
check_eq "report json: thp_fault_alloc has no direction" \
	"$(jq -r '.metrics[] | select(.name=="vmstat.thp_fault_alloc") | .direction' <<<"$jrep")" none
check_eq "report json: the THP axis is no drift" \
	"$(jq '[.warnings[] | select(test("environment changed") and test("transparent_hugepage/enabled|vm.min_free_kbytes"))] | length' <<<"$jrep")" 0
other=$(jq -r '.warnings[] | select(test("environment changed"))' <<<"$jrep")
[ -z "$other" ] || echo "note: drift from outside the job (shared sysfs): $other"
check_eq "report json: the never cell's THP counter is 0" \
	"$(jq '.metrics[] | select(.name=="vmstat.thp_fault_alloc") | .rows[] | select(.cell=="thp_enabled=never") | .mean' <<<"$jrep")" 0
check_eq "report counters=none: no counter rows" \
	"$(curl -fsS "$URL/api/v1/jobs/$id/report?counters=none&format=json" | jq '[.metrics[] | select(.direction=="none")] | length')" 0
ndef=$(jq '[.metrics[] | select(.direction=="none")] | length' <<<"$jrep")
check "report: some THP counter rows by default" test "$ndef" -ge 2
# mTHP sizes that counted nothing are left out by default and counted
jall=$(curl -fsS "$URL/api/v1/jobs/$id/report?counters=all&format=json")
check_eq "report: no all-zero mTHP row by default" \
	"$(jq '[.metrics[] | select(.name | startswith("hugepages-")) | select([.rows[].mean] | all(. == 0))] | length' <<<"$jrep")" 0
nz=$(jq '[.metrics[] | select(.name | startswith("hugepages-")) | select([.rows[].mean] | all(. == 0))] | length' <<<"$jall")
if [ "$nz" -gt 0 ]; then
	check_contains "report: the left-out mTHP rows are counted" "$rep" "mTHP counters zero in every sample not shown"
fi
check "report counters=all: more counter rows than the THP ones" test \
	"$(curl -fsS "$URL/api/v1/jobs/$id/report?counters=all&format=json" | jq '[.metrics[] | select(.direction=="none")] | length')" -gt "$ndef"
# The stock redis recipe expects huge pages with THP always (recipes/redis.json):
# carried in the job's spec, checked by the report, and it holds here.
check_eq "job spec carries the recipe's expect" \
	"$(curl -fsS "$URL/api/v1/jobs/$id" | jq -r '.spec.recipe.expect[0].metric')" vmstat.thp_fault_alloc
check "report: the recipe's THP expectation holds" bash -c '! grep -q "expectation" <<<"$1"' _ "$rep"
check "report: THP was faulted in under always" bash -c '! grep -q "did not get THP" <<<"$1"' _ "$rep"
r=$(api GET "/api/v1/jobs/$id/report?counters=most")
check_eq "report counters=most refused" "$(status_of "$r")" 400
check_eq "report counters=most: names the field" "$(body_of "$r" | jq -r .detail.field)" counters

# A knob that cannot be set: fails the run, names the size, measures nothing.
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["bfn2"]},
	"knobs":{"mthp_3kB":"always"},"repetitions":{"iterations":1}}')
if [ "$(status_of "$r")" = 201 ]; then
	bad=$(body_of "$r" | jq -r .id)
	check_eq "impossible knob: job failed" "$(wait_job "$bad" 60)" failed
	brun=$(curl -fsS "$URL/api/v1/jobs/$bad/runs" | jq -c '.runs[0]')
	check_contains "impossible knob: reason names the size" "$(jq -r .error <<<"$brun")" "3kB"
	check_eq "impossible knob: nothing measured" "$(jq '.samples | length' <<<"$brun")" 0
else
	check_contains "impossible knob refused at submit" "$(body_of "$r")" "mthp_3kB"
fi
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"class":"knobs"},"knobs":{"thp_enabled":"alwayz"}}')
check_eq "bad knob value refused" "$(status_of "$r")" 400
check_contains "bad knob value named" "$(body_of "$r")" "knobs.thp_enabled"

# The evidence check fires where THP was asked for and did not happen:
# 1 MiB of page-touch under enabled=always holds no 2 MiB-aligned range,
# so no PMD huge page can be faulted in, whatever the setting says.
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","machines":{"names":["bfn1"]},
	"params":{"mb":1,"passes":1},"knobs":{"thp_enabled":"always"},"repetitions":{"iterations":2}}')
check_eq "small page-touch under always: submit" "$(status_of "$r")" 201
sid=$(body_of "$r" | jq -r .id)
check_eq "small page-touch under always: job" "$(wait_job "$sid" 120)" done
srep=$(curl -fsS "$URL/api/v1/jobs/$sid/report?format=json")
check_eq "small page-touch: no huge page faulted in" \
	"$(jq '.metrics[] | select(.name=="vmstat.thp_fault_alloc") | .rows[0].mean' <<<"$srep")" 0
check_contains "small page-touch: the evidence check fires" "$(jq -c .warnings <<<"$srep")" \
	"THP enabled=always but no huge page was faulted in"
check_contains "the text report says so too" \
	"$(curl -fsS "$URL/api/v1/jobs/$sid/report?format=text")" "no huge page was faulted in"

# Fingerprints: taken when a machine first connects, refreshed on request.
m=$(curl -fsS "$URL/api/v1/machines/bfn1")
check_eq "fingerprint stored" "$(jq -r .fingerprint.type <<<"$m")" fingerprint
check_eq "fingerprint hash stored" "$(jq -r '.fingerprint_sha256 | length' <<<"$m")" 64
check_contains "fingerprint has the CPU" "$(jq -r .fingerprint.cpu_model <<<"$m")" "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1 | cut -c1-8)"
r=$(api POST /api/v1/machines/bfn2/probe '')
check_eq "probe request" "$(status_of "$r")" 202
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "${JSON[@]}" "$URL/api/v1/machines/ghost/probe")
check_eq "probe of an unknown machine" "$code" 404
stop_daemon
check_sanitizers "$work/daemon.log"
finish
