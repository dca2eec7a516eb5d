#!/usr/bin/env bash
# fuzz_smoke.sh: `make fuzz` builds every libFuzzer target, and each survives a short run from an empty corpus, or its seeds in tests/fuzz/corpus/NAME (long runs are by hand, see README.md).
. "$(dirname "$0")/../lib.sh"
t_tmpdir
command -v clang >/dev/null || skip_all "no clang"
check "make fuzz builds" bash -c "make -s -C '$TOP' -j2 fuzz BUILD='$BUILD' >'$T_DIR/build.log' 2>&1 || { tail -20 '$T_DIR/build.log'; false; }"
n=0
for f in "$BUILD"/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	n=$((n + 1))
	name=$(basename "$f")
	mkdir -p "$T_DIR/$name"
	# a target's seed corpus (tests/fuzz/corpus/NAME), read only
	seeds=$TOP/tests/fuzz/corpus/$name
	[ -d "$seeds" ] || seeds=
	(cd "$T_DIR" && timeout 120 "$f" -runs=2000 -max_len=4096 "$T_DIR/$name" \
	    ${seeds:+"$seeds"} >"$T_DIR/$name.log" 2>&1)
	rc=$?
	if [ $rc = 0 ] && grep -q 'Done 2000 runs' "$T_DIR/$name.log"; then
		pass "$name runs 2000 inputs"
	else
		# say why: the scratch directory (and the log) go at exit
		fail "$name runs 2000 inputs ($([ $rc = 124 ] && echo "timed out after 120 s" || echo "exit $rc"))"
		tail -25 "$T_DIR/$name.log" | sed 's/^/  /'
	fi
done
check "at least the 7 known targets" test "$n" -ge 7
# the API targets that drive a real agent (issue 10 item 13)
for t in fuzz_statestore_api fuzz_init_admin fuzz_schedd_api fuzz_shim_api fuzz_reconciled_api fuzz_netd_api; do
	check "$t is among them" test -x "$BUILD/fuzz/$t"
done
t_done
