#!/usr/bin/env bash
# gossip_tamper.sh: a man-in-the-middle flips a byte in, then replays, a live Noise transport frame between two gossipd nodes; the receiver logs why, closes that connection, and the cluster carries on.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
t_tmpdir
trap 'g_down; t_cleanup' EXIT

# free ports, claimed for this test's directory: the nodes listen on
# BASE+I, node I advertises PROXY+I, which forwards to BASE+I
BASE=$("$TOP/scripts/freeport" 3 "$T_DIR") || { fail "free ports for the nodes"; t_done; }
PROXY=$("$TOP/scripts/freeport" 3 "$T_DIR") || { fail "free ports for the proxy"; t_done; }
export MTS_CLUSTER_DIR=$T_DIR/cluster MTS_CLUSTER_PORT=$BASE
# Every node is 127.0.0.1, so two attacks on one node within gossipd's
# peer_log_interval (10 s) would share one line per source and kind: the
# second "why" would only come as a summary later. 200 ms keeps each.
export MTS_CLUSTER_CONF='peer_log_interval = 200ms'
MITM=$T_DIR/mitm
EV=$MITM/events
mkdir -p "$MITM"

python3 "$(dirname "$0")/gossip_mitm.py" "$MITM" \
	$((PROXY + 1)):$((BASE + 1)) $((PROXY + 2)):$((BASE + 2)) \
	$((PROXY + 3)):$((BASE + 3)) >"$T_DIR/mitm.log" 2>&1 &
T_PIDS+=($!)
if ! wait_for 5 grep -q '^ready$' "$EV"; then
	fail "proxy listens"
	cat "$T_DIR/mitm.log"
	t_done
fi

# every member address is a proxy port, so every link between nodes runs through it
up() {
	local i token
	chmod o+x "$T_DIR" # the sandboxed agents run as their own uids
	for i in 1 2 3; do "$GOSSIP_CLUSTER" start "$i" >>"$T_DIR/up.log" 2>&1 || return 1; done
	token=$(g_ctl 1 cluster init --advertise 127.0.0.1:$((PROXY + 1))) || return 1
	echo "$token" >"$MTS_CLUSTER_DIR/token"
	for i in 2 3; do
		g_ctl "$i" cluster join --advertise 127.0.0.1:$((PROXY + i)) "$token" \
			>>"$T_DIR/up.log" 2>&1 || return 1
	done
}
if ! up; then
	fail "3-node cluster formed behind the proxy"
	cat "$T_DIR/up.log"
	t_done
fi
pass "3-node cluster formed behind the proxy"
check "3 alive members everywhere" wait_for 10 g_all_alive 3 1 2 3
for i in 1 2 3; do
	pid[i]=$(g_ctl "$i" agent ls | awk '$1 == "gossipd" {print $3}')
done
check "gossipd runs on every node" [ -n "${pid[1]}" -a -n "${pid[2]}" -a -n "${pid[3]}" ]
check "member links run through the proxy" grep -q '^open conn=' "$EV"
check "node 1 lists node 3 at its proxy address" \
	eval "g_ctl 1 node ls | grep -q '127.0.0.1:$((PROXY + 3))'"

WHY="frame failed to authenticate: tampered, replayed or reordered"
nwhy() { grep -c "$WHY" "$(g_log "$1")"; }
gossipd_up() { local i; for i in 1 2 3; do kill -0 "${pid[i]}" || return 1; done; }
reaches3() { [ "$(g_ctl 3 state get --value "$1" 2>/dev/null)" = "$2" ]; }

# attack MODE: one transport frame, the next one a node sends to another
attack() {
	local mode=$1 line conn to node before
	for node in 1 2 3; do before[node]=$(nwhy "$node"); done
	echo "$mode" >"$MITM/cmd.new" && mv "$MITM/cmd.new" "$MITM/cmd"
	if ! wait_for 10 grep -q "^$mode conn=" "$EV"; then
		fail "$mode: the proxy altered a transport frame"
		return
	fi
	line=$(grep "^$mode conn=" "$EV")
	conn=$(sed 's/.* conn=\([0-9]*\).*/\1/' <<<"$line")
	to=$(sed 's/.* to=\([0-9]*\).*/\1/' <<<"$line")
	node=$((to - BASE))
	pass "$mode: the proxy altered a transport frame to node $node ($line)"
	check "$mode: node $node logs why it dropped the connection" \
		wait_for 5 eval '[ "$(nwhy $node)" -gt "${before[node]}" ]'
	grep "$WHY" "$(g_log "$node")" | tail -1 | sed 's/^/  /'
	check "$mode: node $node closed the connection (proxy saw it)" \
		wait_for 5 grep -q "^closed conn=$conn by server$" "$EV"
	check "$mode: every gossipd still runs" gossipd_up
	check "$mode: 3 alive members everywhere" wait_for 10 g_all_alive 3 1 2 3
	g_ctl 1 state put "tamper/$mode" "after-$mode" >/dev/null
	check "$mode: a write on node 1 reaches node 3" \
		wait_for 10 reaches3 "tamper/$mode" "after-$mode"
	check "$mode: equal MST roots on all nodes" wait_for 15 g_roots_equal 1 2 3
}

attack tamper
attack replay
check "no connection was dropped for a bad frame beyond the two attacks" \
	[ $(($(nwhy 1) + $(nwhy 2) + $(nwhy 3))) -eq 2 ]
g_final_check 1 2 3
t_done
