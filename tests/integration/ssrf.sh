#!/usr/bin/env bash
# The bundle fetcher is no SSRF oracle (issue 14, findings 6 and 7).
# Daemon D runs with the default policy (public https peers only): every
# POST /reproductions {"url"} at its own open port, a closed port, private,
# link-local and loopback addresses in every spelling, localhost, file:,
# gopher: gets one status and one body, at once. Daemon E allows loopback
# (--peer-allow 127.0.0.0/8,::1/128 --peer-allow-http): a published bundle of D
# is fetched; open, closed, 404, 500 and non-bundle answers still look the
# same to the caller (the reason is in E's log only); a redirect is not
# followed; an oversized body and a node bomb are refused with E's peak
# RSS bounded; 10 parallel fetches of a slow peer: at most 2 run, the rest
# get 503. A name whose nameserver never answers is given up after 5 s.
#
# The whole script runs in its own network namespace (bfp5ssrf) with only
# a loopback: the addresses probed here are not reachable from it, so even
# a fetcher that fails this test (today's, or a regression) sends nothing
# off the machine.
set -uo pipefail
if [ -z "${BF_SSRF_NETNS:-}" ]; then
	ns=bfp5ssrf
	ip netns del "$ns" 2>/dev/null
	ip netns add "$ns" || { echo "FAIL: ip netns add $ns"; exit 1; }
	ip -n "$ns" link set lo up
	BF_SSRF_NETNS=$ns ip netns exec "$ns" bash "$0" "$@"
	rc=$?
	ip netns del "$ns"
	exit $rc
fi
. "$(dirname "$0")/../lib/common.sh"
check_eq "in a netns with no route out" "$(ip route show default | wc -l)" 0
# The localhost probes below need the name to resolve (/etc/hosts).
check "localhost resolves here (getent hosts localhost)" getent hosts localhost

work=$(mktemp -d /tmp/bf-ssrf.XXXXXX)
defer "rm -rf '$work'"
mkdir -p "$work/d" "$work/e"

