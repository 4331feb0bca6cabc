#!/usr/bin/env bash
# The side-by-side report (issue 17) on real parts: two benchfleetd on
# loopback (lab A and lab B), each with its 2-host netns fleet. Lab A runs
# a page-touch job and publishes it; lab B trusts A, reproduces it (the
# bundle's samples are stored) and runs a second job of its own. Then:
# GET /api/v1/jobs/{id}/report?columns=AXIS puts that axis's values side by
# side, numbers equal to the raw samples; GET /api/v1/report?jobs=rN,J1,J2
# is "their lab vs our lab" in one table with a summary and the geometric
# mean of the ratios, checked against the samples; bad queries are 400s
# naming the field; the CLI's `report A B --columns job` prints the same.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-rcol.XXXXXX)
defer "rm -rf '$work'"
for lab in a b; do
	case $lab in a) sub=10.93.0 ;; b) sub=10.98.0 ;; esac
	bash "$BF_SRC/tools/netns-fleet" up --dir "$work/$lab/fleet" --hosts 2 \
		--prefix bfq$lab --subnet $sub --bridge bfbrq$lab --force ||
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
lab() { URL=$1; }
cli() { "$BIN/benchfleet" --url "$URL" "$@"; }
# near A B: |A-B| <= 1e-9 * max(|A|, |B|, 1)
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a;
	n = b < 0 ? -b : b; if (n > m) m = n; if (m < 1) m = 1; exit !(d <= 1e-9 * m) }'; }

for l in a b; do
	[ $l = a ] && lab "$URL_A" || lab "$URL_B"
	while IFS=$'\t' read -r name addr port user key; do
		r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"lab\"}")
		check_eq "lab $l: register $name" "$(status_of "$r")" 201
	done < "$work/$l/fleet/hosts.tsv"
done

JOB='{"recipe":"page-touch","preset":"test","machines":{"class":"lab"},
	"matrix":{"mb":[8,16],"passes":[1,2]},"repetitions":{"iterations":3}}'

# --- lab A: the original, published ---
lab "$URL_A"
r=$(api POST /api/v1/jobs "$JOB")
check_eq "lab A: submit" "$(status_of "$r")" 201
JA=$(body_of "$r" | jq -r .id)
check_eq "lab A: job" "$(wait_job "$JA" 240)" done
check "lab A: publish" cli publish "$JA"

# --- one job, side by side: ?columns=mb ---
rep=$(curl -fsS "$URL_A/api/v1/jobs/$JA/report?columns=mb&format=json")
check_eq "columns=mb: layout" "$(jq -r '"\(.layout) \(.columns) \(.values | join(","))"' <<<"$rep")" "columns mb 8,16"
check_eq "columns=mb: the other axis makes the rows" \
	"$(jq -r '[.metrics[0].rows[].row] | join(",")' <<<"$rep")" "passes=1,passes=2"
