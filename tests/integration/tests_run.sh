#!/usr/bin/env bash
# tests_run.sh: tests/run's verdicts — cmocka and script suites with passes, failures and skips are counted once each (a skip is not a pass), and the last line is "N passed, N failed, N skipped"; suites run two at a time, one marked "alone" beside no other; no suite writes outside its own directory.
. "$(dirname "$0")/../lib.sh"
t_tmpdir
U=$T_DIR/build/tests/unit
mkdir -p "$U"

# cmocka 1.1's output: one verdict per test, then a summary that repeats
# the names of failed and skipped tests
cat >"$U/fake_cmocka" <<'EOF'
#!/bin/sh
cat <<OUT
[==========] Running 4 test(s).
[ RUN      ] t_ok
[       OK ] t_ok
[ RUN      ] t_bad1
[  ERROR   ] --- 1 != 2
[   LINE   ] --- x.c:1: error: Failure!
[  FAILED  ] t_bad1
[ RUN      ] t_bad2
[  FAILED  ] t_bad2
[ RUN      ] t_skip
[  SKIPPED ] t_skip
[==========] 4 test(s) run.
[  PASSED  ] 1 test(s).
[  SKIPPED ] 1 test(s), listed below:
[  SKIPPED ] t_skip
[  FAILED  ] 2 test(s), listed below:
[  FAILED  ] t_bad1
[  FAILED  ] t_bad2

 2 FAILED TEST(S)
OUT
exit 2
EOF
# a tests/lib.sh script with a pass and a skipped check
cat >"$U/fake_script" <<EOF
#!/usr/bin/env bash
. "$TOP/tests/lib.sh"
pass "works"
skip "needs a GPU (none here)"
t_done
EOF
# a script that cannot run here at all
cat >"$U/fake_skipall" <<EOF
#!/usr/bin/env bash
. "$TOP/tests/lib.sh"
skip_all "needs root"
pass "never reached"
EOF
# a program that prints its own summary line
printf '#!/bin/sh\necho "3 passed, 0 failed, 2 skipped"\n' >"$U/fake_summary"
chmod +x "$U"/*

out=$(BUILD=$T_DIR/build TESTS='^unit/fake_' "$TOP/tests/run")
rc=$?
echo "$out" | sed 's/^/  /'
row() { grep -E "^unit/$1 +$2 passed +$3 failed +$4 skipped" <<<"$out" >/dev/null; }
check "cmocka: 1 passed, 2 failed, 1 skipped (summary names not counted)" row fake_cmocka 1 2 1
check "script: a SKIP line is a skip, not a pass" row fake_script 1 0 1
check "script: skip_all counts one skip and stops the script" row fake_skipall 0 0 1
check "a suite's own summary line with skips" row fake_summary 3 0 2
check "last line: N passed, N failed, N skipped" test "$(tail -1 <<<"$out")" = "5 passed, 2 failed, 5 skipped"
check "the skipping suites are listed" grep -q "^suites with skips: .*unit/fake_skipall" <<<"$out"
check "exit status non-zero with failures" [ $rc -ne 0 ]
out=$(BUILD=$T_DIR/build TESTS='^unit/fake_(script|skipall)$' "$TOP/tests/run")
check "skips alone do not fail the run" test $? -eq 0 -a "$(tail -1 <<<"$out")" = "1 passed, 0 failed, 2 skipped"
# No suite reports a skip as a pass (use skip / skip_all from tests/lib.sh).
pat='PASS: skip|pass "skip'
hits=$(grep -rnE "$pat" "$TOP/tests" --include='*.sh' --include='*.bash' --include='*.c' --include='*.py' |
	grep -v "^$TOP/tests/integration/tests_run.sh:")
check "no suite prints PASS for a skip${hits:+ (${hits:0:400})}" test -z "$hits"
# Lanes: suites run MTS_TEST_JOBS at a time (2 by default), and one whose
# head says "tests/run: alone" runs beside no other. Each fake suite logs
# its start and end (ns) to a shared file; intervals tell the overlap.
P=$T_DIR/lanes/tests/unit
mkdir -p "$P"
for n in a b c; do
	printf '#!/bin/sh
echo "s %s $(date +%%s%%N)" >>%s/spans
sleep 2
echo "e %s $(date +%%s%%N)" >>%s/spans
echo PASS: slept
' \
	    "$n" "$T_DIR" "$n" "$T_DIR" >"$P/lane_$n"
done
printf '#!/bin/sh
# tests/run: alone
echo "s z $(date +%%s%%N)" >>%s/spans
sleep 1
echo "e z $(date +%%s%%N)" >>%s/spans
echo PASS: alone
' \
    "$T_DIR" "$T_DIR" >"$P/lane_z"
chmod +x "$P"/*
t0=$(date +%s%N)
out=$(env -u MTS_TEST_JOBS BUILD=$T_DIR/lanes TESTS=^unit/lane_ "$TOP/tests/run")
rc=$?
wall=$((($(date +%s%N) - t0) / 1000000))
echo "$out" | sed 's/^/  /'
check "lanes: every suite counted once (4 passed, exit 0)" \
    test $rc -eq 0 -a "$(tail -1 <<<"$out")" = "4 passed, 0 failed, 0 skipped"
# overlap A B: whether the runs of suites A and B overlapped in time
overlap() {
	awk -v a="$1" -v b="$2" '$1 == "s" { s[$2] = $3 } $1 == "e" { e[$2] = $3 }
	    END { exit !(s[a] < e[b] && s[b] < e[a]) }' "$T_DIR/spans"
}
pairs=0
for x in a:b a:c b:c; do overlap "${x%:*}" "${x#*:}" && pairs=$((pairs + 1)); done
check "lanes: two of the three 2 s suites ran side by side ($pairs pairs overlapped, $wall ms in all)" \
    test $pairs -ge 1
check "lanes: never three at once with MTS_TEST_JOBS=2" test $pairs -lt 3
check "lanes: the 'alone' suite overlapped no other" \
    bash -c "! { $(declare -f overlap); T_DIR=$T_DIR; overlap z a || overlap z b || overlap z c; }"
rm -f "$T_DIR/spans"
out=$(BUILD=$T_DIR/lanes MTS_TEST_JOBS=1 TESTS="^unit/lane_[ab]$" "$TOP/tests/run")
check "lanes: MTS_TEST_JOBS=1 runs one at a time" \
    bash -c "! { $(declare -f overlap); T_DIR=$T_DIR; overlap a b; }"
out=$(BUILD=$T_DIR/lanes TESTS=^unit/lane_ MTS_TEST_JOBS=0 "$TOP/tests/run" 2>&1)
check "lanes: MTS_TEST_JOBS=0 is refused, saying why" \
    test $? -eq 2 -a -n "$(grep "MTS_TEST_JOBS='0' is not a positive count" <<<"$out")"

# t_tmpdir sets T_DIR and prints nothing: "dir=$(t_tmpdir)" leaves dir empty
# and the suite writes into /, where two runs at once read each other's
# files (sim.sh did: "another seed, another trace hash" failed at random).
hits=$(grep -rn '$(t_tmpdir)' "$TOP/tests" --include='*.sh' --include='*.bash' |
	grep -v "^$TOP/tests/integration/tests_run.sh:")
check "no suite takes t_tmpdir's output for its directory${hits:+ (${hits:0:400})}" test -z "$hits"
t_done
