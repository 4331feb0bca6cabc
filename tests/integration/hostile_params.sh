#!/usr/bin/env bash
# Issue 14, finding 2: a submitter's kernel-build params must not become
# root on the lab. Against the real daemon and a netns fleet host:
#   - target="--eval=$(shell touch MARKER)" (make would run it), a make
#     variable and a target with a ".." (kbuild would run the Makefile of a
#     directory outside the tree) are refused at submit, 400 naming
#     params.target / matrix.target[1];
#   - workdir=/etc, a workdir outside --workdir-root, a ../ escape and a
#     tarball outside /usr/src are refused, 400 naming the field;
#   - nothing is queued by any of them, and no marker appears on the host;
#   - what passes submit is still checked on the machine: a symlink below
#     the root fails the run in the agent, and `work unpack` refuses to
#     remove a workdir it did not make (the run fails, the files stay).
# Safety: every /etc job names a machine class no machine has, so even a
# regressed coordinator could not run it; decoys live in the test's dir.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

work=$(mktemp -d /tmp/bf-hostile.XXXXXX)
defer "rm -rf '$work'"
marker=/tmp/bfp1-MARKER.$$
rm -f "$marker"
defer "rm -f '$marker'"
root=$work/wroot
mkdir -m 0755 "$root"
mkdir "$work/decoy" && echo keep >"$work/decoy/keep"
fleet=$work/fleet
bash "$BF_SRC/tools/netns-fleet" up --dir "$fleet" --hosts 1 --prefix bfp1 \
	--subnet 10.101.0 --bridge bfbr101 --force || { echo "fleet did not come up"; exit 1; }
defer "bash '$BF_SRC/tools/netns-fleet' down --dir '$fleet'"
mkdir -p "$work/git/linux"
start_daemon "$work" --known-hosts "$fleet/known_hosts" --workdir-root "$root" \
	--kernel-git-roots "$work/git:/nonexistent/roots" || exit 1
defer stop_daemon
while IFS=$'\t' read -r name addr port user key; do
	r=$(api POST /api/v1/machines "{\"name\":\"$name\",\"host\":\"$addr\",\"port\":$port,\"user\":\"$user\",\"key\":\"$key\",\"class\":\"hp\"}")
	check_eq "register $name" "$(status_of "$r")" 201
done < "$fleet/hosts.tsv"

# machine roles (issue 18): run (default), build, or both; nothing else
m() { jq -nc --argjson r "$1" --arg k "$(head -1 "$fleet/hosts.tsv" | cut -f5)" \
	'{name: "rb", host: "10.101.0.250", user: "root", key: $k, class: "rb", roles: $r}'; }
for bad in '["build", "$(id)"]:roles[1]' '["build", "build"]:roles[1]' '[]:roles' '"build":roles' \
	'["run", "build", "run"]:roles'; do
	r=$(api POST /api/v1/machines "$(m "${bad%:*}")")
	check_eq "roles ${bad%:*}: 400" "$(status_of "$r")" 400
	check_eq "roles ${bad%:*}: field" "$(body_of "$r" | jq -r .detail.field)" "${bad##*:}"
done
r=$(api POST /api/v1/machines "$(m '["build"]')")
check_eq "a build machine: 201" "$(status_of "$r")" 201
check_eq "its roles" "$(curl -fsS "$URL/api/v1/machines/rb" | jq -c .roles)" '["build"]'
check_eq "a machine registered without roles runs" \
	"$(curl -fsS "$URL/api/v1/machines" | jq -c '[.machines[] | select(.name != "rb") | .roles] | unique')" '[["run"]]'
r=$(api DELETE /api/v1/machines/rb)
check_eq "the build machine removed" "$(status_of "$r")" 200

