#!/usr/bin/env bash
# bisect: POST /api/v1/bisections end to end with real parts (issue 18).
# First the request's hostile values are refused naming each field (no
# bisection stored). Then a history of 4 commits on top of Debian's
# linux-source-6.1 (the repository kernel_artifact makes, cached under
# /var/tmp/benchfleet; the commits made with fixed dates, so their shas
# are the same every run): c1, c3 and c4 touch a file no build reads, c2
# puts udelay(200) at the top of do_anonymous_page (mm/memory.c), the
# anonymous page fault. The bisection good=v6.1-deb bad=c4 runs
# page-touch (pages/s, THP off so that every fault takes that path) on a
# QEMU/TCG VM (tests/vm), each step's kernels built on a netns builder
# (real sshd, the real agent's build) and kexec'd: it must name c2 as the
# first bad commit, with step verdicts bad (c2) then good (c1), and
# numbers in its log. Built kernels are kept in
# /var/tmp/benchfleet/kbisect-<inputs> (every done build row and its
# artifacts), so a second run builds nothing; the good kernel is
# kernel_artifact's (the same build key), taken from its cache when there.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/kernel.sh"

t0=$(date +%s.%N)
kernel_pkgs || { fail "cannot install the kernel build's packages"; finish; exit; }
work=$(mktemp -d /tmp/bf-bis.XXXXXX)
defer "rm -rf '$work'"
kernel_repo || { fail "cannot make the repository"; finish; exit; }
C=$KREPO

# The history: a clone sharing the repository's objects, commits with
# fixed names and dates (the same shas every run), made once.
H=$C/bisect-v1
exec 8>/var/tmp/benchfleet/.kgit.lock
flock 8
if [ ! -f "$H/ready" ]; then
	rm -rf "$H"
	export GIT_AUTHOR_NAME=bf GIT_AUTHOR_EMAIL=bf@localhost GIT_COMMITTER_NAME=bf \
		GIT_COMMITTER_EMAIL=bf@localhost GIT_AUTHOR_DATE=2026-01-01T00:00:00Z \
		GIT_COMMITTER_DATE=2026-01-01T00:00:00Z
	git clone -q --shared "$C/linux" "$H" && cd "$H" && git checkout -q -b bf-bisect v6.1-deb &&
	echo "c1" >Documentation/bf-bisect.txt && git add -f Documentation/bf-bisect.txt &&
	git commit -qm "docs: bf-bisect note 1" &&
	sed -i 's|^#include <linux/mm.h>$|#include <linux/mm.h>\n#include <linux/delay.h>|' mm/memory.c &&
	python3 - mm/memory.c <<'EOF' &&
import sys
p = sys.argv[1]
s = open(p).read()
sig = "static vm_fault_t do_anonymous_page(struct vm_fault *vmf)\n{\n"
i = s.index(sig) + len(sig)
j = s.index("\n\n", i) + 1          # after the declarations
s = s[:j] + "\n\tudelay(200);\t/* bf-bisect: a deliberate slow path */\n" + s[j:]
open(p, "w").write(s)
EOF
	git commit -qam "mm: a slow path in do_anonymous_page (bf-bisect)" &&
	echo "c3" >>Documentation/bf-bisect.txt && git commit -qam "docs: bf-bisect note 3" &&
	echo "c4" >>Documentation/bf-bisect.txt && git commit -qam "docs: bf-bisect note 4" &&
	git tag bf-bisect-bad && touch "$H/ready" || { flock -u 8; fail "cannot make the history"; finish; exit; }
	cd - >/dev/null
	unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL \
		GIT_AUTHOR_DATE GIT_COMMITTER_DATE
fi
flock -u 8
mapfile -t shas < <(git -C "$H" log --first-parent --reverse --format=%H v6.1-deb..bf-bisect-bad)
check_eq "the history has 4 commits" "${#shas[@]}" 4
check "c2 has the slow path" git -C "$H" show "${shas[1]}" -- mm/memory.c | grep -q '+.*udelay(200)'

fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 1 --prefix bfbi \
	--subnet 10.122.0 --bridge bfbrbi --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
VM=$BF_SRC/tests/vm/vm
GUEST=${BF_VM_GUEST:-/var/tmp/benchfleet-vm-guest}
"$BF_SRC/tests/vm/build-guest" "$GUEST" >/dev/null || { fail "build-guest"; finish; exit; }
. "$GUEST/out/guest.env"
vport=$(free_port)
VN=bbi$$
defer "'$VM' stop '$GUEST' '$VN' >/dev/null 2>&1; rm -rf '$GUEST/vms/$VN'"
"$VM" start "$GUEST" "$VN" --port "$vport" --no-wait || { fail "the VM did not start"; finish; exit; }
printf '%s\n' "power.$VN = '$VM' power-cycle '$GUEST' '$VN'" >"$work/benchfleetd.conf"
cat "$fleet/known_hosts" "$GUEST/vms/$VN/known_hosts" >"$work/known_hosts"
start_daemon "$work" --known-hosts "$work/known_hosts" --config "$work/benchfleetd.conf" \
	--kernel-git-roots "$C" || exit 1
defer stop_daemon

# --- hostile requests: each refused naming its field, nothing stored ------
frag=$(printf '%s\n' "${KERNEL_TINY_FRAG[@]}" | jq -R . | jq -sc .)
base=$(jq -nc --arg g "$H" --argjson f "$frag" '{git: $g, good: "v6.1-deb",
	bad: "bf-bisect-bad", kernel: {config: "tinyconfig", fragments: $f, localversion: "-bft"},
	recipe: "page-touch", preset: "test", metric: "pages_per_s", machines: {names: ["kvm1"]},
	knobs: {thp_enabled: "never"}, boots_per_round: 2, max_rounds: 3, iterations: 3,
	threshold_pct: 5}')
long=$(printf 'a%.0s' $(seq 300))
while IFS='|' read -r patch field; do
	r=$(api POST /api/v1/bisections "$(jq -c "$patch" <<<"$base")")
	check_eq "refused: $patch" "$(status_of "$r")" 400
	check_contains "... naming $field" "$(body_of "$r" | jq -c '[.detail.errors[].field]')" "\"$field\""
done <<EOF
.good = "--upload-pack=touch /tmp/bf-pwned"|good
.bad = "v6.1-deb..bf-bisect-bad"|bad
.good = "$long"|good
.bad = "x; reboot"|bad
.recipe = "no-such-recipe"|recipe
.metric = "rps"|metric
.machines = {names: ["no-such-machine"]}|machines.names[0]
.threshold_pct = 0|threshold_pct
.threshold_pct = 1e9|threshold_pct
.max_rounds = 99|max_rounds
.kernel.patches = ["../../../etc/passwd"]|kernel.patches[0]
.git = "/etc"|git
.extra = 1|extra
EOF
r=$(api POST /api/v1/bisections '{"good": "v1", "bad":')
check_eq "malformed JSON: 400" "$(status_of "$r")" 400
head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$work/huge"
code=$(curl -sS -o /dev/null -w '%{http_code}' "${JSON[@]}" --data-binary @"$work/huge" \
	"$URL/api/v1/bisections")
check "a huge body: 413 (or the connection refused)" grep -qE '^(413|000)$' <<<"$code"
check_eq "no bisection stored by any of them" \
	"$(curl -fsS "$URL/api/v1/bisections" | jq '.bisections | length')" 0
check_eq "no such bisection: 404" "$(status_of "$(api GET /api/v1/bisections/99)")" 404
check_eq "cancel of none: 404" "$(status_of "$(api POST /api/v1/bisections/99/cancel '')")" 404
check "nothing reached a shell on the builder" test ! -e /tmp/bf-pwned

# --- the fleet --------------------------------------------------------------
IFS=$'\t' read -r name addr port user key <"$fleet/hosts.tsv"
r=$(api POST /api/v1/machines "$(jq -nc --arg n "$name" --arg a "$addr" --arg u "$user" \
	--arg k "$key" --argjson p "$port" '{name: $n, host: $a, port: $p, user: $u, key: $k,
	class: "bisb", roles: ["build"]}')")
