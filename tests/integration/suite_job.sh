#!/usr/bin/env bash
# Suites through the API on a netns fleet of one machine: three workloads
# (page-touch, cpu-loop and echo under a label) over two boots. Each run
# runs its own entry's recipe with its own values, every run of boot 0 of
# every workload finishes before any of boot 1 starts (a boot serves the
# whole suite before the next), and the report is one document with a
# section per workload. Hostile suites are refused naming the field. The
# suite's bundle (version 3) is reproduced by a second coordinator on the
# same host, and hostile suite bundles are refused there by field. The
# fleet cannot reboot (no boot configuration): tests/vm counts reboots of
# a suite over two kernels; coord_test_sched counts them with the fake.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-suite.XXXXXX)
defer "rm -rf '$work'"
fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 1 --prefix bfsu \
	--subnet 10.119.0 --bridge bfbrs --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
start_daemon "$work" --known-hosts "$fleet/known_hosts" || exit 1
defer stop_daemon
while IFS=$'\t' read -r name addr port user key; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"suite\"}")
	check_eq "register $name" "$(status_of "$r")" 201
done < "$fleet/hosts.tsv"

# Hostile suites: 400, naming the field, nothing written.
bad() { # bad DESCRIPTION FIELD BODY
	local r
	r=$(api POST /api/v1/jobs "$3")
	check_eq "$1: 400" "$(status_of "$r")" 400
	check_eq "$1: field" "$(body_of "$r" | jq -r .detail.field)" "$2"
	check_contains "$1: message" "$(body_of "$r" | jq -r .error)" "$2"
}
bad "unknown recipe" "suite[1].recipe" '{"suite":[{"recipe":"echo"},{"recipe":"nosuch"}],"machines":{"class":"suite"}}'
bad "param out of range" "suite[1].params.threads" \
	'{"suite":[{"recipe":"echo"},{"recipe":"btree","params":{"threads":100000}}],"machines":{"class":"suite"}}'
bad "param of another recipe" "suite[0].params.loops" \
	'{"suite":[{"recipe":"echo","params":{"loops":5}}],"machines":{"class":"suite"}}'
bad "duplicate workload" "suite[1]" '{"suite":[{"recipe":"echo"},{"recipe":"echo"}],"machines":{"class":"suite"}}'
bad "boot axis in an entry" "suite[0].matrix.kernel" \
	'{"suite":[{"recipe":"echo","matrix":{"kernel":["6.1"]}}],"machines":{"class":"suite"}}'
bad "recipe beside suite" "recipe" '{"recipe":"echo","suite":[{"recipe":"echo"}],"machines":{"class":"suite"}}'
bad "bad knob" "suite[0].knobs.thp_enabled" \
	'{"suite":[{"recipe":"echo","knobs":{"thp_enabled":"$(reboot)"}}],"machines":{"class":"suite"}}'
check_eq "nothing written" "$(bf_sql "$work" "select count(*) from jobs")" 0

r=$(api POST /api/v1/jobs '{"name":"three on two boots","machines":{"class":"suite"},
	"suite":[{"recipe":"page-touch","preset":"test","matrix":{"mb":[8,16]}},
	         {"recipe":"cpu-loop","params":{"loops":2000000}},
	         {"recipe":"echo","label":"hello","params":{"msg":"suite says hi"}}],
	"repetitions":{"iterations":2,"boots":2}}')
check_eq "submit suite" "$(status_of "$r")" 201
job=$(body_of "$r" | jq -r .id)
check_eq "runs: (2 + 1 + 1) cells x 2 boots" "$(body_of "$r" | jq -r .runs)" 8
check_eq "suite job" "$(wait_job "$job" 240)" done
check_eq "jobs.recipe of a suite" "$(bf_sql "$work" "select recipe from jobs where id=$job")" suite
check_eq "each run's recipe and workload" \
	"$(bf_sql "$work" "select recipe || '/' || workload || '/' || count(*) from runs where job_id=$job group by recipe, workload order by min(cell_index)" | joined ' ')" \
	"page-touch/page-touch/4 cpu-loop/cpu-loop/2 echo/hello/2"
# boot-major: the last run of boot 0 ends before the first of boot 1 starts
check_eq "boot 0 of every workload before boot 1" "$(bf_sql "$work" \
	"select case when (select max(finished_at) from runs where job_id=$job and boot=0) <= (select min(started_at) from runs where job_id=$job and boot=1) then 1 else 0 end")" 1
runs=$(curl -fsS "$URL/api/v1/jobs/$job/runs")
check_eq "every run's axes name its workload" \
	"$(jq -r '[.runs[].axes.workload] | unique | join(",")' <<<"$runs")" "cpu-loop,hello,page-touch"
