#!/usr/bin/env bash
# auth.sh: bearer tokens and roles on a real benchfleetd. Open while the
# store has no token (loopback), closed the moment `benchfleetd token
# create` writes one; 401 with WWW-Authenticate without a valid token, 403
# for too small a role; viewer reads, submitter submits, admin adds
# machines; a revoked token is refused at once; no token text in the log;
# the CLI with and without --token; --auth required on an empty store.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-auth.XXXXXX)
defer "rm -rf '$work'"
start_daemon "$work" || exit 1
defer stop_daemon
db=$(bf_store "$work")	# the --store of `benchfleetd token`: a file or a postgresql:// URL

# call TOKEN METHOD PATH [BODY]: prints "STATUS BODY" (TOKEN "" sends none)
call() {
	local tok=$1 m=$2 p=$3 hdr=() out
	[ -n "$tok" ] && hdr=(-H "Authorization: Bearer $tok")
	[ "$m" = GET ] || hdr+=("${JSON[@]}")
	if [ $# -ge 4 ]; then
		out=$(curl -sS -X "$m" "${hdr[@]}" \
			--data-binary "$4" -w '\n%{http_code}' "$URL$p")
	else
		out=$(curl -sS -X "$m" "${hdr[@]}" -w '\n%{http_code}' "$URL$p")
	fi
	printf '%s %s' "${out##*$'\n'}" "${out%$'\n'*}"
}
code() { status_of "$(call "$@")"; }

# --- no token in the store: loopback stays open, with a warning ---
check_eq "open without tokens" "$(code "" GET /api/v1/jobs)" 200
check_contains "start-up warning" "$(cat "$work/daemon.log")" "no API tokens"

# --- tokens, created while the daemon runs ---
mk() { "$BIN/benchfleetd" token create --store "$db" "$@" 2>>"$work/token.err"; }
admin=$(mk --role admin --name it-admin)
sub=$(mk --role submitter --name it-sub)
sub2=$(mk --role submitter)
view=$(mk --role viewer --name it-view)
check "token text" grep -Eq '^bft_[0-9]+_[A-Za-z0-9_-]{43}$' <<<"$view"
check_contains "create says once" "$(cat "$work/token.err")" "shown only this once"
r=$("$BIN/benchfleetd" token create --store "$db" --role root 2>&1)
check_eq "bad role exits 2" "$?" 2
check_contains "bad role message" "$r" '"root" is not one of viewer, submitter, admin'
r=$("$BIN/benchfleetd" token create --store "$db" 2>&1)
check_eq "missing role exits 2" "$?" 2

# --- no or bad token: 401 with a challenge and a JSON error ---
r=$(call "" GET /api/v1/jobs)
check_eq "no token -> 401" "$(status_of "$r")" 401
check_contains "401 error text" "$(body_of "$r" | jq -r .error)" "bearer token"
hdrs=$(curl -sS -o /dev/null -D - "$URL/api/v1/jobs")
check_contains "WWW-Authenticate" "$hdrs" 'WWW-Authenticate: Bearer'
check_eq "garbage token -> 401" "$(code "nonsense" GET /api/v1/jobs)" 401
check_eq "wrong secret -> 401" "$(code "${view%?}$( [ "${view: -1}" = A ] && echo E || echo A)" GET /api/v1/jobs)" 401
check_eq "Basic scheme -> 401" \
	"$(curl -s -o /dev/null -w '%{http_code}' -u a:b "$URL/api/v1/jobs")" 401
check_eq "healthz needs no token" "$(code "" GET /healthz)" 200
check_eq "metrics needs a token" "$(code "" GET /metrics)" 401
check_eq "metrics for a viewer" "$(code "$view" GET /metrics)" 200
check_eq "dashboard page needs no token" "$(code "" GET /)" 200
check_eq "event stream needs a token" \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$URL/api/v1/events")" 401
check_eq "event stream for a viewer" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 \
	-H "Authorization: Bearer $view" "$URL/api/v1/events")" 200

