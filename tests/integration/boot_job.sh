#!/usr/bin/env bash
# Boot control through the whole system, on two real QEMU VMs (tests/vm):
# a job with matrix cmdline ["", "nokaslr"] x thp [never, always] x 2
# boots, interleaved; a job over two kernels (Debian 6.1 and the 6.12
# backports kernel); a boot that panics; quarantine after boot failures. The
# coordinator kexecs the VM for every boot, verifies uname -r,
# /proc/cmdline and a new boot_id, re-uploads the agent to the fresh
# initramfs, and stores the booted kernel and boot_id with each run.
# A machine without a boot configuration is refused at submit.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

VM=$BF_SRC/tests/vm/vm
GUEST=${BF_VM_GUEST:-/var/tmp/benchfleet-vm-guest}
"$BF_SRC/tests/vm/build-guest" "$GUEST" >/dev/null || { echo "FAIL: build-guest"; exit 1; }
. "$GUEST/out/guest.env"
work=$(mktemp -d /tmp/bf-bootjob.XXXXXX)
defer "rm -rf '$work'"
port1=$(free_port)
port2=$(free_port)
N1=bja$$ N2=bjb$$
defer "'$VM' stop '$GUEST' '$N1' >/dev/null 2>&1; rm -rf '$GUEST/vms/$N1'"
defer "'$VM' stop '$GUEST' '$N2' >/dev/null 2>&1; rm -rf '$GUEST/vms/$N2'"
"$VM" start "$GUEST" "$N1" --port "$port1" --timeout 240 || { echo "FAIL: VM 1 did not come up"; exit 1; }
"$VM" start "$GUEST" "$N2" --port "$port2" --timeout 240 || { echo "FAIL: VM 2 did not come up"; exit 1; }
cat "$GUEST/vms/$N1/known_hosts" "$GUEST/vms/$N2/known_hosts" > "$work/known_hosts"
# The power-cycle commands are profiles of the daemon's config, one per VM;
# a machine's boot config names its profile.
cat >"$work/benchfleetd.conf" <<EOF
power.$N1 = '$VM' power-cycle '$GUEST' '$N1'
power.$N2 = '$VM' power-cycle '$GUEST' '$N2'
EOF
start_daemon "$work" --config "$work/benchfleetd.conf" --known-hosts "$work/known_hosts" \
	--boot-failures 2 || exit 1
defer stop_daemon
# SQL for both stores (tests/lib/common.sh): ax KEY is the text of
# axes.KEY; has COL NEEDLE is true where COL contains the SQL text NEEDLE.
ax() { bf_json "$work" axes "$1"; }
has() { printf "(length(%s) > length(replace(%s, %s, '')))" "$1" "$1" "$2"; }

bootcfg() { # bootcfg VMNAME [EXTRA_RELEASE IMAGE]
	jq -n --arg k1 "$KERNEL_61" --arg k2 "$KERNEL_612" --arg n "$1" \
		--arg xr "${2:-}" --arg xi "${3:-}" '{
	method: "kexec",
	kernels: ({($k1): {image: ("/boot/vmlinuz-" + $k1), initrd: ("/boot/initrd.img-" + $k1)},
	          ($k2): {image: ("/boot/vmlinuz-" + $k2), initrd: ("/boot/initrd.img-" + $k2)}}
	          + (if $xr != "" then {($xr): {image: $xi}} else {} end)),
	cmdline_base: "console=ttyS0 panic=-1 quiet", timeout_s: 180,
	power_cycle: $n}'
}
register() { # register NAME PORT CLASS VMNAME [EXTRA_RELEASE IMAGE]
	api POST /api/v1/machines "$(jq -n --arg name "$1" --arg p "$2" --arg c "$3" \
		--arg k "$GUEST/out/client_key" --argjson b "$(bootcfg "$4" "${5:-}" "${6:-}")" \
		'{name:$name, host:"127.0.0.1", port:($p|tonumber), user:"root", key:$k, class:$c, boot:$b}')"
}
r=$(register vm1 "$port1" vm "$N1")
check_eq "register VM 1 with its boot configuration" "$(status_of "$r")" 201
r=$(register vm2 "$port2" vm "$N2")
check_eq "register VM 2" "$(status_of "$r")" 201
check_eq "the view names the power profile" "$(curl -fsS "$URL/api/v1/machines/vm1" | jq -r .boot.power_cycle)" "$N1"
check "no command in the machine views" bash -c "! curl -fsS '$URL/api/v1/machines' | grep -qF -e '$VM'"
r=$(api POST /api/v1/machines '{"name":"vmbad","host":"127.0.0.1","port":1,"key":"/etc/hostname","boot":{"method":"teleport"}}')
check_eq "bad boot method refused" "$(status_of "$r")" 400
check_contains "bad boot method named" "$(body_of "$r")" "boot.method"