# refused JOB FIELD TEXT: POST /jobs answers 400, detail.field is FIELD and
# the error contains TEXT.
refused() {
	local r
	r=$(api POST /api/v1/jobs "$1")
	check_eq "$2: 400" "$(status_of "$r")" 400
	check_eq "$2: field named" "$(body_of "$r" | jq -r .detail.field)" "$2"
	check_contains "$2: reason" "$(body_of "$r" | jq -r .error)" "$3"
}
kb() { # kb CLASS PARAMS_JSON [MATRIX_JSON]
	jq -nc --arg c "$1" --argjson p "$2" --argjson m "${3:-{\}}" \
		'{recipe: "kernel-build", preset: "test", machines: {class: $c},
		  repetitions: {iterations: 1}, params: $p} + (if $m == {} then {} else {matrix: $m} end)'
}
ok_wd=$root/kb
eval_target="--eval=\$(shell touch $marker)"
refused "$(kb hp "$(jq -nc --arg t "$eval_target" --arg w "$ok_wd" '{target: $t, workdir: $w}')")" \
	params.target "does not match the pattern"
refused "$(kb hp "$(jq -nc --arg w "$ok_wd" '{workdir: $w}')" \
	"$(jq -nc --arg t "$eval_target" '{target: ["mm/", $t]}')")" matrix.target[1] "--eval="
refused "$(kb hp "$(jq -nc --arg w "$ok_wd" '{target: "CC=/tmp/x", workdir: $w}')")" \
	params.target "does not match the pattern"
# a target that climbs out of the tree: kbuild's "%/" rule descends into
# (and runs the Makefile of) any directory, "%.o" builds next to any .c.
# The tarball is missing, so even a regressed coordinator runs no make.
for t in "mm/../../../../../../tmp/bfr1-evil/" "../x.o" "mm/./../../x/" "mm//x.o" ".hidden/"; do
	refused "$(kb hp "$(jq -nc --arg t "$t" --arg w "$ok_wd" \
		'{target: $t, workdir: $w, tarball: "/usr/src/bfr1-none.tar.xz"}')")" \
		params.target "does not match the pattern"
done
refused "$(kb hp "$(jq -nc --arg w "$ok_wd" '{workdir: $w, tarball: "/usr/src/bfr1-none.tar.xz"}')" \
	'{"target": ["mm/", "arch/../../../../tmp/bfr1-evil/"]}')" matrix.target[1] "does not match the pattern"
refused "$(kb hp-none '{"workdir": "/etc"}')" params.workdir "\"/etc\" is not under $root"
refused "$(kb hp "$(jq -nc --arg w "$work/decoy" '{workdir: $w}')")" params.workdir \
	"\"$work/decoy\" is not under $root"
refused "$(kb hp-none "$(jq -nc --arg w "$root/../../../etc" '{workdir: $w}')")" params.workdir \
	"has a \".\" or \"..\" component"
refused "$(kb hp-none "$(jq -nc --arg w "$root/" '{workdir: $w}')")" params.workdir "ends in \"/\""
refused "$(kb hp "$(jq -nc --arg w "$ok_wd" '{tarball: "/etc/shadow", workdir: $w}')")" \
	params.tarball "\"/etc/shadow\" is not under /usr/src"
# the recipe's default workdir is not under this daemon's root: refused too
refused "$(kb hp-none '{}')" params.workdir "the default of recipe kernel-build"
# Issue 18: a job's "kernels" become argv of git and make on a builder.
# Each hostile value is refused at submit naming its field; a valid spec
# passes every check of its own (a dry run: the build itself is
# coord_test_kdispatch's), and then meets this fleet's machine, which has
# no boot configuration to boot a kernel with.
ks() { # ks SPEC_JSON: a job whose matrix.kernel names kernel "a" and a release
	jq -nc --argjson k "$1" '{recipe: "cpu-loop", preset: "test", machines: {class: "hp"},
	  repetitions: {iterations: 1}, kernels: {a: $k}, matrix: {kernel: ["a", "6.1.0-9-amd64"]}}'
}
g=$work/git/linux
refused "$(ks '{"git": "/etc", "commit": "v6.1"}')" kernels.a.git "is not under a git root"
refused "$(ks "$(jq -nc --arg g "$g/../../../etc" '{git: $g, commit: "v6.1"}')")" kernels.a.git \
	"has a \".\" or \"..\" component"
