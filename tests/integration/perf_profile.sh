#!/usr/bin/env bash
# perf_profile.sh: profiles as artifacts (issue 16) through the whole
# system, on a netns fleet of 2 hosts and the machine's own linux-perf. A
# job with "profile": {"perf": "record"} on the agent's built-in CPU loop
# over 2 cells: the cell on the host with perf is done with exactly the
# iterations and samples of the same job without a profile (the profiled
# iteration is no sample); its folded stacks have the loop's symbol
# (basic_cpu: the static agent is not stripped), the flame graph is XML
# with no script, served as image/svg+xml under a CSP forbidding script,
# perf.data is perf's and hashes to what the API says, the perf event is
# said, the agent's temporary directory is gone. The other host sees no
# perf (an empty file bind-mounted over it in its sshd's own mount
# namespace): its cell fails with "perf not found", and only that cell.
# 404 for runs with no profile, 400 naming format; the CLI's profile and
# profile diff; a viewer token reads a profile.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

perf=$(command -v perf) || { echo "perf missing: bash deploy/install-deps --test (linux-perf)"; exit 1; }
perf=$(readlink -f "$perf")
command -v nsenter >/dev/null || { echo "nsenter missing (util-linux)"; exit 1; }
work=$(mktemp -d /tmp/bf-perf.XXXXXX)
defer "rm -rf '$work'"
fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 2 --prefix bfpf \
	--subnet 10.116.0 --bridge bfbr116 --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"

# Host 2 without perf: its sshd has a private mount namespace (netns-fleet
# runs it under unshare -m), which every session it starts inherits.
sshd2=$(cat "$fleet/bfpf2/sshd.pid")
: >"$work/no-perf"
chmod 0644 "$work/no-perf"
nsenter -t "$sshd2" -m -- mount --bind "$work/no-perf" "$perf" ||
	{ echo "cannot hide perf on bfpf2"; exit 1; }
check "bfpf2's namespace has no executable perf" \
	nsenter -t "$sshd2" -m -- sh -c "! test -x '$perf' && ! test -s '$perf'"
check "this namespace still has perf" test -x "$perf" -a -s "$perf"

start_daemon "$work" --known-hosts "$fleet/known_hosts" || exit 1
defer stop_daemon
while IFS=$'\t' read -r name addr port user key; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"prof\"}")
	check_eq "register $name" "$(status_of "$r")" 201
done <"$fleet/hosts.tsv"
before_tmp=$(ls -d /tmp/bf-profile.* 2>/dev/null | sort)

# The same work without a profile: what a run measures and stores.
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"names":["bfpf1"]},
	"params":{"loops":100000000},"repetitions":{"iterations":2}}')
check_eq "submit the unprofiled job" "$(status_of "$r")" 201
base=$(body_of "$r" | jq -r .id)
check_eq "unprofiled job" "$(wait_job "$base" 120)" done
brun=$(curl -fsS "$URL/api/v1/jobs/$base/runs" | jq -c '.runs[0]')
bid=$(jq -r .id <<<"$brun")
check "the unprofiled run has samples" test "$(jq '.samples | length' <<<"$brun")" -gt 0

r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"names":["bfpf1","bfpf2"]},
	"matrix":{"loops":[100000000,100000001]},"repetitions":{"iterations":2},
	"profile":{"perf":"record","freq":499}}')
