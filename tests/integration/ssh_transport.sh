#!/bin/bash
# ssh_transport.sh: coordinator/ssh.c (through bf-ssh-check) against two
# real OpenSSH sshds in network namespaces: output streams, line cut,
# stdin, exit status, host key pinning, auth, SFTP upload, a link going
# down mid-exec and a killed sshd. Prints median connect and exec times.
# Needs root; uses its own fleet names so it never meets the demo fleet.
set -u

: "${BF_SRC:?BF_SRC must be set}" "${BF_BUILD:?BF_BUILD must be set}"
CHECK=$BF_BUILD/bin/bf-ssh-check
FLEET=$BF_SRC/tools/netns-fleet
[ -x "$CHECK" ] || { echo "FAIL: $CHECK is not built" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "FAIL: needs root (network namespaces)" >&2; exit 1; }

DIR=$(mktemp -d /tmp/bf-ssh-transport.XXXXXX)
cleanup() {
	"$FLEET" down --dir "$DIR" >/dev/null 2>&1
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$FLEET" up --dir "$DIR" --hosts 2 --prefix bft --subnet 10.79.0 --bridge bfbrt --force ||
	{ echo "FAIL: netns-fleet up" >&2; exit 1; }

KEY=$DIR/client_key
KH=$DIR/known_hosts
A=10.79.0.11	# bft1
B=10.79.0.12	# bft2
OUT=$DIR/out ERR=$DIR/err
FAILS=0 PASSES=0

pass() { PASSES=$((PASSES + 1)); echo "ok   - $1"; }
fail() {
	FAILS=$((FAILS + 1))
	echo "FAIL - $1"
	echo "  stdout: $(head -c 600 "$OUT" 2>/dev/null)"
	echo "  stderr: $(head -c 600 "$ERR" 2>/dev/null)"
}
# run ADDR [KNOWN_HOSTS [KEY]] -- bf-ssh-check args after the target
run_exec() {
	local addr=$1 kh=$2 key=$3
	shift 3
	timeout 60 "$CHECK" exec "$addr" 22 root "$key" "$kh" "$@" >"$OUT" 2>"$ERR"
	local rc=$?
	san_check || true
	return $rc
}
# A sanitizer report in any bf-ssh-check run is a failure of its own.
san_check() {
	if grep -q 'Sanitizer\|runtime error:' "$ERR"; then
		FAILS=$((FAILS + 1))
		echo "FAIL - sanitizer report:"
		head -n 30 "$ERR"
		return 1
	fi
	return 0
}

# 1. hostname: the session lands in the right namespace.
if run_exec $A "$KH" "$KEY" hostname && [ "$(cat "$OUT")" = $'1 bft1\nexit 0' ]; then
	pass "exec hostname on bft1"
else fail "exec hostname on bft1"; fi
if run_exec $B "$KH" "$KEY" hostname && grep -qx '1 bft2' "$OUT"; then
	pass "exec hostname on bft2"
else fail "exec hostname on bft2"; fi

# 2. stdin round trip, small and ~100 KB.
if run_exec $A "$KH" "$KEY" cat $'one\ntwo\nthree' &&
    [ "$(cat "$OUT")" = $'1 one\n1 two\n1 three\nexit 0' ]; then
	pass "stdin round trip via cat (final line without newline)"
else fail "stdin round trip via cat"; fi
BIG=$(seq 1 20000)
want=$(printf '%s' "$BIG" | sha256sum | cut -d' ' -f1)
if run_exec $A "$KH" "$KEY" sha256sum "$BIG" && grep -q "^1 $want " "$OUT"; then
	pass "108 KB of stdin arrives intact"
else fail "108 KB of stdin arrives intact"; fi

# 3. exit status, and death by signal.
if run_exec $A "$KH" "$KEY" 'exit 3' && [ "$(cat "$OUT")" = "exit 3" ]; then
	pass "exit status 3"
else fail "exit status 3"; fi
if run_exec $A "$KH" "$KEY" 'kill -9 $$' && grep -q '^exit -1 signal.*KILL' "$OUT"; then
	pass "killed by SIGKILL gives status -1 and the signal name"
else fail "killed by signal"; fi

# 4. 100 KB on stderr only: no hang, all on stream 2.
if BF_SSH_TOTAL_MS=20000 run_exec $A "$KH" "$KEY" \
    'head -c 102400 /dev/zero | tr "\0" x | fold -w 100 >&2' &&
    [ "$(grep -c '^2 x\{100\}$' "$OUT")" = 1024 ] && ! grep -q '^1 ' "$OUT"; then
	pass "100 KB stderr-only output arrives on stream 2 (1024 lines)"
else fail "100 KB stderr-only output"; fi
# Only stderr, slowly: the reader must sleep on the socket, not spin.
/usr/bin/time -o "$DIR/cpu" -f '%U %S' "$CHECK" exec $A 22 root "$KEY" "$KH" \
    'for i in 1 2 3; do echo tick >&2; sleep 1; done' >"$OUT" 2>"$ERR"
cpu=$(tail -n1 "$DIR/cpu")
if [ "$(grep -c '^2 tick$' "$OUT")" = 3 ] && [ -n "$cpu" ] &&
    awk -v c="$cpu" 'BEGIN { split(c, a, " "); exit !(a[1] + a[2] < 0.5) }'; then
	pass "3 s of trickling stderr costs little CPU (user+sys $cpu s)"
else echo "$cpu" >"$ERR"; fail "trickling stderr CPU (user+sys $cpu s)"; fi

# 5. a stdout line (the agent's JSON) is cut at 65536, a stderr line at
# 4096; the rest of the line is dropped and the next line is intact.
if run_exec $A "$KH" "$KEY" 'head -c 70000 /dev/zero | tr "\0" a; echo; echo next' &&
    [ "$(sed -n 1p "$OUT")" = "1~ $(head -c 65536 /dev/zero | tr '\0' a)" ] &&
    [ "$(sed -n 2p "$OUT")" = "1 next" ] && [ "$(sed -n 3p "$OUT")" = "exit 0" ]; then
	pass "70000-byte stdout line cut at 65536, rest dropped, next line intact"
else fail "long stdout line cut"; fi
if run_exec $A "$KH" "$KEY" '(head -c 10000 /dev/zero | tr "\0" a; echo; echo next) >&2' &&
    [ "$(sed -n 1p "$OUT")" = "2~ $(head -c 4096 /dev/zero | tr '\0' a)" ] &&
    [ "$(sed -n 2p "$OUT")" = "2 next" ]; then
	pass "10000-byte stderr line cut at 4096, rest dropped, next line intact"
else fail "long stderr line cut"; fi
if run_exec $A "$KH" "$KEY" 'head -c 65536 /dev/zero | tr "\0" b; echo' &&
    [ "$(sed -n 1p "$OUT")" = "1 $(head -c 65536 /dev/zero | tr '\0' b)" ]; then
	pass "a stdout line of exactly 65536 bytes is not flagged truncated"
else fail "65536-byte line"; fi

# 5b. a line callback that aborts leaves the session usable when the
# command ends on channel close; capture over its cap drains and keeps it.
if BF_SSH_ABORT_AFTER=3 run_exec $A "$KH" "$KEY" yes &&
    grep -qx 'alive 1' "$OUT" && grep -qx '1 again' "$OUT"; then
	pass "aborting callback on endless output: session still usable"
else fail "aborting callback"; fi
if timeout 60 "$CHECK" capture $A 22 root "$KEY" "$KH" 'head -c 5000000 /dev/zero' 100000 \
    >"$OUT" 2>"$ERR" && san_check && grep -qx 'error BF_ERR_TOOBIG' "$OUT" &&
    grep -qx 'again ok' "$OUT"; then
	pass "capture over its cap: BF_ERR_TOOBIG, session still usable"
else fail "capture over its cap"; fi

# 6. host key pinning.
KH_WRONG=$DIR/kh_wrong KH_MISSING=$DIR/kh_missing
awk -v a=$A -v b=$B '$1 == b { print a, $2, $3 }' "$KH" >"$KH_WRONG"
grep "^$B " "$KH" >"$KH_MISSING"
if ! run_exec $A "$KH_WRONG" "$KEY" true && grep -q 'BF_ERR_HOSTKEY' "$ERR" &&
    grep -q "host key for $A:22 does not match known_hosts $KH_WRONG (possible man-in-the-middle); refusing" "$ERR"; then
	pass "a changed host key is refused (does not match)"
else fail "changed host key"; fi
if ! run_exec $A "$KH_MISSING" "$KEY" true && grep -q 'BF_ERR_HOSTKEY' "$ERR" &&
    grep -q "host key for $A:22 (ssh-ed25519 SHA256:.*) is not in known_hosts $KH_MISSING; refusing" "$ERR"; then
	pass "an unknown host is refused (is not in known_hosts)"
else fail "unknown host key"; fi
fp=$(ssh-keygen -l -E sha256 -f "$DIR/bft1/ssh_host_ed25519_key.pub" | awk '{print $2}')
if grep -qF -e "$fp" "$ERR"; then
	pass "refusal names the fingerprint ssh-keygen prints ($fp)"
else fail "fingerprint $fp in the refusal"; fi

# 7. a key the host does not authorise.
ssh-keygen -q -t ed25519 -N '' -f "$DIR/other_key"
if ! run_exec $A "$KH" "$DIR/other_key" true && grep -q 'BF_ERR_AUTH' "$ERR"; then
	pass "a wrong client key gets BF_ERR_AUTH"
else fail "wrong client key"; fi

# 8. upload over SFTP into a new directory relative to the home, then over it.
head -c 300000 /dev/urandom >"$DIR/up1"
head -c 70000 /dev/urandom >"$DIR/up2"
ok=1
for f in up1 up2; do
	want=$(sha256sum "$DIR/$f" | cut -d' ' -f1)
	timeout 60 "$CHECK" upload $A 22 root "$KEY" "$KH" "$DIR/$f" bfup/agent.bin 0755 \
	    >"$OUT" 2>"$ERR" || ok=0
	san_check || ok=0
	run_exec $A "$KH" "$KEY" 'sha256sum bfup/agent.bin; stat -c %a bfup/agent.bin; ls bfup' ||
		ok=0
	grep -q "^1 $want  bfup/agent.bin$" "$OUT" || ok=0
	grep -qx '1 755' "$OUT" || ok=0
	[ "$(grep -c '^1 ' "$OUT")" = 3 ] || ok=0	# no .tmp left behind
done
if [ $ok = 1 ] && [ -f "$DIR/bft1/home/bfup/agent.bin" ]; then
	pass "upload, then overwrite: sha256 matches, mode 755, no .tmp left"
else fail "upload"; fi

# 9. a quiet command on a live link is not idle (keepalives answer)...
if BF_SSH_IDLE_MS=4000 run_exec $B "$KH" "$KEY" 'sleep 7; echo done' &&
    grep -qx '1 done' "$OUT"; then
	pass "sleep 7 with a 4 s idle limit succeeds on a live link"
else fail "quiet command on a live link"; fi
# ...the total limit holds...
t0=$(date +%s.%N)
BF_SSH_TOTAL_MS=1500 run_exec $B "$KH" "$KEY" 'sleep 10'
rc=$?
el=$(echo "$(date +%s.%N) - $t0" | bc)
if [ $rc != 0 ] && grep -q BF_ERR_TIMEOUT "$ERR" && [ "$(echo "$el < 4" | bc)" = 1 ]; then
	pass "total limit of 1.5 s ends a sleep 10 (${el%???????} s)"
else fail "total limit (${el} s)"; fi
# ...and a link that goes down mid-exec ends in LOST/TIMEOUT, not a hang.
t0=$(date +%s.%N)
BF_SSH_IDLE_MS=5000 timeout 60 "$CHECK" exec $B 22 root "$KEY" "$KH" 'sleep 30' \
    >"$OUT" 2>"$ERR" &
pid=$!
sleep 1
"$FLEET" link-down --dir "$DIR" bft2
wait $pid
rc=$?
el=$(echo "$(date +%s.%N) - $t0" | bc)
san_check || true
"$FLEET" link-up --dir "$DIR" bft2
if [ $rc = 1 ] && grep -Eq 'BF_ERR_(TIMEOUT|LOST)' "$ERR" && [ "$(echo "$el < 9" | bc)" = 1 ]; then
	pass "link down during sleep 30: $(grep -Eo 'BF_ERR_(TIMEOUT|LOST)' "$ERR") after ${el%???????} s (idle 5 s)"
else fail "link down during exec (rc $rc after $el s)"; fi
BF_SSH_CONNECT_MS=3000 timeout 20 "$CHECK" exec $B 22 root "$KEY" "$KH" true >/dev/null 2>&1 ||
	sleep 1
if run_exec $B "$KH" "$KEY" hostname && grep -qx '1 bft2' "$OUT"; then
	pass "bft2 answers again after link-up"
else fail "bft2 after link-up"; fi
# A connect to a host whose link is down times out within the connect limit.
"$FLEET" link-down --dir "$DIR" bft2
t0=$(date +%s.%N)
BF_SSH_CONNECT_MS=2000 run_exec $B "$KH" "$KEY" true
rc=$?
el=$(echo "$(date +%s.%N) - $t0" | bc)
"$FLEET" link-up --dir "$DIR" bft2
if [ $rc = 1 ] && grep -q BF_ERR_TIMEOUT "$ERR" && [ "$(echo "$el < 4" | bc)" = 1 ]; then
	pass "connect over a dead link: BF_ERR_TIMEOUT after ${el%???????} s (limit 2 s)"
else fail "connect over a dead link (rc $rc after $el s)"; fi

# 10. sshd killed: connecting fails cleanly and at once; restart works.
"$FLEET" kill-sshd --dir "$DIR" bft2
t0=$(date +%s.%N)
run_exec $B "$KH" "$KEY" true
rc=$?
el=$(echo "$(date +%s.%N) - $t0" | bc)
if [ $rc = 1 ] && grep -q 'BF_ERR_LOST.*Connection refused' "$ERR" && [ "$(echo "$el < 2" | bc)" = 1 ]; then
	pass "connect to a killed sshd: BF_ERR_LOST (connection refused) in ${el%???????} s"
else fail "connect to a killed sshd (rc $rc after $el s)"; fi
"$FLEET" start-sshd --dir "$DIR" bft2
if run_exec $B "$KH" "$KEY" hostname && grep -qx '1 bft2' "$OUT"; then
	pass "bft2 answers after start-sshd"
else fail "bft2 after start-sshd"; fi

# 10b. a command started ahead (ssh_exec_prestart, what a worker does for
# the agent's next step while idle): taken by the next exec of the same
# command with its early output and stdin intact, left alone by another
# command, and run afresh when it ended while waiting. The counter file
# says which process answered.
CTR=/tmp/bf-pre-ctr.$$
PRE='n=$(cat '$CTR' 2>/dev/null || echo 0); n=$((n+1)); echo $n >'$CTR'; echo start $n; read x; echo got $x'
rm -f "$CTR"
if timeout 60 "$CHECK" prestart $A 22 root "$KEY" "$KH" "$PRE" hello >"$OUT" 2>"$ERR" &&
	san_check && [ "$(cat "$OUT")" = "$(printf '1 other\n1 start 1\n1 got hello\nexit 0')" ]; then
	pass "prestart: the waiting command is taken (start 1, early line first, stdin read)"
else fail "prestart: taken"; fi
DIE='n=$(cat '$CTR' 2>/dev/null || echo 0); n=$((n+1)); echo $n >'$CTR'; echo run $n; exit 3'
if timeout 60 "$CHECK" prestart $A 22 root "$KEY" "$KH" "$DIE" x >"$OUT" 2>"$ERR" &&
	san_check && [ "$(cat "$OUT")" = "$(printf '1 other\n1 run 3\nexit 3')" ]; then
	pass "prestart: one that ended while waiting is run afresh (run 3, not run 2)"
else fail "prestart: ended while waiting"; fi
rm -f "$CTR"

# 11. figures: median connect (10 fresh connections) and per-exec time.
for _ in $(seq 1 10); do
	"$CHECK" exec $A 22 root "$KEY" "$KH" true 2>&1 >/dev/null | awk '/^connect_ms/ { print $2 }'
done | sort -n | awk '{ v[NR] = $1 } END { printf "figure: connect+handshake+auth median %.1f ms (n=%d)\n", (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2, NR }'
if timeout 60 "$CHECK" bench $A 22 root "$KEY" "$KH" 100 >"$OUT" 2>"$ERR" && san_check; then
	sed 's/^/figure: /' "$OUT"
	pass "bench: 100 execs of true on one session"
else fail "bench"; fi

echo "ssh_transport: $PASSES passed, $FAILS failed"
[ $FAILS = 0 ]
