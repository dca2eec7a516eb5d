#!/usr/bin/env bash
# tests/integration/sim.sh: mts-sim at 50 nodes — every scenario's invariants, the same seed giving the same trace hash, different seeds differing, and a failure reproduced by its seed.
. "$(dirname "$0")/../lib.sh"
SIM=$BUILD/tests/mts-sim
[ -x "$SIM" ] || skip_all "mts-sim not built"
dir=$(t_tmpdir)
N=50

run() { # scenario seed out
	"$SIM" --nodes $N --seed "$2" --scenario "$1" >"$3" 2>&1
}

trace_of() { tail -1 "$1" | sed -n 's/^trace \([0-9a-f]\{64\}\)$/\1/p'; }

"$SIM" --help >"$dir/help" 2>&1
for sc in join writes kill partition chaos reserve; do
	check "--help lists $sc" grep -q "^  $sc " "$dir/help"
done

# scenarios whose invariants must hold (seeds 1 and 2)
for sc in join writes kill reserve; do
	for seed in 1 2; do
		run $sc $seed "$dir/$sc.$seed"
		rc=$?
		if [ $rc -eq 0 ] && grep -q '^invariants  *held$' "$dir/$sc.$seed" &&
		    [ -n "$(trace_of "$dir/$sc.$seed")" ]; then
			pass "$sc seed $seed: invariants hold"
		else
			fail "$sc seed $seed: exit $rc: $(grep -m1 '^FAIL' "$dir/$sc.$seed")"
		fi
	done
done

# Partitions and chaos: gossipd's SWIM does not heal a partition (docs/
# simulator.md, "What it found"): members declared dead on both sides are
# never probed nor gossiped to again, so membership stays split after the
# heal. Until gossipd heals partitions these runs must fail an invariant, and
# their seed must reproduce the failure exactly; when they start to pass,
# move them into the list above.
for sc in partition chaos; do
	run $sc 1 "$dir/$sc.1"
	rc=$?
	line=$(grep -m1 '^FAIL seed 1 at virtual time' "$dir/$sc.1")
	if [ $rc -eq 1 ] && [ -n "$line" ]; then
		pass "$sc seed 1 fails an invariant with seed and time: $line"
	else
		fail "$sc seed 1: exit $rc, no FAIL line (fixed? see the comment)"
	fi
	run $sc 1 "$dir/$sc.1b"
	check "$sc: the seed reproduces the failure" \
	    test "$(grep -m1 '^FAIL' "$dir/$sc.1b")" = "$line"
done

# determinism: same seed, same trace; another seed, another trace
for sc in join writes kill partition chaos reserve; do
	run $sc 1 "$dir/$sc.again"
	a=$(trace_of "$dir/$sc.1") b=$(trace_of "$dir/$sc.again")
	check "$sc: same seed, same trace hash" test -n "$a" -a "$a" = "$b"
	run $sc 3 "$dir/$sc.3"
	c=$(trace_of "$dir/$sc.3")
	check "$sc: another seed, another trace hash" test -n "$c" -a "$a" != "$c"
done
exit $T_FAILED
