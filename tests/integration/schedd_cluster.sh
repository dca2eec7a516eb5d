#!/usr/bin/env bash
# schedd_cluster.sh: mts-schedd on a 3-node scripts/cluster under init with its shipped policy — prepares on the local and on remote schedds through the relay, refusals with the reason and the digest, a commit after the ttl refused, a restart that keeps a task record's reservation, d/<node> on every node, and 5 concurrent preparers from 3 nodes that never over-commit one small node.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
trap 'g_down_purge; t_cleanup' EXIT
g_down_purge() { "$GOSSIP_CLUSTER" down --purge >/dev/null 2>&1; }
ST=$BUILD/tests/schedtool
MB=$((1024 * 1024))

# schedd alone: no reconciled places the stack this test deploys (its
# Place checks are dry-runs against the nodes' whole capacity)
export MTS_CLUSTER_RECON=0
# every node offers 1 CPU and 1 GiB, 256 MiB of which is kept back
export MTS_CLUSTER_SCHEDD_CONF="cpus = 1.5\nreserve_cpus = 0.5\nmemory = 1280M\nreserve_memory = 256M\nlease_ttl = 3s"
if ! g_up 3; then
	fail "3-node cluster with schedd formed"
	cat "$T_DIR/up.log"
	t_done
fi
pass "3-node cluster with schedd formed"
n1=$(g_id 1) n2=$(g_id 2) n3=$(g_id 3)
r1=$(g_run 1)
st() { "$ST" "$r1" "$@"; } # from node 1: st NODE|- REQUEST...

out=$(st - prepare a1 "$n1" s_web 400 $((100 * MB)) 0 0)
check "local prepare granted with the configured ttl ($out)" \
	bash -c "[[ '$out' =~ ^granted\ (2[0-9]{3}|3000)$ ]]"
out=$(st "$n2" prepare a2 "$n1" s_web 600 $((200 * MB)) 0 20000)
check "prepare on node 2 through the relay granted ($out)" [ "$out" = "granted 20000" ]
out=$(st "$n2" prepare a3 "$n1" s_web 600 $((200 * MB)) 0 20000)
check "over capacity on node 2: refused with the reason and its digest ($out)" \
	[ "$out" = "rejected insufficient cpu; cpu 1000 mem $((1024 * MB)) free_cpu 400 free_mem $((824 * MB)) tasks 0 leases 1" ]
out=$(st "$n2" prepare a4 "$n1" s_web 100 $((900 * MB)) 0 20000)
check "too much memory: refused as such" bash -c "[[ '$out' == 'rejected insufficient memory;'* ]]"
out=$(st "$n2" prepare a2 "$n1" s_web 600 $((200 * MB)) 0 20000)
check "a resent prepare gets the first answer ($out)" bash -c "[[ '$out' == granted* ]]"
out=$(st "$n2" prepare a2 "$n1" s_web 700 $((200 * MB)) 0 20000)
check "the same lease with other terms is a conflict ($out)" bash -c "[[ '$out' == 'error 3 '* ]]"
check "commit through the relay" [ "$(st "$n2" commit a2 task-a2)" = ok ]
check "a resent commit is ok" [ "$(st "$n2" commit a2 task-a2)" = ok ]
check "the committed task holds its share on node 2" \
	[ "$(st "$n2" ledger)" = "cpu 1000 mem $((1024 * MB)) free_cpu 400 free_mem $((824 * MB)) tasks 1 leases 0" ]
out=$(st "$n3" commit never task-x)
check "commit of an unknown lease: NOT_FOUND ($out)" bash -c "[[ '$out' == 'error 2 '* ]]"
out=$(st "$n3" prepare m1 "$n1" s_db 100 $MB 1 20000)
out2=$(st "$n3" prepare m2 "$n1" s_db 100 $MB 1 20000)
check "max_per_node 1: the second task of a service is refused ($out2)" \
	bash -c "[[ '$out' == granted* && '$out2' == 'rejected max_replicas_per_node reached;'* ]]"
check "abort frees the lease" [ "$(st "$n3" abort m1)" = ok ]

# a lease not committed within its ttl ends and frees what it held
out=$(st "$n3" prepare late "$n1" s_web 800 $MB 0 500)
sleep 1
out2=$(st "$n3" commit late task-late)
check "commit after the ttl refused with STATE ($out2)" \
	bash -c "[[ '$out' == granted* && '$out2' == 'error 11 '* ]]"
check "the expired lease freed its cpu" \
	bash -c "[[ '$(st "$n3" ledger)' == 'cpu 1000 mem $((1024 * MB)) free_cpu 1000 '* ]]"