runs=$(curl -fsS "$URL_A/api/v1/jobs/$JA/runs")
for mb in 8 16; do
	for p in 1 2; do
		want=$(jq -r --arg l "mb=$mb passes=$p" '[.runs[] | select(.label==$l) | .samples[] |
			select(.metric=="wall_s") | .value] | add / length' <<<"$runs")
		got=$(jq -r --arg r "passes=$p" --arg v "$mb" '.metrics[] | select(.name=="wall_s") |
			.rows[] | select(.row==$r) | .values[] | select(.value==$v) | .mean' <<<"$rep")
		check "columns=mb: mb=$mb passes=$p mean $got is the samples' $want" near "$got" "$want"
	done
done
chg=$(jq -c '.metrics[] | select(.name=="wall_s") | .rows[0] | [.values[0].mean, .values[1].mean, .changes[0].pct_change, .changes[0].vs]' <<<"$rep")
check "columns=mb: % change is (B-A)/A*100 ($chg)" near "$(jq -r '.[2]' <<<"$chg")" \
	"$(jq -r '(.[1] - .[0]) / .[0] * 100' <<<"$chg")"
check_eq "columns=mb: against the first value" "$(jq -r '.[3]' <<<"$chg")" 8
txt=$(curl -fsS "$URL_A/api/v1/jobs/$JA/report?columns=mb")
check_contains "text: column groups" "$txt" "16 vs 8"
check_contains "text: rows" "$txt" "passes=2"
check_contains "text: legend says the layout" "$txt" "Columns: the values of mb side by side"
md=$(curl -fsS "$URL_A/api/v1/jobs/$JA/report?columns=mb&format=markdown")
check_contains "markdown: one header per group" "$md" "| cell | 8 mean | 8 CoV% | 8 95% CI | 16 mean |"
csv=$(curl -fsS "$URL_A/api/v1/jobs/$JA/report?columns=mb&format=csv")
check_eq "csv: a line per metric and row (+ header)" "$(printf '%s\n' "$csv" | wc -l)" \
	"$((1 + 2 * $(jq '.metrics | length' <<<"$rep")))"
check_contains "csv: grouped header" "$csv" "16 pct_change"
# the baseline picks the reference column
rep=$(curl -fsS "$URL_A/api/v1/jobs/$JA/report?columns=mb&baseline=mb:16&format=json")
check_eq "baseline=mb:16: reference first" "$(jq -r '.values | join(",")' <<<"$rep")" "16,8"
# no kernel or cmdline axis: the row layout stays the default
check_contains "default: one row per cell" "$(curl -fsS "$URL_A/api/v1/jobs/$JA/report")" "Welch p"
check_eq "columns=none: the row layout" "$(curl -fsS "$URL_A/api/v1/jobs/$JA/report?columns=none&format=json" | jq -r '.layout // "rows"')" rows
for q in "columns=nope" "columns=" "columns=mb&baseline=passes:1"; do
	r=$(api GET "/api/v1/jobs/$JA/report?$q")
	check_eq "$q: 400" "$(status_of "$r")" 400
done
check_eq "columns=nope names the field" "$(body_of "$(api GET "/api/v1/jobs/$JA/report?columns=nope")" | jq -r .detail.field)" columns
check_contains "columns=nope says why" "$(body_of "$(api GET "/api/v1/jobs/$JA/report?columns=nope")" | jq -r .error)" "not an axis"

# --- lab B: reproduce A's job, run one more of its own ---
lab "$URL_B"
for n in bfqb1 bfqb2; do
	for i in $(seq 100); do
		[ "$(curl -fsS "$URL_B/api/v1/machines/$n" | jq -r '.fingerprint.type // empty')" = fingerprint ] && break
		[ "$i" = 5 ] && curl -sS -X POST "${JSON[@]}" "$URL_B/api/v1/machines/$n/probe" >/dev/null
		sleep 0.3
	done
done
FP_A=$(curl -fsS "$URL_A/api/v1/lab" | jq -r .fingerprint)
check "lab B: trust lab A" cli labs trust lab-a "$URL_A/api/v1/lab" --fingerprint "$FP_A"
r=$(api POST /api/v1/reproductions "{\"url\":\"$URL_A/api/v1/jobs/$JA/bundle\"}")
check_eq "lab B: reproduction" "$(status_of "$r")" 201
R1=$(body_of "$r" | jq -r .id)
J1=$(body_of "$r" | jq -r .job_id)
check_eq "lab B: rerun" "$(wait_job "$J1" 240)" done
r=$(api POST /api/v1/jobs "$JOB")
J2=$(body_of "$r" | jq -r .id)
check_eq "lab B: second job" "$(wait_job "$J2" 240)" done

# --- their lab vs our lab, and a second job: one table ---
rep=$(curl -fsS "$URL_B/api/v1/report?jobs=r$R1,$J1,$J2&format=json")
check_eq "multi: the jobs are the columns" "$(jq -r '.values | join(",")' <<<"$rep")" "repro $R1,job $J1,job $J2"
check_eq "multi: rows are the shared axis values" \
	"$(jq -r '[.metrics[0].rows[].row] | join(",")' <<<"$rep")" "mb=8 passes=1,mb=8 passes=2,mb=16 passes=1,mb=16 passes=2"
check_contains "multi: the bundle's lab in the context" "$(jq -r '.context[0]' <<<"$rep")" "the samples of lab lab-a (their job $JA)"
bundle=$(curl -fsS "$URL_A/api/v1/jobs/$JA/bundle")
for l in "mb=8 passes=1" "mb=16 passes=2"; do
	want=$(jq -r --arg l "$l" '[.runs[] | select(.label==$l) | .id] as $ids |
		[.samples[] | select(.metric=="wall_s" and (.run as $r | $ids | index($r))) | .value] |
		add / length' <<<"$bundle")
	got=$(jq -r --arg l "$l" '.metrics[] | select(.name=="wall_s") | .rows[] | select(.row==$l) |
		.values[0].mean' <<<"$rep")
	check "multi: lab A's $l mean $got is its bundle's $want" near "$got" "$want"
	want=$(curl -fsS "$URL_B/api/v1/jobs/$J2/runs" | jq -r --arg l "$l" '[.runs[] |
		select(.label==$l) | .samples[] | select(.metric=="wall_s") | .value] | add / length')
	got=$(jq -r --arg l "$l" '.metrics[] | select(.name=="wall_s") | .rows[] | select(.row==$l) |
		.values[2].mean' <<<"$rep")
	check "multi: job $J2's $l mean $got is its samples' $want" near "$got" "$want"
done
nm=$(jq '[.metrics[] | select(.direction != "none")] | length' <<<"$rep")
check_eq "summary: a line per row, metric and later job" "$(jq '.summary.lines | length' <<<"$rep")" "$((4 * nm * 2))"
check_eq "summary: a geometric mean per metric and later job" "$(jq '.summary.geomeans | length' <<<"$rep")" "$((nm * 2))"
want=$(jq -r --arg b "job $J1" '[.summary.lines[] | select(.metric=="wall_s" and .b==$b) |
	(.mean_b / .mean_a | log)] | (add / length | exp)' <<<"$rep")
got=$(jq -r --arg b "job $J1" '.summary.geomeans[] | select(.metric=="wall_s" and .b==$b) | .ratio' <<<"$rep")
check "summary: geometric mean $got of wall_s B/A is exp(mean log ratio) $want" near "$got" "$want"
check_eq "summary: its CI brackets it" "$(jq -r --arg b "job $J1" '.summary.geomeans[] |
	select(.metric=="wall_s" and .b==$b) | (.ci_lo <= .ratio and .ratio <= .ci_hi)' <<<"$rep")" true
txt=$(curl -fsS "$URL_B/api/v1/report?jobs=r$R1,$J1")
echo "$txt"
check_contains "multi text: side by side" "$txt" "job $J1 vs repro $R1"
check_contains "multi text: summary" "$txt" "Summary: A = repro $R1, B against it"
check_contains "multi text: geometric mean" "$txt" "Geometric mean of B/A, wall_s, B = job $J1:"
out=$(cli report "r$R1" "$J1" --columns job)
check_eq "CLI report rN J --columns job: the API's text" "$out" "$txt"
check_contains "CLI: markdown" "$(cli report "$J1" "$J2" --format markdown)" "| cell | job $J1 mean |"
if cli report "$J1" --columns job >/dev/null 2>"$work/err"; then fail "CLI: --columns job with one job"; else ok; fi
check_contains "CLI: says why" "$(cat "$work/err")" "two jobs or more"

# --- bad input: 400s naming the field, 404 for a job that is not there ---
for q in "jobs=$J1" "jobs=$J1,x" "jobs=$J1,$J1" "jobs=$J1,$J2&columns=mb" "jobs=$J1,$J2&format=xml" ""; do
	r=$(api GET "/api/v1/report?$q")
	check_eq "report?$q: 400" "$(status_of "$r")" 400
done
check_eq "jobs= names the field" "$(body_of "$(api GET "/api/v1/report?jobs=$J1,x")" | jq -r .detail.field)" jobs
check_eq "an unknown job: 404" "$(status_of "$(api GET "/api/v1/report?jobs=$J1,99999")")" 404
check_eq "an unknown reproduction: 404" "$(status_of "$(api GET "/api/v1/report?jobs=$J1,r99999")")" 404
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"class":"lab"},"repetitions":{"iterations":2}}')
J3=$(body_of "$r" | jq -r .id)
check_eq "lab B: a job of another recipe" "$(wait_job "$J3" 240)" done
r=$(api GET "/api/v1/report?jobs=$J1,$J3")
check_eq "two recipes: 400" "$(status_of "$r")" 400
check_contains "two recipes: says which" "$(body_of "$r" | jq -r .error)" "only runs of one recipe compare"

# --- the one-job options across jobs: counters, min_n, stat, adjust ---
rep=$(curl -fsS "$URL_B/api/v1/report?jobs=$J1,$J2&counters=all&format=json")
check "multi: counters=all adds the counter rows" jq -e '[.metrics[] | select(.direction == "none") |
	.name | select(startswith("vmstat.") or startswith("hugepages-"))] | length > 0' <<<"$rep"
rep=$(curl -fsS "$URL_B/api/v1/report?jobs=$J1,$J2&counters=none&format=json")
check_eq "multi: counters=none: the recipe's metrics only" \
	"$(jq '[.metrics[].name | select(startswith("vmstat."))] | length' <<<"$rep")" 0
txt=$(curl -fsS "$URL_B/api/v1/report?jobs=$J1,$J2&min_n=50")
check_contains "multi: min_n=50 holds every mark" "$txt" "low n"
check_contains "multi: min_n in the legend" "$txt" "fewer than 50"
check_contains "multi: stat=median" "$(curl -fsS "$URL_B/api/v1/report?jobs=$J1,$J2&stat=median")" "median"
check_contains "multi: adjust=holm" "$(curl -fsS "$URL_B/api/v1/report?jobs=$J1,$J2&adjust=holm")" "Holm"
for q in "min_n=0" "min_n=x" "stat=mode" "adjust=bonf" "counters=some" "baseline=mb:8"; do
	r=$(api GET "/api/v1/report?jobs=$J1,$J2&$q")
	check_eq "multi $q: 400 naming ${q%%=*}" "$(status_of "$r") $(body_of "$r" | jq -r .detail.field)" "400 ${q%%=*}"
done
check_eq "CLI: report A B --min-n 50 is the API's" "$(cli report "$J1" "$J2" --min-n 50)" \
	"$(curl -fsS "$URL_B/api/v1/report?jobs=$J1,$J2&min_n=50")"

# --- spread any: the legend names comparisons made across machines ---
runs=$(curl -fsS "$URL_B/api/v1/jobs/$J2/runs")
across=$(jq -r '[.runs[] | {p: .values.passes, mb: .values.mb, m: .machine}] as $r |
	[$r[] | select(.mb == 16) | . as $b | $r[] | select(.mb == 8 and .p == $b.p and .m != $b.m)] |
	length' <<<"$runs")
txt=$(curl -fsS "$URL_B/api/v1/jobs/$J2/report?baseline=mb:8&columns=none")
if [ "$across" -gt 0 ]; then
	check_contains "any: $across comparisons across machines are named" "$txt" "different machines:"
else
	check "any: every comparison on one machine, nothing said" \
		test "$(grep -c "different machines:" <<<"$txt")" -eq 0
fi

# --- machines.spread on lab B's two hosts ---
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"class":"lab","spread":"sometimes"}}')
check_eq "spread: a bad value is a 400 naming machines.spread" \
	"$(status_of "$r") $(body_of "$r" | jq -r .detail.field)" "400 machines.spread"
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"class":"lab","spread":"pin"},
	"matrix":{"loops":[200000,400000]},"repetitions":{"boots":2,"iterations":2}}')
