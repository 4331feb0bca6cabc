#!/usr/bin/env bash
# profiles.sh: issue 14 findings 4, 8 and 9 on a real benchfleetd and a
# real netns fleet. Power-cycle and boot commands are named profiles of the
# daemon's --config file: POST /machines with an argv is refused (400
# naming the field, nothing ever runs), a profile name is accepted, an
# unknown one refused; bad profile lines stop the daemon at start naming
# file:line, a "{cmdline}"-in-quotes template among them. A boot through a
# boot-command profile over SSH gets each slot value as one word, and the
# power profile runs when the boot fails. A job cmdline with shell syntax
# is refused at submit. No API answer (machines, events, metrics, runs,
# logs, errors) shows an argv, a password or a key path, for any role,
# even after SSH failures with a bad key. A store as the previous release
# wrote it (inline power_cycle argv, shell template) opens with its samples,
# runs non-boot work, never runs the stored command and says why.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-profiles.XXXXXX)
defer "rm -rf '$work'"
fleet=$work/fleet
nf() { bash "$BF_SRC/tools/netns-fleet" "$@"; }
nf up --dir "$fleet" --hosts 2 --prefix bfp4 --subnet 10.104.0 --bridge bfbr104 --force ||
	{ echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
IFS=$'\t' read -r h1 a1 p1 u1 key < <(sed -n 1p "$fleet/hosts.tsv")
IFS=$'\t' read -r h2 a2 p2 u2 _ < <(sed -n 2p "$fleet/hosts.tsv")
PW=hunter2-bmc-pw			# a "password" in a power profile
mkdir -p "$work/args"
lacks() { ! grep -qF -e "$2" <<<"$1"; }	# lacks TEXT NEEDLE
# Every marker a refused or stored command would create; none may appear.
markers() { ls "$work"/MARKER-* 2>/dev/null | joined ' '; }

# --- bad profile lines stop the daemon, naming file and line ---
startfail() { # startfail DESCRIPTION CONFIG_TEXT WANT
	printf '%s\n' "$2" >"$work/bad.conf"
	out=$("$BIN/benchfleetd" --config "$work/bad.conf" --listen 127.0.0.1:0 \
		--store "$work/never.db" 2>&1)
	check_eq "$1: exit 2" "$?" 2
	check_contains "$1: message" "$out" "$3"
	check "$1: no password in the message" lacks "$out" "$PW"
}
startfail "quoted {cmdline} (finding 9)" \
	"# lab
boot-command.q = /usr/local/sbin/lab-boot \"{cmdline}\" -P $PW" \
	"bad.conf:2: boot-command.q: word 2: '\"' is not quoting here"
startfail "shell template" "boot-command.q = /bin/sh -c x{cmdline}" \
	"bad.conf:1: boot-command.q: word 1 is the shell sh"
startfail "duplicate profile" "power.a = /bin/true
power.a = /bin/false -P $PW" "bad.conf:2: power.a: profile power.a is declared twice"
startfail "unknown profile kind" "powr.a = /bin/true" \
	"bad.conf:1: unknown option \"powr.a\"; profiles are power.NAME, boot-command.NAME"
check "no store written by a refused start" [ ! -e "$work/never.db" ]

# --- the daemon's commands ---
cat >"$work/benchfleetd.conf" <<EOF
# power profiles run on the coordinator; boot-command profiles on the machine
power.pdu-$h1 = /usr/bin/env BMC_PASSWORD=$PW /usr/bin/touch $work/power-ran
boot-command.nsboot = /usr/bin/touch $work/args/k={kernel}+c={cmdline}
EOF
start_daemon "$work" --config "$work/benchfleetd.conf" --known-hosts "$fleet/known_hosts" \
	--probe-interval 2 || exit 1
defer stop_daemon
curl -sN "$URL/api/v1/events" >"$work/events.txt" 2>/dev/null &
events_pid=$!
defer "kill $events_pid 2>/dev/null"

machine() { # machine NAME ADDR PORT CLASS [BOOT_JSON [KEY]]
	printf '{"name":"%s","host":"%s","port":%s,"user":"root","key":"%s","class":"%s"%s}' \
		"$1" "$2" "$3" "${6:-$key}" "$4" "${5:+,\"boot\":$5}"
}
nsboot='{"method":"command","command":"nsboot","power_cycle":"pdu-'$h1'","timeout_s":5,"power_cycle_timeout_s":5}'

# --- finding 4: commands through the API are refused ---
r=$(api POST /api/v1/machines "$(machine m1 "$a1" "$p1" p4 \
	'{"method":"command","command":"nsboot","power_cycle":["/usr/bin/touch","'"$work"'/MARKER-api"]}')")
check_eq "power_cycle argv -> 400" "$(status_of "$r")" 400
check_eq "power_cycle argv: field" "$(body_of "$r" | jq -r .detail.field)" boot.power_cycle
check_contains "power_cycle argv: says where commands live" "$(body_of "$r" | jq -r .error)" \
	"commands live in the daemon's config file as power.NAME = COMMAND"
check "power_cycle argv: not echoed" lacks "$(body_of "$r")" MARKER
r=$(api POST /api/v1/machines "$(machine m1 "$a1" "$p1" p4 \
	'{"method":"command","command":"/usr/bin/touch '"$work"'/MARKER-cmd {cmdline}"}')")
check_eq "command template -> 400" "$(status_of "$r")" 400
check_contains "command template: field" "$(body_of "$r")" "boot.command: must name a boot-command profile"
r=$(api POST /api/v1/machines "$(machine m1 "$a1" "$p1" p4 \
	'{"method":"command","command":["/usr/bin/touch","'"$work"'/MARKER-cmd2"]}')")
check_eq "command argv -> 400" "$(status_of "$r")" 400
r=$(api POST /api/v1/machines "$(machine m1 "$a1" "$p1" p4 \
	'{"method":"command","command":"nsboot","power_cycle":"ipmi-nope"}')")
check_eq "unknown power profile -> 400" "$(status_of "$r")" 400
check_contains "unknown power profile: named" "$(body_of "$r")" \
	"boot.power_cycle: no power profile \\\"ipmi-nope\\\" in the daemon's config (it declares pdu-$h1)"
r=$(api POST /api/v1/machines "$(machine m1 "$a1" "$p1" p4 '{"method":"command","command":"lab-x"}')")
check_eq "unknown boot-command profile -> 400" "$(status_of "$r")" 400
check_eq "nothing registered by the refusals" "$(curl -fsS "$URL/api/v1/machines" | jq '.machines | length')" 0
r=$(api POST /api/v1/machines "$(machine m1 "$a1" "$p1" p4 "$nsboot")")
check_eq "profile names -> 201" "$(status_of "$r")" 201
check_eq "the view names the profiles" \
	"$(curl -fsS "$URL/api/v1/machines/m1" | jq -r '.boot.command + " " + .boot.power_cycle + " " + (.boot_error // "-")')" \
	"nsboot pdu-$h1 -"

# --- finding 9: shell syntax in a job's cmdline is refused at submit ---
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["m1"]},
	"cmdline":"x$(touch '"$work"'/MARKER-cmdline)"}')
