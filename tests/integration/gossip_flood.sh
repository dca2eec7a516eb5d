#!/usr/bin/env bash
# gossip_flood.sh: an unauthenticated TCP flood on gossipd's port (3,000 idle connections from 20 loopback sources) is shed by the handshake caps — gossipd stays up with bounded descriptors and log lines, members stay alive, a node joins and a write replicates meanwhile; 2,000 failed joins log a bounded number of lines; out of descriptors (limit_nofile lowered) accept pauses instead of spinning.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
t_tmpdir
trap 'g_down_purge; t_cleanup' EXIT
g_down_purge() { "$GOSSIP_CLUSTER" down --purge >/dev/null 2>&1; }
FLOOD=$TOP/tests/integration/gossip_flood.py

gpid() { g_ctl "$1" agent ls | awk '$1 == "gossipd" {print $3}'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user+system, 1/100 s
nfds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
lines() { wc -l <"$(g_log "$1")"; }
# peak_fds PID FLOODPID: the most descriptors PID held while FLOODPID ran
peak_fds() {
	local peak=0 n
	while kill -0 "$2" 2>/dev/null; do
		n=$(nfds "$1")
		[ "$n" -gt "$peak" ] && peak=$n
		sleep 0.1
	done
	echo "$peak"
}

# --- the handshake caps (defaults: 256 in all, 16 per address) ---
if ! g_up 3; then
	fail "3-node cluster formed"
	cat "$T_DIR/up.log"
	t_done
fi
pass "3-node cluster formed"
check "3 alive members everywhere" wait_for 10 g_all_alive 3 1 2 3
pid=$(gpid 1)
l0=$(lines 1) c0=$(cpu_ticks "$pid")
python3 "$FLOOD" "$(g_port 1)" 3000 20 6 4 >"$T_DIR/flood.out" 2>&1 &
fp=$!
peak_fds "$pid" "$fp" >"$T_DIR/peak" &
sleep 1.5
"$GOSSIP_CLUSTER" start 4 >/dev/null 2>&1
check "during the flood: node 4 joins through node 1" \
	g_ctl 4 -t 15000 cluster join "$(cat "$MTS_CLUSTER_DIR/token")"
check "during the flood: a write on node 1 reaches node 2" eval '
	g_ctl 1 state put flood/k v1 >/dev/null &&
	wait_for 10 bash -c "[ \"\$('"$GOSSIP_CLUSTER"' ctl 2 state get --value flood/k 2>/dev/null)\" = v1 ]"'
check "during the flood: 4 alive members everywhere" \
	wait_for 10 g_all_alive 4 1 2 3 4
wait "$fp"
wait
read -r _ opened _ refused _ shed <"$T_DIR/flood.out"
peak=$(cat "$T_DIR/peak")
check "the log sums up the lines left out (peer_log_interval 10 s)" \
	wait_for 15 grep -q "more .* from 127.0.0" "$(g_log 1)"
sleep 1
cpu=$(($(cpu_ticks "$pid") - c0)) grew=$(($(lines 1) - l0))
echo "flood: opened $opened, refused $refused, closed by gossipd $shed;" \
	"gossipd: peak $peak fds, $((cpu * 10)) ms CPU, $grew log lines" \
	"(summaries included)"
check "the flood opened its connections ($opened of 3000)" [ "${opened:-0}" -ge 2500 ]
check "gossipd closed most of them before the flood let go ($shed)" \
	[ "${shed:-0}" -ge 2000 ]
check "node 1's gossipd is the same process" [ "$(gpid 1)" = "$pid" ]
check "its descriptors stayed bounded (peak $peak <= 400)" [ "$peak" -le 400 ]
# at most 64 sources x kinds a line each and a summary each per interval
check "its log grew by a bounded number of lines ($grew <= 300)" [ "$grew" -le 300 ]
check "after the flood: 4 alive members everywhere" \
	wait_for 10 g_all_alive 4 1 2 3 4

# --- a storm of failed joins: 2,000 first join messages under a wrong
# join secret (to the responder, 48 bytes it cannot decrypt), 5 sources ---
l0=$(lines 1)
python3 - "$(g_port 1)" <<'PY'
import os, socket, struct, sys, time
port = int(sys.argv[1])
for i in range(2000):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2,
                                     source_address=("127.0.0.%d" % (1 + i % 5), 0))
        s.sendall(struct.pack(">I", 48) + os.urandom(48))
        s.recv(64)  # gossipd hangs up
        s.close()
    except OSError:
        pass
PY
check "after the join storm, node 1 still serves: 4 alive members" \
	wait_for 10 g_all_alive 4 1
check "the storm's lines are summed up" \
	wait_for 15 grep -q "more 'join (in): handshake failed' from 127.0.0" "$(g_log 1)"
sleep 1
grew=$(($(lines 1) - l0))
echo "join storm: 2000 failed joins, $grew log lines (summaries included)"
check "2000 failed joins took a bounded number of lines ($grew <= 40)" [ "$grew" -le 40 ]
g_down_purge

# --- out of descriptors: accept leaves the loop for a second ---
export MTS_CLUSTER_CONF='limit_nofile = 100\nmax_links = 100000\nmax_handshakes = 100000\nmax_handshakes_per_addr = 100000'
if ! g_up 2; then
	fail "2-node cluster with limit_nofile = 100 formed"
	cat "$T_DIR/up.log"
	t_done
fi
pass "2-node cluster with limit_nofile = 100 formed"
check "2 alive members" wait_for 10 g_all_alive 2 1 2
pid=$(gpid 1)
l0=$(lines 1) c0=$(cpu_ticks "$pid")
python3 "$FLOOD" "$(g_port 1)" 600 1 1 4 >"$T_DIR/flood.out" 2>&1
cpu=$(($(cpu_ticks "$pid") - c0)) grew=$(($(lines 1) - l0))
echo "EMFILE flood: $(cat "$T_DIR/flood.out"); gossipd: $((cpu * 10)) ms CPU, $grew log lines in 5 s"
check "node 1's gossipd ran out of descriptors and said so" \
	grep -q "Too many open files; not accepting for a second" "$(g_log 1)"
check "node 1's gossipd is the same process" [ "$(gpid 1)" = "$pid" ]
check "it did not spin (CPU $((cpu * 10)) ms <= 1500 ms in 5 s)" [ "$cpu" -le 150 ]
check "its log grew by a bounded number of lines ($grew <= 30)" [ "$grew" -le 30 ]
check "after the flood: both members alive on both nodes" \
	wait_for 15 g_all_alive 2 1 2
check "after the flood: a write on node 1 reaches node 2" eval '
	g_ctl 1 state put flood/k2 v2 >/dev/null &&
	wait_for 10 bash -c "[ \"\$('"$GOSSIP_CLUSTER"' ctl 2 state get --value flood/k2 2>/dev/null)\" = v2 ]"'
t_done
