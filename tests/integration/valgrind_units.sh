#!/usr/bin/env bash
# valgrind_units.sh: every unit test binary under valgrind (memcheck, leaks
# included), from a build of its own without sanitizers (valgrind and ASan
# do not mix). A test fails on any memcheck error or definite/indirect
# leak (--error-exitcode=1), or on its own failure.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

command -v valgrind >/dev/null || { echo "FAIL: valgrind is missing (bash deploy/install-deps --test)"; exit 1; }
vb=${BF_VALGRIND_BUILD:-$BF_BUILD/valgrind}
t0=$(date +%s)
# Only what the unit tests need: the unit binaries and the agent they run.
targets=(benchfleet-agent)
for src in "$BF_SRC"/tests/unit/*test_*.c; do targets+=("$(basename "$src" .c)"); done
if ! cmake -S "$BF_SRC" -B "$vb" -DBF_SANITIZE=OFF -DBF_FUZZ=OFF -DCMAKE_BUILD_TYPE=Debug \
	>"$vb.cmake.log" 2>&1 ||
	! cmake --build "$vb" -j"$(nproc)" --target "${targets[@]}" >"$vb.build.log" 2>&1; then
	grep -E "error|Error" -A3 "$vb.cmake.log" "$vb.build.log" | head -40
	echo "FAIL: the valgrind build"; exit 1
fi
echo "built in $(($(date +%s) - t0)) s"
logs=$(mktemp -d /tmp/bf-vg.XXXXXX)
defer "rm -rf '$logs'"
# BF_VALGRIND_JOBS at a time (default: the CPUs), as ctest -j runs the unit
# tests: each has its own store and files. valgrind runs a process's
# threads one at a time, so one of them uses one CPU.
jobs=${BF_VALGRIND_JOBS:-$(nproc)}
vg1() { # vg1 NAME BIN: one test under valgrind; its exit status in $logs/NAME.rc
	local s rc
	s=$(date +%s%N)
	BF_SRC=$BF_SRC BF_BUILD=$vb BF_AGENT=$vb/bin/benchfleet-agent \
	valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect --track-fds=no --trace-children=no \
		--log-file="$logs/$1.vg" "$2" >"$logs/$1.out" 2>&1
	rc=$?
	echo "$rc $((($(date +%s%N) - s) / 1000000))" >"$logs/$1.rc"
}
names=()
for src in "$BF_SRC"/tests/unit/*test_*.c; do
	name=$(basename "$src" .c)
	bin=$vb/bin/$name
	[ -x "$bin" ] || { fail "$name was not built"; continue; }
	names+=("$name")
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	vg1 "$name" "$bin" &
done
wait
n=0
for name in "${names[@]}"; do
	n=$((n + 1))
	read -r rc ms <"$logs/$name.rc" 2>/dev/null || { rc=-1; ms=0; }
	printf '%-24s exit %d  %6d ms\n' "$name" "$rc" "$ms"
	T_CHECKS=$((T_CHECKS + 1))
	if [ "$rc" != 0 ]; then
		fail "$name under valgrind (exit $rc)"
		head -60 "$logs/$name.vg" >&2
		tail -5 "$logs/$name.out" >&2
	fi
done
echo "$n unit tests under valgrind in $(($(date +%s) - t0)) s"
finish