check_eq "submit the profiled job" "$(status_of "$r")" 201
job=$(body_of "$r" | jq -r .id)
st=$(wait_job "$job" 240)
check "profiled job ended" test "$st" = failed -o "$st" = done
runs=$(curl -fsS "$URL/api/v1/jobs/$job/runs")
echo "runs: $(jq -c '[.runs[] | {id, machine, state, error}]' <<<"$runs")"
check_eq "one run per host" "$(jq -r '[.runs[].machine] | sort | join(",")' <<<"$runs")" "bfpf1,bfpf2"
good=$(jq -c '.runs[] | select(.machine=="bfpf1")' <<<"$runs")
bad=$(jq -c '.runs[] | select(.machine=="bfpf2")' <<<"$runs")
rid=$(jq -r .id <<<"$good")
xid=$(jq -r .id <<<"$bad")
check_eq "the cell with perf is done" "$(jq -r .state <<<"$good")" done
check_eq "the cell without perf failed" "$(jq -r .state <<<"$bad")" failed
check_contains "and says why" "$(jq -r .error <<<"$bad")" "profile: perf not found (install linux-perf)"
check_eq "the cell without perf measured nothing" "$(jq '.samples | length' <<<"$bad")" 0
# The workload's and the agent's own metrics, per iteration: the MM
# counters beside them leave out what did not change, so their number moves
# from run to run and is compared as a set of iterations only.
meas='[.samples[] | select(.metric | test("^(vmstat|hugepages-|cgroup|pmu|smaps)\\.") | not) | "\(.iteration) \(.metric)"] | sort'
check_eq "profiled run: the measurements of an unprofiled one" \
	"$(jq -c "$meas" <<<"$good")" "$(jq -c "$meas" <<<"$brun")"
check "profiled run: measurements of 2 iterations" test "$(jq -c "$meas | length" <<<"$good")" -ge 4
check_eq "profiled run: samples of iterations 0 and 1 only, as unprofiled" \
	"$(jq -c '[.samples[].iteration] | unique' <<<"$good")" "$(jq -c '[.samples[].iteration] | unique' <<<"$brun")"
log=$(curl -fsS "$URL/api/v1/runs/$rid/log" | jq -r '.lines[].line')
check_contains "the run log says the event" "$log" "profile: perf record -e "
after_tmp=$(ls -d /tmp/bf-profile.* 2>/dev/null | sort)
check_eq "the agent removed its temporary directory" "$after_tmp" "$before_tmp"

# folded
code=$(curl -sS -D "$work/fh" -o "$work/folded" -w '%{http_code}' "$URL/api/v1/runs/$rid/profile?format=folded")
check_eq "folded" "$code" 200
hdr() { tr -d '\r' <"$1" | sed -n "s/^$2: //Ip" | head -1; }
event=$(hdr "$work/fh" X-Benchfleet-Perf-Event)
check "the perf event is said" grep -qxE 'cycles|cpu-clock' <<<"$event"
check_contains "folded is text" "$(hdr "$work/fh" Content-Type)" "text/plain"
check_eq "folded: its sha256 as the API says" "$(sha256sum <"$work/folded" | cut -c1-64)" \
	"$(hdr "$work/fh" X-Benchfleet-Artifact-Sha256)"
check "folded has the workload's symbol" grep -q ';basic_cpu [0-9]*$' "$work/folded"
check "every folded line is STACK COUNT" bash -c "! grep -vqE '^[^ ].* [1-9][0-9]*\$' '$work/folded'"
nfolded=$(wc -l <"$work/folded")
nprof=$(awk '{ s += $NF } END { print s }' "$work/folded")
echo "folded: $nfolded stacks, $nprof samples on $event"
check "the profile has samples" test "$nprof" -gt 10
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/runs/$rid/profile")
check_eq "folded is the default format" "$code" 200

# svg
code=$(curl -sS -D "$work/sh" -o "$work/flame.svg" -w '%{http_code}' "$URL/api/v1/runs/$rid/profile?format=svg")
check_eq "svg" "$code" 200
check_eq "svg content type" "$(hdr "$work/sh" Content-Type)" "image/svg+xml"
check_contains "svg CSP forbids script" "$(hdr "$work/sh" Content-Security-Policy)" "script-src 'none'"
check "svg parses as XML" python3 -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag.endswith("svg"), root.tag
assert not [e for e in root.iter() if e.tag.lower().endswith("script")]
assert any("basic_cpu" in (e.text or "") for e in root.iter())' "$work/flame.svg"
check "svg has no <script" bash -c "! grep -qi '<script' '$work/flame.svg'"
check_eq "svg names the folded text it drew" "$(hdr "$work/sh" X-Benchfleet-Artifact-Sha256)" \
	"$(hdr "$work/fh" X-Benchfleet-Artifact-Sha256)"

