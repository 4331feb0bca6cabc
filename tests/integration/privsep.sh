#!/usr/bin/env bash
# Privilege separation (issue 14): benchfleetd as root on a real netns
# fleet. The process holding the listening socket must be an unprivileged
# child (the api user's uid and gid, no groups, no capabilities,
# NoNewPrivs) that cannot read the fleet's SSH key and never has its text in
# memory; jobs still run, their events still reach /api/v1/events, and a
# probe goes through the monitor. kill -9 of the child: the API is back in
# seconds and the job in flight finishes with every sample, no run retried.
# kill -9 of the monitor: the child is gone within 1 s and a restart binds
# the same port. A run row forged in the store (as a compromised child
# could write it) is refused by the monitor's runner. Then the systemd
# unit's case (a non-root daemon user with CAP_SETUID/CAP_SETGID only),
# the unprivileged case (warned, one uid) and --privsep no.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-privsep.XXXXXX)
defer "rm -rf '$work'"
fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 2 --prefix bfp6 \
	--subnet 10.106.0 --bridge bfbr106 --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
defer 'kill -9 $DAEMON_PID 2>/dev/null'
# the dashboard from a directory inside one the api user cannot enter (a
# clone under /root): the child enters it before it drops its privileges
cp -r "$BF_SRC/web" "$work/web"
opts=(--known-hosts "$fleet/known_hosts" --probe-interval 2 --web "$work/web")
start_daemon "$work" "${opts[@]}" || exit 1
port=$(cat "$work/port")

# listeners PORT: the pids holding a listening TCP socket on PORT
listeners() { ss -Hltnp "sport = :$1" | grep -oE 'pid=[0-9]+' | cut -d= -f2 | sort -u; }
field() { awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "/proc/$1/status"; }
# alive PID: a process that has not exited (a zombie has)
alive() { [ -e "/proc/$1/status" ] && [ "$(field "$1" State | cut -c1)" != Z ]; }
# memscan PID NEEDLE...: "1" or "0" per needle (text, or hex:HEX bytes): found in a readable and
# writable mapping (heap, stacks, data, anonymous) of PID. Mappings over
# 1 GiB are skipped: ASan's shadow, which holds no data of its own.
memscan() {
	python3 - "$@" <<-'EOF'
	import sys
	pid = int(sys.argv[1])
	needles = [bytes.fromhex(a[4:]) if a.startswith("hex:") else a.encode() for a in sys.argv[2:]]
	found = [0] * len(needles); keep = max(len(n) for n in needles)
	with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
	    for line in maps:
	        addr, perms = line.split()[:2]
	        if perms[0] != "r" or perms[1] != "w":
	            continue
	        a, b = (int(x, 16) for x in addr.split("-"))
	        if b - a > 1 << 30:
	            continue
	        tail = b""
	        while a < b:
	            n = min(1 << 20, b - a)
	            try:
	                mem.seek(a); chunk = mem.read(n)
	            except OSError:
	                chunk = b""
	            data = tail + chunk
	            for i, nd in enumerate(needles):
	                if nd in data:
	                    found[i] = 1
	            tail = data[-keep:] if data else b""
	            a += n
	print(" ".join(map(str, found)))
	EOF
}

nuid=$(id -u nobody)
ngid=$(id -g nobody)
lp=$(listeners "$port")
check_eq "one process listens on :$port" "$(wc -w <<<"$lp")" 1
check "the listener is not the monitor" test "$lp" != "$DAEMON_PID"
check_eq "the listener is the monitor's child" "$(field "$lp" PPid)" "$DAEMON_PID"
check_eq "the monitor is root" "$(field "$DAEMON_PID" Uid | awk '{print $1}')" 0
check_eq "child: Uid (real, effective, saved, fs)" "$(field "$lp" Uid | tr -s '\t ' ' ')" \
	"$nuid $nuid $nuid $nuid"
