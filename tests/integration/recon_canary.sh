#!/usr/bin/env bash
# recon_canary.sh: canary updates (x-mts update.canary) on 3 nodes with real containers and health checks — a new image runs 1 canary beside the 4 old tasks, healthy, and waits there (state canary) until `mtsctl service promote`, which finishes the rollout on all 4; a new version whose canary turns unhealthy is rolled back on its own (auto_revert, failure_action pause), and so is one whose canary never turns healthy (starting past x-mts healthy_deadline), the 4 tasks of the version before untouched each time.
. "$(dirname "$0")/lib_sched.bash"
s_up 3
s_import busybox:v2

# healthy, unless BAD is 1 in the task's environment
s_stack web 'services:
  web:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    healthcheck:
      test: ["CMD-SHELL", "test \"$$BAD\" != 1"]
      interval: 500ms
      timeout: 5s
      retries: 2
    deploy:
      replicas: 4
      update_config: {parallelism: 2, monitor: 1s, failure_action: pause}
      rollback_config: {parallelism: 0, monitor: 1s}
    x-mts:
      update: {canary: 1, auto_promote: false, auto_revert: true}'

ins() { g_ctl 1 service inspect "$1"; }
# counts SVC: "<healthy current> <healthy old> <other live>" of the tasks
# wanted running, as node 1 sees them
counts() {
	s_ps 1 "$1" | jp '"%d %d %d" % (sum(1 for t in j if t["desired_state"] == "running" and t["state"] == "running" and t["health"] == "healthy" and t["current"]), sum(1 for t in j if t["desired_state"] == "running" and t["state"] == "running" and t["health"] == "healthy" and not t["current"]), sum(1 for t in j if t["desired_state"] == "running" and not (t["state"] == "running" and t["health"] == "healthy")))'
}
# ids SVC: the tasks wanted running, sorted
ids() { s_ps 1 "$1" | jp '" ".join(sorted(t["task"] for t in j if t["desired_state"] == "running"))'; }
is() { [ "$("${@:2}")" = "$1" ]; }

check "deploy of 4 replicas with a canary policy" g_ctl 1 deploy -c web.yml --stack c --wait 40
check "... 4 healthy" wait_for 20 is "4 0 0" counts c_web
old=$(ids c_web)

g_ctl 2 service update c_web --image busybox:v2 >/dev/null
canary() { [ "$(s_ustate c_web)" = canary ] && is "1 4 0" counts c_web; }
check "a new image: 1 canary healthy beside the 4 old tasks, waiting for promote" wait_for 30 canary
check "... inspect says so" bash -c "$GOSSIP_CLUSTER ctl 1 service inspect c_web | grep -q 'service promote finishes the update'"
sleep 3
check "... 3 s later still 1 canary and the same 4 old tasks ($(counts c_web))" \
	bash -c "[ '$(counts c_web)' = '1 4 0' ] && [ \"\$(comm -23 <(tr ' ' '\n' <<<'$old') <(tr ' ' '\n' <<<'$(ids c_web)') | wc -l)\" = 0 ]"
out=$(g_ctl 3 service promote c_web)
check "service promote (from node 3): $out" test "$out" = "c_web: canaries promoted (version 2)"
done_v2() { [ "$(s_ustate c_web)" = completed ] && is "4 0 0" counts c_web; }
check "... finishes the rollout: 4 healthy on the new image, none old" wait_for 40 done_v2
check "... none of the old tasks is left" bash -c "[ \"\$(comm -12 <(tr ' ' '\n' <<<'$old') <(tr ' ' '\n' <<<'$(ids c_web)') | wc -l)\" = 0 ]"
g_ctl 1 service inspect c_web >ins.json
check "... the update completed at version 2, its batches done" jf 'j["update_status"]["state"] == "completed" and j["update_status"]["version"] == 2 and j["update_status"]["batch"] == j["update_status"]["batches"]' <ins.json

# auto_revert: the canary of version 3 never turns healthy; failure_action
# says pause, auto_revert rolls back anyway
v2=$(ids c_web)
g_ctl 1 service update c_web --env-add BAD=1 >/dev/null
reverted() { [ "$(s_ustate c_web)" = rollback_completed ] && is "4 0 0" counts c_web; }
check "an unhealthy canary is rolled back on its own (auto_revert)" wait_for 40 reverted
check "... the record holds version 2's spec again, a rollback" \
	bash -c "$GOSSIP_CLUSTER ctl 1 service inspect c_web | python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j[\"rollback\"] and j[\"spec\"][\"image\"] == \"busybox:v2\" and not any(e[\"key\"] == \"BAD\" for e in j[\"spec\"].get(\"environment\", [])) and j[\"version\"] == 4 else 1)'"
check "... the 4 tasks of version 2 ran on untouched" test "$(ids c_web)" = "$v2"
check "... the owner logged update.rolled_back" bash -c "grep -h ' event {' $MTS_CLUSTER_DIR/n*/log/reconciled.log | grep '\"service\":\"c_web\"' | grep -q '\"type\":\"update.rolled_back\"'"
# A canary that never turns healthy (its check fails inside a 60 s
# start_period, so it stays starting): past x-mts healthy_deadline (3 s)
# it is a failure, and auto_revert rolls back.
v4=$(ids c_web)
sed -e 's/image: busybox:latest/image: busybox:v2\n    environment: {BAD: "1"}/' \
    -e 's/      retries: 2/      retries: 2\n      start_period: 60s/' \
    -e 's/auto_revert: true}/auto_revert: true, healthy_deadline: 3s}/' web.yml >never.yml
check "a deploy whose canary never turns healthy" bash -c "$GOSSIP_CLUSTER ctl 3 deploy -c never.yml --stack c --detach >/dev/null"
t0=$SECONDS
reverted5() { [ "$(s_ustate c_web)" = rollback_completed ] && [ "$(ins c_web | jp 'j["version"]')" = 6 ] && is "4 0 0" counts c_web; }
check "... is rolled back on its own after healthy_deadline (auto_revert)" wait_for 40 reverted5
check "... not before 3 s ($((SECONDS - t0)) s)" test $((SECONDS - t0)) -ge 3
check "... the failure said: never turned healthy" bash -c "grep -h ' event {' $MTS_CLUSTER_DIR/n*/log/reconciled.log | grep '\"type\":\"update.rolled_back\"' | grep -q 'never turned healthy'"
check "... the 4 tasks before untouched" test "$(ids c_web)" = "$v4"
g_ctl 1 service rm c_web >/dev/null
t_done