check_contains "echo ran its own entry's message" \
	"$(bf_sql "$work" "select l.line from run_logs l join runs r on r.id=l.run_id where r.job_id=$job and r.workload='hello' and l.stream='stdout'")" "suite says hi"
check_eq "page-touch ran its matrix" \
	"$(jq -r '[.runs[] | select(.axes.workload == "page-touch") | .values.mb] | unique | join(",")' <<<"$runs")" "8,16"

rep=$(curl -fsS "$URL/api/v1/jobs/$job/report")
check_contains "report heading" "$rep" "job $job: suite of 3 workloads (page-touch, cpu-loop, hello) - three on two boots"
check_contains "section page-touch" "$rep" "job $job: page-touch (page-touch)"
check_contains "section cpu-loop" "$rep" "job $job: cpu-loop (cpu-loop)"
check_contains "section hello" "$rep" "job $job: hello (echo)"
check_contains "cells carry the workload" "$rep" "workload=page-touch mb=16"
check_contains "cpu-loop's own metric" "$rep" "loops_per_s"
js=$(curl -fsS "$URL/api/v1/jobs/$job/report?format=json")
check_eq "json: a section per workload" "$(jq -r '[.workloads[].workload] | join(",")' <<<"$js")" "page-touch,cpu-loop,hello"
check_eq "json: each section its recipe" "$(jq -r '[.workloads[].recipe] | join(",")' <<<"$js")" "page-touch,cpu-loop,echo"
check_eq "json: suite labels" "$(jq -r '.suite | join(",")' <<<"$js")" "page-touch,cpu-loop,hello"
csv=$(curl -fsS "$URL/api/v1/jobs/$job/report?format=csv")
check_eq "csv: one header" "$(grep -c '^metric,unit' <<<"$csv")" 1
check_contains "csv: hello's rows" "$csv" "workload=hello"
md=$(curl -fsS "$URL/api/v1/jobs/$job/report?format=markdown")
check_contains "markdown heading" "$md" "# job $job: suite of 3 workloads"
r=$(api GET "/api/v1/jobs/$job/report?baseline=mb:8")
check_eq "baseline on page-touch's axis" "$(status_of "$r")" 200
r=$(api GET "/api/v1/jobs/$job/report?baseline=nosuch:1")
check_eq "baseline on no workload's axis" "$(status_of "$r")" 400
# a single-recipe job still reports as before: no suite heading
r=$(api POST /api/v1/jobs '{"recipe":"echo","machines":{"class":"suite"},"repetitions":{"iterations":1}}')
one=$(body_of "$r" | jq -r .id)
check_eq "single job" "$(wait_job "$one" 60)" done
check_eq "single job's runs have no workload" "$(bf_sql "$work" "select count(*) from runs where job_id=$one and workload is null and recipe is null")" 1
check_contains "single report as before" "$(curl -fsS "$URL/api/v1/jobs/$one/report")" "job $one: echo"

# --- the suite's bundle (version 3), reproduced by a second lab (B) on the
# same fleet host: every workload's recipe with its hash, the rerun
# planned as a suite there, a verdict per cell of every workload ---
SB=$work/suite-bundle.json
code=$(curl -sS -o "$SB" -w '%{http_code}' "$URL/api/v1/jobs/$job/bundle")
check_eq "suite bundle: exported" "$code" 200
check_eq "suite bundle: version 3" "$(jq .version "$SB")" 3
check_eq "suite bundle: a recipe per workload, in order" \
	"$(jq -r '[.recipes[] | .workload + "=" + .recipe.name] | join(",")' "$SB")" \
	"page-touch=page-touch,cpu-loop=cpu-loop,hello=echo"
check_eq "suite bundle: each recipe's canonical hash" \
	"$(jq -r '.recipes[1] | .recipe_sha256' "$SB")" \
	"$(jq -cS '.recipes[1].recipe' "$SB" | tr -d '\n' | sha256sum | cut -c1-64)"
check_eq "suite bundle: runs name their workload" \
	"$(jq -r '[.runs[] | select(.workload == .axes.workload) | .workload] | unique | join(",")' "$SB")" \
	"cpu-loop,hello,page-touch"
check_eq "suite bundle: every sample" "$(jq '.samples | length' "$SB")" \
	"$(bf_sql "$work" "select count(*) from samples s join runs r on r.id=s.run_id where r.job_id=$job")"