# cmdline ["", "nokaslr"] x thp [never, always] x 2 boots on 2 VMs,
# interleaved. A boot serves both THP cells (a knob needs no reboot), so
# the minimum is 2 cmdlines x 2 boots = 4 reboots.
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"class":"vm"},
	"matrix":{"cmdline":["","nokaslr"],"thp_enabled":["never","always"]},
	"boot":{"cmdline_base":"transparent_hugepage=madvise"},
	"repetitions":{"iterations":2,"boots":2},"order":"interleaved"}')
check_eq "submit cmdline x thp job" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
t0=$(date +%s.%N)
check_eq "cmdline x thp job" "$(wait_job "$id" 900)" done
echo "8 runs on 2 VMs took $(echo "$(date +%s.%N) - $t0" | bc) s"
echo "id|machine|boot|cmdline|thp|boot_id|attempt|t"
bf_sql "$work" "select id, machine, boot, $(ax cmdline), $(ax thp_enabled), substr(boot_id,1,8), attempt,
	round(cast(started_at - (select min(started_at) from runs where job_id=$id) as numeric), 2)
	from runs where job_id=$id order by started_at"

check_eq "8 runs done" "$(bf_sql "$work" "select count(*) from runs where job_id=$id and state='done'")" 8
check_eq "both VMs used" "$(bf_sql "$work" "select count(distinct machine) from runs where job_id=$id")" 2
check_eq "reboots = the minimum: 4 boots for 2 cmdlines x 2 boots" \
	"$(bf_sql "$work" "select count(distinct boot_id) from runs where job_id=$id")" 4
check_eq "one boot per (cmdline, boot): both THP cells share it" \
	"$(bf_sql "$work" "select count(*) from (select count(distinct boot_id) n from runs where job_id=$id group by $(ax cmdline), boot) g where n = 1")" 4
check_eq "every run's /proc/cmdline matches its cell" \
	"$(bf_sql "$work" "select count(*) from runs where job_id=$id and
		$(has cmdline "'nokaslr'") = ($(ax cmdline) = 'nokaslr')
		and $(has cmdline "'transparent_hugepage=madvise'")
		and $(has cmdline "'benchfleet.boot=' || job_id || '.' || boot")")" 8
check_eq "THP read back per cell" \
	"$(bf_sql "$work" "select count(*) from runs where job_id=$id and $(bf_json "$work" knob_state after.thp_enabled) = $(ax thp_enabled)")" 8
check_eq "interleaved: no machine runs a boot 1 before a boot 0" \
	"$(bf_sql "$work" "select count(*) from runs a join runs b on a.machine = b.machine and a.job_id = b.job_id
		where a.job_id=$id and a.started_at < b.started_at and a.boot > b.boot")" 0
logs=$(bf_sql "$work" "select l.line from run_logs l join runs r on r.id=l.run_id where r.job_id=$id and l.stream='coord' order by l.run_id, l.seq")
check_contains "boot logged" "$logs" "kexec into"
check_eq "samples of every run" \
	"$(bf_sql "$work" "select count(*) from samples s join runs r on r.id=s.run_id where r.job_id=$id and s.metric='wall_s'")" 16

# Two kernels.
r=$(api POST /api/v1/jobs "{\"recipe\":\"cpu-loop\",\"preset\":\"test\",\"machines\":{\"names\":[\"vm1\"]},
	\"matrix\":{\"kernel\":[\"$KERNEL_61\",\"$KERNEL_612\"]},\"repetitions\":{\"iterations\":1}}")
check_eq "submit kernel job" "$(status_of "$r")" 201
kid=$(body_of "$r" | jq -r .id)
check_eq "kernel job" "$(wait_job "$kid" 600)" done
check_eq "each run on its kernel" \
	"$(bf_sql "$work" "select count(*) from runs where job_id=$kid and kernel = $(ax kernel)")" 2
