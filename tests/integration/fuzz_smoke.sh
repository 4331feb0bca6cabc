#!/usr/bin/env bash
# fuzz_smoke.sh: build every libFuzzer harness (tests/fuzz/) with clang in a
# build directory of its own, run each for BF_FUZZ_SECONDS (default 18),
# two at a time, and fail on any crash, sanitizer report, leak, timeout or
# out-of-memory. Prints runs, exec/s, edges (cov) and features (ft) per
# harness. Reproducers land in <fuzz build>/fuzz-artifacts/.
set -uo pipefail
. "$(dirname "$0")/../lib/common.sh"

command -v clang >/dev/null || { echo "FAIL: clang is missing (bash deploy/install-deps --test)"; exit 1; }
fb=${BF_FUZZ_BUILD:-$BF_BUILD/fuzz}
t0=$(date +%s)
if ! CC=clang cmake -S "$BF_SRC" -B "$fb" -DBF_FUZZ=ON -DBUILD_TESTING=OFF \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$fb.cmake.log" 2>&1; then
	cat "$fb.cmake.log"; echo "FAIL: cmake of the fuzz build"; exit 1
fi
if ! cmake --build "$fb" --target fuzz -j"$(nproc)" >"$fb.build.log" 2>&1; then
	grep -E "error|Error" -A3 "$fb.build.log" | head -40; echo "FAIL: building the harnesses"; exit 1
fi
t1=$(date +%s)
echo "harnesses built in $((t1 - t0)) s"
rm -rf "$fb/fuzz-artifacts"
BF_FUZZ_BUILD=$fb BF_FUZZ_SECONDS=${BF_FUZZ_SECONDS:-18} BF_FUZZ_JOBS=${BF_FUZZ_JOBS:-2} \
	bash "$BF_SRC/tests/fuzz/run"
rc=$?
echo "fuzzed for $(($(date +%s) - t1)) s"
check_eq "every harness ran clean" "$rc" 0
finish
