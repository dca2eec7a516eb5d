#!/usr/bin/env bash
# recon_update.sh: rolling updates run by mts-reconciled's owners on a 3-node cluster with shims (real containers): 6 replicas updated 2 at a time by `service update --env-add` never drop below 4 running (sampled every 200 ms) and all end on the new spec with the u/ status completed and update events in the owner's log, a task.updated and a task.stopped saying "stopped by the update to version 2" for each of the 6 it stopped and no task.replaced calling one failed; a scale replaces no task; an update whose tasks exit rolls back on its own (failure_action rollback) to the previous spec.
. "$(dirname "$0")/lib_sched.bash"
s_up 3

# ps I SVC: SVC's tasks as node I sees them, as JSON
ps() { g_ctl "$1" -o json service ps "$2"; }
# running I SVC [current]: SVC's running tasks wanted running (of the record's spec)
running() { ps "$1" "$2" | python3 -c 'import json,sys; print(sum(1 for t in json.load(sys.stdin) if t["state"]=="running" and t["desired_state"]=="running" and (len(sys.argv) < 2 or t["current"])))' ${3:+cur}; }
all_new() { [ "$(running 1 "$1" cur)" = "$2" ] && [ "$(running 1 "$1")" = "$2" ]; }

cat >"$T_DIR/web.yml" <<'YML'
services:
  web:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy:
      replicas: 6
      update_config: {parallelism: 2, monitor: 1s, order: stop-first}
YML
check "deploy of 6 replicas converges" g_ctl 1 deploy -c "$T_DIR/web.yml" --stack s --wait 40
check "... 6 running" wait_for 20 all_new s_web 6
ids0=$(ps 1 s_web | python3 -c 'import json,sys; print(" ".join(sorted(t["task"] for t in json.load(sys.stdin))))')
g_ctl 2 service update s_web --env-add X=1 >/dev/null
min=6
deadline=$((SECONDS + 60))
while [ $SECONDS -lt $deadline ]; do
	n=$(running 1 s_web)
	[ "$n" -lt "$min" ] && min=$n
	all_new s_web 6 && [ "$(s_ustate s_web)" = completed ] && break
	sleep 0.2
done
check "the update ends with all 6 on the new spec" all_new s_web 6
check "... never fewer than 4 running during it (lowest: $min)" test "$min" -ge 4
check "... u/s_web says completed" test "$(s_ustate s_web)" = completed
g_ctl 1 service inspect s_web >"$T_DIR/ins"
check "... in 3 batches, to version 2" jf 'j["update_status"]["batches"] == 3 and j["update_status"]["version"] == 2' <"$T_DIR/ins"
check "... the owner logged its events" bash -c "grep -h ' event {' $MTS_CLUSTER_DIR/n*/log/reconciled.log | grep -q '\"type\":\"update.completed\"'"
# evs TYPE: the agents' TYPE events of s_web during the update (JSON lines)
evs() { grep -h ' event {' "$MTS_CLUSTER_DIR"/n*/log/reconciled.log | sed 's/^.* event //' | grep "\"type\":\"$1\"" | grep '"service":"s_web"'; }
evs task.replaced >"$T_DIR/replaced"
check "... no task.replaced event calls a task the update stopped failed ($(grep -c failed "$T_DIR/replaced") of $(wc -l <"$T_DIR/replaced"))" bash -c "! grep -q failed '$T_DIR/replaced'"
check "... a task.updated event for each of the 6 it stopped: 'stopped by the update to version 2'" \
	test "$(evs task.updated | grep -c '"message":"stopped by the update to version 2"')" = 6
check "... and their nodes' task.stopped say so" \
	test "$(evs task.stopped | grep -c '"message":"stopped by the update to version 2"')" = 6
ids1=$(ps 1 s_web | python3 -c 'import json,sys; print(" ".join(sorted(t["task"] for t in json.load(sys.stdin) if t["desired_state"]=="running")))')
g_ctl 3 service scale s_web=5 >/dev/null
sleep 3
ids2=$(ps 1 s_web | python3 -c 'import json,sys; print(" ".join(sorted(t["task"] for t in json.load(sys.stdin) if t["desired_state"]=="running")))')
check "a scale replaces no task (5 of the 6 stay)" bash -c "[ \$(comm -12 <(tr ' ' '\n' <<<'$ids1' | sort) <(tr ' ' '\n' <<<'$ids2' | sort) | wc -l) = 5 ] && [ '$ids0' != '$ids1' ]"

# an update whose tasks exit: failure_action rollback brings the spec back
cat >"$T_DIR/bad.yml" <<'YML'
services:
  api:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy:
      replicas: 3
      restart_policy: {condition: none}
      update_config: {parallelism: 1, monitor: 2s, failure_action: rollback}
      rollback_config: {parallelism: 0, monitor: 1s}
YML
check "deploy of api converges" g_ctl 1 deploy -c "$T_DIR/bad.yml" --stack s --wait 40
check "... 3 running" wait_for 20 all_new s_api 3
sed -i 's/\["sleep", "3600"\]/["sh", "-c", "exit 3"]/' "$T_DIR/bad.yml"
g_ctl 1 deploy -c "$T_DIR/bad.yml" --stack s --detach >/dev/null
rolled() { [ "$(s_ustate s_api)" = rollback_completed ] && all_new s_api 3; }
check "a failing update rolls back on its own" wait_for 60 rolled
check "... the record holds the previous spec again, marked" bash -c "$GOSSIP_CLUSTER ctl 1 service inspect s_api | python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j[\"rollback\"] and j[\"spec\"][\"command\"] == [\"sleep\", \"3600\"] and j[\"version\"] == 3 else 1)'"
g_ctl 1 service rm s_web s_api >/dev/null
t_done