# the fingerprint each run carries was probed after its boot: its kernel
# is the run's (a probe taken only at connect would say the first kernel)
nfp=$(bf_sql "$work" "select count(*) from runs r join fingerprints f on f.sha256 = r.fingerprint_doc_sha256 where r.job_id=$kid and $(bf_json "$work" f.json kernel) = r.kernel")
check_eq "each run's fingerprint of its own kernel" "$nfp" 2
if [ "$nfp" != 2 ]; then
	bf_sql "$work" "select r.id, r.machine, r.kernel, r.fingerprint_doc_sha256, $(bf_json "$work" f.json kernel) from runs r left join fingerprints f on f.sha256 = r.fingerprint_doc_sha256 where r.job_id=$kid" >&2
	for rid in $(bf_sql "$work" "select id from runs where job_id=$kid"); do
		curl -fsS "$URL/api/v1/runs/$rid/log?limit=2000" |
			jq -r --arg r "$rid" '.lines[] | select(.stream == "coord" or .stream == "agent") | "run \($r) \(.stream): \(.line)"' | cut -c1-300 >&2
	done
fi
rep=$(curl -fsS "$URL/api/v1/jobs/$kid/report?baseline=kernel:$KERNEL_61")
check_contains "report: kernels in the legend" "$rep" "$KERNEL_612"

# Refusals at submit: a kernel the machine lacks; a machine that cannot boot.
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"names":["vm1"]},"kernel":"9.9.9"}')
check_eq "unknown kernel refused" "$(status_of "$r")" 400
check_contains "unknown kernel named" "$(body_of "$r")" "9.9.9"
api POST /api/v1/machines "{\"name\":\"noboot\",\"host\":\"127.0.0.1\",\"port\":$port1,\"key\":\"$GUEST/out/client_key\",\"class\":\"nb\"}" >/dev/null
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"class":"nb"},"cmdline":"nokaslr"}')
check_eq "no boot configuration refused" "$(status_of "$r")" 400
check_contains "the machine is named" "$(body_of "$r")" "noboot"
# A boot that panics (no init in the initramfs; panic=-1 reboots into QEMU's
# default kernel and command line): the run is boot-failed with the reason,
# the power cycle ran, the machine is back on the default kernel, and the
# job's other run completes.
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["vm1"]},
	"matrix":{"cmdline":["","rdinit=/nonexistent"]},"repetitions":{"iterations":1}}')
fid=$(body_of "$r" | jq -r .id)
check_eq "panicking boot: the job ends failed" "$(wait_job "$fid" 600)" failed
bad=$(bf_sql "$work" "select id from runs where job_id=$fid and $(ax cmdline)='rdinit=/nonexistent'")
check_eq "panicking boot: run boot-failed" "$(bf_sql "$work" "select state from runs where id=$bad")" boot-failed
check_contains "panicking boot: reason stored" "$(bf_sql "$work" "select error from runs where id=$bad")" "boot-failed:"
check_contains "panicking boot: power cycle ran" \
	"$(bf_sql "$work" "select line from run_logs where run_id=$bad and stream='coord' order by seq")" '"power_cycled":true'
check_eq "panicking boot: the other run done" \
	"$(bf_sql "$work" "select state from runs where job_id=$fid and $(ax cmdline)=''")" done
check_eq "back on the default kernel" "$("$VM" ssh "$GUEST" "$N1" uname -r)" "$KERNEL_61"

# Two boot failures in a row (an image that is not there: kexec cannot
# load it) quarantine the machine; an admin clears it.
r=$(register vmq "$port2" q "$N2" 9.9.9-nope /boot/vmlinuz-9.9.9-nope)
check_eq "register a machine with a broken kernel" "$(status_of "$r")" 201
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["vmq"]},
	"kernel":"9.9.9-nope","matrix":{"loops":[1000000,2000000,3000000]},"repetitions":{"iterations":1}}')
qid=$(body_of "$r" | jq -r .id)
for _ in $(seq 300); do
	[ "$(curl -fsS "$URL/api/v1/machines/vmq" | jq -r .state)" = quarantined ] && break
	sleep 0.2
done
check_eq "quarantined after 2 boot failures" "$(curl -fsS "$URL/api/v1/machines/vmq" | jq -r .state)" quarantined
check_eq "2 runs boot-failed, the third not taken" \
	"$(bf_sql "$work" "select state from runs where job_id=$qid order by id" | joined ,)" "boot-failed,boot-failed,queued"
r=$(api POST /api/v1/machines/vmq/clear '')
check_eq "admin clears the quarantine" "$(status_of "$r")" 200
api POST "/api/v1/jobs/$qid/cancel" '' >/dev/null
stop_daemon
check_sanitizers "$work/daemon.log"
finish
