#!/usr/bin/env bash
# Recipes are code, bundles are signed (issue 14, finding 1). One
# coordinator with a 2-host netns fleet (bfp2*, 10.102.0, bfbr102) runs a
# page-touch job and exports its bundle. Then, as an attacker with a
# submitter's reach would:
#  - the bundle's recipe command becomes `/bin/sh -c "touch MARKER"` with
#    every checksum recomputed (bf-bundle rehash): refused 409 naming the
#    recipe and the field, with or without an admin override, posted or
#    wrapped; no job, no run, no marker on the coordinator or on any host;
#  - the same signed by a lab nobody trusts: still refused;
#  - the genuine bundle signed by an untrusted lab: no rerun (409), but a
#    compare-only reproduction against the local job works and its verdict
#    says "untrusted key SHA256:...";
#  - once that lab is trusted (benchfleet labs trust): it reruns and the
#    verdict names the lab;
#  - a recipe the bundle carries that differs from the local one reruns
#    only after an admin imports it (benchfleet recipes import);
#  - a job row written straight into the store with the shell recipe: the
#    runner refuses it at claim time and nothing runs;
#  - an unsigned bundle reruns on an admin's override, not a submitter's,
#    and the override is in the audit log with the trust changes;
#  - a lab key readable by others stops the daemon at start.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-trust.XXXXXX)
defer "rm -rf '$work'"
MARK=/tmp/bf-forged-$$-$RANDOM
defer "rm -f '$MARK'"
rm -f "$MARK"
fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 2 \
	--prefix bfp2 --subnet 10.102.0 --bridge bfbr102 --force ||
	{ echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
start_daemon "$work" --known-hosts "$fleet/known_hosts" || exit 1
defer "stop_daemon"
cli() { "$BIN/benchfleet" --url "$URL" "$@"; }
njobs() { curl -fsS "$URL/api/v1/jobs" | jq '.jobs | length'; }
nruns() { bf_sql "$work" "SELECT COUNT(*) FROM runs"; }
# The marker on the coordinator's host and as each lab machine sees it.
no_marker() {
	local what=$1 name addr port user key
	check "$what: no marker on the coordinator host" test ! -e "$MARK"
	while IFS=$'\t' read -r name addr port user key; do
		ssh -n -o BatchMode=yes -o UserKnownHostsFile="$fleet/known_hosts" \
			-o StrictHostKeyChecking=yes -i "$key" -p "$port" "$user@$addr" \
			"test ! -e '$MARK'"
		check_eq "$what: no marker on $name" "$?" 0
	done <"$fleet/hosts.tsv"
}

while IFS=$'\t' read -r name addr port user key; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"lab\"}")
	check_eq "register $name" "$(status_of "$r")" 201
done <"$fleet/hosts.tsv"
for n in bfp21 bfp22; do
	for i in $(seq 100); do
		[ "$(curl -fsS "$URL/api/v1/machines/$n" | jq -r '.fingerprint.type // empty')" = fingerprint ] && break
		[ "$i" = 5 ] && curl -sS -X POST -H "Content-Type: application/json" "$URL/api/v1/machines/$n/probe" >/dev/null
		sleep 0.3
	done
done

# --- the lab's identity ---
lab=$(curl -fsS "$URL/api/v1/lab")
check_eq "lab key file made 0600" "$(stat -c %a "$work/lab.key")" 600
FP=$(jq -r .fingerprint <<<"$lab")
check_contains "lab fingerprint is OpenSSH's form" "$FP" "SHA256:"
check_eq "lab fingerprint length" "${#FP}" 50

r=$(api POST /api/v1/jobs '{"recipe":"page-touch","preset":"test","name":"orig",
	"machines":{"class":"lab"},"matrix":{"passes":[1,2]},"repetitions":{"iterations":3}}')
