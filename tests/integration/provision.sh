#!/usr/bin/env bash
# provision.sh: deploy/provision-machine against one netns host (real sshd),
# as root with the fleet's client key. Then: the lab user logs in with the
# lab key (and not with the fleet's key: the key came from its own
# ~/.ssh/authorized_keys); `sudo -n -l` lists exactly the agent and the boot
# commands; `sudo -n true` and reboot with arguments are refused; the
# pinned known_hosts line is the fleet's line for the host; a second run
# changes nothing (one copy of the key, sudoers byte for byte, known_hosts
# too), also with a hostile key comment; a hostile --lab-user or --host is
# refused before any connection and creates no file; a host key that does
# not match --admin-known-hosts, or a different key already pinned, is
# refused and changes nothing.
#
# netns hosts share this machine's root filesystem: the lab user
# (bfprovtest) and /etc/sudoers.d/benchfleet are made on this machine too,
# and removed at exit.
#
# The fleet's sshd reads one AuthorizedKeysFile for every user (the
# fleet's client key) and runs without PAM. A real machine reads
# ~/.ssh/authorized_keys, so the host gets a "Match User bfprovtest" block
# saying so and its sshd is restarted. Without PAM sshd refuses a locked
# account ("!" in shadow, useradd's default): provision-machine creates the
# user with password "*" (no password works, not locked), which is what the
# login here checks.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

PROV=$BF_SRC/deploy/provision-machine
FLEET=$BF_SRC/tools/netns-fleet
LAB=bfprovtest
SUDOERS=/etc/sudoers.d/benchfleet

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces, useradd)"; exit 0; }
command -v visudo >/dev/null || { echo "SKIP: no sudo/visudo (apt-get install sudo)"; exit 0; }
command -v useradd >/dev/null || { echo "SKIP: no useradd"; exit 0; }
if [ -e "$SUDOERS" ] && ! grep -q "^$LAB " "$SUDOERS"; then
	echo "SKIP: $SUDOERS exists and is not this test's: not touching it"
	exit 0
fi
# Leftovers of an interrupted run (test-named, so ours).
rm -f "$SUDOERS"
! getent passwd "$LAB" >/dev/null || userdel -r "$LAB" 2>/dev/null || true

work=$(mktemp -d /tmp/bf-provision.XXXXXX)
defer "rm -rf '$work'"
defer "userdel -r $LAB 2>/dev/null; rm -f $SUDOERS"
fleet=$work/fleet
bash "$FLEET" up --dir "$fleet" --hosts 1 --prefix bfpv --subnet 10.96.0 --bridge bfbr96 \
	--force || { echo "FAIL: netns-fleet up"; exit 1; }
defer "bash '$FLEET' down --dir '$fleet' >/dev/null 2>&1"
addr=10.96.0.11
host_line=$(grep "^$addr " "$fleet/known_hosts")

# The lab user reads its own authorized_keys, as on a real machine.
printf 'Match User %s\n\tAuthorizedKeysFile .ssh/authorized_keys\n' "$LAB" >>"$fleet/bfpv1/sshd_config"
bash "$FLEET" kill-sshd --dir "$fleet" bfpv1 || { echo "FAIL: sshd stop"; exit 1; }
bash "$FLEET" start-sshd --dir "$fleet" bfpv1 || { echo "FAIL: sshd restart"; exit 1; }

ssh-keygen -q -t ed25519 -N '' -C "benchfleet lab key" -f "$work/lab_key"
kh=$work/known_hosts
prov() { # prov [extra args]: provision-machine against the host; output in $work/out
	"$PROV" --host "$addr" --admin-user root --admin-key "$fleet/client_key" \
		--lab-user "$LAB" --lab-key "$work/lab_key.pub" --known-hosts "$kh" "$@" \
		>"$work/out" 2>&1 || { local rc=$?; sed 's/^/  | /' "$work/out" >&2; return "$rc"; }
}
lab_ssh() { # lab_ssh KEY COMMAND...: as the lab user, host key pinned by provisioning
	local key=$1; shift
	timeout 20 ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$kh" -o GlobalKnownHostsFile=/dev/null -o IdentitiesOnly=yes \
		-o IdentityAgent=none -o ConnectTimeout=5 -o LogLevel=ERROR -i "$key" "$LAB@$addr" "$@"
}
fails() { ! "$@" >/dev/null 2>&1; }
quiet() { "$@" >/dev/null 2>&1; }

# 1. First run, the admin connection checked against the fleet's known_hosts.
prov --admin-known-hosts "$fleet/known_hosts"
check_eq "first run: exit status" "$?" 0
out=$(cat "$work/out")
check_contains "first run: created the user" "$out" "created user $LAB"
check_contains "first run: added the key" "$out" "added the key"
check_contains "first run: wrote sudoers" "$out" "wrote $SUDOERS"

