#!/usr/bin/env bash
# sched_overcommit.sh: never over-committed — 3 nodes of 1 CPU each, 5 stacks of 3 replicas reserving 0.3 CPU deployed at the same moment from 3 different nodes (15 wanted, 9 fit): at no time and at the end does a node run more than fits, checked from every node's schedd ledger, from the replicated task records on every node and from each node's shim, and the total running is exactly the 9 that fit.
. "$(dirname "$0")/lib_sched.bash"
export MTS_CLUSTER_SCHEDD_CONF="cpus = 1\nmemory = 1G"
s_up 3
CAP=1000 PER=300 FIT=9 # 3 tasks of 300 millicores fit a node of 1000

for s in 1 2 3 4 5; do
	s_stack "s$s" 'services:
  app:
    image: busybox:latest
    command: ["sleep", "3600"]
    deploy:
      replicas: 3
      resources:
        limits: {cpus: "0.3", memory: 32M}
        reservations: {cpus: "0.3", memory: 32M}'
done
# all five at once, from nodes 1 2 3 1 2
pids=()
for s in 1 2 3 4 5; do
	g_ctl $(((s - 1) % 3 + 1)) deploy -c "s$s.yml" --stack "s$s" --detach >"$T_DIR/deploy$s.out" 2>&1 &
	pids+=($!)
done
ok=1
for p in "${pids[@]}"; do wait "$p" || ok=0; done
check "5 deploys from 3 nodes at once all written" test $ok = 1

SVCS="s1_app s2_app s3_app s4_app s5_app"
# per_node I: "nodename=count" of every running task, from node I's records
per_node() {
	local s
	for s in $SVCS; do s_ps "$1" "$s"; done |
		python3 -c '
import json, sys, collections
c, text, i = collections.Counter(), sys.stdin.read(), 0
while text[i:].strip():  # one JSON array per service
    i += len(text[i:]) - len(text[i:].lstrip())
    rows, i = json.JSONDecoder().raw_decode(text, i)
    c.update(t["node_name"] for t in rows if t["state"] == "running")
print(" ".join("%s=%d" % kv for kv in sorted(c.items())))'
}
total() { # NODE_COUNTS
	local t=0 kv
	for kv in $1; do t=$((t + ${kv#*=})); done
	echo $t
}
max_node() {
	local m=0 kv
	for kv in $1; do [ "${kv#*=}" -gt $m ] && m=${kv#*=}; done
	echo $m
}

# watch the counts until 9 run and nothing changes for 3 s
worst=0 last= since=$SECONDS deadline=$((SECONDS + 60))
while [ $SECONDS -lt $deadline ]; do
	now=$(per_node $((SECONDS % 3 + 1)))
	m=$(max_node "$now")
	[ "$m" -gt $worst ] && worst=$m
	[ "$now" != "$last" ] && { last=$now; since=$SECONDS; }
	[ "$(total "$now")" = $FIT ] && [ $((SECONDS - since)) -ge 3 ] && break
	sleep 0.3
done
echo "    final placement: $last"
check "at no time did a node run more than 3 of them (most seen: $worst)" test $worst -le 3
check "the total running is what fits: $FIT ($(total "$last"))" test "$(total "$last")" = $FIT
check "3 on each node ($last)" test "$last" = "n1=3 n2=3 n3=3"
for i in 1 2 3; do
	check "node $i's records say the same ($(per_node "$i"))" test "$(per_node "$i")" = "$last"
done

# every node's ledger, asked from every node
ledger_ok() { # FROM NODE
	g_ctl "$1" -o json node inspect "n$2" | jf '(
j["reserved"]["cpu_millis"] <= j["capacity"]["cpu_millis"] == '$CAP' and
sum(t["cpu_millis"] for t in j["task_list"]) + sum(l["cpu_millis"] for l in j["lease_list"] if l["state"] == "prepared") <= j["capacity"]["cpu_millis"] and
j["reserved"]["memory"] <= j["capacity"]["memory"] and
sum(1 for t in j["task_list"] if t["service"].startswith("s")) == 3)'
}
for f in 1 2 3; do
	for n in 1 2 3; do
		check "node $n's ledger (asked from node $f): 3 tasks, within its capacity" ledger_ok "$f" "$n"
	done
done
# each node's shim: what it really runs
for i in 1 2 3; do
	cpu=$(g_ctl "$i" -o json task ls | jp 'sum(t["cpu_millis"] for t in j if t["state"] == "running")')
	check "node $i's shim runs $cpu of $CAP millicores" test "$cpu" -le $CAP -a "$cpu" -eq $((3 * PER))
done
# the 6 that do not fit stay unplaced, and the owners go on trying
sleep 3
check "3 s later still $FIT running, 3 per node" test "$(per_node 2)" = "n1=3 n2=3 n3=3"
t_done
