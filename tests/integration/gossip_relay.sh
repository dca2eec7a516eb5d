#!/usr/bin/env bash
# gossip_relay.sh: the node-to-node relay — only what the per-agent table allows (a relayed statestore put refused, gossipd and unknown agents refused at once), slow agents served without stalling SWIM, idempotent retries, the per-peer in-flight bound, long timeouts, unknown targets.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/gossip_lib.sh"
t_tmpdir
TA_PID=
trap '[ -n "$TA_PID" ] && kill "$TA_PID" 2>/dev/null; g_down; t_cleanup' EXIT

RELAY=$BUILD/tests/gossip_relay
# the test agent speaks statestore.proto: get (16), put (17), root (21)
export MTS_CLUSTER_CONF='relay_allow = testagent:16 testagent:17 testagent:21\nrelay_inflight = 2'
if ! g_up 3 17550; then
	fail "3-node cluster formed"
	cat "$T_DIR/up.log"
	t_done
fi
pass "3-node cluster formed"
check "all alive" wait_for 10 g_all_alive 3 1 2 3
id2=$(g_id 2)
run1=$(g_run 1)

# relay ID REQUEST_ID OP ARGS...: through node 1's gossipd to node 2
relay() { local rid=$1; shift; "$RELAY" "$run1" "$id2" "$rid" "$@"; }
# ms_of CMD...: how long it took, in ms (output to $T_DIR/out, $T_DIR/err)
ms_of() {
	local t0=$(date +%s%N)
	"$@" >"$T_DIR/out" 2>"$T_DIR/err"
	echo $((($(date +%s%N) - t0) / 1000000))
}
no_suspicion_of() { # ID: no node logged it suspect or dead
	! grep -hE "node $1 .* is (suspect|dead)" "$MTS_CLUSTER_DIR"/n*/log/gossipd.log
}

# --- the table: the statestore takes nothing from other nodes ---------------
g_ctl 2 state put relay/local x >/dev/null
ms=$(ms_of relay 1 put relay/local hijacked)
check "a relayed put to node 2's statestore is refused ($(cat "$T_DIR/err"))" \
	grep -q "does not take request 17" "$T_DIR/err"
check "the refused put wrote nothing" [ "$(g_ctl 2 state get --value relay/local)" = x ]
check "the refusal came at once (${ms} ms)" [ "$ms" -lt 1000 ]
relay 2 root >/dev/null 2>"$T_DIR/err"
check "a relayed root request to the statestore is refused too" grep -q "does not take" "$T_DIR/err"

for a in gossipd nosuch init; do
	ms=$(RELAY_AGENT=$a ms_of relay 3 root)
	check "relay to agent '$a' is refused at once (${ms} ms: $(cat "$T_DIR/err"))" \
		sh -c "[ $ms -lt 1000 ] && grep -q 'takes no relayed requests' '$T_DIR/err'"
done
# four callers hammering refused agents for 4 s do not stall node 2
end=$((SECONDS + 4))
pids=
for w in 1 2 3 4; do
	(
		n=0
		while [ $SECONDS -lt $end ]; do
			RELAY_AGENT=$([ $((w % 2)) = 0 ] && echo gossipd || echo nosuch) \
				relay $((1000 * w + n)) root >/dev/null 2>&1
			n=$((n + 1))
		done
	) &
	pids="$pids $!"
done
wait $pids
check "4 concurrent callers of refused agents: no suspicion of node 2" no_suspicion_of "$id2"

# --- an allowed agent: the test agent on node 2, each get taking 3 s --------
d2=$MTS_CLUSTER_DIR/n2
MTS_AGENT=testagent MTS_CONFIG=/dev/null MTS_RUNDIR=$d2/run MTS_STATEDIR=$T_DIR/ta \
	"$BUILD/tests/mts-testagent" -s testagent.sock -o -g 3000 >"$T_DIR/testagent.log" 2>&1 &
TA_PID=$!
wait_for 5 test -S "$d2/run/testagent/testagent.sock"
# node 2's gossipd (its own uid) must reach root's socket
chmod 0755 "$d2/run/testagent"
chmod 0666 "$d2/run/testagent/testagent.sock"
export RELAY_AGENT=testagent
first=$(relay 77 put relay/once v1)
again=$(relay 77 put relay/once v2)
check "relayed put to the test agent ran on node 2 ($first)" [ -n "$first" ]
check "a retry with the same request id is answered from the first reply" [ "$first" = "$again" ]
other=$(relay 78 put relay/once v3)
check "a new request id runs again" test -n "$other" -a "$other" != "$first"

# a get that takes 3 s, and one with timeout_ms = 2^31 (no int overflow)
RELAY_TIMEOUT_MS=8000 ms_of relay 80 get relay/once >/dev/null
check "a relayed call answered after 3 s arrives ($(cat "$T_DIR/out" "$T_DIR/err"))" \
	grep -qx "value v3" "$T_DIR/out"
ms=$(RELAY_TIMEOUT_MS=2147483648 ms_of relay 81 get relay/once)
check "timeout_ms 2^31 waits for the reply (${ms} ms: $(cat "$T_DIR/out" "$T_DIR/err"))" \
	grep -qx "value v3" "$T_DIR/out"
check "no node suspected node 2 while its agent was slow" no_suspicion_of "$id2"

# the per-peer bound: relay_inflight = 2, a third concurrent call is refused
pids=
for r in 91 92 93; do
	RELAY_TIMEOUT_MS=15000 relay $r get relay/once >"$T_DIR/b$r.out" 2>"$T_DIR/b$r.err" &
	pids="$pids $!"
	sleep 0.2
done
wait $pids
refused=$(grep -l "relay_inflight" "$T_DIR"/b9?.err | wc -l)
answered=$(grep -lx "value v3" "$T_DIR"/b9?.out | wc -l)
check "the in-flight bound refuses the third call with a clear error ($refused refused, $answered answered)" \
	test "$refused" = 1 -a "$answered" = 2
check "no suspicion of node 2 after all of it" no_suspicion_of "$id2"
unset RELAY_AGENT

if "$RELAY" "$run1" 0123456789abcdef0123456789abcdef 79 root 2>"$T_DIR/err"; then
	fail "relay to an unknown node is refused"
else
	check "relay to an unknown node is refused" grep -q "no such member" "$T_DIR/err"
fi
g_final_check 1 2 3
t_done
