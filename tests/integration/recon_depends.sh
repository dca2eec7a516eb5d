#!/usr/bin/env bash
# recon_depends.sh: depends_on at a first deploy on 3 nodes with real containers — db <- api <- web, each service_healthy on the one before and healthy only 3 s after it starts: no task starts before its dependency can be healthy (from the tasks' start times) nor before its dependency's task.healthy events (mtsctl events of every node, after the owner's service.waiting), service ps shows the waiting replicas (SERVICE.waiting) and what they wait for, deploy says it and waits for all three, exit 0; later, a scale of web while db's update has no healthy db task places at once.
. "$(dirname "$0")/lib_sched.bash"
s_up 3

# Each task turns healthy 3 s after it started: a dependent that started
# less than 3 s after its dependency started did not wait for its health.
s_stack deps 'x-svc: &svc
  image: busybox:latest
  command: ["sh", "-c", "sleep 3; touch /tmp/ready; exec sleep 3600"]
  stop_grace_period: 1s
  healthcheck:
    test: ["CMD", "test", "-e", "/tmp/ready"]
    interval: 500ms
    timeout: 5s
    retries: 3
    start_period: 20s
services:
  db:
    <<: *svc
  api:
    <<: *svc
    deploy: {replicas: 2}
    depends_on:
      db: {condition: service_healthy}
  web:
    <<: *svc
    deploy: {replicas: 2}
    depends_on:
      api: {condition: service_healthy}'

# waiting SVC DEP: node 2's service ps shows SVC's replicas waiting for DEP
waiting() {
	s_ps 2 "$1" | jf "len(j) > 0 and all(t['state'] == 'waiting' and t['error'].startswith('waiting for $2 to be healthy') for t in j)"
}
g_ctl 1 deploy -c deps.yml --stack d --wait 50 >deploy.out 2>&1 &
dpid=$!
check "web waits for api, shown by service ps" wait_for 10 waiting d_web d_api
# api's owner may be another node than web's: its row can come later
check "... api waits for db" wait_for 10 waiting d_api d_db
wait "$dpid"
check "deploy waits for the three and exits 0" test $? -eq 0
check "... having said what api waited for" grep -q '^d_api: 0/2 running: waiting for d_db to be healthy (0 of 1)' deploy.out
# starts: per service, "<earliest> <latest> <count>" of its running tasks'
# start times (Unix ms, from each node's shim)
starts() {
	for i in 1 2 3; do g_ctl "$i" -o json task ls; done | python3 -c '
import json, sys
dec = json.JSONDecoder(); s = sys.stdin.read(); i = 0; ts = []
while i < len(s):
    while i < len(s) and s[i].isspace(): i += 1
    if i >= len(s): break
    v, i = dec.raw_decode(s, i); ts += v
for svc in sys.argv[1:]:
    st = [t["started_at"] for t in ts if t.get("service") == svc and t["state"] == "running"]
    print(min(st), max(st), len(st))' d_db d_api d_web
}
starts >starts.txt
read -r db0 db1 dbn <<<"$(sed -n 1p starts.txt)"
read -r api0 api1 apin <<<"$(sed -n 2p starts.txt)"
read -r web0 web1 webn <<<"$(sed -n 3p starts.txt)"
check "1 db, 2 api, 2 web run ($dbn $apin $webn)" test "$dbn $apin $webn" = "1 2 2"
check "... every api task started 3 s or more after db ($((api0 - db1)) ms)" test $((api0 - db1)) -ge 3000
check "... every web task started 3 s or more after the last api ($((web0 - api1)) ms)" test $((web0 - api1)) -ge 3000
# The same from the events of every node (task.started, task.healthy on
# the task's node; service.waiting from the owner), in time order.
for i in 1 2 3; do g_ctl "$i" -o json events; done >events.jsonl
order() {
	python3 - "$@" <<'PY'
import json, sys
ev = sorted((json.loads(l) for l in open("events.jsonl") if l.strip()), key=lambda e: e["ms"])
dep, svc, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
healthy = [e["ms"] for e in ev if e["type"] == "task.healthy" and e.get("service") == dep]
started = [e["ms"] for e in ev if e["type"] == "task.started" and e.get("service") == svc]
waited = [e for e in ev if e["type"] == "service.waiting" and e.get("service") == svc]
ok = len(healthy) >= want and started and min(started) >= healthy[want - 1] and waited and waited[0]["ms"] < healthy[want - 1]
print("%s started %d ms after %s's %d healthy (%d waiting events)" % (svc, min(started) - healthy[want - 1] if ok else -1, dep, want, len(waited)))
sys.exit(0 if ok else 1)
PY
}
check "events: $(order d_db d_api 1)" order d_db d_api 1
check "events: $(order d_api d_web 2)" order d_api d_web 2
check "... all healthy" wait_for 10 bash -c "$GOSSIP_CLUSTER ctl 3 -o json service ps d_web | python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if len(j) == 2 and all(t[\"health\"] == \"healthy\" for t in j) else 1)'"

# Later: an update of db replaces its task; its dependents are not held
# back any more (a scale of web places at once while db is not healthy).
g_ctl 1 service update d_db --env-add V=2 >/dev/null
db_healthy() { s_ps 1 d_db | jp 'sum(1 for t in j if t["desired_state"] == "running" and t["health"] == "healthy")'; }
db_down() { [ "$(db_healthy)" = 0 ]; }
check "db's update stops its healthy task" wait_for 10 db_down
g_ctl 1 service scale d_web=3 >/dev/null
check "... a scale of web meanwhile is not held back" wait_for 10 s_running_is 1 d_web 3
check "... (db was not healthy yet when web ran 3: $(db_healthy) healthy)" test "$(db_healthy)" = 0
g_ctl 1 service rm d_db d_api d_web >/dev/null
t_done
