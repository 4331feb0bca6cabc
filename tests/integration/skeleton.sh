#!/usr/bin/env bash
# The walking skeleton end to end on real parts: a 3-host netns fleet with
# real OpenSSH sshd, a real benchfleetd with a SQLite store, the agent
# uploaded over SFTP, a 4-cell x 3-iteration job, samples checked in the
# store, the API and the CLI; then malformed and hostile input.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-skel.XXXXXX)
defer "rm -rf '$work'"
fleet=$work/fleet
rm -f /tmp/bf-pwned /tmp/bf-pwned2 /tmp/bf-pwned3
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 3 --prefix bfit \
	--subnet 10.78.0 --bridge bfbri --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
start_daemon "$work" --known-hosts "$fleet/known_hosts" || exit 1
defer stop_daemon
cli() { "$BIN/benchfleet" --url "$URL" "$@"; }

# --- machines: two through the API, one through the CLI ---
n=0
while IFS=$'\t' read -r name addr port user key; do
	n=$((n + 1))
	if [ $n -le 2 ]; then
		r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"it\"}")
		check_eq "POST /machines $name" "$(status_of "$r")" 201
	else
		check "CLI machines add $name" cli machines add "$name" "$addr:$port" --user "$user" --key "$key" --class it
	fi
done < "$fleet/hosts.tsv"
r=$(api POST /api/v1/machines "{\"name\":\"bfit1\",\"host\":\"10.78.0.11\",\"key\":\"$fleet/client_key\",\"class\":\"it\"}")
check_eq "duplicate machine" "$(status_of "$r")" 409
check_eq "machines listed" "$(curl -fsS "$URL/api/v1/machines" | jq '.machines | length')" 3
check_contains "CLI machines" "$(cli machines)" bfit3
check_contains "CLI machines probe" "$(cli machines probe bfit3)" "probe asked of machine bfit3"
# clear is for a quarantined machine only: 409 from the API, exit 1 naming why
out=$(cli machines clear bfit3 2>&1); rc=$?
check_eq "CLI machines clear of a machine not quarantined: exit" "$rc" 1
check_contains "CLI machines clear: why" "$out" "not quarantined"
out=$(cli machines probe ghost 2>&1); rc=$?
check_eq "CLI machines probe of an unknown machine: exit" "$rc" 1

# --- the job: 4 cells x 3 iterations on 3 hosts ---
job='{"recipe":"page-touch","preset":"test","machines":{"class":"it"},
      "matrix":{"mb":[8,16],"passes":[1,2]},"repetitions":{"iterations":3,"warmup":1}}'
r=$(api POST /api/v1/jobs "$job")
check_eq "POST /jobs" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
st=$(wait_job "$id" 180)
check_eq "job $id state" "$st" done
runs=$(curl -fsS "$URL/api/v1/jobs/$id/runs")
check_eq "runs" "$(jq '.runs | length' <<<"$runs")" 4
check_eq "runs done" "$(jq '[.runs[] | select(.state=="done")] | length' <<<"$runs")" 4
check_eq "every run on a netns host" \
	"$(jq -r '[.runs[].hostname | test("^bfit[123]$")] | all' <<<"$runs")" true
check_eq "3 measured iterations per run" \
	"$(jq -r '[.runs[] | [.samples[] | select(.metric=="wall_s")] | length] | unique | @csv' <<<"$runs")" 3
check_eq "pages_per_s extracted by the recipe's regex" \
	"$(jq -r '[.runs[] | [.samples[] | select(.metric=="pages_per_s" and .value > 0)] | length] | unique | @csv' <<<"$runs")" 3
echo "hosts used: $(jq -r '[.runs[].hostname] | unique | join(" ")' <<<"$runs")"

# --- benchfleet wait follows the event stream, it does not poll ---
# A one-run job of some seconds (100 iterations: 30 took 1.1 s on an idle box,
# too short to tell polling apart); wait under strace counts its requests:
# one GET of the job, then /api/v1/events, a GET again at most every 10 s
# (polling every 0.5 s would make ~2 a second). The CLI sends a request's
# head and body in one sendmsg (cli/http-plain.c); libcurl used sendto.
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","preset":"test","machines":{"class":"it"},
      "params":{"mb":64,"passes":4},"repetitions":{"iterations":100,"warmup":0}}')
