#!/bin/bash
# cli_http.sh: the benchfleet CLI's behaviour that needs no coordinator:
# usage errors exit 2, an unreachable coordinator exits 3 naming the URL,
# and submit rejects malformed JSON locally (line and column) before any
# request is made. The scheme picks the transport: http:// is the CLI's
# own, https:// libcurl's, which the binary does not link but loads on
# first use (a libcurl.so.4 that does not load fails https:// only). End-to-end assertions against a real benchfleetd live
# with the daemon's integration tests.
set -u
: "${BF_BUILD:?BF_BUILD must name the build directory}"
BIN="$BF_BUILD/bin/benchfleet"
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
checks=0

# A port that was free a moment ago: bind port 0, read it, close it.
closed_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
dead="http://127.0.0.1:$closed_port"

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect RC GREP-PATTERN -- ARGS...: run the CLI, check the exit status
# and that stderr (or stdout when the pattern starts with "out:") matches.
expect() {
	local want=$1 pat=$2 rc
	shift 3
	checks=$((checks + 1))
	"$BIN" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" != "$want" ]; then
		fail "benchfleet $* exited $rc, expected $want; stderr: $(head -c 400 "$tmp/err")"
		return
	fi
	if grep -q 'AddressSanitizer\|runtime error:' "$tmp/err"; then
		fail "benchfleet $*: sanitizer report: $(head -c 400 "$tmp/err")"
		return
	fi
	case $pat in
	"") ;;
	out:*) grep -q -- "${pat#out:}" "$tmp/out" || fail "benchfleet $*: stdout lacks '${pat#out:}': $(head -c 400 "$tmp/out")" ;;
	*) grep -q -- "$pat" "$tmp/err" || fail "benchfleet $*: stderr lacks '$pat': $(head -c 400 "$tmp/err")" ;;
	esac
}

# Usage: exit 2.
expect 2 "usage: benchfleet" --
expect 2 'no command "frobnicate"' -- frobnicate
expect 2 "unknown option --frob" -- --frob status
expect 2 "unknown option --frob" -- status --frob
expect 2 "needs a value" -- --url
expect 2 "too many arguments" -- status 1 2
expect 2 "too few arguments" -- wait
expect 2 '"x" is not a positive integer' -- status x
expect 2 '"0" is not a positive integer' -- runs 0
expect 2 '"-3" is not a positive integer' -- cancel -- -3
expect 2 '"99999999999999999999" is not a positive integer' -- log 99999999999999999999
expect 2 "is not a number of seconds" -- --timeout abc status
expect 2 "is not a number of seconds" -- --timeout -1 status
expect 2 "is not a positive number" -- --url "$dead" wait 1 --timeout 0
expect 2 '"pdf" is not one of' -- --url "$dead" report 1 --format pdf
expect 2 "is not AXIS:VALUE" -- --url "$dead" report 1 --baseline thp
expect 2 "too many arguments" -- machines frob
expect 2 "IPv6 address as \[ADDRESS\]:PORT" -- machines add m1 ::1 --user u --key k
expect 2 "1 to 65535" -- machines add m1 "[::1]:0" --user u --key k
expect 2 "1 to 65535" -- machines add m1 host:65536 --user u --key k
expect 2 "1 to 65535" -- machines add m1 host:22x --user u --key k
expect 2 "no ']'" -- machines add m1 "[::1:22" --user u --key k
expect 2 "--user and --key are required" -- --url "$dead" machines add m1 host:22 --key k
expect 2 "" -- --url "$dead" machines add "bad name" host:22 --user u --key k
expect 2 "line break" -- --token "$(printf 'a\nb')" --url "$dead" status
expect 2 'no command "nope"' -- help nope

# Help: exit 0, on stdout.
expect 0 "out:submit FILE|-" -- help
expect 0 "out:usage: benchfleet submit" -- submit --help
expect 0 "out:usage: benchfleet machines add" -- help machines add
expect 0 "out:--baseline" -- report --help
expect 0 "out:benchfleet " -- --version

# Unreachable coordinator: exit 3, naming the URL.
expect 3 "cannot reach the coordinator at $dead/api/v1/jobs" -- --url "$dead" status
expect 3 "$dead/api/v1/jobs/5" -- --url "$dead/" status 5
expect 3 "$dead/api/v1/jobs/5/runs" -- --url "$dead/api/v1" runs 5
expect 3 "$dead/api/v1/jobs/5" -- --url "$dead" wait 5 --timeout 1
expect 3 "$dead/api/v1/machines" -- --url "$dead" machines
expect 3 "$dead/api/v1/machines" -- --url "$dead" machines add m1 "[::1]:2222" --user u --key k
expect 3 "$dead/api/v1/jobs/5/report?format=csv&baseline=thp%3Anever" -- --url "$dead" report 5 --format csv --baseline thp:never
expect 3 "$dead/api/v1/jobs/5/report?format=text&min_n=2&stat=median&adjust=holm" -- --url "$dead" report 5 --min-n 2 --stat median --adjust holm
expect 2 "--min-n: \"0\" is not an integer" -- --url "$dead" report 5 --min-n 0
expect 2 "--stat: \"avg\" is not one of mean, median, min" -- --url "$dead" report 5 --stat avg
expect 2 "--adjust: \"bonf\" is not one of none, holm" -- --url "$dead" report 5 --adjust bonf
expect 3 "$dead/api/v1/recipes" -- --url "$dead" recipes
expect 3 "$dead/api/v1/runs/9/log" -- --url "$dead" log 9
expect 3 "$dead/api/v1/jobs/5/bundle" -- --url "$dead" export 5
checks=$((checks + 1))
BENCHFLEET_URL="$dead" "$BIN" machines >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 3 ] && grep -q -e "$dead/api/v1/machines" "$tmp/err" ||
	fail "BENCHFLEET_URL is not used (rc $rc): $(cat "$tmp/err")"