check_eq "child: Gid" "$(field "$lp" Gid | tr -s '\t ' ' ')" "$ngid $ngid $ngid $ngid"
check_eq "child: no supplementary groups" "$(field "$lp" Groups)" ""
check_eq "child: NoNewPrivs" "$(field "$lp" NoNewPrivs)" 1
for c in CapEff CapPrm CapAmb CapInh; do
	check_eq "child: $c" "$(field "$lp" "$c")" 0000000000000000
done
check_eq "child: named in ps" "$(cat "/proc/$lp/comm")" benchfleetd-api
check_eq "the dashboard is served" "$(curl -sS -o /dev/null -w '%{http_code}' "$URL/")" 200
check_eq "its scripts too" "$(curl -sS -o /dev/null -w '%{http_code}' "$URL/app.js")" 200
key=$fleet/client_key
check "root can read the fleet key" test -r "$key"
if runuser -u nobody -- cat "$key" >/dev/null 2>&1; then
	fail "the api user can read the fleet's SSH key $key"
else
	ok
fi

# --- a job through the API, its events on /api/v1/events ---
curl -sN "$URL/api/v1/events" >"$work/sse1" 2>/dev/null &
SSE=$!
defer 'kill $SSE 2>/dev/null'
sleep 0.3
while IFS=$'\t' read -r name addr p user k; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$p,\"user\":\"$user\",\"key\":\"$k\",\"class\":\"ps\"}")
	check_eq "register $name (key checked by the monitor)" "$(status_of "$r")" 201
done <"$fleet/hosts.tsv"
r=$(api POST /api/v1/machines "{\"name\":\"nokey\",\"host\":\"10.106.0.99\",\"key\":\"$work/no-such-key\",\"class\":\"ps\"}")
check_eq "a key the monitor cannot read" "$(status_of "$r")" 400
# values the monitor's parser refuses are answered by the child itself: no
# request of a sound child gets it killed
for k in '/etc/../etc/hostname' '/etc/host\nname' '/etc/..'; do
	r=$(api POST /api/v1/machines "{\"name\":\"odd\",\"host\":\"10.106.0.99\",\"key\":\"$k\",\"class\":\"ps\"}")
	check_eq "key $k refused" "$(status_of "$r")" 400
done
check_eq "the same child still serves" "$(listeners "$port")" "$lp"
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"class":"ps"},"matrix":{"loops":[3000000,4000000]},"repetitions":{"iterations":2}}')
check_eq "submit" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
check_eq "job $id" "$(wait_job "$id" 120)" done
sse_of() { # sse_of FILE TYPE: the data lines of TYPE events
	awk -v t="$2" '$0 == "event: " t { r = 1; next } r && /^data: / { sub(/^data: /, ""); print; r = 0 } /^$/ { r = 0 }' "$1"
}
# The store says done before the runs' events have come through the
# monitor's pipe: wait for both (up to 15 s), then 0.5 s more for any
# second copy.
for _ in $(seq 150); do
	[ "$(sse_of "$work/sse1" run | jq -s --argjson j "$id" '[.[] | select(.job_id == $j and .state == "done")] | length')" -ge 2 ] && break
	sleep 0.1
done
sleep 0.5
kill "$SSE" 2>/dev/null
runids=$(curl -fsS "$URL/api/v1/jobs/$id/runs" | jq -r '[.runs[].id] | join(",")')
check_eq "run events: every run done" \
	"$(sse_of "$work/sse1" run | jq -s -r --argjson j "$id" '[.[] | select(.job_id == $j and .state == "done") | .id] | unique | join(",")')" "$runids"
