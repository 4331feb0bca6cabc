# Shared helpers of the integration tests: a real benchfleetd on a free
# loopback port with its own store, and assertions that say what failed.
# Source it; it sets BF_BUILD/BF_SRC defaults and a cleanup trap stack.

: "${BF_SRC:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BF_BUILD:=$BF_SRC/build}"
BIN=$BF_BUILD/bin
# libssh2's own leaks only (see the file); ours still fail the test.
export LSAN_OPTIONS=suppressions=$BF_SRC/tests/lib/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
T_FAILS=0
T_CHECKS=0
_cleanups=()

on_exit() {
	local i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_cleanups[$i]}" || true
	done
}
trap on_exit EXIT
defer() { _cleanups+=("$*"); }

T_FAILED=()
fail() { T_FAILS=$((T_FAILS + 1)); T_FAILED+=("${*:0:300}"); echo "FAIL: $*" >&2; }
ok() { T_CHECKS=$((T_CHECKS + 1)); }
check() { # check DESCRIPTION COMMAND...
	local what=$1; shift
	T_CHECKS=$((T_CHECKS + 1))
	if ! "$@"; then fail "$what"; fi
}
check_eq() { # check_eq DESCRIPTION GOT WANT
	T_CHECKS=$((T_CHECKS + 1))
	[ "$2" == "$3" ] || fail "$1: got '$2', want '$3'"
}
check_browser() { # check_browser DESCRIPTION EXIT LOG: a browser script exited 0; if not, its FAIL lines
	T_CHECKS=$((T_CHECKS + 1))
	[ "$2" = 0 ] || fail "$1: exit $2; $(grep '^FAIL' "$3" | head -n 6 | cut -c1-240 | paste -sd';')"
}
check_contains() { # check_contains DESCRIPTION HAYSTACK NEEDLE
	T_CHECKS=$((T_CHECKS + 1))
	case "$2" in *"$3"*) ;; *) fail "$1: '$3' not in: ${2:0:400}" ;; esac
}
# finish: the count, then each failed check again: a long test's output is
# cut in the middle when shown (CI keeps its head and tail), and the tail
# then still says what failed.
finish() {
	local f
	echo "$T_CHECKS checks, $T_FAILS failed"
	for f in "${T_FAILED[@]}"; do echo "  failed: $f"; done
	[ "$T_FAILS" = 0 ]
}

# browser_ready: Chromium, node and playwright-core in tests/browser (for
# the tests/browser/*.test.mjs scripts), installed when missing.
browser_ready() {
	if [ ! -x /usr/bin/chromium ] || ! command -v npm >/dev/null 2>&1; then
		bash "$BF_SRC/deploy/install-deps" --test || { echo "cannot install chromium/npm"; return 1; }
	fi
	if [ ! -d "$BF_SRC/tests/browser/node_modules/playwright-core" ]; then
		(cd "$BF_SRC/tests/browser" && npm ci --no-audit --no-fund --loglevel=error) ||
			{ echo "npm ci in tests/browser failed"; return 1; }
	fi
}

