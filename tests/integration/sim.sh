#!/usr/bin/env bash
# tests/integration/sim.sh: mts-sim at 50 nodes — every scenario's invariants (the reconciler's deploy, repair, drain and rolling update among them), the same seed giving the same trace hash (with 1, 2 or 3 threads), different seeds differing, failures reproduced by their seed (gossipd without its pings to dead members, or without its gossip interval), the injected capacity bug caught; bad arguments named (exit 2, not the whole help); and the short set at 100 nodes, every invariant strict to the end.
. "$(dirname "$0")/../lib.sh"
SIM=$BUILD/tests/mts-sim
NOCAP=$BUILD/tests/mts-sim-nocap
[ -x "$SIM" ] || skip_all "mts-sim not built"
t_tmpdir
dir=$T_DIR
N=50

run() { # scenario seed out [options]
	local sc=$1 seed=$2 out=$3
	shift 3
	"$SIM" --nodes $N --seed "$seed" --scenario "$sc" "$@" >"$out" 2>&1
}

trace_of() { tail -1 "$1" | sed -n 's/^trace \([0-9a-f]\{64\}\)$/\1/p'; }

held() { # out rc: the run held every invariant and printed its trace
	[ "$2" -eq 0 ] && grep -q '^invariants  *held$' "$1" &&
	    [ -n "$(trace_of "$1")" ]
}

"$SIM" --help >"$dir/help" 2>&1
for sc in join writes restart kill partition chaos reserve deploy repair \
    heal drain update short scale; do
	check "--help lists $sc" grep -q "^  $sc " "$dir/help"
done

# a bad argument: exit 2 and a line naming the option and the value, not
# the whole help
bad_arg() { # name expected-line-regex args...
	local name=$1 re=$2 rc
	shift 2
	"$SIM" "$@" >"$dir/bad.out" 2>"$dir/bad.err"
	rc=$?
	if [ $rc -eq 2 ] && head -1 "$dir/bad.err" | grep -q -- "$re" &&
	    ! grep -q '^Scenarios:' "$dir/bad.err" && [ ! -s "$dir/bad.out" ]; then
		pass "bad argument: $name"
	else
		fail "bad argument: $name (rc $rc: $(head -1 "$dir/bad.err"))"
	fi
}
bad_arg "no --scenario" '^mts-sim: --scenario NAME is required$'
bad_arg "unknown scenario" "^mts-sim: --scenario: no scenario 'nope'$" \
    --scenario nope
bad_arg "--nodes 1" "^mts-sim: --nodes: '1' is not a number from 2 to" \
    --nodes 1 --scenario join
bad_arg "--nodes abc" "^mts-sim: --nodes: 'abc' is not a number" \
    --nodes abc --scenario join
bad_arg "--seed 12x" "^mts-sim: --seed: '12x' is not a number" \
    --seed 12x --scenario join
bad_arg "--fanout 17" "^mts-sim: --fanout: '17' is not a number from 0 to 16" \
    --fanout 17 --scenario join
bad_arg "--threads 0" "^mts-sim: --threads: '0' is not a number from 1 to 64" \
    --threads 0 --scenario join
bad_arg "stray argument" "^mts-sim: unexpected argument 'extra'" \
    --scenario join extra

# every scenario's invariants must hold (seed 1; seed 2 too for those with
# partitions, crashes and the reconciler's races)
for sc in join writes restart kill reserve deploy repair drain update \
    partition chaos heal; do
	seeds=1
	case $sc in partition | chaos | heal | repair) seeds='1 2' ;; esac
	for seed in $seeds; do
		run $sc $seed "$dir/$sc.$seed"
		rc=$?
		if held "$dir/$sc.$seed" $rc; then
			pass "$sc seed $seed: invariants hold"
		else
			fail "$sc seed $seed: exit $rc: $(grep -m1 '^FAIL' "$dir/$sc.$seed")"
		fi
	done
done

# determinism: same seed, same trace; another seed, another trace
for sc in chaos heal; do
	run $sc 1 "$dir/$sc.again"
	a=$(trace_of "$dir/$sc.1") b=$(trace_of "$dir/$sc.again")
	check "$sc: same seed, same trace hash" test -n "$a" -a "$a" = "$b"
done
for sc in partition chaos heal repair; do
	a=$(trace_of "$dir/$sc.1") c=$(trace_of "$dir/$sc.2")
	check "$sc: another seed, another trace hash" test -n "$c" -a "$a" != "$c"
done

