#!/usr/bin/env bash
# gossip_removed.sh: a node removed with `node rm` — while it runs, or while it is down and started afterwards — notices, logs it once, stops dialling (low CPU, a quiet log) and says so in `node ls` (state removed) and `agent ls` (a status line), also after a restart; the others carry on; a node that never joined idles as quietly.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
t_tmpdir
trap 'g_down_purge; t_cleanup' EXIT
g_down_purge() { "$GOSSIP_CLUSTER" down --purge >/dev/null 2>&1; }

gpid() { g_ctl "$1" agent ls | awk '$1 == "gossipd" {print $3}'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user+system, 1/100 s
lines() { wc -l <"$(g_log "$1")"; }
self_state() {
	g_ctl "$1" -o json node ls 2>/dev/null |
		python3 -c 'import json,sys; print(next(n["state"] for n in json.load(sys.stdin) if n["self"]))'
}
listed() { g_ctl "$1" -o json node ls | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
agent_status() {
	g_ctl "$1" -o json agent ls |
		python3 -c 'import json,sys; print(next(a["status"] or "" for a in json.load(sys.stdin) if a["name"] == "gossipd"))'
}
# quiet I WHAT: node I's gossipd uses little CPU and logs at most 3 lines
# in 5 s
quiet() {
	local pid c0 l0 cpu grew
	pid=$(gpid "$1") c0=$(cpu_ticks "$(gpid "$1")") l0=$(lines "$1")
	sleep 5
	cpu=$(($(cpu_ticks "$pid") - c0)) grew=$(($(lines "$1") - l0))
	echo "node $1 ($2): $((cpu * 10)) ms CPU, $grew log lines in 5 s"
	check "node $1 ($2): gossipd CPU stays low ($((cpu * 10)) ms <= 500 ms in 5 s)" [ "$cpu" -le 50 ]
	check "node $1 ($2): its log grew by at most 3 lines in 5 s ($grew)" [ "$grew" -le 3 ]
}
is_removed() { [ "$(self_state "$1")" = removed ]; }

if ! g_up 4; then
	fail "4-node cluster formed"
	cat "$T_DIR/up.log"
	t_done
fi
pass "4-node cluster formed"
check "4 alive members everywhere" wait_for 10 g_all_alive 4 1 2 3 4

# --- removed while it runs ---
pid4=$(gpid 4)
check "node rm n4 (on node 1, n4 running)" eval 'g_ctl 1 node rm n4 >/dev/null'
check "node 4 notices: node ls lists itself as removed" wait_for 15 is_removed 4
check "node 4 lists no other member" [ "$(listed 4)" = 1 ]
check "node 4 logged it once" \
	[ "$(grep -c 'this node was removed from the cluster' "$(g_log 4)")" = 1 ]
check "agent ls on node 4 says gossipd was removed" \
	bash -c "'$GOSSIP_CLUSTER' ctl 4 agent ls | grep -q '^gossipd: removed from the cluster'"
check "agent ls -o json carries the status" \
	eval '[[ "$(agent_status 4)" == "removed from the cluster"* ]]'
check "node 4's gossipd is the same process" [ "$(gpid 4)" = "$pid4" ]
quiet 4 "removed while running"
check "nodes 1-3 see 3 alive members" wait_for 10 g_all_alive 3 1 2 3
check "a write on node 1 reaches node 3" eval '
	g_ctl 1 state put removed/k v1 >/dev/null &&
	wait_for 10 bash -c "[ \"\$('"$GOSSIP_CLUSTER"' ctl 3 state get --value removed/k 2>/dev/null)\" = v1 ]"'

# a restart reads its own tombstone and stays out
check "gossipd restarts on node 4" eval 'g_ctl 4 agent restart gossipd >/dev/null'
check "after the restart node 4 still lists itself as removed" wait_for 10 is_removed 4
check "and agent ls still says so" \
	eval '[[ "$(agent_status 4)" == "removed from the cluster"* ]]'
quiet 4 "restarted"

# --- removed while it is down: the members hand it its tombstone ---
"$GOSSIP_CLUSTER" stop 3
check "node rm n3 (on node 1, n3 stopped)" eval 'g_ctl 1 node rm n3 >/dev/null'
check "nodes 1-2 see 2 alive members" wait_for 10 g_all_alive 2 1 2
"$GOSSIP_CLUSTER" start 3 >/dev/null 2>&1
check "node 3, started again, learns it was removed" wait_for 20 is_removed 3
check "a member logged that it handed node 3 its tombstone" \
	grep -q "handing it its tombstone" "$(g_log 1)" "$(g_log 2)"
quiet 3 "removed while down"
check "nodes 1-2 still see 2 alive members (node 3 stays out)" g_all_alive 2 1 2

# --- a node that never joined idles too (its SWIM deadline is not due) ---
"$GOSSIP_CLUSTER" start 5 >/dev/null 2>&1
check "node 5 runs, not in a cluster" eval '[ -n "$(gpid 5)" ]'
quiet 5 "never joined"
t_done