# The store of each daemon directory. BF_TEST_STORE=sqlite (the default):
# DIR/bf.db. BF_TEST_STORE=pg: a database of a private PostgreSQL cluster
# (tests/lib/pg.sh) started by the first daemon of the test script and
# shared by all its daemons; one database per DIR, so a daemon restarted on
# the same DIR finds its store again. DIR/store.url records it.
BF_TEST_STORE=${BF_TEST_STORE:-sqlite}
_bf_pg_dbs=0
# bf_store_init DIR: make DIR's store if it has none (in this shell, not in
# a $(...) subshell: the cluster is started once per script).
bf_store_init() {
	local dir=$1 url
	[ -s "$dir/store.url" ] && return 0
	case "$BF_TEST_STORE" in
	sqlite) return 0 ;;
	pg)
		if [ -z "${PG_PORT:-}" ]; then
			declare -F pg_up >/dev/null || . "$BF_SRC/tests/lib/pg.sh"
			pg_up "$(mktemp -d /tmp/bf-pg.XXXXXX)" || { echo "FAIL: PostgreSQL did not start" >&2; return 1; }
		fi
		_bf_pg_dbs=$((_bf_pg_dbs + 1))
		url=$(pg_createdb "bf$_bf_pg_dbs") || return 1
		echo "$url" >"$dir/store.url"
		;;
	*) echo "FAIL: BF_TEST_STORE=$BF_TEST_STORE: want sqlite or pg" >&2; return 1 ;;
	esac
}
# bf_store DIR: the --store value of DIR.
bf_store() {
	if [ -s "$1/store.url" ]; then cat "$1/store.url"; else echo "$1/bf.db"; fi
}
# bf_store_kind DIR: sqlite or pg.
bf_store_kind() {
	case "$(bf_store "$1")" in postgresql://*|postgres://*) echo pg ;; *) echo sqlite ;; esac
}
# bf_sql DIR SQL: rows of a query on DIR's store in sqlite3's list format
# (columns joined by '|', one row per line, no header). Write SQL both take.
# sqlite3 waits for a busy store like the daemon does (bf_sqlite): without
# a timeout a test's write met the daemon mid-transaction and failed at once
# with "database is locked (5)" (skeleton's duplicate-sample check).
bf_sqlite() { sqlite3 -cmd '.timeout 10000' "$@"; }
bf_sql() {
	local s
	s=$(bf_store "$1")
	case "$s" in
	postgresql://*|postgres://*)
		psql -X -q -At -F'|' -v ON_ERROR_STOP=1 "$s" -c "$2" ;;
	*) bf_sqlite "$s" "$2" ;;
	esac
}
# bf_dump DIR: every row of DIR's store as SQL text.
bf_dump() {
	local s
	s=$(bf_store "$1")
	case "$s" in
	postgresql://*|postgres://*) "${PG_BIN:-/usr/lib/postgresql/15/bin}/pg_dump" --no-owner "$s" ;;
	*) bf_sqlite "$s" .dump ;;
	esac
}
# bf_json DIR COLUMN PATH: an SQL expression for the text at PATH (a.b.c)
# of the JSON text in COLUMN.
bf_json() {
	case "$(bf_store_kind "$1")" in
	pg) printf "(CAST(%s AS jsonb) #>> '{%s}')" "$2" "${3//./,}" ;;
	*) printf "json_extract(%s, '\$.%s')" "$2" "$3" ;;
	esac
}
# bf_integrity DIR: prints ok when the store's pages and indexes check out
# (SQLite: PRAGMA integrity_check; PostgreSQL: amcheck over every table and
# B-tree index, index entries checked against the heap), else what failed.
bf_integrity() {
	local s out
	s=$(bf_store "$1")
	case "$s" in
	postgresql://*|postgres://*)
		if out=$("${PG_BIN:-/usr/lib/postgresql/15/bin}/pg_amcheck" --install-missing \
			--heapallindexed --parent-check "$s" 2>&1); then
			echo ok
		else
			echo "pg_amcheck failed: $out"
		fi
		;;
	*) bf_sqlite "$s" 'PRAGMA integrity_check' ;;
	esac
}
# joined SEP: stdin's lines joined by SEP.
joined() { awk -v s="$1" 'NR > 1 { printf "%s", s } { printf "%s", $0 }'; }

# start_daemon DIR [extra options...]: benchfleetd on 127.0.0.1:<free port>
# with DIR's store (bf_store), lab key DIR/lab.key (so that two daemons
# on PostgreSQL are two labs) and artifact directory DIR/artifacts; sets URL and DAEMON_PID, logs to DIR/daemon.log.
# free_port: a TCP port of 127.0.0.1 for a listener we do not start with
# port 0 (QEMU's hostfwd): below the kernel's ephemeral range, so no
# outgoing connection (a flood test's 2,000 clients) can hold it, and with
# no socket of any state on it.
free_port() {
	local lo p
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range
	[ "$lo" -gt 21000 ] || lo=32768
	for p in $(shuf -i 20000-$((lo - 1)) -n 100); do
		ss -Hatn "sport = :$p" | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}
