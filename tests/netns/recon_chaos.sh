#!/usr/bin/env bash
# tests/netns/recon_chaos.sh: chaos on 5 nodes in network namespaces with real containers and 3 services (6 and 4 replicas, one global) on 1-CPU nodes — random node kills (SIGKILL of the whole process tree), restarts and link cuts for CHAOS_SECS (45; make chaos and make bench: 180), then quiet: within 60 s every service runs exactly its count, no node is over capacity (every node's schedd ledger and the replicated task records), every node's view agrees and all MST roots are equal. The faults are a pure function of the seed (chaos_plan.py), printed before they start: CHAOS_SEED=N replays the same sequence.
. "$(dirname "$0")/lib_recon.bash"

SECS=${CHAOS_SECS:-45}
SEED=${CHAOS_SEED:-$(od -An -N3 -tu4 /dev/urandom | tr -d ' ')}
QUIET=${CHAOS_QUIET:-60}
NODES=5
CAP=1000 # millicores per node
# service replicas millicores (0 replicas: global, one per node)
SVCS="c_web 6 200
c_api 4 250
c_mon 0 100"
now_ms() { date +%s%3N; }

echo "chaos seed $SEED: $SECS s of faults on $NODES nodes (replay: CHAOS_SEED=$SEED CHAOS_SECS=$SECS $0)"
python3 "$TOP/tests/netns/chaos_plan.py" "$SEED" "$SECS" "$NODES" >"$T_DIR/plan" ||
	{ fail "the fault schedule"; t_done; }
sed 's/^/  plan: /' "$T_DIR/plan"

export MTS_CLUSTER_SCHEDD_CONF="cpus = 1\nmemory = 1G"
r_up $NODES
{
	echo "services:"
	while read -r s n m; do
		echo "  ${s#c_}:"
		echo "    image: busybox:latest"
		echo '    command: ["sleep", "3600"]'
		echo "    stop_grace_period: 1s"
		echo "    deploy:"
		if [ "$n" = 0 ]; then echo "      mode: global"; else echo "      replicas: $n"; fi
		echo "      resources:"
		echo "        reservations: {cpus: \"0.$((m / 10))\", memory: 16M}"
	done <<<"$SVCS"
} >"$T_DIR/c.yml"
deploy() { g_ctl 1 deploy -c "$T_DIR/c.yml" --stack c --wait 90 >"$T_DIR/deploy.out" 2>&1; }
check "deploy of 3 services converges" deploy