check_eq "submit" "$(status_of "$r")" 201
JA=$(body_of "$r" | jq -r .id)
check_eq "job" "$(wait_job "$JA" 180)" done
curl -fsS -o "$work/bundle.json" "$URL/api/v1/jobs/$JA/bundle"
check_eq "export is signed" "$(jq -r .signature.alg "$work/bundle.json")" ed25519
check_eq "export signed by this lab's key" "$(jq -r .signature.public_key "$work/bundle.json")" "$(jq -r .public_key <<<"$lab")"

# --- the forged bundle: a shell recipe, every checksum recomputed ---
jq -c --arg m "$MARK" '.recipe.command = ["/bin/sh","-c",("touch " + $m)]' "$work/bundle.json" |
	"$BIN/bf-bundle" rehash >"$work/forged.json"
check_eq "forged: recipe changed" "$(jq -r '.recipe.command[0]' "$work/forged.json")" /bin/sh
check_eq "forged: no signature" "$(jq -r '.signature // "none"' "$work/forged.json")" none
j0=$(njobs) r0=$(nruns)
r=$(api POST /api/v1/reproductions "$(cat "$work/forged.json")")
check_eq "forged: refused" "$(status_of "$r")" 409
echo "forged: $(body_of "$r")"
check_eq "forged: names the field" "$(body_of "$r" | jq -r .detail.field)" recipe
check_eq "forged: names the recipe" "$(body_of "$r" | jq -r .detail.recipe)" page-touch
check_contains "forged: the differing fields" "$(body_of "$r" | jq -c '[.detail.differs[].field]')" '"command[0]"'
check_contains "forged: message names the field" "$(body_of "$r" | jq -r .error)" "command"
case "$(body_of "$r")" in *"$(jq -r .recipe_sha256 "$work/forged.json")"*) fail "forged: the answer prints the hash" ;; *) ok ;; esac
r=$(api POST /api/v1/reproductions "{\"bundle\":$(cat "$work/forged.json"),\"override\":true}")
check_eq "forged with an admin override: still refused" "$(status_of "$r")" 409
check_eq "forged with override: names the recipe" "$(body_of "$r" | jq -r .detail.field)" recipe
# signed by a lab nobody here trusts
"$BIN/bf-bundle" sign "$work/evil.key" evil-lab <"$work/forged.json" >"$work/forged-signed.json"
r=$(api POST /api/v1/reproductions "$(cat "$work/forged-signed.json")")
check_eq "forged, signed by an untrusted lab: refused" "$(status_of "$r")" 409
# a signature that no longer matches (the signed forgery edited again)
jq -c '.samples[0].value += 1' "$work/forged-signed.json" | "$BIN/bf-bundle" rehash |
	jq -c --slurpfile s "$work/forged-signed.json" '.signature = $s[0].signature' >"$work/badsig.json"
r=$(api POST /api/v1/reproductions "$(cat "$work/badsig.json")")
check_eq "bad signature: refused as 400" "$(status_of "$r")" 400
check_eq "bad signature: names it" "$(body_of "$r" | jq -r .detail.field)" signature
sleep 2
check_eq "forged: no job created" "$(njobs)" "$j0"
check_eq "forged: no run created" "$(nruns)" "$r0"
no_marker "forged bundles"

# --- defence in depth: a forged job row straight in the store ---
spec=$(bf_sql "$work" "SELECT spec FROM jobs WHERE id = $JA" |
	jq -c --arg m "$MARK" '.recipe.command = ["/bin/sh","-c",("touch " + $m)]')