# d/<node> for every node on every node, and current
digest_is() { # I NODE WANT
	[ "$("$ST" "$(g_run "$1")" - digest "$2")" = "$3" ]
}
want2="cpu 1000 mem $((1024 * MB)) free_cpu 400 free_mem $((824 * MB)) tasks 1 leases 0"
ok=1
for i in 1 2 3; do
	wait_for 5 digest_is "$i" "$n2" "$want2" || ok=0
	for n in "$n1" "$n3"; do
		wait_for 5 bash -c "'$ST' '$(g_run "$i")' - digest $n | grep -q '^cpu 1000 '" || ok=0
	done
done
check "d/ of all 3 nodes on every node within 5 s, node 2's current" [ $ok = 1 ]

# restart: the ledger is saved before a grant or a commit is answered —
# a lease granted before a restart can still be committed, a task
# committed before it (no t/ record yet) still holds its share, and the
# restarted node does not over-commit
r2=$(g_run 2)
check "node 2's shim-style task record written" \
	[ "$("$ST" "$r2" - puttask "$n2" task-a2 s_web 600 $((200 * MB)) running)" = ok ]
out=$(st "$n2" prepare pending "$n1" s_web 100 $MB 0 20000)
out2=$(st "$n2" prepare c1 "$n1" s_web 100 $MB 0 20000; st "$n2" commit c1 task-c1)
check "a lease granted and one committed (no task record) before the restart ($out; $out2)" \
	bash -c "[[ '$out' == granted* && '$out2' == granted*ok ]]"
g_ctl 2 agent restart schedd >/dev/null
check "node 2's schedd restarted" wait_for 10 test -S "$r2/schedd/schedd.sock"
want_r="cpu 1000 mem $((1024 * MB)) free_cpu 200 free_mem $((822 * MB)) tasks 2 leases 1"
check "after the restart the tasks and the lease still hold their shares" \
	wait_for 10 bash -c "[ \"\$('$ST' '$r1' $n2 ledger)\" = '$want_r' ]"
out=$(st "$n2" commit pending task-p)
check "a lease granted before the restart commits after it ($out)" [ "$out" = ok ]
out=$(st "$n2" prepare big "$n1" s_web 300 $MB 0 20000)
check "and the restarted node does not over-commit ($out)" \
	bash -c "[[ '$out' == 'rejected insufficient cpu; cpu 1000 mem $((1024 * MB)) free_cpu 200 '* ]]"
g_ctl 2 agent restart schedd >/dev/null
want_r="cpu 1000 mem $((1024 * MB)) free_cpu 200 free_mem $((822 * MB)) tasks 3 leases 0"
check "a restart after the commit keeps the 3 tasks" \
	wait_for 10 bash -c "[ \"\$('$ST' '$r1' $n2 ledger)\" = '$want_r' ]"
check "a resent commit after the restart is still ok" [ "$(st "$n2" commit c1 task-c1)" = ok ]
out=$(st "$n2" commit never2 task-n)
check "a commit of a lease never granted is refused (NOT_FOUND) ($out)" bash -c "[[ '$out' == 'error 2 '* ]]"
check "an exited task frees its share at the next scan" eval '
	"$ST" "$r2" - puttask "$n2" task-a2 s_web 600 $((200 * MB)) exited >/dev/null &&
	wait_for 8 bash -c "[[ \"\$('"$ST"' '"$r1"' '"$n2"' ledger)\" == \"cpu 1000 mem $((1024 * MB)) free_cpu 800 \"* ]]"'

# 5 preparers on 3 nodes (4 prepares each) race for node 3 (1000
# millicores): only 3 of the 20 x 300 fit, whoever wins
: >"$T_DIR/race"
for p in 1 2 3 4 5; do
	for k in 1 2 3 4; do
		from=$(( (p + k) % 3 + 1 )) to=$n3
		[ $from = 3 ] && to=- # the relay does not loop back: local socket
		"$ST" "$(g_run $from)" "$to" prepare "r$p-$k" "$n1" s_race 300 $((50 * MB)) 0 30000 >>"$T_DIR/race" 2>&1 &
	done
done
wait
sort "$T_DIR/race" | uniq -c | sed "s/^/    race: /"
granted=$(grep -c '^granted' "$T_DIR/race")
check "race: 3 of 20 prepares granted on node 3 ($granted), the rest refused" \
	[ "$granted" -eq 3 -a "$(grep -c '^rejected insufficient cpu' "$T_DIR/race")" -eq 17 ]
