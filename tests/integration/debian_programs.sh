#!/usr/bin/env bash
# Issue 20: the Debian-packaged benchmark programs through the whole
# system. Each recipe's test preset (dbench, tbench, hpcc, stress-ng,
# sysbench-memory, hackbench, ab, fio-pagecache) is submitted to the API
# and run by the agent on the netns fleet: every metric is parsed from the
# real program's output (hpcc's and stress-ng's from the files they write
# in the step's workdir), the run's snapshot records the declared
# package's version exactly as dpkg-query says it, services and workdirs
# are gone afterwards. A recipe whose program is not installed fails its
# run before anything runs, naming the package; an upstream program a lab
# has not installed fails naming its path.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

debian=(dbench tbench hpcc stress-ng sysbench-memory hackbench ab fio-pagecache)
pkgs=(dbench hpcc stress-ng sysbench rt-tests apache2-utils busybox fio)
miss=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || miss+=("$p")
done
if [ ${#miss[@]} -gt 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${miss[@]}" \
		>/dev/null 2>&1 || { echo "cannot install ${miss[*]}: bash deploy/install-deps --test"; exit 1; }
fi

work=$(mktemp -d /tmp/bf-debian.XXXXXX)
defer "rm -rf '$work'"
mkdir "$work/recipes"
for r in "${debian[@]}" xsbench-upstream; do
	cp "$BF_SRC/recipes/$r.json" "$work/recipes/" || { echo "no recipe $r"; exit 1; }
done
# a program a machine lacks: the real dbench package, a binary it does not ship
cat >"$work/recipes/missing-program.json" <<'EOF'
{"name": "missing-program", "description": "declares a binary no package installs",
 "package": {"debian": "dbench", "binary": "benchfleet-no-such-program"},
 "params": {"n": {"type": "int", "min": 1, "max": 9, "default": 1}},
 "presets": {"test": {"n": 1}},
 "command": ["benchfleet-no-such-program", "{n}"],
 "metrics": [{"name": "x", "unit": "ops", "better": "higher", "source": "stdout",
              "regex": "x=([0-9]+)"}]}
EOF
export BF_RECIPES=$work/recipes
before=$(ls -d /var/tmp/benchfleet-step.* 2>/dev/null | sort)

fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 2 --prefix bfdp \
	--subnet 10.143.0 --bridge bfbrdp --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
start_daemon "$work" --known-hosts "$fleet/known_hosts" || exit 1
defer stop_daemon
while IFS=$'\t' read -r name addr port user key; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"deb\"}")
	check_eq "register $name" "$(status_of "$r")" 201
done < "$fleet/hosts.tsv"

recipes=$(curl -fsS "$URL/api/v1/recipes")
check_eq "tbench declares both of its binaries" \
	"$(jq -c '.recipes[] | select(.name=="tbench") | [.package[].binary]' <<<"$recipes")" '["tbench","tbench_srv"]'
check_eq "hpcc's metrics come from hpccoutf.txt" \
	"$(jq -r '.recipes[] | select(.name=="hpcc") | [.metrics[].file] | unique | join(",")' <<<"$recipes")" hpccoutf.txt

t0=$(date +%s.%N)
declare -A job
for name in "${debian[@]}" missing-program xsbench-upstream; do
	r=$(api POST /api/v1/jobs "{\"recipe\":\"$name\",\"preset\":\"test\",\"machines\":{\"class\":\"deb\"},\"repetitions\":{\"iterations\":1}}")
	check_eq "$name submitted" "$(status_of "$r")" 201
	job[$name]=$(body_of "$r" | jq -r .id)
done
for name in "${debian[@]}"; do
	id=${job[$name]}
	st=$(wait_job "$id" 300)
	check_eq "$name: job done" "$st" done
	run=$(curl -fsS "$URL/api/v1/jobs/$id/runs" | jq -c '.runs[0]')
	[ "$st" = done ] || { echo "$name: $(jq -r .error <<<"$run")"; continue; }
	rec=$(jq -c --arg n "$name" '.recipes[] | select(.name==$n)' <<<"$recipes")
	for m in $(jq -r '.metrics[].name' <<<"$rec"); do
		v=$(jq -r --arg m "$m" '[.samples[] | select(.metric==$m) | .value][0] // "missing"' <<<"$run")
		case "$m" in failed_requests) want="v == 0" ;; *) want="v > 0 && v < 1e15" ;; esac
		prog="BEGIN { exit !(v != \"missing\" && $want) }"
		check "$name.$m parsed ($v)" awk -v v="$v" "$prog"
		awk -v v="$v" "$prog" ||
			curl -fsS "$URL/api/v1/runs/$(jq -r .id <<<"$run")/log" | tail -c 3000 >&2
		printf '  %-16s %-20s %s\n' "$name" "$m" "$v"
	done
	# the declared packages' versions, as dpkg-query says them, in the run
	snap=$(curl -fsS "$URL/api/v1/snapshots/$(jq -r .snapshot_sha256 <<<"$run")")
	for p in $(jq -r '[.package[].debian] | unique | .[]' <<<"$rec"); do
		check_eq "$name: snapshot pkg.$p" "$(jq -r --arg k "pkg.$p" '.snapshot[$k]' <<<"$snap")" \
			"$(dpkg-query -W -f='${Version}' "$p")"
	done
	for b in $(jq -r '.package[].binary' <<<"$rec"); do
		check_contains "$name: $b is from its package" \
			"$(jq -r --arg k "bin.$b.package" '.snapshot[$k]' <<<"$snap")" \
			"$(jq -r --arg b "$b" '.package[] | select(.binary==$b) | .debian' <<<"$rec")"
	done
done
echo "debian programs: $(echo "$(date +%s.%N) - $t0" | bc) s"

st=$(wait_job "${job[missing-program]}" 120)
check_eq "missing program: job failed" "$st" failed
run=$(curl -fsS "$URL/api/v1/jobs/${job[missing-program]}/runs" | jq -c '.runs[0]')
err=$(jq -r .error <<<"$run")
echo "missing program: $err"
check_contains "missing program: names the field" "$err" 'packages[0].binary'
check_contains "missing program: names the binary" "$err" '"benchfleet-no-such-program" is not on PATH'
check_contains "missing program: names the package" "$err" 'install the Debian package dbench'
check_eq "missing program: no samples" "$(jq '.samples | length' <<<"$run")" 0

st=$(wait_job "${job[xsbench-upstream]}" 120)
check_eq "upstream program not installed: job failed" "$st" failed
err=$(curl -fsS "$URL/api/v1/jobs/${job[xsbench-upstream]}/runs" | jq -r '.runs[0].error')
echo "xsbench-upstream: $err"
check_contains "upstream program: names its path" "$err" '"/opt/xsbench/XSBench" is not an executable file'
check_contains "upstream program: says who installs it" "$err" 'installed there by the lab'

check_eq "tbench_srv gone after its step" "$(pgrep -xc tbench_srv)" 0
check_eq "busybox httpd gone after its step" "$(pgrep -fc 'busybox httpd -f -p 127.0.0.1:18080')" 0
check_eq "no workdir left behind" "$(ls -d /var/tmp/benchfleet-step.* 2>/dev/null | sort)" "$before"
stop_daemon
check_sanitizers "$work/daemon.log"
finish