check "run events: running seen" test "$(sse_of "$work/sse1" run | jq -s --argjson j "$id" '[.[] | select(.job_id == $j and .state == "running")] | length')" -ge 2
check "log events of the runs" test "$(sse_of "$work/sse1" log | jq -s "[.[] | select(.run as \$r | [$runids] | index(\$r))] | length")" -ge 2
check "machine events" test "$(sse_of "$work/sse1" machine | jq -s '[.[] | select(.name == "bfp61")] | length')" -ge 1
check_eq "one done event per run (no second copy by NOTIFY)" \
	"$(sse_of "$work/sse1" run | jq -s -c --argjson j "$id" '[.[] | select(.job_id == $j and .state == "done")] | length')" 2

# --- probe through the monitor: a stale fingerprint is taken again ---
bf_sql "$work" "update machines set fingerprint = '{\"type\":\"fingerprint\",\"stale\":true}' where name = 'bfp61'" >/dev/null
sleep 3
check_eq "stale fingerprint stays without a probe" \
	"$(curl -fsS "$URL/api/v1/machines/bfp61" | jq -r .fingerprint.stale)" true
r=$(api POST /api/v1/machines/bfp61/probe '')
check_eq "POST probe" "$(status_of "$r")" 202
for i in $(seq 50); do
	[ "$(curl -fsS "$URL/api/v1/machines/bfp61" | jq -r .fingerprint.stale)" = null ] && break
	sleep 0.2
done
check_eq "the probe ran (fresh fingerprint)" \
	"$(curl -fsS "$URL/api/v1/machines/bfp61" | jq -r '[.fingerprint.stale, .fingerprint.type] | @tsv')" $'\tfingerprint'

# --- the SSH key text is in no writable memory of the child ---
kline=$(grep -v -- '-----' "$key" | awk '{ print length, $0 }' | sort -rn | head -1 | cut -d' ' -f2)
check "key text to look for" test "${#kline}" -ge 40
# and the key itself: the 32-byte ed25519 seed inside the OpenSSH key file
seed=$(python3 - "$key" <<-'EOF'
	import base64, struct, sys
	raw = base64.b64decode("".join(l for l in open(sys.argv[1]).read().split("\n")
	                               if l and not l.startswith("-----")))
	p = len(b"openssh-key-v1\0")
	def s(buf, p):
	    n = struct.unpack(">I", buf[p:p + 4])[0]
	    return buf[p + 4:p + 4 + n], p + 4 + n
	for _ in range(3):
	    _, p = s(raw, p)			# cipher, kdf, kdf options
	p += 4					# number of keys
	_, p = s(raw, p)			# public key
	priv, _ = s(raw, p)
	q = 8					# two check words
	for _ in range(2):
	    _, q = s(priv, q)			# key type, public key
	k, _ = s(priv, q)
	print(k[:32].hex())
	EOF
)
check_eq "the key's seed: 32 bytes" "${#seed}" 64
store=$(bf_store "$work")
check_eq "child memory: the store name (control) yes, the key's text and seed no" \
	"$(memscan "$lp" "$store" "$kline" "hex:$seed")" "1 0 0"
echo "monitor memory (store name, key text, key seed): $(memscan "$DAEMON_PID" "$store" "$kline" "hex:$seed")"

# --- kill -9 of the child while a job runs ---
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"class":"ps"},"matrix":{"loops":[150000000,160000000,170000000,180000000]},"repetitions":{"iterations":3,"warmup":1}}')
check_eq "submit the long job" "$(status_of "$r")" 201
id2=$(body_of "$r" | jq -r .id)
for i in $(seq 100); do
	[ "$(bf_sql "$work" "select count(*) from runs where job_id=$id2 and state='running'")" -ge 1 ] && break
	sleep 0.1
done
check "a run in flight" test "$(bf_sql "$work" "select count(*) from runs where job_id=$id2 and state='running'")" -ge 1
t0=$(date +%s%3N)
kill -9 "$lp"
back=
for i in $(seq 100); do
	if curl -fsS -m 1 "$URL/healthz" >/dev/null 2>&1; then back=$(($(date +%s%3N) - t0)); break; fi
	sleep 0.1
