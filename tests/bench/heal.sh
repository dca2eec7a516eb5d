#!/usr/bin/env bash
# tests/bench/heal.sh: heal to the exact desired count after a 2/3 partition — 10 replicas on 5 nodes in network namespaces with real containers, cut 2/3 until each side runs 10 on its side (20 in all), then every link back at once: the time from the heal until exactly 10 run with every node's view agreeing, and until all MST roots are equal as well; HEAL_BENCH_RUNS (5) cycles, the owner on the small side and the large side in turn, median of them.
. "$(dirname "$0")/../netns/lib_recon.bash"

RUNS=${HEAL_BENCH_RUNS:-5}
WANT=10
SVC=h_web
now_ms() { date +%s%3N; }
row() { printf '%-52s %10s %s\n' "$1" "$2" "$3"; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

r_up 5 >"$T_DIR/up.out" 2>&1 || { cat "$T_DIR/up.out"; exit 1; }
cat >"$T_DIR/h.yml" <<YML
services:
  web:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy:
      replicas: $WANT
YML
g_ctl 1 deploy -c "$T_DIR/h.yml" --stack h --wait 60 >/dev/null || { echo "deploy failed"; exit 1; }
wait_for 30 r_agree "$SVC" "$WANT" || { echo "the $WANT replicas did not converge"; exit 1; }

dead_all() { # I J...: node I holds every node J dead
	local i=$1 j
	shift
	for j in "$@"; do [ "$(g_state_of "$i" "$(g_id "$j")")" = dead ] || return 1; done
}
restored() { # A SMALL... -- B LARGE...: each side runs WANT on its side
	[ "$(r_live "$1" "$SVC" $2)" = "$WANT" ] && [ "$(r_live "$3" "$SVC" $4)" = "$WANT" ]
}

echo "heal to exact count after a 2/3 partition: 5 nodes (netns), $WANT replicas, real containers"
for k in $(seq 1 "$RUNS"); do
	O=$(r_idx "$(r_owner 1 "$SVC")")
	set -- $(seq 1 5 | grep -vx "$O" | tr '\n' ' ')
	if [ $((k % 2)) = 1 ]; then
		side=small small="$O $1" large="$2 $3 $4"
	else
		side=large small="$3 $4" large="$O $1 $2"
	fi
	partition "${small// /,}" "${large// /,}"
	a=${small%% *} b=${large%% *}
	if ! wait_for 30 eval "dead_all $a $large && dead_all $b $small" ||
	    ! wait_for 40 restored "$a" "$small" "$b" "$large"; then
		row "heal $k (owner on the $side side)" "-" "(the sides did not restore $WANT each)"
		heal
		wait_for 60 r_agree "$SVC" "$WANT"
		continue
	fi
	sleep 2
	heal
	t0=$(now_ms) tx= tr=
	while [ $(($(now_ms) - t0)) -lt 60000 ]; do
		[ -z "$tx" ] && r_agree "$SVC" "$WANT" && tx=$(($(now_ms) - t0))
		[ -n "$tx" ] && [ -z "$tr" ] && g_roots_equal 1 2 3 4 5 && tr=$(($(now_ms) - t0))
		[ -n "$tx" ] && [ -n "$tr" ] && break
		sleep 0.1
	done
	row "heal $k (owner on the $side side): exact $WANT, then equal roots" "${tx:--} ${tr:--}" ms
	[ -n "$tx" ] && echo "$tx" >>"$T_DIR/tx"
	[ -n "$tr" ] && echo "$tr" >>"$T_DIR/tr"
	wait_for 20 r_agree "$SVC" "$WANT" # settled before the next cut
done
row "heal to exact count, median of $RUNS" "$(median <"$T_DIR/tx" 2>/dev/null)" ms
row "heal to exact count and equal MST roots, median of $RUNS" "$(median <"$T_DIR/tr" 2>/dev/null)" ms
t_done
