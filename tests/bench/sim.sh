#!/usr/bin/env bash
# tests/bench/sim.sh: mts-sim at 1,000 nodes (SIM_NODES, on nproc threads: SIM_THREADS) — the issue's set (scale: join, 10,000 replicas deployed by racing owners, 50 kills, a 50/50 partition and its heal), write propagation (writes) and failure detection under 1% loss (loss) — each scenario's table, and SVG and PNG plots of the nodes holding the final root over time and, for the reconciler's scenarios, the replicas running against desired (gnuplot, when installed).
set -u
BUILD=${BUILD:-$(pwd)/build}
SIM=$BUILD/tests/mts-sim
N=${SIM_NODES:-1000}
SEED=${SIM_SEED:-1}
# the nodes' events on every core (the same trace as one thread)
THREADS=${SIM_THREADS:-$(nproc 2>/dev/null || echo 1)}
[ "$THREADS" -le 64 ] || THREADS=64
out=$BUILD/bench-sim
mkdir -p "$out"
[ -x "$SIM" ] || { echo "mts-sim not built"; exit 1; }
rc=0

plot() { # scenario nodes
	local sc=$1 n=$2 extra='' y2='' term ext
	command -v gnuplot >/dev/null 2>&1 && [ -s "$out/$sc.dat" ] || return 0
	if [ "$(awk 'NR == 1 { print NF }' "$out/$sc.dat")" = 5 ]; then
		extra=", '' using 1:4 axes x1y2 with lines title 'replicas running',
		    '' using 1:5 axes x1y2 with lines dt 2 title 'replicas desired'"
		y2="set y2label 'replicas'; set y2tics;"
	fi
	for term in svg png; do
		ext=$term
		gnuplot -e "set terminal $term size 900,450; set output '$out/$sc.$ext';
		    set title 'mts-sim $sc: $n nodes, seed $SEED';
		    set xlabel 'virtual seconds'; set ylabel 'nodes'; $y2
		    set key bottom right;
		    plot '$out/$sc.dat' using 1:3 with lines title 'live nodes',
		         '' using 1:2 with lines title 'holding the final MST root'$extra" &&
		    echo "plot                               $out/$sc.$ext"
	done
}

# One scenario at a time (a 1,000-node run takes minutes of CPU and a few
# GiB). scale is the acceptance set; writes gives the propagation to all
# nodes; loss the detection and the false suspicions at 1% loss.
for sc in ${SIM_SCENARIOS:-scale writes loss}; do
	echo "-- $sc, $N nodes, seed $SEED, $THREADS threads"
	"$SIM" --nodes "$N" --seed "$SEED" --scenario "$sc" \
	    --threads "$THREADS" --plot "$out/$sc.dat" --progress |
	    tee "$out/$sc.txt"
	# a violated invariant is a finding printed in the table (exit 1);
	# anything else is the simulator failing
	[ "${PIPESTATUS[0]}" -le 1 ] || rc=1
	plot "$sc" "$N"
	echo
done
exit $rc