check_eq "cmdline \$(...) -> 400" "$(status_of "$r")" 400
check_contains "cmdline: field named" "$(body_of "$r")" "cmdline: has a byte the kernel command line cannot carry (0x24 at 1)"
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["m1"]},
	"matrix":{"cmdline":["","a;touch '"$work"'/MARKER-matrix"]}}')
check_eq "matrix cmdline ; -> 400" "$(status_of "$r")" 400
check_contains "matrix cmdline: field named" "$(body_of "$r")" "matrix.cmdline[1]"
check_eq "no job from the refusals" "$(bf_sql "$work" "select count(*) from jobs")" 0

# --- a boot through the profiles: each slot one word; the power profile runs ---
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["m1"]},
	"cmdline":"nokaslr a=b,c","repetitions":{"iterations":1}}')
check_eq "boot job accepted" "$(status_of "$r")" 201
bid=$(body_of "$r" | jq -r .id)
check_eq "boot job: ends failed (a netns host cannot reboot)" "$(wait_job "$bid" 120)" failed
brun=$(bf_sql "$work" "select id from runs where job_id=$bid")
check_eq "boot job: run boot-failed" "$(bf_sql "$work" "select state from runs where id=$brun")" boot-failed
args=$(ls "$work/args")
check_eq "boot command ran once, the cmdline as one word" "$(ls "$work/args" | wc -l)" 1
check_contains "boot command: kernel slot" "$args" "k=$(uname -r)+c="
check_contains "boot command: cmdline slot whole, blanks and all" "$args" "+c=nokaslr a=b,c benchfleet.boot=$bid.0"
check "power profile ran after the failed boot" [ -e "$work/power-ran" ]
log=$(curl -fsS "$URL/api/v1/runs/$brun/log")
check_contains "run log: power-cycled" "$log" '\"power_cycled\":true'

