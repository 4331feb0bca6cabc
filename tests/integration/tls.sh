#!/usr/bin/env bash
# tls.sh: benchfleetd serving HTTPS itself (libmicrohttpd with GnuTLS). A
# self-signed certificate for 127.0.0.1 made with openssl; curl --cacert
# gets through, plain http and an unverified client do not; TLS below 1.2
# is refused; the benchfleet CLI gets through with libcurl, which it
# loads for https://; --tls-cert without --tls-key is a usage error; a bad key
# stops the start. In a private network namespace (10.84.0.1 on its lo), a
# non-loopback --listen is refused without TLS and allowed with it, and
# there the API requires a token even with an empty store.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

command -v openssl >/dev/null || { echo "SKIP: no openssl"; exit 0; }
work=$(mktemp -d /tmp/bf-tls.XXXXXX)
defer "rm -rf '$work'"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=benchfleet test" -addext "subjectAltName=IP:127.0.0.1,IP:10.84.0.1" \
	-keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null ||
	{ echo "FAIL: openssl could not make a certificate"; exit 1; }
chmod 600 "$work/key.pem"

# start_tls DIR [NETNS-PREFIX...] -- OPTIONS: like start_daemon, over https.
start_tls() {
	local dir=$1; shift
	local pre=()
	while [ "$1" != "--" ]; do pre+=("$1"); shift; done
	shift
	rm -f "$dir/port"
	bf_store_init "$dir" || return 1
	"${pre[@]}" "$BIN/benchfleetd" --port-file "$dir/port" --store "$(bf_store "$dir")" \
		--recipes "$BF_SRC/recipes" --web "$BF_SRC/web" --agent "$BIN/benchfleet-agent" \
		--tls-cert "$work/cert.pem" --tls-key "$work/key.pem" "$@" >>"$dir/daemon.log" 2>&1 &
	DAEMON_PID=$!
	local i
	for i in $(seq 200); do
		[ -s "$dir/port" ] && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$dir/daemon.log" >&2; return 1; }
		sleep 0.05
	done
	return 1
}

d1=$work/d1
mkdir -p "$d1"
start_tls "$d1" -- --listen 127.0.0.1:0 || { echo "FAIL: TLS daemon did not start"; exit 1; }
defer stop_daemon
port=$(cat "$d1/port")
U=https://127.0.0.1:$port

check_eq "https with --cacert" \
	"$(curl -sS --cacert "$work/cert.pem" -o /dev/null -w '%{http_code}' "$U/healthz")" 200
check_eq "API over https" \
	"$(curl -sS --cacert "$work/cert.pem" "$U/api/v1/recipes" | jq -r '.recipes | length > 0')" true
curl -sS -o /dev/null --max-time 5 "http://127.0.0.1:$port/healthz" 2>/dev/null
rc=$?
check "plain http fails (curl exit $rc)" test "$rc" -ne 0
curl -sS -o /dev/null --max-time 5 "$U/healthz" 2>/dev/null
rc=$?
check_eq "unverified certificate refused by curl" "$rc" 60
curl -sS -o /dev/null --max-time 5 -k --tls-max 1.1 "$U/healthz" 2>/dev/null
rc=$?
check "TLS 1.1 refused (curl exit $rc)" test "$rc" -ne 0
check_contains "start-up line says https" "$(cat "$d1/daemon.log")" "listening on https://"
# Tokens work the same over TLS.
tok=$("$BIN/benchfleetd" token create --store "$(bf_store "$d1")" --role viewer 2>/dev/null)
check_eq "no token over https -> 401" \
	"$(curl -sS --cacert "$work/cert.pem" -o /dev/null -w '%{http_code}' "$U/api/v1/jobs")" 401
check_eq "token over https" \
	"$(curl -sS --cacert "$work/cert.pem" -H "Authorization: Bearer $tok" -o /dev/null \
		-w '%{http_code}' "$U/api/v1/jobs")" 200
