#!/usr/bin/env bash
# kernel-build's test preset through the real agent: the Debian
# linux-source-6.1 tarball is unpacked once by setup (`work unpack`,
# cached in workdir between steps), configured with tinyconfig, make clean
# runs before each iteration, and the measured `make -j2 mm/` gives a
# positive wall_s. The step carries the recipe's path parameters under
# their roots, as the coordinator sends them. The long test: the first
# unpack costs about 25 s here.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

A=$BIN/benchfleet-agent
t0=$(date +%s.%N)
pkgs=(linux-source-6.1 build-essential bc bison flex libelf-dev libssl-dev)
miss=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || miss+=("$p")
done
if [ ${#miss[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
		  apt-get install -y -qq --no-install-recommends "${miss[@]}" >/dev/null 2>&1; } ||
		{ fail "cannot install ${miss[*]}"; finish; exit; }
fi
work=$(mktemp -d /tmp/bf-kbuild.XXXXXX)
defer "rm -rf '$work'"
# the tree is kept under the recipe's root, so later runs skip the unpack;
# its own tree, not the recipe's default (recipes_api builds there), and
# locked, so a second run of this test on the machine waits rather than
# cleaning the tree under the first one's make
wd=/var/tmp/benchfleet/kbuild-6.1-agent-test
mkdir -p /var/tmp/benchfleet
exec 8>/var/tmp/benchfleet/.kbuild-agent-test.lock
flock 8
tree=$wd/linux-source-6.1
step() {
	jq -nc --arg wd "$wd" --arg tree "$tree" '{run: 1, iterations: 1, warmup: 0, timeout_s: 900,
	  paths: [{name: "tarball", path: "/usr/src/linux-source-6.1.tar.xz", root: "/usr/src"},
	          {name: "workdir", path: $wd, root: "/var/tmp/benchfleet"}],
	  setup: [["@agent", "work", "unpack", "--tar", "/usr/src/linux-source-6.1.tar.xz",
	           "--dir", $wd], ["make", "-C", $tree, "-s", "tinyconfig"]],
	  pre_iteration: [["make", "-C", $tree, "-s", "clean"]],
	  argv: ["make", "-C", $tree, "-s", "-j2", "mm/"], metrics: []}'
}
step >"$work/step"
"$A" step <"$work/step" >"$work/out" 2>"$work/err"
check_eq "kernel-build: exit" "$?" 0
it=$(grep '"type":"iteration"' "$work/out")
check_eq "kernel-build: one iteration" "$(grep -c . <<<"$it")" 1
check "kernel-build: wall_s plausible" awk -v v="$(jq -r .wall_s <<<"$it")" 'BEGIN { exit !(v > 0.5 && v < 600) }'
check "kernel-build: mm objects built" test -e "$tree/mm/memory.o"
check "kernel-build: unpack stamp" test -e "$wd/.bf-unpacked"
check "kernel-build: workdir stamp" test -e "$wd/.benchfleet-workdir"
grep '"type":"error"' "$work/out" >&2
echo "kernel-build wall_s: $(jq -r .wall_s <<<"$it") s"
# a broken setup fails the step before anything is measured
jq -c '.setup[1] = ["make", "-C", "/nonexistent", "tinyconfig"]' "$work/step" >"$work/bad"
"$A" step <"$work/bad" >"$work/out" 2>/dev/null
check_eq "kernel-build bad setup: exit 2" "$?" 2
check_contains "kernel-build bad setup: reason" "$(grep '"type":"error"' "$work/out")" \
	'setup[1]: \"make\" exited with status 2'
check_eq "kernel-build bad setup: nothing measured" "$(grep -c '"type":"iteration"' "$work/out")" 0
flock -u 8