# --- finding 8: SSH failures say nothing of the key's path ---
junk=$work/KEYPATH-junk-key
echo "not a key" >"$junk"
gone=$work/KEYPATH-gone-key
cp "$key" "$gone"
r=$(api POST /api/v1/machines "$(machine m3 "$a2" "$p2" p4bad "" "$junk")")
check_eq "machine with a junk key registered" "$(status_of "$r")" 201
r=$(api POST /api/v1/machines "$(machine m4 "$a2" "$p2" p4bad "" "$gone")")
check_eq "machine with a key to delete registered" "$(status_of "$r")" 201
r=$(api POST /api/v1/machines "$(machine m5 "$a2" "$p2" p4bad "" "$work/KEYPATH-missing")")
check_eq "unreadable key refused" "$(status_of "$r")" 400
check "unreadable key: path not echoed" lacks "$(body_of "$r")" KEYPATH
# m4 connects once with its key; then the key goes, and the next probe fails
for _ in $(seq 100); do
	[ "$(curl -fsS "$URL/api/v1/machines/m4" | jq -r '.last_seen // ""')" != "" ] && break
	sleep 0.2
done
# (its worker keeps the connection: the next connect, after the restart
# below, finds the key gone)
rm -f "$gone"

# --- upgrade: a store as the previous release wrote it ---
r=$(api POST /api/v1/machines "$(machine old1 "$a2" "$p2" p4old)")
check_eq "register the machine to age" "$(status_of "$r")" 201
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["old1"]},"repetitions":{"iterations":2}}')
jid=$(body_of "$r" | jq -r .id)
check_eq "a job before the upgrade" "$(wait_job "$jid" 120)" done
nsamples=$(bf_sql "$work" "select count(*) from samples s join runs r on r.id=s.run_id where r.job_id=$jid")
check "samples before the upgrade ($nsamples)" [ "$nsamples" -ge 2 ]
stop_daemon
# What the previous release stored for a machine registered with an inline
# argv (json_dumps, compact, sorted keys) and for a shell template.
bf_sql "$work" "update machines set boot = '{\"kernels\":{\"6.1\":{\"image\":\"/boot/vmlinuz\"}},\"method\":\"kexec\",\"power_cycle\":[\"/usr/bin/touch\",\"$work/MARKER-legacy\",\"-P\",\"$PW\"],\"timeout_s\":5}' where name = 'old1'"
bf_sql "$work" "insert into machines (name, host, port, \"user\", key_path, class, state, created_at, boot)
	select 'old2', host, port, \"user\", key_path, 'p4old2', 'idle', created_at,
	'{\"command\":\"/usr/bin/touch $work/MARKER-legacy-cmd \\\"{cmdline}\\\"\",\"method\":\"command\"}'
	from machines where name = 'old1'"
start_daemon "$work" --config "$work/benchfleetd.conf" --known-hosts "$fleet/known_hosts" \
	--probe-interval 2 || exit 1
for _ in $(seq 300); do
	e3=$(curl -fsS "$URL/api/v1/machines/m3" | jq -r '.last_error // ""')
	e4=$(curl -fsS "$URL/api/v1/machines/m4" | jq -r '.last_error // ""')
	[[ "$e3" == *"authentication"* && "$e4" == *"cannot read"* ]] && break
	sleep 0.2
done
check_contains "junk key: last_error" "$e3" "public key authentication as root refused"
check_contains "deleted key: last_error" "$e4" "cannot read the machine's private key"
check_eq "samples intact after the upgrade" \
	"$(bf_sql "$work" "select count(*) from samples s join runs r on r.id=s.run_id where r.job_id=$jid")" "$nsamples"
check_eq "the old job's report" "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/jobs/$jid/report")" 200
v=$(curl -fsS "$URL/api/v1/machines/old1")
check_eq "old argv: not in the view" "$(jq -r '.boot.power_cycle // "none"' <<<"$v")" none
check_contains "old argv: boot_error says to re-declare it" "$(jq -r .boot_error <<<"$v")" \
	"boot.power_cycle: must name a power profile, not give a command (an array): commands live in the daemon's config file as power.NAME"