# The CLI over https: libcurl, which it loads on first use. It trusts only
# libcurl's built-in CA bundle, so our certificate is refused...
cli=$BIN/benchfleet
out=$("$cli" --url "$U" --token "$tok" --json status 2>&1)
check_eq "CLI: self-signed certificate -> exit 3" "$?" 3
check_contains "CLI: libcurl's verdict" "$out" "certificate"
check_contains "CLI: names the URL" "$out" "$U/api/v1/jobs"
# ... until it is that bundle: bound over it in a private mount namespace,
# for the CLI alone.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
	ca=$(curl-config --ca 2>/dev/null)
	[ -n "$ca" ] || ca=/etc/ssl/certs/ca-certificates.crt
	incert() { unshare -m sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh \
		"$work/cert.pem" "$ca" "$cli" "$@"; }
	out=$(incert --url "$U" --token "$tok" --json status 2>&1)
	check_eq "CLI over https exits 0" "$?" 0
	check_contains "CLI over https: the jobs" "$out" '"jobs"'
	out=$(incert --url "$U/api/v1/" --json status 2>&1)
	check_eq "CLI over https without a token exits 1" "$?" 1
	check_contains "CLI over https without a token: refused" "$out" "bearer token is required"
	check "CLI: no sanitizer report" sh -c '! printf "%s" "$1" | grep -q "AddressSanitizer\|runtime error:"' \
		sh "$out"
else
	echo "SKIP: the CLI's successful https request needs root and unshare -m"
fi
check_sanitizers "$d1/daemon.log"
stop_daemon

# --- options that do not go ---
out=$("$BIN/benchfleetd" --listen 127.0.0.1:0 --store "$work/x.db" --tls-cert "$work/cert.pem" 2>&1)
check_eq "--tls-cert alone exits 2" "$?" 2
check_contains "--tls-cert alone message" "$out" "go together"
echo "not a key" >"$work/bad.pem"
out=$(timeout 20 "$BIN/benchfleetd" --listen 127.0.0.1:0 --store "$work/x.db" \
	--tls-cert "$work/cert.pem" --tls-key "$work/bad.pem" 2>&1)
check "bad key: no start" test "$?" -ne 0
check_contains "bad key message" "$out" "TLS"
out=$(timeout 20 "$BIN/benchfleetd" --listen 127.0.0.1:0 --store "$work/x.db" \
	--tls-cert "$work/none.pem" --tls-key "$work/key.pem" 2>&1)
check_contains "missing cert names the file" "$out" "none.pem"
out=$("$BIN/benchfleetd" --listen 10.84.0.1:0 --store "$work/x.db" 2>&1)
check_eq "non-loopback without TLS exits 2" "$?" 2
check_contains "non-loopback refusal" "$out" "without TLS"

# --- a non-loopback address with TLS, in a private namespace ---
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null; then
	ns=bfa-tls$$
	ip netns add "$ns" && defer "ip netns del '$ns'"
	ip -n "$ns" link set lo up
	ip -n "$ns" addr add 10.84.0.1/32 dev lo
	d2=$work/d2
	mkdir -p "$d2"
	bf_store_init "$d2" || exit 1
	if [ "$(bf_store_kind "$d2")" = pg ]; then
		# The namespace has a loopback of its own: reach PostgreSQL through
		# its Unix socket instead of 127.0.0.1.
		u=$(bf_store "$d2")
		pg_socket_url "${u##*/}" >"$d2/store.url"
	fi
	if start_tls "$d2" ip netns exec "$ns" -- --listen 10.84.0.1:0; then
		p2=$(cat "$d2/port")
		nc() { ip netns exec "$ns" curl -sS --cacert "$work/cert.pem" -o /dev/null -w '%{http_code}' "$@"; }
		check_eq "non-loopback TLS: healthz" "$(nc "https://10.84.0.1:$p2/healthz")" 200
		check_eq "non-loopback: token required with an empty store" \
			"$(nc "https://10.84.0.1:$p2/api/v1/jobs")" 401
		check_contains "no open-API warning off loopback" \
			"$(grep -c 'no API tokens' "$d2/daemon.log")" 0
		check_sanitizers "$d2/daemon.log"
		stop_daemon
	else
		fail "TLS daemon on 10.84.0.1 did not start"
	fi
else
	echo "SKIP: non-loopback part needs root and ip(8)"
fi
finish