# --- roles ---
keyf=$work/key
echo "not a real key" >"$keyf"
m='{"name":"m1","host":"127.0.0.1","port":1,"key":"'$keyf'","class":"authit"}'
check_eq "viewer lists jobs" "$(code "$view" GET /api/v1/jobs)" 200
check_eq "viewer lists machines" "$(code "$view" GET /api/v1/machines)" 200
check_eq "viewer reads recipes" "$(code "$view" GET /api/v1/recipes)" 200
check_eq "viewer adds a machine -> 403" "$(code "$view" POST /api/v1/machines "$m")" 403
check_eq "submitter adds a machine -> 403" "$(code "$sub" POST /api/v1/machines "$m")" 403
check_eq "admin adds a machine" "$(code "$admin" POST /api/v1/machines "$m")" 201
m2='{"name":"m2","host":"127.0.0.1","port":1,"key":"'$keyf'","class":"authit2"}'
check_eq "admin adds another" "$(code "$admin" POST /api/v1/machines "$m2")" 201
check_eq "submitter deletes a machine -> 403" "$(code "$sub" DELETE /api/v1/machines/m2)" 403
check_eq "admin deletes a machine" "$(code "$admin" DELETE /api/v1/machines/m2)" 200
job='{"recipe":"cpu-loop","machines":{"class":"authit"},"matrix":{"loops":[1000]},"repetitions":{"iterations":1}}'
r=$(call "$view" POST /api/v1/jobs "$job")
check_eq "viewer POST /jobs -> 403" "$(status_of "$r")" 403
check_contains "403 names the role" "$(body_of "$r" | jq -r .error)" "needs the submitter role"
r=$(call "$sub" POST /api/v1/jobs "$job")
check_eq "submitter POST /jobs" "$(status_of "$r")" 201
jid=$(body_of "$r" | jq -r .id)
check_eq "viewer cancels -> 403" "$(code "$view" POST "/api/v1/jobs/$jid/cancel")" 403
check_eq "viewer reads the job" "$(code "$view" GET "/api/v1/jobs/$jid")" 200
check_eq "admin POST /jobs" "$(code "$admin" POST /api/v1/jobs "$job")" 201
# Ownership: a submitter cancels its own jobs only.
owner=$(bf_sql "$work" "select coalesce(cast(owner_token as text),'') from jobs where id=$jid")
sid=$("$BIN/benchfleetd" token list --store "$db" --json | jq -r '.tokens[] | select(.name=="it-sub") | .id')
check_eq "the job's owner is its submitter" "$owner" "$sid"
check_eq "another submitter cancels -> 403" "$(code "$sub2" POST "/api/v1/jobs/$jid/cancel")" 403
check_eq "the owner cancels" "$(code "$sub" POST "/api/v1/jobs/$jid/cancel")" 200

# --- revocation is immediate ---
vid=$("$BIN/benchfleetd" token list --store "$db" --json | jq -r '.tokens[] | select(.name=="it-view") | .id')
check "revoke" "$BIN/benchfleetd" token revoke "$vid" --store "$db"
check_eq "revoked token -> 401" "$(code "$view" GET /api/v1/jobs)" 401
"$BIN/benchfleetd" token revoke "$vid" --store "$db" 2>/dev/null
check_eq "revoke twice exits 1" "$?" 1
list=$("$BIN/benchfleetd" token list --store "$db")
check_contains "list shows names" "$list" it-admin
check_eq "list shows no token text" "$(grep -c 'bft_' <<<"$list")" 0
check_eq "list --json has no hash" \
	"$("$BIN/benchfleetd" token list --store "$db" --json | jq '[.tokens[] | has("hash") or has("salt")] | any')" false
check_eq "last_used recorded" \
	"$(bf_sql "$work" "select case when last_used is not null then 1 else 0 end from tokens where name='it-admin'")" 1
dump=$(bf_dump "$work")
check_contains "the store dump has the tokens" "$dump" it-admin
check_eq "no token text in the store" "$(grep -c -F -e "${admin#bft_*_}" <<<"$dump")" 0

# --- the CLI ---
out=$("$BIN/benchfleet" --url "$URL" --token "$sub" status 2>&1)
check_eq "CLI with --token" "$?" 0
out=$(BENCHFLEET_TOKEN=$sub "$BIN/benchfleet" --url "$URL" status 2>&1)
check_eq "CLI with \$BENCHFLEET_TOKEN" "$?" 0
out=$(env -u BENCHFLEET_TOKEN "$BIN/benchfleet" --url "$URL" status 2>&1)
check_eq "CLI without a token exits 1" "$?" 1
check_contains "CLI shows the 401" "$out" "bearer token is required"
out=$("$BIN/benchfleet" --url "$URL" --token "$view" status 2>&1)
check_eq "CLI with a revoked token exits 1" "$?" 1

# --- secrets never reach the log ---
for t in "$admin" "$sub" "$sub2" "$view"; do
	check_eq "token not in the daemon log" "$(grep -c -F -e "${t#bft_*_}" "$work/daemon.log")" 0
done
check_sanitizers "$work/daemon.log"
stop_daemon

# --- --auth required closes an empty store too ---
w2=$work/req
mkdir -p "$w2"
start_daemon "$w2" --auth required || exit 1
check_eq "--auth required, no tokens -> 401" "$(code "" GET /api/v1/jobs)" 401
check_eq "--auth required: healthz open" "$(code "" GET /healthz)" 200
t=$("$BIN/benchfleetd" token create --store "$(bf_store "$w2")" --role viewer 2>/dev/null)
check_eq "--auth required: viewer" "$(code "$t" GET /api/v1/jobs)" 200
r=$("$BIN/benchfleetd" --auth sometimes --store "$w2/x.db" 2>&1)
check_eq "--auth bad value exits 2" "$?" 2
check_sanitizers "$w2/daemon.log"
stop_daemon
finish