# --- Incremental kernel builds in the builder's kept tree (issue 18) -------
# `benchfleet-agent build` of the documents common/kbuild.c makes (through
# bf-kbuild, as the coordinator makes them), for three neighbouring commits
# of one tree with one config: A (Debian's 6.1), B (A plus a line in
# mm/memory.c that puts a string into the kernel), C (B plus a line in a
# Documentation file). The repository is a bare `clone --shared` of
# kernel_artifact's cached one, with B and C made by git plumbing (fixed
# dates: the same ids every run), so that cache's refs and objects are
# never touched. The kept tree lives in /var/tmp/benchfleet/kinc-build
# between runs: the first run here builds A cold; later runs find C built
# there, so A, B and C are all incremental. The whole test: 129.6 s cold
# (kept tree and scratch repository removed; A 69 s, B 8.8 s, C 8.1 s, at a
# load of ~2) and 92.0 s warm (A 13.3 s, B 12.8 s, C 10.4 s), 2026-12-06.
T=/usr/src/linux-source-6.1.tar.xz
sha=$(sha256sum "$T" | cut -c1-16)
C=/var/tmp/benchfleet/kgit-$sha
exec 8>/var/tmp/benchfleet/.kgit.lock
flock 8
if [ ! -f "$C/ready" ]; then
	rm -rf "$C"
	mkdir -p "$C"
	tar -C "$C" -xf "$T" && mv "$C/linux-source-6.1" "$C/linux" &&
	(cd "$C/linux" && git init -q && git add -A -f . &&
	 git -c user.name=bf -c user.email=bf@localhost commit -qm "linux-source-6.1 $sha" &&
	 git tag v6.1-deb) && touch "$C/ready" || { fail "cannot make the repository"; finish; exit; }
fi
flock -u 8
exec 9>/var/tmp/benchfleet/.kinc-test.lock
flock 9
R=/var/tmp/benchfleet/kinc-$sha/linux.git
BD=/var/tmp/benchfleet/kinc-build
KB=$BIN/bf-kbuild
if [ ! -f "$R/../ready" ]; then
	rm -rf "$R/.."
	mkdir -p "$R/.."
	git clone -q --bare --shared "$C/linux" "$R" &&
	(export GIT_DIR=$R GIT_INDEX_FILE=$R/../index GIT_AUTHOR_NAME=bf GIT_COMMITTER_NAME=bf \
		GIT_AUTHOR_EMAIL=bf@localhost GIT_COMMITTER_EMAIL=bf@localhost \
		GIT_AUTHOR_DATE='1700000000 +0000' GIT_COMMITTER_DATE='1700000000 +0000'
	 set -e
	 git read-tree v6.1-deb
	 b1=$({ git cat-file blob v6.1-deb:mm/memory.c
		echo 'const char bf_kbi_mark[] = "bf-kbi-mark: B changed mm/memory.c";'; } |
		git hash-object -w --stdin)
	 git update-index --cacheinfo "100644,$b1,mm/memory.c"
	 cb=$(git commit-tree "$(git write-tree)" -p v6.1-deb -m "B: mm/memory.c")
	 b2=$({ git cat-file blob v6.1-deb:Documentation/admin-guide/README.rst
		echo 'bf-kbi: C changed only this file.'; } | git hash-object -w --stdin)
	 git update-index --cacheinfo "100644,$b2,Documentation/admin-guide/README.rst"
	 cc=$(git commit-tree "$(git write-tree)" -p "$cb" -m "C: Documentation")
	 git branch kbi-a v6.1-deb
	 git branch kbi-b "$cb"
	 git branch kbi-c "$cc") && touch "$R/../ready" ||
		{ fail "cannot make the scratch commits"; finish; exit; }
fi
check_eq "kernel_artifact's repository keeps its one tag" "$(git -C "$C/linux" tag)" v6.1-deb
check_eq "... and its one branch" "$(git -C "$C/linux" branch --format='%(refname:short)' | wc -l)" 1
check_eq "the scratch commits are B then C" \
	"$(git -C "$R" log --format=%s kbi-c | head -n 2 | tr '\n' ,)" "C: Documentation,B: mm/memory.c,"