# A loopback port nobody listens on.
closed_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
post_url() { # post_url URL: "STATUS TIME BODY" of POST /reproductions {"url": URL}
	local out
	out=$(curl -sS -X POST -H 'Content-Type: application/json' \
		--data-binary "$(jq -cn --arg u "$1" '{url: $u}')" ${POST_HDR:+-D "$POST_HDR"} \
		-w '\n%{http_code} %{time_total}' "$URL/api/v1/reproductions")
	printf '%s %s' "${out##*$'\n'}" "${out%$'\n'*}"
}
time_of() { local x=${1#* }; printf '%s' "${x%% *}"; }
rbody_of() { local x=${1#* }; printf '%s' "${x#* }"; }

# --- the config: malformed CIDRs are refused at start, naming the option ---
for bad in 10.0.0.1/8 1.2.3.4/33 localhost 127.1/8 "127.0.0.0/8,"; do
	out=$("$BIN/benchfleetd" --listen 127.0.0.1:0 --store "$work/bad.db" --peer-allow "$bad" 2>&1)
	rc=$?
	check_eq "--peer-allow $bad: exit 2" "$rc" 2
	check_contains "--peer-allow $bad: names the option" "$out" "--peer-allow"
done

# --- D: the default policy ---
start_daemon "$work/d" || exit 1
URL_D=$URL PID_D=$DAEMON_PID
defer "kill $PID_D 2>/dev/null; wait $PID_D 2>/dev/null"
PD=${URL_D##*:}
CLOSED=$(closed_port)

# D publishes a job's bundle (a machine that never answers is enough for a
# queued job): the legitimate peer of E below.
(umask 077 && echo "never used: the machine is never reached" >"$work/key")
r=$(api POST /api/v1/machines "{\"name\":\"m1\",\"host\":\"127.0.0.1\",\"port\":9,\"user\":\"x\",\"key\":\"$work/key\",\"class\":\"lab\"}")
check_eq "D: register a machine" "$(status_of "$r")" 201
r=$(api POST /api/v1/jobs '{"recipe":"page-touch","preset":"test","machines":{"class":"lab"},"repetitions":{"iterations":1}}')
check_eq "D: submit" "$(status_of "$r")" 201
JD=$(body_of "$r" | jq -r .id)
r=$(api POST "/api/v1/jobs/$JD/publish" '{}')
check_eq "D: publish" "$(status_of "$r")" 200
BUNDLE=/api/v1/jobs/$JD/bundle

urls=(
	"http://127.0.0.1:$PD$BUNDLE"		# open: the daemon's own port, a real bundle
	"https://127.0.0.1:$PD$BUNDLE"
	"http://127.0.0.1:$CLOSED/"		# closed
	"https://127.0.0.1:$CLOSED/"
	"https://10.0.0.1/"
	"https://10.0.0.1:$PD/"
	"https://172.16.0.1/"
	"https://192.168.1.1/"
	"https://100.64.0.1/"
	"https://169.254.169.254/latest/meta-data/"
	"http://169.254.169.254/latest/meta-data/"
	"https://[::1]:$PD$BUNDLE"
	"https://[0:0:0:0:0:0:0:1]:$PD$BUNDLE"
	"https://[::ffff:127.0.0.1]:$PD$BUNDLE"
	"https://[::ffff:a9fe:a9fe]/"
	"https://[fe80::1]/"
	"https://[fd00::1]/"
	"https://0x7f000001:$PD$BUNDLE"
	"https://2130706433:$PD$BUNDLE"
	"https://017700000001:$PD$BUNDLE"
	"https://127.1:$PD$BUNDLE"
	"https://0.0.0.0:$PD$BUNDLE"
	"https://localhost:$PD$BUNDLE"
	"http://localhost/"
	"https://localhost/"
	"file:///etc/passwd"
	"gopher://127.0.0.1:$PD/_GET%20/healthz"
	"dict://127.0.0.1:$PD/info"
	"ftp://127.0.0.1:$PD/"
	"https://user:pw@127.0.0.1:$PD/"
	"https://8.8.8.8:22/"
	"https://8.8.8.8:25/"
	"not a url"
)
first=
for u in "${urls[@]}"; do
	r=$(post_url "$u")
	check_eq "D: $u: status" "$(status_of "$r")" 502
	if [ -z "$first" ]; then
		first=$(rbody_of "$r")
		check_contains "D: generic text" "$first" "could not be fetched"
	fi
	check_eq "D: $u: the same body" "$(rbody_of "$r")" "$first"
	# refused by policy: answered at once, no connect, no timeout
	check "D: $u: answered at once ($(time_of "$r") s)" awk -v t="$(time_of "$r")" 'BEGIN { exit !(t < 0.5) }'
done
for leak in 127.0.0.1 loopback refused private "Couldn't" 404 connect scheme; do
	case "$first" in *"$leak"*) fail "D: the body tells \"$leak\": $first" ;; *) ok ;; esac
done
# ... the reasons are in D's log
check "D log: loopback named" grep -q "127.0.0.1 is refused: loopback" "$work/d/daemon.log"
check "D log: metadata named" grep -q "169.254.169.254 is refused: link-local" "$work/d/daemon.log"
check "D log: localhost resolved and refused" grep -qE "localhost is (127.0.0.1|::1), refused: loopback" "$work/d/daemon.log"
check "D log: plain http refused" grep -q 'scheme "http" refused' "$work/d/daemon.log"
check "D log: file: refused" grep -q 'scheme "file" refused' "$work/d/daemon.log"
check "D log: nothing was fetched" bash -c "! grep -q 'benchfleetd: fetched' '$work/d/daemon.log'"

# --- a local peer serving hostile answers, on loopback ---
cat >"$work/peer.py" <<'PY'
import http.server, json, socketserver, sys, threading, time
lock = threading.Lock()
st = {"now": 0, "max": 0, "hits": 0, "slow": 0}
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def send(self, code, body, ctype="application/json", length=True):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        p = self.path
        try:
            if p == "/redirect":
                self.send_response(302)
                self.send_header("Location", "http://127.0.0.1:%d/hit" % self.server.server_address[1])
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif p == "/hit":
                with lock:
                    st["hits"] += 1
                self.send(200, b"{}")
            elif p == "/big":
                self.send(200, b" " * (5 * 1024 * 1024))
            elif p == "/stream":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                for _ in range(200):
                    self.wfile.write(b" " * (1 << 20))
            elif p == "/nodes":
                self.send(200, b"[" + b"{}," * (1200 * 1024) + b"{}]")
            elif p == "/leak":
                self.send(500, b"SECRET-leak-marker internal details", "text/plain")
            elif p == "/html":
                self.send(200, b"<html>SECRET-html-marker</html>", "text/html")
            elif p == "/slow":
                with lock:
                    st["now"] += 1
                    st["slow"] += 1
                    st["max"] = max(st["max"], st["now"])
                time.sleep(6)
                with lock:
                    st["now"] -= 1
                self.send(200, b"{}")
            elif p == "/stats":
                with lock:
                    self.send(200, json.dumps(st).encode())
            else:
                self.send(404, b"no")
        except (BrokenPipeError, ConnectionResetError):
            pass
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
s = S(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
PY
python3 "$work/peer.py" "$work/peer.port" &
PEER_PID=$!
defer "kill $PEER_PID 2>/dev/null"
for i in $(seq 100); do [ -s "$work/peer.port" ] && break; sleep 0.05; done
PP=$(cat "$work/peer.port")
PEER=http://127.0.0.1:$PP

# D refuses the peer too (loopback), at once and with the same text.
r=$(post_url "$PEER/hit")
check_eq "D: the loopback peer is refused" "$(rbody_of "$r")" "$first"
check_eq "D: the peer was not contacted" "$(curl -fsS "$PEER/stats" | jq .hits)" 0

# --- E: loopback allowed, as a lab's test setup would ---
start_daemon "$work/e" --peer-allow 127.0.0.0/8,::1/128 --peer-allow-http || exit 1
URL_E=$URL PID_E=$DAEMON_PID
defer "kill $PID_E 2>/dev/null; wait $PID_E 2>/dev/null"
DAEMON_PID=
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$PID_E/status"; }

# The legitimate fetch from a peer coordinator still works: E gets D's
# bundle and goes on to match it (whatever E then says of it, it is no
# fetch failure).
r=$(post_url "http://127.0.0.1:$PD$BUNDLE")
echo "E: D's bundle: $r"
check "E: D's bundle fetched (status $(status_of "$r"))" test "$(status_of "$r")" != 502 -a "$(status_of "$r")" != 503
check "E log: fetched D's bundle" grep -q "fetched [0-9]* bytes from http://127.0.0.1:$PD$BUNDLE" "$work/e/daemon.log"
r=$(post_url "http://localhost:$PD$BUNDLE")
check "E: by name too (status $(status_of "$r"))" test "$(status_of "$r")" != 502 -a "$(status_of "$r")" != 503

# Open port (not a bundle), closed port, 404, 500 with a body, HTML, a
# redirect, refused addresses: one status, one body.
efirst=
for u in "http://127.0.0.1:$PD/healthz" "http://127.0.0.1:$CLOSED/" \
	"http://127.0.0.1:$PD/api/v1/jobs/999/bundle" "$PEER/leak" "$PEER/html" \
	"$PEER/redirect" "http://10.0.0.1/" "http://169.254.169.254/" "http://[::2]:$PD/" \
	"https://127.0.0.1:$PD/" "file:///etc/passwd" "http://127.0.0.1:22/"; do
	r=$(post_url "$u")
	check_eq "E: $u: status" "$(status_of "$r")" 502
	[ -n "$efirst" ] || efirst=$(rbody_of "$r")
	check_eq "E: $u: the same body" "$(rbody_of "$r")" "$efirst"
done
check_eq "E and D say the same" "$efirst" "$first"
case "$efirst" in *SECRET*|*500*|*html*) fail "E: the peer's answer leaks: $efirst" ;; *) ok ;; esac
check "E log: the peer's status and body" grep -q 'HTTP 500, body "SECRET-leak-marker' "$work/e/daemon.log"
check "E log: a closed port" grep -q "127.0.0.1:$CLOSED/ failed: Couldn't connect" "$work/e/daemon.log"
check "E log: not a bundle" grep -q "not a usable bundle" "$work/e/daemon.log"
check "E log: the redirect's status" grep -q "redirect failed: the peer answered HTTP 302" "$work/e/daemon.log"
check_eq "E: the redirect was not followed" "$(curl -fsS "$PEER/stats" | jq .hits)" 0

# Oversized: by length (5 MiB), and streamed without one (200 MiB), cut at
# the 4 MiB cap as it arrives; a node bomb under the byte cap ([{},{},...],
# 3.6 MiB, 2.4 M values: ~200 MB as a jansson tree) is refused by the
# pre-scan before any tree is built.
h0=$(hwm)
r=$(post_url "$PEER/big")
check_eq "E: 5 MiB by length" "$(status_of "$r")" 502
check_eq "E: 5 MiB: the same body" "$(rbody_of "$r")" "$efirst"
h1=$(hwm)
r=$(post_url "$PEER/stream")
check_eq "E: 200 MiB streamed" "$(status_of "$r")" 502
check_eq "E: streamed: the same body" "$(rbody_of "$r")" "$efirst"
h2=$(hwm)
r=$(post_url "$PEER/nodes")
check_eq "E: node bomb" "$(status_of "$r")" 502
check_eq "E: node bomb: the same body" "$(rbody_of "$r")" "$efirst"
h3=$(hwm)
echo "E VmHWM: $h0 -> $h1 (5 MiB by length) -> $h2 (streamed) -> $h3 (node bomb) kB"
check "E log: too big" grep -q "/big failed: the body is larger than 4194304 bytes" "$work/e/daemon.log"
check "E log: cut off" grep -q "/stream failed: the body is larger than 4194304 bytes" "$work/e/daemon.log"
check "E log: too many values" grep -q "more than 262144 JSON values" "$work/e/daemon.log"
check "no memory for the announced size (VmHWM $h0 -> $h1 kB)" test $((h1 - h0)) -lt 8192
# The body is kept up to the 4 MiB cap, grown by doubling (ASan keeps the
# freed smaller buffers in quarantine): well under 4 x the cap.
check "streamed: bounded by the cap (VmHWM $h1 -> $h2 kB)" test $((h2 - h1)) -lt 16384
check "node bomb: no tree built (VmHWM $h2 -> $h3 kB)" test $((h3 - h2)) -lt 16384

# 10 parallel fetches of a slow peer: at most 2 at once, the rest 503 at
# once (not queued behind the first two).
pids=()
for i in $(seq 10); do
	( POST_HDR=$work/hdr.$i post_url "$PEER/slow" >"$work/par.$i" ) &
	pids+=($!)
done
# Meanwhile (the peer holds each fetch 6 s) the API answers everyone else:
# a fetch waits off the pool of API threads (api-slow.c), not on it.
sleep 1.5
nfast=0 tfast=""
for i in 1 2 3 4; do
	t=$(curl -sS -o /dev/null -m 4 -w '%{http_code} %{time_total}' "$URL/api/v1/jobs") || t="timeout"
	tfast="$tfast $t;"
	case $t in 200\ [0-2].*) nfast=$((nfast + 1)) ;; esac
done
check_eq "parallel: GET /jobs answers within 3 s during the fetches ($tfast)" "$nfast" 4
wait "${pids[@]}"
n503=0 nother=0 nretry=0
for i in $(seq 10); do
	s=$(status_of "$(cat "$work/par.$i")")
	if [ "$s" = 503 ]; then
		n503=$((n503 + 1))
		b503=$(rbody_of "$(cat "$work/par.$i")")
		grep -qi '^Retry-After: 5' "$work/hdr.$i" && nretry=$((nretry + 1))
	else
		nother=$((nother + 1))
	fi
done
stats=$(curl -fsS "$PEER/stats")
echo "parallel: $n503 x 503, $nother others; peer saw $stats"
check "parallel: at most 2 ran ($nother)" test "$nother" -le 2
check_eq "parallel: the rest got 503" "$n503" $((10 - nother))
check "parallel: the peer saw at most 2 at once" test "$(jq .max <<<"$stats")" -le 2
check_eq "parallel: the peer saw as many as ran" "$(jq .slow <<<"$stats")" "$nother"
check_contains "503: says busy" "${b503:-}" "busy"
check_eq "503: every one says Retry-After: 5" "$nretry" "$n503"
# and the slots come back
r=$(post_url "http://127.0.0.1:$PD$BUNDLE")
check "E: slots free again (status $(status_of "$r"))" test "$(status_of "$r")" != 503 -a "$(status_of "$r")" != 502

# --- a nameserver that never answers: the lookup has a deadline ---
# ip netns exec gave this script its own mount namespace, so the bind
# mount below is seen by this script and its children only. glibc waits
# timeout x attempts (here 4 s x 2, per query) for such a nameserver; the fetcher
# gives up after BF_FETCH_RESOLVE_S (5 s), and the caller gets the same
# text as for every other failure.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
print("ready", flush=True)
while True:
    s.recvfrom(4096)
' >"$work/dns.out" 2>&1 &
dpid=$!
defer "kill $dpid 2>/dev/null"
for i in $(seq 50); do grep -q ready "$work/dns.out" && break; sleep 0.1; done
check_contains "a nameserver that never answers, on 127.0.0.1:53" "$(cat "$work/dns.out")" ready
printf 'nameserver 127.0.0.1\noptions timeout:4 attempts:2\n' >"$work/resolv.conf"
mount --bind "$work/resolv.conf" /etc/resolv.conf || fail "mount --bind resolv.conf"
defer "umount /etc/resolv.conf 2>/dev/null"
t0=$(date +%s%N)
( getent hosts peer.slow.test; echo "rc=$?" ) >"$work/getent.out" 2>&1 &
gpid=$!
mkdir -p "$work/f"
start_daemon "$work/f" --peer-allow 127.0.0.0/8 --peer-allow-http || exit 1
r=$(post_url "http://peer.slow.test:$PD$BUNDLE")
check_eq "slow nameserver: 502" "$(status_of "$r")" 502
check_eq "slow nameserver: the generic text" "$(rbody_of "$r")" "$first"
check "slow nameserver: answered within 8 s ($(time_of "$r") s)" awk -v t="$(time_of "$r")" 'BEGIN { exit !(t >= 4 && t < 8) }'
check "F log: the lookup timed out" grep -q "peer.slow.test does not resolve within 5 s" "$work/f/daemon.log"
wait "$gpid"
gms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "getent hosts peer.slow.test: $gms ms ($(tr '\n' ' ' <"$work/getent.out")); the fetcher: $(time_of "$r") s"
check "... where getent itself waits 8 s or more ($gms ms)" test "$gms" -ge 7500
stop_daemon
umount /etc/resolv.conf
check_sanitizers "$work/f/daemon.log"

kill "$PID_D" "$PID_E" 2>/dev/null
wait "$PID_D" "$PID_E" 2>/dev/null
check_sanitizers "$work/d/daemon.log"
check_sanitizers "$work/e/daemon.log"
finish
