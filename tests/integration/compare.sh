#!/bin/bash
# compare.sh: "benchfleet compare A B" against the scipy references of
# tests/stats/vectors.json. Every case's vectors go to two files (jq), the
# CLI's JSON report is checked to 1e-6 (relative; absolute against the
# quantity's scale near 0) on mean, sd, CoV, CI, n, % change and its CI,
# Welch t/df/p, significance and Mann-Whitney U/p; the text and markdown
# say "n=1, no CI" for a single sample. Bad input (NaN, inf, garbage, an
# empty file, a missing file) exits 1 naming the file and the line. Needs
# no coordinator and no scipy.
set -u
: "${BF_BUILD:?BF_BUILD must name the build directory}"
: "${BF_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
BIN="$BF_BUILD/bin/benchfleet"
VEC="$BF_SRC/tests/stats/vectors.json"
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built"; exit 1; }
[ -r "$VEC" ] || { echo "FAIL: $VEC is missing"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is needed"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# got.json (the report) vs the reference case: prints one line per value
# that is off, nothing when all agree.
cat >"$tmp/check.jq" <<'EOF'
def scale($v): ([$v[] | fabs] + [0]) | max;
def near($what; $g; $e; $s):
  if $e == null then (if $g == null then empty else "\($what): \($g), expected null" end)
  elif $g == null then "\($what): null, expected \($e)"
  elif (($g - $e) | fabs) <= 1e-6 * ([($e | fabs), $s] | max) then empty
  else "\($what): \($g), expected \($e)" end;
def same($what; $g; $e):
  if $g == $e then empty else "\($what): \($g), expected \($e)" end;
$got[0].metrics[0].rows as $rows
| $rows[0] as $ra | $rows[1] as $rb | $rb.compare as $c
| scale($case.a) as $sa | scale($case.b) as $sb
| same("A.n"; $ra.n; $case.sa.n), same("B.n"; $rb.n; $case.sb.n),
  near("A.mean"; $ra.mean; $case.sa.mean; $sa), near("B.mean"; $rb.mean; $case.sb.mean; $sb),
  near("A.sd"; $ra.sd; $case.sa.sd; $sa * 1e-6), near("B.sd"; $rb.sd; $case.sb.sd; $sb * 1e-6),
  near("A.cov"; $ra.cov_pct; $case.sa.cov; 1e-6), near("B.cov"; $rb.cov_pct; $case.sb.cov; 1e-6),
  near("A.ci_lo"; $ra.ci_lo; $case.sa.ci_lo; $sa), near("A.ci_hi"; $ra.ci_hi; $case.sa.ci_hi; $sa),
  near("B.ci_lo"; $rb.ci_lo; $case.sb.ci_lo; $sb), near("B.ci_hi"; $rb.ci_hi; $case.sb.ci_hi; $sb),
  # the report divides by |A| (issue 17), the vectors by A
  (if $case.sa.mean < 0 then -1 else 1 end) as $sg
  | (if $sg < 0 then [$case.pct_hi, $case.pct_lo] else [$case.pct_lo, $case.pct_hi] end
     | map(if . == null then null else . * $sg end)) as $ci
  | (if $case.pct == null then null else $case.pct * $sg end) as $pct
  | near("pct"; $c.pct_change; $pct; 1e-6),
  near("pct_lo"; $c.pct_ci_lo; $ci[0]; 1e-6), near("pct_hi"; $c.pct_ci_hi; $ci[1]; 1e-6),
  same("unbounded"; $c.pct_ci_unbounded; $case.pct_unbounded),
  near("welch_t"; $c.welch_t; $case.welch_t; 1), near("welch_df"; $c.welch_df; $case.welch_df; 1),
  near("welch_p"; $c.welch_p; $case.welch_p; 1e-300),
  same("significant"; $c.significant; $case.significant),
  near("mw_u"; $c.mw_u; $case.mw_u; 1), near("mw_p"; $c.mw_p; $case.mw_p; 1e-300),
  same("mw_method"; $c.mw_method; $case.mw_method)
EOF

ncases=$(jq '.cases | length' "$VEC")
[ "$ncases" -ge 30 ] || fail "only $ncases cases in $VEC"
for ((i = 0; i < ncases; i++)); do
	name=$(jq -r ".cases[$i].name" "$VEC")
	jq -r ".cases[$i].a[]" "$VEC" >"$tmp/a.txt"
	jq -r ".cases[$i].b[]" "$VEC" >"$tmp/b.txt"
	checks=$((checks + 1))
	if ! "$BIN" compare "$tmp/a.txt" "$tmp/b.txt" --format json >"$tmp/got.json" 2>"$tmp/err"; then
		fail "$name: benchfleet compare exited $?: $(head -c 300 "$tmp/err")"
		continue
	fi
	if grep -q 'AddressSanitizer\|runtime error:' "$tmp/err"; then
		fail "$name: sanitizer report: $(head -c 300 "$tmp/err")"
	fi
	if ! jq -r -n --slurpfile got "$tmp/got.json" --argjson case "$(jq ".cases[$i]" "$VEC")" \
	    -f "$tmp/check.jq" >"$tmp/diff" 2>&1; then
		fail "$name: jq failed: $(head -c 300 "$tmp/diff")"
	elif [ -s "$tmp/diff" ]; then
		fail "$name: $(tr '\n' ';' <"$tmp/diff" | head -c 600)"
	fi
done

# n=1 says so, in text and markdown; JSON has null and a note.
printf '0.4068\n0.4071\n0.4065\n' >"$tmp/a.txt"
printf '0.4294\n' >"$tmp/one.txt"
for fmt in text markdown; do
	checks=$((checks + 1))
	"$BIN" compare "$tmp/a.txt" "$tmp/one.txt" --format $fmt >"$tmp/out" 2>&1 ||
	    fail "n=1 ($fmt): exit $?"
	grep -q 'n=1, no CI' "$tmp/out" || fail "n=1 ($fmt): no \"n=1, no CI\": $(cat "$tmp/out")"
	grep -qi 'nan' "$tmp/out" && fail "n=1 ($fmt): prints NaN"
done
checks=$((checks + 1))
"$BIN" compare "$tmp/a.txt" "$tmp/one.txt" --format json >"$tmp/out" 2>&1
[ "$(jq -r '.metrics[0].rows[1] | "\(.ci_lo) \(.note)"' "$tmp/out")" = "null n=1, no CI" ] ||
    fail "n=1 (json): $(jq -c '.metrics[0].rows[1]' "$tmp/out")"

# Options: name, unit, higher is better; "-" is standard input.
checks=$((checks + 1))
printf '10 11 12\n' | "$BIN" compare "$tmp/a.txt" - --name lat --unit us --higher \
    >"$tmp/out" 2>&1 || fail "stdin: exit $?"
grep -q '^lat (us) - Higher is better$' "$tmp/out" || fail "heading: $(head -3 "$tmp/out")"
grep -qF '% Change: (B-A)/|A|*100' "$tmp/out" || fail "legend lacks % Change"

# bad ARGS... PATTERN: exits 1 (2 for usage) with PATTERN on stderr.
bad() {
	local want=$1 pat=$2 rc
	shift 2
	checks=$((checks + 1))
	"$BIN" compare "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[ "$rc" = "$want" ] || { fail "compare $*: exit $rc, expected $want"; return; }
	grep -q -- "$pat" "$tmp/err" || fail "compare $*: stderr lacks '$pat': $(head -c 300 "$tmp/err")"
}
printf '1.0\n2.0\nNaN\n3\n' >"$tmp/nan.txt"
printf '1.0\n# fine\n2.0 inf\n' >"$tmp/inf.txt"
printf '1.0\n1e999\n' >"$tmp/huge.txt"
printf '1.0\n2,5\n' >"$tmp/comma.txt"
printf '1.0 abc\n' >"$tmp/garbage.txt"
printf '' >"$tmp/empty.txt"
printf '# only a comment\n\n' >"$tmp/comments.txt"
bad 1 "nan.txt:3: \"NaN\" is not a finite number" "$tmp/a.txt" "$tmp/nan.txt"
bad 1 "inf.txt:3: \"inf\" is not a finite number" "$tmp/inf.txt" "$tmp/a.txt"
bad 1 "huge.txt:2: \"1e999\" is not a finite number" "$tmp/a.txt" "$tmp/huge.txt"
bad 1 "comma.txt:2: \"2,5\" is not a finite number" "$tmp/a.txt" "$tmp/comma.txt"
bad 1 "garbage.txt:1: \"abc\" is not a finite number" "$tmp/a.txt" "$tmp/garbage.txt"
bad 1 "empty.txt: no numbers" "$tmp/empty.txt" "$tmp/a.txt"
bad 1 "comments.txt: no numbers" "$tmp/a.txt" "$tmp/comments.txt"
bad 1 "missing.txt: No such file or directory" "$tmp/a.txt" "$tmp/missing.txt"
bad 2 "is not one of text" "$tmp/a.txt" "$tmp/a.txt" --format pdf
bad 2 "too few arguments" "$tmp/a.txt"
bad 2 "only one of A and B" - -

echo "compare: $checks checks, $fails failed"
[ "$fails" = 0 ]