# A failure is reproduced by its seed. SWIM without its pings to dead
# members (--dead-probe 0, gossipd before it healed partitions): after the
# heal scenario's 15 s partition both sides hold members of the other dead
# for good, and seed 2 fails on membership, twice the same way (13 of
# seeds 1-20 do; 18 did before a member told a rumour of its own answered
# its teller: the answer, like the gossip to suspects, is a way back).
fails_same() { # [-1] name pattern cmd...: fails on pattern, and again alike
	local once=0 name pat line rc
	[ "$1" = -1 ] && once=1 && shift
	name=$1 pat=$2
	shift 2
	"$@" >"$dir/$name.a" 2>&1
	rc=$?
	line=$(grep -m1 "^FAIL seed [0-9]* at virtual time .*$pat" "$dir/$name.a")
	if [ $rc -eq 1 ] && [ -n "$line" ]; then
		pass "$name: fails, with seed and time: $line"
	else
		fail "$name: exit $rc, no FAIL line matching '$pat'"
	fi
	[ $once = 1 ] && return
	"$@" >"$dir/$name.b" 2>&1
	check "$name: the seed reproduces the failure" \
	    test -n "$line" -a "$(grep -m1 '^FAIL' "$dir/$name.b")" = "$line"
}
fails_same "heal --dead-probe 0" membership \
    "$SIM" --nodes $N --seed 2 --dead-probe 0 --scenario heal

# The injected bug: a build whose ledger grants every prepare whatever its
# capacity (mts-sim-nocap) must fail the capacity invariant, and its seed
# must reproduce the failure; deploy seed 1 above held without the bug.
if [ -x "$NOCAP" ]; then
	fails_same "injected capacity bug (mts-sim-nocap deploy)" \
	    'over its capacity$' \
	    "$NOCAP" --nodes $N --seed 1 --scenario deploy
else
	fail "mts-sim-nocap not built"
fi

# Write propagation at 100 nodes: push (fanout ceil(ln N) - 1, 12 sent-to
# ids a copy) reaches at least 98% of the nodes, and a walk a second
# brings the rest: p99 to all within 2 s. With gossipd's old fanout of 3
# and a walk every 2 s push reached 96%, every write but a few waited for
# the walks, and the p99 was 3 s.
p99_of() { sed -n 's/^  convergence (write to all) *p50 [0-9]* ms  p99 \([0-9]*\) ms.*/\1/p' "$1"; }
cov_of() { sed -n 's/^  push coverage *\([0-9.]*\)% .*/\1/p' "$1"; }
"$SIM" --nodes 100 --seed 1 --scenario writes >"$dir/writes100" 2>&1
"$SIM" --nodes 100 --seed 1 --scenario writes --fanout 3 --ae-interval 2000 \
    >"$dir/writes100.old" 2>&1
p=$(p99_of "$dir/writes100") c=$(cov_of "$dir/writes100")
po=$(p99_of "$dir/writes100.old") co=$(cov_of "$dir/writes100.old")
check "writes at 100 nodes: p99 to all ${p:-?} ms <= 2000 (fanout 3, walks every 2 s: ${po:-?} ms)" \
    test -n "$p" -a "${p:-9999}" -le 2000 -a "${po:-0}" -gt 2000
check "writes at 100 nodes: push alone reached ${c:-?}% of the nodes >= 98% (fanout 3: ${co:-?}%)" \
    awk -v c="${c:-0}" -v o="${co:-100}" 'BEGIN { exit !(c >= 98 && o < 98) }'

# The short set: 100 nodes, 60 virtual seconds, a deploy of 1,000 replicas
# by racing owners, 5 kills, a 10 s partition and its heal, under 60 s of
# CPU; the same seed twice gives the same trace; every invariant holds,
# the quiet check at the end too (all roots equal, membership whole, every
# service at its count). Before gossipd's gossip interval and the MST's
# retired pages it ended with unequal roots: refutations rode only on
# probes, so suspicions from before the heal ran out into false deaths
# and the owners placed and stopped for them up to the end; and a walk
# asked for a root page its peer had replaced since (a steady trickle of
# writes), found nothing and ended, so a node could miss records for 20 s.
TIMEFORMAT=%U+%S
for k in 1 2; do
	{ time "$SIM" --nodes 100 --seed 1 --scenario short \
	    >"$dir/short.$k" 2>&1; } 2>"$dir/short.$k.time"
	rc[$k]=$?
done
cpu=$(awk -F+ '{ printf "%.1f", $1 + $2 }' "$dir/short.1.time")
check "short set: under 60 s of CPU (took $cpu s)" \
    awk -v c="$cpu" 'BEGIN { exit !(c < 60) }'
