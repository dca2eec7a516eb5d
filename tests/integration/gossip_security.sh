#!/usr/bin/env bash
# gossip_security.sh: what gossipd refuses — garbage, truncated and oversized frames from a raw TCP client, a wrong join secret, a removed member's key — each with a log line, without disturbing the other peers.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
t_tmpdir
trap 'g_down; t_cleanup' EXIT

if ! g_up 3; then
	fail "3-node cluster formed"
	cat "$T_DIR/up.log"
	t_done
fi
pass "3-node cluster formed"
check "3 alive members everywhere" wait_for 5 g_all_alive 3 1 2 3
pid1=$(g_ctl 1 agent ls | awk '$1 == "gossipd" {print $3}')
check "gossipd runs under mts-init" [ -n "$pid1" ]

# --- raw TCP clients sending junk to node 1 ---
python3 - "$(g_port 1)" <<'PY'
import os, socket, struct, sys, time
port = int(sys.argv[1])
src = 1
# each case from its own loopback address: gossipd logs one line per
# source and kind of error per peer_log_interval
def send(data, linger=0.05):
    global src
    src += 1
    s = socket.create_connection(("127.0.0.1", port),
                                 source_address=("127.0.0.%d" % src, 0))
    try:
        s.sendall(data)
        time.sleep(linger)
    except OSError:
        pass
    s.close()
send(os.urandom(4000))                                   # garbage
send(struct.pack(">I", 100) + os.urandom(10))            # truncated frame
send(struct.pack(">I", 0x7fffffff) + os.urandom(64))     # oversized length
send(struct.pack(">I", 0))                               # empty frame
send(struct.pack(">I", 48) + os.urandom(48))             # junk join attempt
send(struct.pack(">I", 200) + os.urandom(200))           # junk IK attempt
for n in range(50):                                      # random prefixes
    send(os.urandom(n * 13 % 300), 0)
PY
log1=$(g_log 1)
check "gossipd survives garbage, truncated and oversized frames" kill -0 "$pid1"
check "oversized frame logged with its reason" wait_for 5 grep -q "bad frame length: 2147483647" "$log1"
check "junk handshake logged with its reason" grep -q "handshake failed" "$log1"
check "other peers unaffected: 3 alive everywhere" wait_for 5 g_all_alive 3 1 2 3

# --- wrong join secret ---
old=$(cat "$MTS_CLUSTER_DIR/token")
new=$(g_ctl 1 cluster token rotate)
check "token rotate prints a new token" [ -n "$new" -a "$new" != "$old" ]
"$GOSSIP_CLUSTER" start 4 >/dev/null 2>&1
if g_ctl 4 cluster join "$old" >"$T_DIR/join-old.out" 2>&1; then
	fail "join with the old (rotated) secret is refused"
else
	pass "join with the old (rotated) secret is refused"
fi
check "refused join logged by the bootstrap node" grep -q "join (in) link.*handshake failed" "$log1"
check "the new token admits node 4" g_ctl 4 cluster join "$new"
check "4 alive members everywhere" wait_for 10 g_all_alive 4 1 2 3 4

# --- a removed member's key is refused ---
# node 4 is stopped first, so it comes back not knowing it was removed
id4=$(g_id 4)
"$GOSSIP_CLUSTER" stop 4
check "node rm by id prefix" g_ctl 1 node rm "${id4:0:8}"
refused() { grep -q "refusing node $id4: removed" "$(g_log "$1")"; }
gone() { [ -z "$(g_state_of "$1" "$id4")" ]; }
check "every node forgets the removed member" wait_for 10 eval 'gone 1 && gone 2 && gone 3'
"$GOSSIP_CLUSTER" start 4 >/dev/null 2>&1
check "the removed member's handshakes are refused, with a log line" \
	wait_for 15 eval 'refused 1 || refused 2 || refused 3'
check "the remaining 3 stay alive" wait_for 5 g_all_alive 3 1 2 3
check "the removed member stays out" eval 'gone 1 && gone 2 && gone 3'
"$GOSSIP_CLUSTER" stop 4

g_final_check 1 2 3
t_done