spec() { jq -nc --arg g "$R" --arg c "$1" '{git: $g, commit: $c, config: "tinyconfig",
	fragments: ["CONFIG_64BIT=y"], localversion: "-kbi"}' >"$work/spec.json"; }
spec kbi-a
W=$("$KB" tree "$work/spec.json" "$BD" x86_64)
check "the kept tree is named by the repository" grep -qE "^$BD/t-[0-9a-f]{16}-x86_64\$" <<<"$W"
# kbuild COMMIT NAME: prep + build of one commit; $work/NAME.{prep,out} the
# agent's lines, $work/NAME.log its log, NAME_s the wall time
kbuild() {
	local t=$(date +%s.%N) tree cfg key lv mods
	spec "$1"
	"$KB" prep "$work/spec.json" "$BD" x86_64 >"$work/$2.pdoc" || return 1
	"$A" build <"$work/$2.pdoc" >"$work/$2.prep" 2>>"$work/err"
	check_eq "$2: the prep is done" "$(jq -r 'select(.type == "done") | .ok' "$work/$2.prep")" true
	tree=$(jq -r 'select(.type == "build_value" and .what == "tree") | .value' "$work/$2.prep")
	cfg=$(sha256sum <"$W/out/.config" | cut -c1-64)
	read -r key lv mods <<<"$("$KB" key "$work/spec.json" "$tree" "$W/out/.config" x86_64)"
	"$KB" build "$work/spec.json" "$BD" x86_64 2 "$lv" "$mods" "$tree" "$cfg" >"$work/$2.bdoc"
	"$A" build <"$work/$2.bdoc" >"$work/$2.out" 2>>"$work/err"
	check_eq "$2: the build is done" "$(jq -r 'select(.type == "done") | .ok' "$work/$2.out")" true
	check_eq "$2: its release ends in its LOCALVERSION" "$(jq -r 'select(.type == "build_value"
		and .what == "release") | .value' "$work/$2.out" | grep -c -- "$lv\$")" 1
	check_eq "$2: its image came back" "$(jq -r 'select(.type == "artifact_end" and
		.name == "image") | .sha256 | length' "$work/$2.out")" 64
	jq -r 'select(.type == "log") | .line // empty' "$work/$2.prep" "$work/$2.out" >"$work/$2.log"
	eval "${2}_tree=$tree ${2}_key=$key ${2}_s=$(echo "$(date +%s.%N) - $t" | bc)"
	eval "${2}_cc=$(grep -c '^  CC ' "$work/$2.log")"
}
ccs() { grep '^  CC ' "$work/$1.log" | awk '{print $2}' | tr '\n' ' '; }
kbuild kbi-a a
echo "A: $a_s s, $a_cc CC lines"
check "A: the kept tree is reused or made" test -d "$W/src/.git" -a -f "$W/out/vmlinux"
check_eq "A: no stamp left" "$(ls "$W/.bf-building" 2>/dev/null)" ""
check "A: the marker is not in A's vmlinux" test "$(grep -c 'bf-kbi-mark' "$W/out/vmlinux")" = 0
touch -d '-1 sec' "$work/before-b"
kbuild kbi-b b
echo "B (one line of mm/memory.c): $b_s s, $b_cc CC lines: $(ccs b)"
check_contains "B: the build found the tree as its prep left it" "$(cat "$work/b.log")" \
	"the tree and .config are as the prep left them"
check_contains "B: mm/memory.c is compiled" "$(ccs b)" "mm/memory.o"
check "B: incremental: at most 12 objects compiled" test "$b_cc" -le 12
check "B: mm/mmap.o is older than B's build" test "$W/out/mm/mmap.o" -ot "$work/before-b"
check "B: the changed line's string is in vmlinux" grep -q 'bf-kbi-mark: B changed mm/memory.c' \
	"$W/out/vmlinux"
