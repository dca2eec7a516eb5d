#!/usr/bin/env bash
# tests/netns/partition_heal.sh: 5 real nodes (gossipd and statestore), each in its network namespace, cut 2/3 with nftables, a write on each side, healed: every node sees every other alive again and all MST roots are equal within the bound, twice (the cut the other way round the second time), with the heal-to-alive and heal-to-equal-roots times printed.
. "$(dirname "$0")/lib.sh"

# The bound. Measured from the heal on the shared 2-core machine (load
# average 13), 8 cycles: all alive after 2.4 to 6.2 s (median 3.9 s), all
# roots equal after 2.6 to 7.4 s (median 5.4 s). gossipd before
# dead_probe_interval never had all 5 nodes alive again within 20 s (2 of
# 2 cycles) and its roots took 7.5 and 14.6 s. Later runs at higher load
# took up to 8.5 s: the bound leaves twice that.
BOUND=${NETNS_HEAL_BOUND:-20}
now_ms() { date +%s%3N; }
has() { g_ctl "$1" state get "$2" >/dev/null 2>&1; } # I KEY
# sees_dead I J...: node I holds every node J dead
sees_dead() {
	local i=$1 j
	shift
	for j in "$@"; do [ "$(g_state_of "$i" "$(g_id "$j")")" = dead ] || return 1; done
}
both_everywhere() { # KEY1 KEY2
	local i
	for i in 1 2 3 4 5; do has "$i" "$1" && has "$i" "$2" || return 1; done
}
all_alive() { g_all_alive 5 1 2 3 4 5; }
roots_equal() { g_roots_equal 1 2 3 4 5; }

n_up 5 || { cat "$T_DIR/up.log"; fail "5 nodes up in namespaces"; t_done; }
check "every node sees 5 alive" wait_for 20 all_alive

# cycle SMALL LARGE NAME: partition, write on both sides, heal, measure
cycle() {
	local small=$1 large=$2 name=$3 a b t0 ta= tr=
	a=${small%%,*} b=${large%%,*}
	partition "$small" "$large"
	check "$name: each side declares the other dead" \
		wait_for 30 eval "sees_dead $a ${large//,/ } && sees_dead $b ${small//,/ }"
	g_ctl "$a" state put "demo/$name-small" "written on node $a" >/dev/null &&
		g_ctl "$b" state put "demo/$name-large" "written on node $b" >/dev/null
	check "$name: a write on each side" test $? = 0
	sleep 2 # anti-entropy would have crossed by now, if it could
	check "$name: the writes stay on their side" \
		eval "! has $b demo/$name-small && ! has $a demo/$name-large"
	heal
	t0=$(now_ms)
	while [ $(($(now_ms) - t0)) -lt $((BOUND * 1000)) ]; do
		[ -z "$ta" ] && all_alive && ta=$(($(now_ms) - t0))
		[ -z "$tr" ] && roots_equal && tr=$(($(now_ms) - t0))
		[ -n "$ta" ] && [ -n "$tr" ] && break
		sleep 0.1
	done
	check "$name: every node sees every other alive within ${BOUND}s of the heal" test -n "$ta"
	check "$name: all MST roots equal within ${BOUND}s of the heal" test -n "$tr"
	check "$name: both writes on every node" \
		both_everywhere "demo/$name-small" "demo/$name-large"
	echo "heal $name: all alive after ${ta:--} ms, roots equal after ${tr:--} ms"
	[ -n "$tr" ] && echo "$tr" >>"$T_DIR/times"
}
cycle 1,2 3,4,5 first
cycle 4,5 1,2,3 second
[ -s "$T_DIR/times" ] && echo "heal to equal roots, ms: $(sort -n "$T_DIR/times" | tr '\n' ' ')"
t_done
