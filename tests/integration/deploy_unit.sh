#!/usr/bin/env bash
# deploy_unit.sh: deploy/benchfleetd.service and deploy/benchfleetd.conf.example.
# The unit carries every hardening key of docs/deploy.md and, where
# systemd-analyze runs, passes `systemd-analyze verify` (ExecStart pointed
# at the built benchfleetd) with an OK exposure level. benchfleetd started
# with --config on the example (paths overridden on the command line to a
# temporary directory) answers /healthz, takes the file's settings (auth =
# required: the API answers 401 without a token) and the command line's
# (the store it names). It runs under PR_SET_MDWE, the prctl behind
# MemoryDenyWriteExecute=, over plain HTTP and, with openssl, HTTPS. A bad
# config line stops benchfleetd with the file and line in the message.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

UNIT=$BF_SRC/deploy/benchfleetd.service
CONF=$BF_SRC/deploy/benchfleetd.conf.example
[ -x "$BIN/benchfleetd" ] || { echo "FAIL: $BIN/benchfleetd not built"; exit 1; }
work=$(mktemp -d /tmp/bf-deploy.XXXXXX)
defer "rm -rf '$work'"

# 1. The unit file: required keys, exactly as the deployment notes promise.
unit_has() { # unit_has KEY=VALUE: a line of the unit is exactly that
	grep -qxF -- "$1" "$UNIT"
}
for kv in User=benchfleet Group=benchfleet StateDirectory=benchfleet \
	ConfigurationDirectory=benchfleet ProtectSystem=strict ProtectHome=yes \
	PrivateTmp=yes PrivateDevices=yes NoNewPrivileges=yes ProtectKernelTunables=yes \
	ProtectKernelModules=yes ProtectControlGroups=yes \
	"RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX" RestrictNamespaces=yes \
	LockPersonality=yes MemoryDenyWriteExecute=yes SystemCallFilter=@system-service \
	"CapabilityBoundingSet=CAP_SETUID CAP_SETGID CAP_KILL" \
	"AmbientCapabilities=CAP_SETUID CAP_SETGID CAP_KILL" Restart=on-failure \
	"ExecStart=/usr/local/bin/benchfleetd --config /etc/benchfleet/benchfleetd.conf"; do
	check "unit has $kv" unit_has "$kv"
done
check "unit does not use DynamicUser" bash -c "! grep -q '^DynamicUser=yes' '$UNIT'"

# systemd-analyze verify needs the ExecStart binary: a copy of the unit
# names the built one. It works without systemd as PID 1; whether it works
# at all here is tried first on a trivial unit.
mkdir -p "$work/unit"
printf '[Service]\nExecStart=/bin/true\n' >"$work/unit/bf-trivial.service"
if command -v systemd-analyze >/dev/null 2>&1 &&
	systemd-analyze verify "$work/unit/bf-trivial.service" >/dev/null 2>&1; then
	sed "s|^ExecStart=/usr/local/bin/benchfleetd |ExecStart=$BIN/benchfleetd |" "$UNIT" \
		>"$work/unit/benchfleetd.service"
	out=$(systemd-analyze verify "$work/unit/benchfleetd.service" 2>&1)
	check_eq "systemd-analyze verify: exit 0" "$?" 0
	check_eq "systemd-analyze verify: no complaints" "$out" ""
	if sec=$(systemd-analyze security --offline=yes "$work/unit/benchfleetd.service" 2>&1); then
		level=$(sed -n 's/.*Overall exposure level for benchfleetd.service: \([0-9.]*\) .*/\1/p' <<<"$sec")
		check "systemd-analyze security: exposure ${level:-?} <= 2.5" \
			awk -v l="${level:-99}" 'BEGIN { exit !(l <= 2.5) }'
	else
		echo "note: systemd-analyze security --offline does not run here"
	fi
else
	echo "note: systemd-analyze does not run here; only the keys were checked"
fi

# 2. benchfleetd --config on the example, its paths moved to $work.
d1=$work/d1
mkdir -p "$d1"
# (the example's api-user, benchfleet-api, is made by the install notes;
# this host has nobody)
start_daemon "$d1" --config "$CONF" --api-user nobody --known-hosts "$d1/known_hosts" ||
	{ fail "benchfleetd --config $CONF did not start"; finish; exit 1; }
check_eq "config example: /healthz" "$(curl -fsS "$URL/healthz" | jq -r .ok)" true
check_eq "config example: auth = required from the file" \
	"$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/jobs")" 401