check "race: node 3's ledger holds 900 of 1000 millicores" \
	bash -c "[[ '$(st "$n3" ledger)' == 'cpu 1000 mem $((1024 * MB)) free_cpu 100 '* ]]"
check "race: d/ of node 3 on node 1 says the same" \
	wait_for 5 bash -c "'$ST' '$r1' - digest $n3 | grep -q '^cpu 1000 mem [0-9]* free_cpu 100 .*leases 3$'"

# mtsctl node inspect: local and through the relay
ctl1() { "$BIN/mtsctl" -r "$r1" "$@"; }
check "node inspect n3 (relayed): 3 live leases, 100 millicores free" \
	bash -c "'$BIN/mtsctl' -r '$r1' -o json node inspect n3 | python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j[\"free\"][\"cpu_millis\"] == 100 and j[\"leases\"] == 3 and len([l for l in j[\"lease_list\"] if l[\"state\"] == \"prepared\"]) == 3 else 1)'"
check "node inspect n1 (local): capacity 1 CPU after the reserve" \
	bash -c "'$BIN/mtsctl' -r '$r1' node inspect n1 | grep -q '^Capacity: *1 CPU, 1G'"
check "node inspect of an unknown node: exit 5" bash -c "'$BIN/mtsctl' -r '$r1' node inspect nosuch 2>/dev/null; [ \$? -eq 5 ]"
ctl1 node label add n3 disk=ssd >/dev/null
check "node label add on node 1: nl/<n3>/disk reaches node 3" \
	wait_for 5 bash -c "'$BIN/mtsctl' -r '$(g_run 3)' state get nl/$n3/disk 2>/dev/null | grep -q ssd"
check "node label with a bad key refused (exit 2)" bash -c "'$BIN/mtsctl' -r '$r1' node label add n3 'a/b=c' 2>/dev/null; [ \$? -eq 2 ]"

# Place: the dry-run over every node's d/ and nl/ (node 3 has 100
# millicores left, nodes 1 and 2 all of theirs)
out=$("$ST" "$r1" - place - 3 600 $MB 0 -)
check "place: 2 of 3 x 600 millicores placeable ($out)" \
	bash -c "[[ '$out' == '2 of 3 placeable: '* ]]"
out=$("$ST" "$r1" - place - 1 100 $MB 0 'node.labels.disk == ssd')
out2=$("$ST" "$r1" - place - 1 200 $MB 0 'node.labels.disk == ssd')
check "place with a constraint on node 3's label: 100 fits, 200 not ($out / $out2)" \
	bash -c "[ '$out' = '1 of 1 placeable' ] && [[ '$out2' == '0 of 1 placeable: '* ]]"
printf 'services:\n  web:\n    image: nginx\n    deploy:\n      replicas: 4\n      resources: {reservations: {cpus: "0.6"}}\n' >"$T_DIR/stack.yml"
ctl1 deploy -c "$T_DIR/stack.yml" --stack st --detach >/dev/null 2>&1
out=$("$ST" "$r1" - place st_web 0 0 0 0 -)
check "place of the deployed service st_web: its replicas and reservation ($out)" \
	bash -c "[[ '$out' == '2 of 4 placeable: '* ]]"
out=$("$ST" "$r1" - place st_nosuch 0 0 0 0 -)
check "place of an unknown service: NOT_FOUND ($out)" bash -c "[[ '$out' == 'error 2 '* ]]"

# n/<node>: what each node's schedd says of itself
arch=$(uname -m)
ok=1
for i in 1 2 3; do
	wait_for 5 bash -c "'$ST' '$r1' - nodeinfo $(g_id $i) | grep -q '^hostname n$i os linux arch $arch cpu 1000 mem $((1024 * MB)) availability active subnet - schedd [0-9]'" || ok=0
done
check "n/ of all 3 nodes on node 1: hostname, platform, capacity, active, schedd's version" [ $ok = 1 ]
out=$("$ST" "$r1" - place - 1 50 $MB 0 'node.hostname == n2')
check "place by node.hostname (from n/): 1 of 1 ($out)" [ "$out" = "1 of 1 placeable" ]