check_eq "register the builder" "$(status_of "$r")" 201
"$VM" wait-ssh "$GUEST" "$VN" --timeout 300 || { fail "the VM has no SSH"; finish; exit; }
check "the VM's /boot remounted read-write" "$VM" ssh "$GUEST" "$VN" mount -o remount,rw /boot
# The test guest mounts /boot read-only at boot (tests/vm/build-guest's rcS)
# unless its command line says bf.boot_rw; a lab's /boot is writable, and a
# bisection installs kernels after kexecs, so every boot it makes asks for
# it (a remount loop every 5 s lost the race once kept build trees made an
# install follow its boot within seconds: CI, 2026-12-06).
vboot=$(jq -nc --arg k "$KERNEL_61" --arg n "$VN" '{method: "kexec",
	kernels: {($k): {image: ("/boot/vmlinuz-" + $k), initrd: ("/boot/initrd.img-" + $k)}},
	built_initrd: ("/boot/initrd.img-" + $k),
	cmdline_base: "console=ttyS0 panic=-1 quiet bf.boot_rw", timeout_s: 240, power_cycle: $n}')
r=$(api POST /api/v1/machines "$(jq -nc --argjson p "$vport" --arg k "$GUEST/out/client_key" \
	--argjson b "$vboot" '{name: "kvm1", host: "127.0.0.1", port: $p, user: "root", key: $k,
	class: "kvm", roles: ["run"], boot: $b}')")
check_eq "register the VM target" "$(status_of "$r")" 201

# Built kernels from earlier runs: this test's, and kernel_artifact's good one.
inputs=$(printf '%s\n' "$KREPO_SHA" "$frag" "$(gcc -dumpfullversion)" "$(uname -m)" bisect-v1 |
	sha256sum | cut -c1-16)
KB=/var/tmp/benchfleet/kbisect-$inputs
nb=$(kernel_cache_load "$KB" "$work") && echo "bisect: $nb builds from $KB" || {
	nb=0
	good_spec=$(jq -nc --arg g "$C/linux" '{git: $g, commit: "v6.1-deb", config: "tinyconfig",
		fragments: $ARGS.positional, localversion: "-bft"}' --args "${KERNEL_TINY_FRAG[@]}")
	KA=/var/tmp/benchfleet/kbuilt-$(printf '%s\n' "$KREPO_SHA" "$good_spec" \
		"$(gcc -dumpfullversion)" "$(uname -m)" | sha256sum | cut -c1-16)
	if [ -f "$KA/ready" ]; then
		mkdir -p "$work/ka" && cp -r "$KA/blobs" "$KA/artifacts.tsv" "$work/ka/" &&
		cp "$KA/build.tsv" "$work/ka/builds.tsv" && touch "$work/ka/ready" &&
		echo "bisect: the good kernel from kernel_artifact's $KA ($(kernel_cache_load "$work/ka" "$work") build)"
	fi
	echo "bisect: no cached builds in $KB: building (cold)"
}

# --- the bisection -----------------------------------------------------------
t1=$(date +%s.%N)
r=$(api POST /api/v1/bisections "$base")
check_eq "the bisection is accepted" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
st=running
for i in $(seq 1440); do	# 40 min: a cold run builds 4 kernels
	v=$(curl -fsS "$URL/api/v1/bisections/$id") || break
	st=$(jq -r .state <<<"$v")
	[ "$st" = running ] || break
	if [ $((i % 30)) = 0 ]; then
		jq -r '"  \(.message // "") steps: \([.steps[] | "\(.index)/\(.round):\(.verdict)"] | join(" "))"' <<<"$v"
	fi
	sleep 2