want_store=$d1/bf.db
! declare -F bf_store >/dev/null || want_store=$(bf_store "$d1")
check_contains "config example: --store on the command line wins" \
	"$(cat "$d1/daemon.log")" "store $want_store"
stop_daemon
check_sanitizers "$d1/daemon.log"

# 3. Under MemoryDenyWriteExecute: prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN)
# (Linux 6.3+) survives exec, like systemd's seccomp filter. perl is in
# every Debian (perl-base).
case "$(uname -m)" in
x86_64) nr=157 ;;
aarch64) nr=167 ;;
*) nr= ;;
esac
mdwe_ok=0
if [ -n "$nr" ] && command -v perl >/dev/null &&
	[ "$(perl -e 'syscall($ARGV[0], 65, 1, 0, 0, 0) == 0 or exit 1;
		exec "perl", "-e", "print syscall($ARGV[0], 66, 0, 0, 0, 0)"' "$nr" 2>/dev/null)" = 1 ]; then
	mdwe_ok=1
fi
if [ "$mdwe_ok" = 1 ]; then
	mkdir -p "$work/mdwe-bin"
	ln -s "$BIN/benchfleet-agent" "$work/mdwe-bin/benchfleet-agent"
	cat >"$work/mdwe-bin/benchfleetd" <<-EOF
	#!/bin/sh
	exec perl -e 'syscall($nr, 65, 1, 0, 0, 0) == 0 or die "PR_SET_MDWE: \$!\n"; exec { \$ARGV[0] } @ARGV or die "exec: \$!\n"' "$BIN/benchfleetd" "\$@"
	EOF
	chmod 755 "$work/mdwe-bin/benchfleetd"
	d2=$work/d2
	mkdir -p "$d2"
	if BIN=$work/mdwe-bin start_daemon "$d2" --config "$CONF" --api-user nobody \
		--known-hosts "$d2/known_hosts"; then
		check_eq "MDWE: /healthz" "$(curl -fsS "$URL/healthz" | jq -r .ok)" true
		stop_daemon
	else
		fail "MDWE: benchfleetd did not start under PR_SET_MDWE"
	fi
	check_sanitizers "$d2/daemon.log"
	if command -v openssl >/dev/null; then
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
			-subj "/CN=benchfleet test" -addext "subjectAltName=IP:127.0.0.1" \
			-keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
		d3=$work/d3
		mkdir -p "$d3"
		# Not start_daemon: its /healthz probe is plain HTTP, which a TLS
		# port does not answer.
		"$work/mdwe-bin/benchfleetd" --config "$CONF" --api-user nobody --listen 127.0.0.1:0 \
			--port-file "$d3/port" --store "$d3/bf.db" --known-hosts "$d3/known_hosts" \
			--recipes "$BF_SRC/recipes" --web "$BF_SRC/web" --agent "$BIN/benchfleet-agent" \
			--tls-cert "$work/cert.pem" --tls-key "$work/key.pem" >>"$d3/daemon.log" 2>&1 &
		DAEMON_PID=$!
		for _ in $(seq 200); do
			[ -s "$d3/port" ] || ! kill -0 "$DAEMON_PID" 2>/dev/null && break
			sleep 0.05
		done
		if [ -s "$d3/port" ]; then
			check_eq "MDWE: /healthz over HTTPS (GnuTLS)" \
				"$(curl -fsS -m 10 --cacert "$work/cert.pem" \
					"https://127.0.0.1:$(cat "$d3/port")/healthz" | jq -r .ok)" true
		else
			fail "MDWE: the TLS daemon did not start: $(tail -3 "$d3/daemon.log")"
		fi
		stop_daemon
	else
		echo "note: no openssl; HTTPS under MDWE not tried"
	fi
else
	echo "note: PR_SET_MDWE not available here; MemoryDenyWriteExecute not tried"
fi

# 4. A bad line stops the daemon, naming the file and the line.
printf 'listen = 127.0.0.1:0\n# comment\nlisen = 127.0.0.1:8080\n' >"$work/bad.conf"
out=$("$BIN/benchfleetd" --config "$work/bad.conf" --store "$work/never.db" 2>&1)
check_eq "bad config: exit status" "$?" 2
check_eq "bad config: message" "$out" \
	"benchfleetd: $work/bad.conf:3: unknown option \"lisen\""
check "bad config: no store made" test ! -e "$work/never.db"
out=$("$BIN/benchfleetd" --config "$work/missing.conf" 2>&1)
check_eq "missing config: exit status" "$?" 2
check_eq "missing config: message" "$out" \
	"benchfleetd: $work/missing.conf: No such file or directory"

finish
