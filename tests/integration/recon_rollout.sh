#!/usr/bin/env bash
# recon_rollout.sh: the rolling-update acceptance on 3 nodes with real containers and health checks — 6 healthy replicas moved 2 at a time to a new image never have fewer than 4 healthy (sampled every 200 ms), service ps shows old and new versions side by side and service inspect the state, batch n/m, start and message while it runs, all 6 end healthy on the new image; an update whose health check fails rolls back on its own (failure_action rollback) to the image before, healthy again.
. "$(dirname "$0")/lib_sched.bash"
s_up 3
s_import busybox:v2

# A task turns healthy 4 s after it started (longer than monitor: a batch
# done on running alone would stop the next one too early), and never
# when BAD is 1 in its environment.
s_stack web 'services:
  web:
    image: busybox:latest
    command: ["sh", "-c", "sleep 4; touch /tmp/ready; exec sleep 3600"]
    stop_grace_period: 1s
    healthcheck:
      test: ["CMD-SHELL", "test -e /tmp/ready && test \"$$BAD\" != 1"]
      interval: 500ms
      timeout: 5s
      retries: 2
      start_period: 10s
    deploy:
      replicas: 6
      update_config: {parallelism: 2, monitor: 1s, failure_action: rollback}
      rollback_config: {parallelism: 2, monitor: 1s, order: start-first}'

# healthy <PS-JSON: the healthy tasks wanted running.
healthy() {
	jp 'sum(1 for t in j if t["state"] == "running" and t["desired_state"] == "running" and t["health"] == "healthy")'
}
# all_on SVC VERSION N: N healthy tasks, every live one of VERSION's spec.
all_on() {
	s_ps 1 "$1" | jf "len([t for t in j if t['desired_state'] == 'running']) == $3 and all(t['current'] and t['version'] == $2 and t['state'] == 'running' and t['health'] == 'healthy' for t in j if t['desired_state'] == 'running')"
}
ins() { g_ctl 1 service inspect "$1"; }

check "deploy of 6 replicas with a health check" g_ctl 1 deploy -c web.yml --stack r --wait 40
check "... 6 healthy" wait_for 20 all_on r_web 1 6

s_sampler 1 r_web samples
g_ctl 2 service update r_web --image busybox:v2 >/dev/null
side=0 prog=""
deadline=$((SECONDS + 50))
while [ $SECONDS -lt $deadline ]; do
	s_ps 1 r_web >ps.json
	# old and new running side by side, as service ps prints them
	if [ "$side" = 0 ] && jf 'any(t["current"] and t["state"] == "running" for t in j) and any(not t["current"] and t["state"] == "running" for t in j)' <ps.json; then
		g_ctl 1 service ps r_web >ps.txt && side=1
	fi
	if [ -z "$prog" ]; then
		ins r_web >ins.json
		jf 'j.get("update_status", {}).get("state") == "updating"' <ins.json && prog=$(jp 'j["update_status"]["progress"]' <ins.json) && cp ins.json ins-updating.json
	fi
	all_on r_web 2 6 && [ "$(s_ustate r_web)" = completed ] && break
	sleep 0.2
done
read -r samples min _ <<<"$(s_sampler_stop samples)"
check "the update ends with 6 healthy tasks of version 2" all_on r_web 2 6
check "... never fewer than 4 healthy during it (lowest: $min in $samples samples)" test "$min" -ge 4
check "... sampled every 200 ms: $samples samples, at least 25" test "$samples" -ge 25
check "... service ps showed both versions side by side" \
	bash -c "grep -Eq ' 1 \(old\) +[^ ]+ +running +running +healthy' ps.txt && grep -Eq ' 2 +[^ ]+ +running +running ' ps.txt"
check "... service inspect showed it updating, at batch n of 3 ($prog), with its start and message" \
	jf '[u["progress"] in ("1/3", "2/3", "3/3") and u["started"] != "" and u["message"] != "" and u["ended"] == "" for u in [j["update_status"]]][0]' <ins-updating.json
ins r_web >ins.json
check "... then completed, 3 batches, started and ended times, to version 2" \
	jf '[u["state"] == "completed" and u["progress"] == "3/3" and u["version"] == 2 and u["started"] != "" and u["ended"] >= u["started"] and "completed" in u["message"] for u in [j["update_status"]]][0]' <ins.json
check "... on every node, busybox:v2 only" bash -c "for i in 1 2 3; do $GOSSIP_CLUSTER ctl \$i -o json task ls | python3 -c 'import json,sys; sys.exit(0 if all(t[\"image\"] == \"busybox:v2\" for t in json.load(sys.stdin) if t.get(\"service\") == \"r_web\" and t[\"state\"] == \"running\") else 1)' || exit 1; done"

# A new version whose health check fails: failure_action rollback.
g_ctl 3 service update r_web --image busybox:latest --env-add BAD=1 >/dev/null
# all of them back on version 2's spec: the rollback (version 4) replaced
# only the tasks of version 3, the others run version 2 still
back() { s_ps 1 r_web | jf "len([t for t in j if t['desired_state'] == 'running']) == 6 and all(t['current'] and t['version'] in (2, 4) and t['state'] == 'running' and t['health'] == 'healthy' for t in j if t['desired_state'] == 'running')"; }
rolled() { [ "$(s_ustate r_web)" = rollback_completed ] && back; }
check "an update whose health check fails rolls back on its own" wait_for 40 rolled
check "... the record is busybox:v2 again, a rollback, version 4" \
	bash -c "$GOSSIP_CLUSTER ctl 1 service inspect r_web | python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j[\"rollback\"] and j[\"spec\"][\"image\"] == \"busybox:v2\" and j[\"version\"] == 4 else 1)'"
no_v3() { s_ps 1 r_web | jf 'not any(t["version"] == 3 and t["desired_state"] == "running" for t in j)'; }
check "... no task of version 3 is left" no_v3
check "... the owner logged update.rolled_back" bash -c "grep -h ' event {' $MTS_CLUSTER_DIR/n*/log/reconciled.log | grep -q '\"type\":\"update.rolled_back\"'"
g_ctl 1 service rm r_web >/dev/null
t_done