check_contains "old argv: the CLI's machine list says so" \
	"$("$BIN/benchfleet" --url "$URL" machines | grep '^old1 ')" "boot.power_cycle: must name"
v=$(curl -fsS "$URL/api/v1/machines/old2")
check_eq "old template: not in the view" "$(jq -r '.boot.command // "none"' <<<"$v")" none
check_contains "old template: boot_error" "$(jq -r .boot_error <<<"$v")" "boot.command: must name a boot-command profile"
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["old1"]},"repetitions":{"iterations":1}}')
nid=$(body_of "$r" | jq -r .id)
check_eq "old machine: non-boot work runs" "$(wait_job "$nid" 120)" done
check_eq "old machine: its samples" \
	"$(bf_sql "$work" "select count(*) from samples s join runs r on r.id=s.run_id where r.job_id=$nid and s.metric='wall_s'")" 1
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["old1"]},"cmdline":"nokaslr"}')
check_eq "old machine: a boot job refused at submit" "$(status_of "$r")" 400
check_contains "old machine: says why" "$(body_of "$r")" "machine old1 cannot reboot (boot.power_cycle: must name a power profile"
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["old1"]},"repetitions":{"iterations":1,"boots":2}}')
check_eq "old machine: a multi-boot job accepted" "$(status_of "$r")" 201
mid=$(body_of "$r" | jq -r .id)
check_eq "old machine: multi-boot job fails" "$(wait_job "$mid" 120)" failed
check_contains "old machine: run says to re-declare the command" \
	"$(bf_sql "$work" "select error from runs where job_id=$mid order by id" | joined ' | ')" "power.NAME"
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["old2"]},"repetitions":{"iterations":1,"boots":2}}')
oid=$(body_of "$r" | jq -r .id)
check_eq "old template machine: multi-boot job fails" "$(wait_job "$oid" 120)" failed
check_eq "no marker from any refused or stored command" "$(markers)" ""

# --- finding 8: what each role reads ---
kill "$events_pid" 2>/dev/null
db=$(bf_store "$work")
admin=$("$BIN/benchfleetd" token create --store "$db" --role admin 2>/dev/null)
sub=$("$BIN/benchfleetd" token create --store "$db" --role submitter 2>/dev/null)
view=$("$BIN/benchfleetd" token create --store "$db" --role viewer 2>/dev/null)
secret_in() { # secret_in TEXT: prints what of the secrets TEXT holds
	local s
	for s in "$PW" "$key" "$junk" "$gone" KEYPATH client_key /usr/bin/touch /usr/bin/env \
		"$work/power-ran" "$work/args" MARKER "$fleet"; do
		grep -qF -e "$s" <<<"$1" && printf '%s ' "$s"
	done
}
paths="/api/v1/machines /api/v1/machines/m1 /api/v1/machines/m3 /api/v1/machines/m4
	/api/v1/machines/old1 /api/v1/machines/old2 /metrics /api/v1/jobs /api/v1/jobs/$bid/runs
	/api/v1/runs/$brun /api/v1/runs/$brun/log /api/v1/jobs/$mid/runs"
for role in admin sub view; do
	tok=${!role}
	all=
	for p in $paths; do
		b=$(curl -sS -H "Authorization: Bearer $tok" "$URL$p")
		check "$role GET $p answers" [ -n "$b" ]
		all+=$b
	done
	check_contains "$role: the machine views are there" "$all" '"power_cycle":"pdu-'"$h1"'"'
	check_eq "$role: no argv, password or key path in any answer" "$(secret_in "$all")" ""
	b=$(curl -sS --max-time 2 -H "Authorization: Bearer $tok" "$URL/api/v1/events" 2>/dev/null)
	check_eq "$role: none in the event stream's replay" "$(secret_in "$b")" ""
done
check_contains "events were recorded" "$(cat "$work/events.txt")" "event: machine"
check_eq "no argv, password or key path in the events" "$(secret_in "$(cat "$work/events.txt")")" ""
check_eq "no marker at the end" "$(markers)" ""
stop_daemon
check_sanitizers "$work/daemon.log"
finish
