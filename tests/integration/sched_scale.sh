#!/usr/bin/env bash
# sched_scale.sh: 9 replicas on 3 nodes run 3 per node with `service ps` agreeing on every node, a global service runs exactly one task per node, and scaling up and down from different nodes (the last two requests a moment apart) converges to the last requested count and stays there.
. "$(dirname "$0")/lib_sched.bash"
s_up 3

s_stack web 'services:
  web:
    image: busybox:latest
    command: ["sleep", "3600"]
    deploy: {replicas: 9}
  agent:
    image: busybox:latest
    command: ["sleep", "3600"]
    deploy: {mode: global}'
out=$(g_ctl 1 deploy -c web.yml --stack w --wait 60 2>&1)
check "deploy of 9 replicas and a global service exits 0" test $? -eq 0
check "every node's service ps: 9 running, the same nodes" wait_for 15 s_all_agree w_web 9
check "3 per node ($(s_per_node 1 w_web))" test "$(s_per_node 1 w_web)" = "n1=3 n2=3 n3=3"
check "the global service: one task per node, seen alike on every node" \
	wait_for 15 s_all_agree w_agent 3
check "... exactly one on each ($(s_per_node 2 w_agent))" test "$(s_per_node 2 w_agent)" = "n1=1 n2=1 n3=1"
ls_counts() { s_ls 3 | jp 'dict(sorted((s["name"], "%d/%d" % (s["running"], s["desired"])) for s in j))'; }
check "service ls: w_web 9/9, w_agent 3/3 ($(ls_counts))" \
	test "$(ls_counts)" = "{'w_agent': '3/3', 'w_web': '9/9'}"

# stable_at N SECONDS: N running on every node's view for SECONDS
stable_at() {
	local end=$((SECONDS + $2))
	while [ $SECONDS -lt $end ]; do
		s_all_agree w_web "$1" || return 1
		sleep 0.5
	done
}

check "scale to 4 from node 2" g_ctl 2 service scale w_web=4
check "... converges to 4" wait_for 30 s_all_agree w_web 4
check "... and stays at 4 for 3 s" stable_at 4 3
stopped=$(g_ctl 1 -o json task ls | jp 'sum(1 for t in j if t.get("service") == "w_web" and t["state"] == "running")')
check "node 1's shim runs at most 2 of them ($stopped)" test "$stopped" -le 2

check "scale to 12 from node 3" g_ctl 3 service scale w_web=12
check "... converges to 12" wait_for 40 s_all_agree w_web 12
check "... spread 4 per node ($(s_per_node 1 w_web))" test "$(s_per_node 1 w_web)" = "n1=4 n2=4 n3=4"

# two requests from two nodes a moment apart: the last one wins
g_ctl 1 service scale w_web=8 >/dev/null
g_ctl 3 service scale w_web=2 >/dev/null
check "scale 8 from node 1 then 2 from node 3: the record says 2 on every node" \
	wait_for 10 bash -c 'for i in 1 2 3; do
		[ "$('"$BIN"'/mtsctl -r '"$MTS_CLUSTER_DIR"'/n$i/run -o json service ls | python3 -c "import json,sys; print([s[\"desired\"] for s in json.load(sys.stdin) if s[\"name\"] == \"w_web\"][0])")" = 2 ] || exit 1
	done'
check "... converges to 2" wait_for 40 s_all_agree w_web 2
check "... and stays at 2 for 4 s" stable_at 2 4
running=0
for i in 1 2 3; do
	c=$(g_ctl "$i" -o json task ls | jp 'sum(1 for t in j if t.get("service") == "w_web" and t["state"] == "running")')
	running=$((running + c))
done
check "the shims run exactly 2 containers of w_web ($running)" test "$running" = 2
check "the global service kept its 3" test "$(s_running 2 w_agent)" = 3
t_done
