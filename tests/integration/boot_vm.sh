#!/bin/bash
# boot_vm.sh: coordinator/boot.c (through bf-boot-check) against a real
# QEMU VM built by tests/vm/build-guest: kexec into the 6.12 backports
# kernel with `nokaslr transparent_hugepage=never` and back to 6.1, no
# reboot for the booted config, SFTP upload to dropbear, a VM frozen during
# the boot wait (SSH attempts hang), a hung boot (panic=0) and a panicking
# boot that falls back to QEMU's default kernel, both recovered by a power
# cycle over the QEMU monitor (a power profile of the --config file), a
# kexec that cannot load, and config validation: commands are profiles,
# never argv or shell text in the machine's config. Prints time to SSH and
# the kexec round trips.
# The guest is cached in $BF_VM_GUEST (default /var/tmp/benchfleet-vm-guest),
# so reruns skip the build; from scratch it takes ~2.5 min.
set -u

: "${BF_SRC:?BF_SRC must be set}" "${BF_BUILD:?BF_BUILD must be set}"
. "$BF_SRC/tests/lib/common.sh"
CHECK=$BF_BUILD/bin/bf-boot-check
SSHC=$BF_BUILD/bin/bf-ssh-check
VM=$BF_SRC/tests/vm/vm
GUEST=${BF_VM_GUEST:-/var/tmp/benchfleet-vm-guest}
[ -x "$CHECK" ] && [ -x "$SSHC" ] || { echo "FAIL: bf-boot-check/bf-ssh-check not built" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "FAIL: needs root (apt-get download, mkfs of the guest)" >&2; exit 1; }

# Host tools of the guest build and the VM (Debian packages).
need=()
for p in qemu-system-x86 kmod cpio e2fsprogs xz-utils zstd openssh-client bc; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "boot_vm: installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
		--no-install-recommends "${need[@]}" >/dev/null || { echo "FAIL: apt-get install" >&2; exit 1; }
fi

W=$(mktemp -d /tmp/bf-boot-vm.XXXXXX)
LOG=$W/boot-check.log
defer "rm -rf '$W'"
now() { date +%s.%N; }
since() { printf '%.1f' "$(echo "$(now) - $1" | bc)"; }

t0=$(now)
"$BF_SRC/tests/vm/build-guest" "$GUEST" || { echo "FAIL: build-guest" >&2; exit 1; }
echo "boot_vm: guest ready in $(since "$t0") s ($GUEST)"
. "$GUEST/out/guest.env"
K61=$KERNEL_61 K612=$KERNEL_612

PORT=$(free_port) || { echo "FAIL: no free port" >&2; exit 1; }
NAME=bt$$
defer "'$VM' stop '$GUEST' '$NAME'; rm -rf '$GUEST/vms/$NAME'"
t0=$(now)
"$VM" start "$GUEST" "$NAME" --port "$PORT" --timeout 240 ||
	{ echo "FAIL: VM did not come up" >&2; tail -n 30 "$GUEST/vms/$NAME/serial" >&2; exit 1; }
KEY=$GUEST/out/client_key
KH=$GUEST/vms/$NAME/known_hosts

