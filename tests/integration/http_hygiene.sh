#!/usr/bin/env bash
# The HTTP boundary of benchfleetd (issue 14, findings 3, 5, 6 and 10), on a
# real daemon over real sockets: request framing (CL+TE, two Content-Lengths,
# a Transfer-Encoding other than chunked), the browser guards (Content-Type,
# Origin, Sec-Fetch-Site, Host against DNS rebinding, --allow-host), static
# files without symlinks, the SQLite store's mode, 2,000 trickling
# connections from one address against /healthz from that address and
# another, a 10 MiB unauthenticated body answered before it is read, and
# the daemon's memory under 20 parallel hostile 1 MiB bodies; and headless
# Chromium on a page of another origin (tests/browser/foreign.test.mjs).
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-hy.XXXXXX)
defer "rm -rf '$work'"
hy() { python3 "$BF_SRC/tests/tools/http-hostile.py" "$@"; }
jobs_in() { bf_sql "$1" "select count(*) from jobs"; }
status() { sed -n "s/^$1:[[:space:]]*\([0-9]*\).*/\1/p" "/proc/$(api_pid)/status"; }
# us SECONDS: curl's 0.001234 as whole microseconds
us() { local i=${1%.*} f=${1#*.}000000; echo $((10#$i * 1000000 + 10#${f:0:6})); }

# A copy of web/ with a symlink to a file outside, a symlinked directory, a
# FIFO and a directory with a served extension.
web=$work/web
cp -r "$BF_SRC/web" "$web"
echo "secret outside the web root" >"$work/secret.js"
mkdir -p "$work/outside" && echo "also outside" >"$work/outside/x.js"
ln -s "$work/secret.js" "$web/leak.js"
ln -s "$work/outside" "$web/sub"
ln -s "$web/app.js" "$web/inner.js"	# even a link that stays inside
mkfifo "$web/fifo.js"
mkdir "$web/dir.js"

mkdir -p "$work/d1"
start_daemon "$work/d1" --web "$web" || exit 1
port=${URL##*:}
api POST /api/v1/machines '{"name":"hy1","host":"127.0.0.1","port":9,"key":"/etc/hostname","class":"hy"}' >/dev/null
job='{"recipe":"echo","machines":{"names":["hy1"]},"repetitions":{"iterations":1}}'

# --- framing ---
req="POST /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:$port\r\nContent-Type: application/json\r\n"
n=${#job}
check_contains "Content-Length and Transfer-Encoding: 400" \
	"$(hy raw "$port" "${req}Content-Length: $((n + 5))\r\nTransfer-Encoding: chunked\r\n\r\n$(printf '%x' "$n")\r\n$job\r\n0\r\n\r\n")" " 400 "
check_contains "two equal Content-Lengths: 400" \
	"$(hy raw "$port" "${req}Content-Length: $n\r\nContent-Length: $n\r\n\r\n$job")" " 400 "
check_contains "Transfer-Encoding gzip: 400" \
	"$(hy raw "$port" "${req}Transfer-Encoding: gzip\r\n\r\n$job")" " 400 "
check_contains "Transfer-Encoding gzip, chunked: 400" \
	"$(hy raw "$port" "${req}Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n")" " 400 "
check_contains "HTTP/1.1 without Host: 400" "$(hy raw "$port" 'GET /healthz HTTP/1.1\r\n\r\n')" " 400 "
check_contains "one chunked body is fine" \
	"$(hy raw "$port" "${req}Transfer-Encoding: chunked\r\n\r\n$(printf '%x' "$n")\r\n$job\r\n0\r\n\r\n")" " 201 "
check_eq "only the chunked job was made" "$(jobs_in "$work/d1")" 1

# --- what a page of another origin can send: never acts ---
before=$(jobs_in "$work/d1")
for ct in 'text/plain' 'text/plain;charset=UTF-8' 'application/x-www-form-urlencoded' \
	'multipart/form-data; boundary=x' 'application/jsonp' 'application/json-seq'; do
	r=$(curl -sS -X POST -H "Content-Type: $ct" --data-binary "$job" -w '\n%{http_code}' "$URL/api/v1/jobs")
	check_eq "POST /jobs as $ct" "${r##*$'\n'}" 415
done
check_contains "415 names the field" "$r" '"field":"Content-Type"'
r=$(curl -sS -X POST --data-binary "$job" -w '\n%{http_code}' "$URL/api/v1/jobs")
check_eq "POST /jobs without a Content-Type (curl -d)" "${r##*$'\n'}" 415
check_eq "an empty text/plain POST (cancel) is refused" \
	"$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: text/plain' "$URL/api/v1/jobs/1/cancel")" 415
check_eq "an empty DELETE without a type is refused" \
	"$(curl -sS -o /dev/null -w '%{http_code}' -X DELETE "$URL/api/v1/machines/hy1")" 415
check_eq "a foreign Origin is refused" "$(curl -sS -o /dev/null -w '%{http_code}' -X POST "${JSON[@]}" \
	-H 'Origin: http://evil.example' --data-binary "$job" "$URL/api/v1/jobs")" 403
check_eq "another port of ours is another origin" "$(curl -sS -o /dev/null -w '%{http_code}' -X POST "${JSON[@]}" \
	-H "Origin: http://127.0.0.1:$((port == 65535 ? 1 : port + 1))" --data-binary "$job" "$URL/api/v1/jobs")" 403
check_eq "Origin: null is refused" "$(curl -sS -o /dev/null -w '%{http_code}' -X POST "${JSON[@]}" \
	-H 'Origin: null' --data-binary "$job" "$URL/api/v1/jobs")" 403
check_eq "Sec-Fetch-Site: cross-site is refused" "$(curl -sS -o /dev/null -w '%{http_code}' \
	-H 'Sec-Fetch-Site: cross-site' "$URL/api/v1/jobs")" 403
check_eq "nothing was made by any of them" "$(jobs_in "$work/d1")" "$before"
check_eq "the dashboard's own origin is fine" "$(curl -sS -o /dev/null -w '%{http_code}' -X POST "${JSON[@]}" \
	-H "Origin: http://127.0.0.1:$port" -H 'Sec-Fetch-Site: same-origin' --data-binary "$job" "$URL/api/v1/jobs")" 201
check_eq "JSON with a charset is fine" "$(curl -sS -o /dev/null -w '%{http_code}' -X POST \
	-H 'Content-Type: Application/JSON; charset=utf-8' --data-binary "$job" "$URL/api/v1/jobs")" 201
check_eq "a cross-site link to the dashboard still opens it" "$(curl -sS -o /dev/null -w '%{http_code}' \
	-H 'Sec-Fetch-Site: cross-site' "$URL/")" 200

# --- Host: DNS rebinding brings the attacker's name ---
for h in evil.example "evil.example:$port" "127.0.0.1.evil.example:$port" "localhost:$((port == 65535 ? 1 : port + 1))" '[::2]'; do
	r=$(curl -sS -H "Host: $h" -w '\n%{http_code}' "$URL/api/v1/jobs")
	check_eq "Host: $h is refused" "${r##*$'\n'}" 421
done
check_contains "421 names the field" "$r" '"field":"Host"'
check_eq "the dashboard under a foreign Host is refused too" \
	"$(curl -sS -o /dev/null -w '%{http_code}' -H 'Host: evil.example' "$URL/")" 421
for h in "127.0.0.1:$port" "localhost:$port" localhost "[::1]:$port" "LOCALHOST:$port"; do
	check_eq "Host: $h is ours" "$(curl -sS -o /dev/null -w '%{http_code}' -H "Host: $h" "$URL/api/v1/jobs")" 200
done

# --- ETag/304 on the polling GETs (store_generation) ---
# etag PATH: the ETag header of a GET. cond PATH TAG: "STATUS BYTES" of a GET
# with If-None-Match: TAG.
etag() { curl -sS -D - -o /dev/null "$URL$1" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p'; }
cond() { curl -sS -o /dev/null -H "If-None-Match: $2" -w '%{http_code} %{size_download}' "$URL$1"; }
# 304 for an unchanged store: the monitor may write between two requests
# (a lease), so up to 5 fresh tries; a stale tag must never get one.
fresh304() {
	local i t
	for i in 1 2 3 4 5; do
		t=$(etag "$1"); [ "$(cond "$1" "$t")" = "304 0" ] && return 0
	done
	return 1
}
hdrs=$(curl -sS -D - -o /dev/null "$URL/api/v1/jobs" | tr -d '\r')
check_contains "GET /jobs has an ETag" "$hdrs" 'ETag: "'
check_contains "... kept only if revalidated" "$hdrs" "Cache-Control: private, no-cache"
for p in /api/v1/jobs /api/v1/jobs/1 /api/v1/jobs/1/runs /api/v1/machines; do
	fresh304 "$p"; check_eq "$p: its own ETag gives 304 with no body" $? 0
done
check_eq "a report is not tagged" "$(curl -sS -D - -o /dev/null "$URL/api/v1/jobs/1/report" | grep -ci '^etag:')" 0
check_eq "a 404 is not tagged" "$(curl -sS -D - -o /dev/null "$URL/api/v1/jobs/999" | grep -ci '^etag:')" 0
t0=$(etag /api/v1/jobs)
check_eq "a weak form of it, in a list, gives 304" "$(cond /api/v1/jobs "\"x\", W/$t0")" "304 0"
check_eq "* gives 304" "$(cond /api/v1/jobs '*')" "304 0"
# a write through the API: the tag moves, the old one gets the whole list
api POST /api/v1/machines '{"name":"hy2","host":"127.0.0.1","port":9,"key":"/etc/hostname","class":"hy"}' >/dev/null
t1=$(etag /api/v1/machines)
check_eq "a write (POST /machines) changes the ETag" "$([ -n "$t1" ] && [ "$t1" != "$t0" ] && echo moved)" moved
r=$(cond /api/v1/machines "$t0")
check_eq "the stale ETag gets 200" "${r%% *}" 200
check_eq "... with the body" "$([ "${r##* }" -gt 2 ] && echo body)" body
# a write by another process on the store (as the monitor's scheduler, or
# another coordinator, writes): the tag moves too
t2=$(etag /api/v1/jobs/1)
bf_sql "$work/d1" "UPDATE jobs SET name = 'etag-probe' WHERE id = 1" >/dev/null
r=$(curl -sS -H "If-None-Match: $t2" -w '\n%{http_code}' "$URL/api/v1/jobs/1")
check_eq "a write by another process: the old ETag gets 200" "${r##*$'\n'}" 200
check_contains "... and the new data" "$r" '"name":"etag-probe"'
# the jobs list is served from the cache while the generation holds: a
# write by another process must show at once, and each query is its own
l1=$(curl -sS "$URL/api/v1/jobs?limit=1"); l2=$(curl -sS "$URL/api/v1/jobs?limit=2")
check_eq "the cache keeps queries apart (limit=1)" "$(grep -o '"id":' <<<"$l1" | wc -l)" 1
check_eq "... (limit=2)" "$(grep -o '"id":' <<<"$l2" | wc -l)" 2
check_eq "an answer again from the cache is the same" "$(curl -sS "$URL/api/v1/jobs?limit=1")" "$l1"
bf_sql "$work/d1" "UPDATE jobs SET name = 'cache-probe' WHERE id = (SELECT max(id) FROM jobs)" >/dev/null
check_contains "a write by another process shows in the next list" "$(curl -sS "$URL/api/v1/jobs?limit=1")" '"name":"cache-probe"'
check_contains "... for every query" "$(curl -sS "$URL/api/v1/jobs?limit=2")" '"name":"cache-probe"'
check_eq "a query of the same bytes but other arguments is not the cached one" \
	"$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/jobs?limit=1%26x")" 400
# hostile If-None-Match: no 304, the whole answer
for h in 'garbage' '"unterminated' 'W/' ',,,' "${t2%\"}" "\"${t2}\""; do
	r=$(cond /api/v1/jobs/1 "$h")
	check_eq "If-None-Match: [$h] gets 200" "${r%% *}" 200
done
big=$(head -c 60000 /dev/zero | tr '\0' 'a')
r=$(cond /api/v1/jobs "\"$big\"")
check_eq "a 60 kB If-None-Match gets 200" "${r%% *}" 200
r=$(hy raw "$port" "GET /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:$port\r\nIf-None-Match: \"$(head -c 200000 /dev/zero | tr '\0' 'b')\"\r\n\r\n")
case "$r" in *" 304 "*|*" 200 "*) fail "a 200 kB If-None-Match was answered: $r" ;; *) ok ;; esac
check_eq "the daemon still answers" "$(cond /api/v1/jobs '"x"')" "200 $(curl -sS -o /dev/null -w '%{size_download}' "$URL/api/v1/jobs")"

# --- static files: regular files under the root, no symlink anywhere ---
check_eq "index.html is served" "$(curl -sS -o /dev/null -w '%{http_code}' "$URL/")" 200
check_eq "app.js is served" "$(curl -sS -o /dev/null -w '%{http_code}' "$URL/app.js")" 200
for p in leak.js sub/x.js inner.js fifo.js dir.js; do
	r=$(curl -sS -m 5 -w '\n%{http_code}' "$URL/$p")
	check_eq "/$p is not served" "${r##*$'\n'}" 404
	case "$r" in *outside*) fail "/$p leaked a file outside the web root" ;; esac
done
# a daemon that opened the FIFO would wait for a writer for ever: free it
timeout 2 sh -c ": >'$web/fifo.js'" 2>/dev/null
stop_daemon
check_sanitizers "$work/d1/daemon.log"

# --- --allow-host: the name of a proxy in front ---
mkdir -p "$work/d4"
start_daemon "$work/d4" --allow-host 'bench.example, proxy.example:8443' || exit 1
check_eq "an allowed name" "$(curl -sS -o /dev/null -w '%{http_code}' -H 'Host: bench.example' "$URL/api/v1/jobs")" 200
check_eq "an allowed name on any port" "$(curl -sS -o /dev/null -w '%{http_code}' -H 'Host: bench.example:443' "$URL/api/v1/jobs")" 200
check_eq "an allowed NAME:PORT" "$(curl -sS -o /dev/null -w '%{http_code}' -H 'Host: proxy.example:8443' "$URL/api/v1/jobs")" 200
check_eq "... on another port" "$(curl -sS -o /dev/null -w '%{http_code}' -H 'Host: proxy.example:8080' "$URL/api/v1/jobs")" 421
check_eq "the proxy's https origin is ours" "$(curl -sS -o /dev/null -w '%{http_code}' -X POST "${JSON[@]}" \
	-H 'Host: bench.example' -H 'Origin: https://bench.example' --data-binary '{}' "$URL/api/v1/jobs")" 400
stop_daemon
out=$("$BIN/benchfleetd" --listen 127.0.0.1:0 --store "$work/bad.db" --allow-host 'ok.example,,x' 2>&1)
check "an empty --allow-host entry is refused" test $? -ne 0
check_contains "... naming the option" "$out" "allow-host"
out=$("$BIN/benchfleetd" --listen 127.0.0.1:0 --store "$work/bad.db" --allow-host 'a b' 2>&1)
check_contains "a --allow-host with a blank is refused" "$out" "is not a host name"

# --- the SQLite store: 0600, and a store others can read is refused ---
"$BIN/benchfleetd" --listen 127.0.0.1:0 --port-file "$work/mode.port" --store "$work/mode.db" \
	--recipes "$BF_SRC/recipes" >"$work/mode.log" 2>&1 &
mpid=$!
for i in $(seq 100); do [ -s "$work/mode.port" ] && break; sleep 0.05; done
curl -sS -X POST "${JSON[@]}" --data-binary '{"name":"m","host":"127.0.0.1","port":9,"key":"/etc/hostname"}' \
	"http://127.0.0.1:$(cat "$work/mode.port")/api/v1/machines" >/dev/null
check_eq "the store is created 0600" "$(stat -c %a "$work/mode.db")" 600
check_eq "its WAL is 0600" "$(stat -c %a "$work/mode.db-wal" 2>&1)" 600
check_eq "its shared memory is 0600" "$(stat -c %a "$work/mode.db-shm" 2>&1)" 600
kill "$mpid"; wait "$mpid"
chmod 644 "$work/mode.db"
out=$(timeout 20 "$BIN/benchfleetd" --listen 127.0.0.1:0 --store "$work/mode.db" --recipes "$BF_SRC/recipes" 2>&1)
rc=$?
check "a 0644 store is refused at start (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check_contains "... saying why and what to do" "$out" "chmod 600 $work/mode.db"
chmod 640 "$work/mode.db"
out=$(timeout 20 "$BIN/benchfleetd" --listen 127.0.0.1:0 --store "$work/mode.db" --recipes "$BF_SRC/recipes" 2>&1)
check_contains "a group-readable store is refused too" "$out" "mode 0640"
umask_was=$(umask); umask 000
"$BIN/benchfleetd" token create --role viewer --store "$work/token.db" >/dev/null 2>&1
umask "$umask_was"
check_eq "token create makes a 0600 store even under umask 000" "$(stat -c %a "$work/token.db")" 600

# --- 2,000 trickling connections from 127.0.0.1 ---
mkdir -p "$work/d2"
start_daemon "$work/d2" || exit 1
port=${URL##*:}
# flood LABEL K MAXTHREADS: 2,000 trickling connections (from K addresses of
# 127.0.1.0/24.. when K is not empty), then 10 /healthz from 127.0.0.1 and 10
# from 127.0.0.2, each under 100 ms
flood() {
	local label=$1 spread=${2:-} spid i threads fds rss same=() other=()
	: >"$work/slow.out"
	python3 "$BF_SRC/tests/tools/http-hostile.py" slow "$port" 2000 60 $spread >"$work/slow.out" 2>&1 &
	spid=$!
	defer "kill $spid 2>/dev/null"
	for i in $(seq 200); do grep -q opened "$work/slow.out" && break; sleep 0.1; done
	check_contains "2,000 slow connections opened ($label)" "$(cat "$work/slow.out")" "opened 2000"
	# until the daemon holds them all (accepted: a descriptor each), then a while
	for i in $(seq 300); do [ "$(ls "/proc/$(api_pid)/fd" | wc -l)" -ge 2000 ] && break; sleep 0.1; done
	sleep 1
	for i in $(seq 10); do
		same+=("$(curl -sS -m 5 -o /dev/null -w '%{http_code}:%{time_total}' "$URL/healthz")")
		other+=("$(curl -sS -m 5 --interface 127.0.0.2 -o /dev/null -w '%{http_code}:%{time_total}' "$URL/healthz")")
		sleep 0.3
	done
	threads=$(status Threads)
	fds=$(ls "/proc/$(api_pid)/fd" | wc -l)
	rss=$(status VmRSS)
	echo "healthz from 127.0.0.1 with 2,000 trickling ($label): ${same[*]}"
	echo "healthz from 127.0.0.2 ($label): ${other[*]}"
	echo "daemon ($label): $threads threads, $fds descriptors, VmRSS $rss kB"
	check "every /healthz from 127.0.0.1 answered 200 ($label)" all200 "${same[@]}"
	check "every /healthz from 127.0.0.2 answered 200 ($label)" all200 "${other[@]}"
	check "/healthz from 127.0.0.1 under 100 ms ($label; 9 of 10: $(fast "${same[@]}"))" test "$(fast "${same[@]}")" -ge 9
	check "/healthz from 127.0.0.2 under 100 ms ($label; 9 of 10: $(fast "${other[@]}"))" test "$(fast "${other[@]}")" -ge 9
	# past the grace, 16 waiting per address (BF_MAX_CONN_SLOW_PER_IP) and
	# 256 in all (BF_MAX_CONN_SLOW) hold a thread each
	check "2,000 slow connections cost under $3 threads ($label: $threads)" test "$threads" -lt "$3"
	kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
	cat "$work/slow.out"
}
# under 100 ms: 9 of 10 from each address (a shared 2-core box has blips),
# and every one answered
fast() { local n=0 x; for x in "$@"; do [ "${x%%:*}" = 200 ] && [ "$(us "${x#*:}")" -lt 100000 ] && n=$((n + 1)); done; echo "$n"; }
all200() { local x; for x in "$@"; do [ "${x%%:*}" = 200 ] || return 1; done; }
flood "one address" "" 64
# the deadline: a connection trickling its header is cut after 10 s
exec {tfd}<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n' >&"$tfd"
t0=$(date +%s%N)
( for i in $(seq 40); do printf 'X-T: 1\r\n'; sleep 0.5; done ) >&"$tfd" 2>/dev/null &
tpid=$!
timeout 25 cat <&"$tfd" >/dev/null
held=$(( ($(date +%s%N) - t0) / 1000000 ))
kill "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null; exec {tfd}>&-
echo "a trickled header was cut after $held ms"
check "a trickled header is cut near the 10 s deadline ($held ms)" test "$held" -ge 9000 -a "$held" -lt 15000
# Idle keep-alive clients past the per-address cap of connections waiting
# for headers (a browser's six, node's, curl's): the oldest go, but with a
# FIN, so that a request sent on one fails at once and is retried on a new
# connection. Into the tarpit it hung for the 10 s deadline (the
# dashboard's event stream stuck "connecting" in web_ui).
out=$(hy idle "$port" 24 4)
echo "keep-alive clients over the cap: $out"
check_contains "idle keep-alive clients over the cap: none hangs" "$out" " hung 0"
check "... and the newest are still served" test "$(sed -n 's/.*answered \([0-9]*\).*/\1/p' <<<"$out")" -ge 10
# the same from 200 addresses, 10 each: under every per-address cap
flood "200 addresses" 200 320
# An honest burst on a loaded box: 256 event streams opened at once while
# the API process gets 20% of a CPU (a cgroup's CFS quota), so threads
# read their heads long after the 250 ms grace. Late is not slow: every
# stream must be served, none evicted as if it trickled.
# Not under BF_SANITIZE: there an ASan daemon at 20% served 87 of 256 in
# 90 s on a quiet box, cause not yet known (open in issue 14's note).
cg=/sys/fs/cgroup/cpu/bf-late-$$
if grep -qs '^BF_SANITIZE:BOOL=ON' "$BF_BUILD/CMakeCache.txt"; then
	echo "throttled burst: not run in a sanitizer build (see the comment)"
elif mkdir "$cg" 2>/dev/null; then
	defer "cat '$cg/cgroup.procs' 2>/dev/null | while read p; do echo \$p >/sys/fs/cgroup/cpu/cgroup.procs; done; rmdir '$cg' 2>/dev/null"
	echo 100000 >"$cg/cpu.cfs_period_us"
	echo 20000 >"$cg/cpu.cfs_quota_us"
	echo "$(api_pid)" >"$cg/cgroup.procs"
	out=$(python3 "$BF_SRC/tests/tools/http-hostile.py" burst "$port" 256 90)
	echo "$(api_pid)" >/sys/fs/cgroup/cpu/cgroup.procs
	echo "honest burst at 20% of a CPU: $out"
	check_contains "256 streams opened at once on a throttled daemon are all served" "$out" "streams 256 of 256"
else
	fail "cannot make a cpu cgroup ($cg): the loaded-box burst is not checked"
fi
stop_daemon
check_sanitizers "$work/d2/daemon.log"

# --- 20 parallel hostile 1 MiB bodies: memory per request is bounded ---
# The bound (docs/api.md, "Requests"): the daemon at rest, plus the bodies
# in flight (20 MiB here), plus BF_MAX_JSON_PARSES trees of at most ~17 MB.
# Measured without sanitizers: 12.5 MB at rest, a 64 MB peak for the mixed
# round, 91 MB for 20 bodies just under the node caps; the old daemon
# peaked at 310 MB and 1.06 GB. ASan's redzones double small allocations
# and its quarantine keeps freed ones: under BF_SANITIZE the quarantine is
# cut to 16 MB and the bound doubled.
mkdir -p "$work/bodies" "$work/d3"
hy bodies "$work/bodies"
bound=153600
if grep -qs '^BF_SANITIZE:BOOL=ON' "$BF_BUILD/CMakeCache.txt"; then
	bound=307200
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16" start_daemon "$work/d3" || exit 1
else
	start_daemon "$work/d3" || exit 1
fi
hwm0=$(status VmHWM)
kinds=(objects arrays deep string numbers keys near-cap)
for round in mixed near-cap; do
	pids=()
	for i in $(seq 20); do
		k=${kinds[$((i % ${#kinds[@]}))]}
		[ "$round" = mixed ] || k=$round
		curl -sS -o "$work/bodies/out.$round.$i" -w '%{http_code}\n' -X POST "${JSON[@]}" \
			--data-binary @"$work/bodies/$k.json" "$URL/api/v1/jobs" >"$work/bodies/code.$round.$i" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	hwm=$(status VmHWM)
	codes=$(cat "$work/bodies"/code.$round.* | sort | uniq -c | tr -s ' \n' ' ')
	echo "20 hostile bodies ($round): answers $codes; VmHWM $hwm0 -> $hwm kB, VmRSS $(status VmRSS) kB"
	check "every hostile body ($round) got a 4xx" test -z "$(grep -v '^4' "$work/bodies"/code.$round.*)"
	check "20 hostile bodies ($round) keep the peak RSS under $((bound / 1024)) MB (VmHWM $hwm kB)" \
		test "$hwm" -lt "$bound"
done
check_contains "a [{},...] body is refused for its objects" "$(cat "$work/bodies/out.mixed.7")" "objects and arrays"
check_contains "a body under the caps is parsed, then refused as a job" \
	"$(cat "$work/bodies/out.near-cap.1")" "unknown key"
check_eq "no job came of them" "$(jobs_in "$work/d3")" 0
stop_daemon
check_sanitizers "$work/d3/daemon.log"

# --- a real browser: a page of another origin, DNS rebinding, the dashboard ---
if [ ! -x /usr/bin/chromium ] || ! command -v npm >/dev/null 2>&1; then
	bash "$BF_SRC/deploy/install-deps" --test || { echo "cannot install chromium/npm"; exit 1; }
fi
browser=$BF_SRC/tests/browser
if [ ! -d "$browser/node_modules/playwright-core" ]; then
	(cd "$browser" && npm ci --no-audit --no-fund --loglevel=error) ||
		{ echo "npm ci in tests/browser failed"; exit 1; }
fi
mkdir -p "$work/d6"
start_daemon "$work/d6" || exit 1
api POST /api/v1/machines '{"name":"hy1","host":"127.0.0.1","port":9,"key":"/etc/hostname","class":"hy"}' >/dev/null
BF_URL=$URL BF_MACHINE=hy1 BF_JOB="$job" BF_ART=$work \
	timeout 300 node "$browser/foreign.test.mjs" 2>&1 | tee "$work/foreign.log"
check_browser "browser test: a foreign page cannot drive the API" "${PIPESTATUS[0]}" "$work/foreign.log"
check_eq "no job but the dashboard's own" "$(jobs_in "$work/d6")" 1
stop_daemon
check_sanitizers "$work/d6/daemon.log"

# --- with a token: a 10 MiB unauthenticated body is answered before it is read ---
mkdir -p "$work/d5"
bf_store_init "$work/d5"
"$BIN/benchfleetd" token create --role admin --store "$(bf_store "$work/d5")" >/dev/null || fail "token create"
start_daemon "$work/d5" || exit 1
port=${URL##*:}
for mode in chunked length; do
	r=$(hy early "$port" "$mode")
	echo "unauthenticated 10 MiB POST ($mode): status, seconds, bytes sent: $r"
	set -- $r
	check_eq "a 10 MiB POST without a token ($mode) gets 401" "$1" 401
	check "... at once ($2 s)" test "$(us "$2")" -lt 1000000
	check "... before 1 MiB of it was sent ($3 bytes)" test "$3" -lt 1048576
done
stop_daemon
check_sanitizers "$work/d5/daemon.log"
finish