home=$(getent passwd "$LAB" | cut -d: -f6)
check_eq "home directory" "$home" "/home/$LAB"
check_eq "authorized_keys mode and owner" \
	"$(stat -c '%a %U' "$home/.ssh/authorized_keys" 2>&1)" "600 $LAB"
check_eq ".ssh mode and owner" "$(stat -c '%a %U' "$home/.ssh" 2>&1)" "700 $LAB"
check_eq "sudoers mode and owner" "$(stat -c '%a %U' "$SUDOERS" 2>&1)" "440 root"
check "sudoers passes visudo -c" visudo -cqf "$SUDOERS"

check_eq "ssh as the lab user with the lab key" "$(lab_ssh "$work/lab_key" id -un 2>&1)" "$LAB"
check "ssh as the lab user with the fleet's key is refused" \
	fails lab_ssh "$fleet/client_key" true

want="(root) NOPASSWD: $home/.benchfleet/benchfleet-agent, /usr/sbin/kexec, /usr/bin/systemctl kexec, /usr/sbin/grub-reboot, /usr/sbin/reboot \"\", /usr/bin/install, /usr/bin/tar, /usr/sbin/update-initramfs"
got=$(lab_ssh "$work/lab_key" sudo -n -l 2>/dev/null |
	sed -n '/may run the following commands/,$p' | tail -n +2 | sed 's/^[[:space:]]*//')
check_eq "sudo -n -l: exactly the allowed commands" "$got" "$want"
check "sudo -n true is refused" fails lab_ssh "$work/lab_key" sudo -n true
check "sudo -n -l reboot: allowed" quiet lab_ssh "$work/lab_key" sudo -n -l /usr/sbin/reboot
# what a built kernel's install runs (kdispatch-install.c), as it runs it
check "a kernel install's sudo -n install: allowed" quiet lab_ssh "$work/lab_key" \
	sudo -n -l install -m 0644 -- /tmp/x /boot/vmlinuz-6.1.0-bf00000000
check "... sudo -n tar: allowed" quiet lab_ssh "$work/lab_key" sudo -n -l tar --no-same-owner -C / -xzf /tmp/x
# (update-initramfs: in the line above; the host has no initramfs-tools for
# sudo -l to resolve it)
check "sudo -n -l reboot now: refused (no arguments allowed)" \
	fails lab_ssh "$work/lab_key" sudo -n -l /usr/sbin/reboot now
# sudo -l CMD needs CMD to exist.
[ ! -x /usr/sbin/kexec ] ||
	check "sudo -n -l kexec -e: allowed" quiet lab_ssh "$work/lab_key" sudo -n -l /usr/sbin/kexec -e
check_eq "known_hosts: the fleet's line for the host" "$(cat "$kh")" "$host_line"

# 2. Second run, trusting the scan (no --admin-known-hosts): nothing changes.
cp -p "$SUDOERS" "$work/sudoers.1"
cp -p "$home/.ssh/authorized_keys" "$work/ak.1"
cp -p "$kh" "$work/kh.1"
prov
check_eq "second run: exit status" "$?" 0
out=$(cat "$work/out")
check_contains "second run: nothing to change" "$out" "nothing to change"
check "second run: no 'changed:' line" fails grep -q "changed:" "$work/out"
check_eq "second run: one copy of the key" \
	"$(grep -cF -e "$(awk '{print $2}' "$work/lab_key.pub")" "$home/.ssh/authorized_keys")" 1
check "second run: sudoers unchanged byte for byte" cmp -s "$SUDOERS" "$work/sudoers.1"
check_eq "second run: sudoers not rewritten (mtime)" \
	"$(stat -c %Y "$SUDOERS")" "$(stat -c %Y "$work/sudoers.1")"
check "second run: authorized_keys unchanged" cmp -s "$home/.ssh/authorized_keys" "$work/ak.1"
check "second run: known_hosts unchanged" cmp -s "$kh" "$work/kh.1"

# 3. Hostile values. A key comment travels quoted (%q) and stays data.
pw=/tmp/bfpv-pwned.$$
rm -f "$pw" "$pw.2" "$pw.3"
printf '%s %s %s\n' "$(awk '{print $1}' "$work/lab_key.pub")" "$(awk '{print $2}' "$work/lab_key.pub")" \
	"x'\$(touch $pw.2)'\"; touch $pw.3; \`touch $pw.3\`" >"$work/hostile.pub"
"$PROV" --host "$addr" --admin-user root --admin-key "$fleet/client_key" --lab-user "$LAB" \
	--lab-key "$work/hostile.pub" --known-hosts "$kh" >"$work/out" 2>&1
check_eq "hostile key comment: exit status" "$?" 0
check "hostile key comment: nothing ran" test ! -e "$pw.2" -a ! -e "$pw.3"
check "hostile key comment: authorized_keys unchanged (same key)" \
	cmp -s "$home/.ssh/authorized_keys" "$work/ak.1"