refused "$(ks '{"git": "srv/linux", "commit": "v6.1"}')" kernels.a.git "is not an absolute path"
refused "$(ks "$(jq -nc --arg g "$g" '{git: $g, commit: "--upload-pack=touch /tmp/bfp1-MARKER"}')")" \
	kernels.a.commit "must start with a letter or digit"
refused "$(ks "$(jq -nc --arg g "$g" '{git: $g, commit: "v6.1$(id)"}')")" kernels.a.commit "has byte 0x24"
refused "$(ks "$(jq -nc --arg g "$g" '{git: $g, commit: "v6.1", fragments: ["CONFIG_X=y\nCONFIG_Y=y"]}')")" \
	"kernels.a.fragments[0]" "is not a config line"
refused "$(ks "$(jq -nc --arg g "$g" '{git: $g, commit: "v6.1", patches: ["../../../etc/shadow"]}')")" \
	"kernels.a.patches[0]" "is not a patch path"
refused "$(ks "$(jq -nc --arg g "$g" '{git: $g, commit: "v6.1", patches: ["/etc/shadow"]}')")" \
	"kernels.a.patches[0]" "is not under a git root"
refused "$(ks "$(jq -nc --arg g "$g" '{git: $g, commit: "v6.1", config: "/etc/kernel.config"}')")" \
	kernels.a.config "is not under a git root"
refused "$(ks "$(jq -nc --arg g "$g" '{git: $g, commit: "v6.1", localversion: "-x;reboot"}')")" \
	kernels.a.localversion "is not a localversion"
refused "$(jq -nc --arg g "$g" '{recipe: "cpu-loop", machines: {class: "hp"},
	kernels: {a: {git: $g, commit: "v6.1"}}}')" kernels.a "is named by neither"