# perf.data
code=$(curl -sS -D "$work/ph" -o "$work/perf.data" -w '%{http_code}' "$URL/api/v1/runs/$rid/profile?format=perf.data")
check_eq "perf.data" "$code" 200
check_eq "perf.data: its sha256 as the API says" "$(sha256sum <"$work/perf.data" | cut -c1-64)" \
	"$(hdr "$work/ph" X-Benchfleet-Artifact-Sha256)"
check_eq "perf.data is perf's" "$(head -c 8 "$work/perf.data")" "PERFILE2"
check_contains "perf.data is an attachment" "$(hdr "$work/ph" Content-Disposition)" "attachment"
# (its symbols are in the agent as bfpf1 sees it, under that host's /root)
check "perf report reads it" bash -c "'$perf' report -i '$work/perf.data' --stdio --sort comm 2>/dev/null | grep -q benchfleet-agen"
echo "perf.data: $(stat -c %s "$work/perf.data") bytes"

# what has no profile, and what is not a format
for id in "$bid" "$xid" 999999; do
	code=$(curl -sS -o "$work/body" -w '%{http_code}' "$URL/api/v1/runs/$id/profile?format=folded")
	check_eq "run $id: no profile" "$code" 404
done
code=$(curl -sS -o "$work/body" -w '%{http_code}' "$URL/api/v1/runs/$rid/profile?format=png")
check_eq "format=png" "$code" 400
check_eq "400 names format" "$(jq -r .detail.field "$work/body")" format

# the CLI
cli() { "$BIN/benchfleet" --url "$URL" "$@"; }
out=$(cli profile "$rid" --top 5 --svg "$work/cli.svg")
check_eq "cli profile" "$?" 0
echo "$out"
check_contains "cli profile: the symbol" "$out" "  basic_cpu"
check_contains "cli profile: the event" "$out" "run $rid ($event): $nprof samples"
check "cli --svg wrote the flame graph" cmp -s "$work/cli.svg" "$work/flame.svg"
check "cli --folded is the folded text" bash -c "cmp -s <('$BIN/benchfleet' --url '$URL' profile '$rid' --folded) '$work/folded'"
j=$(cli --json profile "$rid" --top 0)
check_eq "cli --json: samples" "$(jq .samples <<<"$j")" "$nprof"
check "cli --json: basic_cpu has self samples" test "$(jq '[.rows[] | select(.symbol=="basic_cpu") | .self_pct > 0] | .[0]' <<<"$j")" = true
out=$(cli profile diff "$rid" "$rid" --top 3)
check_eq "cli profile diff" "$?" 0
check "cli profile diff of a run with itself: nothing moved" awk '
	/^ *[0-9]/ { n++; if (($3 != "+0.00" && $3 != "-0.00") || ($6 != "+0.00" && $6 != "-0.00")) bad = 1 }
	END { exit !(n == 3 && !bad) }' <<<"$out"
cli profile diff "$rid" "$bid" >/dev/null 2>"$work/cli.err"
check_eq "cli profile diff with a run without profile" "$?" 1
check_contains "and says which" "$(cat "$work/cli.err")" "run $bid has no profile"
cli profile "$rid" --top x >/dev/null 2>&1
check_eq "cli --top x is a usage error" "$?" 2

# a viewer reads a profile (from here on every request needs a token)
viewer=$("$BIN/benchfleetd" token create --store "$(bf_store "$work")" --role viewer 2>/dev/null)
check "viewer token made" test -n "$viewer"
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/runs/$rid/profile")
check_eq "profile without a token, once tokens exist" "$code" 401
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $viewer" "$URL/api/v1/runs/$rid/profile?format=svg")
check_eq "viewer reads the flame graph" "$code" 200
stop_daemon
check_sanitizers "$work/daemon.log"
finish