# cell 0's values: without the WHERE, PostgreSQL may hand back any row
vals=$(bf_sql "$work" "SELECT \"values\" FROM runs WHERE job_id = $JA AND cell_index = 0 AND boot = 0")
q() { printf "'%s'" "${1//\'/\'\'}"; }
bf_sql "$work" "INSERT INTO jobs (recipe, name, spec, machine_class, created_at) VALUES ('page-touch', 'forged-row', $(q "$spec"), 'lab', 0)" >/dev/null
JF=$(bf_sql "$work" "SELECT MAX(id) FROM jobs")
# the forger writes the run's plan columns too, as the API would: only the
# installed-recipe check stands between this row and the machine
plan=$(bf_sql "$work" "SELECT run_order || ', ' || iterations || ', ' || warmup || ', ' || timeout_s FROM runs WHERE job_id = $JA AND cell_index = 0 AND boot = 0")
bf_sql "$work" "INSERT INTO runs (job_id, cell_index, label, axes, \"values\", boot, run_order, iterations, warmup, timeout_s) VALUES ($JF, 0, 'forged', '{}', $(q "$vals"), 0, $plan)" >/dev/null
check_eq "forged row: the runner fails it" "$(wait_job "$JF" 60)" failed
err=$(curl -fsS "$URL/api/v1/jobs/$JF/runs" | jq -r '.runs[0].error')
echo "forged row: $err"
check_contains "forged row: says why" "$err" "not installed"
no_marker "forged job row"
# a row without the plan columns never gets as far
bf_sql "$work" "INSERT INTO jobs (recipe, name, spec, machine_class, created_at) VALUES ('page-touch', 'forged-row-2', $(q "$spec"), 'lab', 0)" >/dev/null
JF2=$(bf_sql "$work" "SELECT MAX(id) FROM jobs")
bf_sql "$work" "INSERT INTO runs (job_id, cell_index, label, axes, \"values\", boot) VALUES ($JF2, 0, 'forged', '{}', $(q "$vals"), 0)" >/dev/null
check_eq "forged row, no plan: the runner fails it" "$(wait_job "$JF2" 60)" failed
err=$(curl -fsS "$URL/api/v1/jobs/$JF2/runs" | jq -r '.runs[0].error')
check_contains "forged row, no plan: says why" "$err" "not its plan"
no_marker "forged job row without a plan"

# --- the genuine bundle signed by a lab not (yet) trusted ---
"$BIN/bf-bundle" sign "$work/partner.key" partner-lab <"$work/bundle.json" >"$work/partner.json"
PFP=$("$BIN/bf-bundle" pub "$work/partner.key" | cut -d' ' -f2)
j0=$(njobs)
r=$(api POST /api/v1/reproductions "$(cat "$work/partner.json")")
check_eq "untrusted signer: no rerun" "$(status_of "$r")" 409
check_eq "untrusted signer: names the signature" "$(body_of "$r" | jq -r .detail.field)" signature
check_eq "untrusted signer: trust state" "$(body_of "$r" | jq -r .detail.trust.state)" untrusted
check_contains "untrusted signer: says so" "$(body_of "$r" | jq -r .error)" "untrusted key $PFP"
check_eq "untrusted signer: nothing scheduled" "$(njobs)" "$j0"
r=$(api POST /api/v1/reproductions "{\"bundle\":$(cat "$work/partner.json"),\"compare_job\":$JA}")
check_eq "untrusted signer: compare-only" "$(status_of "$r")" 201
RC=$(body_of "$r" | jq -r .id)
check_eq "compare-only: mode" "$(body_of "$r" | jq -r .mode)" compare
check_eq "compare-only: against the local job" "$(body_of "$r" | jq -r .job_id)" "$JA"
check_eq "compare-only: nothing scheduled" "$(njobs)" "$j0"
rep=$(curl -fsS "$URL/api/v1/reproductions/$RC")
check_eq "compare-only: done at once" "$(jq -r .state <<<"$rep")" done
check_eq "compare-only: a job compared with itself reproduces" \
	"$(jq -r '[.cells[].metrics[] | select(.metric=="faults") | .verdict] | unique | join(",")' <<<"$rep")" reproduced
check_eq "compare-only: JSON says who signed" "$(jq -r .signature <<<"$rep")" "untrusted key $PFP (claims to be lab partner-lab)"
check_contains "compare-only: text says who signed" "$(curl -fsS "$URL/api/v1/reproductions/$RC?format=text")" "untrusted key $PFP"