kernels() { # kernels [EXTRA_RELEASE IMAGE]
	printf '"%s":{"image":"/boot/vmlinuz-%s","initrd":"/boot/initrd.img-%s"},' "$K61" "$K61" "$K61"
	printf '"%s":{"image":"/boot/vmlinuz-%s","initrd":"/boot/initrd.img-%s"}' "$K612" "$K612" "$K612"
	[ $# -eq 2 ] && printf ',"%s":{"image":"%s"}' "$1" "$2"
}
# The daemon's config declares the commands; a machine's config names them.
PROFILES=$W/benchfleetd.conf
cat >"$PROFILES" <<EOF
power.qemu = '$VM' power-cycle '$GUEST' '$NAME'
boot-command.lab = /usr/local/sbin/lab-boot {kernel} --args {cmdline} --append={cmdline}
EOF
config() { # config FILE TIMEOUT_S [EXTRA_RELEASE IMAGE]
	local f=$1 tmo=$2
	shift 2
	printf '{"method":"kexec","kernels":{%s},"cmdline_base":"console=ttyS0 panic=-1 quiet","timeout_s":%s,"power_cycle":"qemu"}\n' \
		"$(kernels "$@")" "$tmo" >"$f"
}
CFG=$W/boot.json
config "$CFG" 180
CFG_HANG=$W/boot-hang.json
config "$CFG_HANG" 45 9.9.9-nope /boot/vmlinuz-9.9.9-nope

R=$W/res.json
# libssh2 1.10 leaks 2 small blocks when a handshake times out (the VM
# frozen below): tests/lib/lsan.supp, set by common.sh, suppresses it.
ensure() { # ensure CONFIG KERNEL CMDLINE -> $R
	echo "--- ensure $2 \"$3\"" >>"$LOG"
	timeout 600 "$CHECK" --config "$PROFILES" ensure 127.0.0.1 "$PORT" root "$KEY" "$KH" "$1" "$2" "$3" >"$R" 2>>"$LOG"
	cat "$R" >>"$LOG"
}
jf() { jq -r "$1" "$R"; }
remote() { timeout 60 "$SSHC" exec 127.0.0.1 "$PORT" root "$KEY" "$KH" "$1" 2>/dev/null; }

# 0. SFTP to dropbear (it execs openssh-sftp-server's sftp-server).
head -c 300000 /dev/urandom >"$W/blob"
if timeout 60 "$SSHC" upload 127.0.0.1 "$PORT" root "$KEY" "$KH" "$W/blob" .benchfleet/blob 0755 \
    >/dev/null 2>>"$LOG"; then
	check_eq "uploaded file's sha256" "$(remote 'sha256sum .benchfleet/blob' | sed -n 's/^1 \([0-9a-f]*\) .*/\1/p')" \
		"$(sha256sum "$W/blob" | cut -d' ' -f1)"
else
	fail "ssh_upload to the guest: $(tail -n 2 "$LOG")"
fi

# 1. kexec 6.1 -> 6.12 with nokaslr transparent_hugepage=never.
ensure "$CFG" "$K612" "nokaslr transparent_hugepage=never"
check_eq "6.12: state" "$(jf .state)" ok
check_eq "6.12: uname -r" "$(jf .kernel)" "$K612"
check_contains "6.12: cmdline has nokaslr" " $(jf .cmdline) " " nokaslr "
check_contains "6.12: cmdline has thp=never" " $(jf .cmdline) " " transparent_hugepage=never "
check "6.12: boot_id changed" [ "$(jf .boot_id)" != "$(jf .prev_boot_id)" ]
check_eq "6.12: rebooted" "$(jf .rebooted)" true
check_eq "6.12: not power-cycled" "$(jf .power_cycled)" false
T_612=$(jf .ssh_seconds)
check_eq "6.12: mTHP 64kB enabled exists" \
	"$(remote 'test -f /sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled && echo yes')" $'1 yes\nexit 0'
check_contains "6.12: THP is never" "$(remote 'cat /sys/kernel/mm/transparent_hugepage/enabled')" "[never]"
check_contains "6.12: nokaslr: _text at ffffffff81000000" \
	"$(remote "grep ' _text\$' /proc/kallsyms")" "ffffffff81000000"

# 2. back to 6.1 without nokaslr.
ensure "$CFG" "$K61" ""
check_eq "6.1: state" "$(jf .state)" ok
check_eq "6.1: uname -r" "$(jf .kernel)" "$K61"
check "6.1: no nokaslr in cmdline" bash -c "! grep -qw nokaslr <<<'$(jf .cmdline)'"
check "6.1: boot_id changed" [ "$(jf .boot_id)" != "$(jf .prev_boot_id)" ]
T_61=$(jf .ssh_seconds)

# 3. the booted config again: no reboot.
ensure "$CFG" "$K61" ""
check_eq "same config: state" "$(jf .state)" ok
check_eq "same config: not rebooted" "$(jf .rebooted)" false
check_eq "same config: boot_id unchanged" "$(jf .boot_id)" "$(jf .prev_boot_id)"

# 3b. the same config with boot_hooks.fresh: a fresh boot all the same.
BF_BOOT_FRESH=1 ensure "$CFG" "$K61" ""
check_eq "fresh boot: state" "$(jf .state)" ok
check_eq "fresh boot: rebooted" "$(jf .rebooted)" true
check "fresh boot: boot_id changed" [ "$(jf .boot_id)" != "$(jf .prev_boot_id)" ]

# 4. the VM freezes during the boot wait: SSH attempts hang, then it resumes.
( sleep 2; "$VM" monitor "$GUEST" "$NAME" stop; sleep 15; "$VM" monitor "$GUEST" "$NAME" cont ) &
freezer=$!
ensure "$CFG" "$K612" "nokaslr"
wait $freezer
check_eq "frozen wait: state" "$(jf .state)" ok
check_eq "frozen wait: uname -r" "$(jf .kernel)" "$K612"
check "frozen wait: more than one SSH attempt ($(jf .attempts))" [ "$(jf .attempts)" -ge 2 ]
check "frozen wait: took the freeze into account ($(jf .ssh_seconds) s)" \
	[ "$(echo "$(jf .ssh_seconds) > 15" | bc)" = 1 ]

# 5. a hung boot (panic=0 holds the panic): timeout, power cycle, back on
# QEMU's default kernel (6.1), boot-failed with the reason.
ensure "$CFG_HANG" "$K612" "rdinit=/nonexistent panic=0"
check_eq "hung boot: state" "$(jf .state)" boot-failed
check_eq "hung boot: rc" "$(jf .rc)" BF_ERR_TIMEOUT
check_eq "hung boot: power-cycled" "$(jf .power_cycled)" true
check_eq "hung boot: power-cycle status" "$(jf .power_cycle_status)" 0
check_eq "hung boot: recovered" "$(jf .recovered)" true
check_eq "hung boot: back on the default kernel" "$(jf .kernel)" "$K61"
check_contains "hung boot: reason" "$(jf .reason)" "no verified boot within 45 s"
check_eq "hung boot: connection handed back" "$(jf .connected)" true

# 6. a panicking boot (no init, no root: panic=-1 reboots at once) comes
# back on QEMU's default kernel, as a one-shot boot falls back: the check
# fails, power cycle, boot-failed. The long timeout lets the fallback boot
# finish under a loaded TCG host.
ensure "$CFG" "$K612" "rdinit=/nonexistent"
check_eq "fallback boot: state" "$(jf .state)" boot-failed
check_eq "fallback boot: rc" "$(jf .rc)" BF_ERR_STATE
check_contains "fallback boot: reason" "$(jf .reason)" "booted kernel $K61, not $K612"
check_eq "fallback boot: power-cycled" "$(jf .power_cycled)" true
check_eq "fallback boot: recovered on 6.1" "$(jf .recovered) $(jf .kernel)" "true $K61"

# 7. an image that does not exist: kexec -l fails, nothing reboots.
ensure "$CFG_HANG" 9.9.9-nope ""
check_eq "missing image: state" "$(jf .state)" boot-failed
check_eq "missing image: rc" "$(jf .rc)" BF_ERR_STATE
check_eq "missing image: no reboot, no power cycle" "$(jf .rebooted) $(jf .power_cycled)" "false false"
check_eq "missing image: boot_id unchanged" "$(jf .boot_id)" "$(jf .prev_boot_id)"
check_contains "missing image: reason" "$(jf .reason)" "kexec reboot command exited 3"

# 8. requests refused before anything runs.
ensure "$CFG" 7.0.0-unknown ""
check_eq "unknown kernel: rc" "$(jf .rc)" BF_ERR_NOTFOUND
ensure "$CFG" "$K61" "init=/bin/sh'; reboot"
check_eq "quote in cmdline: rc" "$(jf .rc)" BF_ERR_INVALID

# 9. config validation names the field; every word of a boot-command
# profile is one shquote()d word; commands only as profiles.
bad() { # bad JSON WANT
	printf '%s' "$1" >"$W/bad.json"
	check_contains "config $1" "$("$CHECK" --config "$PROFILES" parse "$W/bad.json")" "$2"
}
bad '{"method":"kexek","kernels":{"a":{"image":"/x"}}}' 'boot.method: "kexek" is not one of kexec, grub-reboot, grubby, command'
bad '{"method":"kexec","kernels":{"6.1":{"image":"vmlinuz"}}}' 'boot.kernels.6.1.image: "vmlinuz" is not an absolute path'
bad '{"method":"kexec","kernels":{"6.1":{}}}' 'boot.kernels.6.1.image: is required'
bad '{"method":"kexec","kernels":{"a b":{"image":"/x"}}}' 'boot.kernels: "a b" is not a kernel release'
bad '{"method":"kexec","kernels":{"6.1":{"image":"/x"}},"timeout_s":1}' 'boot.timeout_s'
bad '{"method":"kexec","kernels":{"6.1":{"image":"/x"}},"power_cycle":[]}' 'boot.power_cycle'
bad '{"method":"kexec","kernels":{"6.1":{"image":"/x"}},"power_cycle":["touch","/tmp/bf-boot-vm-marker"]}' \
	'boot.power_cycle: must name a power profile, not give a command (an array)'
bad '{"method":"kexec","kernels":{"6.1":{"image":"/x"}},"power_cycle":"ipmi-z"}' \
	"boot.power_cycle: no power profile \"ipmi-z\" in the daemon's config (it declares qemu)"
bad '{"method":"command"}' 'boot.command: is required'
bad '{"method":"command","command":"/usr/local/sbin/lab-boot {kernel} \"{cmdline}\""}' \
	'boot.command: must name a boot-command profile, not give a command (a command line)'
bad '{"method":"kexec","kernels":{"6.1":{"image":"/x"}},"bogus":1}' 'boot.bogus: unknown key'
check "no marker from a refused power_cycle argv" [ ! -e /tmp/bf-boot-vm-marker ]
printf '%s' '{"method":"command","command":"lab"}' >"$W/cmd.json"
check_eq "command slots" "$("$CHECK" --config "$PROFILES" command "$W/cmd.json" 6.1.0-x 'a=b c')" \
	"'/usr/local/sbin/lab-boot' '6.1.0-x' '--args' 'a=b c' '--append=a=b c'"
check_contains "cmdline with shell syntax refused" \
	"$("$CHECK" --config "$PROFILES" command "$W/cmd.json" 6.1 'x$(touch /tmp/bf-boot-vm-marker)')" \
	"BF_ERR_INVALID: cmdline: byte 1 (0x24) is not allowed"
# finding 9: "{cmdline}" in double quotes used to put the value's $(...)
# in the machine's shell; such a template is refused now
printf '%s\n' 'boot-command.q = /usr/local/sbin/lab-boot "{cmdline}"' >"$W/q.conf"
check_contains "quoted slot refused" "$("$CHECK" --config "$W/q.conf" parse "$W/cmd.json")" \
	"q.conf:1: boot-command.q: word 2: '\"' is not quoting here"
printf '%s\n' "boot-command.q = /usr/local/sbin/lab-boot '{cmdline}'" >"$W/q.conf"
check_contains "single-quoted slot refused" "$("$CHECK" --config "$W/q.conf" parse "$W/cmd.json")" \
	"q.conf:1: boot-command.q: word 2: slot {cmdline} inside quotes"
printf '%s' '{"method":"kexec","kernels":{"6.1":{"image":"/boot/it'"'"'s","initrd":"/boot/$(reboot)"}},"kexec_exec":"systemctl","sudo":true}' >"$W/q.json"
check_eq "kexec quoting" "$("$CHECK" command "$W/q.json" 6.1 'nokaslr')" \
	"sudo -n kexec -l '/boot/it'\\''s' --initrd='/boot/\$(reboot)' --append='nokaslr' || exit 3; setsid sh -c 'sleep 0.3; sudo -n systemctl kexec' >/dev/null 2>&1 </dev/null &"
printf '%s' '{"method":"grub-reboot","kernels":{"6.1":{"grub_entry":"Advanced>Debian 6.1"}}}' >"$W/g.json"
check_contains "grub-reboot entry" "$("$CHECK" command "$W/g.json" 6.1 '')" "grub-reboot 'Advanced>Debian 6.1' || exit 3"

check_sanitizers "$LOG"
if [ "$T_FAILS" != 0 ]; then
	echo "--- last lines of the boot-check log"; tail -n 60 "$LOG"
	echo "--- serial"; grep -a -v '^\s*$' "$GUEST/vms/$NAME/serial" | tail -n 40
fi
echo "boot_vm: kexec 6.1 -> 6.12 (kexec -l to verified SSH): $T_612 s; 6.12 -> 6.1: $T_61 s; accel $(cat "$GUEST/vms/$NAME/accel")"
finish