r=$(api POST "/api/v1/jobs?dry_run=1" "$(ks "$(jq -nc --arg g "$g" '{git: $g, commit: "v6.1", config: "tinyconfig",
	fragments: ["CONFIG_64BIT=y", "CONFIG_CMDLINE=\"console=ttyS0\""], patches: ["series/0001-a.patch"],
	localversion: "-bft"}')")")
check_eq "a valid kernel spec: past its checks, refused for the machine" "$(status_of "$r")" 400
check_eq "a valid kernel spec: the field is machines" "$(body_of "$r" | jq -r .detail.field)" machines
check_contains "a valid kernel spec: the machine cannot reboot" "$(body_of "$r" | jq -r .error)" \
	"cannot reboot"
check_eq "nothing queued by a refused job" "$(curl -fsS "$URL/api/v1/jobs" | jq '.jobs | length')" 0
check_eq "nothing in the store" "$(bf_sql "$work" "select count(*) from runs")" 0
sleep 1
check "no marker file on the host" test ! -e "$marker"
check "the decoy is intact" test -f "$work/decoy/keep"

# Past submit, the machine checks again. A symlink below the root, to the
# decoy: the agent refuses the step before anything runs.
ln -s "$work/decoy" "$root/ln"
r=$(api POST /api/v1/jobs "$(kb hp "$(jq -nc --arg w "$root/ln/kb" \
	'{workdir: $w, tarball: "/usr/src/bfp1-none.tar.xz"}')")")
check_eq "symlinked workdir passes submit" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
check_eq "symlinked workdir: job failed" "$(wait_job "$id" 120)" failed
err=$(curl -fsS "$URL/api/v1/jobs/$id/runs" | jq -r '.runs[0].error')
check_contains "symlinked workdir: the agent names the link" "$err" "$root/ln is a symbolic link"
check "symlinked workdir: decoy intact, nothing made in it" \
	test -f "$work/decoy/keep" -a ! -e "$work/decoy/kb" -a ! -e "$work/decoy/kb.part"

# A missing tarball: work unpack fails before touching the workdir, which
# holds files it did not make (the issue's rm -rf /etc, inside the root).
mkdir "$root/pre" && echo keep >"$root/pre/keep"
r=$(api POST /api/v1/jobs "$(kb hp "$(jq -nc --arg w "$root/pre" \
	'{workdir: $w, tarball: "/usr/src/bfp1-none.tar.xz"}')")")
check_eq "missing tarball passes submit" "$(status_of "$r")" 201
id=$(body_of "$r" | jq -r .id)
check_eq "missing tarball: job failed" "$(wait_job "$id" 120)" failed
log=$(curl -fsS "$URL/api/v1/runs/$(curl -fsS "$URL/api/v1/jobs/$id/runs" | jq -r '.runs[0].id')/log" |
	jq -r '.lines[].line')
check_contains "missing tarball: unpack says nothing was touched" "$log" "nothing was touched"
check "missing tarball: the workdir's files are still there" test -f "$root/pre/keep"
# With the real tarball, the same workdir is still not ours to remove.
if [ -r /usr/src/linux-source-6.1.tar.xz ]; then
	r=$(api POST /api/v1/jobs "$(kb hp "$(jq -nc --arg w "$root/pre" '{workdir: $w}')")")
	check_eq "foreign workdir passes submit" "$(status_of "$r")" 201
	id=$(body_of "$r" | jq -r .id)
	check_eq "foreign workdir: job failed" "$(wait_job "$id" 120)" failed
	log=$(curl -fsS "$URL/api/v1/runs/$(curl -fsS "$URL/api/v1/jobs/$id/runs" | jq -r '.runs[0].id')/log" |
		jq -r '.lines[].line')
	check_contains "foreign workdir: refused, not removed" "$log" "was not made by work unpack"
	check "foreign workdir: its files are still there" test -f "$root/pre/keep"
else
	echo "linux-source-6.1 not installed: the foreign-workdir run is skipped"
fi
check "still no marker file on the host" test ! -e "$marker"

# GET /api/v1/artifacts/{sha256}: hex names only. Until a build leaves one,
# the test puts one kernel artifact where a build will: its file in the
# artifact directory, its row in kernel_artifacts.
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/artifacts/abc")
check_eq "artifact: a short name is 400" "$code" 400
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/artifacts/$(printf 'A%.0s' {1..64})")
check_eq "artifact: upper-case hex is 400" "$code" 400
code=$(curl -sS -o /dev/null -w '%{http_code}' --path-as-is "$URL/api/v1/artifacts/../../etc/passwd")
check "artifact: a path is not served" test "$code" != 200
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/artifacts/$(printf '0%.0s' {1..64})")
check_eq "artifact: an unknown hash is 404" "$code" 404
printf 'CONFIG_64BIT=y\n# seeded by hostile_params\n' >"$work/cfg"
h=$(sha256sum <"$work/cfg" | cut -c1-64)
install -m 0644 "$work/cfg" "$work/artifacts/$h"
bf_sql "$work" "insert into kernel_artifacts (sha256, kind, size, created_at) values ('$h', 'config', $(stat -c %s "$work/cfg"), 0)" >/dev/null
code=$(curl -sS -D "$work/ah" -o "$work/got" -w '%{http_code}' "$URL/api/v1/artifacts/$h")
check_eq "artifact: served" "$code" 200
check "artifact: the same bytes" cmp -s "$work/cfg" "$work/got"
check_contains "artifact: its kind said" "$(cat "$work/ah")" "X-Benchfleet-Artifact-Kind: config"
check_contains "artifact: its hash said" "$(cat "$work/ah")" "X-Benchfleet-Artifact-Sha256: $h"
rm -f "$work/artifacts/$h"
code=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/api/v1/artifacts/$h")
check_eq "artifact: a row without its file is 410" "$code" 410
ln -s /etc/passwd "$work/artifacts/$h"
code=$(curl -sS -o "$work/got" -w '%{http_code}' "$URL/api/v1/artifacts/$h")
check "artifact: a symlink planted under its name is not followed" test "$code" != 200
check "artifact: nothing of /etc/passwd served" sh -c "! grep -q root: '$work/got'"

stop_daemon
check_sanitizers "$work/daemon.log"
finish