check_eq "POST /jobs (wait job)" "$(status_of "$r")" 201
wid=$(body_of "$r" | jq -r .id)
t0=$(date +%s.%N)
ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=sendto,sendmsg,write -s 48 -o "$work/wait.strace" \
	"$BIN/benchfleet" --url "$URL" wait "$wid" --timeout 300 >"$work/wait.out" 2>"$work/wait.err"
rc=$?
el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
check_eq "wait on job $wid: exit" "$rc" 0
check_contains "wait says the job is done" "$(cat "$work/wait.err")" "job $wid: done, 1/1 runs done"
gets=$(grep -c "GET /api/v1/jobs/$wid HTTP" "$work/wait.strace")
evs=$(grep -c "GET /api/v1/events?after=[0-9]* HTTP" "$work/wait.strace")
echo "wait: ${el} s, $gets GETs of the job, $evs event streams"
check "wait followed /api/v1/events" test "$evs" -ge 1
check "wait read the job at most 3 + every 10 s ($gets GETs in $el s)" \
	test "$gets" -le "$(awk -v e="$el" 'BEGIN { printf "%d", 3 + e / 10 }')"
check "the wait job ran long enough to tell polling apart ($el s)" \
	awk -v e="$el" 'BEGIN { exit !(e > 2) }'
# a wait that runs out of time says so and exits 4
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","preset":"test","machines":{"class":"it"},
      "params":{"mb":64,"passes":4},"repetitions":{"iterations":40,"warmup":0}}')
tid=$(body_of "$r" | jq -r .id)
out=$(cli wait "$tid" --timeout 1 2>&1); rc=$?
check_eq "wait --timeout 1 on a long job: exit" "$rc" 4
check_contains "wait --timeout 1: why" "$out" "after 1 s"
check "cancel the long job" cli cancel "$tid"
check_eq "wait on the cancelled job: exit 1" "$(cli wait "$tid" --timeout 60 >/dev/null 2>&1; echo $?)" 1
# The store itself (SQLite or PostgreSQL, tests/lib/common.sh): one row
# per measured value, none twice, and the store refuses a second one.
check_eq "samples in the store" \
	"$(bf_sql "$work" "select count(*) from samples s join runs r on r.id=s.run_id where r.job_id=$id and s.metric='wall_s'")" 12
check_eq "no duplicate samples" \
	"$(bf_sql "$work" "select count(*) from (select run_id,boot,iteration,metric from samples group by 1,2,3,4 having count(*)>1) d")" 0
