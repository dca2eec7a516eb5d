#!/usr/bin/env bash
# mtsctl_views.sh: what service ls and node inspect show on a 2-node cluster (no shim, no reconciled; task records written as a shim would) — running counts (service ls and deploy's wait) leave out the tasks of a node gossip reports dead (its records still say running: 8/6 after a kill), OWNER is the node's name as service ps names nodes (-o json keeps the id), node inspect's task and lease tables line up with 32-digit lease ids and its count says which leases it counts.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
t_tmpdir
trap 'g_down; t_cleanup' EXIT
export MTS_CLUSTER_RECON=0 MTS_CLUSTER_SHIM=0
ST=$BUILD/tests/schedtool
check "2 nodes up" g_up 2
check "both see 2 alive" wait_for 20 g_all_alive 2 1 2
n1=$(g_id 1) n2=$(g_id 2)
r1=$(g_run 1)
cd "$T_DIR" || exit 1
printf 'services:\n  web:\n    image: busybox:latest\n    deploy: {replicas: 3}\n' >w.yml
check "deploy --detach" g_ctl 1 deploy -c w.yml --stack w --detach
# a running task on each node, as their shims would record them
check "a task record on node 1" "$ST" "$r1" - puttask "$n1" w_web.1.0123456789abcdef w_web 100 $((32 << 20)) running
check "a task record on node 2" "$ST" "$(g_run 2)" - puttask "$n2" w_web.2.fedcba9876543210 w_web 100 $((32 << 20)) running
check "service ls: 2/3 while both nodes live" wait_for 10 bash -c \
	"$GOSSIP_CLUSTER ctl 1 -o json service ls | jf 'j[0][\"running\"] == 2'"
owner=$(g_ctl 1 -o json service ls | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["owner"])')
want=n1
[ "$owner" = "$n2" ] && want=n2
check "service ls: OWNER is the node's name ($want), -o json owner its id" bash -c \
	"$GOSSIP_CLUSTER ctl 1 service ls | grep -q '^w_web  *replicated  *2/3  *busybox:latest  *$want ' && $GOSSIP_CLUSTER ctl 1 -o json service ls | jf 'j[0][\"owner\"] in (\"$n1\", \"$n2\") and j[0][\"owner_name\"] == \"$want\"'"

# node inspect: the tables line up, the count says what it counts
check "a lease prepared on node 1" "$ST" "$r1" - prepare 0123456789abcdef0123456789abcdef "$n1" w_web 100 $((32 << 20)) 0 60000
check "node 1's ledger holds its task" wait_for 10 bash -c \
	"$GOSSIP_CLUSTER ctl 1 node inspect n1 >ins.out && grep -q '^Tasks: *1$' ins.out"
check "node inspect: 'Live leases: 1'" grep -q '^Live leases: *1$' ins.out
check "... the task and lease tables line up" python3 -c '
import sys
text = open("ins.out").read().split("\n\n")
tables = [t.splitlines() for t in text if t.startswith(("TASK", "LEASE"))]
assert len(tables) == 2, tables
for t in tables:
    h = t[0]
    starts = [i for i in range(1, len(h)) if h[i] != " " and h[i - 1] == " "]
    for r in t[1:]:
        for c in starts:
            if r[c - 2:c] != "  " or r[c] == " ":
                sys.exit("misaligned: %r under %r" % (r, h))'

# node label rm of a label the node lacks says which (it said 'no such key')
g_ctl 1 node label rm n1 nope >out 2>err
check "node label rm n1 nope: exit 5, 'n1 (ID): no label nope'" bash -c "[ $? = 5 ] && grep -q '^mtsctl: n1 (.*): no label nope$' err"
check "node label add n1 zone=a" g_ctl 1 node label add n1 zone=a
check "node label rm n1 zone: exit 0" g_ctl 1 node label rm n1 zone

# node 2 killed: its task's record still says running, but nobody runs it
"$GOSSIP_CLUSTER" kill 2 >/dev/null 2>&1
dead() { [ "$(g_state_of 1 "${n2:0:12}")" = dead ]; }
check "node 1 sees node 2 dead" wait_for 30 dead
check "service ls: 1/3, the dead node's task not counted" bash -c \
	"$GOSSIP_CLUSTER ctl 1 service ls | grep -q '^w_web  *replicated  *1/3 '"
check "... -o json running 1" bash -c "$GOSSIP_CLUSTER ctl 1 -o json service ls | jf 'j[0][\"running\"] == 1'"
out=$(g_ctl 1 deploy -c w.yml --stack w --wait 1 2>&1)
check "deploy's wait counts 1/3 running too, not 2/3 ($out)" grep -q '^w_web: 1/3 running' <<<"$out"
t_done