# availability: drain from node 1 reaches node 2's schedd through the
# relay; another agent's field of n/<n2> (the overlay subnet, written as
# netd would) survives schedd's write
out=$("$ST" "$r2" - setsubnet "$n2" 10.1.2.0/24)
check "another agent sets n/<n2>'s overlay subnet under compare-and-set ($out)" [ "$out" = "ok 1" ]
out=$(ctl1 node drain n2)
check "node drain n2 from node 1 ($out)" bash -c "[[ '$out' == 'n2 ('*'): availability drain (was active)' ]]"
check "n/<n2> says drain and keeps the subnet" bash -c "'$ST' '$r2' - nodeinfo $n2 | grep -q 'availability drain subnet 10.1.2.0/24 '"
out=$(st "$n2" prepare d1 "$n1" s_web 100 $MB 0 20000)
check "a drained node refuses new prepares ($out)" bash -c "[[ '$out' == 'rejected node is draining;'* ]]"
check "node ls on node 3 shows n2 drained" \
	wait_for 5 bash -c "'$BIN/mtsctl' -r '$(g_run 3)' -o json node ls | python3 -c 'import json,sys; sys.exit(0 if [n[\"availability\"] for n in json.load(sys.stdin) if n[\"name\"] == \"n2\"] == [\"drain\"] else 1)'"
check "node ls has an AVAILABILITY column" bash -c "'$BIN/mtsctl' -r '$r1' node ls | head -1 | grep -q AVAILABILITY"
check "node inspect n2 shows the availability" bash -c "'$BIN/mtsctl' -r '$r1' node inspect n2 | grep -q '^Availability: *drain'"
out=$("$ST" "$r1" - place - 1 50 $MB 0 'node.hostname == n2')
check "place leaves the drained node out ($out)" [ "$out" = "0 of 1 placeable: no node matches node.hostname == n2 (1 not active)" ]
g_ctl 2 agent restart schedd >/dev/null
check "node 2's schedd restarted while drained" wait_for 10 test -S "$r2/schedd/schedd.sock"
out=$(wait_for 10 st "$n2" ledger >/dev/null; st "$n2" prepare d2 "$n1" s_web 100 $MB 0 20000)
check "after a restart it is still draining ($out)" bash -c "[[ '$out' == 'rejected node is draining;'* ]]"
out=$(ctl1 node pause n3)
out2=$(st "$n3" prepare p1 "$n1" s_web 50 $MB 0 20000)
check "node pause n3: new prepares refused as paused ($out; $out2)" \
	bash -c "[[ '$out' == 'n3 ('*'): availability pause (was active)' && '$out2' == 'rejected node is paused;'* ]]"
ctl1 node activate n3 >/dev/null
out=$(ctl1 node activate n2)
out2=$(st "$n2" prepare d3 "$n1" s_web 100 $MB 0 20000)
check "node activate n2: prepares granted again ($out; $out2)" \
	bash -c "[[ '$out' == 'n2 ('*'): availability active (was drain)' && '$out2' == granted* ]]"
check "node drain of an unknown node: exit 5" bash -c "'$BIN/mtsctl' -r '$r1' node drain nosuch 2>/dev/null; [ \$? -eq 5 ]"

# two writers of n/<n2> at once (pause/activate through schedd, the subnet
# as netd would): no update is lost
(for k in 1 2 3 4 5 6 7 8; do "$ST" "$r2" - setsubnet "$n2" "10.9.$k.0/24"; done >"$T_DIR/subnets") &
for k in 1 2 3 4 5 6 7 8; do
	if [ $((k % 2)) = 1 ]; then ctl1 node pause n2; else ctl1 node activate n2; fi
done >/dev/null
wait
check "concurrent writers: 8 subnet updates ok ($(tr "\n" " " <"$T_DIR/subnets"))" [ "$(grep -c '^ok' "$T_DIR/subnets")" -eq 8 ]
check "concurrent writers: n/<n2> has the last of each (active, 10.9.8.0/24)" \
	bash -c "'$ST' '$r2' - nodeinfo $n2 | grep -q 'availability active subnet 10.9.8.0/24 '"

# mtsctl plan: the placement dry-run of each service of the file, from
# the local schedd, writing nothing (node 3 paused: 2 nodes take tasks)
ctl1 node pause n3 >/dev/null
cat >"$T_DIR/plan.yml" <<'EOF'
services:
  web:
    image: nginx
    deploy: {replicas: 2, resources: {reservations: {cpus: "0.05"}}}
  db:
    image: nginx
    deploy: {placement: {constraints: ["node.labels.disk == ssd2"]}}
  big:
    image: nginx
    deploy: {resources: {reservations: {memory: 2G}}}
  boss:
    image: nginx
    deploy: {placement: {constraints: ["node.role == manager"]}}
  worker:
    image: nginx
    deploy: {placement: {constraints: ["node.role == worker"]}}
  agent:
    image: nginx
    deploy: {mode: global, placement: {constraints: ["node.hostname != n1"]}}