start_daemon() {
	local dir=$1; shift
	rm -f "$dir/port"
	bf_store_init "$dir" || return 1
	"$BIN/benchfleetd" --listen 127.0.0.1:0 --port-file "$dir/port" \
		--store "$(bf_store "$dir")" --lab-key "$dir/lab.key" --artifact-dir "$dir/artifacts" --recipes "${BF_RECIPES:-$BF_SRC/recipes}" --web "$BF_SRC/web" \
		--agent "$BIN/benchfleet-agent" "$@" >>"$dir/daemon.log" 2>&1 &
	DAEMON_PID=$!
	local i
	for i in $(seq 200); do
		[ -s "$dir/port" ] && break
		kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$dir/daemon.log" >&2; return 1; }
		sleep 0.05
	done
	URL=http://127.0.0.1:$(cat "$dir/port")
	curl -fsS "$URL/healthz" >/dev/null
}
stop_daemon() {
	[ -n "${DAEMON_PID:-}" ] || return 0
	kill "$DAEMON_PID" 2>/dev/null || true
	wait "$DAEMON_PID" 2>/dev/null || true
	DAEMON_PID=
}
# Sanitizer reports in a daemon log fail the test.
check_sanitizers() {
	T_CHECKS=$((T_CHECKS + 1))
	if grep -E "ERROR: AddressSanitizer|runtime error:|LeakSanitizer" "$1" >/dev/null; then
		fail "sanitizer output in $1:"; grep -E -A5 "AddressSanitizer|runtime error|LeakSanitizer" "$1" | head -40 >&2
	fi
}

# The API takes POST, PUT and DELETE only as application/json, empty bodies
# included (a text/plain or form POST is what a foreign web page can send).
# Put "${JSON[@]}" on every curl line that is not a GET.
JSON=(-H 'Content-Type: application/json')
# api METHOD PATH [BODY]: prints "STATUS BODY"
api() {
	local m=$1 p=$2 body=${3-} out ct=()
	[ "$m" = GET ] || ct=("${JSON[@]}")
	if [ $# -ge 3 ]; then
		out=$(curl -sS -X "$m" "${ct[@]}" --data-binary "$body" \
			-w '\n%{http_code}' "$URL$p")
	else
		out=$(curl -sS -X "$m" "${ct[@]}" -w '\n%{http_code}' "$URL$p")
	fi
	printf '%s %s' "${out##*$'\n'}" "${out%$'\n'*}"
}
status_of() { printf '%s' "${1%% *}"; }
body_of() { printf '%s' "${1#* }"; }

# wait_job ID SECONDS: until the job ends; prints its state.
wait_job() {
	local id=$1 limit=$2 st i
	# a failed POST leaves no id: say so at once, not after the limit
	[[ "$id" =~ ^[0-9]+$ ]] || { echo "no-job(${id:0:40})"; return 0; }
	for i in $(seq $((limit * 5))); do
		st=$(curl -fsS "$URL/api/v1/jobs/$id" | jq -r .state)
		case "$st" in done|failed|cancelled) echo "$st"; return 0 ;; esac
		sleep 0.2
	done
	echo "timeout($st)"
}

# The process that serves HTTP for the daemon started last: its API child
# (benchfleetd-api) under privilege separation, else the daemon itself.
# Memory, thread and descriptor figures of the HTTP side are read here.
api_pid() {
	local p i
	if tr '\0' ' ' <"/proc/$DAEMON_PID/cmdline" 2>/dev/null | grep -q -e '--privsep no'; then
		echo "$DAEMON_PID"
		return 0
	fi
	for i in $(seq 50); do
		p=$(pgrep -P "$DAEMON_PID" -x benchfleetd-api | head -1)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.1
	done
	echo "$DAEMON_PID"
}