"$PROV" --host "$addr" --admin-user root --admin-key "$fleet/client_key" \
	--lab-user "x;touch $pw" --lab-key "$work/lab_key.pub" --known-hosts "$kh" >"$work/out" 2>&1
check_eq "hostile --lab-user: usage error" "$?" 2
check_contains "hostile --lab-user: says why" "$(cat "$work/out")" "is not a user name"
check "hostile --lab-user: no file made" test ! -e "$pw"
check "hostile --lab-user: no such user" fails getent passwd "x;touch $pw"
"$PROV" --host "-oProxyCommand=touch $pw" --admin-user root --admin-key "$fleet/client_key" \
	--lab-user "$LAB" --lab-key "$work/lab_key.pub" --known-hosts "$kh" >"$work/out" 2>&1
check_eq "hostile --host: usage error" "$?" 2
check "hostile --host: no file made" test ! -e "$pw"
"$PROV" --host "$addr" --admin-user root --admin-key "$fleet/client_key" --lab-user "$LAB" \
	--lab-key "$work/lab_key.pub" --known-hosts "$kh" --agent-remote "../../etc/x" >"$work/out" 2>&1
check_eq "hostile --agent-remote: usage error" "$?" 2
"$PROV" --host "$addr" --admin-user root >"$work/out" 2>&1
check_eq "missing arguments: usage error" "$?" 2
check_contains "missing arguments: names one" "$(cat "$work/out")" "--admin-key is required"
"$PROV" --host "$addr" --port 70000 --admin-user root --admin-key "$fleet/client_key" \
	--lab-user "$LAB" --lab-key "$work/lab_key.pub" --known-hosts "$kh" >"$work/out" 2>&1
check_eq "bad --port: usage error" "$?" 2
"$PROV" --host "$addr" --admin-user root --admin-key "$fleet/client_key" --lab-user "$LAB" \
	--lab-key "$work/lab_key" --known-hosts "$kh" >"$work/out" 2>&1
check_eq "private key as --lab-key: usage error" "$?" 2

# 4. Host key mismatches are refused and change nothing.
ssh-keygen -q -t ed25519 -N '' -f "$work/other_host_key"
printf '%s ssh-ed25519 %s\n' "$addr" "$(awk '{print $2}' "$work/other_host_key.pub")" >"$work/wrong_kh"
prov --admin-known-hosts "$work/wrong_kh"
check_eq "--admin-known-hosts mismatch: refused" "$?" 1
check_contains "--admin-known-hosts mismatch: says so" "$(cat "$work/out")" "host key mismatch"
check "--admin-known-hosts mismatch: known_hosts unchanged" cmp -s "$kh" "$work/kh.1"
cp "$work/wrong_kh" "$work/kh.wrong"
"$PROV" --host "$addr" --admin-user root --admin-key "$fleet/client_key" --lab-user "$LAB" \
	--lab-key "$work/lab_key.pub" --known-hosts "$work/kh.wrong" >"$work/out" 2>&1
check_eq "different key already pinned: refused" "$?" 1
check_contains "different key already pinned: says so" "$(cat "$work/out")" "different ssh-ed25519 key"
check "different key already pinned: file unchanged" cmp -s "$work/kh.wrong" "$work/wrong_kh"
check "after all runs: sudoers still unchanged" cmp -s "$SUDOERS" "$work/sudoers.1"

# 5. The provisioned machine runs a job as the lab user: benchfleetd runs the
# agent through sudo -n by its absolute path (the sudoers line), so a knob
# only root may write is applied and read back. THP goes to a value other
# than the current one; the agent restores it at the end of the step.
thp_now=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)
want=madvise; [ "$thp_now" = madvise ] && want=never
start_daemon "$work" --known-hosts "$kh" || exit 1
defer stop_daemon
r=$(api POST /api/v1/machines "{\"name\":\"bfpv1\",\"host\":\"$addr\",\"user\":\"$LAB\",\"key\":\"$work/lab_key\",\"class\":\"pv\"}")
check_eq "register the provisioned machine" "$(status_of "$r")" 201
r=$(api POST /api/v1/jobs "{\"recipe\":\"cpu-loop\",\"preset\":\"test\",\"machines\":{\"names\":[\"bfpv1\"]},
	\"knobs\":{\"thp_enabled\":\"$want\"},\"repetitions\":{\"iterations\":1}}")
check_eq "submit as the lab user" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
check_eq "the job ran" "$(wait_job "$id" 120)" done
runs=$(curl -fsS "$URL/api/v1/jobs/$id/runs")
check_eq "the knob was written as root and read back" \
	"$(jq -r '.runs[0].knobs.after.thp_enabled // .runs[0].knobs.after.thp_enabled_value // empty' <<<"$runs")" "$want"
check_eq "THP restored after the step" \
	"$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)" "$thp_now"
check "the agent lives in the lab user's home" test -x "$home/.benchfleet/benchfleet-agent"
stop_daemon
check_sanitizers "$work/daemon.log"

finish
