#!/usr/bin/env bash
# A metric the recipe's rule cannot find in the workload's output fails the
# run, names the metric, keeps the output in the run log, and stores no
# sample of that iteration (a silently missing number would bias a mean).
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-metric.XXXXXX)
defer "rm -rf '$work'"
mkdir "$work/recipes"
ln -s "$BF_SRC"/recipes/*.json "$work/recipes/"
cat > "$work/recipes/unparsed.json" <<'JSON'
{"name": "unparsed", "description": "output the metric rule does not match",
 "params": {"msg": {"type": "string", "default": "throughput: fast"}},
 "command": ["@agent", "work", "echo", "{msg}"],
 "metrics": [{"name": "ops", "unit": "ops/s", "better": "higher", "source": "stdout",
              "regex": "throughput: ([0-9.]+)"}]}
JSON
fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 1 --prefix bfm \
	--subnet 10.92.0 --bridge bfbrm --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
BF_RECIPES=$work/recipes start_daemon "$work" --known-hosts "$fleet/known_hosts" || exit 1
defer stop_daemon
IFS=$'\t' read -r name addr port user key < "$fleet/hosts.tsv"
api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"m\"}" >/dev/null

r=$(api POST /api/v1/jobs '{"recipe":"unparsed","machines":{"class":"m"},"repetitions":{"iterations":2}}')
id=$(body_of "$r" | jq -r .id)
check_eq "job fails" "$(wait_job "$id" 60)" failed
run=$(curl -fsS "$URL/api/v1/jobs/$id/runs" | jq -c '.runs[0]')
check_contains "the metric is named" "$(jq -r .error <<<"$run")" "metric ops not found"
check_eq "no samples of unparsed iterations" "$(jq '.samples | length' <<<"$run")" 0
check_contains "the offending output is stored" \
	"$(curl -fsS "$URL/api/v1/runs/$(jq -r .id <<<"$run")/log" | jq -r '[.lines[].line] | join("\n")')" "throughput: fast"
# The same recipe with output that matches is fine.
r=$(api POST /api/v1/jobs '{"recipe":"unparsed","machines":{"class":"m"},"params":{"msg":"throughput: 12.5"},"repetitions":{"iterations":2}}')
id2=$(body_of "$r" | jq -r .id)
check_eq "matching output" "$(wait_job "$id2" 60)" done
check_eq "ops samples" "$(curl -fsS "$URL/api/v1/jobs/$id2/runs" | jq '[.runs[0].samples[] | select(.metric=="ops" and .value==12.5)] | length')" 2
stop_daemon
check_sanitizers "$work/daemon.log"
finish
