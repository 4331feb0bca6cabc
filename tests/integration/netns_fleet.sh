#!/usr/bin/env bash
# tools/netns-fleet's own guards, on real namespaces: a subnet another link
# holds is refused (naming the link); under --force a fleet this script left
# on the subnet (a test killed before its cleanup) is torn down, sshd and
# namespaces included, while a link it did not make is refused and left as
# it was.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"
NF=$BF_SRC/tools/netns-fleet
work=$(mktemp -d /tmp/bf-nf.XXXXXX)
defer "rm -rf '$work'"
defer "ip link del bfnfdum 2>/dev/null; bash '$NF' down --dir '$work/a' >/dev/null 2>&1; bash '$NF' down --dir '$work/b' >/dev/null 2>&1"

bash "$NF" up --dir "$work/a" --hosts 2 --prefix bfnfa --subnet 10.124.0 --bridge bfbrnfa --force 2>/dev/null ||
	{ echo "fleet a did not come up"; exit 1; }
check_eq "the bridge names its fleet" "$(cat /sys/class/net/bfbrnfa/ifalias)" "netns-fleet bfnfa 2"
sshd_a=$(cat "$work/a/bfnfa1/sshd.pid")
# fleet a is "left behind": nobody runs its down

out=$(bash "$NF" up --dir "$work/b" --hosts 1 --prefix bfnfb --subnet 10.124.0 --bridge bfbrnfb 2>&1)
check_eq "without --force a held subnet is refused" "$?" 1
check_contains "the refusal names the link" "$out" "bfbrnfa already has an address in 10.124.0.0/24"
check "fleet a is untouched" ip netns exec bfnfa1 true

out=$(bash "$NF" up --dir "$work/b" --hosts 1 --prefix bfnfb --subnet 10.124.0 --bridge bfbrnfb --force 2>&1)
check_eq "--force brings fleet b up over the left fleet" "$?" 0
check_contains "and says what it tore down" "$out" "tearing down the fleet bfnfa1..bfnfa2 left on bfbrnfa"
check "fleet a's bridge is gone" bash -c '! ip link show bfbrnfa >/dev/null 2>&1'
check_eq "fleet a's namespaces are gone" "$(ip netns list | awk '{print $1}' | grep -c '^bfnfa')" 0
# gone or a zombie (PID 1 here may reap it late)
check "fleet a's sshd is gone" bash -c "st=\$(sed 's/.*) //' /proc/$sshd_a/stat 2>/dev/null | cut -c1); [ -z \"\$st\" ] || [ \"\$st\" = Z ]"
check_eq "fleet b answers ssh" "$(ssh -F /dev/null -o BatchMode=yes -o UserKnownHostsFile="$work/b/known_hosts" \
	-o GlobalKnownHostsFile=/dev/null -o IdentitiesOnly=yes -i "$work/b/client_key" root@10.124.0.11 hostname 2>&1)" bfnfb1
bash "$NF" down --dir "$work/b" 2>/dev/null

# A link this script did not make: refused even under --force, and kept.
ip link add bfnfdum type bridge && ip addr add 10.124.0.200/24 dev bfnfdum
out=$(bash "$NF" up --dir "$work/b" --hosts 1 --prefix bfnfb --subnet 10.124.0 --bridge bfbrnfb --force 2>&1)
check_eq "--force does not take a link it did not make" "$?" 1
check_contains "the refusal names it" "$out" "bfnfdum already has an address in 10.124.0.0/24"
check_eq "the link keeps its address" "$(ip -4 -o addr show dev bfnfdum | awk '{print $4}')" 10.124.0.200/24
check_eq "nothing of fleet b was left" "$(ip netns list | awk '{print $1}' | grep -c '^bfnfb'; ip link show bfbrnfb >/dev/null 2>&1 && echo bridge)" 0
finish