done
echo "API back ${back:-never} ms after kill -9 of the child"
check "the API answers again within 5 s" test -n "$back" -a "${back:-99999}" -le 5000
lp2=$(listeners "$port")
check "a new child listens" test -n "$lp2" -a "$lp2" != "$lp" -a "$lp2" != "$DAEMON_PID"
check_contains "the monitor logged the death" "$(cat "$work/daemon.log")" "API child (pid $lp) was killed by signal 9"
check_eq "job in flight finishes" "$(wait_job "$id2" 180)" done
check_eq "all samples: 4 runs x 3" "$(bf_sql "$work" "select count(*) from samples s join runs r on r.id = s.run_id where r.job_id = $id2 and s.metric = 'wall_s'")" 12
check_eq "no run was tried again" "$(bf_sql "$work" "select max(attempt) from runs where job_id = $id2")" 1
check_eq "new child memory: no key either" "$(memscan "$lp2" "$store" "$kline" "hex:$seed")" "1 0 0"
check_eq "new child: Uid" "$(field "$lp2" Uid | awk '{print $1}')" "$nuid"

# --- a run forged in the store is refused by the monitor ---
r=$(api POST /api/v1/machines "{\"name\":\"parked\",\"host\":\"10.106.0.99\",\"key\":\"$key\",\"class\":\"parked\"}")
check_eq "a machine that never connects" "$(status_of "$r")" 201
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"class":"parked"},"matrix":{"loops":[3000000]}}')
id3=$(body_of "$r" | jq -r .id)
check_eq "submit to it" "$(status_of "$r")" 201
sleep 0.5
bf_sql "$work" "update runs set \"values\" = '{\"loops\":1000}' where job_id = $id3" >/dev/null
bf_sql "$work" "update jobs set machine_class = 'ps' where id = $id3" >/dev/null
for i in $(seq 100); do
	case "$(bf_sql "$work" "select state from runs where job_id = $id3")" in queued|running) sleep 0.1 ;; *) break ;; esac
done
check_eq "forged run refused" "$(bf_sql "$work" "select state from runs where job_id = $id3")" failed
check_contains "forged run: why" "$(bf_sql "$work" "select error from runs where job_id = $id3")" "not a cell of job $id3"
check_eq "forged run: nothing measured" "$(bf_sql "$work" "select count(*) from samples s join runs r on r.id = s.run_id where r.job_id = $id3")" 0

# --- kill -9 of the monitor: the child follows, the port is free ---
kill -9 "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
gone=
for i in $(seq 20); do
	alive "$lp2" || { gone=$((i * 50)); break; }
	sleep 0.05
done
check "the child is gone within 1 s of the monitor (${gone:-not} ms)" test -n "$gone"
check_eq "nothing listens on :$port" "$(listeners "$port")" ""
start_daemon "$work" "${opts[@]}" --listen "127.0.0.1:$port" || fail "restart on port $port"
check_eq "restarted on the same port" "$(cat "$work/port")" "$port"
check_eq "the restarted daemon answers" "$(curl -fsS "$URL/api/v1/jobs/$id2" | jq -r .state)" done
stop_daemon
check_sanitizers "$work/daemon.log"