if dup=$(bf_sql "$work" "insert into samples (run_id, boot, iteration, metric, value, unit)
	select run_id, boot, iteration, metric, value + 1, unit from samples
	where run_id in (select id from runs where job_id=$id)" 2>&1); then
	fail "the store took a second copy of every sample of job $id"
else
	check_contains "the store refuses a duplicate sample (unique key)" "${dup,,}" unique
fi
check_eq "the refused insert wrote nothing" \
	"$(bf_sql "$work" "select count(*) from samples s join runs r on r.id=s.run_id where r.job_id=$id and s.metric='wall_s'")" 12
if [ "$(bf_store_kind "$work")" = sqlite ]; then
	check_eq "WAL mode" "$(bf_sql "$work" 'pragma journal_mode')" wal
else
	# PostgreSQL has no journal mode to check; what WAL mode buys SQLite
	# (readers next to the writer) it has anyway. What the store relies on
	# instead: the unique key over (run_id, boot, iteration, metric).
	check_eq "samples: unique over (run_id, boot, iteration, metric)" \
		"$(bf_sql "$work" "select count(*) from pg_index i join pg_class t on t.oid = i.indrelid
			where t.relname = 'samples' and i.indisunique and i.indnkeyatts = 4
			and (select string_agg(a.attname, ',' order by a.attname) from pg_attribute a
			     where a.attrelid = t.oid and a.attnum = any (i.indkey)) = 'boot,iteration,metric,run_id'")" 1
fi
# API and CLI serve them.
check_contains "CLI runs" "$(cli runs "$id")" bfit
check_contains "CLI status" "$(cli status "$id")" done
# The jobs list (docs/api.md, The jobs list): filters, keyset pages, the
# run counters kept by the store, and a 400 naming each bad parameter.
ids() { curl -fsS "$URL/api/v1/jobs?$1" | jq -r '[.jobs[].id] | join(" ")'; }
check_eq "jobs ?state=done" "$(ids state=done)" "$wid $id"
check_eq "jobs ?state=cancelled,failed" "$(ids state=cancelled,failed)" "$tid"
check_eq "jobs ?recipe=page-touch&state=done" "$(ids 'recipe=page-touch&state=done')" "$wid $id"
check_eq "jobs ?recipe=nosuch" "$(ids recipe=nosuch)" ""
m1=$(jq -r '.runs[0].machine' <<<"$runs")
check_contains "jobs ?machine=$m1" " $(ids "machine=$m1") " " $id "
check_eq "jobs ?q=PAGE-t (any case)" "$(ids 'q=PAGE-t&state=done')" "$wid $id"
check_eq "jobs ?q=%25 (a literal %)" "$(ids 'q=%25')" ""
p1=$(curl -fsS "$URL/api/v1/jobs?limit=2")
check_eq "jobs ?limit=2" "$(jq -r '[.jobs[].id] | join(" ")' <<<"$p1")" "$tid $wid"
check_eq "jobs ?limit=2: next_before" "$(jq -r .next_before <<<"$p1")" "$wid"
p2=$(curl -fsS "$URL/api/v1/jobs?limit=2&before=$wid")
check_eq "jobs ?before=$wid: the last page" "$(jq -c '[[.jobs[].id], .next_before]' <<<"$p2")" "[[$id],null]"
check_eq "jobs: counts and times of job $id" "$(jq -c '.jobs[0] | [.runs_total, .runs_done,
	.runs_failed, .runs_queued, .runs_running, .runs_cancelled, (.started_at > 0),
	(.finished_at >= .started_at), (.created_at <= .started_at)]' <<<"$p2")" "[4,4,0,0,0,0,true,true,true]"
out=$(cli status --state cancelled --search "page-" 2>&1)
check_contains "CLI status --state --search" "$out" "$tid"
check_eq "CLI status --state --search leaves the others out" \
	"$(awk -v w="$wid" '$1 == w' <<<"$out" | wc -l)" 0
check_contains "CLI status --limit 1 says where older jobs are" \
	"$(cli status --limit 1 2>&1 >/dev/null)" "status --before $tid"
out=$(cli status --state bogus 2>&1); rc=$?
check_eq "CLI status --state bogus: exit" "$rc" 1
check_contains "CLI status --state bogus: why" "$out" "state"
long=$(printf 'a%.0s' $(seq 129))
for q in "limit=0 limit" "limit=1001 limit" "limit=x limit" "before=0 before" "before=-1 before" \
	"state=bogus state" "state= state" "state=done, state" "recipe=../x recipe" \
	"machine=a%20b machine" "q=$long q" "q=%01 q" "q=%ff q" "published=2 published"; do
	r=$(api GET "/api/v1/jobs?${q% *}")
	check_eq "jobs ?${q% *}" "$(status_of "$r")" 400
	check_eq "jobs ?${q% *} names the field" "$(body_of "$r" | jq -r .detail.field)" "${q#* }"
done
rep=$(cli report "$id" --baseline passes:1)
check_contains "CLI report" "$rep" "pages_per_s"
check_contains "CLI report cells" "$rep" "mb=16"
check_eq "report json" "$(curl -fsS "$URL/api/v1/jobs/$id/report?format=json" | jq -r type)" object
# issue 17: --min-n, --stat, --adjust reach the report; bad values are a 400 naming them
rep=$(cli report "$id" --baseline passes:1 --min-n 2 --stat median --adjust holm)
check_contains "CLI report --stat median --adjust holm" "$rep" "MW p (Holm)"
check_contains "--stat median says its seed" "$rep" "seed 17"
check_contains "--min-n 2 in the legend" "$rep" "fewer than 2 independent samples"
check_eq "report ?stat=min json" "$(curl -fsS "$URL/api/v1/jobs/$id/report?format=json&stat=min" |
	jq -r '.metrics[0].rows[0].stat')" min