EOF
ctl1 plan -c "$T_DIR/plan.yml" --stack pl >"$T_DIR/plan.out" 2>"$T_DIR/plan.err"
rc=$?
sed 's/^/    plan: /' "$T_DIR/plan.out" "$T_DIR/plan.err"
check "plan of new services exits 2" [ $rc = 2 ]
check "plan: pl_web: 2 of 2 placeable" grep -qx 'pl_web: 2 of 2 placeable' "$T_DIR/plan.out"
check "plan: pl_db: no node matches its constraint" grep -qx 'pl_db: 0 of 1 placeable: no node matches node.labels.disk == ssd2 (1 not active)' "$T_DIR/plan.out"
check "plan: pl_big: insufficient memory on both active nodes" grep -qx 'pl_big: 0 of 1 placeable: insufficient memory on all 2 nodes (1 not active)' "$T_DIR/plan.out"
check "plan: node.role == manager matches every node without a role label (1 of 1), with a warning" \
	bash -c "grep -qx 'pl_boss: 1 of 1 placeable' '$T_DIR/plan.out' && grep -q 'boss.*node.role.*no manager role' '$T_DIR/plan.err'"
check "plan: node.role == worker matches no node yet" grep -q '^pl_worker: 0 of 1 placeable: ' "$T_DIR/plan.out"
check "plan: a global service, one task per node it may run on (n2; n3 paused)" grep -qx 'pl_agent: 1 of 1 placeable' "$T_DIR/plan.out"
ctl1 node label add n1 role=worker >/dev/null
check "plan: with the label role=worker on n1, node.role == worker places there" \
	wait_for 5 bash -c "'$BIN/mtsctl' -r '$r1' plan -c '$T_DIR/plan.yml' --stack pl 2>/dev/null | grep -qx 'pl_worker: 1 of 1 placeable'"
plan_json() { "$BIN/mtsctl" -r "$r1" -o json plan -c "$T_DIR/plan.yml" --stack pl 2>/dev/null |
	python3 -c 'import json,sys; r={x["service"]: x for x in json.load(sys.stdin)}; p=r["pl_big"]["placement"]; sys.exit(0 if p["placeable"] == 0 and p["count"] == 1 and "insufficient memory" in p["explain"] else 1)'; }
check "plan: -o json rows carry the placement" plan_json
check "plan wrote nothing (no s/pl_ record)" bash -c "! '$BIN/mtsctl' -r '$r1' state ls s/ | grep -q 'pl_'"
# the deployed st_web (4 x 0.6 CPU): one task of it runs on n1; plan
# counts its share as free (the new tasks replace it), and an unchanged
# file exits 0
"$ST" "$r1" - puttask "$n1" stw-1 st_web 600 $MB running >/dev/null
check "st_web's task on n1 counted by n1's digest" \
	wait_for 5 bash -c "'$ST' '$r1' - digest $n1 | grep -q '^cpu 1000 mem [0-9]* free_cpu 400 '"
ctl1 plan -c "$T_DIR/stack.yml" --stack st >"$T_DIR/plan2.out" 2>&1
rc=$?
sed 's/^/    plan: /' "$T_DIR/plan2.out"
check "plan of the deployed file exits 0 and its running task's share counts as free" \
	bash -c "[ $rc = 0 ] && grep -q '^st_web: 2 of 4 placeable: ' '$T_DIR/plan2.out'"
"$ST" "$r1" - puttask "$n1" stw-1 st_web 600 $MB exited >/dev/null
ctl1 node activate n3 >/dev/null
ctl1 node label rm n1 role >/dev/null
check "plan with every node active: pl_big: insufficient memory on all 3 nodes" \
	bash -c "'$BIN/mtsctl' -r '$r1' plan -c '$T_DIR/plan.yml' --stack pl 2>/dev/null | grep -qx 'pl_big: 0 of 1 placeable: insufficient memory on all 3 nodes'"

# Place counts only the nodes gossipd sees alive
"$GOSSIP_CLUSTER" kill 3 >/dev/null 2>&1
n3_dead() { [ "$(g_state_of 1 "$n3")" = dead ]; }
check "node 1 sees node 3 dead" wait_for 20 n3_dead
out=$("$ST" "$r1" - place - 1 50 $MB 0 "node.id == $n3")
check "place leaves the dead node out ($out)" [ "$out" = "0 of 1 placeable: no node matches node.id == $n3 (1 down)" ]

check "no schedd died of SIGSYS" bash -c "! grep -E 'schedd.*(SIGSYS|signal 31)' '$MTS_CLUSTER_DIR'/n*/log/init.log"
t_done