# snap: every node's view of the stack's tasks (stack ps), then one pass
# over them (python) that prints "EXACT OWN ANY WHY": EXACT 1 when every
# service runs exactly its count (a global one once per node) by each
# node's own records and every node's view holds the same running tasks;
# OWN the nodes whose own records (in their own view) have tasks desired
# running (pending or running) reserve more than their capacity, ANY the
# same in any node's view ("-": none; a view lagging behind a node that
# removed a task and took another may show both for a moment, so ANY
# counts once the views agree), WHY what is not at its count yet
snap() {
	local i w=()
	# all nodes at once: a killed or cut-off node costs one timeout, not five
	for i in $(seq 1 $NODES); do
		{ g_ctl "$i" -o json stack ps c 2>/dev/null >"$SNAP/ps.$i" || echo "[]" >"$SNAP/ps.$i"; } &
		w+=($!)
	done
	wait "${w[@]}"
	python3 - "$SNAP" $NODES $CAP "$SVCS" $(for i in $(seq 1 $NODES); do g_id "$i"; done) <<'PY'
import json, sys
d, n, cap, svcs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ids = sys.argv[5:5 + n]
svc = {s: (int(k), int(m)) for s, k, m in (l.split() for l in svcs.splitlines())}
views = []
for i in range(1, n + 1):
    # a node that did not answer (killed, cut off, or an error object
    # instead of the task list) contributes an empty view
    try:
        v = json.load(open("%s/ps.%d" % (d, i)))
    except ValueError:
        v = []
    if not isinstance(v, list) or not all(isinstance(t, dict) and
                                          {"task", "service", "node", "state", "desired_state"} <= t.keys() for t in v):
        v = []
    views.append(v)
run = lambda t: t["state"] == "running" and t["desired_state"] == "running"
exact, why = 1, []
for s, (k, m) in svc.items():
    truth = sorted(t["task"] for i in range(n) for t in views[i]
                   if t["service"] == s and t["node"] == ids[i] and run(t))
    per = [sum(1 for t in views[i] if t["service"] == s and t["node"] == ids[i] and run(t)) for i in range(n)]
    if (k and len(truth) != k) or (not k and per != [1] * n):
        exact = 0
        why.append("%s runs %s" % (s, "+".join(map(str, per))))
    for i, v in enumerate(views):
        if sorted(t["task"] for t in v if t["service"] == s and run(t)) != truth:
            exact = 0
            why.append("n%d's view of %s differs" % (i + 1, s))
own, anyv = set(), set()
for i, v in enumerate(views):
    use = {}
    for t in v:
        if t["service"] in svc and t["desired_state"] == "running" and t["state"] in ("running", "pending"):
            use[t["node"]] = use.get(t["node"], 0) + svc[t["service"]][1]
    for x, u in use.items():
        if u > cap:
            j = ids.index(x) + 1 if x in ids else 0
            anyv.add("n%d=%d(view of n%d)" % (j, u, i + 1))
            if j == i + 1:
                own.add("n%d=%d" % (j, u))
print(exact, ",".join(sorted(own)) or "-", ",".join(sorted(anyv)) or "-", "; ".join(why[:4]))
PY
}
exact() { [ "$(snap | cut -d' ' -f1)" = 1 ]; }
SNAP=$T_DIR
# ledger_ok I [FILE]: node I's schedd ledger (node inspect -o json in FILE,
# else asked on node I) holds no more than its capacity, tasks and live leases
# together
ledger_ok() { # I [FILE]
	{ if [ -n "${2:-}" ]; then cat "$2"; else g_ctl "$1" -o json node inspect "n$1" 2>/dev/null; fi; } | python3 -c '
import json, sys
j, cap = json.load(sys.stdin), int(sys.argv[1])
used = sum(t["cpu_millis"] for t in j["task_list"]) + sum(l["cpu_millis"] for l in j["lease_list"] if l["state"] == "prepared")
sys.exit(0 if j["capacity"]["cpu_millis"] == cap and j["reserved"]["cpu_millis"] <= cap and used <= cap else 1)' "$CAP"
}
check "before the faults: every service at its count" wait_for 30 exact

# all through the faults, every 2 s: each node that answers keeps its
# ledger within its capacity, and its own records ask no more of it
sampler() {
	local i o w
	SNAP=$T_DIR/bg
	mkdir -p "$SNAP"
	while :; do
		w=()
		for i in $(seq 1 $NODES); do
			g_ctl "$i" -o json node inspect "n$i" >"$SNAP/ledger.$i" 2>/dev/null &
			w+=($!)
		done
		wait "${w[@]}"
		for i in $(seq 1 $NODES); do
			[ -s "$SNAP/ledger.$i" ] || continue # it did not answer
			ledger_ok "$i" "$SNAP/ledger.$i" || echo "node $i's ledger over capacity at $(date +%T)"
		done
		# a sample whose snapshot could not be computed is no evidence
		# either way: it is counted apart, not taken for a violation
		if ! o=$(snap 2>>"$T_DIR/snap.err") || [ -z "$o" ]; then
			echo "$(date +%T)" >>"$T_DIR/unsampled"
		else
			date +%s >>"$T_DIR/sampled"
			[ "$(cut -d' ' -f2 <<<"$o")" = - ] ||
				echo "records over capacity at $(date +%T): $(cut -d' ' -f2 <<<"$o")"
		fi
		sleep 2
	done >>"$T_DIR/violations" 2>/dev/null
}
touch "$T_DIR/violations"
sampler </dev/null &
SAMPLER=$!
T_PIDS+=("$SAMPLER")

