# Shared helpers of the integration tests: a real benchfleetd on a free
# loopback port with its own store, and assertions that say what failed.
# Source it; it sets BF_BUILD/BF_SRC defaults and a cleanup trap stack.

: "${BF_SRC:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BF_BUILD:=$BF_SRC/build}"
BIN=$BF_BUILD/bin
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

fail() { T_FAILS=$((T_FAILS + 1)); echo "FAIL: $*" >&2; }
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
check_contains() { # check_contains DESCRIPTION HAYSTACK NEEDLE
	T_CHECKS=$((T_CHECKS + 1))
	case "$2" in *"$3"*) ;; *) fail "$1: '$3' not in: ${2:0:400}" ;; esac
}
finish() {
	echo "$T_CHECKS checks, $T_FAILS failed"
	[ "$T_FAILS" = 0 ]
}

# start_daemon DIR [extra options...]: benchfleetd on 127.0.0.1:<free port>
# with store DIR/bf.db; sets URL and DAEMON_PID, logs to DIR/daemon.log.
start_daemon() {
	local dir=$1; shift
	rm -f "$dir/port"
	"$BIN/benchfleetd" --listen 127.0.0.1:0 --port-file "$dir/port" \
		--store "$dir/bf.db" --recipes "${BF_RECIPES:-$BF_SRC/recipes}" --web "$BF_SRC/web" \
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

# api METHOD PATH [BODY]: prints "STATUS BODY"
api() {
	local m=$1 p=$2 body=${3-} out
	if [ $# -ge 3 ]; then
		out=$(curl -sS -X "$m" -H 'Content-Type: application/json' --data-binary "$body" \
			-w '\n%{http_code}' "$URL$p")
	else
		out=$(curl -sS -X "$m" -w '\n%{http_code}' "$URL$p")
	fi
	printf '%s %s' "${out##*$'\n'}" "${out%$'\n'*}"
}
status_of() { printf '%s' "${1%% *}"; }
body_of() { printf '%s' "${1#* }"; }

# wait_job ID SECONDS: until the job ends; prints its state.
wait_job() {
	local id=$1 limit=$2 st i
	for i in $(seq $((limit * 5))); do
		st=$(curl -fsS "$URL/api/v1/jobs/$id" | jq -r .state)
		case "$st" in done|failed|cancelled) echo "$st"; return 0 ;; esac
		sleep 0.2
	done
	echo "timeout($st)"
}