kbuild kbi-c c
echo "C (Documentation only): $c_s s, $c_cc CC lines: $(ccs c)"
check "C: no mm/ object compiled" test -z "$(ccs c | tr ' ' '\n' | grep '^mm/')"
check "C: at most 6 objects compiled (those that print the release)" test "$c_cc" -le 6
check "C: B's string is still in vmlinux" grep -q 'bf-kbi-mark: B changed' "$W/out/vmlinux"
check "the three trees differ" test "$a_tree" != "$b_tree" -a "$b_tree" != "$c_tree"
# Another build moves the tree between C's prep and C's build: the build
# sees it and prepares again, and still builds C's tree.
spec kbi-c
"$KB" prep "$work/spec.json" "$BD" x86_64 >"$work/c2.pdoc"
"$A" build <"$work/c2.pdoc" >"$work/c2.prep" 2>>"$work/err"
t2=$(jq -r 'select(.type == "build_value" and .what == "tree") | .value' "$work/c2.prep")
cfg=$(sha256sum <"$W/out/.config" | cut -c1-64)
read -r key lv mods <<<"$("$KB" key "$work/spec.json" "$t2" "$W/out/.config" x86_64)"
"$KB" build "$work/spec.json" "$BD" x86_64 2 "$lv" "$mods" "$t2" "$cfg" >"$work/c2.bdoc"
spec kbi-b
"$KB" prep "$work/spec.json" "$BD" x86_64 >"$work/m.pdoc"
"$A" build <"$work/m.pdoc" >"$work/m.prep" 2>>"$work/err"
check_eq "another prep moved the tree to B" "$(git -C "$W/src" rev-parse HEAD)" \
	"$(git -C "$R" rev-parse kbi-b)"
"$A" build <"$work/c2.bdoc" >"$work/c2.out" 2>>"$work/err"
jq -r 'select(.type == "log") | .line // empty' "$work/c2.out" >"$work/c2.log"
check_contains "the moved tree is prepared again" "$(cat "$work/c2.log")" "preparing again: the tree is $b_tree"
check_eq "... and C is built" "$(jq -r 'select(.type == "done") | .ok' "$work/c2.out")" true
check_eq "... at C's commit" "$(git -C "$W/src" rev-parse HEAD)" "$(git -C "$R" rev-parse kbi-c)"
check "... with no mm/ object compiled" test -z "$(grep '^  CC ' "$work/c2.log" | grep ' mm/')"
check_eq "a build whose expected tree is not what its spec makes fails" "$(jq -c \
	--arg t "$a_tree" '.expect.value = $t' "$work/c2.bdoc" | "$A" build |
	jq -r 'select(.type == "build_failed") | .what')" expect
# The key does not depend on the kept tree's history: A prepped in a fresh
# tree (a clone and checkout of its own, ~10 s) comes to the same tree id,
# .config and key as A prepped in the kept one after B and C.
FD=/var/tmp/benchfleet/kinc-fresh-$$
defer "rm -rf '$FD'"
spec kbi-a
"$KB" prep "$work/spec.json" "$FD" x86_64 >"$work/f.pdoc"
"$A" build <"$work/f.pdoc" >"$work/f.prep" 2>>"$work/err"
FW=$("$KB" tree "$work/spec.json" "$FD" x86_64)
ft=$(jq -r 'select(.type == "build_value" and .what == "tree") | .value' "$work/f.prep")
check_eq "a fresh tree's A: the same tree id" "$ft" "$a_tree"
check_eq "... and the same build key" \
	"$("$KB" key "$work/spec.json" "$ft" "$FW/out/.config" x86_64 | cut -d' ' -f1)" "$a_key"
rm -rf "$FD"
flock -u 9
grep '"type":"error"' "$work/a.out" "$work/b.out" "$work/c.out" >&2
echo "agent_kernel_build: $(echo "$(date +%s.%N) - $t0" | bc) s"
finish