# --- trusted: the key from a file, with its fingerprint pinned ---
"$BIN/bf-bundle" pub "$work/partner.key" >"$work/partner.pub"
out=$(cli labs trust partner "$work/partner.pub" --fingerprint "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" 2>&1)
check_contains "labs trust: a wrong pinned fingerprint is refused" "$out" "not the SHA256:AAAA"
out=$(cli labs trust partner "$work/partner.pub" --fingerprint "$PFP")
check_contains "labs trust: prints the fingerprint" "$out" "$PFP"
check_contains "labs list" "$(cli labs)" "partner"
r=$(api POST /api/v1/reproductions "$(cat "$work/partner.json")")
check_eq "trusted signer: rerun" "$(status_of "$r")" 201
R1=$(body_of "$r" | jq -r .id) J1=$(body_of "$r" | jq -r .job_id)
check_eq "trusted signer: signature text" "$(body_of "$r" | jq -r .signature)" "signed by lab partner (key $PFP)"
check_eq "trusted signer: rerun job" "$(wait_job "$J1" 180)" done
rep=$(curl -fsS "$URL/api/v1/reproductions/$R1")
check_eq "trusted signer: verdict" "$(jq -r '[.cells[].metrics[] | select(.metric=="faults") | .verdict] | unique | join(",")' <<<"$rep")" reproduced
check_eq "trusted signer: report names the lab" "$(jq -r .signature <<<"$rep")" "signed by lab partner (key $PFP)"
check_contains "trusted signer: text names the lab" "$(curl -fsS "$URL/api/v1/reproductions/$R1?format=text")" "bundle signed by lab partner (key $PFP)"
# this lab's own signature counts as trusted
r=$(api POST /api/v1/reproductions "$(cat "$work/bundle.json")")
check_eq "own signature: rerun" "$(status_of "$r")" 201
check_contains "own signature: named" "$(body_of "$r" | jq -r .signature)" "(this lab; key $FP)"
J2=$(body_of "$r" | jq -r .job_id)
wait_job "$J2" 180 >/dev/null

# --- a recipe that is not the local one runs only once an admin imports it ---
jq '.recipe.description = "page-touch as lab partner runs it"' "$work/bundle.json" |
	"$BIN/bf-bundle" sign "$work/partner.key" partner-lab >"$work/variant.json"
r=$(api POST /api/v1/reproductions "$(cat "$work/variant.json")")
check_eq "variant recipe, trusted signer: not installed" "$(status_of "$r")" 409
check_eq "variant recipe: the differing field" "$(body_of "$r" | jq -r '[.detail.differs[].field] | join(",")')" description
jq .recipe "$work/variant.json" >"$work/variant-recipe.json"
out=$(cli recipes import "$work/variant-recipe.json")
check_contains "recipes import" "$out" "imported"
check_contains "recipes import: the hash" "$out" "$(jq -r .recipe_sha256 "$work/variant.json")"
check_eq "imported list" "$(curl -fsS "$URL/api/v1/recipes?imported=1" | jq -r '.recipes[0].sha256')" "$(jq -r .recipe_sha256 "$work/variant.json")"
r=$(api POST /api/v1/reproductions "$(cat "$work/variant.json")")
check_eq "variant recipe after import: rerun" "$(status_of "$r")" 201
J3=$(body_of "$r" | jq -r .job_id)
check_eq "variant recipe: the runner runs the imported recipe" "$(wait_job "$J3" 180)" done
no_marker "after the reruns"

# --- untrust: the partner's bundles are compare-only again ---
check "labs untrust" cli labs untrust partner
r=$(api POST /api/v1/reproductions "$(cat "$work/partner.json")")
check_eq "untrusted again: no rerun" "$(status_of "$r")" 409

