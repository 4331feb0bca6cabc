#!/usr/bin/env bash
# Boot control through the whole system, on a real QEMU VM (tests/vm):
# a job with matrix cmdline ["", "nokaslr"] x 2 boots, interleaved, and a
# job over two kernels (Debian 6.1 and the 6.12 backports kernel). The
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
port=$(for p in $(shuf -i 20000-60000 -n 100); do ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; break; }; done)
NAME=bj$$
defer "'$VM' stop '$GUEST' '$NAME' >/dev/null 2>&1; rm -rf '$GUEST/vms/$NAME'"
"$VM" start "$GUEST" "$NAME" --port "$port" --timeout 240 || { echo "FAIL: VM did not come up"; exit 1; }
# host key pinned as [127.0.0.1]:port
start_daemon "$work" --known-hosts "$GUEST/vms/$NAME/known_hosts" || exit 1
defer stop_daemon
db=$work/bf.db

boot=$(jq -n --arg k1 "$KERNEL_61" --arg k2 "$KERNEL_612" --arg vm "$VM" --arg g "$GUEST" --arg n "$NAME" '{
	method: "kexec",
	kernels: {($k1): {image: ("/boot/vmlinuz-" + $k1), initrd: ("/boot/initrd.img-" + $k1)},
	          ($k2): {image: ("/boot/vmlinuz-" + $k2), initrd: ("/boot/initrd.img-" + $k2)}},
	cmdline_base: "console=ttyS0 panic=-1 quiet", timeout_s: 180,
	power_cycle: [$vm, "power-cycle", $g, $n]}')
r=$(api POST /api/v1/machines "$(jq -n --arg p "$port" --arg k "$GUEST/out/client_key" --argjson b "$boot" \
	'{name:"vm1", host:"127.0.0.1", port:($p|tonumber), user:"root", key:$k, class:"vm", boot:$b}')")
check_eq "register the VM with its boot configuration" "$(status_of "$r")" 201
r=$(api POST /api/v1/machines '{"name":"vmbad","host":"127.0.0.1","port":1,"key":"/etc/hostname","boot":{"method":"teleport"}}')
check_eq "bad boot method refused" "$(status_of "$r")" 400
check_contains "bad boot method named" "$(body_of "$r")" "boot.method"

# 2 configurations x 2 boots, interleaved: A B A B, a fresh boot each.
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["vm1"]},
	"matrix":{"cmdline":["","nokaslr"]},"boot":{"cmdline_base":"transparent_hugepage=madvise"},
	"repetitions":{"iterations":2,"boots":2},"order":"interleaved"}')
check_eq "submit cmdline job" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
t0=$(date +%s.%N)
check_eq "cmdline job" "$(wait_job "$id" 600)" done
echo "4 boots and 4 runs took $(echo "$(date +%s.%N) - $t0" | bc) s"
check_eq "4 runs done" "$(sqlite3 "$db" "select count(*) from runs where job_id=$id and state='done'")" 4
check_eq "a fresh boot per run: 4 distinct boot_ids" \
	"$(sqlite3 "$db" "select count(distinct boot_id) from runs where job_id=$id")" 4
check_eq "interleaved: A B A B" \
	"$(sqlite3 "$db" "select group_concat(c, ' ') from (select coalesce(nullif(json_extract(axes,'\$.cmdline'),''),'-') c from runs where job_id=$id order by started_at)")" \
	"- nokaslr - nokaslr"
logs=$(sqlite3 "$db" "select group_concat(line, char(10)) from run_logs l join runs r on r.id=l.run_id where r.job_id=$id and l.stream='coord'")
check_contains "boot logged" "$logs" "kexec into"
nk=$(sqlite3 "$db" "select id from runs where job_id=$id and json_extract(axes,'\$.cmdline')='nokaslr' limit 1")
check_contains "nokaslr run booted with nokaslr" \
	"$(sqlite3 "$db" "select group_concat(line) from run_logs where run_id=$nk and stream='coord'")" "nokaslr"
check_eq "samples of every run" \
	"$(sqlite3 "$db" "select count(*) from samples s join runs r on r.id=s.run_id where r.job_id=$id and s.metric='wall_s'")" 8

# Two kernels.
r=$(api POST /api/v1/jobs "{\"recipe\":\"cpu-loop\",\"preset\":\"test\",\"machines\":{\"names\":[\"vm1\"]},
	\"matrix\":{\"kernel\":[\"$KERNEL_61\",\"$KERNEL_612\"]},\"repetitions\":{\"iterations\":1}}")
check_eq "submit kernel job" "$(status_of "$r")" 201
kid=$(body_of "$r" | jq -r .id)
check_eq "kernel job" "$(wait_job "$kid" 600)" done
check_eq "each run on its kernel" \
	"$(sqlite3 "$db" "select count(*) from runs where job_id=$kid and kernel = json_extract(axes,'\$.kernel')")" 2
rep=$(curl -fsS "$URL/api/v1/jobs/$kid/report?baseline=kernel:$KERNEL_61")
check_contains "report: kernels in the legend" "$rep" "$KERNEL_612"

# Refusals at submit: a kernel the machine lacks; a machine that cannot boot.
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"names":["vm1"]},"kernel":"9.9.9"}')
check_eq "unknown kernel refused" "$(status_of "$r")" 400
check_contains "unknown kernel named" "$(body_of "$r")" "9.9.9"
api POST /api/v1/machines "{\"name\":\"noboot\",\"host\":\"127.0.0.1\",\"port\":$port,\"key\":\"$GUEST/out/client_key\",\"class\":\"nb\"}" >/dev/null
r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","machines":{"class":"nb"},"cmdline":"nokaslr"}')
check_eq "no boot configuration refused" "$(status_of "$r")" 400
check_contains "the machine is named" "$(body_of "$r")" "noboot"
stop_daemon
check_sanitizers "$work/daemon.log"
finish
