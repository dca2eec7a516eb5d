#!/usr/bin/env bash
# tests_run.sh: tests/run's verdicts — cmocka and script suites with passes, failures and skips are counted once each (a skip is not a pass), and the last line is "N passed, N failed, N skipped".
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
t_done