# --- an admin's override, recorded; a submitter's refused ---
"$BIN/bf-bundle" rehash <"$work/bundle.json" >"$work/unsigned.json"
r=$(api POST /api/v1/reproductions "$(cat "$work/unsigned.json")")
check_eq "unsigned: no rerun" "$(status_of "$r")" 409
check_contains "unsigned: says so" "$(body_of "$r" | jq -r .error)" "the bundle is unsigned"
admin=$("$BIN/benchfleetd" token create --store "$(bf_store "$work")" --role admin 2>/dev/null)
sub=$("$BIN/benchfleetd" token create --store "$(bf_store "$work")" --role submitter 2>/dev/null)
apit() { local t=$1; shift; curl -sS -X POST -H "Authorization: Bearer $t" -H 'Content-Type: application/json' --data-binary "$2" -w '\n%{http_code}' "$URL$1" | { b=$(cat); printf '%s %s' "${b##*$'\n'}" "${b%$'\n'*}"; }; }
r=$(apit "$sub" /api/v1/reproductions "{\"bundle\":$(cat "$work/unsigned.json"),\"override\":true}")
check_eq "override by a submitter: forbidden" "$(status_of "$r")" 403
r=$(apit "$sub" /api/v1/labs '{"name":"x","public_key":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}')
check_eq "trust by a submitter: forbidden" "$(status_of "$r")" 403
r=$(apit "$sub" /api/v1/recipes "$(cat "$work/variant-recipe.json")")
check_eq "recipe import by a submitter: forbidden" "$(status_of "$r")" 403
r=$(apit "$admin" /api/v1/reproductions "{\"bundle\":$(cat "$work/unsigned.json"),\"override\":true}")
check_eq "override by an admin: rerun" "$(status_of "$r")" 201
RO=$(body_of "$r" | jq -r .id) JO=$(body_of "$r" | jq -r .job_id)
check_eq "override: recorded" "$(body_of "$r" | jq -r .override)" true
aid=$(bf_sql "$work" "SELECT id FROM tokens WHERE role = 'admin'")
rep=$(curl -fsS -H "Authorization: Bearer $admin" "$URL/api/v1/reproductions/$RO")
check_eq "override: with the reproduction" "$(jq -r .override_by <<<"$rep")" "token:$aid"
check_eq "override: report says unsigned" "$(jq -r .signature <<<"$rep")" unsigned
audit=$(curl -fsS -H "Authorization: Bearer $admin" "$URL/api/v1/audit")
echo "audit: $(jq -c '[.audit[] | [.actor, .action, .subject]]' <<<"$audit")"
check_eq "audit: the override" "$(jq -r --arg s "reproduction $RO" '[.audit[] | select(.action == "reproduction.override" and .subject == $s)] | .[0].actor' <<<"$audit")" "token:$aid"
check_contains "audit: trust and untrust" "$(jq -c '[.audit[].action]' <<<"$audit")" '"lab.untrust","recipe.import","lab.trust"'
check_eq "audit: the import's hash" "$(jq -r '[.audit[] | select(.action == "recipe.import")][0].detail' <<<"$audit")" "$(jq -r .recipe_sha256 "$work/variant.json")"
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $sub" "$URL/api/v1/audit")
check_eq "audit: admins only" "$code" 403
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/lab")
check_eq "GET /lab needs no token" "$code" 200
r=$(apit "$admin" /api/v1/jobs/$JA/publish '')
check_eq "publish" "$(status_of "$r")" 200
check_eq "audit: publish" "$(curl -fsS -H "Authorization: Bearer $admin" "$URL/api/v1/audit?limit=1" | jq -r '.audit[0].action')" job.publish
for i in $(seq 300); do
	case $(curl -fsS -H "Authorization: Bearer $admin" "$URL/api/v1/jobs/$JO" | jq -r .state) in
	done|failed|cancelled) break ;; esac; sleep 0.2
done
no_marker "at the end"

# --- a lab key others can read stops the daemon ---
stop_daemon
mkdir -p "$work/k"
cp "$work/partner.key" "$work/k/lab.key" && chmod 644 "$work/k/lab.key"
out=$(timeout 20 "$BIN/benchfleetd" --listen 127.0.0.1:0 --store "$work/k/bf.db" \
	--lab-key "$work/k/lab.key" --recipes "$BF_SRC/recipes" 2>&1)
check_eq "readable lab key: refused at start" "$?" 1
check_contains "readable lab key: says what to do" "$out" "chmod 600"

check_sanitizers "$work/daemon.log"
finish
