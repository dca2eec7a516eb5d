#!/usr/bin/env bash
# recon_drain.sh: drain, pause and activate on 3 real nodes with real containers — node drain n3 moves every task off it (a stop-first service, a start-first one that never runs fewer than its replicas, sampled every 200 ms, and a global one), node ls shows it, and a scale lands nothing there; node pause n2 keeps its tasks and takes no new one; node activate: new tasks and the global task come back.
. "$(dirname "$0")/lib_sched.bash"
s_up 3

s_stack dr 'services:
  web:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy: {replicas: 6}
  api:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy:
      replicas: 3
      update_config: {order: start-first}
  mon:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy: {mode: global}'
check "deploy exits 0" g_ctl 1 deploy -c dr.yml --stack dr --wait 60
per() { [ "$(s_per_node 1 "$1")" = "$2" ]; }
check "web runs 2 per node" wait_for 20 per dr_web 'n1=2 n2=2 n3=2'
check "api runs 1 per node" wait_for 20 per dr_api 'n1=1 n2=1 n3=1'
check "mon runs once per node" wait_for 20 per dr_mon 'n1=1 n2=1 n3=1'

# avail I NODE: NODE's availability in node I's node ls
avail() { g_ctl "$1" -o json node ls | jp 'next(n["availability"] for n in j if n["name"] == "'"$2"'")'; }
# on I SVC NODE: tasks of SVC desired running on NODE (running or not)
on() { s_ps "$1" "$2" | jp 'sum(1 for t in j if t["node_name"] == "'"$3"'" and t["desired_state"] == "running" and t["state"] in ("running", "pending", "created", "restarting"))'; }

# sample api's running count every 200 ms while n3 drains
: >"$T_DIR/api.samples"
touch "$T_DIR/sampling"
(while [ -e "$T_DIR/sampling" ]; do s_running 1 dr_api >>"$T_DIR/api.samples"; sleep 0.2; done) &
T_PIDS+=($!)
sleep 0.5
check "node drain n3 (from node 1)" g_ctl 1 node drain n3
is_avail() { [ "$(avail "$1" "$2")" = "$3" ]; }
check "node ls shows n3 drain (on node 2)" wait_for 5 is_avail 2 n3 drain
gone() { local s; for s in dr_web dr_api dr_mon; do [ "$(on 1 "$s" n3)" = 0 ] || return 1; done; }
if wait_for 30 gone; then pass "every task leaves n3"; else
	fail "every task leaves n3"
	for x in dr_web dr_api dr_mon; do s_ps 1 $x | jp '"\n".join("%s %s %s %s" % (t["task"], t["node_name"], t["desired_state"], t["state"]) for t in j if t["node_name"] == "n3")'; done
fi
check "web runs 6 on n1 and n2" wait_for 20 per dr_web 'n1=3 n2=3'
api_moved() { [ "$(s_running 1 dr_api)" = 3 ] && [ "$(on 1 dr_api n3)" = 0 ]; }
check "api runs 3 on n1 and n2" wait_for 20 api_moved
sleep 1
rm -f "$T_DIR/sampling"
sleep 0.5
low=$(sort -n "$T_DIR/api.samples" | head -1)
check "start-first api never ran fewer than 3 during the drain (lowest $low of $(wc -l <"$T_DIR/api.samples") samples)" test "$low" -ge 3
check "scale web to 9 from node 2" g_ctl 2 service scale dr_web=9
check "... 9 run" wait_for 20 s_running_is 1 dr_web 9
check "... none on drained n3" test "$(on 1 dr_web n3)" = 0

check "node pause n2 (from node 3)" g_ctl 3 node pause n2
check "node ls shows n2 pause" wait_for 5 is_avail 1 n2 pause
before=$(s_per_node 1 dr_web)
check "scale web to 12" g_ctl 1 service scale dr_web=12
check "... 12 run" wait_for 20 s_running_is 1 dr_web 12
after=$(s_per_node 1 dr_web)
n2_before=$(tr ' ' '\n' <<<"$before" | sed -n 's/^n2=//p')
check "paused n2 keeps its $n2_before web tasks and takes no new one ($before -> $after)" \
	bash -c "[[ ' $after ' == *' n2=$n2_before '* ]] && [[ ' $after ' != *' n3='* ]]"
check "... and keeps its mon task" test "$(on 1 dr_mon n2)" = 1

check "node activate n3 and n2" bash -c "$GOSSIP_CLUSTER ctl 1 node activate n3 >/dev/null && $GOSSIP_CLUSTER ctl 1 node activate n2 >/dev/null"
both_active() { is_avail 1 n3 active && is_avail 1 n2 active; }
check "node ls shows both active" wait_for 5 both_active
mon_back() { [ "$(on 1 dr_mon n3)" = 1 ]; }
check "mon comes back on n3" wait_for 20 mon_back
check "scale web to 15: the new tasks go to n3 (the fewest)" g_ctl 1 service scale dr_web=15
web_back() { [ "$(s_running 1 dr_web)" = 15 ] && [ "$(on 1 dr_web n3)" = 3 ]; }
check "... 15 run, 3 of them on n3" wait_for 20 web_back
t_done