# --- the systemd unit's case: a non-root user with CAP_SETUID/CAP_SETGID ---
if [ "$(bf_store_kind "$work")" = sqlite ] && id daemon >/dev/null 2>&1; then
	u=$work/unit
	mkdir -p "$u"
	chmod 711 "$work"
	chown daemon:daemon "$u"
	chmod 700 "$u"
	unit_start() {
		rm -f "$u/port"
		setpriv --reuid daemon --regid daemon --clear-groups --inh-caps +setuid,+setgid \
			--ambient-caps +setuid,+setgid -- "$BIN/benchfleetd" --listen 127.0.0.1:0 \
			--port-file "$u/port" --store "$u/bf.db" --recipes "$BF_SRC/recipes" \
			--web "$BF_SRC/web" --agent "$BIN/benchfleet-agent" --known-hosts "$u/known_hosts" \
			>>"$work/unit.log" 2>&1 &
		DAEMON_PID=$!
		for i in $(seq 100); do [ -s "$u/port" ] && break; sleep 0.05; done
		up=$(cat "$u/port" 2>/dev/null)
	}
	unit_start
	stop_daemon
	# the store private to the daemon user: the child opens it before the drop
	chmod 600 "$u/bf.db"
	unit_start
	check "unit case: listening" test -n "$up"
	cp=$(listeners "$up")
	check_eq "unit case: the monitor is the daemon user" "$(field "$DAEMON_PID" Uid | awk '{print $1}')" "$(id -u daemon)"
	check_eq "unit case: child Uid" "$(field "$cp" Uid | tr -s '\t ' ' ')" "$nuid $nuid $nuid $nuid"
	for c in CapEff CapPrm CapAmb; do
		check_eq "unit case: child $c cleared" "$(field "$cp" "$c")" 0000000000000000
	done
	check_eq "unit case: the store is 0600 of the daemon user" "$(stat -c '%a %U' "$u/bf.db")" "600 daemon"
	check_eq "unit case: the child reads it" "$(curl -fsS "http://127.0.0.1:$up/api/v1/jobs" | jq '.jobs | length')" 0
	# without CAP_KILL the monitor may not signal the child: a stop still
	# ends it (its sockets close), and quickly
	t0=$(date +%s)
	stop_daemon
	check "unit case: stopped within 5 s" test $(($(date +%s) - t0)) -le 5
	check "unit case: the child is gone" test -z "$(listeners "$up")"
	check_sanitizers "$work/unit.log"

	# unprivileged: one uid, said once at start
	n=$work/np
	mkdir -p "$n"
	chown nobody "$n"
	setpriv --reuid nobody --regid "$ngid" --clear-groups -- "$BIN/benchfleetd" \
		--listen 127.0.0.1:0 --port-file "$n/port" --store "$n/bf.db" --recipes "$BF_SRC/recipes" \
		--web "$BF_SRC/web" --agent "$BIN/benchfleet-agent" --known-hosts "$n/known_hosts" \
		>"$work/np.log" 2>&1 &
	DAEMON_PID=$!
	for i in $(seq 100); do [ -s "$n/port" ] && break; sleep 0.05; done
	np=$(cat "$n/port" 2>/dev/null)
	cp=$(listeners "$np")
	check "unprivileged: a separate process all the same" test -n "$cp" -a "$cp" != "$DAEMON_PID"
	check_eq "unprivileged: warned once" "$(grep -c "without CAP_SETUID/CAP_SETGID" "$work/np.log")" 1
	stop_daemon
	check_sanitizers "$work/np.log"
	chmod 700 "$work"
fi

# --- --privsep no: one process, as before ---
start_daemon "$work" "${opts[@]}" --privsep no || exit 1
check_eq "--privsep no: the daemon itself listens" "$(listeners "$(cat "$work/port")")" "$DAEMON_PID"
r=$(api POST /api/v1/machines/bfp61/probe '')
check_eq "--privsep no: probe" "$(status_of "$r")" 202
stop_daemon
r=$("$BIN/benchfleetd" --privsep maybe 2>&1)
check_contains "--privsep: bad value named" "$r" '--privsep: "maybe" is not one of yes, no'
r=$("$BIN/benchfleetd" --api-user no-such-user-bf --store "$work/x.db" 2>&1)
check_contains "--api-user: unknown user named" "$r" '--api-user: no user "no-such-user-bf"'
r=$("$BIN/benchfleetd" --api-user root --store "$work/x.db" 2>&1)
check_contains "--api-user: root refused" "$r" '"root" is root'
check_sanitizers "$work/daemon.log"
finish
