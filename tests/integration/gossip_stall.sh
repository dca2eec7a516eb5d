#!/usr/bin/env bash
# gossip_stall.sh: a stalled local agent does not stall gossip — node 2's statestore stopped for 2 s (SIGSTOP) while node 1 writes and strangers attempt joins through node 2: node 2 still answers probes (nobody suspects it), and the writes reach it once its statestore runs again.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
t_tmpdir
SS=
trap '[ -n "$SS" ] && kill -CONT "$SS" 2>/dev/null; g_down; t_cleanup' EXIT

if ! g_up 3 17580; then
	fail "3-node cluster formed"
	cat "$T_DIR/up.log"
	t_done
fi
pass "3-node cluster formed"
check "all alive" wait_for 10 g_all_alive 3 1 2 3
id2=$(g_id 2)
d2=$MTS_CLUSTER_DIR/n2
SS=$(ps -o pid=,comm= --ppid "$(cat "$d2/pids")" | awk '$2 == "mts-statestore" {print $1}')
check "found node 2's statestore ($SS)" test -n "$SS"
suspicions() { # of node 2, in every node's log
	grep -hE "node $id2 .* is (suspect|dead)" "$MTS_CLUSTER_DIR"/n*/log/gossipd.log
}
check "no suspicion before the stall" sh -c "! grep -qE 'node $id2 .* is (suspect|dead)' $MTS_CLUSTER_DIR/n*/log/gossipd.log"

# node 1 writes for 4 s; node 2's statestore stops for 2 s in the middle
end=$((SECONDS + 4))
(
	i=0
	while [ $SECONDS -lt $end ]; do
		g_ctl 1 state put "stall/$i" "v$i" >/dev/null 2>&1
		i=$((i + 1))
	done
	echo $i >"$T_DIR/writes"
) &
writer=$!
sleep 1
kill -STOP "$SS"
# join attempts meanwhile (a first frame of 48 bytes is a join): node 2
# must not ask its stopped statestore for the join secret
python3 - "$((17580 + 2))" <<'PY'
import os, socket, sys, time
for i in range(20):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall((48).to_bytes(4, "big") + os.urandom(48))
    s.close()
    time.sleep(0.05)
PY
sleep 1
kill -CONT "$SS"
wait $writer
SS=
# give the detectors time to act on what they saw during the stall
sleep 3
out=$(suspicions)
check "no node suspected node 2 while its statestore stalled ($(echo $out | head -c 300))" test -z "$out"
out=$(grep -hE " is (suspect|dead)" "$MTS_CLUSTER_DIR"/n*/log/gossipd.log)
check "no false suspicion of any node ($(echo $out | head -c 300))" test -z "$out"
n=$(cat "$T_DIR/writes")
last=$((n - 1))
check "node 2 got the last of node 1's $n writes" \
	wait_for 15 sh -c "[ \"\$('$BUILD/bin/mtsctl' -r '$d2/run' state get --value stall/$last 2>/dev/null)\" = v$last ]"
g_final_check 1 2 3
t_done