for q in "min_n=0 min_n" "min_n=x min_n" "stat=avg stat" "adjust=bonferroni adjust"; do
	r=$(api GET "/api/v1/jobs/$id/report?${q% *}")
	check_eq "report ?${q% *}" "$(status_of "$r")" 400
	check_eq "report ?${q% *} names the field" "$(body_of "$r" | jq -r .detail.field)" "${q#* }"
done
r1=$(jq -r '.runs[0].id' <<<"$runs")
check_eq "GET /runs/{id}" "$(curl -fsS "$URL/api/v1/runs/$r1" | jq -r .state)" done
check_eq "agent uploaded to each host's home" \
	"$(ls "$fleet"/bfit*/home/.benchfleet/benchfleet-agent 2>/dev/null | wc -l)" 3
check_eq "agent copy matches" "$(sha256sum "$fleet"/bfit1/home/.benchfleet/benchfleet-agent | cut -c1-64)" \
	"$(sha256sum "$BIN/benchfleet-agent" | cut -c1-64)"

# --- bad input: clear errors, nothing written ---
jobs_before=$(bf_sql "$work" "select count(*) from jobs")
runs_before=$(bf_sql "$work" "select count(*) from runs")
r=$(api POST /api/v1/jobs '{"recipe": "page-touch", "machines": ')
check_eq "truncated JSON" "$(status_of "$r")" 400
check_contains "truncated JSON names the position" "$(body_of "$r" | jq -r .error)" "line 1"
r=$(api POST /api/v1/jobs 'garbage')
check_eq "garbage" "$(status_of "$r")" 400
check_eq "garbage error is JSON" "$(body_of "$r" | jq -r 'has("error")')" true
r=$(api POST /api/v1/jobs '{"recipe":"nosuch","machines":{"class":"it"}}')
check_eq "unknown recipe" "$(status_of "$r")" 400
check_contains "unknown recipe named" "$(body_of "$r")" nosuch
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","machines":{"class":"it"},"matrix":{"thpp":["never"]}}')
check_eq "unknown axis" "$(status_of "$r")" 400
check_contains "unknown axis named" "$(body_of "$r")" thpp
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","machines":{"class":"it"},"matrix":{"mb":[8,0]}}')
check_eq "axis value out of range" "$(status_of "$r")" 400
check_contains "bad value named" "$(body_of "$r" | jq -r .error)" "matrix.mb[1]"
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","machines":{"names":["bfit1","ghost"]}}')
check_eq "unknown machine" "$(status_of "$r")" 400
check_contains "unknown machine named" "$(body_of "$r")" ghost
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","machines":{"class":"nosuchclass"}}')
check_eq "unknown class" "$(status_of "$r")" 400
head -c 2000000 /dev/zero | tr '\0' ' ' > "$work/big"
code=$(curl -sS -o "$work/big.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	--data-binary @"$work/big" "$URL/api/v1/jobs")
check_eq "huge body" "$code" 413
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/jobs/999999")
check_eq "unknown job" "$code" 404
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/nosuch")
check_eq "unknown resource" "$code" 404
code=$(curl -sS -o /dev/null -w '%{http_code}' -X DELETE "${JSON[@]}" "$URL/api/v1/jobs")
check_eq "wrong method" "$code" 405
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/machines/ghost")
check_eq "unknown machine GET" "$code" 404
r=$(api POST /api/v1/machines '{"name":"x;rm","host":"10.78.0.11","key":"/etc/hostname"}')
check_eq "hostile machine name" "$(status_of "$r")" 400
# Raw malformed HTTP on the socket: a 4xx or a closed connection, never a
# crash or a hang.
port=${URL##*:}
raw() { (exec 3<>/dev/tcp/127.0.0.1/$port; printf '%b' "$1" >&3; timeout 5 cat <&3 | head -1) 2>/dev/null; }
check_contains "bad header line" "$(raw 'GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n')" " 400 "
check_contains "bad content-length" "$(raw 'POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n')" " 400 "
check_contains "bad version" "$(raw 'GET /api/v1/jobs HTTP/9.9\r\n\r\n')" " 505 "
raw 'GARBAGE\r\n\r\n' >/dev/null
code=$(head -c 2000000 /dev/zero | tr '\0' ' ' | curl -sS -o /dev/null -w '%{http_code}' -X POST \
	"${JSON[@]}" -H 'Transfer-Encoding: chunked' --data-binary @- "$URL/api/v1/jobs")
check_eq "huge chunked body" "$code" 413
check_eq "nothing written by rejected requests (jobs)" "$(bf_sql "$work" "select count(*) from jobs")" "$jobs_before"
check_eq "nothing written by rejected requests (runs)" "$(bf_sql "$work" "select count(*) from runs")" "$runs_before"
check "daemon still alive after bad input" kill -0 "$DAEMON_PID"

# --- hostile values reach the workload as one literal argv element ---
hostile=$(jq -n '{recipe:"echo", machines:{names:["bfit2"]}, repetitions:{iterations:1},
	matrix:{msg:["; touch /tmp/bf-pwned", "$(touch /tmp/bf-pwned2)", "`touch /tmp/bf-pwned3`", "a\nb", "--help", "'"'"'quoted'"'"'"]}}')
r=$(api POST /api/v1/jobs "$hostile")
check_eq "hostile job accepted" "$(status_of "$r")" 201
hid=$(body_of "$r" | jq -r .id)
check_eq "hostile job" "$(wait_job "$hid" 120)" done
hruns=$(curl -fsS "$URL/api/v1/jobs/$hid/runs")
while read -r rid; do
	want=$(jq -r --argjson r "$rid" '.runs[] | select(.id==$r) | .values.msg' <<<"$hruns")
	got=$(curl -fsS "$URL/api/v1/runs/$rid/log" | jq -r '[.lines[] | select(.stream=="stdout") | .line] | join("\n")')
	check_eq "run $rid printed its value literally" "$got" "$want"
done < <(jq -r '.runs[].id' <<<"$hruns")
check "no file created by a hostile value" test ! -e /tmp/bf-pwned -a ! -e /tmp/bf-pwned2 -a ! -e /tmp/bf-pwned3
r=$(api POST /api/v1/jobs '{"recipe":"echo","machines":{"names":["bfit2"]},"params":{"msg":"nul\u0000byte"}}')
check_eq "NUL in a value" "$(status_of "$r")" 400

# submit --wait: one process submits and follows the job from the event
# before it was made (the 201's X-Benchfleet-Event-Id), no GET of the job
# first; it prints the id, then exits as wait does
printf '%s' '{"recipe":"page-touch","preset":"test","machines":{"class":"it"},
  "params":{"mb":8,"passes":1},"repetitions":{"iterations":2,"warmup":0}}' >"$work/sw.json"
ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=sendto,sendmsg,write -s 48 -o "$work/sw.strace" \
	"$BIN/benchfleet" --url "$URL" submit "$work/sw.json" --wait --timeout 300 >"$work/sw.out" 2>"$work/sw.err"
rc=$?
swid=$(head -1 "$work/sw.out")
check_eq "submit --wait: exit" "$rc" 0
check_contains "submit --wait says the job is done" "$(cat "$work/sw.err")" "job $swid: done, 1/1 runs done"
check_eq "submit --wait: the job is done in the store" "$(body_of "$(api GET "/api/v1/jobs/$swid")" | jq -r .state)" done
check_eq "submit --wait: no GET of the job before the stream" \
	"$(grep -c "GET /api/v1/jobs/$swid HTTP" "$work/sw.strace")" 0
check "submit --wait followed /api/v1/events from the 201's event" \
	grep -q "GET /api/v1/events?after=[0-9]* HTTP" "$work/sw.strace"
out=$(cli submit "$work/sw.json" --timeout 5 2>&1); rc=$?
check_eq "submit --timeout without --wait: exit 2" "$rc" 2
check_contains "submit --timeout without --wait: why" "$out" "only with --wait"

stop_daemon
check_sanitizers "$work/daemon.log"
finish
