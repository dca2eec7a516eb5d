#!/usr/bin/env bash
# recon_basic.sh: mts-reconciled on a 3-node cluster with shims (real runc containers, under init with its shipped policy) — 9 replicas deployed on node 1 become 3 running per node and service ps agrees on every node; a global service runs once per node; scale down from node 2 and up from node 3 converge (extras stopped and their records removed); an impossible constraint stays pending with its reason in service ps, starts nothing, and ends deploy's wait with exit 1; a replicated-job completes 3 times and is not restarted; a restarted reconciled adopts its tasks; service rm stops everything.
. "$(dirname "$0")/lib_sched.bash"
# the checks below are about placement on a settled cluster: s_up waits
# until every node holds the 3 d/ digests
s_up 3
recon_up() { g_ctl "$1" agent ls | grep -Eq '^reconciled +up .* on '; }
check "reconciled runs sandboxed on every node" \
	bash -c "$(declare -f recon_up g_ctl); GOSSIP_CLUSTER=$GOSSIP_CLUSTER; recon_up 1 && recon_up 2 && recon_up 3"
# running I SVC: "node count" lines of SVC's running tasks as node I sees them
running() {
	g_ctl "$1" -o json service ps "$2" | python3 -c '
import json,sys,collections
c=collections.Counter(t["node"] for t in json.load(sys.stdin) if t["state"]=="running")
print(" ".join("%s=%d" % (k[:8], c[k]) for k in sorted(c)))'
}
# per_node I SVC N: SVC runs exactly N tasks on each of the 3 nodes
per_node() { [ "$(running "$1" "$2" | wc -w)" = 3 ] && ! running "$1" "$2" | tr ' ' '\n' | grep -qv "=$3\$"; }
# count I SVC: SVC's tasks desired running and running, as node I sees them
count() { g_ctl "$1" -o json service ps "$2" | python3 -c 'import json,sys; print(sum(1 for t in json.load(sys.stdin) if t["state"]=="running" and t["desired_state"]=="running"))'; }
records() { g_ctl "$1" state ls t/ | grep -c "/$2\." ; }

cat >"$T_DIR/web.yml" <<'YML'
services:
  web:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy:
      replicas: 9
  mon:
    image: busybox:latest
    command: ["sleep", "3600"]
    stop_grace_period: 1s
    deploy:
      mode: global
YML
start=$(date +%s%N)
check "deploy of 9 replicas and a global service on node 1 converges (--wait 40)" \
	g_ctl 1 deploy -c "$T_DIR/web.yml" --stack s --wait 40
echo "  (deploy to all running: $((($(date +%s%N) - start) / 1000000)) ms)"
check "9 replicas: 3 running on every node (node 1's view: $(running 1 s_web))" \
	wait_for 10 per_node 1 s_web 3
agree() {
	local a b c
	a=$(running 1 s_web) b=$(running 2 s_web) c=$(running 3 s_web)
	[ "$a" = "$b" ] && [ "$b" = "$c" ]
}
check "service ps agrees on every node" wait_for 10 agree
check "the global service: one task per node" wait_for 10 per_node 2 s_mon 1
owner() { g_ctl "$1" -o json service ls | python3 -c 'import json,sys; print([s["owner"] for s in json.load(sys.stdin) if s["name"]=="s_web"][0])'; }
o1=$(owner 1)
check "the owner of s_web is the same on every node ($o1)" \
	bash -c "[ -n '$o1' ] && [ '$(owner 2)' = '$o1' ] && [ '$(owner 3)' = '$o1' ]"
ls_web() { g_ctl "$1" -o json service ls | python3 -c 'import json,sys; print([("%d/%d" % (s["running"], s["desired"])) for s in json.load(sys.stdin) if s["name"]=="s_web"][0])'; }
check "service ls shows 9/9 on node 3 ($(ls_web 3))" test "$(ls_web 3)" = 9/9
check "the owner published p/s_web" bash -c "$GOSSIP_CLUSTER ctl 2 state get p/s_web >/dev/null"
check "the task records carry version and slot" \
	bash -c "$GOSSIP_CLUSTER ctl 2 -o json service ps s_web | python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if sorted(t[\"slot\"] for t in j)==list(range(1,10)) and all(t[\"version\"]==1 for t in j) else 1)'"

