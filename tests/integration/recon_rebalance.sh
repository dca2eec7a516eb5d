#!/usr/bin/env bash
# recon_rebalance.sh: `mtsctl service rebalance` on 3 nodes with real containers — 6 healthy replicas placed while node 3 took no tasks (paused) run 3 and 3 on nodes 1 and 2; once node 3 takes tasks again, rebalance from node 2 moves 2 of them there as spread places them (2 per node), one at a time and start-first (sampled every 200 ms: never fewer than 6 healthy, never more than 7 tasks), the 4 others untouched; a second rebalance has nothing to move; a rebalance during an update is refused.
. "$(dirname "$0")/lib_sched.bash"
s_up 3

# Healthy 2 s after start: a replacement not waited for would show.
s_stack web 'services:
  web:
    image: busybox:latest
    command: ["sh", "-c", "sleep 2; touch /tmp/ready; exec sleep 3600"]
    stop_grace_period: 1s
    healthcheck:
      test: ["CMD", "test", "-e", "/tmp/ready"]
      interval: 500ms
      timeout: 5s
      retries: 3
      start_period: 20s
    deploy:
      replicas: 6
      update_config: {parallelism: 3, monitor: 1s, order: stop-first}'

avail() { g_ctl "$1" -o json node ls | jp '" ".join(n["availability"] for n in sorted(j, key=lambda n: n["name"]))'; }
healthy_is() { s_ps 1 "$1" | jf "sum(1 for t in j if t['desired_state'] == 'running' and t['health'] == 'healthy') == $2"; }
ids() { s_ps 1 "$1" | jp '" ".join(sorted(t["task"] for t in j if t["desired_state"] == "running"))'; }

g_ctl 1 node pause n3 >/dev/null
check "node 3 paused, as every node sees" wait_for 10 bash -c "for i in 1 2 3; do [ \"\$($GOSSIP_CLUSTER ctl \$i -o json node ls | python3 -c 'import json,sys; print([n[\"availability\"] for n in json.load(sys.stdin) if n[\"name\"] == \"n3\"][0])')\" = pause ] || exit 1; done"
check "deploy of 6 replicas" g_ctl 1 deploy -c web.yml --stack b --wait 40
per_node_is() { [ "$(s_per_node 1 "$1")" = "$2" ]; }
check "... 3 on n1 and 3 on n2" wait_for 20 per_node_is b_web "n1=3 n2=3"
check "... all healthy" wait_for 20 healthy_is b_web 6
out=$(g_ctl 1 service rebalance b_web)
check "rebalance while n3 takes no tasks: nothing to move ($out)" test "$out" = "b_web: balanced, nothing to move (version 1)"

g_ctl 3 node activate n3 >/dev/null
check "node 3 active again, as node 2 sees" wait_for 10 bash -c "$GOSSIP_CLUSTER ctl 2 -o json node ls | python3 -c 'import json,sys; sys.exit(0 if [n[\"availability\"] for n in json.load(sys.stdin) if n[\"name\"] == \"n3\"] == [\"active\"] else 1)'"
before=$(ids b_web)
s_sampler 1 b_web samples
out=$(g_ctl 2 service rebalance b_web)
check "rebalance from node 2 moves 2 tasks onto n3: $out" \
	test "$out" = "b_web: moving 2 tasks one at a time, start-first (version 2): n1 3 -> 2, n2 3 -> 2, n3 0 -> 2"
done_() { [ "$(s_ustate b_web)" = completed ] && [ "$(s_per_node 1 b_web)" = "n1=2 n2=2 n3=2" ] && healthy_is b_web 6; }
check "... 2 per node, all healthy, the move completed" wait_for 40 done_
read -r samples minh minr <<<"$(s_sampler_stop samples)"
maxr=$(awk 'NR == 1 || $3 > m { m = $3 } END { print m }' samples)
check "... never fewer than 6 healthy (lowest $minh in $samples samples)" test "$minh" -ge 6 ||
	awk '$2 < 6' samples | head -3 | sed 's/^/    dip: /' # which task, in what state
check "... one at a time: never more than 7 tasks (most $maxr)" test "$maxr" -le 7
check "... and 7 at some point: started first ($maxr)" test "$maxr" = 7
check "... 4 of the 6 tasks untouched" bash -c "[ \$(comm -12 <(tr ' ' '\n' <<<'$before') <(tr ' ' '\n' <<<'$(ids b_web)') | wc -l) = 4 ]"
g_ctl 1 service inspect b_web >ins.json
check "... service inspect: 2 batches, the rebalance's message" jf 'j["update_status"]["batches"] == 2 and j["update_status"]["message"] == "rebalance at version 2 completed: 6 tasks" and j["rebalance"]["version"] == 2 and len(j["rebalance"]["tasks"]) == 2' <ins.json
out=$(g_ctl 3 service rebalance b_web)
check "a second rebalance has nothing to move ($out)" test "$out" = "b_web: balanced, nothing to move (version 2)"

g_ctl 1 service update b_web --env-add X=1 >/dev/null
check "during an update" wait_for 10 bash -c "[ \"\$($GOSSIP_CLUSTER ctl 1 service inspect b_web | python3 -c 'import json,sys; print(json.load(sys.stdin).get(\"update_status\", {}).get(\"state\"))')\" = updating ]"
g_ctl 1 service rebalance b_web 2>err
check "... rebalance is refused, exit 1" test $? -eq 1
check "... saying why" grep -q 'b_web: an update is under way (updating)' err
g_ctl 1 service rm b_web >/dev/null
t_done