# --- the faults, as planned ------------------------------------------------
t0=$(now_ms)
while read -r at what arg; do
	due=$(python3 -c "print(int($t0 + 1000 * $at))")
	while [ "$(now_ms)" -lt "$due" ]; do sleep 0.1; done
	printf '  t=%5.1f (planned %5.1f): %s %s\n' "$(echo "($(now_ms) - $t0) / 1000" | bc -l)" "$at" "$what" "$arg"
	case $what in
	kill) "$GOSSIP_CLUSTER" kill "$arg" >/dev/null ;;
	start) "$GOSSIP_CLUSTER" start "$arg" >>"$T_DIR/start.log" 2>&1 || echo "  (node $arg did not start)" ;;
	partition) partition $arg ;;
	isolate) isolate "$arg" ;;
	heal) heal ;;
	esac
done <"$T_DIR/plan"
kill "$SAMPLER" 2>/dev/null
wait "$SAMPLER" 2>/dev/null
# whatever the schedule did, a whole cluster from here on
for i in $(seq 1 $NODES); do "$GOSSIP_CLUSTER" start "$i" >>"$T_DIR/start.log" 2>&1; done
heal
echo "  faults over after $((($(now_ms) - t0) / 1000)) s; quiet from here"

# --- quiet -------------------------------------------------------------------
tq=$(now_ms) tx= tr= over=
while [ $(($(now_ms) - tq)) -lt $((QUIET * 1000)) ]; do
	read -r e o a why < <(snap)
	[ -n "${e:-}" ] || { sleep 0.2; continue; } # no snapshot this time
	[ "$why" != "${lastwhy:-}" ] && echo "  quiet +$(($(now_ms) - tq)) ms: ${why:-every service at its count}" && lastwhy=$why
	[ "$o" != - ] && over="$over $o"
	[ "$e" = 1 ] && [ "$a" != - ] && over="$over $a"
	[ -z "$tx" ] && [ "$e" = 1 ] && tx=$(($(now_ms) - tq))
	[ -n "$tx" ] && [ -z "$tr" ] && g_roots_equal $(seq 1 $NODES) && tr=$(($(now_ms) - tq))
	[ -n "$tx" ] && [ -n "$tr" ] && break
	sleep 0.2
done
nsamp=$(cat "$T_DIR/sampled" 2>/dev/null | wc -l) nunsamp=$(cat "$T_DIR/unsampled" 2>/dev/null | wc -l)
[ -s "$T_DIR/snap.err" ] && echo "  snapshots not computed: $(tail -1 "$T_DIR/snap.err")"
check "during the faults no node's ledger or own records over its capacity, sampled through the faults ($nsamp samples, $nunsamp not computed; $(grep -c . "$T_DIR/violations") over$(head -3 "$T_DIR/violations" | sed 's/^/; /' | tr -d '\n'))" \
	test ! -s "$T_DIR/violations" -a "$nsamp" -gt 0
check "every node sees $NODES alive" g_all_alive $NODES $(seq 1 $NODES)
check "within ${QUIET}s of the quiet: every service at its count, every view agreeing (${tx:--} ms)" test -n "$tx"
check "within ${QUIET}s of the quiet: all MST roots equal (${tr:--} ms)" test -n "$tr"
check "no node's task records over its capacity, sampled all through the quiet (its own view; every view once they agree)${over:+:}${over}" test -z "$over"
for i in $(seq 1 $NODES); do
	check "node $i's schedd ledger within its capacity ($CAP millicores)" ledger_ok "$i"
done
sleep 3
check "3 s later still every service at its count" exact
echo "chaos seed $SEED: quiet to exact counts ${tx:--} ms, to equal roots ${tr:--} ms"
t_done