check_eq "suite bundle: signed" "$(jq -r .signature.alg "$SB")" ed25519
curl -fsS "$URL/api/v1/lab" >"$work/lab-a.json"
URL_A=$URL PID_A=$DAEMON_PID
mkdir -p "$work/b"
start_daemon "$work/b" --known-hosts "$fleet/known_hosts" || exit 1
URL_B=$URL PID_B=$DAEMON_PID
defer "kill $PID_B 2>/dev/null; wait $PID_B 2>/dev/null"
while IFS=$'\t' read -r name addr port user key; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"suite\"}")
	check_eq "lab B: register $name" "$(status_of "$r")" 201
	for i in $(seq 100); do
		[ "$(curl -fsS "$URL_B/api/v1/machines/$name" | jq -r '.fingerprint.type // empty')" = fingerprint ] && break
		sleep 0.2
	done
done < "$fleet/hosts.tsv"
check "lab B: trusts lab A" "$BIN/benchfleet" --url "$URL_B" labs trust lab-a "$work/lab-a.json" \
	--fingerprint "$(jq -r .fingerprint "$work/lab-a.json")"
# post_repro FILE: POST /reproductions with FILE as the body ("STATUS BODY";
# a bundle is too long for an argument)
post_repro() {
	local out
	out=$(curl -sS -X POST "${JSON[@]}" --data-binary "@$1" -w '\n%{http_code}' \
		"$URL/api/v1/reproductions")
	printf '%s %s' "${out##*$'\n'}" "${out%$'\n'*}"
}
# Hostile suite bundles: refused by field, nothing scheduled, even with an
# admin's override of the signature.
hostile() { # hostile DESCRIPTION STATUS FIELD MESSAGE JQ [rehash]
	local f=$work/hostile.json r
	if [ -n "${6-}" ]; then
		jq -c "$5" "$SB" | "$BIN/bf-bundle" rehash >"$f.in"
	else
		jq -c "$5" "$SB" >"$f.in"
	fi
	jq -c '{bundle: ., override: true}' "$f.in" >"$f"
	r=$(post_repro "$f")
	check_eq "$1: $2" "$(status_of "$r")" "$2"
	check_eq "$1: field" "$(body_of "$r" | jq -r .detail.field)" "$3"
	check_contains "$1: message" "$(body_of "$r" | jq -r .error)" "$4"
}
hostile "entry's recipe not installed" 409 "recipes[1]" "no local recipe named nosuch" \
	'.job.suite[1] += {recipe: "nosuch", label: "cpu-loop"} | .recipes[1].recipe.name = "nosuch"' rehash
hostile "entry's recipe not the installed one" 409 "recipes[0]" "differs in timeout_s" \
	'.recipes[0].recipe.timeout_s = 1' rehash
hostile "entry's hash mismatch" 400 "recipes[2].recipe_sha256" "does not match the content" \
	'.recipes[2].recipe.description = "edited"'
hostile "workload twice" 400 "recipes[2]" "is recipes[1]'s already" '.recipes[2] = .recipes[1]' rehash
hostile "too many entries" 413 "recipes" "" '.recipes += [range(16) as $i | .recipes[0] | .workload = "w\($i)"]' rehash
check_eq "lab B: hostile bundles scheduled nothing" "$(curl -fsS "$URL_B/api/v1/jobs" | jq '.jobs | length')" 0
r=$(post_repro "$SB")
check_eq "lab B: reproduce the suite" "$(status_of "$r")" 201
check_eq "lab B: signed by lab A" "$(body_of "$r" | jq -r .trust.state)" signed
R=$(body_of "$r" | jq -r .id)
JB=$(body_of "$r" | jq -r .job_id)
check_eq "lab B: the rerun" "$(wait_job "$JB" 120)" done
check_eq "lab B: the rerun is a suite" "$(curl -fsS "$URL_B/api/v1/jobs/$JB" | jq -r .recipe)" suite
check_eq "lab B: each workload's runs" \
	"$(curl -fsS "$URL_B/api/v1/jobs/$JB/runs" | jq -r '[.runs[].axes.workload] | group_by(.) | map(.[0] + "/" + (length | tostring)) | join(" ")')" \
	"cpu-loop/2 hello/2 page-touch/4"
rep=$(curl -fsS "$URL_B/api/v1/reproductions/$R")
check_eq "reproduction done" "$(jq -r .state <<<"$rep")" done
check_eq "a verdict per cell of every workload" \
	"$(jq -r '[.cells[] | select((.metrics | length) > 0) | .label | capture("workload=(?<w>[^ ]+)").w] | sort | join(",")' <<<"$rep")" \
	"cpu-loop,hello,page-touch,page-touch"
