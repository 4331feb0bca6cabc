#!/usr/bin/env bash
# Attack (issue 14, privilege separation): a compromised API child asks the
# monitor to sign bytes of its own choosing. The child holds no lab key,
# but the monitor signs on its behalf; if it signs whatever it is sent,
# the HTTP side has the lab key's power after all: a bundle with forged
# samples goes out "signed by lab X", and peers that trust X rerun it or
# take its numbers. The test plays the compromised child for real: it
# stops the API child and takes its control socket to the monitor with
# pidfd_getfd (tests/tools/privsep-steal.py), then sends MONITOR_SIGN
# frames: arbitrary bytes, and the signed message of a real job's bundle
# with a sample changed. Both must be refused (the monitor signs only
# what its own store exports for the job the bundle names), while the
# genuine export is still signed and verifies. Netns prefix bfr1.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

if [ "$(id -u)" != 0 ]; then
	echo "needs root (privilege separation and pidfd_getfd)"; exit 1
fi
work=$(mktemp -d /tmp/bf-atk-sign.XXXXXX)
defer "rm -rf '$work'"
fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 1 --prefix bfr1 \
	--subnet 10.181.0 --bridge bfbr181 --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
defer 'kill -9 $DAEMON_PID 2>/dev/null'
start_daemon "$work" --known-hosts "$fleet/known_hosts" --probe-interval 2 || exit 1
steal() { python3 "$BF_SRC/tests/tools/privsep-steal.py" "$@"; }

while IFS=$'\t' read -r name addr p user k; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$p,\"user\":\"$user\",\"key\":\"$k\",\"class\":\"atk\"}")
	check_eq "register $name" "$(status_of "$r")" 201
done <"$fleet/hosts.tsv"
r=$(api POST /api/v1/jobs '{"recipe":"echo","preset":"test","name":"genuine","machines":{"class":"atk"},"repetitions":{"iterations":2}}')
check_eq "submit" "$(status_of "$r")" 201
JA=$(body_of "$r" | jq -r .id)
check_eq "job $JA" "$(wait_job "$JA" 120)" done
lab=$(curl -fsS "$URL/api/v1/lab")
curl -fsS -o "$work/bundle.json" "$URL/api/v1/jobs/$JA/bundle"
check_eq "the genuine export is signed" "$(jq -r .signature.public_key "$work/bundle.json")" \
	"$(jq -r .public_key <<<"$lab")"
check "the genuine export has samples" test "$(jq '.samples | length' "$work/bundle.json")" -ge 2
r=$(api POST /api/v1/reproductions "{\"bundle\":$(cat "$work/bundle.json"),\"compare_job\":$JA}")
check_eq "the genuine export verifies" "$(body_of "$r" | jq -r .trust.state)" signed

# The forgery: the same job, every sample 1000 times better.
jq -c '.samples |= map(.value = (.value / 1000))' "$work/bundle.json" |
	"$BIN/bf-bundle" rehash >"$work/forged.json"
"$BIN/bf-bundle" message <"$work/forged.json" >"$work/forged.msg"
printf 'anything at all: a login challenge, a token, a key of some other protocol' >"$work/any.msg"

child=$(api_pid)
check "an API child runs" test -n "$child" -a "$child" != "$DAEMON_PID"
out=$(steal "$child" "$work/forged.msg")
code=${out%% *}
check "the monitor refuses to sign a bundle with forged samples (got: $out)" \
	test "$code" != 0
# a new child, once the stolen one is gone
respawn() {
	kill -9 "$1" 2>/dev/null
	for i in $(seq 100); do
		c=$(pgrep -P "$DAEMON_PID" -x benchfleetd-api | head -1)
		[ -n "$c" ] && [ "$c" != "$1" ] && curl -fsS -m 2 "$URL/healthz" >/dev/null 2>&1 && break
		sleep 0.1
	done
}
respawn "$child"
if [ "$code" = 0 ]; then
	# show what the forger gets: the forged bundle, "signed by" this lab
	jq -c --arg s "${out#* }" --argjson lab "$lab" '.signature = {"alg":"ed25519",
		"lab":"forger","public_key":$lab.public_key,"sig":$s}' "$work/forged.json" \
		>"$work/forged-signed.json"
	r=$(api POST /api/v1/reproductions "{\"bundle\":$(cat "$work/forged-signed.json"),\"compare_job\":$JA}")
	fail "forged samples went out as: $(body_of "$r" | jq -r .signature)"
fi
child=$(api_pid)
out=$(steal "$child" "$work/any.msg")
check "the monitor refuses to sign arbitrary bytes (got: $out)" test "${out%% *}" != 0
respawn "$child"

# The monitor still signs what the store exports, through the new child.
curl -fsS -o "$work/bundle2.json" "$URL/api/v1/jobs/$JA/bundle"
check_eq "the export after the attack is signed" "$(jq -r .signature.alg "$work/bundle2.json")" ed25519
r=$(api POST /api/v1/reproductions "{\"bundle\":$(cat "$work/bundle2.json"),\"compare_job\":$JA}")
check_eq "and verifies" "$(body_of "$r" | jq -r .trust.state)" signed
check "the daemon log says why it refused" grep -q "sign refused" "$work/daemon.log"
check_sanitizers "$work/daemon.log"
finish
