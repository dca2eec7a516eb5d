#!/usr/bin/env bash
# sched_constraints.sh: placement constraints on a 3-node cluster with real containers — `node.labels.zone == b` puts every replica on the zone-b nodes (spread over both, every node's service ps agreeing), an impossible constraint leaves the service pending with the reason in `service ps` and `plan`, and nothing starts anywhere.
. "$(dirname "$0")/lib_sched.bash"
s_up 3

g_ctl 1 node label add n1 zone=a >/dev/null &&
	g_ctl 1 node label add n2 zone=b >/dev/null &&
	g_ctl 1 node label add n3 zone=b >/dev/null
check "zone labels set (n1 a, n2 and n3 b)" test $? -eq 0
# the labels reach every node before the deploy
check "every node holds the 3 labels" wait_for 10 bash -c '
	for i in 1 2 3; do
		[ "$('"$BIN"'/mtsctl -r '"$MTS_CLUSTER_DIR"'/n$i/run state ls nl/ | grep -c /zone)" = 3 ] || exit 1
	done'

s_stack zoned 'services:
  web:
    image: busybox:latest
    command: ["sleep", "3600"]
    deploy:
      replicas: 4
      placement:
        constraints: ["node.labels.zone == b"]'
out=$(g_ctl 2 deploy -c zoned.yml --stack z --wait 60 2>&1)
check "deploy from node 2 exits 0 once 4 replicas run" test $? -eq 0
grep -q '^z_web: 4/4 running' <<<"$out"
check "... printing z_web: 4/4 running" test $? -eq 0
check "every node's service ps: 4 running, the same nodes" wait_for 15 s_all_agree z_web 4
where=$(s_per_node 1 z_web)
check "every replica on a zone-b node, spread 2 and 2 ($where)" test "$where" = "n2=2 n3=2"
n1tasks=$(g_ctl 1 -o json task ls | jp 'sum(1 for t in j if t.get("service") == "z_web")')
check "node 1's shim runs none of them" test "$n1tasks" = 0

s_stack nowhere 'services:
  lost:
    image: busybox:latest
    command: ["sleep", "3600"]
    deploy:
      replicas: 2
      placement:
        constraints: ["node.labels.zone == nowhere"]'
check "deploy --detach of an impossible constraint writes the record" \
	g_ctl 3 deploy -c nowhere.yml --stack z --detach
t0=$SECONDS
out=$(g_ctl 1 deploy -c nowhere.yml --stack z --wait 30 2>&1)
rc=$?
check "deploy that cannot place exits 1 ($rc), well before --wait ($((SECONDS - t0)) s)" \
	test $rc -eq 1 -a $((SECONDS - t0)) -lt 25
reason() { g_ctl "$1" service ps z_lost 2>&1 | grep -q 'no node matches node.labels.zone == nowhere'; }
for i in 1 2 3; do
	check "service ps z_lost on node $i shows why it is pending" wait_for 15 reason "$i"
done
all_pending() { s_ps "$1" z_lost | jf 'all(t["state"] == "pending" for t in j)'; }
check "every task row of z_lost is pending ($(s_ps 1 z_lost | jp 'sorted(set(t["state"] for t in j))'))" all_pending 1
out=$(g_ctl 2 plan -c nowhere.yml --stack z 2>&1)
check "plan shows the same reason ($(grep -o '[0-9]* of 2 placeable.*' <<<"$out" | head -1))" \
	grep -q '0 of 2 placeable: no node matches node.labels.zone == nowhere' <<<"$out"
sleep 3 # long enough for a wrong placement to have started
started=0
for i in 1 2 3; do
	c=$(g_ctl "$i" -o json task ls | jp 'sum(1 for t in j if t.get("service") == "z_lost")')
	started=$((started + c))
done
check "no shim on any node started a task of z_lost ($started)" test "$started" = 0
check "no task of z_lost past pending in any node's records" \
	test "$(s_ps 3 z_lost | jp 'sum(1 for t in j if t["state"] != "pending")')" = 0
check "z_web still runs its 4" test "$(s_running 3 z_web)" = 4
t_done