JP=$(body_of "$r" | jq -r .id)
check_eq "pin: job" "$(wait_job "$JP" 240)" done
PM=$(curl -fsS "$URL_B/api/v1/jobs/$JP" | jq -r .pinned_machine)
check_eq "pin: every run on the pinned machine $PM" \
	"$(curl -fsS "$URL_B/api/v1/jobs/$JP/runs" | jq -r --arg m "$PM" '[.runs[] | .machine == $m] | all')" true
check_contains "pin: benchfleet status shows the spread and machine" "$(cli status "$JP")" "$PM"
check_contains "pin: the report names it" "$(curl -fsS "$URL_B/api/v1/jobs/$JP/report")" \
	"spread pin: every run of the job on one machine, $PM"
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"class":"lab","spread":"block"},
	"matrix":{"loops":[200000,400000]},"repetitions":{"iterations":3}}')
check_eq "block: a run per cell and machine" "$(status_of "$r") $(body_of "$r" | jq -r .runs)" "201 4"
JB=$(body_of "$r" | jq -r .id)
check_eq "block: job" "$(wait_job "$JB" 240)" done
runs=$(curl -fsS "$URL_B/api/v1/jobs/$JB/runs")
check_eq "block: each run on the machine it was for" "$(jq '[.runs[] | .machine == .req_machine] | all' <<<"$runs")" true
check_eq "block: both machines ran both cells" "$(jq -r '[.runs[] | "\(.machine):\(.cell_index)"] | unique | length' <<<"$runs")" 4
rep=$(curl -fsS "$URL_B/api/v1/jobs/$JB/report?baseline=loops:200000&format=json")
check_eq "block: the per-machine rows" "$(jq '.metrics[0].rows | length' <<<"$rep")" 4
check_eq "block: pooled over two machines" "$(jq -r '.pooled.machines | length' <<<"$rep")" 2
# the pooled ratio: geometric mean over machines of mean(B_m) / mean(A_m), from the samples
want=$(jq -r '[.runs[] | {m: .machine, c: .cell_index, v: ([.samples[] | select(.metric=="wall_s") | .value] | add / length)}] |
	group_by(.m) | map((map(select(.c==1))[0].v) / (map(select(.c==0))[0].v) | log) | add / length | exp' <<<"$runs")
got=$(jq -r '.pooled.rows[] | select(.metric=="wall_s") | .ratio' <<<"$rep")
check "block: pooled wall_s ratio $got is the geometric mean of the machines' ratios $want" near "$got" "$want"
check_eq "block: two machines are too few to mark" "$(jq -r '.pooled.rows[] | select(.metric=="wall_s") | .mark' <<<"$rep")" "low n"
txt=$(curl -fsS "$URL_B/api/v1/jobs/$JB/report?baseline=loops:200000")
check_contains "block text: pooled section" "$txt" "Pooled over 2 machines"
check_contains "block text: the method" "$txt" "paired t-test of the log ratios over machines"

# --- a suite's report ends with one summary across its workloads ---
r=$(api POST /api/v1/jobs '{"machines":{"class":"lab"},"matrix":{"mb":[8,16]},
	"suite":[{"recipe":"page-touch","preset":"test","label":"pt1"},
	         {"recipe":"page-touch","preset":"test","label":"pt2","params":{"passes":2}}],
	"repetitions":{"iterations":2}}')
JS=$(body_of "$r" | jq -r .id)
check_eq "suite: job" "$(wait_job "$JS" 240)" done
txt=$(curl -fsS "$URL_B/api/v1/jobs/$JS/report?baseline=mb:8")
check_contains "suite: the summary after the sections" "$(sed -n '/the suite.s summary/,$p' <<<"$txt")" "Summary: A = 8, B against it"
check_contains "suite: one geometric mean over both workloads" "$txt" "Geometric mean of B/A, wall_s, B = 16:"
js=$(curl -fsS "$URL_B/api/v1/jobs/$JS/report?baseline=mb:8&format=json")
check_eq "suite json: summary rows of both workloads" \
	"$(jq -r '[.summary.lines[] | select(.metric=="wall_s") | .workload] | join(",")' <<<"$js")" "workload=pt1,workload=pt2"
want=$(jq -r '[.summary.lines[] | select(.metric=="wall_s") | (.mean_b / .mean_a | log)] | add / length | exp' <<<"$js")
got=$(jq -r '.summary.geomeans[] | select(.metric=="wall_s") | .ratio' <<<"$js")
check "suite: geometric mean $got is exp(mean log ratio) $want" near "$got" "$want"
want=$(jq -r '.workloads[] | select(.workload=="pt2") | .report.metrics[] | select(.name=="wall_s") |
	.rows[0].changes[0].pct_change' <<<"$js")
got=$(jq -r '.summary.lines[] | select(.metric=="wall_s" and .workload=="workload=pt2") | .pct_change' <<<"$js")
check "suite: the summary's % change $got is its section's $want" near "$got" "$want"

check_sanitizers "$work/a/daemon.log"
check_sanitizers "$work/b/daemon.log"
finish