check_eq "every metric has a verdict" "$(jq '[.cells[].metrics[] | select(.verdict == null)] | length' <<<"$rep")" 0
check_eq "page-touch's faults: a verdict in both cells" \
	"$(jq '[.cells[] | select(.label | test("workload=page-touch")) | .metrics[] | select(.metric == "faults")] | length' <<<"$rep")" 2
check_contains "text report: hello's cell" "$(curl -fsS "$URL_B/api/v1/reproductions/$R?format=text")" "workload=hello"
# effects per workload: page-touch's own axis mb (its first value the
# default baseline, the job having no matrix of its own); the workloads
# without a matrix are notes, not errors
echo "effects: $(jq -c '.effects | {baseline, workloads, summary, notes}' <<<"$rep")"
check_eq "effects: computed for a suite" "$(jq -r '.effects | type' <<<"$rep")" object
check_eq "effects: per workload, each its baseline" \
	"$(jq -r '[.effects.workloads[] | "\(.workload)=\(.baseline)"] | join(",")' <<<"$rep")" \
	"page-touch=mb:8,cpu-loop=null,hello=null"
frow=$(jq -c '[.effects.rows[] | select(.metric=="faults")][0]' <<<"$rep")
echo "effects row: $frow"
check_eq "effects: page-touch's faults, mb=16 against mb=8" \
	"$(jq -r '"\(.workload) \(.label) \(.baseline_label)"' <<<"$frow")" \
	"page-touch workload=page-touch mb=16 workload=page-touch mb=8"
check "effects: twice the memory, about twice the faults in both labs" \
	jq -e '.bundle.pct > 80 and .bundle.pct < 120 and .here.pct > 80 and .here.pct < 120' <<<"$frow"
check "effects: a verdict on the faults' effect" \
	jq -e '.verdict | IN("reproduced", "differs", "inconclusive")' <<<"$frow"
check_eq "effects: every row is page-touch's" "$(jq -r '[.effects.rows[].workload] | unique | join(",")' <<<"$rep")" page-touch
check_eq "effects: the suite's summary counts every row" \
	"$(jq '.effects.summary | .reproduced + .differs + .inconclusive' <<<"$rep")" "$(jq '.effects.rows | length' <<<"$rep")"
check_eq "effects: page-touch's counts are the suite's" \
	"$(jq -c '.effects.workloads[0] | [.reproduced, .differs, .inconclusive]' <<<"$rep")" \
	"$(jq -c '.effects.summary | [.reproduced, .differs, .inconclusive]' <<<"$rep")"
check_contains "effects: a note for a workload without a matrix" \
	"$(jq -r '.effects.notes | join(";")' <<<"$rep")" "workload cpu-loop has no matrix"
txt=$(curl -fsS "$URL_B/api/v1/reproductions/$R?format=text")
check_contains "effects: text per workload" "$txt" "workload page-touch, baseline mb:8:"
check_contains "effects: text suite total" "$txt" "the suite: "
check_eq "effects: ?baseline=mb:16 turns the pairs" \
	"$(curl -fsS "$URL_B/api/v1/reproductions/$R?baseline=mb:16" | jq -r '[.effects.rows[] | select(.metric=="faults")][0].label')" \
	"workload=page-touch mb=8"
for q in baseline=nosuch:1 baseline=mb:32 baseline=workload; do
	r=$(api GET "/api/v1/reproductions/$R?$q")
	check_eq "effects: ?$q refused" "$(status_of "$r")" 400
	check_eq "effects: ?$q names the field" "$(body_of "$r" | jq -r .detail.field)" baseline
done
# the bundle's bytes as exported (jq would rewrite its reals and break its hash)
{ printf '{"baseline":"nosuch:1","bundle":'; cat "$SB"; printf '}'; } >"$work/bad-base.json"
r=$(post_repro "$work/bad-base.json")
check_eq "effects: a POST's bad baseline for a suite: 400" "$(status_of "$r")" 400
check_contains "effects: ... naming no workload's axis" "$(body_of "$r" | jq -r .error)" "nor of any workload's"
check_eq "effects: ... scheduled nothing" "$(curl -fsS "$URL_B/api/v1/jobs" | jq '.jobs | length')" 1
r=$(api GET "/api/v1/report?jobs=$JB,r$R")
check_eq "multi-job report of a suite: 400" "$(status_of "$r")" 400
check_contains "multi-job report of a suite: says why" "$(body_of "$r" | jq -r .error)" "is a suite of several recipes"
kill "$PID_B"; wait "$PID_B" 2>/dev/null
check_sanitizers "$work/b/daemon.log"
URL=$URL_A DAEMON_PID=$PID_A
stop_daemon
check_sanitizers "$work/daemon.log"
finish