# scale down from node 2: the extras stop and their records go
g_ctl 2 service scale s_web=4 >/dev/null
down4() { [ "$(count 1 s_web)" = 4 ] && [ "$(count 3 s_web)" = 4 ] && [ "$(records 1 s_web)" = 4 ]; }
check "scale to 4 from node 2: 4 running, 4 records, seen from nodes 1 and 3" wait_for 20 down4
spread() { running 1 s_web | tr ' ' '\n' | cut -d= -f2 | sort | tr '\n' ' '; }
check "the extras came off the fullest nodes first ($(spread))" test "$(spread)" = "1 1 2 "
g_ctl 3 service scale s_web=6 >/dev/null
check "scale to 6 from node 3: 2 running per node" wait_for 20 per_node 2 s_web 2

# an impossible constraint: pending, with the reason, nothing started
cat >"$T_DIR/db.yml" <<'YML'
services:
  db:
    image: busybox:latest
    command: ["sleep", "3600"]
    deploy:
      placement:
        constraints: ["node.labels.disk == ssd"]
  once:
    image: busybox:latest
    command: ["sh", "-c", "sleep 0.5; exit 0"]
    deploy:
      mode: replicated-job
      replicas: 3
YML
g_ctl 1 deploy -c "$T_DIR/db.yml" --stack s --wait 40 >"$T_DIR/db.out" 2>&1
rc=$?
check "deploy stops waiting for what cannot be placed: exit 1 ($rc)" test $rc = 1
check "... saying why ($(grep 's_db:' "$T_DIR/db.out" | tail -1))" \
	grep -q 's_db: 0/1 running: 0 of 1 placeable: no node matches node.labels.disk == ssd' "$T_DIR/db.out"
pending() { g_ctl 3 service ps s_db | grep -q 'pending.*no node matches node.labels.disk == ssd'; }
check "an impossible constraint is pending with its reason in service ps" wait_for 15 pending
check "... and nothing of it started" test "$(records 1 s_db)" = 0
done3() { [ "$(g_ctl 2 -o json service ps s_once | python3 -c 'import json,sys; print(sum(1 for t in json.load(sys.stdin) if t["state"]=="exited" and t["exit_code"]==0))')" = 3 ]; }
check "a replicated-job with 3 completions: 3 tasks exited 0" wait_for 30 done3
sleep 2
check "... and none restarted or added" bash -c "[ \$($GOSSIP_CLUSTER ctl 1 state ls t/ | grep -c /s_once.) = 3 ]"

# a restarted reconciled adopts its tasks: nothing started again
before=$(g_ctl 1 -o json service ps s_web | python3 -c 'import json,sys; print(" ".join(sorted(t["task"] for t in json.load(sys.stdin))))')
g_ctl 1 agent restart reconciled >/dev/null
sleep 3
after=$(g_ctl 1 -o json service ps s_web | python3 -c 'import json,sys; print(" ".join(sorted(t["task"] for t in json.load(sys.stdin))))')
check "after node 1's reconciled restarted the same 6 tasks run" \
	bash -c "[ '$before' = '$after' ] && [ \$(echo '$after' | wc -w) = 6 ]"
check "... all running" wait_for 10 per_node 3 s_web 2

# removal stops everything and removes the records
g_ctl 2 service rm s_web s_mon s_db s_once >/dev/null
gone() { [ "$(g_ctl 1 state ls t/ | grep -c ' *t/')" = 0 ] && [ "$(g_ctl 3 state ls t/ | grep -c ' *t/')" = 0 ]; }
check "service rm: every task stopped and its record removed" wait_for 20 gone
nocont() { local i; for i in 1 2 3; do [ -z "$(ls "$MTS_CLUSTER_DIR/n$i/run/runc" 2>/dev/null)" ] || return 1; done; }
check "... no container left" wait_for 10 nocont
check "no reconciled warnings about its own calls" \
	bash -c "! grep -h 'refresh:\|writing t/' $MTS_CLUSTER_DIR/n*/log/reconciled.log"
t_done
