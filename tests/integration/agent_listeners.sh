#!/usr/bin/env bash
# agent_listeners.sh: every agent's listeners (nng PUB feeds and ipc_server sockets) survive peers that break off the SP handshake or never speak, under init with the shipped seccomp policies: the feeds' listeners are replaced, and each agent keeps its pid and still serves.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root"
t_tmpdir
trap 'g_down_purge; t_cleanup' EXIT
g_down_purge() { "$GOSSIP_CLUSTER" down --purge >/dev/null 2>&1; }
PEER=$TOP/tests/integration/sp_peer.py

# the shim too when the machine can run it (root and runc)
command -v runc >/dev/null && export MTS_CLUSTER_SHIM=1
if ! g_up 2; then
	fail "2-node cluster formed"
	cat "$T_DIR/up.log"
	t_done
fi
pass "2-node cluster formed"
run=$(g_run 1)
log=$MTS_CLUSTER_DIR/n1/log

# Every socket in the run dir, so that a new agent's listener is covered:
# AGENT/AGENT.sock is an ipc_server, AGENT/AGENT.pub an nng PUB feed
# (init/admin.sock: init).
declare -A agent
for f in "$run"/*/*.sock "$run"/*/*.pub; do
	[ -S "$f" ] || continue
	s=${f#"$run"/}
	agent[$s]=${s%%/*}
done
proto() { case $1 in *.pub) echo sub ;; *) echo req ;; esac; }
socks=("${!agent[@]}")
want=7
[ -S "$run/shim/shim.sock" ] && want=8
check "node 1 serves $want listeners (${socks[*]})" [ "${#socks[@]}" -eq $want ]

pids() { g_ctl 1 agent ls | awk 'NR > 1 {print $1, $3, $5}' | sort; }
before=$(pids)
replaced() { grep -c "$run/$1: listener stopped accepting; replacing it" "$log/$2.log"; }
# wedge_feed S: bursts of broken-off handshakes on feed S until its
# agent replaces the listener (nng 1.5.2 wedges on some of them, not all;
# a burst of ten nearly always does), at most 6 bursts.
wedge_feed() {
	local s=$1 n0 try
	n0=$(replaced "$s" "${agent[$s]}")
	for try in 1 2 3 4 5 6; do
		python3 "$PEER" partial "$run/$s" 10 || return 1
		wait_for 3 bash -c "[ \$(grep -c '$run/$s: listener stopped accepting; replacing it' '$log/${agent[$s]}.log') -gt $n0 ]" && return 0
	done
	return 1
}

# Twice: a replaced listener must itself survive being replaced.
for round in 1 2; do
	for s in "${socks[@]}"; do
		python3 "$PEER" partial "$run/$s" 10 ||
			fail "round $round: $s: connect and send a partial greeting"
	done
	for s in "${socks[@]}"; do
		case $s in *.pub) continue ;; esac
		# ipc_server closes a peer that never says hello after 5 s
		python3 "$PEER" idle "$run/$s" 9 &
		eval "idle_${agent[$s]}=$!"
	done
	for s in "${socks[@]}"; do
		case $s in *.pub) ;; *) continue ;; esac
		check "round $round: ${agent[$s]} replaced its $s listener" \
			wedge_feed "$s"
	done
	for s in "${socks[@]}"; do
		case $s in *.pub) continue ;; esac
		eval "p=\$idle_${agent[$s]}"
		check "round $round: ${agent[$s]} closed a silent connection to $s" wait "$p"
	done
done

check "no agent was restarted (pids and restart counts unchanged)" \
	[ "$(pids)" = "$before" ]
check "no agent died of SIGSYS" bash -c "! grep -E 'SIGSYS|signal 31' '$log'/*.log"
for s in "${socks[@]}"; do
	check "$s greets a new $(proto "$s") client" \
		python3 "$PEER" hello "$run/$s" "$(proto "$s")"
done

# ... and each still does its job
check "admin.sock: agent ls answers" eval 'g_ctl 1 agent ls >/dev/null'
check "gossipd.sock: node ls shows 2 alive members" wait_for 10 g_all_alive 2 1
check "statestore.sock + gossipd: a write on node 1 reaches node 2" eval '
	g_ctl 1 state put listeners/k v1 >/dev/null &&
	wait_for 10 bash -c "[ \"\$('"$GOSSIP_CLUSTER"' ctl 2 state get --value listeners/k 2>/dev/null)\" = v1 ]"'
"$BUILD/tests/sstool" "$run/statestore/statestore.sock" watch listeners/w 1 >"$T_DIR/watch" 2>&1 &
w=$!
wait_for 5 grep -q watching "$T_DIR/watch"
g_ctl 1 state put listeners/w v2 >/dev/null
check "statestore.pub: a subscriber sees the next write" wait "$w"
python3 "$PEER" sub "$run/gossipd/gossipd.pub" "" 20 >"$T_DIR/sub" 2>&1 &
w=$!
wait_for 5 grep -q subscribed "$T_DIR/sub"
"$GOSSIP_CLUSTER" stop 2 >/dev/null
check "gossipd.pub: a subscriber sees node 2 go" wait "$w"
if [ -n "${agent[shim/shim.sock]:-}" ]; then
	check "shim.sock: task ls answers" eval 'g_ctl 1 task ls >/dev/null'
fi
t_done