# The transport, by scheme.
expect 2 "neither http:// nor https://" -- --url "ftp://127.0.0.1:$closed_port" status
expect 2 "malformed: the port" -- --url "http://127.0.0.1:99999" status
expect 2 "malformed: user@" -- --url "http://u:p@127.0.0.1:$closed_port" status
expect 3 "http://127.0.0.1:$closed_port/api/v1/jobs: cannot connect" -- \
	--url "127.0.0.1:$closed_port" status
expect 3 "https://127.0.0.1:$closed_port/api/v1/jobs" -- --url "https://127.0.0.1:$closed_port" status
checks=$((checks + 1))
if ldd "$BIN" | grep -q libcurl; then
	fail "benchfleet links libcurl: $(ldd "$BIN" | grep libcurl)"
fi
mkdir "$tmp/nolib"
: >"$tmp/nolib/libcurl.so.4"
LD_LIBRARY_PATH=$tmp/nolib expect 1 "https:// needs libcurl.so.4, which cannot be loaded: .*file too short" \
	-- --url "https://127.0.0.1:$closed_port" status
LD_LIBRARY_PATH=$tmp/nolib expect 3 "$dead/api/v1/jobs: cannot connect" -- --url "$dead" status

# submit: malformed JSON is caught here, with its position, and no request
# is made (a request to the closed port would exit 3, not 1).
printf '{\n  "recipe": "redis",\n  "matrix": {"thp": ["never",]}\n}\n' >"$tmp/bad.json"
expect 1 "bad.json: .*line 3, column" -- --url "$dead" submit "$tmp/bad.json"
printf '{"recipe": "redis", "recipe": "x"}' >"$tmp/dup.json"
expect 1 "dup.json" -- --url "$dead" submit "$tmp/dup.json"
printf '[1, 2]' >"$tmp/arr.json"
expect 1 "a job is a JSON object" -- --url "$dead" submit "$tmp/arr.json"
: >"$tmp/empty.json"
expect 1 "empty.json" -- --url "$dead" submit "$tmp/empty.json"
expect 1 "No such file" -- --url "$dead" submit "$tmp/missing.json"
python3 -c 'import sys; sys.stdout.write("{\"pad\": \"" + "x" * (1024 * 1024) + "\"}")' >"$tmp/big.json"
expect 1 "larger than 1048576 bytes" -- --url "$dead" submit "$tmp/big.json"
checks=$((checks + 1))
printf '{"recipe": "redis",\n"x": }' | "$BIN" --url "$dead" submit - >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && grep -q "<stdin>: .*line 2" "$tmp/err" ||
	fail "submit - of malformed stdin (rc $rc): $(cat "$tmp/err")"
# A well-formed job is sent, so it meets the closed port.
printf '{"recipe": "redis"}' >"$tmp/good.json"
expect 3 "$dead/api/v1/jobs" -- --url "$dead" submit "$tmp/good.json"

# --timeout bounds the name's lookup too. In a network and mount
# namespace of its own: a nameserver on 127.0.0.1:53 that never answers,
# and a resolv.conf that tells glibc to wait for it 4 s a try, 2 tries.
# The CLI gives up at its 2 s and says why (exit 3, as for any coordinator
# it cannot reach), where getaddrinfo alone would wait 8 s or more.
checks=$((checks + 1))
printf 'nameserver 127.0.0.1\noptions timeout:4 attempts:2\n' >"$tmp/resolv.conf"
unshare -m -n bash -c '
	ip link set lo up || exit 9
	mount --bind "$1/resolv.conf" /etc/resolv.conf || exit 9
	python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((\"127.0.0.1\", 53))
print(\"ready\", flush=True)
while True:
    s.recvfrom(4096)
" >"$1/dns.out" 2>&1 &
	for i in $(seq 50); do grep -q ready "$1/dns.out" && break; sleep 0.1; done
	t0=$(date +%s%N)
	"$2" --timeout 2 --url http://coord.slow.test:8080 status >/dev/null 2>"$1/dns.err"
	echo "rc=$? ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
	kill %1
' _ "$tmp" "$BIN" >"$tmp/dns.res" 2>&1
read -r rcs mss <"$tmp/dns.res"
echo "slow nameserver, --timeout 2: $rcs $mss: $(cat "$tmp/dns.err" 2>/dev/null)"
ms=${mss#ms=}
[ "$rcs" = rc=3 ] && [ "${ms:-0}" -ge 1900 ] && [ "${ms:-99999}" -lt 4000 ] &&
	grep -q "cannot resolve host coord.slow.test: no answer within" "$tmp/dns.err" ||
	fail "a nameserver that never answers: $(cat "$tmp/dns.res") $(cat "$tmp/dns.err" 2>/dev/null)"

echo "$checks checks, $fails failed"
[ "$fails" = 0 ]
