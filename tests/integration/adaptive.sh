#!/usr/bin/env bash
# Adaptive repetitions: boots are added to a cell while the 95% CI of its
# mean over boot means is wider than target_ci_pct, up to max_boots; the
# report names the cells that hit the cap. A loose target stays at
# min_boots.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-adapt.XXXXXX)
defer "rm -rf '$work'"
fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 2 --prefix bfd \
	--subnet 10.88.0 --bridge bfbrd --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
start_daemon "$work" --known-hosts "$fleet/known_hosts" || exit 1
defer stop_daemon
while IFS=$'\t' read -r name addr port user key; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"adapt\"}")
	check_eq "register $name" "$(status_of "$r")" 201
done < "$fleet/hosts.tsv"

# An unreachable target (0.001% on a shared 2-core machine): every cell
# grows to max_boots and the report says so.
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","preset":"test","machines":{"class":"adapt"},
	"matrix":{"mb":[8,16]},
	"repetitions":{"iterations":2,"target_ci_pct":0.001,"min_boots":2,"max_boots":4,"target_metric":"wall_s"}}')
check_eq "submit tight" "$(status_of "$r")" 201
tight=$(body_of "$r" | jq -r .id)
check_eq "runs planned at first" "$(body_of "$r" | jq -r .runs)" 4
check_eq "tight job" "$(wait_job "$tight" 180)" done
check_eq "each cell grew to max_boots" \
	"$(bf_sql "$work" "select count(*) from runs where job_id=$tight group by cell_index order by cell_index" | joined ,)" "4,4"
check_eq "boots numbered 0..3" \
	"$(bf_sql "$work" "select distinct boot from runs where job_id=$tight order by boot" | joined ,)" "0,1,2,3"
check_contains "the decision is logged" \
	"$(bf_sql "$work" "select l.line from run_logs l join runs r on r.id=l.run_id where r.job_id=$tight and l.stream='coord' order by l.run_id, l.seq")" "adding boot"
rep=$(curl -fsS "$URL/api/v1/jobs/$tight/report")
check_contains "report names the cells at the cap" "$rep" "at the cap and still wider: mb=8"
check_contains "report: several boots" "$rep" "boot"

# A loose target is met at once (1000%: even on a loaded machine a CPU
# loop's boot means do not vary that much; the CI is about 2.5 sd).
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"class":"adapt"},
	"params":{"loops":20000000},"repetitions":{"iterations":2,"target_ci_pct":1000,"min_boots":3,"max_boots":6}}')
loose=$(body_of "$r" | jq -r .id)
check_eq "loose job" "$(wait_job "$loose" 120)" done
check_eq "loose target: min_boots only" "$(bf_sql "$work" "select count(*) from runs where job_id=$loose")" 3
check_contains "loose report: none at the cap" "$(curl -fsS "$URL/api/v1/jobs/$loose/report")" "still wider: none"

# Bad adaptive settings are refused, naming the field.
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","machines":{"class":"adapt"},"repetitions":{"target_ci_pct":1,"min_boots":5,"max_boots":3}}')
check_eq "max < min" "$(status_of "$r")" 400
check_contains "max < min named" "$(body_of "$r")" "repetitions.max_boots"
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","machines":{"class":"adapt"},"repetitions":{"target_ci_pct":1,"target_metric":"nosuch"}}')
check_eq "unknown target metric" "$(status_of "$r")" 400
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","machines":{"class":"adapt"},"repetitions":{"max_boots":3}}')
check_eq "max_boots without target" "$(status_of "$r")" 400
stop_daemon
check_sanitizers "$work/daemon.log"
finish