a=$(trace_of "$dir/short.1") b=$(trace_of "$dir/short.2")
check "short set: same seed, same trace hash" test -n "$a" -a "$a" = "$b"
if held "$dir/short.1" "${rc[1]}"; then
	pass "short set: every invariant held, the quiet check at the end too"
else
	fail "short set: exit ${rc[1]}: $(grep -m1 '^FAIL' "$dir/short.1")"
fi
check "short set: the deploy reached its count" \
    grep -q '^  deploy to exact count  *[0-9]* ms$' "$dir/short.1"
check "short set: the kills were repaired" \
    grep -q '^  kill to repaired (exact count)  *[0-9]* ms$' "$dir/short.1"
check "short set: the heal came back to the exact count" \
    grep -q '^  heal to exact count  *[0-9]* ms$' "$dir/short.1"
# No live node declared dead once the quiet began (4 s after the heal):
# a member that missed a refutation told its suspect of the suspicion
# until it ran out, and the suspect's refutation, announced again to
# random members, did not reach it: in seeds 1-40, 1 to 23 live nodes a
# seed were declared dead from 1 s to 8.6 s after the heal, and owners
# placed or stopped for them after the quiet began in 25 (seed 34, before
# b888c28 changed its run, ended with unequal roots: extras placed and
# stopped from t=54 to 59 s). A member told a rumour of its own now
# answers whoever told it: 6 such deaths in 4 seeds, the last 1.3 s after
# the heal.
check "short set: no live node declared dead after quiet began" \
    grep -q '^false (of live nodes) .*deaths (0 after quiet began)$' \
    "$dir/short.1"
# What a node costs: the records, the MST's keys and pages are shared
# between the simulated nodes (sim_store.c) and the seen sets grow with
# what they hold; 2.1 MiB a node before (213 MiB), 0.7 MiB now. Not under
# the sanitizers, whose shadow memory is most of the RSS.
rss=$(sed -n 's/^memory .*peak RSS \([0-9.]*\) MiB$/\1/p' "$dir/short.1")
if ldd "$SIM" 2>/dev/null | grep -q 'libasan'; then
	skip "short set: memory per node (a sanitizer build)"
else
	check "short set: under 1 MiB a node (peak RSS ${rss:-?} MiB)" \
	    awk -v r="${rss:-1e9}" 'BEGIN { exit !(r < 100) }'
fi
# the same set with SWIM's updates riding only on probes, as before: seed
# 11 ends with a live node held dead (7 of 40 seeds fail so, 11, 24, 28,
# 33 and 38 on membership, since a member told a rumour of its own
# answers its teller; 6 of 40 before, 2, 13, 22 and 24 on membership; 1
# of 22 did with the generator shared by all nodes, seed 14 among them);
# it holds with the gossip (80 of 80 seeds)
"$SIM" --nodes 100 --seed 11 --scenario short >"$dir/short.s11" 2>&1
rc2=$?
if held "$dir/short.s11" $rc2; then
	pass "short set seed 11: every invariant held"
else
	fail "short set seed 11: exit $rc2: $(grep -m1 '^FAIL' "$dir/short.s11")"
fi
fails_same -1 "short --gossip-interval 0" 'membership: ' \
    "$SIM" --nodes 100 --seed 11 --gossip-interval 0 --scenario short

# Threads: the nodes' events of a millisecond run on T threads (nothing
# sent reaches another node within the millisecond it was sent in); each
# node has its own generator and its events their own order, so the trace
# and the table are the same whatever T. The short set's and chaos' runs
# above were single-threaded.
table_of() { grep -v '^run \|^cpu \|^memory ' "$1"; }
for t in 2 3; do
	"$SIM" --nodes 100 --seed 1 --scenario short --threads $t \
	    >"$dir/short.t$t" 2>&1
	rct=$?
	a=$(trace_of "$dir/short.1") b=$(trace_of "$dir/short.t$t")
	check "short set --threads $t: the trace of --threads 1" \
	    test -n "$b" -a "$rct" -eq 0 -a "$a" = "$b"
	check "short set --threads $t: the table of --threads 1" \
	    cmp -s <(table_of "$dir/short.1") <(table_of "$dir/short.t$t")
done
for sc in chaos heal; do
	"$SIM" --nodes $N --seed 2 --scenario $sc --threads 2 >"$dir/$sc.t2" 2>&1
	a=$(trace_of "$dir/$sc.2") b=$(trace_of "$dir/$sc.t2")
	check "$sc seed 2 --threads 2: the trace of --threads 1" \
	    test -n "$b" -a "$a" = "$b"
done
exit $T_FAILED
