#!/usr/bin/env bash
# Attack (issue 14, HTTP hygiene): request smuggling variants that the
# framing guard of http_hygiene.sh does not try. libmicrohttpd keeps a
# blank before the colon in the header name, so "Transfer-Encoding :
# chunked" is no Transfer-Encoding to it and the body is read by
# Content-Length, while a proxy in front that trims the name reads a
# chunked body: the two disagree on where the request ends (RFC 9112
# 5.1: such a request gets 400). Two Host headers: we routed by the
# first, a proxy may route by the last. Each must be 400 with nothing
# written; honest requests (a blank inside a value, an obs-fold
# continuation, which libmicrohttpd joins into the value) still pass,
# and the Host/Origin/Content-Type spellings a page could try stay
# refused. Netns prefix bfr1 (no fleet: one machine that never answers).
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-atk-http.XXXXXX)
defer "rm -rf '$work'"
defer 'kill -9 $DAEMON_PID 2>/dev/null'
hy() { python3 "$BF_SRC/tests/tools/http-hostile.py" "$@"; }
jobs_in() { bf_sql "$work" "select count(*) from jobs"; }
# body PORT TEXT: the whole answer (status line to body) of one raw request
body() {
	python3 - "$1" "$2" <<-'EOF'
	import socket, sys
	s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
	s.settimeout(1)
	s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
	out = b""
	try:
	    while True:
	        d = s.recv(65536)
	        if not d:
	            break
	        out += d
	except OSError:
	    pass
	print(out.decode("latin-1"))
	EOF
}
start_daemon "$work" || exit 1
port=${URL##*:}
echo "not a key; the monitor only checks it can read it" >"$work/decoy.key"
r=$(api POST /api/v1/machines "{\"name\":\"bfr1a\",\"host\":\"127.0.0.1\",\"port\":9,\"key\":\"$work/decoy.key\",\"class\":\"atk\"}")
check_eq "register a machine" "$(status_of "$r")" 201
job='{"recipe":"echo","machines":{"names":["bfr1a"]},"repetitions":{"iterations":1}}'
n=${#job}
chunked="$(printf '%x' "$n")\r\n$job\r\n0\r\n\r\n"
req="POST /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:$port\r\nContent-Type: application/json\r\n"
before=$(jobs_in)

# blank before the colon: each must be 400 naming the header, no job
while IFS='|' read -r what hdrs bodytext want_field; do
	out=$(body "$port" "${req}${hdrs}\r\n$bodytext")
	check_contains "$what: 400" "${out%%$'\r'*}" " 400 "
	check_contains "$what: the field names the header" "$out" "\"field\":\"$want_field"
done <<EOF
TE with a blank before the colon, and CL (CL.TE)|Transfer-Encoding : chunked\r\nContent-Length: $n\r\n|$job|Transfer-Encoding
TE with a tab before the colon, and CL|Transfer-Encoding\t: chunked\r\nContent-Length: $n\r\n|$job|Transfer-Encoding
TE with a blank before the colon alone|Transfer-Encoding : chunked\r\n|$chunked|Transfer-Encoding
CL with a blank before the colon, and TE (TE.CL)|Content-Length : $((n + 5))\r\nTransfer-Encoding: chunked\r\n|$chunked|Content-Length
EOF
check_eq "no job was written by a smuggling request" "$(jobs_in)" "$before"

# two Host headers, in both orders
for hh in "Host: 127.0.0.1:$port\r\nHost: evil.example" "Host: evil.example\r\nHost: 127.0.0.1:$port"; do
	out=$(body "$port" "GET /api/v1/jobs HTTP/1.1\r\n$hh\r\n\r\n")
	check_contains "two Host headers ($hh): 400" "${out%%$'\r'*}" " 400 "
	check_contains "... naming Host" "$out" '"field":"Host"'
done
out=$(body "$port" "GET /index.html HTTP/1.1\r\nHost: 127.0.0.1:$port\r\nHost: evil.example\r\n\r\n")
check_contains "two Host headers on a static file: 400" "${out%%$'\r'*}" " 400 "

# what a page of another origin (or DNS rebinding) can spell: still refused
pg="GET /api/v1/jobs HTTP/1.1\r\n"
check_contains "Host with a trailing dot" "$(hy raw "$port" "${pg}Host: localhost.:$port\r\n\r\n")" " 421 "
check_contains "Host of a rebinding name on our port" "$(hy raw "$port" "${pg}Host: evil.example:$port\r\n\r\n")" " 421 "
check_contains "Host on another port" "$(hy raw "$port" "${pg}Host: 127.0.0.1:$((port == 65535 ? 1 : port + 1))\r\n\r\n")" " 421 "
check_contains "Host 127.1 (inet_aton spelling)" "$(hy raw "$port" "${pg}Host: 127.1:$port\r\n\r\n")" " 421 "
check_contains "Host of an IPv4-mapped literal" "$(hy raw "$port" "${pg}Host: [::ffff:127.0.0.1]:$port\r\n\r\n")" " 421 "
check_contains "Origin null" "$(hy raw "$port" "${pg}Host: 127.0.0.1:$port\r\nOrigin: null\r\n\r\n")" " 403 "
check_contains "Origin with our host on another scheme" "$(hy raw "$port" "${pg}Host: 127.0.0.1:$port\r\nOrigin: ftp://127.0.0.1:$port\r\n\r\n")" " 403 "
check_contains "Origin of another port of localhost" "$(hy raw "$port" "${pg}Host: 127.0.0.1:$port\r\nOrigin: http://127.0.0.1:1\r\n\r\n")" " 403 "
check_contains "Origin with a path" "$(hy raw "$port" "${pg}Host: 127.0.0.1:$port\r\nOrigin: http://127.0.0.1:$port/x\r\n\r\n")" " 403 "
check_contains "no Origin, Sec-Fetch-Site: cross-site" "$(hy raw "$port" "${pg}Host: 127.0.0.1:$port\r\nSec-Fetch-Site: CROSS-SITE\r\n\r\n")" " 403 "
for ct in "text/plain" "application/jsonp" "application/json-patch+json" "application/x-www-form-urlencoded; x=application/json" "multipart/form-data; boundary=application/json"; do
	check_contains "Content-Type $ct: 415" \
		"$(hy raw "$port" "${req%Content-Type*}Content-Type: $ct\r\nContent-Length: $n\r\n\r\n$job")" " 415 "
done
check_eq "no job was written by a page's request" "$(jobs_in)" "$before"

# honest requests still pass
check_contains "a blank inside a value" "$(hy raw "$port" "${pg}Host: 127.0.0.1:$port\r\nUser-Agent: a b c\r\n\r\n")" " 200 "
check_contains "an obs-fold continuation (joined into the value)" \
	"$(hy raw "$port" "${pg}Host: 127.0.0.1:$port\r\nX-A: b\r\n  c\r\n\r\n")" " 200 "
check_contains "Content-Type in capitals with a charset" \
	"$(hy raw "$port" "${req%Content-Type*}Content-Type: APPLICATION/JSON ; charset=utf-8\r\nContent-Length: $n\r\n\r\n$job")" " 201 "
check_contains "a chunked job" "$(hy raw "$port" "${req}Transfer-Encoding: chunked\r\n\r\n$chunked")" " 201 "
check_eq "two honest jobs written" "$(jobs_in)" "$((before + 2))"
check_sanitizers "$work/daemon.log"
finish
