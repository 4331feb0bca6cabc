#!/usr/bin/env bash
# The coordinator uploads the agent built for the machine's architecture
# (uname -m). Two netns hosts whose `uname -m` says aarch64 and riscv64
# (a wrapper first on the PATH that sshd gives their sessions, SetEnv):
# the aarch64 one gets the cross-built agent, which runs under qemu-user
# (binfmt_misc) and reports aarch64; the riscv64 one is refused with the
# architectures we have.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

A64=$BIN/benchfleet-agent-aarch64
[ -x "$A64" ] || { echo "FAIL: $A64 not built (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"; exit 1; }
command -v qemu-aarch64-static >/dev/null || { echo "FAIL: qemu-user-static missing"; exit 1; }
BFM=/proc/sys/fs/binfmt_misc
[ -e $BFM/register ] || { mount -t binfmt_misc binfmt_misc $BFM && defer "umount $BFM"; }
if [ ! -e $BFM/qemu-aarch64 ]; then
	cat /usr/lib/binfmt.d/qemu-aarch64.conf >$BFM/register && defer "echo -1 >$BFM/qemu-aarch64"
fi
[ -e $BFM/qemu-aarch64 ] || { echo "FAIL: cannot register qemu-aarch64 with binfmt_misc"; exit 1; }

work=$(mktemp -d /tmp/bf-arch.XXXXXX)
defer "rm -rf '$work'"
fleet=$work/fleet
nf() { bash "$BF_SRC/tools/netns-fleet" "$@"; }
nf up --dir "$fleet" --hosts 2 --prefix bfq --subnet 10.94.0 --bridge bfbrq --force ||
	{ echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
for h in 1 2; do
	arch=$([ $h = 1 ] && echo aarch64 || echo riscv64)
	mkdir -p "$fleet/bfq$h/home/fakebin"
	printf '#!/bin/sh\nif [ "$1" = -m ]; then echo %s; else exec /bin/uname "$@"; fi\n' "$arch" \
		>"$fleet/bfq$h/home/fakebin/uname"
	chmod +x "$fleet/bfq$h/home/fakebin/uname"
	echo "SetEnv PATH=/root/fakebin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
		>>"$fleet/bfq$h/sshd_config"
	nf kill-sshd --dir "$fleet" "bfq$h" >/dev/null
	nf start-sshd --dir "$fleet" "bfq$h" >/dev/null || { echo "FAIL: sshd restart"; exit 1; }
done
start_daemon "$work" --known-hosts "$fleet/known_hosts" --agent-aarch64 "$A64" || exit 1
defer stop_daemon
while IFS=$'\t' read -r name addr port user key; do
	api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\"}" >/dev/null
done < "$fleet/hosts.tsv"

r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["bfq1"]},"repetitions":{"iterations":2}}')
id=$(body_of "$r" | jq -r .id)
check_eq "job on the aarch64 machine" "$(wait_job "$id" 180)" done
check_eq "the aarch64 agent was uploaded" \
	"$(sha256sum "$fleet/bfq1/home/.benchfleet/benchfleet-agent" | cut -c1-64)" "$(sha256sum "$A64" | cut -c1-64)"
check_eq "the agent reported aarch64" "$(curl -fsS "$URL/api/v1/machines/bfq1" | jq -r .arch)" aarch64
check_eq "samples from the aarch64 agent" \
	"$(curl -fsS "$URL/api/v1/jobs/$id/runs" | jq '[.runs[0].samples[] | select(.metric=="loops_per_s" and .value > 0)] | length')" 2

r=$(api POST /api/v1/jobs '{"recipe":"cpu-loop","preset":"test","machines":{"names":["bfq2"]},"repetitions":{"iterations":1}}')
id2=$(body_of "$r" | jq -r .id)
check_eq "job on the riscv64 machine fails" "$(wait_job "$id2" 60)" failed
check_contains "the architecture is named" \
	"$(curl -fsS "$URL/api/v1/jobs/$id2/runs" | jq -r '.runs[0].error')" 'no agent for its architecture "riscv64"'
check "nothing uploaded to the riscv64 machine" test ! -e "$fleet/bfq2/home/.benchfleet/benchfleet-agent"
stop_daemon
check_sanitizers "$work/daemon.log"
finish