done
t2=$(date +%s.%N)
echo "$v" | jq '{state, message, first_bad, machine_s, interval, steps: [.steps[] |
	{step, round, index, subject, verdict, job, stats: (.stats | {why, reference_steps, bad_vs_good, mid_vs_good,
	mid_vs_bad, good: .good.mean, bad: .bad.mean, mid: .mid.mean, n: .mid.n, good_n: .good.n, bad_n: .bad.n})}]}'
check_eq "the bisection is done" "$st" done
if [ "$st" != done ]; then
	# what the runs that did not finish say, for the next reader of a red run
	for j in $(jq -r '[.steps[].job // empty] | join(" ")' <<<"$v"); do
		runs=$(curl -fsS "$URL/api/v1/jobs/$j/runs")
		jq -r '.runs[] | select(.state != "done") |
			"job \(.job_id // "?") run \(.id): \(.state) attempt \(.attempt // "?"): \(.error // "")"' <<<"$runs"
		for rid in $(jq -r '.runs[] | select(.state != "done") | .id' <<<"$runs"); do
			curl -fsS "$URL/api/v1/runs/$rid/log?limit=1000" | jq -r --arg r "$rid" \
				'.lines[] | select(.stream == "coord") | "  run \($r): \(.line[0:300])"' | tail -25
		done
	done
	tail -30 "$work/daemon.log"
fi
check_eq "it names c2 as the first bad commit" "$(jq -r .first_bad.commit <<<"$v")" "${shas[1]}"
check_eq "... index 1 of 4" "$(jq -r '"\(.first_bad.index)/\(.commits)"' <<<"$v")" "1/4"
check_eq "... with its subject" "$(jq -r .first_bad.subject <<<"$v")" \
	"mm: a slow path in do_anonymous_page (bf-bisect)"
check_eq "the steps: c2 bad, then c1 good" \
	"$(jq -r '[.steps[] | select(.verdict != "more") | "\(.index):\(.verdict)"] | join(" ")' <<<"$v")" \
	"1:bad 0:good"
check "bad vs good is a regression beyond the threshold, its CI below -5% (the bad step's)" \
	jq -e '[.steps[] | select(.verdict == "bad") | .stats.bad_vs_good |
		.pct < -5 and .hi95 != null and .hi95 < -5] | length > 0 and all' <<<"$v"
check "each step has means and n for good, bad and mid" \
	jq -e '[.steps[].stats | .good.mean > 0 and .bad.mean > 0 and .mid.mean > 0 and .mid.n >= 2] | all' <<<"$v"
check "the machine time is counted" jq -e '.machine_s > 0' <<<"$v"
check "step 1 compares against good's and bad's boots of both steps" \
	jq -e '[.steps[] | select(.step == 1 and .verdict != "more") | .stats |
		.reference_steps == 2 and .good.n >= 4 and .bad.n >= 4] == [true]' <<<"$v"
jobs=$(jq -r '[.steps[].job] | join(" ")' <<<"$v")
for j in $jobs; do
	js=$(curl -fsS "$URL/api/v1/jobs/$j/runs")
	check_eq "job $j: its runs measured good, bad and mid on kvm1" \
		"$(jq -r '[.runs[] | .req_kernel] | unique | join(",")' <<<"$js")" "bad,good,mid"
	check "job $j: every run records a -bft built release" \
		jq -e '[.runs[] | select(.state == "done") | .kernel | test("-bft-bf[0-9a-f]{8}$")] | all' <<<"$js"
done
check_eq "a done bisection cannot be cancelled" \
	"$(status_of "$(api POST /api/v1/bisections/$id/cancel '')")" 409
check_eq "it is in the list" "$(curl -fsS "$URL/api/v1/bisections" | jq -r ".bisections[0].id")" "$id"
kernel_cache_save "$KB" "$work" && echo "bisect: builds kept in $KB for the next run"
echo "bisection ($([ "$nb" -ge 4 ] && echo warm || echo "cold, $nb builds cached")) $(echo "$t2 - $t1" | bc) s; whole test $(echo "$(date +%s.%N) - $t0" | bc) s"
stop_daemon
check_sanitizers "$work/daemon.log"
finish
